/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target: kuai_kw_unwrap and kuai_kwp_unwrap on arbitrary bytes.
 *
 * Whatever the wrapped key, the call must return KUAI_OK or KUAI_ERR_AUTH
 * for a length the mode takes (else KUAI_ERR_LENGTH with nothing
 * written), never crash or read out of bounds; on KUAI_ERR_AUTH the output
 * must be zeros and the length untouched; on KUAI_OK (a forgery, or a real
 * wrapped key: the seed corpus has some) wrapping the key again must give
 * back the input. One byte picks the cipher (128-bit blocks), one KW or
 * KWP, 32 the key-encryption key; the rest is the wrapped key.
 */
#include "fuzz_input.h"
#include "kuai.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    reader r = {data, size};
    kuai_cipher c = fuzz_pick_cipher(take_u8(&r), 16);
    int pad = take_u8(&r) & 1;
    uint8_t kek[32];
    take(&r, kek, sizeof kek);
    const uint8_t *in = r.p;
    size_t len = r.n;

    kuai_key k;
    if (kuai_key_init(&k, c, kek, kuai_key_size(c)) != KUAI_OK)
        return 0; /* a cipher this build lacks */
    size_t room = len > 8 ? len - 8 : 0, got = (size_t)-1;
    uint8_t *out = malloc(room + 1), *back = malloc(len + 1);
    memset(out, 0xAA, room + 1);
    int rc = pad ? kuai_kwp_unwrap(&k, in, len, out, &got) : kuai_kw_unwrap(&k, in, len, out);
    int legal = len % 8 == 0 && len >= (pad ? 16u : 24u);
    if (!legal) {
        must(rc == KUAI_ERR_LENGTH);
        for (size_t i = 0; i < room; i++)
            must(out[i] == 0xAA);
    } else if (rc == KUAI_ERR_AUTH) {
        for (size_t i = 0; i < room; i++)
            must(out[i] == 0);
        must(got == (size_t)-1);
    } else {
        must(rc == KUAI_OK);
        if (pad) {
            must(got >= 1 && got <= room && room - got < 8);
            for (size_t i = got; i < room; i++)
                must(out[i] == 0);
            must(kuai_kwp_wrap(&k, out, got, back) == KUAI_OK);
        } else {
            must(kuai_kw_wrap(&k, out, room, back) == KUAI_OK);
        }
        must(memcmp(back, in, len) == 0);
    }
    must(out[room] == 0xAA); /* nothing written past the end */
    free(out);
    free(back);
    kuai_key_wipe(&k);
    return 0;
}
