/* SPDX-License-Identifier: Apache-2.0 */
/* The uBlock paper's test matrix (bench_ublock_paper.c), run by bench.c. */
#ifndef KUAI_BENCH_UBLOCK_PAPER_H
#define KUAI_BENCH_UBLOCK_PAPER_H

#include <stddef.h>

typedef struct bench_paper_opts {
    const char *backend, *cipher; /* filters, NULL: all members, best backend */
    int reps, quick;
    double rep_ns; /* target length of one repetition */
} bench_paper_opts;

void bench_ublock_paper(const bench_paper_opts *o);

/* One row of the matrix as measured (ticks: TSC, NAN where there is none) */
typedef struct bench_paper_row {
    const char *cipher, *backend, *what, *size;
    size_t bytes; /* per call */
    int is_short; /* a figure per call (ns), not per byte */
    double ns, ticks;
} bench_paper_row;

/* Adds row r to kuai_bench's rows for --json (bench_report.c), its mode
 * "paper: " + what: against peer_name (NULL: none) at peer_mbps, ratio as
 * the table prints it (above 1: kuai is faster). */
void bench_paper_json_row(const bench_paper_row *r, const char *peer_name, double peer_mbps,
                          double ratio);

#endif
