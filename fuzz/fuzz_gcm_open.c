/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target: kuai_gcm_decrypt on arbitrary bytes.
 *
 * Whatever the IV length, tag length, AAD and ciphertext, the call must
 * return KUAI_OK or KUAI_ERR_AUTH (or a documented argument error), never
 * crash or read out of bounds; on KUAI_ERR_AUTH the output must be zeros;
 * on KUAI_OK (the fuzzer found a forgery, or was fed a real message)
 * encrypting the plaintext must give back the ciphertext and tag.
 */
#include "fuzz_input.h"
#include "kuai.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 4)
        return 0;
    kuai_cipher c = fuzz_pick_cipher(data[0], 16); /* GCM: 128-bit blocks */
    size_t iv_len = data[1] % 64;                  /* 0 is an error the call must report */
    size_t tag_len = data[2] % 18;                 /* 4..16 legal, the rest errors */
    size_t aad_len = data[3];
    data += 4, size -= 4;
    size_t ks = kuai_key_size(c);
    uint8_t key[32] = {0};
    memcpy(key, data, size < ks ? size : ks);
    kuai_key k;
    if (kuai_key_init(&k, c, key, ks) != KUAI_OK)
        return 0; /* a cipher this build lacks */
    size_t off = size < ks ? size : ks;
    const uint8_t *rest = data + off;
    size_t n = size - off;
    if (iv_len + tag_len > n)
        return 0;
    const uint8_t *iv = rest, *tag = rest + iv_len;
    rest += iv_len + tag_len, n -= iv_len + tag_len;
    if (aad_len > n)
        aad_len = n;
    const uint8_t *aad = rest, *ct = rest + aad_len;
    size_t len = n - aad_len;

    uint8_t *out = malloc(len + 1), *back = malloc(len + 1);
    memset(out, 0xAA, len + 1);
    int rc = kuai_gcm_decrypt(&k, iv, iv_len, aad, aad_len, ct, out, len, tag, tag_len);
    if (iv_len == 0 || tag_len < 4 || tag_len > 16) {
        must(rc == KUAI_ERR_ARG || rc == KUAI_ERR_LENGTH);
    } else if (rc == KUAI_ERR_AUTH) {
        for (size_t i = 0; i < len; i++)
            must(out[i] == 0);
    } else {
        must(rc == KUAI_OK);
        uint8_t t2[16];
        must(kuai_gcm_encrypt(&k, iv, iv_len, aad, aad_len, out, back, len, t2, tag_len) ==
             KUAI_OK);
        must(memcmp(back, ct, len) == 0 && memcmp(t2, tag, tag_len) == 0);
    }
    must(out[len] == 0xAA); /* nothing written past the end */
    free(out);
    free(back);
    kuai_key_wipe(&k);
    return 0;
}
