/* SPDX-License-Identifier: Apache-2.0 */
/*
 * CFB128 (NIST SP 800-38A) for the 128-bit-block ciphers.
 *
 * Encryption is serial by nature (each keystream block is the encryption of
 * the previous ciphertext block): one enc_blocks call per block.
 * Decryption has all the ciphertext up front, so the keystream of a whole
 * chunk is one enc_blocks call over the previous ciphertext block and the
 * chunk's blocks but its last, and the wide kernels serve it.
 *
 * The IV is advanced in place to the last ciphertext block, so a message may
 * be processed in pieces of whole blocks. A final partial block of r bytes
 * ends the stream: the IV is then E(previous IV) with its first r bytes
 * XORed with the input, i.e. the r ciphertext bytes followed by the 16 - r
 * unused keystream bytes (what OpenSSL's CRYPTO_cfb128_encrypt leaves in
 * its ivec, with num = r).
 */
#include "modes.h"

int kuai_cfb_encrypt(const kuai_key *k, uint8_t *iv, const uint8_t *in, uint8_t *out, size_t len)
{
    int r = check_stream128(k, iv, in, out, len);
    if (r)
        return r;
    const kuai_impl *impl = kuai_key_impl(k);
    uint8_t ks[16];
    for (size_t off = 0; off < len; off += 16) {
        size_t n = len - off < 16 ? len - off : 16;
        impl->enc_blocks(k, iv, ks, 1);
        xor_bytes(out + off, in + off, ks, n);
        /* the new IV: the ciphertext block (or, for a partial block, the
         * ciphertext bytes and the unused keystream after them) */
        memcpy(iv, out + off, n);
        memcpy(iv + n, ks + n, 16 - n);
    }
    kuai_wipe(ks, sizeof ks);
    return KUAI_OK;
}

int kuai_cfb_decrypt(const kuai_key *k, uint8_t *iv, const uint8_t *in, uint8_t *out, size_t len)
{
    int r = check_stream128(k, iv, in, out, len);
    if (r)
        return r;
    const kuai_impl *impl = kuai_key_impl(k);
    uint8_t ks[KUAI_CHUNK_BLOCKS * 16];
    for (size_t off = 0; off < len;) {
        size_t bytes = len - off < sizeof ks ? len - off : sizeof ks;
        size_t nb = (bytes + 15) / 16;
        /* E(C_{i-1}) for the chunk: the IV, then the chunk's ciphertext
         * shifted by a block. */
        memcpy(ks, iv, 16);
        memcpy(ks + 16, in + off, 16 * (nb - 1));
        impl->enc_blocks(k, ks, ks, nb);
        size_t tail = bytes - 16 * (nb - 1); /* 1..16 bytes in the last block */
        /* The next IV before an in-place call overwrites the ciphertext. */
        uint8_t next[16];
        memcpy(next, in + off + 16 * (nb - 1), tail);
        memcpy(next + tail, ks + 16 * (nb - 1) + tail, 16 - tail);
        xor_bytes(out + off, in + off, ks, bytes);
        memcpy(iv, next, 16);
        off += bytes;
    }
    kuai_wipe(ks, sizeof ks);
    return KUAI_OK;
}
