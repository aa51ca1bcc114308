/* SPDX-License-Identifier: Apache-2.0 */
/*
 * uBlock, AVX2 backend: four keys set up in one pass (kuai_key_init_multi,
 * the backend table's expand4). Where a core runs 256 bits at once, the
 * two ymm states of two pairs of keys (a key per lane) step in one loop:
 * each state's chain bounds its pair alone, and the second fills the ports
 * the first leaves idle (llvm-mca's Zen 3 model: 0.75-0.76 of two pairs one
 * after the other, uBlock-128/128 and 128/256; docs/performance.md). Where
 * ymm is split in two (Zen 1) the loop measured slower than the pairs,
 * which run there through the backend's own expand2, and so do
 * uBlock-256/256's keys everywhere: its two states' round keys (four
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
 */
#include "ublock.h"

#include "../cpu.h"
#include "../seam.h"
#include "../simd/avx2.h"
#include "../simd/sse.h"
#include "ublock_expand_nib.h" /* ublock_ks.h, UB_YPUT */

/* Two ymm registers as one vector: the ops the key schedule and its
 * stores use (src/simd/vocab.h's names), each on both. */
typedef struct v256x2 {
    __m256i a, b;
} v256x2;

#define Y2_INLINE static inline __attribute__((always_inline))
#define Y2_OP2(op)                                                                                 \
    Y2_INLINE v256x2 v256x2_##op(v256x2 x, v256x2 y)                                               \
    {                                                                                              \
        return (v256x2){v256_##op(x.a, y.a), v256_##op(x.b, y.b)};                                 \
    }
Y2_OP2(xor)
Y2_OP2(or)
Y2_OP2(shuf8)
Y2_OP2(shuf8z)
Y2_OP2(blend64)
Y2_INLINE v256x2 v256x2_xor3(v256x2 x, v256x2 y, v256x2 z)
{
    return (v256x2){v256_xor3(x.a, y.a, z.a), v256_xor3(x.b, y.b, z.b)};
}
Y2_INLINE v256x2 v256x2_swap64(v256x2 x)
{
    return (v256x2){v256_swap64(x.a), v256_swap64(x.b)};
}
Y2_INLINE v256x2 v256x2_sll64(v256x2 x, int n)
{
    return (v256x2){v256_sll64(x.a, n), v256_sll64(x.b, n)};
}
Y2_INLINE v256x2 v256x2_zero(void)
{
    return (v256x2){v256_zero(), v256_zero()};
}
Y2_INLINE v256x2 v256x2_set1_8(int c)
{
    return (v256x2){v256_set1_8(c), v256_set1_8(c)};
}
/* a 16-byte row in every lane of both: one load, one register */
Y2_INLINE v256x2 v256x2_row16(const uint8_t *p)
{
    const __m256i r = v256_row16(p);
    return (v256x2){r, r};
}
#define v256x2_has_xor3 v256_has_xor3

/* keys 0, 1 in the first ymm state's lanes, 2, 3 in the second's */
UB_KS_STATE(ub_ksy2, v256x2);

static inline __attribute__((always_inline)) void ub_ksy2_init(ub_ksy2 *y, kuai_cipher c,
                                                               const uint8_t *const key[4])
{
    ub_ksy p, q;
    ub_ksy_init(&p, c, key[0], key[1], 0);
    ub_ksy_init(&q, c, key[2], key[3], 0);
#define UB_KSY2(f) y->f = (v256x2){p.f, q.f}
    UB_KSY2(k0);
    UB_KSY2(k1);
    UB_KSY2(k2);
    UB_KSY2(k3);
    UB_KSY2(kx);
    UB_KSY2(sbox);
    UB_KSY2(tk);
    UB_KSY2(pk0);
    UB_KSY2(pk1);
    UB_KSY2(lo80);
#undef UB_KSY2
    y->t = p.t;
    y->rounds = p.rounds;
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

void ublock_avx2_expand4(kuai_key *const k[4], const uint8_t *const key[4])
{
    const kuai_cipher c = (kuai_cipher)k[0]->priv_cipher;
    if (kuai_cpu_ymm_split() || c == KUAI_UBLOCK_256_256) {
        const kuai_impl *impl = k[0]->priv_impl;
        impl->expand2(k[0], k[1], key[0], key[1]);
        impl->expand2(k[2], k[3], key[2], key[3]);
        return;
    }
    ublock_sched *s[4];
    for (int j = 0; j < 4; j++)
        s[j] = ublock_sched_of(k[j]);
    ub_ksy2 ks;
    /* one loop per member: its rows and frames constants */
    if (c == KUAI_UBLOCK_128_128) {
        ub_ksy2_init(&ks, KUAI_UBLOCK_128_128, key);
        ub_expand_nib_y2(s, &ks);
    } else {
        ub_ksy2_init(&ks, KUAI_UBLOCK_128_256, key);
        ub_expand_nib_y2(s, &ks);
    }
    for (int j = 0; j < 4; j++)
        __atomic_store_n(&s[j]->masks, UBLOCK_MASKS_NONE, __ATOMIC_RELAXED);
}
