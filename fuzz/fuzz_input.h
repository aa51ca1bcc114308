/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What every fuzz target shares: the fuzzer's bytes read front to back as
 * parameters (zeros once they run out, so every input is a valid test),
 * and a property check that stops the run.
 */
#ifndef KUAI_FUZZ_INPUT_H
#define KUAI_FUZZ_INPUT_H

#include "kuai.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
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

/* The cipher the byte b picks among the library's (kuai_ciphers(), so a new
 * cipher is fuzzed without an edit here) whose block is block_size bytes;
 * 0: any block size. */
static inline kuai_cipher fuzz_pick_cipher(uint8_t b, size_t block_size)
{
    kuai_cipher all[64], fit[64];
    size_t n = kuai_ciphers(all, 64), m = 0;
    for (size_t i = 0; i < n && i < 64; i++)
        if (!block_size || kuai_block_size(all[i]) == block_size)
            fit[m++] = all[i];
    must(m > 0);
    return fit[b % m];
}

/* The provider's name for cipher c in a mode ("GCM", "CBC"): the kuai name
 * in upper case, "-", the mode (as provider/kuai_provider.c registers it). */
static inline void fuzz_provider_name(kuai_cipher c, const char *mode, char *out, size_t size)
{
    int n = snprintf(out, size, "%s-%s", kuai_cipher_name(c), mode);
    must(n > 0 && (size_t)n < size);
    for (char *p = out; *p; p++)
        if (*p >= 'a' && *p <= 'z')
            *p = (char)(*p - 'a' + 'A');
}

#endif
