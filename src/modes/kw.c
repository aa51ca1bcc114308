/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Key wrap (NIST SP 800-38F): KW (RFC 3394) and KWP (RFC 5649, KW with a
 * length in the integrity value and zero padding), for the 128-bit-block
 * ciphers.
 *
 * Both work on 64-bit semiblocks: an integrity value A and n semiblocks R,
 * six passes over R, each step one block cipher call on A || R[i] with the
 * step's number t XORed into A. Every step waits on the one before (A), so
 * a step is one single-block call: a wrapped key is a few blocks, and the
 * 6n calls cost what the backend's single-block latency is.
 *
 * Unwrapping decides on A (and for KWP on the length and the padding) with
 * no branch or index on their values until the verdict, which is public.
 * On a failed verdict the output is wiped: an unwrapped key that did not
 * verify is never handed back.
 */
#include "../bytes.h"
#include "mac.h"
#include "modes.h"

/* SP 800-38F's ICV1 (KW) and ICV2 (KWP's first 32 bits). */
static const uint8_t kw_icv[8] = {0xa6, 0xa6, 0xa6, 0xa6, 0xa6, 0xa6, 0xa6, 0xa6};
static const uint8_t kwp_icv[4] = {0xa6, 0x59, 0x59, 0xa6};

/* [in, in + in_len) and [out, out + out_len): each a buffer (span_ok), and
 * either the same start or apart. A wrapped key is 8 bytes longer than the
 * key, so buffers_ok's single length does not describe both. */
static int kw_buffers_ok(const uint8_t *in, size_t in_len, const uint8_t *out, size_t out_len)
{
    if (!in || !out || !span_ok(in, in_len) || !span_ok(out, out_len))
        return 0;
    uintptr_t a = (uintptr_t)in, b = (uintptr_t)out;
    return a == b || (a < b ? b - a >= in_len : a - b >= out_len);
}

/* The wrapping function W of SP 800-38F on A (8 bytes) and r (n >= 2
 * semiblocks), in place. */
static void kw_wrap_core(const kuai_key *k, uint8_t a[8], uint8_t *r, size_t n)
{
    const kuai_impl *impl = kuai_key_impl(k);
    uint8_t b[16];
    memcpy(b, a, 8);
    for (uint64_t j = 0; j < 6; j++) {
        for (size_t i = 0; i < n; i++) {
            memcpy(b + 8, r + 8 * i, 8);
            impl->enc_blocks(k, b, b, 1);
            store_be64(b, load_be64(b) ^ (n * j + i + 1));
            memcpy(r + 8 * i, b + 8, 8);
        }
    }
    memcpy(a, b, 8);
    kuai_wipe(b, sizeof b);
}

/* The unwrapping function W^-1, in place: r of n >= 2 semiblocks, a the
 * wrapped key's first semiblock in, the recovered integrity value out. */
static void kw_unwrap_core(const kuai_key *k, uint8_t a[8], uint8_t *r, size_t n)
{
    const kuai_impl *impl = kuai_key_impl(k);
    uint8_t b[16];
    memcpy(b, a, 8);
    for (uint64_t j = 6; j-- > 0;) {
        for (size_t i = n; i-- > 0;) {
            store_be64(b, load_be64(b) ^ (n * j + i + 1));
            memcpy(b + 8, r + 8 * i, 8);
            impl->dec_blocks(k, b, b, 1);
            memcpy(r + 8 * i, b + 8, 8);
        }
    }
    memcpy(a, b, 8);
    kuai_wipe(b, sizeof b);
}

int kuai_kw_wrap(const kuai_key *k, const uint8_t *in, size_t len, uint8_t *out)
{
    int r = check_key128(k);
    if (r)
        return r;
    if (len > (size_t)PTRDIFF_MAX - 8 || !kw_buffers_ok(in, len, out, len + 8))
        return KUAI_ERR_ARG;
    if (len < 16 || len % 8)
        return KUAI_ERR_LENGTH;
    uint8_t a[8];
    memcpy(a, kw_icv, 8);
    memmove(out + 8, in, len);
    kw_wrap_core(k, a, out + 8, len / 8);
    memcpy(out, a, 8);
    return KUAI_OK;
}

int kuai_kw_unwrap(const kuai_key *k, const uint8_t *in, size_t len, uint8_t *out)
{
    int r = check_key128(k);
    if (r)
        return r;
    if (len < 8 ? !in || !out : !kw_buffers_ok(in, len, out, len - 8))
        return KUAI_ERR_ARG;
    if (len < 24 || len % 8)
        return KUAI_ERR_LENGTH;
    uint8_t a[8];
    memcpy(a, in, 8);
    memmove(out, in + 8, len - 8);
    kw_unwrap_core(k, a, out, len / 8 - 1);
    int bad = tag_differs(a, kw_icv, 8);
    kuai_wipe(a, sizeof a);
    return auth_verdict(bad, out, len - 8);
}

size_t kuai_kwp_wrapped_len(size_t len)
{
    if (len == 0 || len > UINT32_MAX || len > SIZE_MAX - 15)
        return 0;
    return 8 + ((len + 7) & ~(size_t)7);
}

int kuai_kwp_wrap(const kuai_key *k, const uint8_t *in, size_t len, uint8_t *out)
{
    int r = check_key128(k);
    if (r)
        return r;
    if (!out || (len && !span_ok(in, len)))
        return KUAI_ERR_ARG;
    size_t wrapped = kuai_kwp_wrapped_len(len);
    if (!wrapped) /* 0 bytes or more than the 32-bit length field holds */
        return KUAI_ERR_LENGTH;
    if (!kw_buffers_ok(in, len, out, wrapped))
        return KUAI_ERR_ARG;
    uint8_t a[8];
    memcpy(a, kwp_icv, 4);
    store_be32(a + 4, (uint32_t)len);
    memmove(out + 8, in, len);
    memset(out + 8 + len, 0, wrapped - 8 - len);
    if (wrapped == 16) {
        /* One semiblock of key: a single block encryption (SP 800-38F
         * 6.3, step 5a). */
        memcpy(out, a, 8);
        kuai_key_impl(k)->enc_blocks(k, out, out, 1);
    } else {
        kw_wrap_core(k, a, out + 8, wrapped / 8 - 1);
        memcpy(out, a, 8);
    }
    kuai_wipe(a, sizeof a);
    return KUAI_OK;
}

int kuai_kwp_unwrap(const kuai_key *k, const uint8_t *in, size_t len, uint8_t *out, size_t *out_len)
{
    int r = check_key128(k);
    if (r)
        return r;
    if (!out_len || (len < 8 ? !in || !out : !kw_buffers_ok(in, len, out, len - 8)))
        return KUAI_ERR_ARG;
    if (len < 16 || len % 8)
        return KUAI_ERR_LENGTH;
    size_t n = len / 8 - 1; /* semiblocks of padded key */
    uint8_t a[8];
    if (n == 1) {
        uint8_t b[16];
        kuai_key_impl(k)->dec_blocks(k, in, b, 1);
        memcpy(a, b, 8);
        memcpy(out, b + 8, 8);
        kuai_wipe(b, sizeof b);
    } else {
        memcpy(a, in, 8);
        memmove(out, in + 8, len - 8);
        kw_unwrap_core(k, a, out, n);
    }
    /* The verdict, with no branch on the secret values: the ICV, the
     * length in (8 (n - 1), 8 n], and zeros after it in the last
     * semiblock. */
    uint64_t mli = load_be32(a + 4);
    uint64_t d = mli - 8 * ((uint64_t)n - 1) - 1; /* key bytes in the last semiblock, less 1 */
    uint64_t d_hi = d >> 3;                       /* 0 exactly when d is 0..7 */
    unsigned bad = (unsigned)tag_differs(a, kwp_icv, 4);
    bad |= (unsigned)((d_hi | (0 - d_hi)) >> 63);
    unsigned nz = 0;
    const uint8_t *last = out + 8 * (n - 1);
    for (uint64_t i = 0; i < 8; i++) {
        /* byte i of the last semiblock is padding when i > d */
        uint64_t is_pad = 0 - ((d - i) >> 63);
        nz |= last[i] & (unsigned)(is_pad & 0xff);
    }
    bad |= (nz + 0xff) >> 8;
    kuai_wipe(a, sizeof a);
    r = auth_verdict((int)(bad & 1), out, len - 8);
    if (r == KUAI_OK) {
        /* public once the verdict is */
        *out_len = (size_t)mli;
        kuai_declassify(out_len, sizeof *out_len);
    }
    return r;
}
