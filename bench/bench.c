/* SPDX-License-Identifier: Apache-2.0 */
/*
 * kuai_bench — the benchmark driver (see ../docs/benchmarks.md and the
 * measuring protocol in shared/bench.md).
 *
 * Every speed claim is a ratio against a peer measured side by side in this
 * process, on the same buffers, with kuai and peer repetitions alternating
 * (A B A B ...) so that drift of a shared 2-core VM hits both equally.
 * Absolute MB/s are printed too, but only the ratios carry over between
 * machines.
 *
 * Scenarios (the uBlock paper's four, per cipher, per backend; uBlock-128/128,
 * 128/256, 256/256 and SM4 with every backend kuai_backends() lists):
 *   long, single key : 256 KiB (2 Mbit) buffer; ECB enc/dec, CBC enc/dec, CTR
 *   GCM              : 256 KiB messages, 12-byte IV, 16 B AAD (128-bit blocks)
 *   long, multi-key  : n x 256 KiB streams, n keys, CBC in lockstep (n = 4, 8, 16)
 *   short, single key: key setup + ECB of 4 blocks (2 for 256-bit blocks)
 *   short, multi-key : n key setups + one block per key through *_multi
 * and the SM4 report's ECB table scaled down: 40 KB ... 40 MB texts on the
 * best backend, 1 and 2 threads (the only rows that are not single-thread).
 *
 * Peers: uBlock exists in no library, so it is held against OpenSSL
 * AES-128-CTR / AES-128-GCM; SM4 against libgcrypt doing the row's own mode
 * and direction (the peer its targets name), plus OpenSSL SM4-CTR on one
 * extra row. The ciphers are kuai_ciphers()'s; a cipher's peers are its row
 * in `peer_rows[]`, adding a peer library is one more `peer_ops` and `peer`
 * entries (both bench_peers.c).
 *
 * This file holds the options, the child process of the AES-NI rows and
 * kuai_bench_main; bench_internal.h lists the other files by concern.
 */
#define _POSIX_C_SOURCE 200809L

#include "bench.h"
#include "bench_internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_ublock_paper.h"

#if KUAI_BENCH_GCRYPT
#include <gcrypt.h>
#endif
#include <openssl/crypto.h>
#include <openssl/err.h>

/* ------------------------------------------------------------------ */
/* Small utilities                                                     */
/* ------------------------------------------------------------------ */

/* How the program is called in messages ("kuai_bench", or "kuai speed"). */
const char *prog = "kuai_bench";
const kuai_bench_report_io *kuai_bench_report;

void die(const char *fmt, ...)
{
    va_list ap;
    fflush(stdout);
    fprintf(stderr, "%s: ", prog);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(1);
}

void ossl_die(const char *what)
{
    fflush(stdout);
    fprintf(stderr, "%s: OpenSSL %s failed\n", prog, what);
    ERR_print_errors_fp(stderr);
    exit(1);
}

/* 64-byte aligned, as the protocol asks; rounded up because aligned_alloc
 * wants a multiple of the alignment. */
void *xalloc(size_t n)
{
    size_t r = (n + 63) & ~(size_t)63;
    void *p = aligned_alloc(64, r ? r : 64);
    if (!p)
        die("out of memory (%zu bytes)", n);
    memset(p, 0, r ? r : 64);
    return p;
}

/* Deterministic filler (xorshift64): buffers hold non-trivial data and
 * every page is touched before timing starts. */
void fill(uint8_t *p, size_t n, uint64_t seed)
{
    uint64_t x = seed * 0x9E3779B97F4A7C15u + 1;
    for (size_t i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        p[i] = (uint8_t)(x >> 32);
    }
}

/* ------------------------------------------------------------------ */
/* Options                                                             */
/* ------------------------------------------------------------------ */

/* The thread counts of multi-threaded rows: 1, then max. */
int next_threads(int nt, int max)
{
    return nt < max ? max : max + 1;
}

int mode_wanted(const opts *o, const char *mode)
{
    return !o->mode || !strncmp(mode, o->mode, strlen(o->mode));
}

/* kuai_ciphers()'s names for the help: ", "-separated, wrapped under the
 * option texts' column, then ")\n". */
static void print_cipher_names(FILE *f)
{
    kuai_cipher list[64];
    size_t n = kuai_ciphers(list, 64), col = 36; /* after "  --cipher NAME   only this cipher (" */
    for (size_t i = 0; i < n && i < 64; i++) {
        const char *cn = kuai_cipher_name(list[i]);
        size_t len = strlen(cn) + (i + 1 < n ? 1 : 2); /* "," or ")" */
        if (i > 0) {
            if (col + 1 + len > 87) { /* the help's widest line */
                fputs("\n                  ", f);
                col = 18;
            } else {
                fputc(' ', f);
                col++;
            }
        }
        fprintf(f, "%s%s", cn, i + 1 < n ? "," : ")");
        col += len;
    }
    fputc('\n', f);
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: %s [--json FILE] [--quick] [--backend NAME] [--cipher NAME] [--reps N]\n"
            "       [--mode M] [--threads N] [--no-sweep]\n",
            prog);
    fprintf(f, "  --json FILE     also write the rows as a JSON array of objects\n"
               "  --quick         fewer and shorter repetitions, 4- and 8-stream multi-key rows\n"
               "                  only, sweep up to 4 MB (smoke test)\n"
               "  --backend NAME  only this backend (ref, ssse3, avx2, avx512, gfni, vaes, aesni,\n"
               "                  ttable, ...)\n"
               "  --cipher NAME   only this cipher (");
    print_cipher_names(f);
    fprintf(
        f, "  --reps N        repetitions per row (default 7, quick 3); the best is reported\n"
           "  --no-sweep      skip the ECB size sweep (40 KB ... 40 MB, 1 and 2 threads)\n"
           "  --mode M        only rows whose mode starts with M (ecb, cbc, ctr, gcm, cbc-enc-mk,\n"
           "                  short, ecb-enc-sweep, ctr-parallel, paper (the uBlock paper's\n"
           "                  matrix: short/long, 1/4 keys, key setup, one-shot, crossovers)...)\n"
           "  --threads N     multi-threaded rows (ecb-enc-sweep, ctr-parallel) on 1 and N\n"
           "                  threads (default 2, at most 64)\n"
           "  --modes-ext     instead, as the only option: XTS, CCM, CFB, CMAC and KW rows beside\n"
           "                  the same backend's ECB, OpenSSL and libgcrypt (docs/modes.md)\n"
           "Run with OPENSSL_ia32cap=\"~0x200000200000000\" in the environment to measure the\n"
           "OpenSSL yardstick without AES-NI (it must be set before the process starts); the\n"
           "AES rows of the AES-NI/VAES backends then run in a child process without it, so\n"
           "that their OpenSSL peer has AES-NI.\n");
}

static void parse_opts(int argc, char **argv, opts *o)
{
    int reps = 0;
    memset(o, 0, sizeof *o);
    o->child_fd = -1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int has_val = i + 1 < argc;
        if (!strcmp(a, "--json") && has_val) {
            o->json = argv[++i];
        } else if (!strcmp(a, "--backend") && has_val) {
            o->backend = argv[++i];
        } else if (!strcmp(a, "--cipher") && has_val) {
            o->cipher = argv[++i];
        } else if (!strcmp(a, "--reps") && has_val) {
            char *end;
            errno = 0;
            long v = strtol(argv[++i], &end, 10);
            if (errno || *end || v < 1 || v > 1000)
                die("--reps wants a number from 1 to 1000, not '%s'", argv[i]);
            reps = (int)v;
        } else if (!strcmp(a, "--child-rows") && has_val) {
            o->child_fd = atoi(argv[++i]);
        } else if (!strcmp(a, "--mode") && has_val) {
            o->mode = argv[++i];
        } else if (!strcmp(a, "--threads") && has_val) {
            char *end;
            errno = 0;
            long v = strtol(argv[++i], &end, 10);
            if (errno || *end || v < 1 || v > MAX_THREADS)
                die("--threads wants a number from 1 to %d, not '%s'", MAX_THREADS, argv[i]);
            o->threads = (int)v;
        } else if (!strcmp(a, "--quick")) {
            o->quick = 1;
        } else if (!strcmp(a, "--no-sweep")) {
            o->no_sweep = 1;
        } else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            exit(0);
        } else {
            usage(stderr);
            die("unknown or incomplete option '%s'", a);
        }
    }
    o->reps = reps ? reps : (o->quick ? 3 : 7);
    if (!o->threads)
        o->threads = 2;
    /* Long enough that clock and TSC granularity vanish, short enough that
     * the full run (~320 rows) fits in ~2.5 minutes on 2 cores. */
    o->rep_ns = o->quick ? 3e6 : 25e6;
}

/* ------------------------------------------------------------------ */
/* OpenSSL with AES-NI for the AES hardware backends                    */
/* ------------------------------------------------------------------ */

/* make bench sets OPENSSL_ia32cap to turn OpenSSL's AES-NI off, so that
 * uBlock and the portable AES backends meet constant-time software AES.
 * libcrypto reads the variable once, when it loads, so an AES-NI or VAES
 * backend cannot get an AES-NI OpenSSL in this process: its rows are
 * measured by this same binary re-executed without the variable
 * (--child-rows), which prints them and passes them back through a pipe
 * for the JSON. kuai and the peer still alternate inside that one process. */
static int uses_aes_instructions(kuai_cipher c, const char *backend)
{
    int aes = bench_is_aes(c);
    /* aesni, aesni-avx (the same with the VEX GCM kernel), vaes */
    return aes && (!strncmp(backend, "aesni", 5) || !strcmp(backend, "vaes"));
}

static int ossl_aesni_off(void)
{
    const char *cap = getenv("OPENSSL_ia32cap");
    return cap && *cap;
}

static void run_aes_child(const char *cname, const char *backend, const opts *o)
{
    int fds[2];
    if (pipe(fds))
        die("pipe: %s", strerror(errno));
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0)
        die("fork: %s", strerror(errno));
    if (pid == 0) {
        close(fds[0]);
        unsetenv("OPENSSL_ia32cap");
        char fd[16], reps[16];
        snprintf(fd, sizeof fd, "%d", fds[1]);
        snprintf(reps, sizeof reps, "%d", o->reps);
        /* The same program: kuai_bench, or the kuai tool's speed command. */
        char *args[16];
        int na = 0;
        if (!strcmp(prog, "kuai speed")) {
            args[na++] = "kuai";
            args[na++] = "speed";
        } else {
            args[na++] = "kuai_bench";
        }
        char *rest[] = {"--child-rows",  fd,           "--cipher", (char *)cname, "--backend",
                        (char *)backend, "--no-sweep", "--reps",   reps};
        for (size_t i = 0; i < sizeof rest / sizeof rest[0]; i++)
            args[na++] = rest[i];
        if (o->mode) {
            args[na++] = "--mode";
            args[na++] = (char *)o->mode;
        }
        if (o->quick)
            args[na++] = "--quick";
        args[na] = NULL;
        execv("/proc/self/exe", args);
        fprintf(stderr, "kuai_bench: exec /proc/self/exe: %s\n", strerror(errno));
        _exit(127);
    }
    close(fds[1]);
    row r;
    for (;;) {
        size_t got = 0;
        while (got < sizeof r) {
            ssize_t n = read(fds[0], (char *)&r + got, sizeof r - got);
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0)
                break;
            got += (size_t)n;
        }
        if (got < sizeof r)
            break;
        *row_new() = r;
    }
    close(fds[0]);
    int st;
    if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
        die("the child measuring %s/%s with OpenSSL's AES-NI failed", cname, backend);
}

int kuai_bench_main(const char *name, int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "--modes-ext"))
        return kuai_bench_modes_ext(name, argc - 1, argv + 1);
    opts o;
    prog = name;
    parse_opts(argc, argv, &o);
    gcry_setup();
    fill(gcm_iv, sizeof gcm_iv, 90);
    fill(gcm_aad, sizeof gcm_aad, 91);

    /* Validate the filters before spending minutes measuring. */
    kuai_cipher list[64];
    size_t nciphers = kuai_ciphers(list, 64);
    if (nciphers > 64)
        die("kuai_ciphers reports %zu ciphers, more than the 64 kuai_bench has room for", nciphers);
    int cipher_found = !o.cipher, backend_found = !o.backend;
    for (size_t i = 0; i < nciphers; i++) {
        const char *cn = kuai_cipher_name(list[i]);
        if (!cn)
            die("kuai_cipher_name(%d) returned NULL", (int)list[i]);
        if (o.cipher && !strcmp(o.cipher, cn)) {
            cipher_found = 1;
        }
        if (o.backend && (!o.cipher || !strcmp(o.cipher, cn))) {
            const char *names[32];
            size_t nb = kuai_backends(list[i], names, 32);
            for (size_t j = 0; j < nb && j < 32; j++)
                if (!strcmp(names[j], o.backend))
                    backend_found = 1;
        }
    }
    if (!cipher_found) {
        fprintf(stderr, "%s: unknown cipher '%s'; known:", prog, o.cipher);
        for (size_t i = 0; i < nciphers; i++)
            fprintf(stderr, " %s", kuai_cipher_name(list[i]));
        fputc('\n', stderr);
        return 2;
    }
    if (!backend_found) {
        fprintf(stderr, "%s: backend '%s' is unknown or not usable on this CPU%s%s\n", prog,
                o.backend, o.cipher ? " for " : "", o.cipher ? o.cipher : "");
        return 2;
    }

    /* Check the report's path now: a typo in it should cost a second, not
     * the whole run. */
    if (o.json && kuai_bench_report)
        kuai_bench_report->check(o.json);
    else if (o.json)
        json_check(o.json);

    char model[256];
    cpu_model(model, sizeof model);
    double tsc_hz = calibrate_tsc();
    const char *cap = getenv("OPENSSL_ia32cap");

    row_fd = o.child_fd;
    char hwf[512];
    gcry_hwflist(hwf, sizeof hwf);
    if (row_fd < 0) {
#if KUAI_BENCH_GCRYPT
        printf("%s: kuai %s, %s, libgcrypt %s\n", prog, KUAI_VERSION,
               OpenSSL_version(OPENSSL_VERSION), gcry_check_version(NULL));
#else
        printf("%s: kuai %s, %s (libgcrypt peers: kuai_bench only)\n", prog, KUAI_VERSION,
               OpenSSL_version(OPENSSL_VERSION));
#endif
        printf("cpu: %s (%ld online)\n", model, sysconf(_SC_NPROCESSORS_ONLN));
        if (HAVE_TSC)
            printf(
                "cycles: rdtsc ticks, TSC measured at %.3f GHz against CLOCK_MONOTONIC over 50 ms "
                "(nominal clock, not the current core clock)\n",
                tsc_hz / 1e9);
        else
            printf("cycles: not measured on this architecture (null in JSON)\n");
        printf(
            "timing: best of %d repetitions of ~%.0f ms after warm-up, kuai and peer alternating; "
            "MB/s = 10^6 bytes/s; single thread except ecb-enc-sweep and ctr-parallel rows (thr); "
            "64-byte aligned buffers, the streams' at distinct cache-line offsets in the "
            "page%s\n",
            o.reps, o.rep_ns / 1e6, o.quick ? " (--quick)" : "");
        printf("load average (1 min) at start: %.2f\n", loadavg1());
        printf("OPENSSL_ia32cap: %s%s\n", cap ? cap : "(unset)",
               cap && !strcmp(cap, OSSL_NO_AESNI_CAP) ? " (OpenSSL AES-NI paths off)" : "");
#if KUAI_BENCH_GCRYPT
        printf("libgcrypt hwflist: %s\n", hwf);
        printf(
            "peers: uBlock vs OpenSSL AES-128-CTR (gcm rows: AES-128-GCM); SM4 vs libgcrypt in the "
            "row's own mode and direction, ctr-vs-openssl vs OpenSSL SM4-CTR; gcm rows: 12-byte "
            "IV, %d B AAD, %d B tag per message\n",
            GCM_AAD_LEN, GCM_TAG_LEN);
        printf(
            "peers: AES vs OpenSSL EVP in the row's own mode, then the same row vs libgcrypt; the "
            "aesni/vaes rows run in a child process where OpenSSL has AES-NI (OPENSSL_ia32cap "
            "removed), the portable AES backends meet the OpenSSL this process got\n\n");
#else
        (void)hwf;
        printf("peers: uBlock vs OpenSSL AES-128-CTR (gcm rows: AES-128-GCM); SM4 and AES vs "
               "OpenSSL EVP in the row's own mode (SM4 GCM rows: none); gcm rows: 12-byte IV, %d B "
               "AAD, %d B tag per message; libgcrypt rows: kuai_bench\n\n",
               GCM_AAD_LEN, GCM_TAG_LEN);
#endif
        print_header_row();
    }

    for (size_t i = 0; i < nciphers; i++) {
        const bench_cipher bcv = bench_cipher_of(list[i]), *bc = &bcv;
        const char *cn = kuai_cipher_name(bc->id);
        if (o.cipher && strcmp(o.cipher, cn))
            continue;
        const char *names[32];
        size_t nb = kuai_backends(bc->id, names, 32);
        if (nb == 0)
            die("kuai_backends reports no backend for %s", cn);
        if (nb > 32)
            nb = 32;
        const char *best = NULL; /* first = best for this CPU */
        for (size_t j = 0; j < nb; j++) {
            if (o.backend && strcmp(o.backend, names[j]))
                continue;
            if (row_fd < 0 && ossl_aesni_off() && uses_aes_instructions(bc->id, names[j])) {
                run_aes_child(cn, names[j], &o);
            } else {
                cross_check(bc->id, cn, names[j]);
                bench_backend(bc, names[j], &o);
            }
            if (!best)
                best = names[j];
        }
        if (best && !o.no_sweep)
            bench_sweep(bc, best, &o);
    }

    if (row_fd >= 0)
        return 0;
    if (mode_wanted(&o, "paper")) {
        /* many short repetitions: the best of them is the one the machine
         * left alone (these rows run in microseconds) */
        bench_paper_opts po = {o.backend, o.cipher, o.quick ? 5 : 31, o.quick, 2e6};
        bench_ublock_paper(&po);
    }
    printf("\nload average (1 min) at end: %.2f (this run alone adds about 1)\n", loadavg1());
    if (o.json) {
        write_json(o.json);
        printf("wrote %zu rows to %s\n", nrows, o.json);
    }
    free(rows);
    return 0;
}
