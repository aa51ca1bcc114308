/* SPDX-License-Identifier: Apache-2.0 */
/*
 * AES (FIPS-197), portable reference backend: the oracle for every other AES
 * backend and the fallback on every architecture.
 *
 * Constant time. The FIPS-197 S-box is a table; a table indexed by secret
 * bytes leaks through the cache, so the state is bitsliced instead and the
 * S-box is a fixed boolean circuit: bit b of every state byte of 4 blocks
 * sits in one 64-bit word ("plane" b), and SubBytes is 113 AND/XOR/XNOR
 * gates on the 8 planes. ShiftRows and MixColumns are fixed shifts and
 * masks. No branch and no memory index depends on key or data.
 *
 * ---- Layout --------------------------------------------------------------
 *
 * Byte i = 4c + r of block k (column c, row r, FIPS-197 section 3.4) is at
 * bit 16 r + 4 c + k of every plane. So a row is a 16-bit field, ShiftRows
 * rotates each row field by a multiple of 4 bits, and "the row below" in
 * MixColumns is the plane rotated by 16.
 */
#include "../bytes.h"
#include "../simd/swar.h"
#include "aes.h"

#include <string.h>

#if defined(__GNUC__)
#define INLINE __attribute__((always_inline)) inline
#else
#define INLINE inline
#endif

typedef uint64_t plane;

/* ---- S-box ---------------------------------------------------------------- */

/*
 * The AES S-box as a circuit of 32 XOR/XNOR (top linear layer), 34 AND and
 * 30 XOR (inversion in GF(2^4)^2 and back), 30 + 8 XOR/XNOR (bottom linear
 * layer): the 113-gate depth-16 circuit of J. Boyar and R. Peralta, "A
 * depth-16 circuit for the AES S-box", SEC 2012 (gate list of the paper;
 * the tests check all 256 inputs). u0 is the most significant bit (plane 7),
 * s0 likewise.
 */
static INLINE void sbox_planes(plane q[8])
{
    plane u0 = q[7], u1 = q[6], u2 = q[5], u3 = q[4];
    plane u4 = q[3], u5 = q[2], u6 = q[1], u7 = q[0];

    plane t1 = u0 ^ u3, t2 = u0 ^ u5, t3 = u0 ^ u6, t4 = u3 ^ u5, t5 = u4 ^ u6;
    plane t6 = t1 ^ t5, t7 = u1 ^ u2, t8 = u7 ^ t6, t9 = u7 ^ t7, t10 = t6 ^ t7;
    plane t11 = u1 ^ u5, t12 = u2 ^ u5, t13 = t3 ^ t4, t14 = t6 ^ t11, t15 = t5 ^ t11;
    plane t16 = t5 ^ t12, t17 = t9 ^ t16, t18 = u3 ^ u7, t19 = t7 ^ t18, t20 = t1 ^ t19;
    plane t21 = u6 ^ u7, t22 = t7 ^ t21, t23 = t2 ^ t22, t24 = t2 ^ t10, t25 = t20 ^ t17;
    plane t26 = t3 ^ t16, t27 = t1 ^ t12;

    plane m1 = t13 & t6, m2 = t23 & t8, m3 = t14 ^ m1, m4 = t19 & u7, m5 = m4 ^ m1;
    plane m6 = t3 & t16, m7 = t22 & t9, m8 = t26 ^ m6, m9 = t20 & t17, m10 = m9 ^ m6;
    plane m11 = t1 & t15, m12 = t4 & t27, m13 = m12 ^ m11, m14 = t2 & t10, m15 = m14 ^ m11;
    plane m16 = m3 ^ m2, m17 = m5 ^ t24, m18 = m8 ^ m7, m19 = m10 ^ m15, m20 = m16 ^ m13;
    plane m21 = m17 ^ m15, m22 = m18 ^ m13, m23 = m19 ^ t25, m24 = m22 ^ m23, m25 = m22 & m20;
    plane m26 = m21 ^ m25, m27 = m20 ^ m21, m28 = m23 ^ m25, m29 = m28 & m27, m30 = m26 & m24;
    plane m31 = m20 & m23, m32 = m27 & m31, m33 = m27 ^ m25, m34 = m21 & m22, m35 = m24 & m34;
    plane m36 = m24 ^ m25, m37 = m21 ^ m29, m38 = m32 ^ m33, m39 = m23 ^ m30, m40 = m35 ^ m36;
    plane m41 = m38 ^ m40, m42 = m37 ^ m39, m43 = m37 ^ m38, m44 = m39 ^ m40, m45 = m42 ^ m41;
    plane m46 = m44 & t6, m47 = m40 & t8, m48 = m39 & u7, m49 = m43 & t16, m50 = m38 & t9;
    plane m51 = m37 & t17, m52 = m42 & t15, m53 = m45 & t27, m54 = m41 & t10, m55 = m44 & t13;
    plane m56 = m40 & t23, m57 = m39 & t19, m58 = m43 & t3, m59 = m38 & t22, m60 = m37 & t20;
    plane m61 = m42 & t1, m62 = m45 & t4, m63 = m41 & t2;

    plane l0 = m61 ^ m62, l1 = m50 ^ m56, l2 = m46 ^ m48, l3 = m47 ^ m55, l4 = m54 ^ m58;
    plane l5 = m49 ^ m61, l6 = m62 ^ l5, l7 = m46 ^ l3, l8 = m51 ^ m59, l9 = m52 ^ m53;
    plane l10 = m53 ^ l4, l11 = m60 ^ l2, l12 = m48 ^ m51, l13 = m50 ^ l0, l14 = m52 ^ m61;
    plane l15 = m55 ^ l1, l16 = m56 ^ l0, l17 = m57 ^ l1, l18 = m58 ^ l8, l19 = m63 ^ l4;
    plane l20 = l0 ^ l1, l21 = l1 ^ l7, l22 = l3 ^ l12, l23 = l18 ^ l2, l24 = l15 ^ l9;
    plane l25 = l6 ^ l10, l26 = l7 ^ l9, l27 = l8 ^ l10, l28 = l11 ^ l14, l29 = l11 ^ l17;

    q[7] = l6 ^ l24;
    q[6] = ~(l16 ^ l26);
    q[5] = ~(l19 ^ l28);
    q[4] = l6 ^ l21;
    q[3] = l20 ^ l22;
    q[2] = l25 ^ l29;
    q[1] = ~(l13 ^ l27);
    q[0] = ~(l6 ^ l23);
}

/*
 * The portable key expansion's SubWord (aes_key.c): the same circuit with
 * bit i of the word's four bytes in plane i (bits 0, 8, 16, 24; the other
 * bits carry garbage and are masked off). ~150 word operations, where an
 * inversion by multiplications per byte cost ~90 ns each and made the
 * S-box most of a software backend's key setup.
 */
uint32_t aes_subword_ct(uint32_t w)
{
    const plane lsb = 0x01010101u;
    plane q[8];
    for (unsigned i = 0; i < 8; i++)
        q[i] = (w >> i) & lsb;
    sbox_planes(q);
    uint32_t r = 0;
    for (unsigned i = 0; i < 8; i++)
        r |= (uint32_t)((q[i] & lsb) << i);
    return r;
}

/*
 * S(x) = A x^-1 + 0x63 with an affine map; inversion is its own inverse, so
 * S^-1 = B o S o B with B(y) = A^-1 (y + 0x63) = A^-1 y + 0x05, bit i of
 * A^-1 y being y(i+2) + y(i+5) + y(i+7) (indices mod 8; FIPS-197 5.3.2).
 */
static INLINE void affine_inv_planes(plane q[8])
{
    plane t[8];
#pragma GCC unroll 8
    for (unsigned i = 0; i < 8; i++)
        t[i] = q[(i + 2) & 7] ^ q[(i + 5) & 7] ^ q[(i + 7) & 7];
    t[0] = ~t[0];
    t[2] = ~t[2];
    memcpy(q, t, sizeof t);
}

static INLINE void sbox_inv_planes(plane q[8])
{
    affine_inv_planes(q);
    sbox_planes(q);
    affine_inv_planes(q);
}

/* ---- ShiftRows, MixColumns ------------------------------------------------- */

/* Row r moves left by r columns: its 16-bit field rotates right by 4 r. */
static INLINE plane shift_rows_plane(plane x)
{
    return (x & 0x000000000000ffffull) | ((x >> 4) & 0x000000000fff0000ull) |
           ((x << 12) & 0x00000000f0000000ull) | ((x >> 8) & 0x000000ff00000000ull) |
           ((x << 8) & 0x0000ff0000000000ull) | ((x >> 12) & 0x000f000000000000ull) |
           ((x << 4) & 0xfff0000000000000ull);
}

static INLINE plane inv_shift_rows_plane(plane x)
{
    return (x & 0x000000000000ffffull) | ((x << 4) & 0x00000000fff00000ull) |
           ((x >> 12) & 0x00000000000f0000ull) | ((x >> 8) & 0x000000ff00000000ull) |
           ((x << 8) & 0x0000ff0000000000ull) | ((x >> 4) & 0x0fff000000000000ull) |
           ((x << 12) & 0xf000000000000000ull);
}

/* Every byte of a row field gets the byte one row below in its column. */
static INLINE plane row_down(plane x, unsigned rows)
{
    return (x >> (16 * rows)) | (x << (64 - 16 * rows));
}

/* Multiplication by x (0x02) modulo x^8 + x^4 + x^3 + x + 1 on planes. */
static INLINE void xtime_planes(plane r[8], const plane a[8])
{
    r[0] = a[7];
    r[1] = a[0] ^ a[7];
    r[2] = a[1];
    r[3] = a[2] ^ a[7];
    r[4] = a[3] ^ a[7];
    r[5] = a[4];
    r[6] = a[5];
    r[7] = a[6];
}

/* out_r = 2 a_r + 3 a_(r+1) + a_(r+2) + a_(r+3)
 *       = 2 (a_r + a_(r+1)) + a_(r+1) + (a_(r+2) + a_(r+3)). */
static INLINE void mix_columns_planes(plane q[8])
{
    plane t[8], d[8], x[8];
#pragma GCC unroll 8
    for (unsigned b = 0; b < 8; b++) {
        d[b] = row_down(q[b], 1);
        t[b] = q[b] ^ d[b];
    }
    xtime_planes(x, t);
#pragma GCC unroll 8
    for (unsigned b = 0; b < 8; b++)
        q[b] = x[b] ^ d[b] ^ row_down(t[b], 2);
}

/* InvMixColumns = MixColumns after a_r += 4 (a_r + a_(r+2)) (the factoring
 * aes_key.c uses as well). */
static INLINE void inv_mix_columns_planes(plane q[8])
{
    plane w[8], x2[8], x4[8];
#pragma GCC unroll 8
    for (unsigned b = 0; b < 8; b++)
        w[b] = q[b] ^ row_down(q[b], 2);
    xtime_planes(x2, w);
    xtime_planes(x4, x2);
#pragma GCC unroll 8
    for (unsigned b = 0; b < 8; b++)
        q[b] ^= x4[b];
    mix_columns_planes(q);
}

/* ---- bitslicing ------------------------------------------------------------ */

#define LANES 4

/* Bit position 8 g + j (j = 0..7) of a plane is row g / 2, column
 * 2 (g % 2) + j / 4, block j % 4 (see Layout). */
static INLINE size_t pos_byte(unsigned g, unsigned j)
{
    unsigned r = g / 2, c = 2 * (g % 2) + j / 4, k = j % 4;
    return 16 * k + 4 * c + r;
}

/* blk holds LANES blocks of 16 bytes, block k at 16 k. */
static void to_planes(plane q[8], const uint8_t blk[16 * LANES])
{
    memset(q, 0, 8 * sizeof *q);
    for (unsigned g = 0; g < 8; g++) {
        uint64_t t = 0;
        for (unsigned j = 0; j < 8; j++)
            t |= (uint64_t)blk[pos_byte(g, j)] << (8 * j);
        t = kuai_transpose8x8(t);
        for (unsigned b = 0; b < 8; b++)
            q[b] |= ((t >> (8 * b)) & 0xff) << (8 * g);
    }
}

static void from_planes(uint8_t blk[16 * LANES], const plane q[8])
{
    for (unsigned g = 0; g < 8; g++) {
        uint64_t t = 0;
        for (unsigned b = 0; b < 8; b++)
            t |= ((q[b] >> (8 * g)) & 0xff) << (8 * b);
        t = kuai_transpose8x8(t);
        for (unsigned j = 0; j < 8; j++)
            blk[pos_byte(g, j)] = (uint8_t)(t >> (8 * j));
    }
}

/* ---- rounds ------------------------------------------------------------------ */

/* Round keys bitsliced, lane k holding the round key of lane k's key. */
typedef struct aes_ref_keys {
    uint32_t nr;
    plane rk[AES_MAX_ROUNDS + 1][8];
} aes_ref_keys;

/* Bit i of v (i = 0..15) at bit 4 i. */
static INLINE uint64_t spread16_by4(uint64_t v)
{
    v = (v | (v << 24)) & 0x000000FF000000FFull;
    v = (v | (v << 12)) & 0x000F000F000F000Full;
    v = (v | (v << 6)) & 0x0303030303030303ull;
    return (v | (v << 3)) & 0x1111111111111111ull;
}

/* One round key in every lane: to_planes of four copies of rk, a third of
 * its work. Byte 4 c + r goes to bit 16 r + 4 c + k (Layout), so bit b of
 * the bytes in the order 4 r + c is one 16-bit word per plane (two 8x8
 * transposes), spread to every fourth bit and copied into the 4 lanes. */
static void key_to_planes1(plane q[8], const uint8_t rk[16])
{
    uint64_t a = 0, c = 0;
    for (unsigned j = 0; j < 8; j++) {
        /* byte j of a: row j / 4, column j % 4; c: rows 2 and 3 */
        a |= (uint64_t)rk[4 * (j % 4) + j / 4] << (8 * j);
        c |= (uint64_t)rk[4 * (j % 4) + j / 4 + 2] << (8 * j);
    }
    a = kuai_transpose8x8(a);
    c = kuai_transpose8x8(c);
    for (unsigned b = 0; b < 8; b++) {
        const uint64_t x = spread16_by4(((a >> (8 * b)) & 0xff) | ((c >> (8 * b)) & 0xff) << 8);
        q[b] = (x << 4) - x; /* x * 15: bit 4 i into lanes 0..3 */
    }
}

static void keys_to_planes(aes_ref_keys *kp, const aes_sched *const *s, size_t n)
{
    uint8_t blk[16 * LANES];
    kp->nr = s[0]->nr;
    for (unsigned r = 0; r <= kp->nr; r++) {
        if (n == 1) {
            key_to_planes1(kp->rk[r], s[0]->rk[r]);
            continue;
        }
        for (size_t k = 0; k < LANES; k++)
            memcpy(blk + 16 * k, s[k < n ? k : 0]->rk[r], 16);
        to_planes(kp->rk[r], blk);
    }
    kuai_wipe(blk, sizeof blk);
}

static INLINE void add_round_key(plane q[8], const plane rk[8])
{
#pragma GCC unroll 8
    for (unsigned b = 0; b < 8; b++)
        q[b] ^= rk[b];
}

static INLINE void encrypt_planes(const aes_ref_keys *kp, plane q[8])
{
    unsigned nr = kp->nr;
    add_round_key(q, kp->rk[0]);
    for (unsigned r = 1; r <= nr; r++) {
        sbox_planes(q);
        for (unsigned b = 0; b < 8; b++)
            q[b] = shift_rows_plane(q[b]);
        if (r != nr) /* public */
            mix_columns_planes(q);
        add_round_key(q, kp->rk[r]);
    }
}

/* The inverse cipher of FIPS-197 section 5.3 with the encryption round keys
 * (bitsliced, InvMixColumns costs the same wherever it sits). */
static INLINE void decrypt_planes(const aes_ref_keys *kp, plane q[8])
{
    unsigned nr = kp->nr;
    add_round_key(q, kp->rk[nr]);
    for (unsigned r = nr; r-- > 0;) {
        for (unsigned b = 0; b < 8; b++)
            q[b] = inv_shift_rows_plane(q[b]);
        sbox_inv_planes(q);
        add_round_key(q, kp->rk[r]);
        if (r != 0)
            inv_mix_columns_planes(q);
    }
}

/* Up to LANES blocks; the unused lanes run on zeros and are dropped. */
static void crypt_batch(const aes_ref_keys *kp, const uint8_t *in, uint8_t *out, size_t n, int dec)
{
    uint8_t blk[16 * LANES] = {0};
    plane q[8];
    memcpy(blk, in, 16 * n);
    to_planes(q, blk);
    if (dec)
        decrypt_planes(kp, q);
    else
        encrypt_planes(kp, q);
    from_planes(blk, q);
    memcpy(out, blk, 16 * n);
    kuai_wipe(blk, sizeof blk);
    kuai_wipe(q, sizeof q);
}

static void crypt_blocks(const kuai_key *k, const uint8_t *in, uint8_t *out, size_t nblocks,
                         int dec)
{
    aes_ref_keys kp;
    const aes_sched *s = aes_sched_const(k);
    keys_to_planes(&kp, &s, 1);
    while (nblocks) {
        size_t n = nblocks < LANES ? nblocks : LANES;
        crypt_batch(&kp, in, out, n, dec);
        in += 16 * n;
        out += 16 * n;
        nblocks -= n;
    }
    kuai_wipe(&kp, sizeof kp);
}

/* ---- backend table ------------------------------------------------------------- */

static int aes_ref_available(void)
{
    return 1;
}

static void aes_ref_expand(kuai_key *k, const uint8_t *key)
{
    aes_expand_raw(aes_sched_of(k), key, aes_key_bytes(k));
}

static void aes_ref_enc_blocks(const kuai_key *k, const uint8_t *in, uint8_t *out, size_t nblocks)
{
    crypt_blocks(k, in, out, nblocks, 0);
}

static void aes_ref_dec_blocks(const kuai_key *k, const uint8_t *in, uint8_t *out, size_t nblocks)
{
    crypt_blocks(k, in, out, nblocks, 1);
}

/* CBC encryption: the round keys go into planes once per call (not once
 * per block, as enc_blocks a block at a time would: for AES-128 about as
 * much work as the block's rounds), then a block a pass, the chain XORed
 * in before it. in == out allowed: each block is read before its
 * ciphertext is written. */
static void aes_ref_cbc_enc_blocks(const kuai_key *k, uint8_t *iv, const uint8_t *in, uint8_t *out,
                                   size_t nblocks)
{
    aes_ref_keys kp;
    uint8_t b[16];
    const aes_sched *s = aes_sched_const(k);
    keys_to_planes(&kp, &s, 1);
    const uint8_t *chain = iv;
    for (size_t i = 0; i < nblocks; i++) {
        for (unsigned j = 0; j < 16; j++)
            b[j] = in[16 * i + j] ^ chain[j];
        crypt_batch(&kp, b, out + 16 * i, 1, 0);
        chain = out + 16 * i;
    }
    memmove(iv, chain, 16); /* the IV may be the caller's last output block */
    kuai_wipe(&kp, sizeof kp);
    kuai_wipe(b, sizeof b);
}

/* Multi-key: lane k of the bitsliced round keys holds keys[k]'s round keys
 * (multi.c has checked that all keys are of one cipher, so one nr). The
 * bytes are copied in and out of kuai_mk, so no alignment question. */
_Static_assert(sizeof(aes_ref_keys) <= KUAI_MK_BYTES, "AES lane keys must fit in kuai_mk");

static void aes_ref_mk_setup(kuai_mk *m, const kuai_key *const *keys, size_t n)
{
    aes_ref_keys kp;
    const aes_sched *s[LANES];
    for (size_t k = 0; k < LANES; k++)
        s[k] = aes_sched_const(keys[k < n ? k : 0]);
    keys_to_planes(&kp, s, n);
    memcpy(m->b, &kp, sizeof kp);
    kuai_wipe(&kp, sizeof kp);
}

static void aes_ref_mk_crypt(const kuai_mk *m, const uint8_t *in, uint8_t *out, size_t n, int dec)
{
    aes_ref_keys kp;
    memcpy(&kp, m->b, sizeof kp);
    crypt_batch(&kp, in, out, n, dec);
    kuai_wipe(&kp, sizeof kp);
}

static void aes_ref_mk_enc(const kuai_mk *m, const uint8_t *in, uint8_t *out, size_t n)
{
    aes_ref_mk_crypt(m, in, out, n, 0);
}

static void aes_ref_mk_dec(const kuai_mk *m, const uint8_t *in, uint8_t *out, size_t n)
{
    aes_ref_mk_crypt(m, in, out, n, 1);
}

/* Below every other AES backend: the one any CPU runs. */
KUAI_REGISTER(aes_ref);
const kuai_impl aes_ref = {
    .name = "ref",
    .family = KUAI_FAMILY_AES,
    .priority = 0,
    .available = aes_ref_available,
    .expand = aes_ref_expand,
    .sched_bytes = AES_SCHED_BYTES,
    .enc_blocks = aes_ref_enc_blocks,
    .dec_blocks = aes_ref_dec_blocks,
    .cbc_enc_blocks = aes_ref_cbc_enc_blocks,
    .ctr_blocks = NULL,
    .mk_lanes = LANES,
    .mk_setup = aes_ref_mk_setup,
    .mk_bytes = sizeof(aes_ref_keys),
    .mk_enc = aes_ref_mk_enc,
    .mk_dec = aes_ref_mk_dec,
    /* one block a stream fills the lanes at a profit (16 keys: ~0.55 of the
     * single-key calls' time), two or three do not (up to 1.97x), from four
     * the two cost the same (Xeon, Sapphire Rapids, docs/performance.md) */
    .mk_slots_blocks = 2,
};
