/* SPDX-License-Identifier: Apache-2.0 */
/* Limits of the multi-threaded calls (src/parallel.c), shared with the tests
 * so they can aim at both sides of the split threshold. */
#ifndef KUAI_PARALLEL_H
#define KUAI_PARALLEL_H

/* A piece smaller than this costs more in wake-up and cache traffic than it
 * gains, so a call splits into at most len / KUAI_PAR_MIN_PIECE pieces; below
 * two pieces it runs on the calling thread alone. */
#define KUAI_PAR_MIN_PIECE (64u * 1024u)

/* Most pieces (and threads, the caller included) one call uses; larger
 * thread counts are clamped to it. */
#define KUAI_PAR_MAX_THREADS 64u

#endif
