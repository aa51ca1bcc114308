/* SPDX-License-Identifier: Apache-2.0 */
/* CBC: encryption is one block at a time by nature; decryption runs the
 * backend over whole chunks and chains afterwards. */
#include "modes.h"

int kuai_cbc_encrypt(const kuai_key *k, uint8_t *iv, const uint8_t *in, uint8_t *out, size_t len)
{
    size_t bs;
    int r = check_call(k, in, out, len, CALL_CBC, iv, &bs);
    if (r)
        return r;
    cbc_encrypt_checked(k, iv, in, out, len, bs);
    return KUAI_OK;
}

void cbc_encrypt_checked(const kuai_key *k, uint8_t *iv, const uint8_t *in, uint8_t *out,
                         size_t len, size_t bs)
{
    const kuai_impl *impl = kuai_key_impl(k);
    if (impl->cbc_enc_blocks) {
        if (len)
            impl->cbc_enc_blocks(k, iv, in, out, kuai_blocks_in(len, bs));
        return;
    }
    const uint8_t *chain = iv;
    for (size_t off = 0; off < len; off += bs) {
        xor_bytes(out + off, in + off, chain, bs);
        impl->enc_blocks(k, out + off, out + off, 1);
        chain = out + off;
    }
    if (len)
        memmove(iv, chain, bs);
}

int kuai_cbc_decrypt(const kuai_key *k, uint8_t *iv, const uint8_t *in, uint8_t *out, size_t len)
{
    size_t bs;
    int r = check_call(k, in, out, len, CALL_CBC, iv, &bs);
    if (r)
        return r;
    cbc_decrypt_checked(k, iv, in, out, len, bs);
    return KUAI_OK;
}

void cbc_decrypt_checked(const kuai_key *k, uint8_t *iv, const uint8_t *in, uint8_t *out,
                         size_t len, size_t bs)
{
    const kuai_impl *impl = kuai_key_impl(k);
    if (impl->cbc_dec_blocks) {
        if (len)
            impl->cbc_dec_blocks(k, iv, in, out, kuai_blocks_in(len, bs));
        return;
    }
    /* In place, a chunk's ciphertext is kept here before decryption
     * overwrites it; it is public, so the copy needs no wiping. */
    uint8_t saved[KUAI_CHUNK_BLOCKS * KUAI_MAX_BLOCK];
    uint8_t prev[KUAI_MAX_BLOCK];
    memcpy(prev, iv, bs);
    for (size_t off = 0; off < len;) {
        size_t n = kuai_blocks_in(len - off, bs);
        if (n > KUAI_CHUNK_BLOCKS)
            n = KUAI_CHUNK_BLOCKS;
        const uint8_t *c = in + off;
        uint8_t *p = out + off;
        if (c == p) {
            memcpy(saved, c, n * bs);
            c = saved;
        }
        /* Decrypt straight into the output, then one forward XOR pass with
         * the ciphertext shifted by a block: no plaintext buffer to wipe,
         * and the XOR runs over the whole chunk at once. */
        impl->dec_blocks(k, c, p, n);
        xor_bytes(p, p, prev, bs);
        xor_bytes(p + bs, p + bs, c, (n - 1) * bs);
        memcpy(prev, c + (n - 1) * bs, bs);
        off += n * bs;
    }
    memcpy(iv, prev, bs);
}
