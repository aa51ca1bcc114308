/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The two forms of a uBlock schedule (ublock.h): the raw round keys RK_i
 * of the spec and the low-latency kernel's form, and the scalar conversions
 * between them. The nibble key setup (ublock_expand_nib.h) stores the
 * kernel form only; the ref backend's stores both (it converts with
 * ublock_llk_from_rk). Readers of the raw form that may meet a key of
 * another backend (the bitsliced masks, ref's multi-key call) derive it
 * here. Every index below is a nibble position, never key material.
 */
#include "ublock.h"

#include <string.h>

/* uBlock-128's layouts, one per round r & 7: kernel position j of round
 * r's key row holds nibble ublock_llk_p[0][r & 7][j] of each half. Each row
 * is the drift g = {8, 9, 0, 1, 10, 11, 2, 3, 4, 5, 14, 15, 6, 7, 12, 13}
 * looked up by the row before (p[r + 1][j] = g[p[r][j]]; g^8 is the
 * identity), written out so that key setup loads a row where it ran a
 * shuffle a round. [1]: the same rows read from a vector whose 64-bit
 * halves are exchanged (j ^ 8: the schedule's swapped frame, ublock_ks.h). */
const _Alignas(16) uint8_t ublock_llk_p[2][8][16] = {
    {{0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15},
     {8, 0, 10, 2, 4, 14, 6, 12, 9, 1, 11, 3, 5, 15, 7, 13},
     {4, 8, 14, 0, 10, 12, 2, 6, 5, 9, 15, 1, 11, 13, 3, 7},
     {10, 4, 12, 8, 14, 6, 0, 2, 11, 5, 13, 9, 15, 7, 1, 3},
     {14, 10, 6, 4, 12, 2, 8, 0, 15, 11, 7, 5, 13, 3, 9, 1},
     {12, 14, 2, 10, 6, 0, 4, 8, 13, 15, 3, 11, 7, 1, 5, 9},
     {6, 12, 0, 14, 2, 8, 10, 4, 7, 13, 1, 15, 3, 9, 11, 5},
     {2, 6, 8, 12, 0, 4, 14, 10, 3, 7, 9, 13, 1, 5, 15, 11}},
    {{8, 10, 12, 14, 0, 2, 4, 6, 9, 11, 13, 15, 1, 3, 5, 7},
     {0, 8, 2, 10, 12, 6, 14, 4, 1, 9, 3, 11, 13, 7, 15, 5},
     {12, 0, 6, 8, 2, 4, 10, 14, 13, 1, 7, 9, 3, 5, 11, 15},
     {2, 12, 4, 0, 6, 14, 8, 10, 3, 13, 5, 1, 7, 15, 9, 11},
     {6, 2, 14, 12, 4, 10, 0, 8, 7, 3, 15, 13, 5, 11, 1, 9},
     {4, 6, 10, 2, 14, 8, 12, 0, 5, 7, 11, 3, 15, 9, 13, 1},
     {14, 4, 8, 6, 10, 0, 2, 12, 15, 5, 9, 7, 11, 1, 3, 13},
     {10, 14, 0, 4, 8, 12, 6, 2, 11, 15, 1, 5, 9, 13, 7, 3}}};
/* uBlock-256/256: a quarter's natural nibble order to layout L, for the
 * quarter that goes to the low nibbles [0] and the one that goes to the
 * high nibbles [1]. */
const _Alignas(16) uint8_t ublock_llk_pl[2][16] = {
    {4, 5, 12, 13, 6, 7, 14, 15, 2, 3, 8, 9, 0, 1, 10, 11},
    {2, 3, 8, 9, 0, 1, 10, 11, 6, 7, 14, 15, 4, 5, 12, 13}};

/* Nibble n of a packed row: the high nibble of each byte first. */
static unsigned nib_get(const uint8_t *row, unsigned n)
{
    return (unsigned)(row[n >> 1] >> (4 * (~n & 1))) & 15;
}

static void nib_or(uint8_t *row, unsigned n, unsigned v)
{
    row[n >> 1] |= (uint8_t)(v << (4 * (~n & 1)));
}

void ublock_llk_from_rk(ublock_sched *s)
{
    uint8_t *llk = s->ext + UBLOCK_LLK_OFF;
    for (unsigned i = 0; i <= s->rounds; i++) {
        const uint8_t *rk = s->rk[i];
        uint8_t *row = llk + 32 * i;
        if (s->nbytes == 16) {
            const uint8_t *p = ublock_llk_p[0][i & 7];
            for (unsigned j = 0; j < 16; j++) {
                row[j] = (uint8_t)nib_get(rk, p[j]);
                row[16 + j] = (uint8_t)nib_get(rk, 16 + p[j]);
            }
        } else {
            for (unsigned h = 0; h < 2; h++)
                for (unsigned j = 0; j < 16; j++)
                    row[16 * h + j] =
                        (uint8_t)(nib_get(rk, 32 * h + ublock_llk_pl[0][j]) |
                                  nib_get(rk, 32 * h + 16 + ublock_llk_pl[1][j]) << 4);
        }
    }
}

const uint8_t *ublock_rk_derive(const ublock_sched *s, unsigned i, uint8_t buf[32])
{
    const uint8_t *row = s->ext + UBLOCK_LLK_OFF + 32 * i;
    memset(buf, 0, 32);
    if (s->nbytes == 16) {
        const uint8_t *p = ublock_llk_p[0][i & 7];
        for (unsigned j = 0; j < 16; j++) {
            nib_or(buf, p[j], row[j]);
            nib_or(buf, 16 + p[j], row[16 + j]);
        }
    } else {
        for (unsigned h = 0; h < 2; h++)
            for (unsigned j = 0; j < 16; j++) {
                nib_or(buf, 32 * h + ublock_llk_pl[0][j], row[16 * h + j] & 15u);
                nib_or(buf, 32 * h + 16 + ublock_llk_pl[1][j], row[16 * h + j] >> 4);
            }
    }
    return buf;
}
