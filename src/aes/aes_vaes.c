/* SPDX-License-Identifier: Apache-2.0 */
/*
 * AES, VAES + AVX2 backend: two blocks per ymm register, 8 registers (16
 * blocks) in flight for ECB, CBC decryption and CTR, and 32 multi-key
 * lanes in groups of 16. CBC encryption is bound by one block's latency,
 * which wider registers do not shorten: it is the AES-NI one. Compiled
 * with -mavx2 -mvaes -maes for this file only; chosen at run time.
 */
#include "../ghash/ghash.h"
#include "aes_ni_xmm.h"
#include "aes_x86.h"

#define AESY_INLINE static inline __attribute__((always_inline))
/* ymm registers in flight: 16 blocks. With 8 blocks (4 registers) a VAES
 * core with two AES units and a 4-cycle latency would idle half the time. */
#define AESY_V 8
/* AESY_PAIR_PASSES: 8 blocks of a call's tail go as two passes of 2
 * registers, not one of 4: gcc 12 kept a 4-register pass's blocks in a
 * stack array, written 16 bytes at a time and read 32 (each read waiting
 * for the writes to reach the cache): ECB of 8-15 AES-128 blocks took
 * 100-114 TSC cycles, 27-33 as two passes, which the core overlaps (Xeon,
 * Sapphire Rapids class). */
#define AESY_MK_GROUPS 2

#define aesy_loadu(p) _mm256_loadu_si256((const __m256i *)(const void *)(p))
#define aesy_storeu(p, x) _mm256_storeu_si256((__m256i *)(void *)(p), x)
/* Two blocks as two 16-byte loads, in a call's last passes (fewer than 16
 * blocks): a few-block call's input often comes straight from 16-byte
 * stores (GCM's batch, gcm.c's gcm_batch_blocks), which a 32-byte load
 * cannot take from the store buffer: it waits for them to reach the cache
 * (a 96-byte AES-128-GCM message 159-166 -> 148-151 TSC cycles; Xeon,
 * Sapphire Rapids class). Full passes keep 32-byte loads: split, a
 * 16-block ECB call took 45 cycles against 39. */
#define aesy_loadu2(p)                                                                             \
    _mm256_inserti128_si256(_mm256_castsi128_si256(aesx_loadu(p)),                                 \
                            aesx_loadu((const uint8_t *)(p) + 16), 1)

static int aes_vaes_available(void)
{
    /* built with -maes too: the compiler may use 128-bit AES-NI */
    unsigned need = KUAI_CPU_VAES | KUAI_CPU_AVX2 | KUAI_CPU_AESNI;
    return (kuai_cpu_features() & need) == need;
}

/* Round keys broadcast to both 128-bit lanes. */
AESY_INLINE void aesy_load_keys(__m256i *k, const uint8_t (*rk)[16], int nr)
{
    for (int r = 0; r <= nr; r++)
        k[r] = _mm256_broadcastsi128_si256(aesx_loadu(rk[r]));
}

/* Every round but the last: CTR and CBC decryption fold their data's XOR
 * into the last round's key (aesenclast/aesdeclast end with the key's
 * XOR). */
AESY_INLINE void aesy_enc_rounds(__m256i *b, int n, const __m256i *k, int nr)
{
    for (int i = 0; i < n; i++)
        b[i] = _mm256_xor_si256(b[i], k[0]);
    for (int r = 1; r < nr; r++)
        for (int i = 0; i < n; i++)
            b[i] = _mm256_aesenc_epi128(b[i], k[r]);
}

AESY_INLINE void aesy_dec_rounds(__m256i *b, int n, const __m256i *k, int nr)
{
    for (int i = 0; i < n; i++)
        b[i] = _mm256_xor_si256(b[i], k[0]);
    for (int r = 1; r < nr; r++)
        for (int i = 0; i < n; i++)
            b[i] = _mm256_aesdec_epi128(b[i], k[r]);
}

AESY_INLINE void aesy_enc_n(__m256i *b, int n, const __m256i *k, int nr)
{
    aesy_enc_rounds(b, n, k, nr);
    for (int i = 0; i < n; i++)
        b[i] = _mm256_aesenclast_epi128(b[i], k[nr]);
}

AESY_INLINE void aesy_dec_n(__m256i *b, int n, const __m256i *k, int nr)
{
    aesy_dec_rounds(b, n, k, nr);
    for (int i = 0; i < n; i++)
        b[i] = _mm256_aesdeclast_epi128(b[i], k[nr]);
}

/* n registers (2n blocks) from in to out. */
AESY_INLINE void aesy_crypt_n(const __m256i *k, int nr, int dec, int n, int split,
                              const uint8_t *in, uint8_t *out)
{
    __m256i b[AESY_V];
    for (int i = 0; i < n; i++)
        b[i] = split ? aesy_loadu2(in + 32 * i) : aesy_loadu(in + 32 * i);
    if (dec)
        aesy_dec_n(b, n, k, nr);
    else
        aesy_enc_n(b, n, k, nr);
    for (int i = 0; i < n; i++)
        aesy_storeu(out + 32 * i, b[i]);
}

/* ECB: 16 blocks at a time, then 8, 4, 2; an odd last block on xmm. */
/* aesy_crypt_blocks with the rows already broadcast, k[0..nr] */
AESY_INLINE void aesy_crypt_blocks_k(const __m256i *k, int nr, int dec, const uint8_t *in,
                                     uint8_t *out, size_t nblocks)
{
    for (; nblocks >= 2 * AESY_V; nblocks -= 2 * AESY_V, in += 32 * AESY_V, out += 32 * AESY_V)
        aesy_crypt_n(k, nr, dec, AESY_V, 0, in, out);
    if (nblocks & 8) { /* AESY_PAIR_PASSES */
        aesy_crypt_n(k, nr, dec, 2, 1, in, out);
        aesy_crypt_n(k, nr, dec, 2, 1, in + 64, out + 64);
        in += 128;
        out += 128;
    }
    if (nblocks & 4) {
        aesy_crypt_n(k, nr, dec, 2, 1, in, out);
        in += 64;
        out += 64;
    }
    if (nblocks & 2) {
        aesy_crypt_n(k, nr, dec, 1, 1, in, out);
        in += 32;
        out += 32;
    }
    if (nblocks & 1) {
        __m128i kx[AES_MAX_ROUNDS + 1];
        for (int r = 0; r <= nr; r++)
            kx[r] = _mm256_castsi256_si128(k[r]);
        aesx_crypt_n(kx, nr, dec, 1, in, out);
    }
}

AESY_INLINE void aesy_crypt_blocks(const uint8_t (*rk)[16], int nr, int dec, const uint8_t *in,
                                   uint8_t *out, size_t nblocks)
{
    __m256i k[AES_MAX_ROUNDS + 1];
    aesy_load_keys(k, rk, nr);
    aesy_crypt_blocks_k(k, nr, dec, in, out, nblocks);
}

static void aes_vaes_enc_blocks(const kuai_key *k, const uint8_t *in, uint8_t *out, size_t nblocks)
{
    const aes_sched *s = aes_sched_const(k);
    AESX_BY_NR(s->nr, aesy_crypt_blocks((const uint8_t(*)[16])s->rk, NR, 0, in, out, nblocks))
}

static void aes_vaes_dec_blocks(const kuai_key *k, const uint8_t *in, uint8_t *out, size_t nblocks)
{
    const aes_sched *s = aes_sched_const(k);
    AESX_BY_NR(s->nr, aesy_crypt_blocks((const uint8_t(*)[16])s->drk, NR, 1, in, out, nblocks))
}

/* ---- CBC decryption ------------------------------------------------------ */

/* n registers (2n blocks): decrypt, XOR with the ciphertext shifted by one
 * block (the register before's upper block, or prev for the first). The
 * XOR is folded into the last round's key (aesdeclast ends with the key's
 * XOR), and that ciphertext is read again rather than kept: 8 registers of
 * it beside the 8 of state and the round keys did not fit in 16, and gcc
 * spilled them to the stack every pass. The stores go last register
 * first, so with in == out a ciphertext block is overwritten only after
 * the register after it has read it. */
AESY_INLINE void aesy_cbc_dec_n(const __m256i *k, int nr, int n, __m128i *prev, const uint8_t *in,
                                uint8_t *out)
{
    __m256i b[AESY_V];
    for (int i = 0; i < n; i++)
        b[i] = aesy_loadu(in + 32 * i);
    __m128i last = _mm256_extracti128_si256(b[n - 1], 1);
    aesy_dec_rounds(b, n, k, nr);
    for (int i = n - 1; i > 0; i--)
        aesy_storeu(out + 32 * i, _mm256_aesdeclast_epi128(
                                      b[i], _mm256_xor_si256(k[nr], aesy_loadu(in + 32 * i - 16))));
    __m256i s0 = _mm256_inserti128_si256(_mm256_castsi128_si256(*prev), aesx_loadu(in), 1);
    aesy_storeu(out, _mm256_aesdeclast_epi128(b[0], _mm256_xor_si256(k[nr], s0)));
    *prev = last;
}

AESY_INLINE void aesy_cbc_dec(const uint8_t (*drk)[16], int nr, uint8_t *iv, const uint8_t *in,
                              uint8_t *out, size_t nblocks)
{
    __m256i k[AES_MAX_ROUNDS + 1];
    aesy_load_keys(k, drk, nr);
    __m128i prev = aesx_loadu(iv);
    for (; nblocks >= 2 * AESY_V; nblocks -= 2 * AESY_V, in += 32 * AESY_V, out += 32 * AESY_V)
        aesy_cbc_dec_n(k, nr, AESY_V, &prev, in, out);
    if (nblocks & 8) { /* AESY_PAIR_PASSES */
        aesy_cbc_dec_n(k, nr, 2, &prev, in, out);
        aesy_cbc_dec_n(k, nr, 2, &prev, in + 64, out + 64);
        in += 128;
        out += 128;
    }
    if (nblocks & 4) {
        aesy_cbc_dec_n(k, nr, 2, &prev, in, out);
        in += 64;
        out += 64;
    }
    if (nblocks & 2) {
        aesy_cbc_dec_n(k, nr, 1, &prev, in, out);
        in += 32;
        out += 32;
    }
    if (nblocks & 1) {
        __m128i kx[AES_MAX_ROUNDS + 1];
        for (int r = 0; r <= nr; r++)
            kx[r] = _mm256_castsi256_si128(k[r]);
        aesx_cbc_dec_n(kx, nr, 1, &prev, in, out);
    }
    aesx_storeu(iv, prev);
}

static void aes_vaes_cbc_dec_blocks(const kuai_key *k, uint8_t *iv, const uint8_t *in, uint8_t *out,
                                    size_t nblocks)
{
    const aes_sched *s = aes_sched_const(k);
    AESX_BY_NR(s->nr, aesy_cbc_dec((const uint8_t(*)[16])s->drk, NR, iv, in, out, nblocks))
}

/* ---- CTR: as aes_ni_xmm.h, two counters per register ---------------------- */

AESY_INLINE __m256i aesy_rev16(void)
{
    return _mm256_broadcastsi128_si256(aesx_rev16());
}

/* Counter blocks ctr + 0 .. ctr + 2n - 1 into b[0..n-1]. */
AESY_INLINE void aesy_ctr_make(__m256i *b, int n, uint64_t hi, uint64_t lo)
{
    const __m256i rev = aesy_rev16();
    if ((lo & 0xff) <= 0xff - (uint64_t)(2 * n - 1)) {
        /* No carry out of the counter's last byte in this pass: one
         * shuffle makes (ctr, ctr + 1), and each register is a byte add to
         * the big-endian blocks, not
         * a 64-bit add and a shuffle of its own */
        __m256i v = _mm256_shuffle_epi8(
            _mm256_set_epi64x((long long)hi, (long long)(lo + 1), (long long)hi, (long long)lo),
            rev);
        for (int i = 0; i < n; i++)
            b[i] = _mm256_add_epi8(v, _mm256_set_epi64x((long long)(uint64_t)(2 * i) << 56, 0,
                                                        (long long)(uint64_t)(2 * i) << 56, 0));
    } else if (lo <= UINT64_MAX - (uint64_t)(2 * n - 1)) {
        /* (lo, hi) in both lanes, lane 1 one ahead */
        __m256i v = _mm256_add_epi64(
            _mm256_set_epi64x((long long)hi, (long long)lo, (long long)hi, (long long)lo),
            _mm256_set_epi64x(0, 1, 0, 0));
        for (int i = 0; i < n; i++)
            b[i] = _mm256_shuffle_epi8(_mm256_add_epi64(v, _mm256_set_epi64x(0, 2 * i, 0, 2 * i)),
                                       rev);
    } else {
        for (int i = 0; i < n; i++) {
            uint64_t l0 = lo + (uint64_t)(2 * i), h0 = hi + (uint64_t)(l0 < lo);
            uint64_t l1 = l0 + 1, h1 = h0 + (uint64_t)(l1 < l0);
            b[i] = _mm256_shuffle_epi8(
                _mm256_set_epi64x((long long)h1, (long long)l1, (long long)h0, (long long)l0), rev);
        }
    }
}

/* n registers (a constant, 2n blocks) of keystream from (hi, lo) XORed
 * from in into out (in == out allowed). */
AESY_INLINE void aesy_ctr_pass(__m256i *b, int n, const __m256i *k, int nr, uint64_t hi,
                               uint64_t lo, const uint8_t *in, uint8_t *out)
{
    aesy_ctr_make(b, n, hi, lo);
    aesy_enc_rounds(b, n, k, nr);
    /* the input's XOR folded into the last round's key (aesenclast ends
     * with the key's XOR): off the blocks' chain */
    for (int i = 0; i < n; i++)
        aesy_storeu(out + 32 * i, _mm256_aesenclast_epi128(
                                      b[i], _mm256_xor_si256(k[nr], aesy_loadu(in + 32 * i))));
}

AESY_INLINE void aesy_ctr(const uint8_t (*rk)[16], int nr, uint8_t *ctr, const uint8_t *in,
                          uint8_t *out, size_t nblocks)
{
    __m256i k[AES_MAX_ROUNDS + 1];
    aesy_load_keys(k, rk, nr);
    uint64_t hi = load_be64(ctr), lo = load_be64(ctr + 8);
    __m256i b[AESY_V];
    for (; nblocks >= 2 * AESY_V; nblocks -= 2 * AESY_V, in += 32 * AESY_V, out += 32 * AESY_V) {
        aesy_ctr_pass(b, AESY_V, k, nr, hi, lo, in, out);
        AESX_CTR_ADD(hi, lo, 2 * AESY_V);
    }
    /* Up to 15 blocks, straight from in to out as ECB's: a pass for each
     * set bit (8 as two passes of 2 registers, AESY_PAIR_PASSES), the
     * last odd block on xmm. They ran as one pass of 1, 2, 4 or 8
     * registers through a stack buffer, whose 32-byte loads of 16-byte
     * stores waited for the stores to reach the cache (AES-128 on vaes: 1
     * block 46 TSC cycles against 41 for 2, 9-15 blocks 75-88 against 54
     * for 16; Xeon, Sapphire Rapids class). */
    for (int bit = 8; bit >= 2; bit >>= 1) {
        if (!(nblocks & (size_t)bit))
            continue;
        if (bit >= 4)
            aesy_ctr_pass(b, 2, k, nr, hi, lo, in, out);
        else
            aesy_ctr_pass(b, 1, k, nr, hi, lo, in, out);
        if (bit == 8) {
            AESX_CTR_ADD(hi, lo, 4);
            aesy_ctr_pass(b + 2, 2, k, nr, hi, lo, in + 64, out + 64);
            AESX_CTR_ADD(hi, lo, 4);
        } else {
            AESX_CTR_ADD(hi, lo, bit);
        }
        in += 16 * bit;
        out += 16 * bit;
    }
    if (nblocks & 1) {
        __m128i kx[AES_MAX_ROUNDS + 1], bx[1];
        for (int r = 0; r <= nr; r++)
            kx[r] = _mm256_castsi256_si128(k[r]);
        aesx_ctr_pass(bx, 1, kx, nr, hi, lo, in, out);
        AESX_CTR_ADD(hi, lo, 1);
    }
    store_be64(ctr, hi);
    store_be64(ctr + 8, lo);
}

void aes_vaes_ctr_blocks(const kuai_key *k, uint8_t *ctr, const uint8_t *in, uint8_t *out,
                         size_t nblocks)
{
    const aes_sched *s = aes_sched_const(k);
    AESX_BY_NR(s->nr, aesy_ctr((const uint8_t(*)[16])s->rk, NR, ctr, in, out, nblocks))
}

/* ---- multi-key: groups of 16 lanes, two per register ------------------------
 * The layout of aes_ni_xmm.h with 16 lanes per group: lanes 2j and 2j + 1
 * of a round are adjacent, one 256-bit load. */
#define AESY_GL (2 * AESY_V)

static void aes_vaes_mk_setup(kuai_mk *m, const kuai_key *const *keys, size_t n)
{
    aesx_mk_fill(m, keys, n, AESY_GL, AESY_MK_GROUPS);
}

AESY_INLINE void aesy_mk_group(const uint8_t *kp, int nr, int dec, __m256i *b)
{
#define AESY_MKK(r, i)                                                                             \
    _mm256_load_si256((const __m256i *)(const void *)(kp + 16 * ((r)*AESY_GL + 2 * (i))))
    for (int i = 0; i < AESY_V; i++)
        b[i] = _mm256_xor_si256(b[i], AESY_MKK(0, i));
    for (int r = 1; r < nr; r++)
        for (int i = 0; i < AESY_V; i++)
            b[i] = dec ? _mm256_aesdec_epi128(b[i], AESY_MKK(r, i))
                       : _mm256_aesenc_epi128(b[i], AESY_MKK(r, i));
    for (int i = 0; i < AESY_V; i++)
        b[i] = dec ? _mm256_aesdeclast_epi128(b[i], AESY_MKK(nr, i))
                   : _mm256_aesenclast_epi128(b[i], AESY_MKK(nr, i));
#undef AESY_MKK
}

AESY_INLINE void aesy_mk_crypt(const kuai_mk *m, int nr, int dec, const uint8_t *in, uint8_t *out,
                               size_t n)
{
    for (size_t g = 0; g * AESY_GL < n; g++) {
        size_t cnt = n - g * AESY_GL < AESY_GL ? n - g * AESY_GL : AESY_GL;
        const uint8_t *src = in + 16 * g * AESY_GL;
        uint8_t *dst = out + 16 * g * AESY_GL;
        uint8_t buf[16 * AESY_GL];
        if (cnt < AESY_GL) {
            memset(buf, 0, sizeof buf);
            memcpy(buf, src, 16 * cnt);
            src = buf;
            dst = buf;
        }
        __m256i b[AESY_V];
        for (int i = 0; i < AESY_V; i++)
            b[i] = aesy_loadu(src + 32 * i);
        aesy_mk_group(m->b + AESX_MK_OFF(AESY_GL, AESY_MK_GROUPS, dec, g, 0, 0), nr, dec, b);
        for (int i = 0; i < AESY_V; i++)
            aesy_storeu(dst + 32 * i, b[i]);
        if (cnt < AESY_GL) {
            memcpy(out + 16 * g * AESY_GL, buf, 16 * cnt);
            kuai_wipe(buf, sizeof buf);
        }
    }
}

static void aes_vaes_mk_enc(const kuai_mk *m, const uint8_t *in, uint8_t *out, size_t n)
{
    const aesx_mk_hdr *h = (const aesx_mk_hdr *)(const void *)m->b;
    AESX_BY_NR(h->nr, aesy_mk_crypt(m, NR, 0, in, out, n))
}

static void aes_vaes_mk_dec(const kuai_mk *m, const uint8_t *in, uint8_t *out, size_t n)
{
    const aesx_mk_hdr *h = (const aesx_mk_hdr *)(const void *)m->b;
    AESX_BY_NR(h->nr, aesy_mk_crypt(m, NR, 1, in, out, n))
}

/* Multi-key CBC encryption: 16 chains in 8 registers, lanes 2j and 2j + 1
 * sharing one; spare lanes rerun the group's first stream, as in
 * aesx_mk_cbc_enc. */
AESY_INLINE void aesy_mk_cbc_enc(const kuai_mk *m, int nr, uint8_t *ivs, const uint8_t *const *in,
                                 uint8_t *const *out, size_t n, size_t nblocks)
{
    for (size_t g = 0; g * AESY_GL < n; g++) {
        const uint8_t *kp = m->b + AESX_MK_OFF(AESY_GL, AESY_MK_GROUPS, 0, g, 0, 0);
        const uint8_t *ip[AESY_GL];
        uint8_t *op[AESY_GL];
        __m128i iv[AESY_GL];
        __m256i c[AESY_V];
        for (size_t i = 0; i < AESY_GL; i++) {
            size_t lane = g * AESY_GL + i < n ? g * AESY_GL + i : g * AESY_GL;
            ip[i] = in[lane];
            op[i] = out[lane];
            iv[i] = aesx_loadu(ivs + 16 * lane);
        }
        for (int j = 0; j < AESY_V; j++)
            c[j] = _mm256_set_m128i(iv[2 * j + 1], iv[2 * j]);
        for (size_t off = 0; off < 16 * nblocks; off += 16) {
            for (int j = 0; j < AESY_V; j++) {
                __m256i x =
                    _mm256_inserti128_si256(_mm256_castsi128_si256(aesx_loadu(ip[2 * j] + off)),
                                            aesx_loadu(ip[2 * j + 1] + off), 1);
                c[j] = _mm256_xor_si256(c[j], x);
            }
            aesy_mk_group(kp, nr, 0, c);
            for (int j = 0; j < AESY_V; j++) {
                aesx_storeu(op[2 * j] + off, _mm256_castsi256_si128(c[j]));
                aesx_storeu(op[2 * j + 1] + off, _mm256_extracti128_si256(c[j], 1));
            }
        }
        for (int j = 0; j < AESY_V; j++) {
            iv[2 * j] = _mm256_castsi256_si128(c[j]);
            iv[2 * j + 1] = _mm256_extracti128_si256(c[j], 1);
        }
        for (size_t i = 0; i < AESY_GL && g * AESY_GL + i < n; i++)
            aesx_storeu(ivs + 16 * (g * AESY_GL + i), iv[i]);
    }
}

static void aes_vaes_mk_cbc_enc(const kuai_mk *m, uint8_t *ivs, const uint8_t *const *in,
                                uint8_t *const *out, size_t n, size_t nblocks)
{
    const aesx_mk_hdr *h = (const aesx_mk_hdr *)(const void *)m->b;
    AESX_BY_NR(h->nr, aesy_mk_cbc_enc(m, NR, ivs, in, out, n, nblocks))
}

_Static_assert(AESX_MK_OFF(AESY_GL, AESY_MK_GROUPS, 2, 0, 0, 0) <= KUAI_MK_BYTES,
               "VAES multi-key lanes must fit in kuai_mk");

/* Two blocks per AES instruction: above AES-NI. Multi-key CBC encryption
 * takes the lanes (groups of 16, each pass as dear however few are used)
 * only for streams of 24 blocks or more and batches of 256 blocks or more
 * (2 streams of 128 blocks still take 1.12; 512 would lose 4 x 64's 0.67):
 * through the lanes against kuai_cbc_encrypt stream by stream (Xeon,
 * Sapphire Rapids), 2 streams x 12 / 64 / 256 blocks 4.10 / 1.29 / 1.00,
 * 3 x 48 / 64 1.01 / 0.91, 4 x 32 0.93, 6 x 24 0.79, 9 x 12 / 16 1.13 /
 * 0.87, 16 x 16 / 24 1.16 / 0.84, 33 x 16 / 24 1.11 / 0.81.
 * mk_short_blocks: AES-NI's multi-key blocks side by side
 * (aes_aesni_mk_short) for streams of 1-3 blocks; from 4 this backend's
 * single-key calls run two blocks an instruction and win (AES-256, 4
 * blocks a stream, 8 streams: 1.33 of them against 1.09 one by one). With
 * 1 / 2 / 3 blocks a stream, 8 streams of AES-128, ECB: 0.73 / 0.87 /
 * 1.08 (one by one 1.09 / 1.05 / 1.05), CBC decryption 0.64 / 0.73 / 0.82
 * (1.06 / 1.11 / 1.11). */
/* One-shot ECB (kuai_impl.oneshot): AES-NI's, except one key's
 * decryption and its encryption of more than 4 blocks
 * (aes_vaes_oneshot1). Encryption of up to 4 blocks this way measured
 * level in a loop of calls and 1.15-1.2x slower in a chain of dependent
 * ones: AES-NI's makes each row into the blocks' round as it is made.
 * From 5 blocks the rows are stored either way, and two blocks an
 * instruction win (Zen 4, one key's 8 blocks: AES-128 122 -> 101 TSC
 * cycles, AES-256 146 -> 117; docs/performance.md). */
static void aes_vaes_oneshot1_enc(kuai_cipher c, const uint8_t *key, const uint8_t *in,
                                  uint8_t *out, size_t nblocks);
static void aes_vaes_oneshot1_dec(kuai_cipher c, const uint8_t *key, const uint8_t *in,
                                  uint8_t *out, size_t nblocks);
/* The stack its frame used, overwritten after it where its kernel leaves
 * copies of the rows there: after 16 blocks or more (the loop of
 * 2 x AESY_V, whose registers gcc fills from kb and spills; the suite's
 * search found 9-14 rows), not below (kb is read in place). Its frame is
 * about 1 KiB (kb, 32-byte aligned, and the rows), and 1 KiB left one
 * piece of AES-256's at its bottom: 1.5 KiB. In make test-shim's build,
 * whose C stand-ins for VAES spill far more, always and all that
 * kuai_wipe_stack reaches (3 rows were left 1 KiB below the 1 KiB
 * overwrite there). */
#ifdef KUAI_ISA_SHIM_H
#define AES_VAES_ONESHOT1_WIPE_ALWAYS 1
#define AES_VAES_ONESHOT1_STACK KUAI_WIPE_STACK_MAX
#else
#define AES_VAES_ONESHOT1_WIPE_ALWAYS 0
#define AES_VAES_ONESHOT1_STACK 1536
#endif
static void aes_vaes_oneshot(kuai_cipher c, const uint8_t *const *keys, const uint8_t *const *in,
                             uint8_t *const *out, size_t n, size_t nblocks, int enc)
{
    /* a function of its own below: its frame (aligned for ymm) had cost
     * every other call 2-4 TSC cycles */
    if (n == 1 && (!enc || nblocks > 4)) {
        if (enc)
            aes_vaes_oneshot1_enc(c, keys[0], in[0], out[0], nblocks);
        else
            aes_vaes_oneshot1_dec(c, keys[0], in[0], out[0], nblocks);
        if (AES_VAES_ONESHOT1_WIPE_ALWAYS || nblocks >= 2 * AESY_V)
            kuai_wipe_stack(AES_VAES_ONESHOT1_STACK);
    } else
        aes_aesni_oneshot(c, keys, in, out, n, nblocks, enc);
}

/* aesx_dec_short_wiping on ymm (NB 1..4): two blocks an instruction, the
 * row broadcast from drk[r] and drk[r] zeroed once read. Zen 4, TSC
 * cycles, scripts/bench-ab, one key's 4 blocks: 72-73 (AES-128), 78
 * (192), 92-93 (256), where the xmm form took 75, 81-82 and 145-146 here
 * (its rows then read at offsets of the stack pointer: see
 * aesni_os_dec1_short). */
AESY_INLINE void aesy_dec_short_wiping(uint8_t (*drk)[16], int nr, const uint8_t *in, uint8_t *out,
                                       int NB)
{
    __m256i b[2];
    const int nv = NB > 2 ? 2 : 1;
    for (int v = 0; v < nv; v++)
        b[v] = 2 * v + 1 < NB ? aesy_loadu2(in + 32 * v)
                              : _mm256_zextsi128_si256(aesx_loadu(in + 32 * v));
    for (int r = 0; r <= nr; r++) {
        const __m256i k = _mm256_broadcastsi128_si256(aesx_loadu(drk[r]));
        *(volatile __m128i_u *)(void *)drk[r] = _mm_setzero_si128();
        for (int v = 0; v < nv; v++)
            b[v] = r == 0   ? _mm256_xor_si256(b[v], k)
                   : r < nr ? _mm256_aesdec_epi128(b[v], k)
                            : _mm256_aesdeclast_epi128(b[v], k);
    }
    for (int v = 0; v < nv; v++) {
        if (2 * v + 1 < NB)
            aesy_storeu(out + 32 * v, b[v]);
        else
            aesx_storeu(out + 32 * v, _mm256_castsi256_si128(b[v]));
    }
}

/* One key's decryption, and its encryption of more than 4 blocks: its
 * rows (drk or rk) on the stack; decryption of 1-4 blocks by
 * aesy_dec_short_wiping, which zeroes the rows as it reads them (one key's
 * 4 blocks 102-103 -> 73-74 TSC cycles for AES-128, 115 -> 79 for 192,
 * 137 -> 93 for 256, both link orders: Zen 4, scripts/bench-ab; key setup
 * and decryption 65-66, 72-74, 80-81); more blocks, either way, two an
 * instruction
 * (aesy_crypt_blocks_k), the rows wiped. AES-NI's one block an
 * instruction had taken 1.10-1.15x the time (Xeon, Emerald Rapids;
 * docs/performance.md). The rows broadcast into kb, an array of this
 * frame the kernel reads and the wipe clears, not into aesy_crypt_blocks'
 * own, whose registers gcc spilled to slots no wipe could name: with kb,
 * fewer than 16 blocks leave no copy and need no stack overwrite, and one
 * AES-128 key's 4 blocks took 154 -> 120 TSC cycles (Zen 3). */
AESY_INLINE void aes_vaes_oneshot1_body(kuai_cipher c, const uint8_t *key, const uint8_t *in,
                                        uint8_t *out, size_t nblocks, int enc)
{
    const unsigned nk = c == KUAI_AES_128 ? 4 : c == KUAI_AES_192 ? 6 : 8;
    uint8_t rows[AES_MAX_ROUNDS + 1][16];
    aes_aesni_rows(nk, key, enc ? rows : NULL, enc ? NULL : rows);
    if (!enc && nblocks <= 4) {
        uint8_t(*d)[16] = rows; /* as aesni_os_dec1_short's */
        __asm__("" : "+r"(d));
        AESX_BY_NB4(nblocks, nk + 6, aesy_dec_short_wiping(d, NR, in, out, NB))
        return;
    }
    __m256i kb[AES_MAX_ROUNDS + 1];
    AESX_BY_NR(nk + 6, aesy_load_keys(kb, (const uint8_t(*)[16])rows, NR))
    kuai_wipe(rows, sizeof rows);
    AESX_BY_NR(nk + 6, aesy_crypt_blocks_k(kb, NR, !enc, in, out, nblocks))
    kuai_wipe(kb, sizeof kb);
}

/* enc a constant in each: with it a variable, one key's decryption of
 * 8-32 blocks took 1.03-1.06x the TSC cycles (Zen 4, scripts/bench-ab) */
__attribute__((noinline)) static void aes_vaes_oneshot1_enc(kuai_cipher c, const uint8_t *key,
                                                            const uint8_t *in, uint8_t *out,
                                                            size_t nblocks)
{
    aes_vaes_oneshot1_body(c, key, in, out, nblocks, 1);
}

__attribute__((noinline)) static void aes_vaes_oneshot1_dec(kuai_cipher c, const uint8_t *key,
                                                            const uint8_t *in, uint8_t *out,
                                                            size_t nblocks)
{
    aes_vaes_oneshot1_body(c, key, in, out, nblocks, 0);
}

KUAI_REGISTER(aes_vaes);
const kuai_impl aes_vaes = {
    .name = "vaes",
    .family = KUAI_FAMILY_AES,
    .priority = 300,
    .available = aes_vaes_available,
    .expand = aes_aesni_expand,
    .expand2 = aes_aesni_expand2,
    .expand4 = aes_aesni_expand4,
    .sched_bytes = AES_SCHED_BYTES,
    .oneshot = aes_vaes_oneshot,
    .enc_blocks = aes_vaes_enc_blocks,
    .dec_blocks = aes_vaes_dec_blocks,
    .ctr_blocks = aes_vaes_ctr_blocks,
    .cbc_enc_blocks = aes_aesni_cbc_enc_blocks,
    .cbc_dec_blocks = aes_vaes_cbc_dec_blocks,
    .mk_lanes = AESY_GL * AESY_MK_GROUPS,
    .mk_setup = aes_vaes_mk_setup,
    .mk_bytes = AESX_MK_OFF(AESY_GL, AESY_MK_GROUPS, 2, 0, 0, 0),
    .mk_enc = aes_vaes_mk_enc,
    .mk_dec = aes_vaes_mk_dec,
    .mk_cbc_enc = aes_vaes_mk_cbc_enc,
    .mk_slots_blocks = 1,
    .mk_short = aes_aesni_mk_short,
    .mk_short_blocks = 4,
    .mk_cbc_wide_blocks = 24,
    .mk_cbc_wide_total = 256,
    /* GCM's GHASH backend is vpclmul512 on CPUs with
     * AVX-512 and VPCLMULQDQ, vpclmul on the others
     * with VPCLMULQDQ (Zen 3) */
    .gcm = {{&ghash_vpclmul512, aes_vaes_gcm512_blocks}, {&ghash_vpclmul, aes_vaes_gcm256_blocks}}};
