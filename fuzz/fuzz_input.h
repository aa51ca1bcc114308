/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What every fuzz target shares: the fuzzer's bytes read front to back as
 * parameters (zeros once they run out, so every input is a valid test),
 * and a property check that stops the run.
 */
#ifndef KUAI_FUZZ_INPUT_H
#define KUAI_FUZZ_INPUT_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

typedef struct reader {
    const uint8_t *p;
    size_t n;
} reader;

static inline uint8_t take_u8(reader *r)
{
    if (!r->n)
        return 0;
    r->n--;
    return *r->p++;
}

static inline void take(reader *r, uint8_t *out, size_t n)
{
    for (size_t i = 0; i < n; i++)
        out[i] = take_u8(r);
}

/* A violated property: abort, so libFuzzer saves the input. */
static inline void must(int cond)
{
    if (!cond)
        abort();
}

#endif
