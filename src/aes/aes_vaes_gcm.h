/* SPDX-License-Identifier: Apache-2.0 */
/*
 * AES-GCM in one pass, the part that is the same at every register width:
 * the VAES backend's fused GCM (kuai_impl.gcm) over a GHASH backend on
 * VPCLMULQDQ of the same width (ghash_vclmul.h). aes_vaes_gcm256.c (ymm,
 * GHASH backend vpclmul) and aes_vaes_gcm512.c (zmm, vpclmul512) include
 * it once each, after their GHASH vocabulary header (gv, GV_LANES, AGG,
 * fold_step, fold_end, fold_agg, GV_FN) and after defining, per 128-bit
 * lane of gv:
 *   gv_aesenc(x, k), gv_aesenclast(x, k)   VAES
 *   gv_add32(a, b), gv_shuf8(a, b)         vpaddd, vpshufb
 *   gv_lane_index()                        lane i holds i in its dword 0
 *   GCMV_FN(name)                          its names for the two below
 *
 * AGG counter blocks (GCMV_REGS registers) go through AES while the
 * previous AGG ciphertext blocks (decryption: these AGG, read before they
 * are overwritten) go through GHASH, one of its eight loads after each AES
 * round (fold_step), one reduction per AGG blocks. Apart, the AES rounds
 * wait on the AES units and GHASH on the carry-less multiplier and the
 * shuffle units; as two passes over 4 KiB chunks (gcm.c) each ran alone.
 *
 * The counter: 32-bit big-endian in the block's last word. The caller
 * keeps it from wrapping within the call, so the blocks are the counter
 * block byte-reversed (its low word then little-endian, in dword 0 of the
 * lane) plus 0..AGG-1 in dword 0, reversed back by one shuffle per
 * register.
 *
 * Constant time: no branch or memory index depends on the key, H, the
 * counter or the data.
 */

#define GCMV_REGS (AGG / GV_LANES) /* registers of counter blocks in flight: 8 */
/* one GHASH load per register of counter blocks, each after one of
 * AES-128's 9 middle rounds */
_Static_assert(GCMV_REGS == 8, "one fold step per register, one per middle round");

static inline __attribute__((always_inline)) void
GCMV_FN(pass)(const uint8_t (*rk)[16], int nr, const vclmul_key *hk, uint8_t y[16], uint8_t *ctr,
              const uint8_t *in, uint8_t *out, size_t nblocks, int enc)
{
    gv k[AES_MAX_ROUNDS + 1];
    for (int r = 0; r <= nr; r++)
        k[r] = gv_bcast128(aesx_loadu(rk[r]));
    const gv rev = gv_bcast128(aesx_rev16());
    /* lane i: the counter block reversed, + i in its low word */
    gv cv = gv_add32(gv_shuf8(gv_bcast128(aesx_loadu(ctr)), rev), gv_lane_index());
    const gv step = gv_bcast128(_mm_setr_epi32(GV_LANES, 0, 0, 0));
    __m128i acc = bswap128(aesx_loadu(y));
    uint32_t low = load_be32(ctr + 12);
    const uint8_t *lag = NULL; /* encryption: the previous batch's output, still to hash */
    for (; nblocks >= AGG; nblocks -= AGG, in += 16 * AGG, out += 16 * AGG) {
        gv b[GCMV_REGS];
        for (int i = 0; i < GCMV_REGS; i++) {
            b[i] = gv_xor(gv_shuf8(cv, rev), k[0]);
            cv = gv_add32(cv, step);
        }
        low += AGG;
        const uint8_t *h = enc ? lag : in;
        vclmul_sums sum = {gv_zero(), gv_zero(), gv_zero()};
        /* unrolled: the fold steps' loads, words and branches by constants */
#pragma GCC unroll 14
        for (int r = 1; r < nr; r++) {
            for (int i = 0; i < GCMV_REGS; i++)
                b[i] = gv_aesenc(b[i], k[r]);
            /* loads 1..7, then load 0, the one that waits for the last
             * batch's reduction */
            if (h && r <= GCMV_REGS)
                fold_step(hk, &sum, acc, h, r % GCMV_REGS);
        }
        for (int i = 0; i < GCMV_REGS; i++)
            b[i] = gv_aesenclast(b[i], k[nr]);
        if (h)
            acc = fold_end(&sum);
        for (int i = 0; i < GCMV_REGS; i++)
            gv_storeu(out + 16 * GV_LANES * i, gv_xor(b[i], gv_loadu(in + 16 * GV_LANES * i)));
        if (enc)
            lag = out;
    }
    if (lag)
        acc = fold_agg(hk, acc, lag);
    _mm_storeu_si128((__m128i *)(void *)y, bswap128(acc));
    store_be32(ctr + 12, low);
}

/* kuai_impl.gcm's blocks: the whole batches of AGG in one pass, the blocks
 * past the last (fewer than AGG) by the backend's own CTR and GHASH's
 * update. The caller's promise of no wrap makes the 128-bit count of
 * ctr_blocks the 32-bit one for every block; only a run that ends at 2^32
 * carries into the word above the low one as it leaves, which 32-bit
 * counting does not: those 12 bytes are put back. */
void GCMV_FN(blocks)(const kuai_key *k, const unsigned char *hkey, uint8_t y[16], uint8_t *ctr,
                     const uint8_t *in, uint8_t *out, size_t nblocks, int enc)
{
    const aes_sched *s = aes_sched_const(k);
    size_t whole = nblocks - nblocks % AGG;
    if (whole) {
        const vclmul_key *hk = (const vclmul_key *)(const void *)hkey;
        AESX_BY_NR(s->nr,
                   GCMV_FN(pass)((const uint8_t(*)[16])s->rk, NR, hk, y, ctr, in, out, whole, enc))
    }
    size_t rest = nblocks - whole;
    if (rest) {
        in += 16 * whole;
        out += 16 * whole;
        if (!enc)
            GV_FN(update)(hkey, y, in, rest);
        uint8_t high[12];
        memcpy(high, ctr, 12);
        aes_vaes_ctr_blocks(k, ctr, in, out, rest);
        memcpy(ctr, high, 12);
        if (enc)
            GV_FN(update)(hkey, y, out, rest);
    }
}
