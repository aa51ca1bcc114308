/* SPDX-License-Identifier: Apache-2.0 */
/*
 * uBlock, AVX2 backend: four keys set up in one pass (kuai_key_init_multi,
 * the backend table's expand4). Where a core runs 256 bits at once, the
 * two ymm states of two pairs of keys (a key per lane) step in one loop:
 * each state's chain bounds its pair alone, and the second fills the ports
 * the first leaves idle (llvm-mca's Zen 3 model: 0.75-0.76 of two pairs one
 * after the other, uBlock-128/128 and 128/256; docs/performance.md). Where
 * ymm is split in two (Zen 1) the loop measured slower than two pairs one
 * after the other, which run there instead (each pair of uBlock-128 keys
 * as two xmm schedules, below), and so do uBlock-256/256's keys
 * everywhere (the backend's own expand2): its two states' round keys (four
 * rows a round each) and constants spill out of 16 ymm registers, and the
 * model gave the loop no gain over the pairs (26.1 against 2 x 12.6).
 *
 * The loop is the nibble key setup's own (ublock_ks_step.h's steps,
 * ublock_expand_nib_w.h's body) over a vocabulary whose vector is two ymm
 * registers (v256x2: every operation on both), so those templates stay as
 * they are. A file of its own, linked after every other x86 object of the
 * library, so that adding it leaves the code of ublock_avx2.c and of every
 * file before it as it was, byte for byte and address for address: on
 * Zen 1 the short uBlock rows moved by 5-12% with the code's layout when
 * this loop sat in ublock_avx2.c (the twenty-ninth session,
 * docs/performance.md). Compiled with -mavx2.
 *
 * Where ymm is split, a pair of uBlock-128 keys runs here too, as two xmm
 * schedules side by side (ublock_avx2_expand2x, over v128x2): the
 * backend's expand2 calls it there, and expand4 for both pairs of
 * 128/256; four 128/128 keys run as four xmm schedules (v128x4).
 *
 * And one uBlock-128/256 key's setup with its round loop unrolled
 * (ublock_avx2_expand1_128_256, at the end), which ublock_avx2.c calls:
 * here so that the longer loop moves none of that file's code.
 */
#include "ublock.h"

#include "../cpu.h"
#include "../seam.h"
#include "../simd/avx2.h"
#include "../simd/sse.h"
/* The one-key setup's xmm loop (ublock_expand_nib.h's ub_expand_nib, used
 * by ublock_avx2_expand1_128_256 below) with the 24-round members' shorter
 * chain and its round loop unrolled; the several-key loops of this file
 * take neither (both measured slower there: ublock_avx2.c's comment, and
 * four 128/256 keys unrolled 216 -> 227, docs/performance.md) */
#define UB_KS_SHORT_KX
#define UB_KS_UNROLL
#include "ublock_expand_nib.h" /* ublock_ks.h, UB_YPUT */
#undef UB_KS_SHORT_KX
#undef UB_KS_UNROLL

/* Two registers of vocabulary B (v256 or v128) as one vector P: the ops
 * the key schedule and its stores use (src/simd/vocab.h's names), each on
 * both. row16: a 16-byte row in every lane of both, one load. */
#define KS_PAIR_INLINE static inline __attribute__((always_inline))
#define KS_PAIR_OP2(P, B, op)                                                                      \
    KS_PAIR_INLINE P P##_##op(P x, P y)                                                            \
    {                                                                                              \
        return (P){B##_##op(x.a, y.a), B##_##op(x.b, y.b)};                                        \
    }
#define KS_PAIR_VOCAB(P, B, T, ROW16)                                                              \
    typedef struct P {                                                                             \
        T a, b;                                                                                    \
    } P;                                                                                           \
    KS_PAIR_OP2(P, B, xor)                                                                         \
    KS_PAIR_OP2(P, B, or)                                                                          \
    KS_PAIR_OP2(P, B, shuf8)                                                                       \
    KS_PAIR_OP2(P, B, shuf8z)                                                                      \
    KS_PAIR_OP2(P, B, blend64)                                                                     \
    KS_PAIR_INLINE P P##_sel8(P m, P x, P y)                                                       \
    {                                                                                              \
        return (P){B##_sel8(m.a, x.a, y.a), B##_sel8(m.b, x.b, y.b)};                              \
    }                                                                                              \
    KS_PAIR_INLINE P P##_xor3(P x, P y, P z)                                                       \
    {                                                                                              \
        return (P){B##_xor3(x.a, y.a, z.a), B##_xor3(x.b, y.b, z.b)};                              \
    }                                                                                              \
    KS_PAIR_INLINE P P##_pin(P x)                                                                  \
    {                                                                                              \
        return (P){B##_pin(x.a), B##_pin(x.b)};                                                    \
    }                                                                                              \
    KS_PAIR_INLINE P P##_swap64(P x)                                                               \
    {                                                                                              \
        return (P){B##_swap64(x.a), B##_swap64(x.b)};                                              \
    }                                                                                              \
    KS_PAIR_INLINE P P##_sll64(P x, int n)                                                         \
    {                                                                                              \
        return (P){B##_sll64(x.a, n), B##_sll64(x.b, n)};                                          \
    }                                                                                              \
    KS_PAIR_INLINE P P##_zero(void)                                                                \
    {                                                                                              \
        return (P){B##_zero(), B##_zero()};                                                        \
    }                                                                                              \
    KS_PAIR_INLINE P P##_set1_8(int c)                                                             \
    {                                                                                              \
        return (P){B##_set1_8(c), B##_set1_8(c)};                                                  \
    }                                                                                              \
    KS_PAIR_INLINE P P##_row16(const uint8_t *p)                                                   \
    {                                                                                              \
        const T r = ROW16(p);                                                                      \
        return (P){r, r};                                                                          \
    }

KS_PAIR_VOCAB(v256x2, v256, __m256i, v256_row16)
#define v256x2_has_xor3 v256_has_xor3
/* two xmm schedules side by side (ub_expand_nib_x2) */
KS_PAIR_VOCAB(v128x2, v128, v128, v128_load)
#define v128x2_has_xor3 v128_has_xor3

/* keys 0, 1 in the first ymm state's lanes, 2, 3 in the second's */
UB_KS_STATE(ub_ksy2, v256x2);

/* y (a pair state) from the states p (its registers' .a) and q (.b) */
#define UB_KS_PAIR_INIT(y, P, p, q)                                                                \
    do {                                                                                           \
        (y)->k0 = (P){(p).k0, (q).k0};                                                             \
        (y)->k1 = (P){(p).k1, (q).k1};                                                             \
        (y)->k2 = (P){(p).k2, (q).k2};                                                             \
        (y)->k3 = (P){(p).k3, (q).k3};                                                             \
        (y)->kx = (P){(p).kx, (q).kx};                                                             \
        (y)->sbox = (P){(p).sbox, (q).sbox};                                                       \
        (y)->tk = (P){(p).tk, (q).tk};                                                             \
        (y)->pk0 = (P){(p).pk0, (q).pk0};                                                          \
        (y)->pk1 = (P){(p).pk1, (q).pk1};                                                          \
        (y)->lo80 = (P){(p).lo80, (q).lo80};                                                       \
        (y)->t = (p).t;                                                                            \
        (y)->rounds = (p).rounds;                                                                  \
    } while (0)

static inline __attribute__((always_inline)) void ub_ksy2_init(ub_ksy2 *y, kuai_cipher c,
                                                               const uint8_t *const key[4])
{
    ub_ksy p, q;
    ub_ksy_init(&p, c, key[0], key[1], 0);
    ub_ksy_init(&q, c, key[2], key[3], 0);
    UB_KS_PAIR_INIT(y, v256x2, p, q);
}

#define UBK_S ub_ksy2
#define UBK_T v256x2
#define UBK_OP(op) KUAI_V(v256x2, op)
#define UBK_ROW(t, r) v256x2_row16(ublock_ks_rc[t][r])
#define UBK_ROWF(t, r) v256x2_row16(ub_ks_rcf[t][r])
#define UBK_ROW128F(t, r) v256x2_row16(ub_ks_rc128f[t][r])
#define UBK_STEP ub_ksy2_step
#define UBK_STEPF ub_ksy2_stepf
#define UBK_FRAMES ub_ksy2_frames
#define UBK_STEP128F ub_ksy2_step128f
#define UBK_FRAMES128 ub_ksy2_frames128
#define UBK_FRAMES_ANY ub_ksy2_frames_any
#define UBK_STEP_ANY ub_ksy2_step_any
#include "ublock_ks_step.h"

/* s[2q + j]'s forms from lane j of state q */
#define UBE_FN ub_expand_nib_y2
#define UBE_KS128_FRAMES 1 /* see ublock_expand_nib_w.h */
#define UBE_STORE_NOW
#define UBE_S ub_ksy2
#define UBE_T v256x2
#define UBE_OP(op) KUAI_V(v256x2, op)
#define UBE_ROW(p) v256x2_row16(p)
#define UBE_N 4
#define UBE_PUT(p, off, x, y)                                                                      \
    do {                                                                                           \
        const v256x2 puts_x_ = (x), puts_y_ = (y);                                                 \
        UB_YPUT(p, off, puts_x_.a, puts_y_.a);                                                     \
        UB_YPUT((p) + 2, off, puts_x_.b, puts_y_.b);                                               \
    } while (0)
#include "ublock_expand_nib_w.h"

/*
 * Where ymm is split (Zen 1) a ymm pair of schedules costs what two xmm
 * schedules do, and its stores of lane 1 take an extract each: two xmm
 * schedules side by side instead (ub_ksx2: key 0 in .a, key 1 in .b), the
 * same steps and body. Zen 1, kuai_key_init_multi of 4 keys: see
 * docs/performance.md (thirty-second session).
 */
UB_KS_STATE(ub_ksx2, v128x2);

#define UBK_S ub_ksx2
#define UBK_T v128x2
#define UBK_OP(op) KUAI_V(v128x2, op)
#define UBK_ROW(t, r) v128x2_row16(ublock_ks_rc[t][r])
#define UBK_ROWF(t, r) v128x2_row16(ub_ks_rcf[t][r])
#define UBK_ROW128F(t, r) v128x2_row16(ub_ks_rc128f[t][r])
#define UBK_STEP ub_ksx2_step
#define UBK_STEPF ub_ksx2_stepf
#define UBK_FRAMES ub_ksx2_frames
#define UBK_STEP128F ub_ksx2_step128f
#define UBK_FRAMES128 ub_ksx2_frames128
#define UBK_FRAMES_ANY ub_ksx2_frames_any
#define UBK_STEP_ANY ub_ksx2_step_any
#include "ublock_ks_step.h"

/* s[j]'s forms from .a (j = 0) and .b (j = 1) */
#define UBE_FN ub_expand_nib_x2
#define UBE_KS128_FRAMES 1 /* see ublock_expand_nib_w.h */
#define UBE_STORE_NOW
#define UBE_S ub_ksx2
#define UBE_T v128x2
#define UBE_OP(op) KUAI_V(v128x2, op)
#define UBE_ROW(p) v128x2_row16(p)
#define UBE_N 2
#define UBX2_PUT(p, off, x, y)                                                                     \
    do {                                                                                           \
        const v128x2 putx_x_ = (x), putx_y_ = (y);                                                 \
        v128_storeu((p)[0] + (off), putx_x_.a);                                                    \
        v128_storeu((p)[0] + (off) + 16, putx_y_.a);                                               \
        v128_storeu((p)[1] + (off), putx_x_.b);                                                    \
        v128_storeu((p)[1] + (off) + 16, putx_y_.b);                                               \
    } while (0)
#define UBE_PUT UBX2_PUT
#include "ublock_expand_nib_w.h"

/*
 * Four uBlock-128/128 keys where ymm is split: four xmm schedules in one
 * loop (v128x4: two v128x2 pairs as one vector), so that four chains
 * overlap where two pairs one after the other leave each pair's chain
 * bounding it. kuai_key_init_multi of 4 keys 312 -> 261 TSC cycles (Zen 1,
 * one process with the two-pair build; a few state vectors spill). Not
 * 128/256: its four states (five vectors each) spill more, 385 -> 451.
 */
KS_PAIR_VOCAB(v128x4, v128x2, v128x2, v128x2_row16)
#define v128x4_has_xor3 v128_has_xor3
UB_KS_STATE(ub_ksx4, v128x4);

#define UBK_S ub_ksx4
#define UBK_T v128x4
#define UBK_OP(op) KUAI_V(v128x4, op)
#define UBK_ROW(t, r) v128x4_row16(ublock_ks_rc[t][r])
#define UBK_ROWF(t, r) v128x4_row16(ub_ks_rcf[t][r])
#define UBK_ROW128F(t, r) v128x4_row16(ub_ks_rc128f[t][r])
#define UBK_STEP ub_ksx4_step
#define UBK_STEPF ub_ksx4_stepf
#define UBK_FRAMES ub_ksx4_frames
#define UBK_STEP128F ub_ksx4_step128f
#define UBK_FRAMES128 ub_ksx4_frames128
#define UBK_FRAMES_ANY ub_ksx4_frames_any
#define UBK_STEP_ANY ub_ksx4_step_any
#include "ublock_ks_step.h"

#define UBE_FN ub_expand_nib_x4
#define UBE_KS128_FRAMES 1 /* see ublock_expand_nib_w.h */
#define UBE_STORE_NOW
#define UBE_S ub_ksx4
#define UBE_T v128x4
#define UBE_OP(op) KUAI_V(v128x4, op)
#define UBE_ROW(p) v128x4_row16(p)
#define UBE_N 4
#define UBE_PUT(p, off, x, y)                                                                      \
    do {                                                                                           \
        const v128x4 putq_x_ = (x), putq_y_ = (y);                                                 \
        UBX2_PUT(p, off, putq_x_.a, putq_y_.a);                                                    \
        UBX2_PUT((p) + 2, off, putq_x_.b, putq_y_.b);                                              \
    } while (0)
#include "ublock_expand_nib_w.h"

static inline __attribute__((always_inline)) void
expand_four_x(ublock_sched *const s[4], kuai_cipher c, const uint8_t *const key[4])
{
    ub_ks k[4];
    ub_ksx2 p, q;
    ub_ksx4 ks;
    for (int j = 0; j < 4; j++)
        ub_ks_init(&k[j], c, key[j]);
    UB_KS_PAIR_INIT(&p, v128x2, k[0], k[1]);
    UB_KS_PAIR_INIT(&q, v128x2, k[2], k[3]);
    UB_KS_PAIR_INIT(&ks, v128x4, p, q);
    ub_expand_nib_x4(s, &ks);
}

static inline __attribute__((always_inline)) void expand_pair_x(ublock_sched *s0, ublock_sched *s1,
                                                                kuai_cipher c, const uint8_t *key0,
                                                                const uint8_t *key1)
{
    ublock_sched *s[2] = {s0, s1};
    ub_ks p, q;
    ub_ksx2 ks;
    ub_ks_init(&p, c, key0);
    ub_ks_init(&q, c, key1);
    UB_KS_PAIR_INIT(&ks, v128x2, p, q);
    ub_expand_nib_x2(s, &ks);
}

/* Two uBlock-128 keys' setup on xmm (the backend's expand2 where ymm is
 * split; uBlock-256/256 stays on its ymm pair): one loop per member. The
 * caller marks the masks unbuilt. */
void ublock_avx2_expand2x(ublock_sched *s0, ublock_sched *s1, kuai_cipher c, const uint8_t *key0,
                          const uint8_t *key1)
{
    if (c == KUAI_UBLOCK_128_128)
        expand_pair_x(s0, s1, KUAI_UBLOCK_128_128, key0, key1);
    else
        expand_pair_x(s0, s1, KUAI_UBLOCK_128_256, key0, key1);
}

/* Four uBlock-128 keys' schedules, two per ymm (ublock.h) */
void ublock_avx2_expand4y(ublock_sched *const s[4], kuai_cipher c, const uint8_t *const key[4])
{
    ub_ksy2 ks;
    /* one loop per member: its rows and frames constants */
    if (c == KUAI_UBLOCK_128_128) {
        ub_ksy2_init(&ks, KUAI_UBLOCK_128_128, key);
        ub_expand_nib_y2(s, &ks);
    } else {
        ub_ksy2_init(&ks, KUAI_UBLOCK_128_256, key);
        ub_expand_nib_y2(s, &ks);
    }
}

void ublock_avx2_expand4(kuai_key *const k[4], const uint8_t *const key[4])
{
    const kuai_cipher c = (kuai_cipher)k[0]->priv_cipher;
    ublock_sched *s[4];
    for (int j = 0; j < 4; j++)
        s[j] = ublock_sched_of(k[j]);
    if (kuai_cpu_ymm_split() && c != KUAI_UBLOCK_256_256) {
        if (c == KUAI_UBLOCK_128_128) {
            expand_four_x(s, KUAI_UBLOCK_128_128, key);
        } else {
            /* 128/256's four states (five vectors each) spill: 385 -> 451 */
            ublock_avx2_expand2x(s[0], s[1], c, key[0], key[1]);
            ublock_avx2_expand2x(s[2], s[3], c, key[2], key[3]);
        }
        for (int j = 0; j < 4; j++)
            __atomic_store_n(&s[j]->masks, UBLOCK_MASKS_NONE, __ATOMIC_RELAXED);
        return;
    }
    if (kuai_cpu_ymm_split() || c == KUAI_UBLOCK_256_256) {
        const kuai_impl *impl = k[0]->priv_impl;
        impl->expand2(k[0], k[1], key[0], key[1]);
        impl->expand2(k[2], k[3], key[2], key[3]);
        return;
    }
    ublock_avx2_expand4y(s, c, key);
    for (int j = 0; j < 4; j++)
        __atomic_store_n(&s[j]->masks, UBLOCK_MASKS_NONE, __ATOMIC_RELAXED);
}

/* One uBlock-128/256 key's setup, the round loop unrolled (the rows'
 * addresses constants, no index arithmetic): key setup alone 0.87-0.89x
 * the TSC cycles, key setup + 4 blocks 0.88-0.99x (Zen 3, six places of
 * the library; level on a Zen 4: docs/performance.md, seventieth
 * session). Here and not in
 * ublock_avx2.c, whose code after the loop would move: unrolled there,
 * uBlock-256/256's key setup + 2 blocks, code the loop does not touch,
 * read 1.03-1.13x in every place tried. */
void ublock_avx2_expand1_128_256(ublock_sched *s, const uint8_t *key)
{
    ub_expand_nib(s, KUAI_UBLOCK_128_256, key);
}
