/* SPDX-License-Identifier: Apache-2.0 */
/*
 * SM4 (GB/T 32907-2016), portable reference backend: the oracle for every
 * other SM4 backend, the fallback on every architecture, and the home of the
 * key schedule all SM4 backends share (sm4_expand_raw).
 *
 * Constant time. The standard gives the S-box as a table; a table indexed by
 * secret bytes leaks through the cache, so the S-box is computed instead from
 * its algebraic form S(x) = A·(A·x + C)^-1 + C (inversion in GF(2^8), run in
 * a tower field: see sbox_planes), and evaluated bitsliced: bit b of up to
 * 64 S-box inputs sits in one 64-bit word ("plane" b), and the inversion is
 * a fixed sequence of AND and XOR on planes. Everything else (XOR,
 * rotations) is data-independent already. No branch and no memory index
 * depends on key or data.
 *
 * The data path keeps the whole state bitsliced for a batch of up to 16
 * blocks, so the linear layer L works on planes too and the transposition
 * into and out of planes happens once per batch, not once per round. Key
 * setup runs up to four keys' schedules in the lanes of one such S-box
 * (kuai_key_init_multi), and CBC encryption makes the round keys' planes
 * once per call.
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
 * The S-box's algebraic form: S(x) = A·(A·x + C)^-1 + C, the inversion in
 * GF(2^8) = GF(2)[x]/(x^8+x^7+x^6+x^5+x^4+x^2+1), A the circulant matrix of
 * the row 0xA7 and C = 0xD3 (Liu, Ji, Hu, Zhang, "Analysis of the SMS4
 * block cipher", ACISP 2007). The inversion runs in an isomorphic tower
 * field, GF(2^4)[y]/(y^2 + y + lambda) over GF(2^4) = GF(2)[t]/(t^4 + t + 1):
 * an element ah·y + al (ah, al in GF(2^4)) has the inverse
 * (ah·e)·y + (ah + al)·e, e = (lambda·ah^2 + ah·al + al^2)^-1, three
 * GF(2^4) products and a GF(2^4) inverse, where GF(2^8) itself took four
 * GF(2^8) products and seven squarings (730 logic instructions against 175
 * as gcc 12 compiles them for x86-64). The
 * change of basis is folded into the affine maps on both sides:
 * tower(A·x + C) = Min·x + cin, S(x) = Mout·inverse + C.
 * scripts/gen-sm4-tower finds them, checks the whole circuit against the
 * standard's table for all 256 inputs and printed the rows below. Row i of
 * a matrix: bit j set when input bit j is in output bit i; a tower byte is
 * ah in bits 7..4, al in bits 3..0.
 */
/* scripts/gen-sm4-tower: lambda = 0x9, beta = 0x8e; 57 ones in the two matrices */
#define SM4_TOWER_LAMBDA 0x9u
#define SM4_TOWER_IN_CONST 0xafu
#define SM4_TOWER_OUT_CONST 0xd3u
static const uint8_t sm4_tower_in[8] = {0xf0, 0x72, 0xd6, 0x18, 0x93, 0x40, 0xc4, 0x7f};
static const uint8_t sm4_tower_out[8] = {0x33, 0x65, 0x14, 0xb5, 0x8a, 0x2a, 0x07, 0x29};

/* y = M·x + c on 8 planes, M and c public constants (the masks fold away
 * once the loops are unrolled: each one of a row is an XOR of a plane). */
static INLINE void affine(plane y[8], const plane x[8], const uint8_t rows[8], unsigned c)
{
#pragma GCC unroll 64
    for (unsigned i = 0; i < 8; i++) {
        plane acc = 0;
#pragma GCC unroll 64
        for (unsigned j = 0; j < 8; j++)
            acc ^= x[j] & ((plane)0 - ((rows[i] >> j) & 1)); /* public constant mask */
        y[i] = acc ^ ((plane)0 - ((c >> i) & 1));
    }
}

/* c[0..6], a product of degree <= 6 in GF(2^4): t^4 = t + 1 folds each
 * coefficient of degree k >= 4 onto degrees k-3 and k-4. */
static INLINE void gf16_reduce(plane r[4], plane c[7])
{
#pragma GCC unroll 8
    for (int k = 6; k >= 4; k--) {
        c[k - 3] ^= c[k];
        c[k - 4] ^= c[k];
    }
    memcpy(r, c, 4 * sizeof *r);
}

static INLINE void gf16_mul(plane r[4], const plane a[4], const plane b[4])
{
    plane c[7] = {0};
#pragma GCC unroll 8
    for (int i = 0; i < 4; i++)
#pragma GCC unroll 8
        for (int j = 0; j < 4; j++)
            c[i + j] ^= a[i] & b[j];
    gf16_reduce(r, c);
}

/* a times the public constant k (masks fold away, as in affine). */
static INLINE void gf16_mul_const(plane r[4], const plane a[4], unsigned k)
{
    plane c[7] = {0};
#pragma GCC unroll 8
    for (int i = 0; i < 4; i++)
#pragma GCC unroll 8
        for (int j = 0; j < 4; j++)
            c[i + j] ^= a[i] & ((plane)0 - ((k >> j) & 1));
    gf16_reduce(r, c);
}

/* Squaring is linear in characteristic 2: the coefficients just spread out. */
static INLINE void gf16_sqr(plane r[4], const plane a[4])
{
    plane c[7] = {a[0], 0, a[1], 0, a[2], 0, a[3]};
    gf16_reduce(r, c);
}

/* a^-1 in GF(2^4) (0 -> 0), its algebraic normal form as
 * scripts/gen-sm4-tower prints it (a, b, c, d: bits 0-3 of the input):
 * ten ANDs and 23 XORs, where a^14 by products took twice the operations. */
static INLINE void gf16_inv(plane r[4], const plane x[4])
{
    const plane a = x[0], b = x[1], c = x[2], d = x[3];
    const plane ab = a & b, ac = a & c, ad = a & d, bc = b & c, bd = b & d, cd = c & d;
    const plane bcd = bc & d;
    r[0] = a ^ b ^ c ^ ac ^ bc ^ (ab & c) ^ d ^ bcd;
    r[1] = ab ^ ac ^ bc ^ d ^ bd ^ (ab & d);
    r[2] = ab ^ c ^ ac ^ d ^ ad ^ (ac & d);
    r[3] = b ^ c ^ d ^ ad ^ bd ^ cd ^ bcd;
}

/* The S-box on all 64 bytes of p. */
static void sbox_planes(plane p[8])
{
    plane u[8], v[8], d[4], t[4], e[4];
    affine(u, p, sm4_tower_in, SM4_TOWER_IN_CONST);
    const plane *al = u, *ah = u + 4;
    /* d = lambda·ah^2 + ah·al + al^2 */
    gf16_sqr(t, ah);
    gf16_mul_const(d, t, SM4_TOWER_LAMBDA);
    gf16_mul(t, ah, al);
    for (int i = 0; i < 4; i++)
        d[i] ^= t[i];
    gf16_sqr(t, al);
    for (int i = 0; i < 4; i++)
        d[i] ^= t[i];
    gf16_inv(e, d); /* 0 -> 0, as the S-box needs */
    /* (ah·e)·y + (ah + al)·e */
    gf16_mul(v + 4, ah, e);
    for (int i = 0; i < 4; i++)
        t[i] = ah[i] ^ al[i];
    gf16_mul(v, t, e);
    affine(p, v, sm4_tower_out, SM4_TOWER_OUT_CONST);
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

/* Byte j of w at bits 16 j .. 16 j + 7: bit b of byte j is then position
 * 16 j + b, which is lane 0's byte j of plane b shifted left by b. */
static uint64_t spread_bytes16(uint32_t w)
{
    uint64_t t = w;
    t = (t | (t << 16)) & 0x0000FFFF0000FFFFull;
    return (t | (t << 8)) & 0x00FF00FF00FF00FFull;
}

#define LANE0 0x0001000100010001ull /* lane 0's position in each byte j */

/* Words w[0..n-1] in lanes 0..n-1 (n <= LANES), every other lane 0: what
 * words_to_planes makes of them, a word at a time, which costs less than
 * its transposition for up to LANES_FEW words (key setup's tau, one CBC
 * chain's block, the keys of a multi-key call). */
#define LANES_FEW 8
static void words_to_planes_few(plane p[8], const uint32_t *w, size_t n)
{
    memset(p, 0, 8 * sizeof *p);
    for (size_t k = 0; k < n; k++) {
        const uint64_t s = spread_bytes16(w[k]);
        for (unsigned b = 0; b < 8; b++)
            p[b] |= ((s >> b) & LANE0) << k;
    }
}

/* Lane k's word of p (planes_to_words' w[k]). */
static uint32_t planes_to_word(const plane p[8], unsigned k)
{
    uint64_t s = 0;
    for (unsigned b = 0; b < 8; b++)
        s |= ((p[b] >> k) & LANE0) << b;
    s = (s | (s >> 8)) & 0x0000FFFF0000FFFFull;
    return (uint32_t)(s | (s >> 16));
}

/* The same round key in every lane: plane b, byte j is all ones where bit b
 * of byte j of rk is set (a subtraction, not a product, spreads lane 0's
 * bit over the 16 lanes: some cores multiply in data-dependent time). */
static void broadcast_planes(plane p[8], uint32_t rk)
{
    const uint64_t s = spread_bytes16(rk);
    for (unsigned b = 0; b < 8; b++) {
        const uint64_t m = (s >> b) & LANE0;
        p[b] = (m << 16) - m;
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
    /* a few blocks (one CBC chain's, a short message's): a lane at a time
     * costs less than the whole transposition (LANES_FEW) */
    const int few = n <= LANES_FEW;
    for (unsigned i = 0; i < 4; i++) {
        for (size_t k = 0; k < LANES; k++)
            w[k] = k < n ? load_be32(in + 16 * k + 4 * i) : 0;
        if (few)
            words_to_planes_few(x[i], w, n);
        else
            words_to_planes(x[i], w);
    }
    rounds_planes(x, rkp, dec);
    for (unsigned i = 0; i < 4; i++) {
        if (few)
            for (size_t k = 0; k < n; k++)
                w[k] = planes_to_word(x[3 - i], (unsigned)k);
        else
            planes_to_words(w, x[3 - i]);
        for (size_t k = 0; k < n; k++)
            store_be32(out + 16 * k + 4 * i, w[k]);
    }
    kuai_wipe(x, sizeof x);
    kuai_wipe(w, sizeof w);
}

static void round_key_planes(plane rkp[32][8], const sm4_sched *s)
{
    for (unsigned r = 0; r < 32; r++)
        broadcast_planes(rkp[r], s->rk[r]);
}

static void crypt_blocks(const sm4_sched *s, const uint8_t *in, uint8_t *out, size_t nblocks,
                         int dec)
{
    plane rkp[32][8];
    round_key_planes(rkp, s);
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

/*
 * The key schedule (standard, 7.3), written once for two ways of taking
 * tau, the S-box on each byte of a word. rk(i) = K(i+4) = K(i) ^ T'(K(i+1) ^
 * K(i+2) ^ K(i+3) ^ CK(i)), T' = L'(tau), L'(B) = B ^ (B <<< 13) ^ (B <<<
 * 23); the four K slots rotate as the X slots of the rounds do. tau NULL
 * (a constant at each call): the schedules of n <= SM4_REF_KS_LANES keys
 * side by side, key j's words in lane j of one bitsliced S-box a round for
 * all of them, as cheap as for one key; else one key through tau.
 */
#define SM4_REF_KS_LANES 4 /* expand4's */

static INLINE void schedule(sm4_sched *const *s, const uint8_t *const *key, size_t n,
                            uint32_t (*tau)(uint32_t))
{
    uint32_t k[SM4_REF_KS_LANES][4], a[SM4_REF_KS_LANES];
    plane p[8];
    for (size_t j = 0; j < n; j++)
        for (unsigned i = 0; i < 4; i++)
            k[j][i] = load_be32(key[j] + 4 * i) ^ sm4_fk[i];
    for (unsigned i = 0; i < 32; i++) {
        for (size_t j = 0; j < n; j++)
            a[j] = k[j][(i + 1) & 3] ^ k[j][(i + 2) & 3] ^ k[j][(i + 3) & 3] ^ sm4_ck(i);
        if (!tau) {
            words_to_planes_few(p, a, n);
            sbox_planes(p);
        }
        for (size_t j = 0; j < n; j++) {
            const uint32_t b = tau ? tau(a[j]) : planes_to_word(p, (unsigned)j);
            k[j][i & 3] ^= b ^ rotl32(b, 13) ^ rotl32(b, 23);
            s[j]->rk[i] = k[j][i & 3];
        }
    }
    kuai_wipe(k, sizeof k);
    kuai_wipe(a, sizeof a);
    if (!tau)
        kuai_wipe(p, sizeof p);
}

static void expand_lanes(sm4_sched *const *s, const uint8_t *const *key, size_t n)
{
    schedule(s, key, n, NULL);
}

void sm4_expand_raw(sm4_sched *s, const uint8_t key[16])
{
    expand_lanes(&s, &key, 1);
}

void sm4_expand_with(sm4_sched *s, const uint8_t key[16], uint32_t (*tau)(uint32_t))
{
    schedule(&s, &key, 1, tau);
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

/* kuai_key_init_multi: two and four keys in one pass (expand_lanes) */
static void sm4_ref_expand2(kuai_key *k0, kuai_key *k1, const uint8_t *key0, const uint8_t *key1)
{
    sm4_sched *s[2] = {sm4_sched_of(k0), sm4_sched_of(k1)};
    const uint8_t *key[2] = {key0, key1};
    expand_lanes(s, key, 2);
}

static void sm4_ref_expand4(kuai_key *const k[4], const uint8_t *const key[4])
{
    sm4_sched *s[4];
    for (int j = 0; j < 4; j++)
        s[j] = sm4_sched_of(k[j]);
    expand_lanes(s, key, 4);
}

static void sm4_ref_enc_blocks(const kuai_key *k, const uint8_t *in, uint8_t *out, size_t nblocks)
{
    crypt_blocks(sm4_sched_const(k), in, out, nblocks, 0);
}

static void sm4_ref_dec_blocks(const kuai_key *k, const uint8_t *in, uint8_t *out, size_t nblocks)
{
    crypt_blocks(sm4_sched_const(k), in, out, nblocks, 1);
}

/* CBC encryption: the round keys' planes made once for the call (not once
 * a block, as enc_blocks a block at a time would), then a block a pass, the
 * chain XORed in before it. in == out allowed: each block is read before
 * its ciphertext is written. */
static void sm4_ref_cbc_enc_blocks(const kuai_key *k, uint8_t *iv, const uint8_t *in, uint8_t *out,
                                   size_t nblocks)
{
    plane rkp[32][8];
    uint8_t b[16];
    round_key_planes(rkp, sm4_sched_const(k));
    const uint8_t *chain = iv;
    for (size_t i = 0; i < nblocks; i++) {
        for (unsigned j = 0; j < 16; j++)
            b[j] = in[16 * i + j] ^ chain[j];
        crypt_batch((const plane(*)[8])rkp, b, out + 16 * i, 1, 0);
        chain = out + 16 * i;
    }
    memmove(iv, chain, 16); /* the IV may be the caller's last output block */
    kuai_wipe(rkp, sizeof rkp);
    kuai_wipe(b, sizeof b);
}

/*
 * Multi-key: the lane format is the 32 round keys bitsliced with lane k's
 * key in lane k, the same transposition as the data. kuai_mk's bytes are
 * copied in and out rather than cast, so no alignment or aliasing question.
 */
#define SM4_REF_MK_LANES 8
_Static_assert(32 * 8 * sizeof(plane) <= KUAI_MK_BYTES, "SM4 lane keys must fit in kuai_mk");
_Static_assert(SM4_REF_MK_LANES <= LANES_FEW, "mk_setup takes the keys a lane at a time");

static void sm4_ref_mk_setup(kuai_mk *m, const kuai_key *const *keys, size_t n)
{
    plane rkp[32][8];
    uint32_t w[LANES];
    for (unsigned r = 0; r < 32; r++) {
        for (size_t k = 0; k < LANES; k++)
            w[k] = k < n ? sm4_sched_const(keys[k])->rk[r] : 0;
        words_to_planes_few(rkp[r], w, n);
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
    .expand2 = sm4_ref_expand2,
    .expand4 = sm4_ref_expand4,
    .sched_bytes = SM4_SCHED_BYTES,
    .enc_blocks = sm4_ref_enc_blocks,
    .dec_blocks = sm4_ref_dec_blocks,
    .cbc_enc_blocks = sm4_ref_cbc_enc_blocks,
    .ctr_blocks = NULL,
    .mk_lanes = SM4_REF_MK_LANES,
    .mk_setup = sm4_ref_mk_setup,
    .mk_bytes = 32 * 8 * sizeof(plane),
    .mk_enc = sm4_ref_mk_enc,
    .mk_dec = sm4_ref_mk_dec,
    /* as the SIMD backends' (SM4S_SLOTS_BLOCKS): 4 blocks a stream 0.95-0.99
     * of the single-key calls' time through the lanes, 5 blocks 1.17-1.46
     * (Xeon, Sapphire Rapids) */
    .mk_slots_blocks = 5,
};
