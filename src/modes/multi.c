/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Multi-key calls: n independent streams, stream i under keys[i].
 *
 * Work is cut into "slots" (one block of one stream). Batches of up to
 * mk_lanes slots go through the backend's multi-key kernel, so that even
 * CBC encryption, serial inside a stream, keeps every lane busy: a batch
 * takes block t of several streams. Streams long enough to fill the lanes
 * on their own (ECB, CBC decryption) go through the single-key calls, which
 * need no per-lane key material; so do shorter ones where the backend has
 * measured the single-key calls faster (mk_slots_blocks). Short
 * streams (ECB, CBC decryption) on a backend with a low-latency kernel skip
 * the slots: its mk_short hook runs them from the stored schedules on the
 * callers' buffers.
 */
#include "modes.h"

enum { MK_ENC, MK_DEC };

typedef struct multi_args {
    const kuai_key *const *keys;
    uint8_t *const *ivs; /* NULL for ECB */
    const uint8_t *const *in;
    uint8_t *const *out;
    size_t n, len;
} multi_args;

/* The kernel for batches of up to n blocks: the backend's narrow one when
 * n fits it, since lanes cost the same whether they are used or not. */
static const kuai_impl *mk_impl_for(const kuai_impl *impl, size_t n)
{
    if (impl->mk_narrow && n <= impl->mk_narrow->mk_lanes)
        return impl->mk_narrow;
    return impl;
}

/* CBC encryption's kernel for the r streams still to run, of nb blocks
 * each, or NULL for the next stream alone through the single-key call:
 * every pass of the wide kernel costs the same however many of its lanes
 * are used, and it runs once per block, so a remainder the narrow kernel's
 * chains hold (mk_cbc_narrow streams, else its mk_lanes) goes there, as a
 * whole call of few streams does; so do streams too short to pay for the
 * wide kernel's mk_setup (mk_cbc_wide_blocks), or without a narrow kernel
 * one stream at a time; and one stream always goes alone (the single-key
 * call's kernel is its own, with no lane setup to make and wipe), as do
 * batches of fewer blocks in all than mk_cbc_wide_total, too few to pay
 * for any lanes. */
static const kuai_impl *cbc_enc_impl_for(const kuai_impl *wide, size_t r, size_t nb)
{
    const kuai_impl *narrow = wide->mk_narrow;
    size_t most = narrow ? (wide->mk_cbc_narrow ? wide->mk_cbc_narrow : narrow->mk_lanes) : 0;
    const size_t batch = r < wide->mk_lanes ? r : wide->mk_lanes;
    const int short_streams = nb < wide->mk_cbc_wide_blocks;
    if (r == 1 || batch * nb < wide->mk_cbc_wide_total)
        return NULL;
    /* a narrow kernel that beats the wide one at its full width beats it
     * for any number of streams */
    if (narrow && (r <= most || most >= wide->mk_lanes || short_streams))
        return narrow;
    return short_streams ? NULL : wide;
}

/* ECB and CBC decryption: whether n streams of nb blocks each go one by
 * one through the single-key calls rather than through the lanes
 * (slots_run) or the short path; one stream always does, as in CBC
 * encryption (cbc_enc_impl_for). */
static int streams_alone(const kuai_impl *impl, size_t n, size_t nb)
{
    return n == 1 || nb >= (impl->mk_slots_blocks ? impl->mk_slots_blocks : impl->mk_lanes);
}

/* Whether the backend's short multi-key path takes n streams of nb blocks
 * each (kuai_impl.mk_short); one stream takes the single-key call. */
static int short_path(const kuai_impl *impl, size_t n, size_t nb)
{
    return n > 1 && impl->mk_short && nb < impl->mk_short_blocks &&
           (!impl->mk_short_streams || n <= impl->mk_short_streams);
}

/* What of a kuai_mk the impl's mk_setup may have written, to wipe. */
static size_t mk_used(const kuai_impl *impl)
{
    return impl->mk_bytes ? impl->mk_bytes : sizeof(kuai_mk);
}

/* Every check before anything is written: all keys valid and of one cipher,
 * every buffer present and not partially overlapping. */
static int check_multi(const multi_args *a, int need_iv, size_t *bs)
{
    if (!a->keys || (a->n && (!a->in || !a->out || (need_iv && !a->ivs))))
        return KUAI_ERR_ARG;
    if (a->n == 0)
        return KUAI_ERR_ARG;
    for (size_t i = 0; i < a->n; i++) {
        int r = kuai_key_check(a->keys[i]);
        if (r)
            return r;
        if (a->keys[i]->priv_cipher != a->keys[0]->priv_cipher)
            return KUAI_ERR_MISMATCH;
        if (!buffers_ok(a->in[i], a->out[i], a->len) || (need_iv && !a->ivs[i]))
            return KUAI_ERR_ARG;
    }
    *bs = kuai_cipher_block((kuai_cipher)a->keys[0]->priv_cipher);
    if (kuai_tail_of(a->len, *bs))
        return KUAI_ERR_LENGTH;
    return KUAI_OK;
}

/* ECB and CBC decryption over slots, streams in order and blocks in order
 * inside each stream. For CBC decryption prev[] carries each stream's last
 * ciphertext block, copied before its output is written (in == out). */
static void slots_run(const multi_args *a, const kuai_impl *impl, size_t bs, int dir,
                      uint8_t (*prev)[KUAI_MAX_BLOCK])
{
    kuai_mk mk;
    const kuai_key *slot_key[KUAI_MK_MAX_LANES];
    size_t slot_stream[KUAI_MK_MAX_LANES], slot_off[KUAI_MK_MAX_LANES];
    uint8_t inbuf[KUAI_MK_MAX_LANES * KUAI_MAX_BLOCK], outbuf[KUAI_MK_MAX_LANES * KUAI_MAX_BLOCK];
    size_t m = 0, nb = kuai_blocks_in(a->len, bs), used = 0; /* bytes of inbuf/outbuf written */
    impl = mk_impl_for(impl, a->n * nb);
    size_t lanes = impl->mk_lanes;

    for (size_t i = 0; i < a->n; i++) {
        for (size_t t = 0; t < nb; t++) {
            slot_key[m] = a->keys[i];
            slot_stream[m] = i;
            slot_off[m] = t * bs;
            memcpy(inbuf + m * bs, a->in[i] + t * bs, bs);
            if (++m < lanes && !(i == a->n - 1 && t == nb - 1))
                continue;
            impl->mk_setup(&mk, slot_key, m);
            (dir == MK_ENC ? impl->mk_enc : impl->mk_dec)(&mk, inbuf, outbuf, m);
            used = m * bs > used ? m * bs : used;
            for (size_t s = 0; s < m; s++) {
                uint8_t *dst = a->out[slot_stream[s]] + slot_off[s];
                if (prev) {
                    xor_bytes(dst, outbuf + s * bs, prev[slot_stream[s]], bs);
                    memcpy(prev[slot_stream[s]], inbuf + s * bs, bs);
                } else {
                    memcpy(dst, outbuf + s * bs, bs);
                }
            }
            m = 0;
        }
    }
    kuai_wipe(&mk, mk_used(impl));
    /* only what was written: the whole 2 KiB cost as much as a short call */
    kuai_wipe(inbuf, used);
    kuai_wipe(outbuf, used);
}

static int ecb_multi(const multi_args *a, int dir)
{
    size_t bs;
    int r = check_multi(a, 0, &bs);
    if (r)
        return r;
    const kuai_impl *impl = kuai_key_impl(a->keys[0]);
    const size_t nb = kuai_blocks_in(a->len, bs);
    /* nothing to run: the lanes' setup and wipe of a kuai_mk took 130
     * TSC cycles for streams of no bytes (AES-NI, Xeon) */
    if (nb == 0)
        return KUAI_OK;
    if (short_path(impl, a->n, nb)) {
        impl->mk_short(a->keys, NULL, a->in, a->out, a->n, nb, dir == MK_ENC);
        return KUAI_OK;
    }
    if (streams_alone(impl, a->n, nb)) {
        /* each key's own backend (keys of several may mix), past the
         * single-key calls' checks, which check_multi has made */
        for (size_t i = 0; i < a->n; i++) {
            const kuai_impl *ki = kuai_key_impl(a->keys[i]);
            (dir == MK_ENC ? ki->enc_blocks : ki->dec_blocks)(a->keys[i], a->in[i], a->out[i], nb);
        }
        return KUAI_OK;
    }
    slots_run(a, impl, bs, dir, NULL);
    return KUAI_OK;
}

int kuai_ecb_encrypt_multi(const kuai_key *const *keys, const uint8_t *const *in,
                           uint8_t *const *out, size_t n, size_t len)
{
    multi_args a = {keys, NULL, in, out, n, len};
    return ecb_multi(&a, MK_ENC);
}

int kuai_ecb_decrypt_multi(const kuai_key *const *keys, const uint8_t *const *in,
                           uint8_t *const *out, size_t n, size_t len)
{
    multi_args a = {keys, NULL, in, out, n, len};
    return ecb_multi(&a, MK_DEC);
}

int kuai_cbc_decrypt_multi(const kuai_key *const *keys, uint8_t *const *ivs,
                           const uint8_t *const *in, uint8_t *const *out, size_t n, size_t len)
{
    multi_args a = {keys, ivs, in, out, n, len};
    size_t bs;
    int r = check_multi(&a, 1, &bs);
    if (r)
        return r;
    const kuai_impl *impl = kuai_key_impl(keys[0]);
    const size_t nb = kuai_blocks_in(len, bs);
    if (nb == 0) /* as in ecb_multi */
        return KUAI_OK;
    if (short_path(impl, n, nb)) {
        impl->mk_short(keys, ivs, in, out, n, nb, 0);
        return KUAI_OK;
    }
    /* at most KUAI_MK_MAX_LANES streams at a time (prev holds their chains
     * through the lanes); a last few go where the short path or
     * streams_alone sends them */
    uint8_t prev[KUAI_MK_MAX_LANES][KUAI_MAX_BLOCK];
    for (size_t g = 0; g < n; g += KUAI_MK_MAX_LANES) {
        const size_t m = n - g < KUAI_MK_MAX_LANES ? n - g : KUAI_MK_MAX_LANES;
        if (short_path(impl, m, nb)) {
            impl->mk_short(keys + g, ivs + g, in + g, out + g, m, nb, 0);
            continue;
        }
        if (streams_alone(impl, m, nb)) {
            for (size_t i = g; i < g + m; i++)
                cbc_decrypt_checked(keys[i], ivs[i], in[i], out[i], len, bs);
            continue;
        }
        multi_args c = {keys + g, ivs + g, in + g, out + g, m, len};
        for (size_t i = 0; i < m; i++)
            memcpy(prev[i], ivs[g + i], bs);
        slots_run(&c, impl, bs, MK_DEC, prev);
        for (size_t i = 0; i < m; i++)
            memcpy(ivs[g + i], prev[i], bs);
    }
    return KUAI_OK;
}

/* 16 bytes XORed as one vector: the kernel reads each lane's block with
 * one 16-byte load, which a store made of two 8-byte halves cannot forward
 * to (a stall of ~10 cycles per lane, more than AES-NI's whole round loop
 * per block). */
static inline void xor16(uint8_t *dst, const uint8_t *a, const uint8_t *b)
{
    kuai_u64x2 x, y;
    memcpy(&x, a, 16);
    memcpy(&y, b, 16);
    x ^= y;
    memcpy(dst, &x, 16);
}

/* The block loop of CBC encryption for one batch of m streams, inlined once
 * per block size so the XORs and copies are fixed-size moves: with a fast
 * kernel (AES-NI runs 8 lanes in ~40 cycles) variable-length memcpy calls
 * would cost more than the cipher. */
static inline __attribute__((always_inline)) void
cbc_enc_batch(const kuai_impl *impl, const kuai_mk *mk, uint8_t *buf, const uint8_t *const *in,
              uint8_t *const *out, size_t m, size_t len, size_t bs)
{
    for (size_t off = 0; off < len; off += bs) {
        for (size_t s = 0; s < m; s++)
            for (size_t j = 0; j < bs; j += 16)
                xor16(buf + s * bs + j, buf + s * bs + j, in[s] + off + j);
        impl->mk_enc(mk, buf, buf, m);
        for (size_t s = 0; s < m; s++)
            memcpy(out[s] + off, buf + s * bs, bs);
    }
}

/* One batch of CBC encryption: up to impl's mk_lanes of the r streams at
 * keys etc., each lane chained to its own previous ciphertext, advancing
 * one block per kernel call; returns how many streams it took. Out of
 * line, so that a call whose streams all go alone (cbc_enc_impl_for) never
 * makes this frame (a kuai_mk and the chains): with it in the caller's
 * frame, one stream of one block took 118 or 310 TSC cycles from one
 * process to the next unless the chains' buffer was wiped whole (143),
 * against 105 for kuai_cbc_encrypt (uBlock-128/128, avx512, Xeon). */
static __attribute__((noinline)) size_t
cbc_enc_lanes(const kuai_impl *impl, const kuai_key *const *keys, uint8_t *const *ivs,
              const uint8_t *const *in, uint8_t *const *out, size_t r, size_t len, size_t bs)
{
    kuai_mk mk;
    uint8_t buf[KUAI_MK_MAX_LANES * KUAI_MAX_BLOCK];
    const size_t m = r < impl->mk_lanes ? r : impl->mk_lanes;
    impl->mk_setup(&mk, keys, m);
    for (size_t s = 0; s < m; s++)
        memcpy(buf + s * bs, ivs[s], bs);
    if (impl->mk_cbc_enc)
        impl->mk_cbc_enc(&mk, buf, in, out, m, kuai_blocks_in(len, bs));
    else if (bs == 16)
        cbc_enc_batch(impl, &mk, buf, in, out, m, len, 16);
    else
        cbc_enc_batch(impl, &mk, buf, in, out, m, len, 32);
    for (size_t s = 0; s < m; s++)
        memcpy(ivs[s], buf + s * bs, bs);
    kuai_wipe(&mk, mk_used(impl));
    kuai_wipe(buf, m * bs); /* only what was written */
    return m;
}

/* Streams of one block: CBC encryption is ECB of P ^ IV, so the short
 * multi-key path packs several streams' blocks into each of its groups,
 * where the chains' kernels run one block of each stream through a whole
 * pass (uBlock's had cost 1.0-1.45 of the single-key calls one by one, the
 * short path's ECB 0.3-0.6). Each P ^ IV goes to its out[i] (no other
 * stream's buffer: kuai.h) and is encrypted there; the ciphertext becomes
 * the IV. (Stream by stream, the single-key CBC call serves as well.) */
static void cbc_enc_one_block(const kuai_impl *impl, const kuai_key *const *keys,
                              uint8_t *const *ivs, const uint8_t *const *in, uint8_t *const *out,
                              size_t n, size_t bs)
{
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < bs; j += 16)
            xor16(out[i] + j, in[i] + j, ivs[i] + j);
    impl->mk_short(keys, NULL, (const uint8_t *const *)out, out, n, 1, 1);
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < bs; j += 16)
            memcpy(ivs[i] + j, out[i] + j, 16);
}

/* CBC encryption: streams of one block through the short path where it
 * takes them (cbc_enc_one_block), else batches of streams through the
 * lanes (cbc_enc_lanes), or streams one by one where cbc_enc_impl_for says
 * so. */
int kuai_cbc_encrypt_multi(const kuai_key *const *keys, uint8_t *const *ivs,
                           const uint8_t *const *in, uint8_t *const *out, size_t n, size_t len)
{
    multi_args a = {keys, ivs, in, out, n, len};
    size_t bs;
    int r = check_multi(&a, 1, &bs);
    if (r)
        return r;
    const kuai_impl *wide = kuai_key_impl(keys[0]);
    if (len == bs && short_path(wide, n, 1)) {
        cbc_enc_one_block(wide, keys, ivs, in, out, n, bs);
        return KUAI_OK;
    }
    for (size_t g = 0; g < n && len;) {
        const kuai_impl *impl = cbc_enc_impl_for(wide, n - g, kuai_blocks_in(len, bs));
        if (!impl) {
            cbc_encrypt_checked(keys[g], ivs[g], in[g], out[g], len, bs);
            g++;
            continue;
        }
        g += cbc_enc_lanes(impl, keys + g, ivs + g, in + g, out + g, n - g, len, bs);
    }
    return KUAI_OK;
}
