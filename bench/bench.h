/* SPDX-License-Identifier: Apache-2.0 */
/* The benchmark driver as a function, shared by kuai_bench and `kuai speed`. */
#ifndef KUAI_BENCH_H
#define KUAI_BENCH_H

/* Runs the benchmark with the options in argv[1..argc-1] (see --help);
 * name is how messages call the program. Returns the exit status; exits
 * the process on a fatal error. Call at most once per process. */
int kuai_bench_main(const char *name, int argc, char **argv);
/* `--modes-ext` (first argument): XTS/CCM/CFB/CMAC rows (bench_modes_ext.c). */
int kuai_bench_modes_ext(const char *name, int argc, char **argv);

#endif
