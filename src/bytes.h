/* SPDX-License-Identifier: Apache-2.0 */
/* Big-endian loads and stores, byte by byte: no alignment or host-order
 * assumptions, and compilers turn them into one bswap'd move. And short
 * copies of whole 16-byte blocks. */
#ifndef KUAI_BYTES_H
#define KUAI_BYTES_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

static inline uint32_t load_be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static inline void store_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

static inline uint64_t load_be64(const uint8_t *p)
{
    return (uint64_t)load_be32(p) << 32 | load_be32(p + 4);
}

static inline void store_be64(uint8_t *p, uint64_t v)
{
    store_be32(p, (uint32_t)(v >> 32));
    store_be32(p + 4, (uint32_t)v);
}

/* n 16-byte blocks from src to dst, a block at a time, for the few blocks
 * of a tail through a stack buffer: gcc made memcpy(dst, src, 16 * n) (and
 * this loop without the empty asm) rep movsq, whose start-up costs more
 * than the blocks' cipher work (SM4 ECB of 1-7 blocks on vaes 404 -> 450
 * TSC cycles; a fifth of a 16-byte AES-128-GCM message on vaes went to
 * its CTR tail's copy; Xeon, Sapphire Rapids). */
static inline void copy_blocks16(uint8_t *dst, const uint8_t *src, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        memcpy(dst + 16 * i, src + 16 * i, 16);
        __asm__ volatile("");
    }
}

#endif
