/* SPDX-License-Identifier: Apache-2.0 */
/*
 * uBlock key schedule on nibbles over the 128-bit vocabulary (src/simd:
 * SSSE3, VEX-encoded where the including file is built for AVX2; NEON;
 * LSX), one round at a time: ublock_expand_nib.h stores each round key
 * in the low-latency kernel's form, and the kernel's one-shot path (ublock_ll_oneshot.h) turns each
 * straight into the form its rounds add (one shuffle per vector), with no packed round key in
 * between. The including file includes its ISA's vocabulary first. Below,
 * pshufb stands for v128_shuf8 (tbl, vshuf.b), and the lookups that rely
 * on an index's bit 7 giving 0 are v128_shuf8z.
 *
 * The key register is one nibble per byte, 16 nibbles (a quarter of a
 * 256-bit key, or half of a 128-bit one) per vector: PK is one pshufb per 16
 * nibbles, Sk and Tk are pshufb lookups into register tables (constant
 * time: the key is only ever a shuffle index). The dependency chain from
 * one round's K0 to the next is three operations: PK (pshufb), Sk (pshufb),
 * one XOR. The round constant is added before PK, at the positions PK moves
 * it from (rcpre = rcx at PK^-1), and folded into the previous round's XOR
 * with K2, which is ready early; for 128-bit keys the 16-nibble K0||K1
 * vector runs Sk on K0's half only, by setting bit 7 of K1's index bytes
 * (pshufb then gives 0), and Tk on K1's half by the same trick. The key
 * register lives in xmm registers only.
 *
 * After ub_ks_init and after each ub_ks_step (rounds 1, 2, ... in order),
 * round key RK_r is, as 16-nibble vectors in the spec's nibble order:
 * k0 || k1 (uBlock-128/128 and 128/256), k0 || k1 || k2 || k3 (256/256).
 */
#ifndef KUAI_UBLOCK_KS_H
#define KUAI_UBLOCK_KS_H

#include "ublock.h"

#ifdef __AVX2__
#include "../simd/avx2.h"
#endif

/* ublock_ks_rc (ublock.h): [0] rcx of 128-bit keys (RC nibbles, then
 * 0x80), [1] rcx at PK1^-1 positions, [2] rcx at PK2^-1 positions (PK3's
 * too). Each has a row 24 (0) after the 24 RCs, as ub_ks_rcf has: kx is
 * not read after the last round, so key setup's step of that round loads
 * a row that exists like every other step instead of choosing 0 (a
 * compare and a branch a round; ublock_ks_step.h, zero_last). */

/* The state of the schedules over vector type T, one per 128-bit lane:
 * ub_ks (v128), ub_ksy (ymm, two), ub_ksz (zmm, four). */
#define UB_KS_STATE(name, T)                                                                       \
    typedef struct name {                                                                          \
        T k0, k1, k2, k3, kx;       /* key register; kx = k0 ^ next rcpre */                       \
        T sbox, tk, pk0, pk1, lo80; /* constants */                                                \
        T pkn, pks;                 /* ub_ks_stepf: PK's K0 half across frames */                  \
        T rcp;                      /* ub_ks_stepf's lazy K3: the RC row k3 still holds */         \
        int t;                      /* 1: 128/128, 2: 128/256, 3: 256/256 */                       \
        unsigned rounds;                                                                           \
    } name
UB_KS_STATE(ub_ks, v128);

#define UB_KS_ROW(t, r) v128_load(ublock_ks_rc[t][r])

/* For ub_ks_stepf (ublock_ks_step.h), and [0] for ub_ks_step's
 * 256-bit keys too: [0] RC nibbles then 0 (row 0 of ublock_ks_rc, masked
 * to 0..15), [1] the same in the swapped frame (64-bit halves exchanged),
 * [2] ublock_ks_rc's row 2 in the swapped frame. Generated from
 * ublock_ks_rc. */
static const _Alignas(16) uint8_t ub_ks_rcf[3][25][16] = {
    {
        {9, 8, 8, 12, 12, 9, 13, 13, 0, 0, 0, 0, 0, 0, 0, 0},
        {15, 0, 14, 4, 10, 1, 11, 5, 0, 0, 0, 0, 0, 0, 0, 0},
        {2, 1, 3, 5, 7, 0, 6, 4, 0, 0, 0, 0, 0, 0, 0, 0},
        {8, 3, 9, 7, 13, 2, 12, 6, 0, 0, 0, 0, 0, 0, 0, 0},
        {12, 7, 13, 3, 9, 6, 8, 2, 0, 0, 0, 0, 0, 0, 0, 0},
        {4, 15, 5, 11, 1, 14, 0, 10, 0, 0, 0, 0, 0, 0, 0, 0},
        {5, 14, 4, 10, 0, 15, 1, 11, 0, 0, 0, 0, 0, 0, 0, 0},
        {7, 12, 6, 8, 2, 13, 3, 9, 0, 0, 0, 0, 0, 0, 0, 0},
        {3, 9, 2, 13, 6, 8, 7, 12, 0, 0, 0, 0, 0, 0, 0, 0},
        {11, 3, 10, 7, 14, 2, 15, 6, 0, 0, 0, 0, 0, 0, 0, 0},
        {10, 7, 11, 3, 15, 6, 14, 2, 0, 0, 0, 0, 0, 0, 0, 0},
        {8, 14, 9, 10, 13, 15, 12, 11, 0, 0, 0, 0, 0, 0, 0, 0},
        {13, 12, 12, 8, 8, 13, 9, 9, 0, 0, 0, 0, 0, 0, 0, 0},
        {7, 8, 6, 12, 2, 9, 3, 13, 0, 0, 0, 0, 0, 0, 0, 0},
        {3, 0, 2, 4, 6, 1, 7, 5, 0, 0, 0, 0, 0, 0, 0, 0},
        {10, 1, 11, 5, 15, 0, 14, 4, 0, 0, 0, 0, 0, 0, 0, 0},
        {8, 2, 9, 6, 13, 3, 12, 7, 0, 0, 0, 0, 0, 0, 0, 0},
        {12, 5, 13, 1, 9, 4, 8, 0, 0, 0, 0, 0, 0, 0, 0, 0},
        {4, 10, 5, 14, 1, 11, 0, 15, 0, 0, 0, 0, 0, 0, 0, 0},
        {5, 5, 4, 1, 0, 4, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0},
        {6, 11, 7, 15, 3, 10, 2, 14, 0, 0, 0, 0, 0, 0, 0, 0},
        {1, 7, 0, 3, 4, 6, 5, 2, 0, 0, 0, 0, 0, 0, 0, 0},
        {14, 15, 15, 11, 11, 14, 10, 10, 0, 0, 0, 0, 0, 0, 0, 0},
        {1, 15, 0, 11, 4, 14, 5, 10, 0, 0, 0, 0, 0, 0, 0, 0},
        {0},
    },
    {
        {0, 0, 0, 0, 0, 0, 0, 0, 9, 8, 8, 12, 12, 9, 13, 13},
        {0, 0, 0, 0, 0, 0, 0, 0, 15, 0, 14, 4, 10, 1, 11, 5},
        {0, 0, 0, 0, 0, 0, 0, 0, 2, 1, 3, 5, 7, 0, 6, 4},
        {0, 0, 0, 0, 0, 0, 0, 0, 8, 3, 9, 7, 13, 2, 12, 6},
        {0, 0, 0, 0, 0, 0, 0, 0, 12, 7, 13, 3, 9, 6, 8, 2},
        {0, 0, 0, 0, 0, 0, 0, 0, 4, 15, 5, 11, 1, 14, 0, 10},
        {0, 0, 0, 0, 0, 0, 0, 0, 5, 14, 4, 10, 0, 15, 1, 11},
        {0, 0, 0, 0, 0, 0, 0, 0, 7, 12, 6, 8, 2, 13, 3, 9},
        {0, 0, 0, 0, 0, 0, 0, 0, 3, 9, 2, 13, 6, 8, 7, 12},
        {0, 0, 0, 0, 0, 0, 0, 0, 11, 3, 10, 7, 14, 2, 15, 6},
        {0, 0, 0, 0, 0, 0, 0, 0, 10, 7, 11, 3, 15, 6, 14, 2},
        {0, 0, 0, 0, 0, 0, 0, 0, 8, 14, 9, 10, 13, 15, 12, 11},
        {0, 0, 0, 0, 0, 0, 0, 0, 13, 12, 12, 8, 8, 13, 9, 9},
        {0, 0, 0, 0, 0, 0, 0, 0, 7, 8, 6, 12, 2, 9, 3, 13},
        {0, 0, 0, 0, 0, 0, 0, 0, 3, 0, 2, 4, 6, 1, 7, 5},
        {0, 0, 0, 0, 0, 0, 0, 0, 10, 1, 11, 5, 15, 0, 14, 4},
        {0, 0, 0, 0, 0, 0, 0, 0, 8, 2, 9, 6, 13, 3, 12, 7},
        {0, 0, 0, 0, 0, 0, 0, 0, 12, 5, 13, 1, 9, 4, 8, 0},
        {0, 0, 0, 0, 0, 0, 0, 0, 4, 10, 5, 14, 1, 11, 0, 15},
        {0, 0, 0, 0, 0, 0, 0, 0, 5, 5, 4, 1, 0, 4, 1, 0},
        {0, 0, 0, 0, 0, 0, 0, 0, 6, 11, 7, 15, 3, 10, 2, 14},
        {0, 0, 0, 0, 0, 0, 0, 0, 1, 7, 0, 3, 4, 6, 5, 2},
        {0, 0, 0, 0, 0, 0, 0, 0, 14, 15, 15, 11, 11, 14, 10, 10},
        {0, 0, 0, 0, 0, 0, 0, 0, 1, 15, 0, 11, 4, 14, 5, 10},
        {0},
    },
    {
        {13, 0, 9, 0, 0, 13, 0, 8, 12, 0, 12, 0, 0, 8, 0, 9},
        {11, 0, 15, 0, 0, 5, 0, 14, 4, 0, 10, 0, 0, 0, 0, 1},
        {6, 0, 2, 0, 0, 4, 0, 3, 5, 0, 7, 0, 0, 1, 0, 0},
        {12, 0, 8, 0, 0, 6, 0, 9, 7, 0, 13, 0, 0, 3, 0, 2},
        {8, 0, 12, 0, 0, 2, 0, 13, 3, 0, 9, 0, 0, 7, 0, 6},
        {0, 0, 4, 0, 0, 10, 0, 5, 11, 0, 1, 0, 0, 15, 0, 14},
        {1, 0, 5, 0, 0, 11, 0, 4, 10, 0, 0, 0, 0, 14, 0, 15},
        {3, 0, 7, 0, 0, 9, 0, 6, 8, 0, 2, 0, 0, 12, 0, 13},
        {7, 0, 3, 0, 0, 12, 0, 2, 13, 0, 6, 0, 0, 9, 0, 8},
        {15, 0, 11, 0, 0, 6, 0, 10, 7, 0, 14, 0, 0, 3, 0, 2},
        {14, 0, 10, 0, 0, 2, 0, 11, 3, 0, 15, 0, 0, 7, 0, 6},
        {12, 0, 8, 0, 0, 11, 0, 9, 10, 0, 13, 0, 0, 14, 0, 15},
        {9, 0, 13, 0, 0, 9, 0, 12, 8, 0, 8, 0, 0, 12, 0, 13},
        {3, 0, 7, 0, 0, 13, 0, 6, 12, 0, 2, 0, 0, 8, 0, 9},
        {7, 0, 3, 0, 0, 5, 0, 2, 4, 0, 6, 0, 0, 0, 0, 1},
        {14, 0, 10, 0, 0, 4, 0, 11, 5, 0, 15, 0, 0, 1, 0, 0},
        {12, 0, 8, 0, 0, 7, 0, 9, 6, 0, 13, 0, 0, 2, 0, 3},
        {8, 0, 12, 0, 0, 0, 0, 13, 1, 0, 9, 0, 0, 5, 0, 4},
        {0, 0, 4, 0, 0, 15, 0, 5, 14, 0, 1, 0, 0, 10, 0, 11},
        {1, 0, 5, 0, 0, 0, 0, 4, 1, 0, 0, 0, 0, 5, 0, 4},
        {2, 0, 6, 0, 0, 14, 0, 7, 15, 0, 3, 0, 0, 11, 0, 10},
        {5, 0, 1, 0, 0, 2, 0, 0, 3, 0, 4, 0, 0, 7, 0, 6},
        {10, 0, 14, 0, 0, 10, 0, 15, 11, 0, 11, 0, 0, 15, 0, 14},
        {5, 0, 1, 0, 0, 10, 0, 0, 11, 0, 4, 0, 0, 15, 0, 14},
        {0},
    }};

/* uBlock-128/128's rows for ub_ks_step128f (ublock_ks_step.h), without
 * ublock_ks_rc's 0x80 marks (Sk's and Tk's halves are chosen by a blend
 * there), each in its round's frame (the swapped one for odd rounds): [0]
 * row r - 1: the RC nibbles of round r (rcx); [1] row r: the constant kx
 * adds after round r (ublock_ks_rc's row 1 for round r + 1: the RC nibbles
 * at PK^-1's positions; 0 after the last round; row 0: round 1's, which
 * UBK_FRAMES128 adds). [0]'s row 16 is never read (one shape for both).
 * Generated from ublock_ks_rc. */
static const _Alignas(16) uint8_t ub_ks_rc128f[2][17][16] = {
    {
        {0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x09, 0x08, 0x08, 0x0c, 0x0c, 0x09, 0x0d,
         0x0d},
        {0x0f, 0x00, 0x0e, 0x04, 0x0a, 0x01, 0x0b, 0x05, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
         0x00},
        {0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x01, 0x03, 0x05, 0x07, 0x00, 0x06,
         0x04},
        {0x08, 0x03, 0x09, 0x07, 0x0d, 0x02, 0x0c, 0x06, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
         0x00},
        {0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x0c, 0x07, 0x0d, 0x03, 0x09, 0x06, 0x08,
         0x02},
        {0x04, 0x0f, 0x05, 0x0b, 0x01, 0x0e, 0x00, 0x0a, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
         0x00},
        {0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x05, 0x0e, 0x04, 0x0a, 0x00, 0x0f, 0x01,
         0x0b},
        {0x07, 0x0c, 0x06, 0x08, 0x02, 0x0d, 0x03, 0x09, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
         0x00},
        {0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0x09, 0x02, 0x0d, 0x06, 0x08, 0x07,
         0x0c},
        {0x0b, 0x03, 0x0a, 0x07, 0x0e, 0x02, 0x0f, 0x06, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
         0x00},
        {0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x0a, 0x07, 0x0b, 0x03, 0x0f, 0x06, 0x0e,
         0x02},
        {0x08, 0x0e, 0x09, 0x0a, 0x0d, 0x0f, 0x0c, 0x0b, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
         0x00},
        {0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x0d, 0x0c, 0x0c, 0x08, 0x08, 0x0d, 0x09,
         0x09},
        {0x07, 0x08, 0x06, 0x0c, 0x02, 0x09, 0x03, 0x0d, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
         0x00},
        {0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0x00, 0x02, 0x04, 0x06, 0x01, 0x07,
         0x05},
        {0x0a, 0x01, 0x0b, 0x05, 0x0f, 0x00, 0x0e, 0x04, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
         0x00},
        {0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
         0x00},
    },
    {
        {0x08, 0x0c, 0x00, 0x00, 0x00, 0x0d, 0x09, 0x00, 0x08, 0x00, 0x0d, 0x00, 0x00, 0x0c, 0x00,
         0x09},
        {0x0e, 0x00, 0x05, 0x00, 0x00, 0x04, 0x00, 0x01, 0x00, 0x0a, 0x00, 0x00, 0x00, 0x0b, 0x0f,
         0x00},
        {0x01, 0x07, 0x00, 0x00, 0x00, 0x06, 0x02, 0x00, 0x03, 0x00, 0x04, 0x00, 0x00, 0x05, 0x00,
         0x00},
        {0x09, 0x00, 0x06, 0x00, 0x00, 0x07, 0x00, 0x02, 0x03, 0x0d, 0x00, 0x00, 0x00, 0x0c, 0x08,
         0x00},
        {0x07, 0x09, 0x00, 0x00, 0x00, 0x08, 0x0c, 0x00, 0x0d, 0x00, 0x02, 0x00, 0x00, 0x03, 0x00,
         0x06},
        {0x05, 0x00, 0x0a, 0x00, 0x00, 0x0b, 0x00, 0x0e, 0x0f, 0x01, 0x00, 0x00, 0x00, 0x00, 0x04,
         0x00},
        {0x0e, 0x00, 0x00, 0x00, 0x00, 0x01, 0x05, 0x00, 0x04, 0x00, 0x0b, 0x00, 0x00, 0x0a, 0x00,
         0x0f},
        {0x06, 0x00, 0x09, 0x00, 0x00, 0x08, 0x00, 0x0d, 0x0c, 0x02, 0x00, 0x00, 0x00, 0x03, 0x07,
         0x00},
        {0x09, 0x06, 0x00, 0x00, 0x00, 0x07, 0x03, 0x00, 0x02, 0x00, 0x0c, 0x00, 0x00, 0x0d, 0x00,
         0x08},
        {0x0a, 0x00, 0x06, 0x00, 0x00, 0x07, 0x00, 0x02, 0x03, 0x0e, 0x00, 0x00, 0x00, 0x0f, 0x0b,
         0x00},
        {0x07, 0x0f, 0x00, 0x00, 0x00, 0x0e, 0x0a, 0x00, 0x0b, 0x00, 0x02, 0x00, 0x00, 0x03, 0x00,
         0x06},
        {0x09, 0x00, 0x0b, 0x00, 0x00, 0x0a, 0x00, 0x0f, 0x0e, 0x0d, 0x00, 0x00, 0x00, 0x0c, 0x08,
         0x00},
        {0x0c, 0x08, 0x00, 0x00, 0x00, 0x09, 0x0d, 0x00, 0x0c, 0x00, 0x09, 0x00, 0x00, 0x08, 0x00,
         0x0d},
        {0x06, 0x00, 0x0d, 0x00, 0x00, 0x0c, 0x00, 0x09, 0x08, 0x02, 0x00, 0x00, 0x00, 0x03, 0x07,
         0x00},
        {0x00, 0x06, 0x00, 0x00, 0x00, 0x07, 0x03, 0x00, 0x02, 0x00, 0x05, 0x00, 0x00, 0x04, 0x00,
         0x01},
        {0x0b, 0x00, 0x04, 0x00, 0x00, 0x05, 0x00, 0x00, 0x01, 0x0f, 0x00, 0x00, 0x00, 0x0e, 0x0a,
         0x00},
        {0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
         0x00},
    }};

/* spec tables: s, and multiplication by 2 in GF(2^4) mod x^4 + x + 1; and
 * bit 7 on the first 8 index bytes (ub_ks_step) */
static const _Alignas(16) uint8_t ub_ks_const[3][16] = {
    {UBLOCK_S_ROW(UBLOCK_NIB)},
    {0, 2, 4, 6, 8, 10, 12, 14, 3, 1, 7, 5, 11, 9, 15, 13},
    {0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0, 0, 0, 0, 0, 0, 0, 0}};

#define UBK_S ub_ks
#define UBK_T v128
#define UBK_OP(op) KUAI_V(v128, op)
#define UBK_ROW(t, r) UB_KS_ROW(t, r)
#define UBK_ROWF(t, r) v128_load(ub_ks_rcf[t][r])
#define UBK_ROW128F(t, r) v128_load(ub_ks_rc128f[t][r])
#define UBK_STEP ub_ks_step
#define UBK_STEPF ub_ks_stepf
#define UBK_FRAMES ub_ks_frames
#define UBK_STEP128F ub_ks_step128f
#define UBK_FRAMES128 ub_ks_frames128
#define UBK_FRAMES_ANY ub_ks_frames_any
#define UBK_STEP_ANY ub_ks_step_any
#define UBK_INIT ub_ks_init_bytes
#include "ublock_ks_step.h"

static inline __attribute__((always_inline)) void ub_ks_init(ub_ks *s, kuai_cipher c,
                                                             const uint8_t *key)
{
    ub_ks_init_bytes(s, c, v128_loadu(key),
                     c == KUAI_UBLOCK_128_128 ? v128_zero() : v128_loadu(key + 16));
}

#ifdef __AVX2__
/*
 * Two schedules side by side in ymm (one per 128-bit lane), for the ymm
 * form of the low-latency kernel (ublock_ll.h, UL_Y): two keys, or one key
 * in both lanes, so that each round key comes out in the lanes of the
 * blocks that add it. The keys move into their lanes at init only.
 */
UB_KS_STATE(ub_ksy, __m256i);

/* schedule a in lane 0, b in lane 1 (the same member, the same round) */
static inline __attribute__((always_inline)) void ub_ksy_pair(ub_ksy *y, const ub_ks *pa,
                                                              const ub_ks *pb)
{
    const ub_ks a = *pa, b = *pb;
#define UB_KSY_PAIR(f) y->f = _mm256_set_m128i(b.f, a.f)
    UB_KSY_PAIR(k0);
    UB_KSY_PAIR(k1);
    UB_KSY_PAIR(k2);
    UB_KSY_PAIR(k3);
    UB_KSY_PAIR(kx);
#undef UB_KSY_PAIR
    y->sbox = _mm256_broadcastsi128_si256(a.sbox);
    y->tk = _mm256_broadcastsi128_si256(a.tk);
    y->pk0 = _mm256_broadcastsi128_si256(a.pk0);
    y->pk1 = _mm256_broadcastsi128_si256(a.pk1);
    y->lo80 = _mm256_broadcastsi128_si256(a.lo80);
    y->t = a.t;
    y->rounds = a.rounds;
}

#define UBK_S ub_ksy
#define UBK_T __m256i
#define UBK_OP(op) KUAI_V(v256, op)
#define UBK_ROW(t, r) v256_row16(ublock_ks_rc[t][r])
#define UBK_ROWF(t, r) v256_row16(ub_ks_rcf[t][r])
#define UBK_ROW128F(t, r) v256_row16(ub_ks_rc128f[t][r])
#define UBK_STEP ub_ksy_step
#define UBK_STEPF ub_ksy_stepf
#define UBK_FRAMES ub_ksy_frames
#define UBK_STEP128F ub_ksy_step128f
#define UBK_FRAMES128 ub_ksy_frames128
#define UBK_FRAMES_ANY ub_ksy_frames_any
#define UBK_STEP_ANY ub_ksy_step_any
#define UBK_INIT ub_ksy_init_bytes
#include "ublock_ks_step.h"

/* key0 in lane 0, key1 in lane 1 (same: key0 in both). The keys' bytes go
 * into their lanes first (vinserti128's memory form: a load, no shuffle)
 * and the nibble split runs once on ymm, where two xmm states were moved
 * into lanes (five inserts): kuai_key_init_multi of four uBlock-128/256
 * keys on avx2 179 -> 171 TSC cycles, the other rows level (Xeon, Sapphire
 * Rapids, scripts/bench-ab) */
static inline __attribute__((always_inline)) void
ub_ksy_init(ub_ksy *y, kuai_cipher c, const uint8_t *key0, const uint8_t *key1, int same)
{
    const int wide = c != KUAI_UBLOCK_128_128;
    __m256i b0, b1 = _mm256_setzero_si256();
    if (same) {
        b0 = _mm256_broadcastsi128_si256(v128_loadu(key0));
        if (wide)
            b1 = _mm256_broadcastsi128_si256(v128_loadu(key0 + 16));
    } else {
        b0 = _mm256_loadu2_m128i((const __m128i *)(const void *)key1,
                                 (const __m128i *)(const void *)key0);
        if (wide)
            b1 = _mm256_loadu2_m128i((const __m128i *)(const void *)(key1 + 16),
                                     (const __m128i *)(const void *)(key0 + 16));
    }
    ub_ksy_init_bytes(y, c, b0, b1);
}
#endif

#ifdef KUAI_SIMD_AVX512_H
/*
 * Four schedules side by side in zmm (one per 128-bit lane; avx512's
 * kuai_key_init_multi and four-key one-shot calls): the same steps, the
 * chain from one round key to the next as long as for one key; key setup
 * is then bound by its stores (ublock_expand_nib.h). The keys move into
 * their lanes at init only.
 */
UB_KS_STATE(ub_ksz, __m512i);

#define UBK_S ub_ksz
#define UBK_T __m512i
#define UBK_OP(op) KUAI_V(v512, op)
#define UBK_ROW(t, r) v512_row16(ublock_ks_rc[t][r])
#define UBK_ROWF(t, r) v512_row16(ub_ks_rcf[t][r])
#define UBK_ROW128F(t, r) v512_row16(ub_ks_rc128f[t][r])
#define UBK_STEP ub_ksz_step
#define UBK_STEPF ub_ksz_stepf
#define UBK_FRAMES ub_ksz_frames
#define UBK_STEP128F ub_ksz_step128f
#define UBK_FRAMES128 ub_ksz_frames128
#define UBK_FRAMES_ANY ub_ksz_frames_any
#define UBK_STEP_ANY ub_ksz_step_any
#define UBK_INIT ub_ksz_init_bytes
#include "ublock_ks_step.h"

/* 16 bytes from p[j] + off into lane j: a broadcast load and three
 * merge-masked ones (load ports and ports 0/5, no shuffle) */
static inline __attribute__((always_inline)) __m512i ub_ksz_lanes(const uint8_t *const p[4],
                                                                  size_t off)
{
    __m512i z = _mm512_broadcast_i32x4(v128_loadu(p[0] + off));
    for (int j = 1; j < 4; j++)
        z = _mm512_mask_broadcast_i32x4(z, (__mmask16)(0xf << 4 * j), v128_loadu(p[j] + off));
    return z;
}

/* key[j]'s schedule in lane j (the same member). The keys' bytes go into
 * their lanes first and the nibble split runs once on zmm, where four xmm
 * states were moved into lanes (15 inserts on port 5): scripts/bench-ab,
 * TSC cycles, kuai_ecb_encrypt_oneshot_multi of four keys 188 -> 175
 * (uBlock-128/128) and 266 -> 237 (128/256), kuai_key_init_multi of four
 * 128/256 keys 142 -> 132, 128/128's level (Xeon, Sapphire Rapids) */
static inline __attribute__((always_inline)) void ub_ksz_init(ub_ksz *z, kuai_cipher c,
                                                              const uint8_t *const key[4])
{
    ub_ksz_init_bytes(z, c, ub_ksz_lanes(key, 0),
                      c == KUAI_UBLOCK_128_128 ? _mm512_setzero_si512() : ub_ksz_lanes(key, 16));
}
#endif

#endif
