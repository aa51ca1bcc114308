/* SPDX-License-Identifier: Apache-2.0 */
/* ECB over the backend kernels. */
#include "modes.h"

int kuai_ecb_encrypt(const kuai_key *k, const uint8_t *in, uint8_t *out, size_t len)
{
    size_t bs;
    int r = check_call(k, in, out, len, CALL_ECB, NULL, &bs);
    if (r)
        return r;
    if (len)
        kuai_key_impl(k)->enc_blocks(k, in, out, kuai_blocks_in(len, bs));
    return KUAI_OK;
}

int kuai_ecb_decrypt(const kuai_key *k, const uint8_t *in, uint8_t *out, size_t len)
{
    size_t bs;
    int r = check_call(k, in, out, len, CALL_ECB, NULL, &bs);
    if (r)
        return r;
    if (len)
        kuai_key_impl(k)->dec_blocks(k, in, out, kuai_blocks_in(len, bs));
    return KUAI_OK;
}
