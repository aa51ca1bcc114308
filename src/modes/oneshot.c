/* SPDX-License-Identifier: Apache-2.0 */
/* One-shot ECB for short messages: key setup and cipher in one call, the
 * schedule kept on this stack frame only and wiped before return. This
 * generic form sets the key up the ordinary way; a backend's low-latency
 * path may replace it without changing what the caller sees. */
#include "modes.h"

static int oneshot(kuai_cipher c, const uint8_t *key, size_t key_len, const uint8_t *in,
                   uint8_t *out, size_t len, int enc)
{
    kuai_key k;
    int r = kuai_key_init(&k, c, key, key_len);
    if (r)
        return r;
    r = enc ? kuai_ecb_encrypt(&k, in, out, len) : kuai_ecb_decrypt(&k, in, out, len);
    kuai_key_wipe(&k);
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
    kuai_key k;
    int r = kuai_key_init(&k, c, keys[0], key_len);
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
    kuai_key_wipe(&k);
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
