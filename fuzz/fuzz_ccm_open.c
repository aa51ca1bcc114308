/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target: kuai_ccm_decrypt on arbitrary bytes.
 *
 * Whatever the nonce length, tag length, AAD and ciphertext, the call must
 * return KUAI_OK or KUAI_ERR_AUTH (or a documented argument error, with
 * nothing written), never crash or read out of bounds; on KUAI_ERR_AUTH the
 * output must be zeros; on KUAI_OK (a forgery, or a real message) encrypting
 * the plaintext must give back the ciphertext and tag.
 */
#include "fuzz_input.h"
#include "kuai.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    reader r = {data, size};
    kuai_cipher c = fuzz_pick_cipher(take_u8(&r), 16); /* CCM: 128-bit blocks */
    size_t nonce_len = 5 + take_u8(&r) % 11;           /* 7..13 legal, 5, 6, 14, 15 errors */
    size_t tag_len = take_u8(&r) % 18;                 /* 4, 6, ..., 16 legal, the rest errors */
    size_t aad_len = take_u8(&r);
    uint8_t key[32], nonce[16], tag[18];
    take(&r, key, sizeof key);
    take(&r, nonce, nonce_len);
    take(&r, tag, tag_len);
    if (aad_len > r.n)
        aad_len = r.n;
    const uint8_t *aad = r.p, *ct = r.p + aad_len;
    size_t len = r.n - aad_len;

    kuai_key k;
    if (kuai_key_init(&k, c, key, kuai_key_size(c)) != KUAI_OK)
        return 0; /* a cipher this build lacks */
    uint8_t *out = malloc(len + 1), *back = malloc(len + 1);
    memset(out, 0xAA, len + 1);
    int rc = kuai_ccm_decrypt(&k, nonce, nonce_len, aad, aad_len, ct, out, len, tag, tag_len);
    int legal =
        nonce_len >= 7 && nonce_len <= 13 && tag_len >= 4 && tag_len <= 16 && tag_len % 2 == 0;
    if (!legal) {
        must(rc == KUAI_ERR_ARG);
        for (size_t i = 0; i < len; i++)
            must(out[i] == 0xAA);
    } else if (rc == KUAI_ERR_AUTH) {
        for (size_t i = 0; i < len; i++)
            must(out[i] == 0);
    } else {
        must(rc == KUAI_OK);
        uint8_t t2[16];
        must(kuai_ccm_encrypt(&k, nonce, nonce_len, aad, aad_len, out, back, len, t2, tag_len) ==
             KUAI_OK);
        must(memcmp(back, ct, len) == 0 && memcmp(t2, tag, tag_len) == 0);
    }
    must(out[len] == 0xAA); /* nothing written past the end */
    free(out);
    free(back);
    kuai_key_wipe(&k);
    return 0;
}
