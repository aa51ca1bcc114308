/* SPDX-License-Identifier: Apache-2.0 */
/* One-shot ECB for short messages: key setup and cipher in one call, the
 * schedule kept on this stack frame only and wiped before return. The
 * generic form sets the key up the ordinary way and wipes what the backend
 * wrote of it; a backend with a oneshot hook (uBlock's low-latency kernel,
 * AES-NI, SM4's AES-NI backends) runs short calls without a kuai_key,
 * after the same checks, so the caller sees the same results. */
#include "modes.h"

#include <stdlib.h>

/* Up to this many blocks per stream the hook runs, unless the backend
 * says fewer (kuai_impl.oneshot_blocks); longer messages are better
 * served by key setup and the backend's wide kernels. */
#define ONESHOT_HOOK_MAX_BLOCKS 32

/* The stack below the generic path's frame that its key setup and ECB
 * call used, overwritten after them (kuai_wipe_stack): what the backend
 * says its kernels use, at least KUAI_WIPE_STACK_DEFAULT. The uBlock wide
 * kernels' frames reach 4-11 KiB below it, past the 4 KiB this was for
 * every backend until 2026-12-07, and a Zen 4's avx512 uBlock-256
 * decryption left 9-17 pieces of the schedule there. */
static size_t oneshot_generic_stack(const kuai_key *k)
{
    size_t n = kuai_key_impl(k)->stack_bytes;
    return n > KUAI_WIPE_STACK_DEFAULT ? n : KUAI_WIPE_STACK_DEFAULT;
}

/* The backend kuai_key_init would pick, if it has a oneshot hook; NULL
 * sends the call down the generic path, which also reports every error. */
static const kuai_impl *oneshot_impl(kuai_cipher c)
{
    const kuai_impl *impl = kuai_impl_default(c);
    return impl && impl->oneshot ? impl : NULL;
}

/* The hook's path when it applies: every check of the generic path first
 * (key, key length, buffers, length), in its order, so errors match. */
static int oneshot_fast(kuai_cipher c, const uint8_t *const *keys, size_t key_len,
                        const uint8_t *const *in, uint8_t *const *out, size_t n, size_t len,
                        int enc, int *done)
{
    *done = 0;
    const kuai_impl *impl = oneshot_impl(c);
    if (!impl)
        return KUAI_OK;
    size_t bs = kuai_cipher_block(c);
    if (kuai_blocks_in(len, bs) >
        (impl->oneshot_blocks ? impl->oneshot_blocks : ONESHOT_HOOK_MAX_BLOCKS))
        return KUAI_OK;
    *done = 1;
    for (size_t i = 0; i < n; i++)
        if (!keys[i])
            return KUAI_ERR_ARG;
    if (key_len != kuai_cipher_key(c))
        return KUAI_ERR_KEY_LEN;
    for (size_t i = 0; i < n; i++) {
        if (!buffers_ok(in[i], out[i], len))
            return KUAI_ERR_ARG;
        if (kuai_tail_of(len, bs))
            return KUAI_ERR_LENGTH;
    }
    if (len)
        impl->oneshot(c, keys, in, out, n, kuai_blocks_in(len, bs), enc);
    return KUAI_OK;
}

/* The generic path's wipe: what the backend's key setup and calls wrote
 * (kuai_impl.sched_bytes), not the whole 8 KiB key, whose wipe cost AES-NI
 * more than key setup and a short message together. */
static void key_wipe_used(kuai_key *k)
{
    const kuai_impl *impl = kuai_key_impl(k);
    kuai_wipe(k,
              impl->sched_bytes ? offsetof(kuai_key, priv_sched) + impl->sched_bytes : sizeof *k);
}

static int oneshot(kuai_cipher c, const uint8_t *key, size_t key_len, const uint8_t *in,
                   uint8_t *out, size_t len, int enc)
{
    int done;
    int r = oneshot_fast(c, &key, key_len, &in, &out, 1, len, enc, &done);
    if (done)
        return r;
    kuai_key k;
    r = kuai_key_init(&k, c, key, key_len);
    if (r)
        return r;
    r = enc ? kuai_ecb_encrypt(&k, in, out, len) : kuai_ecb_decrypt(&k, in, out, len);
    size_t stack = oneshot_generic_stack(&k);
    key_wipe_used(&k);
    /* and the copies of it the kernels' frames below this one left
     * (src/wipe.h): their spills held 12-30 AES rows of 33 blocks' calls */
    kuai_wipe_stack(stack);
    return r;
}

int kuai_ecb_encrypt_oneshot(kuai_cipher c, const uint8_t *key, size_t key_len, const uint8_t *in,
                             uint8_t *out, size_t len)
{
    return oneshot(c, key, key_len, in, out, len, 1);
}

int kuai_ecb_decrypt_oneshot(kuai_cipher c, const uint8_t *key, size_t key_len, const uint8_t *in,
                             uint8_t *out, size_t len)
{
    return oneshot(c, key, key_len, in, out, len, 0);
}

/* Every stream is checked before any is written: the first key is set up
 * (which settles cipher, key length and backend for all, since they share
 * them) and every stream's buffers are checked against it. */
static int oneshot_multi(kuai_cipher c, const uint8_t *const *keys, size_t key_len,
                         const uint8_t *const *in, uint8_t *const *out, size_t n, size_t len,
                         int enc)
{
    if (!keys || !in || !out || n == 0)
        return KUAI_ERR_ARG;
    for (size_t i = 0; i < n; i++)
        if (!keys[i])
            return KUAI_ERR_ARG;
    int done;
    int r = oneshot_fast(c, keys, key_len, in, out, n, len, enc, &done);
    if (done)
        return r;
    kuai_key k;
    r = kuai_key_init(&k, c, keys[0], key_len);
    if (r)
        return r;
    size_t bs;
    for (size_t i = 0; i < n && !r; i++)
        r = check_call(&k, in[i], out[i], len, CALL_ECB, NULL, &bs);
    for (size_t i = 0; i < n && !r; i++) {
        if (i)
            r = kuai_key_init(&k, c, keys[i], key_len);
        if (!r)
            r = enc ? kuai_ecb_encrypt(&k, in[i], out[i], len)
                    : kuai_ecb_decrypt(&k, in[i], out[i], len);
    }
    size_t stack = oneshot_generic_stack(&k);
    key_wipe_used(&k);
    kuai_wipe_stack(stack);
    return r;
}

int kuai_ecb_encrypt_oneshot_multi(kuai_cipher c, const uint8_t *const *keys, size_t key_len,
                                   const uint8_t *const *in, uint8_t *const *out, size_t n,
                                   size_t len)
{
    return oneshot_multi(c, keys, key_len, in, out, n, len, 1);
}

int kuai_ecb_decrypt_oneshot_multi(kuai_cipher c, const uint8_t *const *keys, size_t key_len,
                                   const uint8_t *const *in, uint8_t *const *out, size_t n,
                                   size_t len)
{
    return oneshot_multi(c, keys, key_len, in, out, n, len, 0);
}
