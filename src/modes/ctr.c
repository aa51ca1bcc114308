/* SPDX-License-Identifier: Apache-2.0 */
/* CTR: the backend's fused kernel when it has one, otherwise counter blocks
 * built here and pushed through enc_blocks. */
#include "modes.h"

/* Keystream for nblocks blocks XORed into in -> out, counter advanced. */
static void ctr_blocks(const kuai_key *k, const kuai_impl *impl, size_t bs, uint8_t *ctr,
                       const uint8_t *in, uint8_t *out, size_t nblocks)
{
    if (impl->ctr_blocks) {
        impl->ctr_blocks(k, ctr, in, out, nblocks);
        return;
    }
    uint8_t ks[KUAI_CHUNK_BLOCKS * KUAI_MAX_BLOCK];
    while (nblocks) {
        size_t n = nblocks < KUAI_CHUNK_BLOCKS ? nblocks : KUAI_CHUNK_BLOCKS;
        for (size_t i = 0; i < n; i++) {
            memcpy(ks + i * bs, ctr, bs);
            ctr_add(ctr, bs, 1);
        }
        impl->enc_blocks(k, ks, ks, n);
        xor_bytes(out, in, ks, n * bs);
        in += n * bs;
        out += n * bs;
        nblocks -= n;
    }
    kuai_wipe(ks, sizeof ks);
}

int kuai_ctr_crypt(const kuai_key *k, uint8_t *ctr, const uint8_t *in, uint8_t *out, size_t len)
{
    size_t bs;
    int r = check_call(k, in, out, len, CALL_CTR, ctr, &bs);
    if (r)
        return r;
    const kuai_impl *impl = kuai_key_impl(k);
    size_t full = kuai_blocks_in(len, bs), tail = kuai_tail_of(len, bs);
    if (full)
        ctr_blocks(k, impl, bs, ctr, in, out, full);
    if (tail) {
        uint8_t buf[KUAI_MAX_BLOCK] = {0};
        memcpy(buf, in + full * bs, tail);
        ctr_blocks(k, impl, bs, ctr, buf, buf, 1);
        memcpy(out + full * bs, buf, tail);
        kuai_wipe(buf, sizeof buf);
    }
    return KUAI_OK;
}
