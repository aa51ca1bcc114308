/* SPDX-License-Identifier: Apache-2.0 */
/* SIMD within a register: the 64-bit word operations the portable
 * bitsliced backends (aes_ref.c, sm4_ref.c) share. */
#ifndef KUAI_SIMD_SWAR_H
#define KUAI_SIMD_SWAR_H

#include <stdint.h>

/*
 * 8x8 bit-matrix transpose of a 64-bit word seen as 8 rows of 8 bits (byte
 * r = row r): bit c of byte r goes to bit r of byte c. Three rounds of
 * delta swaps (the classic method, Warren, Hacker's Delight, 7-3).
 */
static inline uint64_t kuai_transpose8x8(uint64_t x)
{
    uint64_t t;
    t = (x ^ (x >> 7)) & 0x00AA00AA00AA00AAull;
    x ^= t ^ (t << 7);
    t = (x ^ (x >> 14)) & 0x0000CCCC0000CCCCull;
    x ^= t ^ (t << 14);
    t = (x ^ (x >> 28)) & 0x00000000F0F0F0F0ull;
    x ^= t ^ (t << 28);
    return x;
}

#endif
