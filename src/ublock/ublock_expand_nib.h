/* SPDX-License-Identifier: Apache-2.0 */
/*
 * uBlock key setup on nibbles (ublock_ks.h's schedule), one copy per
 * including file so that each is compiled for its ISA: ublock_ssse3.c's
 * ublock_expand_nib_ssse3 (SSE encoding), ublock_avx2.c's and
 * ublock_avx512.c's (VEX: three-operand forms, no register copies),
 * ublock_neon.c's and ublock_lsx.c's. Each round key is stored in the low-latency kernel's
 * form only (ublock.h, UBLOCK_LLK_*); the raw form is derived from it
 * where a bulk path needs it (ublock_rk_row). The including file includes
 * its ISA's vocabulary first.
 */
#ifndef KUAI_UBLOCK_EXPAND_NIB_H
#define KUAI_UBLOCK_EXPAND_NIB_H

#include "ublock.h"
#include "ublock_ks.h"

/* uBlock-128 round r's key row: k0 in the swapped frame (sw) or the
 * normal one, k1 in the other */
static inline __attribute__((always_inline)) void ub_nib_store128(uint8_t *llk, v128 k0, v128 k1,
                                                                  unsigned r, int sw)
{
    v128_storeu(llk + 32 * r, v128_shuf8(k0, v128_load(ublock_llk_p[sw][r & 7])));
    v128_storeu(llk + 32 * r + 16, v128_shuf8(k1, v128_load(ublock_llk_p[!sw][r & 7])));
}

static inline __attribute__((always_inline)) void ub_expand_nib(ublock_sched *s, kuai_cipher c,
                                                                const uint8_t *key)
{
    /* Round r's row p: the key register's natural nibble order to the
     * low-latency kernel's load layout (ublock_ll.h's load128: the high
     * nibbles of a half's bytes, then the low ones), then to the layout of
     * round r (ub128_tab's key row for r & 7): ublock_llk_p[0][r & 7], or
     * [1][r & 7] for a vector the schedule holds in its swapped frame (the
     * layouts drift by the same permutation every round; derived from
     * ub128_tab; tests check the forms against ref). uBlock-256/256: the
     * natural order to layout L of a half's two vectors (ub256_tab's to_l
     * after load256v's split; no drift), both stored in one: l's nibble
     * low, h's high (UBLOCK_LLK_*). ublock_sched.c holds the tables and
     * the scalar inverse. */
    uint8_t *llk = s->ext + UBLOCK_LLK_OFF;
    ub_ks ks;
    ub_ks_init(&ks, c, key);
    s->nbytes = ks.t == 3 ? 32 : 16;
    s->rounds = ks.rounds;
    if (ks.t == 3) {
        const v128 pl0 = v128_load(ublock_llk_pl[0]), pl1 = v128_load(ublock_llk_pl[1]);
        for (unsigned r = 0;; r++) {
            v128_storeu(llk + 32 * r,
                        v128_or(v128_shuf8(ks.k0, pl0), v128_sll64(v128_shuf8(ks.k1, pl1), 4)));
            v128_storeu(llk + 32 * r + 16,
                        v128_or(v128_shuf8(ks.k2, pl0), v128_sll64(v128_shuf8(ks.k3, pl1), 4)));
            if (r == ks.rounds)
                break;
            ub_ks_step(&ks, r + 1, 0); /* row 24 after the last round */
        }
    } else if (ks.t == 2) {
        /* the two-frame step (ublock_ks_step.h: no shuffle for PK's K1
         * half): round r's K0 is in the swapped frame for even r, K1 in the
         * other; two rounds a pass, so that each frame is a constant */
        ub_ks_frames(&ks);
        ub_nib_store128(llk, ks.k0, ks.k1, 0, 1);
        for (unsigned r = 1; r <= 24; r += 2) {
            ub_ks_stepf(&ks, r, 0);
            ub_nib_store128(llk, ks.k0, ks.k1, r, 0);
            ub_ks_stepf(&ks, r + 1, 1);
            ub_nib_store128(llk, ks.k0, ks.k1, r + 1, 1);
        }
    } else {
        /* uBlock-128/128's two frames (ub_ks_step128f): round r's K0||K1
         * is in the swapped frame for odd r, K2||K3 in the other */
        ub_ks_frames128(&ks);
        ub_nib_store128(llk, ks.k0, ks.k1, 0, 0);
        for (unsigned r = 1; r <= 16; r += 2) {
            ub_ks_step128f(&ks, r);
            ub_nib_store128(llk, ks.k0, ks.k1, r, 1);
            ub_ks_step128f(&ks, r + 1);
            ub_nib_store128(llk, ks.k0, ks.k1, r + 1, 0);
        }
    }
    s->raw = 0; /* rk left unwritten: ublock_rk_row derives it */
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
