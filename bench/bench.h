/* SPDX-License-Identifier: Apache-2.0 */
/* The benchmark driver as a function, shared by kuai_bench and `kuai speed`. */
#ifndef KUAI_BENCH_H
#define KUAI_BENCH_H

#include <stdio.h>

/* Runs the benchmark with the options in argv[1..argc-1] (see --help);
 * name is how messages call the program. Returns the exit status; exits
 * the process on a fatal error. Call at most once per process. */
int kuai_bench_main(const char *name, int argc, char **argv);
/* Where `--json FILE` goes. NULL (kuai_bench): bench_report.c's own
 * handling. `kuai speed` sets the tool's output rules (cli/util.c, as for
 * encrypt's -o): check before the run, open and commit after it, each
 * exiting on a failure with nothing left behind. */
typedef struct kuai_bench_report_io {
    void (*check)(const char *path);
    FILE *(*open)(const char *path);
    void (*commit)(FILE *f, const char *path);
} kuai_bench_report_io;
extern const kuai_bench_report_io *kuai_bench_report;
/* `--modes-ext` (first argument): XTS/CCM/CFB/CMAC rows (bench_modes_ext.c). */
int kuai_bench_modes_ext(const char *name, int argc, char **argv);

#endif
