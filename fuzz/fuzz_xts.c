/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target: kuai_xts_encrypt / kuai_xts_decrypt on arbitrary
 * parameters and data.
 *
 * Whatever the cipher, standard, tweak and length: below 16 bytes the calls
 * must refuse (KUAI_ERR_LENGTH) and write nothing; otherwise encryption
 * then decryption must give the data back, in place must equal out of
 * place, the portable ref backend must agree with the default one, and
 * nothing may be written past the end.
 */
#include "fuzz_input.h"
#include "kuai.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    reader r = {data, size};
    kuai_cipher c = fuzz_pick_cipher(take_u8(&r), 16); /* XTS: 128-bit blocks */
    kuai_xts_standard std = (take_u8(&r) & 1) ? KUAI_XTS_GB17964 : KUAI_XTS_IEEE1619;
    uint8_t key[32], key2[32], tweak[16];
    take(&r, key, sizeof key);
    take(&r, key2, sizeof key2);
    take(&r, tweak, sizeof tweak);
    const uint8_t *in = r.p;
    size_t len = r.n;

    kuai_key *k = malloc(4 * sizeof *k);
    size_t ks = kuai_key_size(c);
    if (kuai_key_init(&k[0], c, key, ks) != KUAI_OK ||
        kuai_key_init(&k[1], c, key2, ks) != KUAI_OK ||
        kuai_key_init_backend(&k[2], c, key, ks, "ref") != KUAI_OK ||
        kuai_key_init_backend(&k[3], c, key2, ks, "ref") != KUAI_OK) {
        free(k);
        return 0; /* a cipher this build lacks */
    }
    uint8_t *out = malloc(len + 1), *back = malloc(len + 1), *ref = malloc(len + 1);
    memset(out, 0xAA, len + 1);
    int rc = kuai_xts_encrypt(&k[0], &k[1], tweak, in, out, len, std);
    if (len < 16) {
        must(rc == KUAI_ERR_LENGTH);
        for (size_t i = 0; i <= len; i++)
            must(out[i] == 0xAA);
        must(kuai_xts_decrypt(&k[0], &k[1], tweak, in, out, len, std) == KUAI_ERR_LENGTH);
    } else {
        must(rc == KUAI_OK);
        must(out[len] == 0xAA);
        must(kuai_xts_encrypt(&k[2], &k[3], tweak, in, ref, len, std) == KUAI_OK);
        must(memcmp(ref, out, len) == 0);
        memcpy(back, out, len);
        must(kuai_xts_decrypt(&k[0], &k[1], tweak, back, back, len, std) == KUAI_OK);
        must(memcmp(back, in, len) == 0);
        memcpy(back, in, len);
        must(kuai_xts_encrypt(&k[0], &k[1], tweak, back, back, len, std) == KUAI_OK);
        must(memcmp(back, out, len) == 0);
    }
    for (int i = 0; i < 4; i++)
        kuai_key_wipe(&k[i]);
    free(k);
    free(out);
    free(back);
    free(ref);
    return 0;
}
