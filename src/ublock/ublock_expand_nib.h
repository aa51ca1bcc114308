/* SPDX-License-Identifier: Apache-2.0 */
/*
 * uBlock key setup on nibbles (ublock_ks.h's schedule), one copy per
 * including file so that each is compiled for its ISA: ublock_ssse3.c's
 * ublock_expand_nib_ssse3 (SSE encoding), ublock_avx2.c's and
 * ublock_avx512.c's (VEX: three-operand forms, no register copies),
 * ublock_neon.c's and ublock_lsx.c's. Each round key is stored in the low-latency kernel's
 * form only (ublock.h, UBLOCK_LLK_*); the raw form is derived from it
 * where a bulk path needs it (ublock_rk_row). Files built for AVX2 also
 * set two keys up side by side (ub_expand_nib2, kuai_key_init_multi), and
 * files with avx512.h's vocabulary four (ub_expand_nib4_any). The
 * body is written once for every width (ublock_expand_nib_w.h). The
 * including file includes its ISA's vocabulary first.
 */
#ifndef KUAI_UBLOCK_EXPAND_NIB_H
#define KUAI_UBLOCK_EXPAND_NIB_H

#include "ublock.h"
#include "ublock_ks.h"

/* One schedule: s[0]'s kernel form from an xmm state. */
#define UBE_FN ub_expand_nib_x
#define UBE_S ub_ks
#define UBE_T v128
#define UBE_OP(op) KUAI_V(v128, op)
#define UBE_ROW(p) v128_load(p)
#define UBE_N 1
#define UBE_PUT(p, off, x, y)                                                                      \
    do {                                                                                           \
        v128_storeu((p)[0] + (off), x);                                                            \
        v128_storeu((p)[0] + (off) + 16, y);                                                       \
    } while (0)
#include "ublock_expand_nib_w.h"

static inline __attribute__((always_inline)) void ub_expand_nib(ublock_sched *s, kuai_cipher c,
                                                                const uint8_t *key)
{
    ub_ks ks;
    ub_ks_init(&ks, c, key);
    ub_expand_nib_x(&s, &ks);
}

#ifdef __AVX2__
/* Two schedules side by side, one per 128-bit lane of a ymm state
 * (ub_ksy): s[0]'s from lane 0, s[1]'s from lane 1. The chain from one
 * round key to the next bounds key setup, so two keys cost less than
 * twice one (kuai_key_init_multi). */
#define UBE_FN ub_expand_nib_y
/* AVX2 (no three-input XOR): the frames; drifting, two keys' setup 74 ->
 * 79 TSC cycles (Xeon, Sapphire Rapids) */
#define UBE_KS128_FRAMES (!v256_has_xor3)
#define UBE_S ub_ksy
#define UBE_T __m256i
#define UBE_OP(op) KUAI_V(v256, op)
#define UBE_ROW(p) v256_row16(p)
#define UBE_N 2
/* lane j of x at p[j] + off, of y at p[j] + off + 16 (ublock_avx2_keys4.c
 * stores its two ymm states with it too) */
#define UB_YPUT(p, off, x, y)                                                                      \
    do {                                                                                           \
        const __m256i putx_ = (x), puty_ = (y);                                                    \
        v128_storeu((p)[0] + (off), _mm256_castsi256_si128(putx_));                                \
        v128_storeu((p)[0] + (off) + 16, _mm256_castsi256_si128(puty_));                           \
        v128_storeu((p)[1] + (off), _mm256_extracti128_si256(putx_, 1));                           \
        v128_storeu((p)[1] + (off) + 16, _mm256_extracti128_si256(puty_, 1));                      \
    } while (0)
#define UBE_PUT UB_YPUT
#include "ublock_expand_nib_w.h"

static inline __attribute__((always_inline)) void ub_expand_nib2(ublock_sched *s0, ublock_sched *s1,
                                                                 kuai_cipher c, const uint8_t *key0,
                                                                 const uint8_t *key1)
{
    ublock_sched *s[2] = {s0, s1};
    ub_ksy ks;
    ub_ksy_init(&ks, c, key0, key1, 0);
    ub_expand_nib_y(s, &ks);
}

/* The body of each backend's two-key setup (kuai_key_init_multi): one
 * loop per member. */
static inline __attribute__((always_inline)) void
ub_expand_nib2_any(ublock_sched *s0, ublock_sched *s1, kuai_cipher c, const uint8_t *key0,
                   const uint8_t *key1)
{
    if (c == KUAI_UBLOCK_128_128)
        ub_expand_nib2(s0, s1, KUAI_UBLOCK_128_128, key0, key1);
    else if (c == KUAI_UBLOCK_128_256)
        ub_expand_nib2(s0, s1, KUAI_UBLOCK_128_256, key0, key1);
    else
        ub_expand_nib2(s0, s1, KUAI_UBLOCK_256_256, key0, key1);
}
#endif

#ifdef KUAI_SIMD_AVX512_H
/* Four schedules side by side, one per 128-bit lane of a zmm state
 * (ub_ksz): s[j]'s from lane j (avx512's kuai_key_init_multi). Each lane
 * goes to memory by itself: UB_ZPUT_LANE stores lane j of x at p by
 * vextracti32x4's memory form (a store, no shuffle-port op), which gcc 12
 * does not fold the intrinsic and the store into; the intrinsic where
 * AVX-512 is a stand-in (make test-shim). */
#ifdef __AVX512F__
#define UB_ZPUT_LANE(p, x, j)                                                                      \
    __asm__("vextracti32x4 $" #j ", %1, %0" : "=m"(*(uint8_t(*)[16])(void *)(p)) : "v"(x))
#else
#define UB_ZPUT_LANE(p, x, j) v128_storeu(p, _mm512_extracti32x4_epi32(x, j))
#endif
#define UBE_FN ub_expand_nib_z
#define UBE_S ub_ksz
#define UBE_T __m512i
#define UBE_OP(op) KUAI_V(v512, op)
#define UBE_ROW(p) v512_row16(p)
#define UBE_N 4
/* Lane by lane; 32 bytes a schedule as one store (a vpermt2q per two
 * schedules) measured slower: four uBlock-128/128 keys 132-144 TSC cycles
 * lane by lane, 179-184 so, 160 as two pairs (Xeon, Emerald Rapids) */
#define UBE_PUT(p, off, x, y)                                                                      \
    do {                                                                                           \
        const __m512i putx_ = (x), puty_ = (y);                                                    \
        v128_storeu((p)[0] + (off), _mm512_castsi512_si128(putx_));                                \
        v128_storeu((p)[0] + (off) + 16, _mm512_castsi512_si128(puty_));                           \
        UB_ZPUT_LANE((p)[1] + (off), putx_, 1);                                                    \
        UB_ZPUT_LANE((p)[1] + (off) + 16, puty_, 1);                                               \
        UB_ZPUT_LANE((p)[2] + (off), putx_, 2);                                                    \
        UB_ZPUT_LANE((p)[2] + (off) + 16, puty_, 2);                                               \
        UB_ZPUT_LANE((p)[3] + (off), putx_, 3);                                                    \
        UB_ZPUT_LANE((p)[3] + (off) + 16, puty_, 3);                                               \
    } while (0)
#include "ublock_expand_nib_w.h"

/* The body of avx512's four-key setup: one loop per member. */
static inline __attribute__((always_inline)) void
ub_expand_nib4_any(ublock_sched *const s[4], kuai_cipher c, const uint8_t *const key[4])
{
    ub_ksz ks;
    if (c == KUAI_UBLOCK_128_128) {
        ub_ksz_init(&ks, KUAI_UBLOCK_128_128, key);
        ub_expand_nib_z(s, &ks);
    } else if (c == KUAI_UBLOCK_128_256) {
        ub_ksz_init(&ks, KUAI_UBLOCK_128_256, key);
        ub_expand_nib_z(s, &ks);
    } else {
        ub_ksz_init(&ks, KUAI_UBLOCK_256_256, key);
        ub_expand_nib_z(s, &ks);
    }
}
#endif

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
