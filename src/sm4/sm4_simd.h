/* SPDX-License-Identifier: Apache-2.0 */
/*
 * SM4 on vectors of 32-bit words: the round structure, the transposition,
 * counter generation, tails and the multi-key lanes, written once over a
 * small vector vocabulary. Each ISA file (sm4_aesni.c, sm4_vaes.c,
 * sm4_gfni.c) defines that vocabulary and includes this header once.
 *
 * ---- What the ISA file defines -------------------------------------------
 *
 *   sm4v                vector type, SM4V_W 32-bit words (4, 8 or 16)
 *   sm4v_loadu/storeu   unaligned 16*SM4V_W/4-byte load and store
 *   sm4v_xor, sm4v_set1, sm4v_add32, sm4v_bswap32 (byte order of each word)
 *   sm4v_unpack{lo,hi}{32,64}   the in-lane unpacks (per 128-bit lane)
 *   sm4v_xor4(a, b, c, d)       a ^ b ^ c ^ d (d is the newest input)
 *   sm4v_round(x0, t)           x0 ^ L(tau(t)), the round's T on every word
 *   SM4V_DOMAIN (optional)      the rounds keep the state words in another
 *                               form: sm4v_dom_in(x) maps a word to it,
 *                               sm4v_dom_out(y) back, sm4v_dom_key(k) maps
 *                               a round key so that the four-input XOR of a
 *                               round gives the S-box what it needs, and
 *                               sm4v_round works on that form (see
 *                               sm4_aes_sbox.h); without it, all three are
 *                               the identity
 *   sm4v_round1 (optional, SM4V_HAS_ROUND1)   sm4v_round with one word in
 *                               every lane (CBC encryption's broadcast)
 *   sm4v_pin(x) (optional)      x, with the XOR tree it ends kept as
 *                               written (compilers re-associate)
 *   sm4v_ctr(x, w, off)         counter words, see sm4s_ctr_pass
 *   sm4v_lane_blocks()          the block index of every word position,
 *                               see the layout below
 *   SM4S_G, SM4S_MK_G           groups per full pass, per multi-key pass
 *
 * ---- Layout ----------------------------------------------------------------
 *
 * A "group" is SM4V_W blocks in four vectors x[0..3]; x[j] holds word j
 * (X_j of the standard, read big-endian) of every block of the group, so a
 * round is the same few instructions on whole vectors and the S-box works
 * on 4 * SM4V_W bytes at once. The group is loaded as four vectors of
 * SM4V_W / 4 consecutive blocks (one block per 128-bit lane) and transposed
 * 4x4 inside each 128-bit lane, so word position p of x[j] (lane p / 4,
 * slot p % 4) holds the block
 *
 *     (p % 4) * SM4V_W / 4 + p / 4          of the group.
 *
 * The transposition is its own inverse, so the output goes back the same
 * way. Only counter generation and the multi-key lane keys need the map,
 * and both take it from sm4v_lane_blocks().
 *
 * A pass runs SM4S_G groups round by round, interleaved, so the long
 * dependency chain of one round (S-box, L, XOR) of one group overlaps the
 * others'; SM4S_G * SM4V_W blocks are in flight.
 */
#ifndef KUAI_SM4_SIMD_H
#define KUAI_SM4_SIMD_H

#include "../bytes.h"
#include "sm4.h"

#include <string.h>

#define SM4S_INLINE static inline __attribute__((always_inline))
#ifndef SM4S_PASS_ATTR
#define SM4S_PASS_ATTR __attribute__((noinline)) KUAI_HOT_ALIGN
#endif

#ifndef sm4v_pin
#define sm4v_pin(x) (x)
#endif

#ifndef SM4V_DOMAIN
#define sm4v_dom_in(x) (x)
#define sm4v_dom_out(y) (y)
#define sm4v_dom_key(k) (k)
#endif

/* The four words of a group (or of the one-shot lanes) into the rounds'
 * form (the key schedule's words: sm4s_key_start). */
SM4S_INLINE void sm4s_dom_in4(sm4v x[4])
{
    for (int j = 0; j < 4; j++)
        x[j] = sm4v_dom_in(x[j]);
}
/* Another backend's function by its prefix (SM4S_SHORT_FROM,
 * SM4S_EXPAND_FROM below). */
#define SM4S_PASTE(a, b) a##b
#define SM4S_FROM(p, name) SM4S_PASTE(p, name)
/* What src/modes/multi.c hands mk_short: streams of one block. Two to four
 * blocks a stream fill the multi-key kernel's lanes; from five the streams
 * go one by one through the single-key calls (kuai_impl.mk_slots_blocks).
 * kuai_ecb_encrypt_multi against the single-key calls stream by stream, 9
 * streams (Xeon, Sapphire Rapids; 2 and 33 streams in docs/performance.md),
 * 4 / 5 / 8 blocks a stream: gfni 0.80 / 0.86 / 1.40, vaes 0.69 / 0.78 /
 * 1.25, aesni 0.98 / 0.82 / 1.37; at 12 blocks up to 1.9. */
#define SM4S_MK_SHORT_BLOCKS 2
#define SM4S_SLOTS_BLOCKS 5
#define SM4S_BLOCK 16
/* Bytes of one vector, of one group. */
#define SM4S_VB (4 * SM4V_W)
#define SM4S_GB (SM4V_W * SM4S_BLOCK)

/* Four vectors of whole blocks' words (a: blocks 0.., b: the next, ...) to
 * x[j] = word j of every block: a 4x4 transposition of 32-bit words. */
SM4S_INLINE void sm4s_words(sm4v x[4], sm4v a, sm4v b, sm4v c, sm4v d)
{
    sm4v ab_lo = sm4v_unpacklo32(a, b), ab_hi = sm4v_unpackhi32(a, b);
    sm4v cd_lo = sm4v_unpacklo32(c, d), cd_hi = sm4v_unpackhi32(c, d);
    x[0] = sm4v_unpacklo64(ab_lo, cd_lo);
    x[1] = sm4v_unpackhi64(ab_lo, cd_lo);
    x[2] = sm4v_unpacklo64(ab_hi, cd_hi);
    x[3] = sm4v_unpackhi64(ab_hi, cd_hi);
}

#if SM4V_W == 4
/* the block at p (k is 1: a vector holds one block) */
#define sm4v_load_blocks(p, k) ((void)(k), sm4v_loadu(p))
#endif

/*
 * The first nblocks blocks at in into buf, nvec vectors of it (whole
 * groups), zeros after, each vector's bytes stored at once: the passes load
 * buf a vector at a time, and a load gets its bytes from the store buffer
 * only where one store wrote them all. memcpy's stores of the blocks alone
 * made those loads wait for them to reach the cache: SM4 ECB of 1-3 blocks
 * on gfni (zmm, 4 blocks a vector) 281 -> 235 TSC cycles (Xeon, Sapphire
 * Rapids).
 */
SM4S_INLINE void sm4s_buf_in(uint8_t *buf, const uint8_t *in, size_t nblocks, size_t nvec)
{
    enum { BPV = SM4V_W / 4 }; /* blocks a vector */
    for (size_t j = 0; j < nvec; j++) {
        const size_t have = nblocks > j * BPV ? nblocks - j * BPV : 0;
        sm4v_storeu(buf + j * SM4S_VB,
                    have ? sm4v_load_blocks(in + j * SM4S_VB, have < BPV ? have : BPV)
                         : sm4v_zero());
    }
}

/* Load one group (SM4V_W blocks) as x[0..3] = words X0..X3. */
SM4S_INLINE void sm4s_load(sm4v x[4], const uint8_t *in)
{
    sm4v a = sm4v_bswap32(sm4v_loadu(in)), b = sm4v_bswap32(sm4v_loadu(in + SM4S_VB));
    sm4v c = sm4v_bswap32(sm4v_loadu(in + 2 * SM4S_VB));
    sm4v d = sm4v_bswap32(sm4v_loadu(in + 3 * SM4S_VB));
    sm4s_words(x, a, b, c, d);
    sm4s_dom_in4(x);
}

/* After 32 rounds slot j holds X(32 + j); the output is the reverse
 * transformation R: (X35, X34, X33, X32). Back to blocks in r[0..3]. */
SM4S_INLINE void sm4s_to_blocks(sm4v r[4], const sm4v y[4])
{
    sm4v x[4];
    for (int j = 0; j < 4; j++)
        x[j] = sm4v_dom_out(y[j]);
    sm4v ab_lo = sm4v_unpacklo32(x[3], x[2]), ab_hi = sm4v_unpackhi32(x[3], x[2]);
    sm4v cd_lo = sm4v_unpacklo32(x[1], x[0]), cd_hi = sm4v_unpackhi32(x[1], x[0]);
    r[0] = sm4v_bswap32(sm4v_unpacklo64(ab_lo, cd_lo));
    r[1] = sm4v_bswap32(sm4v_unpackhi64(ab_lo, cd_lo));
    r[2] = sm4v_bswap32(sm4v_unpacklo64(ab_hi, cd_hi));
    r[3] = sm4v_bswap32(sm4v_unpackhi64(ab_hi, cd_hi));
}

SM4S_INLINE void sm4s_store(uint8_t *out, const sm4v x[4])
{
    sm4v r[4];
    sm4s_to_blocks(r, x);
    for (int i = 0; i < 4; i++)
        sm4v_storeu(out + i * SM4S_VB, r[i]);
}

/* out = in ^ (the blocks of x): CTR. */
SM4S_INLINE void sm4s_store_xor(uint8_t *out, const uint8_t *in, const sm4v x[4])
{
    sm4v r[4];
    sm4s_to_blocks(r, x);
    for (int i = 0; i < 4; i++)
        sm4v_storeu(out + i * SM4S_VB, sm4v_xor(r[i], sm4v_loadu(in + i * SM4S_VB)));
}

/*
 * 32 rounds on G groups: X(i+4) = X(i) ^ T(X(i+1) ^ X(i+2) ^ X(i+3) ^ rk(i))
 * (standard, 7.1), written over X(i) so the four slots rotate and slot j
 * ends as X(32 + j). Round keys: kp points at round 0's key (the last one
 * when decrypting) and moves by kstep words per round. Single key (mk = 0):
 * kp[0] is broadcast. Multi-key (mk = 1): kp holds G vectors of per-lane
 * keys, one per group, SM4V_W words apart.
 */
SM4S_INLINE void sm4s_round_groups(sm4v x[][4], int G, int i, const uint32_t *kp, int mk)
{
    const sm4v k1 = sm4v_dom_key(sm4v_set1(kp[0]));
    for (int g = 0; g < G; g++) {
        sm4v k = mk ? sm4v_dom_key(sm4v_loadu(kp + g * SM4V_W)) : k1;
        sm4v t = sm4v_xor4(x[g][(i + 1) & 3], x[g][(i + 2) & 3], k, x[g][(i + 3) & 3]);
        x[g][i] = sm4v_round(x[g][i], t);
    }
}

/* Four rounds per iteration, written out so that every slot index is a
 * constant and the state can live in registers. */
SM4S_INLINE void sm4s_rounds(sm4v x[][4], int G, const uint32_t *kp, ptrdiff_t kstep, int mk)
{
    for (int r = 0; r < 32; r += 4) {
        sm4s_round_groups(x, G, 0, kp, mk);
        sm4s_round_groups(x, G, 1, kp + kstep, mk);
        sm4s_round_groups(x, G, 2, kp + 2 * kstep, mk);
        sm4s_round_groups(x, G, 3, kp + 3 * kstep, mk);
        kp += 4 * kstep;
    }
}

/* One pass of G groups over G * SM4V_W whole blocks. */
SM4S_INLINE void sm4s_crypt_pass(int G, const uint32_t *kp, ptrdiff_t kstep, int mk,
                                 const uint8_t *in, uint8_t *out)
{
    sm4v x[SM4S_G > SM4S_MK_G ? SM4S_G : SM4S_MK_G][4];
    for (int g = 0; g < G; g++)
        sm4s_load(x[g], in + g * SM4S_GB);
    sm4s_rounds(x, G, kp, kstep, mk);
    for (int g = 0; g < G; g++)
        sm4s_store(out + g * SM4S_GB, x[g]);
}

/*
 * Out-of-line passes of SM4S_G, SM4S_G / 2, ..., 1 groups (SM4S_G is a power
 * of two). A call takes as many of the widest as fit and then at most one of
 * each narrower width, so a remainder (a CBC-decryption chunk of 64 blocks,
 * say) still has several groups in flight.
 */
#define SM4S_DEFINE_PASS(G)                                                                        \
    static SM4S_PASS_ATTR void sm4s_pass_##G(const uint32_t *kp, ptrdiff_t kstep,                  \
                                             const uint8_t *in, uint8_t *out)                      \
    {                                                                                              \
        sm4s_crypt_pass(G, kp, kstep, 0, in, out);                                                 \
    }                                                                                              \
    static void sm4s_ctr_##G(const uint32_t *rk, uint64_t hi, uint64_t lo, const uint8_t *in,      \
                             uint8_t *out)                                                         \
    {                                                                                              \
        sm4s_ctr_pass(G, rk, hi, lo, in, out);                                                     \
    }

_Static_assert(SM4S_G == 1 || SM4S_G == 2 || SM4S_G == 4 || SM4S_G == 8 || SM4S_G == 16,
               "SM4S_G must be a power of two up to 16");

static void sm4s_pass_g(int G, const uint32_t *kp, ptrdiff_t kstep, const uint8_t *in,
                        uint8_t *out);
static void sm4s_ctr_g(int G, const uint32_t *rk, uint64_t hi, uint64_t lo, const uint8_t *in,
                       uint8_t *out);

/*
 * The pass for what is left of a call after its whole passes of SM4S_G
 * groups: the blocks' groups rounded up to one pass of 1, 2 or 4 groups
 * (zero-padded through a buffer where the blocks fill part of it), or,
 * for more than 4 groups, the widest whole pass that fits and then again.
 * Passes of few groups wait on their rounds' chain, so a padded one costs
 * about what its whole one does, where a part group after whole ones was a
 * pass more: SM4 ECB, TSC cycles, 5-7 blocks on aesni 767 -> 562, 9-15 on
 * vaes 798-830 -> 615, 17-31 on gfni 460-467 -> 315-323 (Xeon, Sapphire
 * Rapids class; docs/performance.md).
 */
static size_t sm4s_rest_groups(size_t nblocks)
{
    const size_t groups = (nblocks + SM4V_W - 1) / SM4V_W;
    if (groups <= 4)
        return groups <= 1 ? 1 : groups <= 2 ? 2 : 4;
    size_t g = SM4S_G / 2;
    while (g * SM4V_W > nblocks)
        g /= 2;
    return g;
}

/* One pass of g (2 or 4) groups over nblocks, fewer than fill it, through
 * a zero-padded buffer: out of line, so that its frame is no part of the
 * calls that do not come here (SM4 ECB of 1-8 blocks on gfni 240 -> 260
 * TSC cycles when it was) */
static __attribute__((noinline)) void sm4s_pass_padded(int g, const uint32_t *kp, ptrdiff_t kstep,
                                                       const uint8_t *in, uint8_t *out,
                                                       size_t nblocks)
{
    uint8_t buf[4 * SM4S_GB];
    sm4s_buf_in(buf, in, nblocks, 4 * (size_t)g);
    sm4s_pass_g(g, kp, kstep, buf, buf);
    copy_blocks16(out, buf, nblocks); /* bytes.h: not rep movsq */
    kuai_wipe(buf, (size_t)g * SM4S_GB);
}

/* nblocks under the round keys kp[0], kp[kstep], ... kp[31 * kstep]. */
static void sm4s_crypt_rk(const uint32_t *kp, ptrdiff_t kstep, const uint8_t *in, uint8_t *out,
                          size_t nblocks)
{
    for (; nblocks >= (size_t)SM4S_G * SM4V_W; nblocks -= (size_t)SM4S_G * SM4V_W) {
        sm4s_pass_g(SM4S_G, kp, kstep, in, out);
        in += (size_t)SM4S_G * SM4S_GB;
        out += (size_t)SM4S_G * SM4S_GB;
    }
    while (nblocks > SM4V_W) {
        const size_t g = sm4s_rest_groups(nblocks), n = g * SM4V_W;
        if (nblocks < n) {
            sm4s_pass_padded((int)g, kp, kstep, in, out, nblocks);
            return;
        }
        sm4s_pass_g((int)g, kp, kstep, in, out);
        in += n * SM4S_BLOCK;
        out += n * SM4S_BLOCK;
        nblocks -= n;
    }
    if (nblocks == SM4V_W) {
        sm4s_pass_g(1, kp, kstep, in, out);
    } else if (nblocks) {
        /* the vector loads and stores take whole groups: a buffer */
        uint8_t buf[SM4S_GB];
        sm4s_buf_in(buf, in, nblocks, 4);
        sm4s_pass_g(1, kp, kstep, buf, buf);
        copy_blocks16(out, buf, nblocks); /* bytes.h: not rep movsq */
        kuai_wipe(buf, sizeof buf);
    }
}

static void sm4s_crypt_blocks(const kuai_key *k, const uint8_t *in, uint8_t *out, size_t nblocks,
                              int dec)
{
    const uint32_t *rk = sm4_sched_const(k)->rk;
    sm4s_crypt_rk(dec ? rk + 31 : rk, dec ? -1 : 1, in, out, nblocks);
}

static void sm4s_enc_blocks(const kuai_key *k, const uint8_t *in, uint8_t *out, size_t nblocks)
{
    sm4s_crypt_blocks(k, in, out, nblocks, 0);
}

static void sm4s_dec_blocks(const kuai_key *k, const uint8_t *in, uint8_t *out, size_t nblocks)
{
    sm4s_crypt_blocks(k, in, out, nblocks, 1);
}

/* ---- CTR ------------------------------------------------------------------ */

static uint64_t sm4s_load_be64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = v << 8 | p[i];
    return v;
}

static void sm4s_store_be64(uint8_t *p, uint64_t v)
{
    for (int i = 7; i >= 0; i--) {
        p[i] = (uint8_t)v;
        v >>= 8;
    }
}

/*
 * One CTR pass of G groups: the counter blocks are made directly in the
 * transposed form (a block read big-endian is the counter's four words, so
 * x[j] = word j of ctr + block index, the carries propagated per lane by
 * sm4v_ctr), encrypted, and XORed into in. (hi, lo) is the counter of the
 * pass's first block.
 */
SM4S_INLINE void sm4s_ctr_pass(int G, const uint32_t *rk, uint64_t hi, uint64_t lo,
                               const uint8_t *in, uint8_t *out)
{
    sm4v x[SM4S_G][4];
    const uint32_t w[4] = {(uint32_t)(hi >> 32), (uint32_t)hi, (uint32_t)(lo >> 32), (uint32_t)lo};
    sm4v lane_blocks = sm4v_lane_blocks();
    for (int g = 0; g < G; g++) {
        sm4v_ctr(x[g], w, sm4v_add32(lane_blocks, sm4v_set1((uint32_t)(g * SM4V_W))));
        sm4s_dom_in4(x[g]);
    }
    sm4s_rounds(x, G, rk, 1, 0);
    for (int g = 0; g < G; g++)
        sm4s_store_xor(out + g * SM4S_GB, in + g * SM4S_GB, x[g]);
}

/* The 128-bit counter (hi, lo) += n, mod 2^128, without a branch. */
#define SM4S_CTR_ADD(hi, lo, n)                                                                    \
    do {                                                                                           \
        uint64_t sm4s_old_ = (lo);                                                                 \
        (lo) += (n);                                                                               \
        (hi) += (uint64_t)((lo) < sm4s_old_);                                                      \
    } while (0)

static void sm4s_ctr_blocks(const kuai_key *k, uint8_t *ctr, const uint8_t *in, uint8_t *out,
                            size_t nblocks)
{
    const uint32_t *rk = sm4_sched_const(k)->rk;
    uint64_t hi = sm4s_load_be64(ctr), lo = sm4s_load_be64(ctr + 8);
    for (; nblocks >= (size_t)SM4S_G * SM4V_W; nblocks -= (size_t)SM4S_G * SM4V_W) {
        sm4s_ctr_g(SM4S_G, rk, hi, lo, in, out);
        SM4S_CTR_ADD(hi, lo, (uint64_t)SM4S_G * SM4V_W);
        in += (size_t)SM4S_G * SM4S_GB;
        out += (size_t)SM4S_G * SM4S_GB;
    }
    while (nblocks) { /* as sm4s_crypt_rk's rest */
        const size_t g = sm4s_rest_groups(nblocks), n = g * SM4V_W;
        if (nblocks >= n) {
            sm4s_ctr_g((int)g, rk, hi, lo, in, out);
            SM4S_CTR_ADD(hi, lo, (uint64_t)n);
            in += n * SM4S_BLOCK;
            out += n * SM4S_BLOCK;
            nblocks -= n;
            continue;
        }
        uint8_t buf[4 * SM4S_GB];
        sm4s_buf_in(buf, in, nblocks, 4 * g);
        sm4s_ctr_g((int)g, rk, hi, lo, buf, buf);
        copy_blocks16(out, buf, nblocks); /* bytes.h: not rep movsq */
        kuai_wipe(buf, g * SM4S_GB);
        SM4S_CTR_ADD(hi, lo, (uint64_t)nblocks);
        break;
    }
    sm4s_store_be64(ctr, hi);
    sm4s_store_be64(ctr + 8, lo);
}

/* The pass functions of every width up to SM4S_G, and their dispatch. */
#if SM4S_G >= 16
SM4S_DEFINE_PASS(16)
#endif
#if SM4S_G >= 8
SM4S_DEFINE_PASS(8)
#endif
#if SM4S_G >= 4
SM4S_DEFINE_PASS(4)
#endif
#if SM4S_G >= 2
SM4S_DEFINE_PASS(2)
#endif
SM4S_DEFINE_PASS(1)

#define SM4S_DISPATCH(G, fn, ...)                                                                  \
    switch (G) {                                                                                   \
        SM4S_CASE_16(fn, __VA_ARGS__)                                                              \
        SM4S_CASE_8(fn, __VA_ARGS__)                                                               \
        SM4S_CASE_4(fn, __VA_ARGS__)                                                               \
        SM4S_CASE_2(fn, __VA_ARGS__)                                                               \
    default:                                                                                       \
        fn##1(__VA_ARGS__);                                                                        \
    }
#if SM4S_G >= 16
#define SM4S_CASE_16(fn, ...)                                                                      \
    case 16:                                                                                       \
        fn##16(__VA_ARGS__);                                                                       \
        break;
#else
#define SM4S_CASE_16(fn, ...)
#endif
#if SM4S_G >= 8
#define SM4S_CASE_8(fn, ...)                                                                       \
    case 8:                                                                                        \
        fn##8(__VA_ARGS__);                                                                        \
        break;
#else
#define SM4S_CASE_8(fn, ...)
#endif
#if SM4S_G >= 4
#define SM4S_CASE_4(fn, ...)                                                                       \
    case 4:                                                                                        \
        fn##4(__VA_ARGS__);                                                                        \
        break;
#else
#define SM4S_CASE_4(fn, ...)
#endif
#if SM4S_G >= 2
#define SM4S_CASE_2(fn, ...)                                                                       \
    case 2:                                                                                        \
        fn##2(__VA_ARGS__);                                                                        \
        break;
#else
#define SM4S_CASE_2(fn, ...)
#endif

static void sm4s_pass_g(int G, const uint32_t *kp, ptrdiff_t kstep, const uint8_t *in, uint8_t *out)
{
    SM4S_DISPATCH(G, sm4s_pass_, kp, kstep, in, out)
}

static void sm4s_ctr_g(int G, const uint32_t *rk, uint64_t hi, uint64_t lo, const uint8_t *in,
                       uint8_t *out)
{
    SM4S_DISPATCH(G, sm4s_ctr_, rk, hi, lo, in, out)
}

/* ---- multi-key ------------------------------------------------------------ */

/*
 * Lane keys in kuai_mk: for round r and group g, one vector of SM4V_W words
 * at word (r * G + g) * SM4V_W, word position p holding the round key of
 * the block at that position (block g * SM4V_W + lane_blocks[p]). Lanes
 * beyond n get key 0 and zero data, and are not stored.
 */
#define SM4S_MK_WORDS(G) (32 * (G)*SM4V_W)
_Static_assert(SM4S_MK_WORDS(SM4S_MK_G) * 4 <= KUAI_MK_BYTES, "SM4 lane keys must fit in kuai_mk");

SM4S_INLINE void sm4s_mk_setup_g(int G, uint8_t *lk, const kuai_key *const *keys, size_t n)
{
    uint32_t lane_blocks[SM4V_W];
    sm4v_storeu(lane_blocks, sm4v_lane_blocks());
    /* Each word stored where the passes read it: gathered into a vector
     * of words first and copied, every copy was a vector load of words
     * just stored one by one, which waits for those stores to reach the
     * cache (no store forwarding) */
    for (int r = 0; r < 32; r++) {
        for (int g = 0; g < G; g++) {
            uint8_t *dst = lk + 4 * ((size_t)(r * G + g) * SM4V_W);
            for (int p = 0; p < SM4V_W; p++) {
                size_t b = (size_t)g * SM4V_W + lane_blocks[p];
                const uint32_t w = b < n ? sm4_sched_const(keys[b])->rk[r] : 0;
                memcpy(dst + 4 * p, &w, 4);
            }
        }
    }
}

/* The lane keys are read with unaligned loads straight out of lk, in
 * kuai_mk's b (char storage, accessed through uint32_t only by the vector
 * load intrinsics, which may alias). */
SM4S_INLINE void sm4s_mk_crypt_g(int G, const uint8_t *lk, const uint8_t *in, uint8_t *out,
                                 size_t n, int dec)
{
    uint8_t buf[SM4S_MK_G * SM4S_GB];
    size_t used = (size_t)G * SM4S_GB;
    const uint32_t *lanes = (const uint32_t *)(const void *)lk;
    ptrdiff_t kstep = (ptrdiff_t)G * SM4V_W;
    sm4s_buf_in(buf, in, n, 4 * (size_t)G);
    if (dec)
        sm4s_crypt_pass(G, lanes + 31 * kstep, -kstep, 1, buf, buf);
    else
        sm4s_crypt_pass(G, lanes, kstep, 1, buf, buf);
    copy_blocks16(out, buf, n);
    kuai_wipe(buf, used);
}

/*
 * Groups for the next pass of a batch of n blocks: the fewest (a power of
 * two) that hold them, unless that pass would leave two groups or more
 * empty (5 or 6 groups' blocks in a pass of 8): then the largest power of
 * two below, the rest in a pass of its own after it (4 + 1, 4 + 2). A
 * pass costs about what its groups cost, used or not. ECB of 5 streams x
 * 4 blocks (aesni, Xeon) took 1.36 the single-key calls one by one as one
 * pass of 8 groups, 1.08 as 4 + 1; 6 x 3 1.11 and 6 x 4 1.16 as one pass,
 * 0.88 and 1.05 as 4 + 2. 7 groups as 4 + 2 + 1, and 3 as 2 + 1, measured
 * slower than one pass of 8 or of 4 (gfni-avx 3 x 3: 1.22 against 1.02).
 * setup and crypt see the same n.
 */
static int sm4s_mk_groups(size_t n)
{
    const size_t k = (n + SM4V_W - 1) / SM4V_W;
    int G = 1;
    while ((size_t)G < k && G < SM4S_MK_G)
        G *= 2;
    if ((size_t)G >= k + 2)
        G /= 2;
    return G;
}

/* Constant G in every call, so each width gets its own unrolled body. */
#define SM4S_MK_SWITCH(G_, call)                                                                   \
    switch (G_) {                                                                                  \
    case 1: {                                                                                      \
        enum { G = 1 };                                                                            \
        call;                                                                                      \
    } break;                                                                                       \
    case 2: {                                                                                      \
        enum { G = 2 < SM4S_MK_G ? 2 : SM4S_MK_G };                                                \
        call;                                                                                      \
    } break;                                                                                       \
    case 4: {                                                                                      \
        enum { G = 4 < SM4S_MK_G ? 4 : SM4S_MK_G };                                                \
        call;                                                                                      \
    } break;                                                                                       \
    default: {                                                                                     \
        enum { G = SM4S_MK_G };                                                                    \
        call;                                                                                      \
    } break;                                                                                       \
    }

/* One pass of g groups, lane keys at lk. Out of line: the passes' bodies
 * inlined into the batch's loop made the one-pass batches slower (vaes,
 * 5 streams x 3 blocks: 1,100 -> 1,300 TSC cycles). */
static __attribute__((noinline)) void sm4s_mk_setup_pass(int g, uint8_t *lk,
                                                         const kuai_key *const *keys, size_t n)
{
    SM4S_MK_SWITCH(g, sm4s_mk_setup_g(G, lk, keys, n))
}
static __attribute__((noinline)) void
sm4s_mk_crypt_pass(int g, const uint8_t *lk, const uint8_t *in, uint8_t *out, size_t n, int dec)
{
    SM4S_MK_SWITCH(g, sm4s_mk_crypt_g(G, lk, in, out, n, dec))
}

/* The passes of a batch, in order: (*g) groups for the next of the left
 * blocks, and how many of them it takes. Each pass's lane keys follow the
 * last one's in kuai_mk, which holds SM4S_MK_G groups' (no batch has
 * more). */
static size_t sm4s_mk_next(size_t left, int *g)
{
    *g = sm4s_mk_groups(left);
    return left < (size_t)*g * SM4V_W ? left : (size_t)*g * SM4V_W;
}
static void sm4s_mk_setup(kuai_mk *m, const kuai_key *const *keys, size_t n)
{
    int g;
    for (size_t done = 0, at = 0, nb; done < n; done += nb, at += 4 * SM4S_MK_WORDS((size_t)g)) {
        nb = sm4s_mk_next(n - done, &g);
        sm4s_mk_setup_pass(g, m->b + at, keys + done, nb);
    }
}
static void sm4s_mk_crypt(const kuai_mk *m, const uint8_t *in, uint8_t *out, size_t n, int dec)
{
    int g;
    for (size_t done = 0, at = 0, nb; done < n; done += nb, at += 4 * SM4S_MK_WORDS((size_t)g)) {
        nb = sm4s_mk_next(n - done, &g);
        sm4s_mk_crypt_pass(g, m->b + at, in + SM4S_BLOCK * done, out + SM4S_BLOCK * done, nb, dec);
    }
}
static void sm4s_mk_enc(const kuai_mk *m, const uint8_t *in, uint8_t *out, size_t n)
{
    sm4s_mk_crypt(m, in, out, n, 0);
}
static void sm4s_mk_dec(const kuai_mk *m, const uint8_t *in, uint8_t *out, size_t n)
{
    sm4s_mk_crypt(m, in, out, n, 1);
}

/* The narrow multi-key kernel: one group, for batches of at most SM4V_W. */
static void sm4s_mk1_setup(kuai_mk *m, const kuai_key *const *keys, size_t n)
{
    sm4s_mk_setup_g(1, m->b, keys, n);
}
static void sm4s_mk1_enc(const kuai_mk *m, const uint8_t *in, uint8_t *out, size_t n)
{
    sm4s_mk_crypt_g(1, m->b, in, out, n, 0);
}
static void sm4s_mk1_dec(const kuai_mk *m, const uint8_t *in, uint8_t *out, size_t n)
{
    sm4s_mk_crypt_g(1, m->b, in, out, n, 1);
}

/*
 * CBC encryption: each block needs the ciphertext before it, so only the
 * latency of one block's 32 rounds counts. The block's words are broadcast
 * into x[0..3] (every lane computes the same block), which skips the
 * transposition and the pass machinery, and the chain stays in the rounds'
 * form from block to block: with dom_key the linear part of dom_in, the
 * next block's word j is the last block's output word 3 - j XORed with
 * dom_key of the plaintext word (which the chain does not wait for), so
 * between two blocks' rounds the chain is one XOR; the ciphertext leaves
 * through dom_out beside the next block's rounds. The round keys are put
 * in that form once per call, on the stack (wiped at the end): made in the
 * loop, their tables took registers that the rounds then spilled.
 */
#ifndef SM4V_HAS_ROUND1
#define sm4v_round1 sm4v_round /* the round of one word in every lane */
#endif

SM4S_INLINE void sm4s_round1(sm4v x[4], int j, sm4v k)
{
    sm4v t = sm4v_pin(sm4v_xor(sm4v_xor(x[(j + 1) & 3], x[(j + 2) & 3]), k));
    x[j] = sm4v_round1(x[j], sm4v_xor(t, x[(j + 3) & 3]));
}

#ifndef SM4S_SHORT_FROM
static void sm4s_cbc_enc_blocks(const kuai_key *k, uint8_t *iv, const uint8_t *in, uint8_t *out,
                                size_t nblocks)
{
    const uint32_t *rk = sm4_sched_const(k)->rk;
    uint32_t w[SM4V_W];
    sm4v y[4]; /* the last ciphertext's words (X35, X34, X33, X32) in the rounds' form */
#ifdef SM4V_DOMAIN
    sm4v kd[32];
    for (int r = 0; r < 32; r++)
        kd[r] = sm4v_dom_key(sm4v_set1(rk[r]));
#define SM4S_CBC_KEY(r) kd[r]
#else
#define SM4S_CBC_KEY(r) sm4v_set1(rk[r])
#endif
    for (int j = 0; j < 4; j++)
        y[3 - j] = sm4v_dom_in(sm4v_set1(load_be32(iv + 4 * j)));
    for (size_t b = 0; b < nblocks; b++, in += SM4S_BLOCK, out += SM4S_BLOCK) {
        sm4v x[4];
        for (int j = 0; j < 4; j++)
            x[j] = sm4v_xor(y[3 - j], sm4v_dom_key(sm4v_set1(load_be32(in + 4 * j))));
        for (int r = 0; r < 32; r += 4) {
            sm4s_round1(x, 0, SM4S_CBC_KEY(r));
            sm4s_round1(x, 1, SM4S_CBC_KEY(r + 1));
            sm4s_round1(x, 2, SM4S_CBC_KEY(r + 2));
            sm4s_round1(x, 3, SM4S_CBC_KEY(r + 3));
        }
        for (int j = 0; j < 4; j++) { /* R: (X35, X34, X33, X32) */
            y[j] = x[j];
            sm4v_storeu(w, sm4v_dom_out(x[3 - j]));
            store_be32(out + 4 * j, w[0]);
        }
    }
    for (int j = 0; j < 4; j++) {
        sm4v_storeu(w, sm4v_dom_out(y[3 - j]));
        store_be32(iv + 4 * j, w[0]);
    }
#ifdef SM4V_DOMAIN
    kuai_wipe(kd, sizeof kd);
#endif
#undef SM4S_CBC_KEY
}
#endif

#ifdef SM4S_ONESHOT
/*
 * One-shot ECB (src/modes/oneshot.c; an ISA file defines SM4S_ONESHOT to
 * offer it): no kuai_key. Up to SM4V_W keys at a time run their schedules
 * side by side, one key per word (the key schedule's round is the
 * cipher's with L' for L), which costs about what one key's costs. With
 * one block per key, encryption feeds each round key from that vector to
 * the blocks' round at once, so the two dependency chains run beside each
 * other and nothing is stored; so does one key with up to SM4V_W blocks
 * (every word of the key vector holds its key). Decryption (round keys
 * last to first) and longer messages store the round keys (one key's 128
 * bytes, or the key vectors' 512, wiped at the end) and run the ECB
 * kernel, or the one-block lanes backwards, over them.
 */
_Static_assert(SM4V_W == 4, "the one-shot lanes load one 16-byte key or block per word");

/* x[j] = word j (big-endian) of the 16 bytes at p[0..3], one per word. */
SM4S_INLINE void sm4s_load_lanes(sm4v x[4], const uint8_t *const p[4])
{
    sm4v a = sm4v_bswap32(sm4v_loadu(p[0])), b = sm4v_bswap32(sm4v_loadu(p[1]));
    sm4v c = sm4v_bswap32(sm4v_loadu(p[2])), d = sm4v_bswap32(sm4v_loadu(p[3]));
    sm4s_words(x, a, b, c, d);
}

/* The first m of the four blocks in x, block p to out[p]. */
SM4S_INLINE void sm4s_store_lanes(uint8_t *const out[4], const sm4v x[4], size_t m)
{
    sm4v r[4];
    sm4s_to_blocks(r, x);
    for (size_t p = 0; p < m; p++)
        sm4v_storeu(out[p], r[p]);
}

/*
 * The key schedule's words: in the blocks' rounds' form too where the
 * S-box header says so (SM4V_KEY_DOMAIN: sm4v_round_key works on it), so
 * that its rounds are as shallow as the blocks'. sm4s_key_start: the key
 * words K ^ FK into the schedule's form; sm4s_key_ck: CK(i) as a round
 * adds it (a table of them measured no faster);
 * sm4s_key_x: a round key back to the standard's rk; sm4s_key_blk: a round
 * key as the blocks' rounds add it (sm4v_dom_key of rk; in the Y form of
 * sm4_aes_sbox.h, Q·rk = y ^ q, q being the form of 0).
 */
#ifdef SM4V_KEY_DOMAIN
#define sm4s_key_ck(i) sm4v_dom_key(sm4v_set1(sm4_ck(i)))
#define sm4s_key_x(y) sm4v_dom_out(y)
#define sm4s_key_blk(y) sm4v_xor(y, sm4v_dom_in(sm4v_zero()))
#else
#define sm4s_key_ck(i) sm4v_set1(sm4_ck(i))
#define sm4s_key_x(k) (k)
#define sm4s_key_blk(k) sm4v_dom_key(k)
#endif

SM4S_INLINE void sm4s_key_start(sm4v k[4])
{
    for (int j = 0; j < 4; j++) {
        k[j] = sm4v_xor(k[j], sm4v_set1(sm4_fk[j]));
#ifdef SM4V_KEY_DOMAIN
        k[j] = sm4v_dom_in(k[j]);
#endif
    }
}

/* Key schedule round i on the key vectors k (K(i) .. K(i+3) in slots
 * i & 3 ...), j = i & 3; returns rk(i) of every word in the schedule's
 * form. same: one key in every word (sm4v_round_key). The callers write
 * four rounds out (sm4s_key_rounds4, sm4s_os_enc) so that j is a constant
 * and k lives in registers: with j computed, the slots went through the
 * stack, a store and a load on the schedule's chain every round. The
 * newest slot, K(i+3), is XORed in last, one XOR from the chain. */
SM4S_INLINE sm4v sm4s_key_round(sm4v k[4], int j, int i, int same)
{
    sm4v t = sm4v_xor(sm4v_xor(k[(j + 1) & 3], k[(j + 2) & 3]), sm4s_key_ck((unsigned)i));
    k[j] = sm4v_round_key(k[j], sm4v_xor(t, k[(j + 3) & 3]), same);
    return k[j];
}

/* Rounds r .. r + 3 (r a multiple of 4), their round keys (the
 * standard's) to rk. */
SM4S_INLINE void sm4s_key_rounds4(sm4v k[4], int r, sm4v rk[4], int same)
{
    rk[0] = sm4s_key_x(sm4s_key_round(k, 0, r, same));
    rk[1] = sm4s_key_x(sm4s_key_round(k, 1, r + 1, same));
    rk[2] = sm4s_key_x(sm4s_key_round(k, 2, r + 2, same));
    rk[3] = sm4s_key_x(sm4s_key_round(k, 3, r + 3, same));
}

/* The blocks' round j (a constant) under the round keys kb (sm4v_dom_key
 * of the standard's, sm4s_key_blk of the schedule's). */
SM4S_INLINE void sm4s_block_round(sm4v x[4], int j, sm4v kb)
{
    sm4v t = sm4v_xor4(x[(j + 1) & 3], x[(j + 2) & 3], kb, x[(j + 3) & 3]);
    x[j] = sm4v_round(x[j], t);
}

/* Encryption, round keys made between the rounds: the blocks x under the
 * keys whose K(0..3) words are k. */
SM4S_INLINE void sm4s_os_enc(sm4v x[4], sm4v k[4], int same)
{
    for (int r = 0; r < 32; r += 4) {
        sm4s_block_round(x, 0, sm4s_key_blk(sm4s_key_round(k, 0, r, same)));
        sm4s_block_round(x, 1, sm4s_key_blk(sm4s_key_round(k, 1, r + 1, same)));
        sm4s_block_round(x, 2, sm4s_key_blk(sm4s_key_round(k, 2, r + 2, same)));
        sm4s_block_round(x, 3, sm4s_key_blk(sm4s_key_round(k, 3, r + 3, same)));
    }
}

static void sm4s_oneshot(kuai_cipher c, const uint8_t *const *keys, const uint8_t *const *in,
                         uint8_t *const *out, size_t n, size_t nblocks, int enc)
{
    (void)c;
    uint32_t rkw[32][SM4V_W], rk1[32]; /* round i of key p: rkw[i][p] */
    int stored = 0, stored1 = 0;
    for (size_t g = 0; g < n; g += SM4V_W) {
        const size_t m = n - g < SM4V_W ? n - g : SM4V_W;
        const uint8_t *kp[4], *ip[4];
        uint8_t *op[4];
        for (size_t p = 0; p < 4; p++) {
            kp[p] = keys[g + (p < m ? p : 0)]; /* a spare word repeats the first key */
            ip[p] = in[g + (p < m ? p : 0)];
            op[p] = out[g + (p < m ? p : 0)];
        }
        sm4v k[4], x[4];
        sm4s_load_lanes(k, kp);
        sm4s_key_start(k);
        if (enc && m == 1 && nblocks <= 4) {
            /* one key in every word; its blocks, the last repeated */
            const uint8_t *bp[4];
            for (size_t b = 0; b < 4; b++)
                bp[b] = in[g] + SM4S_BLOCK * (b < nblocks ? b : nblocks - 1);
            uint8_t *const *dst = out + g;
            uint8_t *bo[4];
            for (size_t b = 0; b < 4; b++)
                bo[b] = dst[0] + SM4S_BLOCK * b;
            sm4s_load_lanes(x, bp);
            sm4s_dom_in4(x);
            sm4s_os_enc(x, k, 1);
            sm4s_store_lanes(bo, x, nblocks);
            continue;
        }
        if (enc && nblocks == 1) {
            sm4s_load_lanes(x, ip);
            sm4s_dom_in4(x);
            sm4s_os_enc(x, k, 0);
            sm4s_store_lanes(op, x, m);
            continue;
        }
        if (m == 1 && nblocks > 1) {
            /* one key: its 32 words only, as key setup stores them */
            for (int r = 0; r < 32; r += 4) {
                sm4v rk[4];
                sm4s_key_rounds4(k, r, rk, 1);
                for (int j = 0; j < 4; j++)
                    rk1[r + j] = sm4v_word0(rk[j]);
            }
            stored1 = 1;
            sm4s_crypt_rk(enc ? rk1 : rk1 + 31, enc ? 1 : -1, in[g], out[g], nblocks);
            continue;
        }
        for (int r = 0; r < 32; r += 4) {
            sm4v rk[4];
            sm4s_key_rounds4(k, r, rk, 0);
            for (int j = 0; j < 4; j++)
                sm4v_storeu(rkw[r + j], rk[j]);
        }
        stored = 1;
        if (nblocks == 1) {
            sm4s_load_lanes(x, ip);
            sm4s_dom_in4(x);
            for (int r = 0; r < 32; r += 4) {
                sm4s_block_round(x, 0, sm4v_dom_key(sm4v_loadu(rkw[enc ? r : 31 - r])));
                sm4s_block_round(x, 1, sm4v_dom_key(sm4v_loadu(rkw[enc ? r + 1 : 30 - r])));
                sm4s_block_round(x, 2, sm4v_dom_key(sm4v_loadu(rkw[enc ? r + 2 : 29 - r])));
                sm4s_block_round(x, 3, sm4v_dom_key(sm4v_loadu(rkw[enc ? r + 3 : 28 - r])));
            }
            sm4s_store_lanes(op, x, m);
            continue;
        }
        for (size_t p = 0; p < m; p++)
            sm4s_crypt_rk(enc ? &rkw[0][p] : &rkw[31][p], enc ? SM4V_W : -SM4V_W, in[g + p],
                          out[g + p], nblocks);
    }
    if (stored)
        kuai_wipe(rkw, sizeof rkw);
    if (stored1)
        kuai_wipe(rk1, sizeof rk1);
}

/*
 * Multi-key ECB and CBC decryption of one block a stream (kuai_impl's
 * mk_short, src/modes/multi.c): four streams at a time, one per word, as
 * the one-shot call's blocks. Their round keys come from the stored
 * schedules, four rounds of four keys at a time turned into four vectors
 * of one round each (sm4s_words) beside the blocks' rounds: nothing is
 * copied to a buffer, so nothing is left to wipe. Spare words rerun the
 * group's first stream, whose result is not stored. ivs: CBC decryption,
 * each stream's block XORed with its ivs[i], which then takes the
 * ciphertext. A stream of several blocks would run them one group pass
 * each; src/modes/multi.c sends only single blocks (SM4S_MK_SHORT_BLOCKS).
 */
static void sm4s_mk_short(const kuai_key *const *keys, uint8_t *const *ivs,
                          const uint8_t *const *in, uint8_t *const *out, size_t n, size_t nblocks,
                          int enc)
{
    for (size_t g = 0; g < n; g += SM4V_W) {
        const size_t m = n - g < SM4V_W ? n - g : SM4V_W;
        const uint32_t *rk[4];
        for (size_t p = 0; p < 4; p++)
            rk[p] = sm4_sched_const(keys[g + (p < m ? p : 0)])->rk;
        /* block t of every stream (nblocks < SM4S_MK_SHORT_BLOCKS; 0 too) */
        for (size_t t = 0; t < nblocks; t++) {
            const uint8_t *ip[4];
            for (size_t p = 0; p < 4; p++)
                ip[p] = in[g + (p < m ? p : 0)] + SM4S_BLOCK * t;
            sm4v x[4], w[4], r[4];
            sm4s_load_lanes(x, ip);
            sm4s_dom_in4(x);
            for (int i = 0; i < 32; i += 4) {
                /* rounds i .. i + 3: rk[i..] forwards, rk[28 - i..] backwards */
                const int o = enc ? i : 28 - i;
                sm4s_words(w, sm4v_loadu(rk[0] + o), sm4v_loadu(rk[1] + o), sm4v_loadu(rk[2] + o),
                           sm4v_loadu(rk[3] + o));
                sm4s_block_round(x, 0, sm4v_dom_key(w[enc ? 0 : 3]));
                sm4s_block_round(x, 1, sm4v_dom_key(w[enc ? 1 : 2]));
                sm4s_block_round(x, 2, sm4v_dom_key(w[enc ? 2 : 1]));
                sm4s_block_round(x, 3, sm4v_dom_key(w[enc ? 3 : 0]));
            }
            sm4s_to_blocks(r, x);
            /* CBC: every lane's ciphertext read before any lane's output
             * is written (out may be in, its own or another stream's) */
            sm4v c[4];
            for (size_t p = 0; ivs && p < m; p++)
                c[p] = sm4v_loadu(ip[p]);
            for (size_t p = 0; p < m; p++) {
                if (ivs) {
                    r[p] = sm4v_xor(r[p], sm4v_loadu(ivs[g + p]));
                    sm4v_storeu(ivs[g + p], c[p]);
                }
                sm4v_storeu(out[g + p] + SM4S_BLOCK * t, r[p]);
            }
        }
    }
}

/* Key setup of n keys (1, 2 or 4), side by side, key p in word p (a pair
 * twice over), through the vector round: no trip between vector and scalar
 * registers and no call per round (sm4_expand_with's tau; about a tenth off
 * key setup on Zen 1), and four keys at about the cost of one
 * (kuai_key_init_multi's pairs and fours, src/core.c). Each key's four
 * round keys of a pass go back to its rk by a transposition (sm4s_words);
 * one key, in every word, by a move of word 0. */
SM4S_INLINE void sm4s_expand_n(kuai_key *const *k, const uint8_t *const *key, int n)
{
    const uint8_t *kp[4];
    for (int p = 0; p < 4; p++)
        kp[p] = key[p % n];
    sm4v kv[4];
    sm4s_load_lanes(kv, kp);
    sm4s_key_start(kv);
    uint32_t *rk0 = sm4_sched_of(k[0])->rk;
    for (int r = 0; r < 32; r += 4) {
        sm4v rkv[4], per[4];
        if (n == 1) {
            /* the schedule's form, word 0; back to rk four at a time below,
             * off the schedule's chain */
            for (int j = 0; j < 4; j++)
                rk0[r + j] = sm4v_word0(sm4s_key_round(kv, j, r + j, 1));
            continue;
        }
        sm4s_key_rounds4(kv, r, rkv, 0);
        sm4s_words(per, rkv[0], rkv[1], rkv[2], rkv[3]);
        for (int p = 0; p < n; p++)
            sm4v_storeu(sm4_sched_of(k[p])->rk + r, per[p]);
    }
#ifdef SM4V_KEY_DOMAIN
    if (n == 1)
        for (int r = 0; r < 32; r += 4)
            sm4v_storeu(rk0 + r, sm4s_key_x(sm4v_loadu(rk0 + r)));
#endif
}

static void sm4s_expand2(kuai_key *k0, kuai_key *k1, const uint8_t *key0, const uint8_t *key1)
{
    kuai_key *const k[2] = {k0, k1};
    const uint8_t *const key[2] = {key0, key1};
    sm4s_expand_n(k, key, 2);
}

static void sm4s_expand4(kuai_key *const k[4], const uint8_t *const key[4])
{
    sm4s_expand_n(k, key, 4);
}

#define SM4S_SHORT_HOOKS                                                                           \
    , .oneshot = sm4s_oneshot, .mk_short = sm4s_mk_short, .mk_short_blocks = SM4S_MK_SHORT_BLOCKS
#define SM4S_CBC_ENC sm4s_cbc_enc_blocks
#define SM4S_MULTI_SETUP_HOOKS , .expand2 = sm4s_expand2, .expand4 = sm4s_expand4
/* The short calls and key setup under P's names, for a wider backend to
 * take (sm4.h's SM4_SHORT_API). sm4s_expand is defined below. */
static void sm4s_expand(kuai_key *k, const uint8_t *key);
#define SM4S_SHORT_EXPORT(P)                                                                       \
    void P##_oneshot(kuai_cipher c, const uint8_t *const *keys, const uint8_t *const *in,          \
                     uint8_t *const *out, size_t n, size_t nblocks, int enc)                       \
    {                                                                                              \
        sm4s_oneshot(c, keys, in, out, n, nblocks, enc);                                           \
    }                                                                                              \
    void P##_mk_short(const kuai_key *const *keys, uint8_t *const *ivs, const uint8_t *const *in,  \
                      uint8_t *const *out, size_t n, size_t nblocks, int enc)                      \
    {                                                                                              \
        sm4s_mk_short(keys, ivs, in, out, n, nblocks, enc);                                        \
    }                                                                                              \
    void P##_cbc_enc(const kuai_key *k, uint8_t *iv, const uint8_t *in, uint8_t *out,              \
                     size_t nblocks)                                                               \
    {                                                                                              \
        sm4s_cbc_enc_blocks(k, iv, in, out, nblocks);                                              \
    }                                                                                              \
    void P##_expand(kuai_key *k, const uint8_t *key)                                               \
    {                                                                                              \
        sm4s_expand(k, key);                                                                       \
    }                                                                                              \
    void P##_expand2(kuai_key *k0, kuai_key *k1, const uint8_t *key0, const uint8_t *key1)         \
    {                                                                                              \
        sm4s_expand2(k0, k1, key0, key1);                                                          \
    }                                                                                              \
    void P##_expand4(kuai_key *const k[4], const uint8_t *const key[4])                            \
    {                                                                                              \
        sm4s_expand4(k, key);                                                                      \
    }
#elif defined(SM4S_SHORT_FROM)
/* SM4S_ONESHOT_BLOCKS (optional): the most blocks a stream the one-shot
 * hook takes on this backend, where its wide kernel wins beyond (0:
 * src/modes/oneshot.c's 32) */
#ifndef SM4S_ONESHOT_BLOCKS
#define SM4S_ONESHOT_BLOCKS 0
#endif
/* A wide backend takes another's short calls (its lanes are not 4 words):
 * SM4S_SHORT_FROM is that backend's prefix (sm4.h; see sm4_vaes.c). CBC
 * encryption too: one chain's block in every word of a wider register is
 * no faster (Xeon, Emerald Rapids: a 1 KiB chain 17,061 TSC cycles on
 * gfni-avx's xmm against 17,337 on gfni's zmm) and its round keys, kept on
 * the stack in the rounds' form, are 512 bytes to wipe instead of 1-2 KiB. */
/* Its lanes, though, beat the short hook's passes of 4 streams from the
 * fifth stream on: kuai_ecb_encrypt_multi of n streams x 1 block, TSC
 * cycles, hook / lanes (Xeon, Sapphire Rapids): gfni 5 598 / 515, 16 1,240
 * / 775, 33 2,786 / 1,866; vaes 5 795 / 633, 16 1,580 / 1,117. (The 4-word
 * backends' lanes win only at some counts, by up to 6%, and lose by up to
 * 15% at others: they keep the hook for every count.) */
#define SM4S_SHORT_HOOKS                                                                           \
    , .oneshot = SM4S_FROM(SM4S_SHORT_FROM, _oneshot), .oneshot_blocks = SM4S_ONESHOT_BLOCKS,      \
      .mk_short = SM4S_FROM(SM4S_SHORT_FROM, _mk_short), .mk_short_blocks = SM4S_MK_SHORT_BLOCKS,  \
      .mk_short_streams = 4
#define SM4S_CBC_ENC SM4S_FROM(SM4S_SHORT_FROM, _cbc_enc)
#else
#define SM4S_SHORT_HOOKS
#define SM4S_CBC_ENC sm4s_cbc_enc_blocks
#endif

/* SM4S_TAU: an ISA file may name its own S-box-on-a-word for key setup;
 * SM4S_EXPAND_FROM: another backend's key setup (the round keys are the
 * same words in every SM4 backend), the prefix of its _expand, _expand2
 * and _expand4 (sm4.h). */
#ifdef SM4S_EXPAND_FROM
#define SM4S_EXPAND_HOOKS                                                                          \
    .expand = SM4S_FROM(SM4S_EXPAND_FROM, _expand),                                                \
    .expand2 = SM4S_FROM(SM4S_EXPAND_FROM, _expand2),                                              \
    .expand4 = SM4S_FROM(SM4S_EXPAND_FROM, _expand4)
#else
#ifdef SM4S_MULTI_SETUP_HOOKS
#define SM4S_EXPAND_HOOKS .expand = sm4s_expand SM4S_MULTI_SETUP_HOOKS
#else
#define SM4S_EXPAND_HOOKS .expand = sm4s_expand
#endif
static void sm4s_expand(kuai_key *k, const uint8_t *key)
{
#ifdef SM4S_ONESHOT
    sm4s_expand_n(&k, &key, 1);
#elif defined(SM4S_TAU)
    sm4_expand_with(sm4_sched_of(k), key, SM4S_TAU);
#else
    sm4_expand_raw(sm4_sched_of(k), key);
#endif
}
#endif

/*
 * Each ISA file ends with SM4S_IMPLS(var, "name", priority, available): its
 * backend (registered: KUAI_REGISTER(var) on the line before),
 * and the one-pass multi-key kernel that backend hands small batches to
 * (a full pass costs the same whether its lanes are used or not).
 */
#define SM4S_IMPL_COMMON(label, prio, avail)                                                       \
    .name = label, .family = KUAI_FAMILY_SM4, .priority = prio, .available = avail,                \
    SM4S_EXPAND_HOOKS, .sched_bytes = SM4_SCHED_BYTES, .enc_blocks = sm4s_enc_blocks,              \
    .dec_blocks = sm4s_dec_blocks, .ctr_blocks = sm4s_ctr_blocks,                                  \
    .mk_slots_blocks = SM4S_SLOTS_BLOCKS, .cbc_enc_blocks = SM4S_CBC_ENC SM4S_SHORT_HOOKS

#define SM4S_IMPLS(var, label, prio, avail)                                                        \
    static const kuai_impl var##_narrow = {                                                        \
        SM4S_IMPL_COMMON(label, prio, avail), .mk_lanes = SM4V_W,     .mk_setup = sm4s_mk1_setup,  \
        .mk_bytes = SM4S_MK_WORDS(1) * 4,     .mk_enc = sm4s_mk1_enc, .mk_dec = sm4s_mk1_dec,      \
    };                                                                                             \
    const kuai_impl var = {                                                                        \
        SM4S_IMPL_COMMON(label, prio, avail),                                                      \
        .mk_lanes = SM4S_MK_G * SM4V_W,                                                            \
        .mk_setup = sm4s_mk_setup,                                                                 \
        .mk_bytes = SM4S_MK_WORDS(SM4S_MK_G) * 4,                                                  \
        .mk_enc = sm4s_mk_enc,                                                                     \
        .mk_dec = sm4s_mk_dec,                                                                     \
        .mk_narrow = &var##_narrow,                                                                \
    }

#endif
