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

/* uBlock-128's layouts: round 0's, and the drift g from one round's to
 * the next (layout r + 1 = g looked up by layout r; g^8 is the identity,
 * so layout r is layout r & 7). */
const _Alignas(16) uint8_t ublock_llk_p0[16] = {0, 2, 4, 6, 8, 10, 12, 14,
                                                1, 3, 5, 7, 9, 11, 13, 15};
const _Alignas(16) uint8_t ublock_llk_drift[16] = {8, 9, 0,  1,  10, 11, 2,  3,
                                                   4, 5, 14, 15, 6,  7,  12, 13};
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

/* uBlock-128 round i's layout: kernel position j holds nibble p[j] of
 * each half. */
static void layout128(unsigned i, uint8_t p[16])
{
    memcpy(p, ublock_llk_p0, 16);
    for (unsigned r = 0; r < (i & 7); r++)
        for (unsigned j = 0; j < 16; j++)
            p[j] = ublock_llk_drift[p[j]];
}

void ublock_llk_from_rk(ublock_sched *s)
{
    uint8_t *llk = s->ext + UBLOCK_LLK_OFF, p[16];
    for (unsigned i = 0; i <= s->rounds; i++) {
        const uint8_t *rk = s->rk[i];
        uint8_t *row = llk + 32 * i;
        if (s->nbytes == 16) {
            layout128(i, p);
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
    uint8_t p[16];
    memset(buf, 0, 32);
    if (s->nbytes == 16) {
        layout128(i, p);
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
