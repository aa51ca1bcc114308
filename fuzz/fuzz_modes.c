/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target: every backend against ref, on inputs the fuzzer picks.
 *
 * The input decides cipher, backend, mode, key, IV, data and where the data
 * is cut into pieces; the backend's result, computed in pieces and in place
 * or not, must equal ref's computed in one call. Any difference aborts.
 */
#include "fuzz_input.h"
#include "kuai.h"

#include <stdlib.h>
#include <string.h>

#define MAXDATA 4096

/* mode 0..4: ecb-enc, ecb-dec, cbc-enc, cbc-dec, ctr; 5: gcm-enc. */
static int run(const kuai_key *k, int mode, uint8_t *iv, const uint8_t *in, uint8_t *out,
               size_t len, uint8_t *tag)
{
    switch (mode) {
    case 0:
        return kuai_ecb_encrypt(k, in, out, len);
    case 1:
        return kuai_ecb_decrypt(k, in, out, len);
    case 2:
        return kuai_cbc_encrypt(k, iv, in, out, len);
    case 3:
        return kuai_cbc_decrypt(k, iv, in, out, len);
    case 4:
        return kuai_ctr_crypt(k, iv, in, out, len);
    default:
        return kuai_gcm_encrypt(k, iv, 12, in, len / 3, in, out, len, tag, 16);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    reader r = {data, size};
    kuai_cipher c = fuzz_pick_cipher(take_u8(&r), 0);
    const char *names[16];
    size_t nb = kuai_backends(c, names, 16);
    if (nb == 0)
        return 0; /* a cipher this build lacks */
    const char *backend = names[take_u8(&r) % (nb < 16 ? nb : 16)];
    int mode = take_u8(&r) % 6;
    int in_place = take_u8(&r) & 1;
    size_t bs = kuai_block_size(c), ks = kuai_key_size(c);
    if (mode == 5 && bs != 16)
        mode = 4;
    uint8_t key[32], iv0[32], iv_a[32], iv_b[32], tag_a[16], tag_b[16];
    take(&r, key, ks);
    take(&r, iv0, bs);
    size_t cut = take_u8(&r) | (size_t)take_u8(&r) << 8;

    static uint8_t in[MAXDATA], want[MAXDATA], got[MAXDATA];
    size_t len = r.n < MAXDATA ? r.n : MAXDATA;
    memcpy(in, r.p, len);
    if (mode < 4)
        len -= len % bs;

    kuai_key kr, kb;
    must(kuai_key_init_backend(&kr, c, key, ks, "ref") == KUAI_OK);
    must(kuai_key_init_backend(&kb, c, key, ks, backend) == KUAI_OK);
    memcpy(iv_a, iv0, bs);
    memcpy(iv_b, iv0, bs);
    must(run(&kr, mode, iv_a, in, want, len, tag_a) == KUAI_OK);

    uint8_t *dst = in_place ? in : got;
    if (mode == 5) {
        /* GCM in two streaming pieces against ref's one-shot. */
        kuai_gcm_ctx g;
        size_t aad = len / 3, first = len ? cut % (len + 1) : 0;
        must(kuai_gcm_init(&g, &kb, iv_b, 12) == KUAI_OK);
        must(kuai_gcm_aad(&g, in, aad) == KUAI_OK);
        /* the AAD is the plaintext's head: keep it before in-place output */
        static uint8_t pt[MAXDATA];
        memcpy(pt, in, len);
        must(kuai_gcm_encrypt_update(&g, pt, dst, first) == KUAI_OK);
        must(kuai_gcm_encrypt_update(&g, pt + first, dst + first, len - first) == KUAI_OK);
        must(kuai_gcm_encrypt_final(&g, tag_b, 16) == KUAI_OK);
        must(memcmp(tag_a, tag_b, 16) == 0);
        /* and back, with the tag checked */
        must(kuai_gcm_decrypt(&kb, iv0, 12, pt, aad, dst, dst, len, tag_b, 16) == KUAI_OK);
        must(memcmp(dst, pt, len) == 0);
        memcpy(dst, want, len);
    } else {
        /* Two pieces cut on a block boundary (CTR too: a partial block
         * ends a CTR message, as the API documents). */
        size_t first = len ? cut % (len + 1) : 0;
        first -= first % bs;
        must(run(&kb, mode, iv_b, in, dst, first, NULL) == KUAI_OK);
        must(run(&kb, mode, iv_b, in + first, dst + first, len - first, NULL) == KUAI_OK);
        must(memcmp(iv_a, iv_b, bs) == 0);
    }
    must(memcmp(dst, want, len) == 0);
    kuai_key_wipe(&kr);
    kuai_key_wipe(&kb);
    return 0;
}
