/* SPDX-License-Identifier: Apache-2.0 */
/*
 * AES-GCM in one pass on 512-bit registers: the VAES backend's fused GCM
 * (kuai_impl.gcm_blocks) where the context's GHASH backend is vpclmul512,
 * i.e. on CPUs with AVX-512, VAES and VPCLMULQDQ (Ice Lake and later,
 * Zen 4 and later). Built with -mavx512f -mavx512bw -mavx512vl -mvaes
 * -mvpclmulqdq for this file only; reached only through that check.
 *
 * 32 counter blocks (8 zmm) go through AES while the previous 32
 * ciphertext blocks (decryption: these 32, read before they are
 * overwritten) go through GHASH, one of its eight loads after each AES
 * round (ghash_vclmul.h's fold_step), one reduction per 32 blocks. Apart,
 * the AES rounds wait on the AES units and GHASH on the carry-less
 * multiplier and the shuffle port; as two passes over 4 KiB chunks (gcm.c)
 * each ran alone. All registers are zmm: a 256-bit AES beside 512-bit
 * GHASH would lose the port Intel's cores close to vector work while
 * 512-bit operations are in flight.
 *
 * The counter: 32-bit big-endian in the block's last word. The caller
 * keeps it from wrapping within the call, so the blocks are the counter
 * block byte-reversed (its low word then little-endian, in dword 0 of the
 * lane) plus 0..31 in dword 0, reversed back by one shuffle per register.
 *
 * Constant time: no branch or memory index depends on the key, H, the
 * counter or the data.
 */
#include "aes_ni_xmm.h"
#include "aes_x86.h"

#include "../ghash/ghash_vclmul512.h"

#define GCM512_REGS 8                   /* zmm of counter blocks in flight */
#define GCM512_BLOCKS (4 * GCM512_REGS) /* 32 */
_Static_assert(GCM512_BLOCKS == AGG, "one GHASH fold per batch of counter blocks");
_Static_assert(GCM512_REGS <= 9, "a fold step after each of AES-128's 9 middle rounds");

static inline __attribute__((always_inline)) void vaes512_gcm(const uint8_t (*rk)[16], int nr,
                                                              const vclmul_key *hk, uint8_t y[16],
                                                              uint8_t *ctr, const uint8_t *in,
                                                              uint8_t *out, size_t nblocks, int enc)
{
    __m512i k[AES_MAX_ROUNDS + 1];
    for (int r = 0; r <= nr; r++)
        k[r] = _mm512_broadcast_i32x4(aesx_loadu(rk[r]));
    const __m512i rev = _mm512_broadcast_i32x4(aesx_rev16());
    /* lane i: the counter block reversed, + i in its low word */
    __m512i cv =
        _mm512_add_epi32(_mm512_shuffle_epi8(_mm512_broadcast_i32x4(aesx_loadu(ctr)), rev),
                         _mm512_setr_epi32(0, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0));
    const __m512i four = _mm512_setr_epi32(4, 0, 0, 0, 4, 0, 0, 0, 4, 0, 0, 0, 4, 0, 0, 0);
    __m128i acc = bswap128(aesx_loadu(y));
    uint32_t low = load_be32(ctr + 12);
    const uint8_t *lag = NULL; /* encryption: the previous batch's output, still to hash */
    for (; nblocks >= GCM512_BLOCKS;
         nblocks -= GCM512_BLOCKS, in += 16 * GCM512_BLOCKS, out += 16 * GCM512_BLOCKS) {
        __m512i b[GCM512_REGS];
        for (int i = 0; i < GCM512_REGS; i++) {
            b[i] = _mm512_xor_si512(_mm512_shuffle_epi8(cv, rev), k[0]);
            cv = _mm512_add_epi32(cv, four);
        }
        low += GCM512_BLOCKS;
        const uint8_t *h = enc ? lag : in;
        vclmul_sums sum = {_mm512_setzero_si512(), _mm512_setzero_si512(), _mm512_setzero_si512()};
        /* unrolled: the fold steps' loads, words and branches by constants */
#pragma GCC unroll 14
        for (int r = 1; r < nr; r++) {
            for (int i = 0; i < GCM512_REGS; i++)
                b[i] = _mm512_aesenc_epi128(b[i], k[r]);
            /* loads 1..7, then load 0, the one that waits for the last
             * batch's reduction */
            if (h && r <= GCM512_REGS)
                fold_step(hk, &sum, acc, h, r % GCM512_REGS);
        }
        for (int i = 0; i < GCM512_REGS; i++)
            b[i] = _mm512_aesenclast_epi128(b[i], k[nr]);
        if (h)
            acc = fold_end(&sum);
        for (int i = 0; i < GCM512_REGS; i++)
            _mm512_storeu_si512(
                (void *)(out + 64 * i),
                _mm512_xor_si512(b[i], _mm512_loadu_si512((const void *)(in + 64 * i))));
        if (enc)
            lag = out;
    }
    if (lag)
        acc = fold_agg(hk, acc, lag);
    _mm_storeu_si128((__m128i *)(void *)y, bswap128(acc));
    store_be32(ctr + 12, low);
}

/* The blocks past the last batch of 32 (fewer than 32): the backend's own
 * CTR, GHASH's update (the caller's promise of no wrap makes the 128-bit
 * count of ctr_blocks the 32-bit one). */
void aes_vaes_gcm512_blocks(const kuai_key *k, const unsigned char *hkey, uint8_t y[16],
                            uint8_t *ctr, const uint8_t *in, uint8_t *out, size_t nblocks, int enc)
{
    const aes_sched *s = aes_sched_const(k);
    size_t whole = nblocks - nblocks % GCM512_BLOCKS;
    if (whole) {
        const vclmul_key *hk = (const vclmul_key *)(const void *)hkey;
        AESX_BY_NR(s->nr,
                   vaes512_gcm((const uint8_t(*)[16])s->rk, NR, hk, y, ctr, in, out, whole, enc))
    }
    size_t rest = nblocks - whole;
    if (rest) {
        in += 16 * whole;
        out += 16 * whole;
        if (!enc)
            vpclmul512_update(hkey, y, in, rest);
        aes_vaes_ctr_blocks(k, ctr, in, out, rest);
        if (enc)
            vpclmul512_update(hkey, y, out, rest);
    }
}
