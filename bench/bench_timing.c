/* SPDX-License-Identifier: Apache-2.0 */
/* kuai_bench: clocks, the time-stamp counter, the machine's description
 * and the measuring loop (warm-up, then kuai and peer alternating). */
#define _POSIX_C_SOURCE 200809L

#include "bench_internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t ticks(void)
{
#if HAVE_TSC
    return __rdtsc();
#else
    return 0;
#endif
}

/* TSC ticks per second, measured against CLOCK_MONOTONIC over ~50 ms.
 * On this kind of VM the TSC runs at the nominal clock, not the current
 * core clock, so "cycles" below are nominal cycles. */
double calibrate_tsc(void)
{
#if HAVE_TSC
    uint64_t t0 = now_ns(), c0 = ticks(), t1, c1;
    do {
        t1 = now_ns();
        c1 = ticks();
    } while (t1 - t0 < 50000000u);
    return (double)(c1 - c0) * 1e9 / (double)(t1 - t0);
#else
    return 0.0;
#endif
}

void cpu_model(char *buf, size_t n)
{
    snprintf(buf, n, "unknown");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        /* x86 says "model name"; some arm64 kernels only give "CPU part". */
        if (strncmp(line, "model name", 10) == 0) {
            char *v = strchr(line, ':');
            if (v) {
                v++;
                while (*v == ' ' || *v == '\t')
                    v++;
                v[strcspn(v, "\n")] = '\0';
                snprintf(buf, n, "%s", v);
            }
            break;
        }
    }
    fclose(f);
}

/* The 1-minute load average, or -1. Other processes on a 2-core VM slow
 * every row and halve the 2-thread ones; the header and footer say how
 * busy the machine was so a reader can discount a run. */
double loadavg1(void)
{
    double l = -1;
    FILE *f = fopen("/proc/loadavg", "r");
    if (f) {
        if (fscanf(f, "%lf", &l) != 1)
            l = -1;
        fclose(f);
    }
    return l;
}

static void run_rep(job *j)
{
    uint64_t t0 = now_ns(), c0 = ticks();
    for (uint64_t i = 0; i < j->iters; i++)
        j->fn(j->ctx);
    uint64_t c1 = ticks(), t1 = now_ns();
    double ns = (double)(t1 - t0) / (double)j->iters;
    if (ns < j->best_ns) {
        /* cycles come from the same repetition as the time */
        j->best_ns = ns;
        j->best_ticks = (double)(c1 - c0) / (double)j->iters;
    }
}

/* Warm-up doubles as calibration: grow the call count until one
 * repetition lasts about target_ns. Caches, branch predictors, page
 * tables and the CPU clock all settle on the way. */
static void warm_up(job *j, double target_ns)
{
    uint64_t n = 1;
    for (;;) {
        uint64_t t0 = now_ns();
        for (uint64_t i = 0; i < n; i++)
            j->fn(j->ctx);
        double dt = (double)(now_ns() - t0);
        if (dt >= target_ns / 4 || n >= (1u << 30)) {
            double want = (double)n * target_ns / (dt > 1 ? dt : 1);
            j->iters = want < 1 ? 1 : (uint64_t)want;
            break;
        }
        n *= dt * 16 < target_ns ? 8 : 2;
    }
    j->best_ns = INFINITY;
    j->best_ticks = 0;
}

/* A B A B ...: the peer (b, may be NULL) runs between kuai's repetitions. */
void measure(job *a, job *b, const opts *o)
{
    warm_up(a, o->rep_ns);
    if (b)
        warm_up(b, o->rep_ns);
    for (int r = 0; r < o->reps; r++) {
        run_rep(a);
        if (b)
            run_rep(b);
    }
}

double mbps_of(const job *j)
{
    return (double)j->bytes * 1e3 / j->best_ns; /* bytes/ns * 1e3 = 10^6 B/s */
}
