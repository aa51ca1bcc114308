/* SPDX-License-Identifier: Apache-2.0 */
/*
 * OFB (NIST SP 800-38A) for the 128-bit-block ciphers. The keystream is
 * serial by nature (each block is the encryption of the one before): it is
 * CBC encryption of zeros, made a chunk at a time by the CBC code (the
 * backend's fused kernel when it has one), then XORed over the chunk in
 * one pass.
 *
 * The IV is advanced in place to the last keystream block, so a message may
 * be processed in pieces of whole blocks. A final partial block ends the
 * stream: the IV then holds the keystream block whose first bytes were used
 * (what OpenSSL's CRYPTO_ofb128_encrypt leaves in its ivec, with num = the
 * partial length).
 */
#include "modes.h"

int kuai_ofb_crypt(const kuai_key *k, uint8_t *iv, const uint8_t *in, uint8_t *out, size_t len)
{
    int r = check_stream128(k, iv, in, out, len);
    if (r)
        return r;
    uint8_t ks[KUAI_CHUNK_BLOCKS * 16];
    for (size_t off = 0; off < len;) {
        size_t bytes = len - off < sizeof ks ? len - off : sizeof ks;
        size_t nb = (bytes + 15) / 16;
        /* The keystream is CBC encryption of zeros: the backend's fused
         * CBC kernel keeps the chain in registers, and iv ends on the last
         * keystream block. */
        memset(ks, 0, 16 * nb);
        kuai_cbc_encrypt(k, iv, ks, ks, 16 * nb);
        xor_bytes(out + off, in + off, ks, bytes);
        off += bytes;
    }
    kuai_wipe(ks, sizeof ks);
    return KUAI_OK;
}
