/* SPDX-License-Identifier: Apache-2.0 */
/*
 * uBlock key setup on nibbles (ublock_ks.h's schedule), one copy per
 * including file so that each is compiled for its ISA: ublock_ssse3.c's
 * ublock_expand_raw_ssse3 (SSE encoding, also used by avx512), ublock_avx2.c's
 * (VEX: three-operand forms, no register copies), ublock_neon.c's and
 * ublock_lsx.c's. Each round key is stored packed (the raw schedule every
 * backend shares) and in the low-latency kernel's form (ublock.h,
 * UBLOCK_LLK_*). The including file includes its ISA's vocabulary first.
 */
#ifndef KUAI_UBLOCK_EXPAND_NIB_H
#define KUAI_UBLOCK_EXPAND_NIB_H

#include "ublock.h"
#include "ublock_ks.h"

static inline __attribute__((always_inline)) void ub_expand_nib(ublock_sched *s, kuai_cipher c,
                                                                const uint8_t *key)
{
    /* Round r's row p: the key register's natural nibble order to the
     * low-latency kernel's load layout (ublock_ll.h's load128: the high
     * nibbles of a half's bytes, then the low ones), then to the layout of
     * round r (ub128_tab's key row for r & 7). Round 0's is the first; each
     * next one is g looked up by the last (pshufb(g, p)): the layouts drift
     * by the same permutation every round (derived from ub128_tab; tests
     * check the forms against ref). */
    static const _Alignas(16)
        uint8_t p0[16] = {0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15};
    static const _Alignas(16)
        uint8_t g[16] = {8, 9, 0, 1, 10, 11, 2, 3, 4, 5, 14, 15, 6, 7, 12, 13};
    /* uBlock-256/256: the natural order to layout L of a half's two
     * vectors (ub256_tab's to_l after load256v's split; no drift), both
     * stored in one: l's nibble low, h's high (UBLOCK_LLK_*). */
    static const _Alignas(16)
        uint8_t pl[2][16] = {{4, 5, 12, 13, 6, 7, 14, 15, 2, 3, 8, 9, 0, 1, 10, 11},
                             {2, 3, 8, 9, 0, 1, 10, 11, 6, 7, 14, 15, 4, 5, 12, 13}};
    const v128 gv = v128_load(g), pl0 = v128_load(pl[0]), pl1 = v128_load(pl[1]);
    v128 p = v128_load(p0);
    uint8_t *llk = s->ext + UBLOCK_LLK_OFF;
    ub_ks ks;
    ub_ks_init(&ks, c, key);
    s->nbytes = ks.t == 3 ? 32 : 16;
    s->rounds = ks.rounds;
    for (unsigned r = 0;; r++) {
        v128_storeu(s->rk[r], ub_nib_pack(ks.k0, ks.k1));
        if (ks.t == 3) {
            v128_storeu(s->rk[r] + 16, ub_nib_pack(ks.k2, ks.k3));
            v128_storeu(llk + 32 * r,
                        v128_or(v128_shuf8(ks.k0, pl0), v128_sll64(v128_shuf8(ks.k1, pl1), 4)));
            v128_storeu(llk + 32 * r + 16,
                        v128_or(v128_shuf8(ks.k2, pl0), v128_sll64(v128_shuf8(ks.k3, pl1), 4)));
        } else {
            v128_storeu(llk + 32 * r, v128_shuf8(ks.k0, p));
            v128_storeu(llk + 32 * r + 16, v128_shuf8(ks.k1, p));
            p = v128_shuf8(gv, p);
        }
        if (r == ks.rounds)
            break;
        ub_ks_step(&ks, r + 1);
    }
    s->llk = UBLOCK_LLK_NIB;
}

/* The body of each backend's key setup (a function of its own file, so
 * compiled for its ISA): one loop per member, the member's branches
 * folded away. */
static inline __attribute__((always_inline)) void ub_expand_nib_any(ublock_sched *s, kuai_cipher c,
                                                                    const uint8_t *key)
{
    if (c == KUAI_UBLOCK_128_128)
        ub_expand_nib(s, KUAI_UBLOCK_128_128, key);
    else if (c == KUAI_UBLOCK_128_256)
        ub_expand_nib(s, KUAI_UBLOCK_128_256, key);
    else
        ub_expand_nib(s, KUAI_UBLOCK_256_256, key);
}

#endif
