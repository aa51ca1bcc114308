/* SPDX-License-Identifier: Apache-2.0 */
/*
 * AES, bitsliced over a small vector vocabulary, with no AES instruction:
 * the cipher written once; each ISA file (aes_ssse3.c, aes_avx2.c,
 * aes_neon.c, aes_lsx.c) defines the vocabulary below, or takes it from
 * src/simd/ with AES_V_ISA, and includes this header.
 *
 * Vocabulary (aes_v is a vector of AES_V_BYTES = 16 k bytes, k >= 1; byte
 * shuffles stay within each 16-byte lane):
 *   aes_v v_loadu(const void *p);            void v_storeu(void *p, aes_v x);
 *   aes_v v_xor(aes_v a, aes_v b);           aes_v v_and(aes_v a, aes_v b);
 *   aes_v v_bcast8(uint8_t c);               every byte c
 *   aes_v v_lane16(const uint8_t t[16]);     t in every 16-byte lane
 *   aes_v v_shuf(aes_v x, aes_v idx);        per lane: byte i = x[idx[i]]
 *   v_srl64(x, n), v_sll64(x, n)             64-bit element shifts (macros:
 *                                            n is an immediate on x86)
 * (x86: pshufb; ARM NEON: tbl; LoongArch LSX: vshuf.b.)
 *
 * Constant time: the S-box is the 113-gate Boyar-Peralta circuit (see
 * aes_ref.c), everything else fixed shuffles and XORs; no branch or memory
 * index depends on key or data.
 *
 * ---- Layout (Kasper and Schwabe, "Faster and timing-attack resistant
 * AES-GCM", CHES 2009, with AES_BS_BLOCKS = 8 k blocks) --------------------
 *
 * A pass loads 8 vectors of k consecutive blocks each: vector i, lane l is
 * block k i + l. An 8x8 bit transposition within every byte position
 * (swapmove network) then makes vector b the plane of bit b: byte j of lane
 * l holds bit b of state byte j (j = 4 column + row, FIPS-197 3.4) of the
 * eight blocks k i + l, i = bit index. ShiftRows and the row rotations of
 * MixColumns are then one byte shuffle per plane.
 *
 * ---- Constants folded into the round keys ----------------------------------
 *
 * The circuit's four output NOTs add 0x63 to every byte. ShiftRows,
 * MixColumns and InvMixColumns map a state of equal bytes c to itself
 * (2+3+1+1 = 14+11+13+9 = 1 in GF(2^8)), so the constant rides through to
 * the next AddRoundKey, and the stored keys K[r] = rk[r] + 0x63 (r >= 1),
 * K[0] = rk[0] cancel it. With S' = S + 0x63 (the circuit without NOTs),
 * S^-1(y) = A^-1 S'(A^-1 (y + 0x63)), A^-1 being the linear part of the
 * inverse affine map; decryption adds the 0x63 through the same K[r]
 * (each K[r], r >= 1, precedes an InvSubBytes through only InvMixColumns
 * and InvShiftRows). So one stored key set serves both directions, and no
 * round spends a gate on constants.
 */
#ifndef KUAI_AES_BS_H
#define KUAI_AES_BS_H

#include "../bytes.h"
#include "aes.h"

#include <string.h>

/* A backend over src/simd/ names its vector type (AES_V_ISA: v128, v256)
 * after including the ISA's header; the vocabulary is then that header's. */
#ifdef AES_V_ISA
typedef AES_V_ISA aes_v;
/* Functions rather than aliases, as the ISA files had them: the compiler's
 * inlining of the kernels, and so their code, stays as it was measured. */
static inline aes_v v_loadu(const void *p)
{
    return KUAI_V(AES_V_ISA, loadu)(p);
}
static inline void v_storeu(void *p, aes_v x)
{
    KUAI_V(AES_V_ISA, storeu)(p, x);
}
static inline aes_v v_xor(aes_v a, aes_v b)
{
    return KUAI_V(AES_V_ISA, xor)(a, b);
}
static inline aes_v v_and(aes_v a, aes_v b)
{
    return KUAI_V(AES_V_ISA, and)(a, b);
}
static inline aes_v v_bcast8(uint8_t c)
{
    return KUAI_V(AES_V_ISA, set1_8)(c);
}
static inline aes_v v_lane16(const uint8_t t[16])
{
    return KUAI_V(AES_V_ISA, row16)(t);
}
static inline aes_v v_shuf(aes_v x, aes_v idx)
{
    return KUAI_V(AES_V_ISA, shuf8)(x, idx);
}
#define v_srl64 KUAI_V(AES_V_ISA, srl64)
#define v_sll64 KUAI_V(AES_V_ISA, sll64)
#endif

#if defined(__GNUC__)
#define AES_BS_INLINE __attribute__((always_inline)) inline
#else
#define AES_BS_INLINE inline
#endif

#define AES_BS_BLOCKS (8 * AES_V_BYTES / 16)
#define AES_BS_BYTES (16 * AES_BS_BLOCKS)
/* Bytes from one stored key plane to the next: a plane is a vector, unless
 * the including file says otherwise (a kernel of half a backend's width
 * reading that backend's keys, the low lane of each plane: AES_BS_NARROW
 * below). */
#ifndef AES_BS_KEY_STRIDE
#define AES_BS_KEY_STRIDE AES_V_BYTES
#endif
/* Bitsliced round keys: (nr + 1) x 8 planes. */
#define AES_BS_KEY_BYTES ((AES_MAX_ROUNDS + 1) * 8 * AES_BS_KEY_STRIDE)
/* Both sets, encryption's then decryption's (their layouts differ, see
 * below). */
#define AES_BS_KEYS_BYTES (2 * AES_BS_KEY_BYTES)

/* ---- shuffles (16-byte rows, j = 4 c + r) ---------------------------------- */

/* MixColumns's row rotations: rot1[4c + r] = 4c + (r + 1) mod 4, rot2 the
 * same with r + 2 (out[j] = in[rot[j]]). */

/*
 * Encryption skips ShiftRows: it is a byte permutation, so the state is
 * left where it is and the layout renamed instead. After r rounds logical
 * byte j sits at position P_r(j), P_0(j) = j, P_r(j) = P_(r-1)(sr[j]) with
 * ShiftRows out[j] = in[sr[j]] (sr = layout row 1 below), so P_r = sr
 * applied r times (order 4). MixColumns's rotations in layout P:
 * idx[P(j)] = P(rot[j]); the round keys are stored in their round's layout
 * (key byte j at P_r(j)) and one shuffle, out[j] = x[P_nr(j)], restores
 * layout 0 at the end (none for AES-192: 12 rounds). 8 shuffles a round
 * fewer than applying ShiftRows. Rows generated by the rules above.
 * Decryption skips InvShiftRows alike: its layouts are isr^k = sr^(4-k),
 * the same four; the key of round r (applied after nr - r skipped
 * InvShiftRows) sits in layout (r - nr) mod 4.
 */
static const uint8_t aes_bs_layout[4][16] = {
    {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15},
    {0, 5, 10, 15, 4, 9, 14, 3, 8, 13, 2, 7, 12, 1, 6, 11},
    {0, 9, 2, 11, 4, 13, 6, 15, 8, 1, 10, 3, 12, 5, 14, 7},
    {0, 13, 10, 7, 4, 1, 14, 11, 8, 5, 2, 15, 12, 9, 6, 3}};
/* [layout][rot1, rot2] */
static const uint8_t aes_bs_mc_rot[4][2][16] = {
    {{1, 2, 3, 0, 5, 6, 7, 4, 9, 10, 11, 8, 13, 14, 15, 12},
     {2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13}},
    {{5, 6, 7, 4, 9, 10, 11, 8, 13, 14, 15, 12, 1, 2, 3, 0},
     {10, 11, 8, 9, 14, 15, 12, 13, 2, 3, 0, 1, 6, 7, 4, 5}},
    {{9, 10, 11, 8, 13, 14, 15, 12, 1, 2, 3, 0, 5, 6, 7, 4},
     {2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13}},
    {{13, 14, 15, 12, 1, 2, 3, 0, 5, 6, 7, 4, 9, 10, 11, 8},
     {10, 11, 8, 9, 14, 15, 12, 13, 2, 3, 0, 1, 6, 7, 4, 5}}};

/* ---- bit transposition ------------------------------------------------------- */

#define AES_BS_SWAPMOVE(a, b, n, m)                                                                \
    do {                                                                                           \
        aes_v t_ = v_and(v_xor(v_srl64(a, n), b), m);                                              \
        b = v_xor(b, t_);                                                                          \
        a = v_xor(a, v_sll64(t_, n));                                                              \
    } while (0)

/* 8x8 bit transposition in every byte position: bit b of byte j of x[i]
 * goes to bit i of byte j of x[b]. An involution. */
static AES_BS_INLINE void aes_bs_transpose(aes_v x[8])
{
    aes_v m1 = v_bcast8(0x55), m2 = v_bcast8(0x33), m4 = v_bcast8(0x0f);
    AES_BS_SWAPMOVE(x[0], x[1], 1, m1);
    AES_BS_SWAPMOVE(x[2], x[3], 1, m1);
    AES_BS_SWAPMOVE(x[4], x[5], 1, m1);
    AES_BS_SWAPMOVE(x[6], x[7], 1, m1);
    AES_BS_SWAPMOVE(x[0], x[2], 2, m2);
    AES_BS_SWAPMOVE(x[1], x[3], 2, m2);
    AES_BS_SWAPMOVE(x[4], x[6], 2, m2);
    AES_BS_SWAPMOVE(x[5], x[7], 2, m2);
    AES_BS_SWAPMOVE(x[0], x[4], 4, m4);
    AES_BS_SWAPMOVE(x[1], x[5], 4, m4);
    AES_BS_SWAPMOVE(x[2], x[6], 4, m4);
    AES_BS_SWAPMOVE(x[3], x[7], 4, m4);
}

/* ---- S-box ---------------------------------------------------------------------- */

/* S' = S + 0x63 on the planes (x[7] most significant): the Boyar-Peralta
 * gate list (J. Boyar, R. Peralta, "A depth-16 circuit for the AES S-box",
 * SEC 2012) without its four output NOTs. */
static AES_BS_INLINE void aes_bs_sbox(aes_v x[8])
{
#define X_(a, b) v_xor(a, b)
#define A_(a, b) v_and(a, b)
    aes_v u0 = x[7], u1 = x[6], u2 = x[5], u3 = x[4], u4 = x[3], u5 = x[2], u6 = x[1], u7 = x[0];
    aes_v t1 = X_(u0, u3), t2 = X_(u0, u5), t3 = X_(u0, u6), t4 = X_(u3, u5), t5 = X_(u4, u6);
    aes_v t6 = X_(t1, t5), t7 = X_(u1, u2), t8 = X_(u7, t6), t9 = X_(u7, t7), t10 = X_(t6, t7);
    aes_v t11 = X_(u1, u5), t12 = X_(u2, u5), t13 = X_(t3, t4), t14 = X_(t6, t11);
    aes_v t15 = X_(t5, t11), t16 = X_(t5, t12), t17 = X_(t9, t16), t18 = X_(u3, u7);
    aes_v t19 = X_(t7, t18), t20 = X_(t1, t19), t21 = X_(u6, u7), t22 = X_(t7, t21);
    aes_v t23 = X_(t2, t22), t24 = X_(t2, t10), t25 = X_(t20, t17), t26 = X_(t3, t16);
    aes_v t27 = X_(t1, t12);

    aes_v m1 = A_(t13, t6), m2 = A_(t23, t8), m3 = X_(t14, m1), m4 = A_(t19, u7);
    aes_v m5 = X_(m4, m1), m6 = A_(t3, t16), m7 = A_(t22, t9), m8 = X_(t26, m6);
    aes_v m9 = A_(t20, t17), m10 = X_(m9, m6), m11 = A_(t1, t15), m12 = A_(t4, t27);
    aes_v m13 = X_(m12, m11), m14 = A_(t2, t10), m15 = X_(m14, m11), m16 = X_(m3, m2);
    aes_v m17 = X_(m5, t24), m18 = X_(m8, m7), m19 = X_(m10, m15), m20 = X_(m16, m13);
    aes_v m21 = X_(m17, m15), m22 = X_(m18, m13), m23 = X_(m19, t25), m24 = X_(m22, m23);
    aes_v m25 = A_(m22, m20), m26 = X_(m21, m25), m27 = X_(m20, m21), m28 = X_(m23, m25);
    aes_v m29 = A_(m28, m27), m30 = A_(m26, m24), m31 = A_(m20, m23), m32 = A_(m27, m31);
    aes_v m33 = X_(m27, m25), m34 = A_(m21, m22), m35 = A_(m24, m34), m36 = X_(m24, m25);
    aes_v m37 = X_(m21, m29), m38 = X_(m32, m33), m39 = X_(m23, m30), m40 = X_(m35, m36);
    aes_v m41 = X_(m38, m40), m42 = X_(m37, m39), m43 = X_(m37, m38), m44 = X_(m39, m40);
    aes_v m45 = X_(m42, m41), m46 = A_(m44, t6), m47 = A_(m40, t8), m48 = A_(m39, u7);
    aes_v m49 = A_(m43, t16), m50 = A_(m38, t9), m51 = A_(m37, t17), m52 = A_(m42, t15);
    aes_v m53 = A_(m45, t27), m54 = A_(m41, t10), m55 = A_(m44, t13), m56 = A_(m40, t23);
    aes_v m57 = A_(m39, t19), m58 = A_(m43, t3), m59 = A_(m38, t22), m60 = A_(m37, t20);
    aes_v m61 = A_(m42, t1), m62 = A_(m45, t4), m63 = A_(m41, t2);

    aes_v l0 = X_(m61, m62), l1 = X_(m50, m56), l2 = X_(m46, m48), l3 = X_(m47, m55);
    aes_v l4 = X_(m54, m58), l5 = X_(m49, m61), l6 = X_(m62, l5), l7 = X_(m46, l3);
    aes_v l8 = X_(m51, m59), l9 = X_(m52, m53), l10 = X_(m53, l4), l11 = X_(m60, l2);
    aes_v l12 = X_(m48, m51), l13 = X_(m50, l0), l14 = X_(m52, m61), l15 = X_(m55, l1);
    aes_v l16 = X_(m56, l0), l17 = X_(m57, l1), l18 = X_(m58, l8), l19 = X_(m63, l4);
    aes_v l20 = X_(l0, l1), l21 = X_(l1, l7), l22 = X_(l3, l12), l23 = X_(l18, l2);
    aes_v l24 = X_(l15, l9), l25 = X_(l6, l10), l26 = X_(l7, l9), l27 = X_(l8, l10);
    aes_v l28 = X_(l11, l14), l29 = X_(l11, l17);

    x[7] = X_(l6, l24);
    x[6] = X_(l16, l26); /* NOT dropped */
    x[5] = X_(l19, l28); /* NOT dropped */
    x[4] = X_(l6, l21);
    x[3] = X_(l20, l22);
    x[2] = X_(l25, l29);
    x[1] = X_(l13, l27); /* NOT dropped */
    x[0] = X_(l6, l23);  /* NOT dropped */
#undef X_
#undef A_
}

/* A^-1, the linear part of the inverse affine map: bit i of the result is
 * y(i+2) + y(i+5) + y(i+7), indices mod 8 (FIPS-197 5.3.2). */
static AES_BS_INLINE void aes_bs_affine_inv(aes_v x[8])
{
    aes_v t[8];
#pragma GCC unroll 8
    for (unsigned i = 0; i < 8; i++)
        t[i] = v_xor(v_xor(x[(i + 2) & 7], x[(i + 5) & 7]), x[(i + 7) & 7]);
    memcpy(x, t, sizeof t);
}

/* ---- rounds ------------------------------------------------------------------------- */

static AES_BS_INLINE void aes_bs_xtime(aes_v r[8], const aes_v a[8])
{
    r[0] = a[7];
    r[1] = v_xor(a[0], a[7]);
    r[2] = a[1];
    r[3] = v_xor(a[2], a[7]);
    r[4] = v_xor(a[3], a[7]);
    r[5] = a[4];
    r[6] = a[5];
    r[7] = a[6];
}

static AES_BS_INLINE void aes_bs_ark(aes_v x[8], const unsigned char *k)
{
#pragma GCC unroll 8
    for (unsigned b = 0; b < 8; b++)
        x[b] = v_xor(x[b], v_loadu(k + AES_BS_KEY_STRIDE * b));
}

/* MixColumns in layout l: d = rot1(x), out = 2 (x + d) + d + rot2(x + d). */
static AES_BS_INLINE void aes_bs_mc_layout(aes_v x[8], unsigned l)
{
    aes_v r1 = v_lane16(aes_bs_mc_rot[l][0]), r2 = v_lane16(aes_bs_mc_rot[l][1]);
    aes_v t[8], d[8], x2[8];
#pragma GCC unroll 8
    for (unsigned b = 0; b < 8; b++) {
        d[b] = v_shuf(x[b], r1);
        t[b] = v_xor(x[b], d[b]);
    }
    aes_bs_xtime(x2, t);
#pragma GCC unroll 8
    for (unsigned b = 0; b < 8; b++)
        x[b] = v_xor(v_xor(x2[b], d[b]), v_shuf(t[b], r2));
}

static AES_BS_INLINE void aes_bs_shuf_all(aes_v x[8], const uint8_t idx16[16])
{
    aes_v idx = v_lane16(idx16);
#pragma GCC unroll 8
    for (unsigned b = 0; b < 8; b++)
        x[b] = v_shuf(x[b], idx);
}

/* InvMixColumns = MixColumns after a_r += 4 (a_r + a_(r+2)). */
static AES_BS_INLINE void aes_bs_inv_mc(aes_v x[8], unsigned l)
{
    aes_v r1 = v_lane16(aes_bs_mc_rot[l][0]), r2 = v_lane16(aes_bs_mc_rot[l][1]);
    aes_v w[8], w2[8], w4[8], t[8], d[8];
#pragma GCC unroll 8
    for (unsigned b = 0; b < 8; b++)
        w[b] = v_xor(x[b], v_shuf(x[b], r2));
    aes_bs_xtime(w2, w);
    aes_bs_xtime(w4, w2);
#pragma GCC unroll 8
    for (unsigned b = 0; b < 8; b++) {
        x[b] = v_xor(x[b], w4[b]);
        d[b] = v_shuf(x[b], r1);
        t[b] = v_xor(x[b], d[b]);
    }
    aes_bs_xtime(w2, t);
#pragma GCC unroll 8
    for (unsigned b = 0; b < 8; b++)
        x[b] = v_xor(v_xor(w2[b], d[b]), v_shuf(t[b], r2));
}

/* The rounds on a transposed state: K[0..nr] added, layout 0 restored. */
static AES_BS_INLINE void aes_bs_encrypt_sliced(aes_v x[8], const unsigned char *kb, unsigned nr)
{
    aes_bs_ark(x, kb);
    for (unsigned r = 1; r < nr; r++) {
        aes_bs_sbox(x);
        aes_bs_mc_layout(x, r & 3);
        aes_bs_ark(x, kb + 8 * AES_BS_KEY_STRIDE * r);
    }
    aes_bs_sbox(x);
    aes_bs_ark(x, kb + 8 * AES_BS_KEY_STRIDE * nr);
    if (nr & 3)
        aes_bs_shuf_all(x, aes_bs_layout[nr & 3]);
}

/* One pass of AES_BS_BLOCKS blocks: in, out are AES_BS_BYTES bytes (may
 * alias); kb the stored keys K[0..nr]. With mask non-NULL (CTR: in holds
 * counter blocks), out = E(in) + mask. */
static AES_BS_INLINE void aes_bs_encrypt_pass_xor(const unsigned char *kb, unsigned nr,
                                                  const uint8_t *in, uint8_t *out,
                                                  const uint8_t *mask)
{
    aes_v x[8];
#pragma GCC unroll 8
    for (unsigned i = 0; i < 8; i++)
        x[i] = v_loadu(in + AES_V_BYTES * i);
    aes_bs_transpose(x);
    aes_bs_encrypt_sliced(x, kb, nr);
    aes_bs_transpose(x);
#pragma GCC unroll 8
    for (unsigned i = 0; i < 8; i++)
        v_storeu(out + AES_V_BYTES * i, mask ? v_xor(x[i], v_loadu(mask + AES_V_BYTES * i)) : x[i]);
}

static AES_BS_INLINE void aes_bs_encrypt_pass(const unsigned char *kb, unsigned nr,
                                              const uint8_t *in, uint8_t *out)
{
    aes_bs_encrypt_pass_xor(kb, nr, in, out, NULL);
}

static AES_BS_INLINE void aes_bs_decrypt_pass(const unsigned char *kb, unsigned nr,
                                              const uint8_t *in, uint8_t *out)
{
    aes_v x[8];
#pragma GCC unroll 8
    for (unsigned i = 0; i < 8; i++)
        x[i] = v_loadu(in + AES_V_BYTES * i);
    aes_bs_transpose(x);
    aes_bs_ark(x, kb + 8 * AES_BS_KEY_STRIDE * nr);
    for (unsigned r = nr; r-- > 0;) {
        aes_bs_affine_inv(x);
        aes_bs_sbox(x);
        aes_bs_affine_inv(x);
        aes_bs_ark(x, kb + 8 * AES_BS_KEY_STRIDE * r);
        if (r)
            aes_bs_inv_mc(x, (r - nr) & 3);
    }
    if (nr & 3)
        aes_bs_shuf_all(x, aes_bs_layout[(0u - nr) & 3]);
    aes_bs_transpose(x);
#pragma GCC unroll 8
    for (unsigned i = 0; i < 8; i++)
        v_storeu(out + AES_V_BYTES * i, x[i]);
}

/* ---- keys ---------------------------------------------------------------------------- */

/* kb <- K[0..nr] (see "Constants folded"), block n of a pass under
 * s[n < ns ? n : 0]: one schedule for every block, or one per lane; each
 * round's key in the layout its round has in encryption or (dec)
 * decryption. */
static void aes_bs_keys(unsigned char *kb, const aes_sched *const *s, size_t ns, int dec)
{
    uint8_t blk[AES_BS_BYTES], one[16];
    aes_v x[8];
    unsigned nr = s[0]->nr;
    for (unsigned r = 0; r <= nr; r++) {
        const aes_sched *placed = NULL;
        for (size_t n = 0; n < AES_BS_BLOCKS; n++) {
            const aes_sched *sn = s[n < ns ? n : 0];
            /* lanes under the key just placed (a single key: all of them)
             * copy it rather than place its 16 bytes again */
            if (sn != placed) {
                for (unsigned j = 0; j < 16; j++)
                    one[aes_bs_layout[(dec ? r - nr : r) & 3][j]] =
                        (uint8_t)(sn->rk[r][j] ^ (r > 0 ? 0x63 : 0));
                placed = sn;
            }
            memcpy(blk + 16 * n, one, 16);
        }
        for (unsigned i = 0; i < 8; i++)
            x[i] = v_loadu(blk + AES_V_BYTES * i);
        aes_bs_transpose(x);
        for (unsigned b = 0; b < 8; b++)
            v_storeu(kb + AES_BS_KEY_STRIDE * (8 * r + b), x[b]);
    }
    kuai_wipe(x, sizeof x);
    kuai_wipe(one, sizeof one);
    kuai_wipe(blk, sizeof blk);
}

/* n (1..AES_BS_BLOCKS) blocks through a padded pass on a local block; kb
 * the key set of the direction. */
static inline void aes_bs_part(const unsigned char *kb, unsigned nr, const uint8_t *in,
                               uint8_t *out, size_t n, int dec)
{
    uint8_t blk[AES_BS_BYTES] = {0};
    memcpy(blk, in, 16 * n);
    if (dec)
        aes_bs_decrypt_pass(kb, nr, blk, blk);
    else
        aes_bs_encrypt_pass(kb, nr, blk, blk);
    memcpy(out, blk, 16 * n);
    kuai_wipe(blk, sizeof blk);
}

/* CTR's part pass (always inlined, as when aes_bs_ctr held it: x86's
 * objects unchanged): out = in + E(cb) for n (1..AES_BS_BLOCKS) blocks, cb a
 * whole pass of counter blocks, in and out through a local block. */
static AES_BS_INLINE void aes_bs_ctr_part(const unsigned char *kb, unsigned nr, const uint8_t *cb,
                                          const uint8_t *in, uint8_t *out, size_t n)
{
    uint8_t blk[AES_BS_BYTES] = {0};
    memcpy(blk, in, 16 * n);
    aes_bs_encrypt_pass_xor(kb, nr, cb, blk, blk);
    memcpy(out, blk, 16 * n);
    kuai_wipe(blk, sizeof blk);
}

/*
 * AES_BS_NARROW(kb, nr, in, out, n, dec), if the including file defines
 * it: the same as aes_bs_part for n <= AES_BS_BLOCKS / 2, by a kernel of
 * half the width that reads these keys (AES_BS_KEY_STRIDE there), so that
 * a call's few blocks, or its tail, do not pay a whole wide pass (LASX's
 * 16-block pass padding a 3-block GCM batch cost more than LSX's 8-block
 * one: aes_lasx.c). AES_BS_NARROW_CTR(kb, nr, cb, in, out, n) likewise for
 * CTR's last pass: out = in + E(cb), cb the counter blocks. One key's
 * schedules only (one_key): the narrow kernel reads each plane's low lane,
 * which holds the keys of the wide pass's even blocks, all the same key
 * only when there is one.
 */
static inline void aes_bs_tail(const unsigned char *kb, unsigned nr, const uint8_t *in,
                               uint8_t *out, size_t n, int dec, int one_key)
{
    (void)one_key;
#ifdef AES_BS_NARROW
    if (one_key && n <= AES_BS_BLOCKS / 2) {
        AES_BS_NARROW(kb, nr, in, out, n, dec);
        return;
    }
#endif
    aes_bs_part(kb, nr, in, out, n, dec);
}

/* Whole passes straight from in to out; the tail through aes_bs_tail. kb
 * holds both key sets (AES_BS_KEYS_BYTES); one_key: one key's (not a
 * multi-key batch's). */
static void aes_bs_crypt(const unsigned char *kb, unsigned nr, const uint8_t *in, uint8_t *out,
                         size_t nblocks, int dec, int one_key)
{
    if (dec)
        kb += AES_BS_KEY_BYTES;
    for (; nblocks >= AES_BS_BLOCKS; nblocks -= AES_BS_BLOCKS) {
        if (dec)
            aes_bs_decrypt_pass(kb, nr, in, out);
        else
            aes_bs_encrypt_pass(kb, nr, in, out);
        in += AES_BS_BYTES;
        out += AES_BS_BYTES;
    }
    if (nblocks)
        aes_bs_tail(kb, nr, in, out, nblocks, dec, one_key);
}

/* store_be64 as one byte-swapped store: gcc 12 turns the byte-wise one into
 * a vpinsrb per byte here, which cost CTR a sixth of its speed. */
static inline void aes_bs_store_be64(uint8_t *p, uint64_t v)
{
#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    v = __builtin_bswap64(v);
    memcpy(p, &v, 8);
#else
    store_be64(p, v);
#endif
}

/* AES_BS_BLOCKS counter blocks from (hi, lo), which advance past them. The
 * counter is public, so the carry may branch. */
static inline void aes_bs_ctr_fill(uint8_t *cb, uint64_t *hi, uint64_t *lo)
{
    for (size_t b = 0; b < AES_BS_BLOCKS; b++) {
        aes_bs_store_be64(cb + 16 * b, *hi);
        aes_bs_store_be64(cb + 16 * b + 8, *lo);
        *hi += ++*lo == 0;
    }
}

/* CTR: the keystream is added to in, in registers. The counter blocks of
 * the next pass are stored before this pass runs: loading a vector just
 * written by two 8-byte stores would miss store forwarding and stall. */
static void aes_bs_ctr(const unsigned char *kb, unsigned nr, uint8_t *ctr, const uint8_t *in,
                       uint8_t *out, size_t nblocks)
{
    uint8_t cb[2][AES_BS_BYTES];
    uint64_t hi = load_be64(ctr), lo = load_be64(ctr + 8);
    uint64_t end_lo = lo + nblocks, end_hi = hi + (end_lo < lo);
    unsigned cur = 0;
    aes_bs_ctr_fill(cb[0], &hi, &lo);
    while (nblocks) {
        size_t n = nblocks < AES_BS_BLOCKS ? nblocks : AES_BS_BLOCKS;
        if (nblocks > AES_BS_BLOCKS)
            aes_bs_ctr_fill(cb[cur ^ 1], &hi, &lo);
        if (n == AES_BS_BLOCKS) {
            aes_bs_encrypt_pass_xor(kb, nr, cb[cur], out, in);
#ifdef AES_BS_NARROW_CTR
        } else if (n <= AES_BS_BLOCKS / 2) {
            AES_BS_NARROW_CTR(kb, nr, cb[cur], in, out, n);
#endif
        } else {
            aes_bs_ctr_part(kb, nr, cb[cur], in, out, n);
        }
        cur ^= 1;
        in += 16 * n;
        out += 16 * n;
        nblocks -= n;
    }
    store_be64(ctr, end_hi);
    store_be64(ctr + 8, end_lo);
}

/* ---- backend functions ----------------------------------------------------------------- */

_Static_assert(AES_BS_KEYS_BYTES <= sizeof(((aes_sched *)0)->ext), "bitsliced keys fit in ext");

static void aes_bs_expand(kuai_key *k, const uint8_t *key)
{
    aes_sched *s = aes_sched_of(k);
    const aes_sched *one = s;
    aes_expand_raw(s, key, aes_key_bytes(k));
    aes_bs_keys(s->ext, &one, 1, 0);
    aes_bs_keys(s->ext + AES_BS_KEY_BYTES, &one, 1, 1);
}

static void aes_bs_enc_blocks(const kuai_key *k, const uint8_t *in, uint8_t *out, size_t nblocks)
{
    const aes_sched *s = aes_sched_const(k);
    aes_bs_crypt(s->ext, s->nr, in, out, nblocks, 0, 1);
}

static void aes_bs_dec_blocks(const kuai_key *k, const uint8_t *in, uint8_t *out, size_t nblocks)
{
    const aes_sched *s = aes_sched_const(k);
    aes_bs_crypt(s->ext, s->nr, in, out, nblocks, 1, 1);
}

static void aes_bs_ctr_blocks(const kuai_key *k, uint8_t *ctr, const uint8_t *in, uint8_t *out,
                              size_t nblocks)
{
    const aes_sched *s = aes_sched_const(k);
    aes_bs_ctr(s->ext, s->nr, ctr, in, out, nblocks);
}

/* Multi-key: kuai_mk holds nr (in a 64-byte header, so the keys stay
 * aligned) and the lane keys; all keys are of one cipher (multi.c checks), so one nr. */
#define AES_BS_MK_HDR 64
_Static_assert(AES_BS_MK_HDR + AES_BS_KEYS_BYTES <= KUAI_MK_BYTES, "lane keys fit in kuai_mk");

static void aes_bs_mk_setup(kuai_mk *m, const kuai_key *const *keys, size_t n)
{
    const aes_sched *s[AES_BS_BLOCKS];
    for (size_t i = 0; i < AES_BS_BLOCKS; i++)
        s[i] = aes_sched_const(keys[i < n ? i : 0]);
    uint32_t nr = s[0]->nr;
    memcpy(m->b, &nr, sizeof nr);
    aes_bs_keys(m->b + AES_BS_MK_HDR, s, AES_BS_BLOCKS, 0);
    aes_bs_keys(m->b + AES_BS_MK_HDR + AES_BS_KEY_BYTES, s, AES_BS_BLOCKS, 1);
}

static void aes_bs_mk_enc(const kuai_mk *m, const uint8_t *in, uint8_t *out, size_t n)
{
    uint32_t nr;
    memcpy(&nr, m->b, sizeof nr);
    aes_bs_crypt(m->b + AES_BS_MK_HDR, nr, in, out, n, 0, 0);
}

static void aes_bs_mk_dec(const kuai_mk *m, const uint8_t *in, uint8_t *out, size_t n)
{
    uint32_t nr;
    memcpy(&nr, m->b, sizeof nr);
    aes_bs_crypt(m->b + AES_BS_MK_HDR, nr, in, out, n, 1, 0);
}

/* Multi-key CBC encryption (kuai_impl.mk_cbc_enc): the n chains stay in
 * registers, in the transposed form (the transposition is linear and its
 * own inverse, so the next plaintext is added after its transposition and
 * the state after the last round is the next chain). Through mk_enc, each
 * block went through the mode code's buffer, an indirect call and, under
 * a full pass, aes_bs_crypt's tail copy and wipe; on Zen 1 that loop ran
 * 5-10% slower or faster with the placement of code it never executes
 * (17 KB more AES-NI code in another object cost 4%). Lanes past n run on
 * zeros and are not stored. */
static void aes_bs_mk_cbc_enc(const kuai_mk *m, uint8_t *ivs, const uint8_t *const *in,
                              uint8_t *const *out, size_t n, size_t nblocks)
{
    const unsigned char *kb = m->b + AES_BS_MK_HDR;
    uint32_t nr;
    uint8_t blk[AES_BS_BYTES] = {0};
    aes_v x[8], y[8];
    memcpy(&nr, m->b, sizeof nr);
    memcpy(blk, ivs, 16 * n);
#pragma GCC unroll 8
    for (unsigned i = 0; i < 8; i++)
        y[i] = v_loadu(blk + AES_V_BYTES * i);
    aes_bs_transpose(y);
    for (size_t t = 0; t < nblocks; t++) {
        for (size_t s = 0; s < n; s++)
            memcpy(blk + 16 * s, in[s] + 16 * t, 16);
#pragma GCC unroll 8
        for (unsigned i = 0; i < 8; i++)
            x[i] = v_loadu(blk + AES_V_BYTES * i);
        aes_bs_transpose(x);
#pragma GCC unroll 8
        for (unsigned i = 0; i < 8; i++)
            x[i] = v_xor(x[i], y[i]);
        aes_bs_encrypt_sliced(x, kb, nr);
#pragma GCC unroll 8
        for (unsigned i = 0; i < 8; i++)
            y[i] = x[i];
        aes_bs_transpose(x);
#pragma GCC unroll 8
        for (unsigned i = 0; i < 8; i++)
            v_storeu(blk + AES_V_BYTES * i, x[i]);
        for (size_t s = 0; s < n; s++)
            memcpy(out[s] + 16 * t, blk + 16 * s, 16);
    }
    if (nblocks)
        memcpy(ivs, blk, 16 * n);
    kuai_wipe(blk, sizeof blk);
}

/* The kuai_impl table of one ISA file (every key size: the round count
 * comes from the schedule). */
/* mk_cbc_wide_blocks: kuai_cbc_encrypt_multi, lanes against the streams one
 * by one (Xeon, Sapphire Rapids, TSC cycles per byte): avx2, 9 streams of
 * 1 block 40.4 against 36.6, of 2 21.8 against 21.9; ssse3 9 of 1 36.3
 * against 35.8, of 2 21.4 against 35.3: the lanes from 2 blocks a stream.
 * mk_cbc_wide_total: with few streams the narrow or wide pass costs more
 * than the streams one by one, time relative to kuai_cbc_encrypt stream
 * by stream: avx2 2 / 3 / 4 / 6 streams of 1 block 2.18 / 1.68 / 1.43 /
 * 1.17 (the narrow kernel), 2 of 2 / 3 1.29 / 1.00, 3 of 2 0.98, 4 of 2
 * 0.82, 9 of 1 0.98; ssse3 2 of 2 1.33, 4 of 2 0.85: the lanes from 8
 * blocks a batch. */
#define AES_BS_IMPL(var, nm, prio, avail, narrow)                                                  \
    const kuai_impl var = {.name = nm,                                                             \
                           .family = KUAI_FAMILY_AES,                                              \
                           .priority = prio,                                                       \
                           .available = avail,                                                     \
                           .expand = aes_bs_expand,                                                \
                           .sched_bytes = AES_SCHED_BYTES + AES_BS_KEYS_BYTES,                     \
                           .enc_blocks = aes_bs_enc_blocks,                                        \
                           .dec_blocks = aes_bs_dec_blocks,                                        \
                           .ctr_blocks = aes_bs_ctr_blocks,                                        \
                           .mk_lanes = AES_BS_BLOCKS,                                              \
                           .mk_setup = aes_bs_mk_setup,                                            \
                           .mk_bytes = AES_BS_MK_HDR + AES_BS_KEYS_BYTES,                          \
                           .mk_enc = aes_bs_mk_enc,                                                \
                           .mk_dec = aes_bs_mk_dec,                                                \
                           .mk_narrow = narrow,                                                    \
                           .mk_slots_blocks = 1,                                                   \
                           .mk_cbc_wide_blocks = 2,                                                \
                           .mk_cbc_wide_total = 8,                                                 \
                           .mk_cbc_enc = aes_bs_mk_cbc_enc}

#endif
