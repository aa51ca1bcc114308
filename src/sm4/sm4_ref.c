/* SPDX-License-Identifier: Apache-2.0 */
/*
 * SM4 (GB/T 32907-2016), portable reference backend: the oracle for every
 * other SM4 backend, the fallback on every architecture, and the home of the
 * key schedule all SM4 backends share (sm4_expand_raw).
 *
 * Constant time. The standard gives the S-box as a table; a table indexed by
 * secret bytes leaks through the cache, so the S-box is computed instead from
 * its algebraic form S(x) = A·(A·x + C)^-1 + C (inversion in GF(2^8), see
 * sbox_planes), and evaluated bitsliced: bit b of up to 64 S-box inputs sits
 * in one 64-bit word ("plane" b), and the inversion is a fixed sequence of
 * AND and XOR on planes. Everything else (XOR, rotations) is data-independent
 * already. No branch and no memory index depends on key or data.
 *
 * The data path keeps the whole state bitsliced for a batch of up to 16
 * blocks, so the linear layer L works on planes too and the transposition
 * into and out of planes happens once per batch, not once per round.
 */
#include "../bytes.h"
#include "../simd/swar.h"
#include "sm4.h"

#include <string.h>

/* ---- bytes and words ---------------------------------------------------- */

static uint32_t rotl32(uint32_t x, unsigned n)
{
    return (x << n) | (x >> (32 - n));
}

static uint64_t rotl64(uint64_t x, unsigned n)
{
    return (x << n) | (x >> (64 - n));
}

/* ---- the S-box on planes ------------------------------------------------ */

/* plane b holds bit b (b = 0: least significant) of 64 bytes. */
typedef uint64_t plane;

/* The field arithmetic below is short fixed loops over arrays of planes;
 * inlined and unrolled ("#pragma GCC unroll", which clang also knows), the
 * arrays live in registers and the constant masks fold away: 2-3x faster at
 * -O2 than leaving the choice to gcc. */
#if defined(__GNUC__)
#define INLINE __attribute__((always_inline)) inline
#else
#define INLINE inline
#endif

/*
 * Arithmetic in GF(2^8) = GF(2)[x]/f(x), f = x^8+x^7+x^6+x^5+x^4+x^2+1, the
 * field in which the SM4 S-box is an inversion (Liu, Ji, Hu, Zhang, "Analysis
 * of the SMS4 block cipher", ACISP 2007). Byte bit i is the coefficient of x^i.
 */

/* c[0..14] is a product of degree <= 14; x^8 = x^7+x^6+x^5+x^4+x^2+1 folds
 * each coefficient of degree k >= 8 onto degrees k-1, k-2, k-3, k-4, k-6, k-8. */
static INLINE void gf_reduce(plane r[8], plane c[15])
{
#pragma GCC unroll 64
    for (int k = 14; k >= 8; k--) {
        c[k - 1] ^= c[k];
        c[k - 2] ^= c[k];
        c[k - 3] ^= c[k];
        c[k - 4] ^= c[k];
        c[k - 6] ^= c[k];
        c[k - 8] ^= c[k];
    }
    memcpy(r, c, 8 * sizeof *r);
}

static INLINE void gf_mul(plane r[8], const plane a[8], const plane b[8])
{
    plane c[15] = {0};
#pragma GCC unroll 64
    for (int i = 0; i < 8; i++)
#pragma GCC unroll 64
        for (int j = 0; j < 8; j++)
            c[i + j] ^= a[i] & b[j];
    gf_reduce(r, c);
}

/* Squaring is linear in characteristic 2: the coefficients just spread out. */
static INLINE void gf_sqr(plane r[8], const plane a[8])
{
    plane c[15] = {0};
#pragma GCC unroll 64
    for (int i = 0; i < 8; i++)
        c[2 * i] = a[i];
    gf_reduce(r, c);
}

/* a^-1 = a^254 (and 0 -> 0, as the S-box needs): 4 multiplications and 7
 * squarings along the chain 2, 3, 12, 15, 240, 14, 254. */
static void gf_inv(plane r[8], const plane a[8])
{
    plane a2[8], a3[8], a12[8], a14[8], a15[8], t[8];
    gf_sqr(a2, a);
    gf_mul(a3, a2, a);
    gf_sqr(t, a3);
    gf_sqr(a12, t);
    gf_mul(a15, a12, a3);
    gf_mul(a14, a12, a2);
    gf_sqr(t, a15);
    gf_sqr(t, t);
    gf_sqr(t, t);
    gf_sqr(t, t); /* a^240 */
    gf_mul(r, t, a14);
}

/*
 * y = A·x + C of the algebraic form: output bit i is the parity of the
 * input bits selected by 0xA7 rotated left by i, then XOR bit i of 0xD3
 * (constants from Liu et al., above; the tests check every S-box entry
 * against the standard's table by way of the T-table backend and OpenSSL).
 */
#define SM4_AFFINE_ROW 0xA7u
#define SM4_AFFINE_CONST 0xD3u

static INLINE void affine(plane y[8], const plane x[8])
{
#pragma GCC unroll 64
    for (unsigned i = 0; i < 8; i++) {
        unsigned row = ((SM4_AFFINE_ROW << i) | (SM4_AFFINE_ROW >> (8 - i))) & 0xff;
        plane acc = 0;
#pragma GCC unroll 64
        for (unsigned j = 0; j < 8; j++)
            acc ^= x[j] & ((plane)0 - ((row >> j) & 1)); /* public constant mask */
        y[i] = acc ^ ((plane)0 - ((SM4_AFFINE_CONST >> i) & 1));
    }
}

/* The S-box on all 64 bytes of p. */
static void sbox_planes(plane p[8])
{
    plane t[8];
    affine(t, p);
    gf_inv(p, t);
    affine(t, p);
    memcpy(p, t, sizeof t);
}

/* ---- bitslicing -------------------------------------------------------- */

/*
 * 16 words (one per lane) <-> 8 planes. Byte j of the word of lane k
 * (j = 0: least significant) is position 16 j + k of every plane, so that
 * rotating all words left by 8 bits is rotating every plane left by 16.
 */
#define LANES 16

static void words_to_planes(plane p[8], const uint32_t w[LANES])
{
    memset(p, 0, 8 * sizeof *p);
    for (unsigned j = 0; j < 4; j++) {
        for (unsigned g = 0; g < LANES / 8; g++) {
            uint64_t t = 0;
            for (unsigned k = 0; k < 8; k++)
                t |= (uint64_t)((w[8 * g + k] >> (8 * j)) & 0xff) << (8 * k);
            t = kuai_transpose8x8(t);
            for (unsigned b = 0; b < 8; b++)
                p[b] |= ((t >> (8 * b)) & 0xff) << (16 * j + 8 * g);
        }
    }
}

static void planes_to_words(uint32_t w[LANES], const plane p[8])
{
    memset(w, 0, LANES * sizeof *w);
    for (unsigned j = 0; j < 4; j++) {
        for (unsigned g = 0; g < LANES / 8; g++) {
            uint64_t t = 0;
            for (unsigned b = 0; b < 8; b++)
                t |= ((p[b] >> (16 * j + 8 * g)) & 0xff) << (8 * b);
            t = kuai_transpose8x8(t);
            for (unsigned k = 0; k < 8; k++)
                w[8 * g + k] |= (uint32_t)((t >> (8 * k)) & 0xff) << (8 * j);
        }
    }
}

/* The same round key in every lane: plane b, byte j is all ones where bit b
 * of byte j of rk is set. */
static void broadcast_planes(plane p[8], uint32_t rk)
{
    for (unsigned b = 0; b < 8; b++) {
        plane acc = 0;
        for (unsigned j = 0; j < 4; j++)
            acc |= ((plane)0 - ((rk >> (8 * j + b)) & 1)) & ((plane)0xffff << (16 * j));
        p[b] = acc;
    }
}

/* ---- the round function on planes -------------------------------------- */

/*
 * L(B) = B ^ (B <<< 2) ^ (B <<< 10) ^ (B <<< 18) ^ (B <<< 24) (standard,
 * 6.2). With R = B <<< 2, the middle three terms are R, R <<< 8, R <<< 16,
 * and a word rotation by 8 is a plane rotation by 16 (see words_to_planes).
 * R itself moves bit b to b + 2 within the byte, and the top two bits into
 * the next byte.
 */
static INLINE void linear_planes(plane out[8], const plane in[8])
{
    plane r[8];
    r[0] = rotl64(in[6], 16);
    r[1] = rotl64(in[7], 16);
#pragma GCC unroll 64
    for (unsigned b = 2; b < 8; b++)
        r[b] = in[b - 2];
#pragma GCC unroll 64
    for (unsigned b = 0; b < 8; b++)
        out[b] = in[b] ^ r[b] ^ rotl64(r[b], 16) ^ rotl64(r[b], 32) ^ rotl64(in[b], 48);
}

/*
 * 32 rounds on the bitsliced state x[4][8] = (X0, X1, X2, X3), round key r
 * in rkp[r] (dec: used from 31 down to 0). X(i+4) = X(i) ^ T(X(i+1) ^ X(i+2)
 * ^ X(i+3) ^ rk(i)) (standard, 7.1), written over X(i) so the four slots
 * rotate; after 32 rounds slot i holds X(32 + i).
 */
static void rounds_planes(plane x[4][8], const plane rkp[32][8], int dec)
{
    for (unsigned r = 0; r < 32; r++) {
        const plane *rk = rkp[dec ? 31 - r : r];
        plane *x0 = x[r & 3], *x1 = x[(r + 1) & 3], *x2 = x[(r + 2) & 3], *x3 = x[(r + 3) & 3];
        plane t[8], l[8];
        for (unsigned b = 0; b < 8; b++)
            t[b] = x1[b] ^ x2[b] ^ x3[b] ^ rk[b];
        sbox_planes(t);
        linear_planes(l, t);
        for (unsigned b = 0; b < 8; b++)
            x0[b] ^= l[b];
    }
}

/* Up to 16 blocks in, through the rounds, out; lane k is block k. The
 * output is (X35, X34, X33, X32), the reverse transformation R. */
static void crypt_batch(const plane rkp[32][8], const uint8_t *in, uint8_t *out, size_t n, int dec)
{
    plane x[4][8];
    uint32_t w[LANES];
    for (unsigned i = 0; i < 4; i++) {
        for (size_t k = 0; k < LANES; k++)
            w[k] = k < n ? load_be32(in + 16 * k + 4 * i) : 0;
        words_to_planes(x[i], w);
    }
    rounds_planes(x, rkp, dec);
    for (unsigned i = 0; i < 4; i++) {
        planes_to_words(w, x[3 - i]);
        for (size_t k = 0; k < n; k++)
            store_be32(out + 16 * k + 4 * i, w[k]);
    }
    kuai_wipe(x, sizeof x);
    kuai_wipe(w, sizeof w);
}

static void crypt_blocks(const sm4_sched *s, const uint8_t *in, uint8_t *out, size_t nblocks,
                         int dec)
{
    plane rkp[32][8];
    for (unsigned r = 0; r < 32; r++)
        broadcast_planes(rkp[r], s->rk[r]);
    while (nblocks) {
        size_t n = nblocks < LANES ? nblocks : LANES;
        crypt_batch((const plane(*)[8])rkp, in, out, n, dec);
        in += 16 * n;
        out += 16 * n;
        nblocks -= n;
    }
    kuai_wipe(rkp, sizeof rkp);
}

/* ---- key schedule ------------------------------------------------------- */

/* tau, the S-box on each byte of one word (the bitsliced S-box, 15 of its
 * 16 lanes idle: key setup is not the hot path). */
static uint32_t tau_word(uint32_t a)
{
    uint32_t w[LANES] = {a};
    plane p[8];
    words_to_planes(p, w);
    sbox_planes(p);
    planes_to_words(w, p);
    uint32_t r = w[0];
    kuai_wipe(p, sizeof p);
    kuai_wipe(w, sizeof w);
    return r;
}

void sm4_expand_raw(sm4_sched *s, const uint8_t key[16])
{
    sm4_expand_with(s, key, tau_word);
}

void sm4_expand_with(sm4_sched *s, const uint8_t key[16], uint32_t (*tau)(uint32_t))
{
    uint32_t k[4];
    for (unsigned i = 0; i < 4; i++)
        k[i] = load_be32(key + 4 * i) ^ sm4_fk[i];
    /* rk(i) = K(i+4) = K(i) ^ T'(K(i+1) ^ K(i+2) ^ K(i+3) ^ CK(i)), with
     * T' = L'(tau), L'(B) = B ^ (B <<< 13) ^ (B <<< 23); the four K slots
     * rotate as the X slots of the rounds do. */
    for (unsigned i = 0; i < 32; i++) {
        uint32_t b = tau(k[(i + 1) & 3] ^ k[(i + 2) & 3] ^ k[(i + 3) & 3] ^ sm4_ck(i));
        k[i & 3] ^= b ^ rotl32(b, 13) ^ rotl32(b, 23);
        s->rk[i] = k[i & 3];
    }
    kuai_wipe(k, sizeof k);
}

/* ---- backend table ----------------------------------------------------- */

static int sm4_ref_available(void)
{
    return 1;
}

static void sm4_ref_expand(kuai_key *k, const uint8_t *key)
{
    sm4_expand_raw(sm4_sched_of(k), key);
}

static void sm4_ref_enc_blocks(const kuai_key *k, const uint8_t *in, uint8_t *out, size_t nblocks)
{
    crypt_blocks(sm4_sched_const(k), in, out, nblocks, 0);
}

static void sm4_ref_dec_blocks(const kuai_key *k, const uint8_t *in, uint8_t *out, size_t nblocks)
{
    crypt_blocks(sm4_sched_const(k), in, out, nblocks, 1);
}

/*
 * Multi-key: the lane format is the 32 round keys bitsliced with lane k's
 * key in lane k, the same transposition as the data. kuai_mk's bytes are
 * copied in and out rather than cast, so no alignment or aliasing question.
 */
#define SM4_REF_MK_LANES 8
_Static_assert(32 * 8 * sizeof(plane) <= KUAI_MK_BYTES, "SM4 lane keys must fit in kuai_mk");

static void sm4_ref_mk_setup(kuai_mk *m, const kuai_key *const *keys, size_t n)
{
    plane rkp[32][8];
    uint32_t w[LANES];
    for (unsigned r = 0; r < 32; r++) {
        for (size_t k = 0; k < LANES; k++)
            w[k] = k < n ? sm4_sched_const(keys[k])->rk[r] : 0;
        words_to_planes(rkp[r], w);
    }
    memcpy(m->b, rkp, sizeof rkp);
    kuai_wipe(rkp, sizeof rkp);
    kuai_wipe(w, sizeof w);
}

static void sm4_ref_mk_crypt(const kuai_mk *m, const uint8_t *in, uint8_t *out, size_t n, int dec)
{
    plane rkp[32][8];
    memcpy(rkp, m->b, sizeof rkp);
    crypt_batch((const plane(*)[8])rkp, in, out, n, dec);
    kuai_wipe(rkp, sizeof rkp);
}

static void sm4_ref_mk_enc(const kuai_mk *m, const uint8_t *in, uint8_t *out, size_t n)
{
    sm4_ref_mk_crypt(m, in, out, n, 0);
}

static void sm4_ref_mk_dec(const kuai_mk *m, const uint8_t *in, uint8_t *out, size_t n)
{
    sm4_ref_mk_crypt(m, in, out, n, 1);
}

/* Below every constant-time SM4 backend: the one any CPU runs. */
KUAI_REGISTER(sm4_ref);
const kuai_impl sm4_ref = {
    .name = "ref",
    .family = KUAI_FAMILY_SM4,
    .priority = 0,
    .available = sm4_ref_available,
    .expand = sm4_ref_expand,
    .sched_bytes = SM4_SCHED_BYTES,
    .enc_blocks = sm4_ref_enc_blocks,
    .dec_blocks = sm4_ref_dec_blocks,
    .ctr_blocks = NULL,
    .mk_lanes = SM4_REF_MK_LANES,
    .mk_setup = sm4_ref_mk_setup,
    .mk_bytes = 32 * 8 * sizeof(plane),
    .mk_enc = sm4_ref_mk_enc,
    .mk_dec = sm4_ref_mk_dec,
};
