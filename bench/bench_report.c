/* SPDX-License-Identifier: Apache-2.0 */
/* kuai_bench's rows: the table for people, the pipe from a child process
 * (--child-rows) and the JSON for bench/plot.py. */
#define _POSIX_C_SOURCE 200809L

#include "bench_internal.h"
#include "bench_ublock_paper.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

row *rows;
size_t nrows;
static size_t caprows;
int row_fd = -1;

#define TABLE_FMT "%-15s %-14s %-7s %-10s %3s %9s %8s %9s  %-39s %9s %7s\n"

void print_header_row(void)
{
    printf(TABLE_FMT, "cipher", "mode", "backend", "size", "thr", "MB/s", "cyc/B", "ns/call",
           "peer", "peer MB/s", "ratio");
}

static void fmtnum(char *buf, size_t n, double v, int prec)
{
    if (isnan(v))
        snprintf(buf, n, "-");
    else
        snprintf(buf, n, "%.*f", prec, v);
}

static void print_row(const row *r)
{
    char thr[8], mb[24], cpb[24], ns[24], pmb[24], ra[24];
    snprintf(thr, sizeof thr, "%d", r->threads);
    fmtnum(mb, sizeof mb, r->mbps, 1);
    fmtnum(cpb, sizeof cpb, r->cpb, 2);
    fmtnum(ns, sizeof ns, r->ns_call, 1);
    fmtnum(pmb, sizeof pmb, r->peer_mbps, 1);
    /* ref backends sit far below the yardstick: keep small ratios readable */
    fmtnum(ra, sizeof ra, r->ratio, !isnan(r->ratio) && r->ratio < 0.1 ? 4 : 3);
    printf(TABLE_FMT, r->cipher, r->mode, r->backend, r->size, thr, mb, cpb, ns,
           r->peer[0] ? r->peer : "-", pmb, ra);
    fflush(stdout); /* rows appear as they are measured */
}

static void size_label(char *buf, size_t n, size_t streams, size_t len)
{
    char one[24];
    /* binary sizes for the paper's buffers, decimal for the SM4 report's
     * 320 Kbit ... 320 Mbit texts */
    if (len % 1024 == 0)
        snprintf(one, sizeof one, "%zuKiB", len / 1024);
    else if (len % 1000000 == 0)
        snprintf(one, sizeof one, "%zuMB", len / 1000000);
    else if (len % 1000 == 0)
        snprintf(one, sizeof one, "%zuKB", len / 1000);
    else
        snprintf(one, sizeof one, "%zuB", len);
    if (streams > 1)
        snprintf(buf, n, "%zux%s", streams, one);
    else
        snprintf(buf, n, "%s", one);
}

row *row_new(void)
{
    if (nrows == caprows) {
        caprows = caprows ? caprows * 2 : 64;
        rows = realloc(rows, caprows * sizeof *rows);
        if (!rows)
            die("out of memory");
    }
    row *r = &rows[nrows++];
    memset(r, 0, sizeof *r);
    return r;
}

void add_row(const ctx *x, const char *mode, const job *a, const job *b, int short_msg,
             size_t streams, size_t len, int threads)
{
    row *r = row_new();
    snprintf(r->cipher, sizeof r->cipher, "%s", x->cname);
    snprintf(r->mode, sizeof r->mode, "%s", mode);
    snprintf(r->backend, sizeof r->backend, "%s", x->backend);
    size_label(r->size, sizeof r->size, streams, len);
    r->bytes = a->bytes;
    r->threads = threads;
    r->mbps = mbps_of(a);
    r->cpb = HAVE_TSC ? a->best_ticks / (double)a->bytes : NAN;
    r->ns_call = short_msg ? a->best_ns : NAN;
    r->peer_mbps = r->ratio = NAN;
    if (b) {
        x->pr->ops->label(x->pr, r->peer, sizeof r->peer);
        r->peer_mbps = mbps_of(b);
        r->ratio = r->mbps / r->peer_mbps;
    }
    print_row(r);
    if (row_fd >= 0) {
        /* A child hands its rows to the parent's table and JSON: same
         * binary, so the struct goes as it is. */
        const char *p = (const char *)r;
        for (size_t left = sizeof *r; left;) {
            ssize_t w = write(row_fd, p, left);
            if (w <= 0)
                die("writing a row to the parent: %s", strerror(errno));
            p += w;
            left -= (size_t)w;
        }
    }
}

void bench_paper_json_row(const bench_paper_row *p, const char *peer_name, double peer_mbps,
                          double ratio)
{
    row *r = row_new();
    snprintf(r->cipher, sizeof r->cipher, "%s", p->cipher);
    snprintf(r->mode, sizeof r->mode, "paper: %s", p->what);
    snprintf(r->backend, sizeof r->backend, "%s", p->backend);
    snprintf(r->size, sizeof r->size, "%s", p->size);
    snprintf(r->peer, sizeof r->peer, "%s", peer_name ? peer_name : "");
    r->bytes = p->bytes;
    r->threads = 1;
    r->mbps = (double)p->bytes * 1e3 / p->ns;
    r->cpb = p->ticks / (double)p->bytes;
    r->ns_call = p->is_short ? p->ns : NAN;
    r->peer_mbps = peer_mbps;
    r->ratio = ratio;
}

static void json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            fprintf(f, "\\%c", ch);
        else if (ch < 0x20)
            fprintf(f, "\\u%04x", ch);
        else
            fputc(ch, f);
    }
    fputc('"', f);
}

static void json_num(FILE *f, double v, int prec)
{
    if (isnan(v) || isinf(v))
        fputs("null", f);
    else
        fprintf(f, "%.*f", prec, v);
}

void write_json(FILE *f, const char *path)
{
    fputs("[\n", f);
    for (size_t i = 0; i < nrows; i++) {
        const row *r = &rows[i];
        fputs("  {\"cipher\": ", f);
        json_str(f, r->cipher);
        fputs(", \"mode\": ", f);
        json_str(f, r->mode);
        fputs(", \"backend\": ", f);
        json_str(f, r->backend);
        fprintf(f, ", \"size\": %zu, \"threads\": %d, \"mbps\": ", r->bytes, r->threads);
        json_num(f, r->mbps, 2);
        fputs(", \"cpb\": ", f);
        json_num(f, r->cpb, 3);
        fputs(", \"ns_per_call\": ", f);
        json_num(f, r->ns_call, 1);
        fputs(", \"peer\": ", f);
        if (r->peer[0])
            json_str(f, r->peer);
        else
            fputs("null", f);
        fputs(", \"peer_mbps\": ", f);
        json_num(f, r->peer_mbps, 2);
        fputs(", \"ratio\": ", f);
        json_num(f, r->ratio, 4);
        fputs(i + 1 < nrows ? "},\n" : "}\n", f);
    }
    fputs("]\n", f);
    if (fclose(f) != 0)
        die("error writing %s: %s", path, strerror(errno));
}
