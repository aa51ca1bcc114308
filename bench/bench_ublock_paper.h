/* SPDX-License-Identifier: Apache-2.0 */
/* The uBlock paper's test matrix (bench_ublock_paper.c), run by bench.c. */
#ifndef KUAI_BENCH_UBLOCK_PAPER_H
#define KUAI_BENCH_UBLOCK_PAPER_H

typedef struct bench_paper_opts {
    const char *backend, *cipher; /* filters, NULL: all members, best backend */
    int reps, quick;
    double rep_ns; /* target length of one repetition */
} bench_paper_opts;

void bench_ublock_paper(const bench_paper_opts *o);

#endif
