/* CBC: encryption is one block at a time by nature; decryption runs the
 * backend over whole chunks and chains afterwards. */
#include "modes.h"

int kuai_cbc_encrypt(const kuai_key *k, uint8_t *iv, const uint8_t *in, uint8_t *out, size_t len)
{
    size_t bs;
    int r = check_call(k, in, out, len, CALL_CBC, iv, &bs);
    if (r)
        return r;
    const kuai_impl *impl = kuai_key_impl(k);
    if (impl->cbc_enc_blocks) {
        if (len)
            impl->cbc_enc_blocks(k, iv, in, out, len / bs);
        return KUAI_OK;
    }
    const uint8_t *chain = iv;
    for (size_t off = 0; off < len; off += bs) {
        xor_bytes(out + off, in + off, chain, bs);
        impl->enc_blocks(k, out + off, out + off, 1);
        chain = out + off;
    }
    if (len)
        memmove(iv, chain, bs);
    return KUAI_OK;
}

int kuai_cbc_decrypt(const kuai_key *k, uint8_t *iv, const uint8_t *in, uint8_t *out, size_t len)
{
    size_t bs;
    int r = check_call(k, in, out, len, CALL_CBC, iv, &bs);
    if (r)
        return r;
    const kuai_impl *impl = kuai_key_impl(k);
    uint8_t tmp[KUAI_CHUNK_BLOCKS * KUAI_MAX_BLOCK];
    uint8_t prev[KUAI_MAX_BLOCK], next[KUAI_MAX_BLOCK];
    memcpy(prev, iv, bs);
    for (size_t off = 0; off < len;) {
        size_t n = (len - off) / bs;
        if (n > KUAI_CHUNK_BLOCKS)
            n = KUAI_CHUNK_BLOCKS;
        const uint8_t *c = in + off;
        uint8_t *p = out + off;
        impl->dec_blocks(k, c, tmp, n);
        /* Last block first: with in == out, each XOR still finds the
         * ciphertext block before it intact. */
        memcpy(next, c + (n - 1) * bs, bs);
        for (size_t i = n; i-- > 1;)
            xor_bytes(p + i * bs, tmp + i * bs, c + (i - 1) * bs, bs);
        xor_bytes(p, tmp, prev, bs);
        memcpy(prev, next, bs);
        off += n * bs;
    }
    memcpy(iv, prev, bs);
    kuai_wipe(tmp, sizeof tmp);
    return KUAI_OK;
}
