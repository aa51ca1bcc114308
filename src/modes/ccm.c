/* SPDX-License-Identifier: Apache-2.0 */
/*
 * CCM (NIST SP 800-38C, RFC 3610; RFC 8998's SM4-CCM) for the 128-bit-block
 * ciphers: a CBC-MAC over the formatted nonce, AAD and plaintext, and CTR
 * for the payload and to mask the tag.
 *
 * The payload goes a chunk at a time (KUAI_CHUNK_BLOCKS blocks): the CBC-MAC
 * over the chunk's plaintext through the backend's fused CBC kernel when it
 * has one, and CTR over the same chunk through the backend's CTR kernel,
 * while the chunk is in L1. Encryption MACs the chunk before encrypting it,
 * decryption decrypts before MACing, which is also what makes in == out
 * work. The counter field is L = 15 - nonce_len bytes wide and a legal
 * message never carries out of it, so the backends' whole-block counter
 * gives the same counter blocks.
 */
#include "../bytes.h"
#include "../ct.h"
#include "mac.h"
#include "modes.h"

static int ccm_check(const kuai_key *k, const uint8_t *nonce, size_t nonce_len, const uint8_t *aad,
                     size_t aad_len, const uint8_t *in, const uint8_t *out, size_t len,
                     const uint8_t *tag, size_t tag_len)
{
    /* key, 128-bit block, buffers, the nonce pointer: as CFB and OFB */
    int r = check_stream128(k, nonce, in, out, len);
    if (r)
        return r;
    if (nonce_len < 7 || nonce_len > 13 || !span_ok(nonce, nonce_len) || !tag || tag_len < 4 ||
        tag_len > 16 || tag_len % 2 || !span_ok(aad, aad_len))
        return KUAI_ERR_ARG;
    /* The length field holds L = 15 - nonce_len bytes (L >= 2). */
    size_t l = 15 - nonce_len;
    if (l < sizeof(uint64_t) && (uint64_t)len >> (8 * l))
        return KUAI_ERR_LENGTH;
    return KUAI_OK;
}

/* B_0 (the flags, the nonce and the payload's length) and A_0 (the flags
 * and the nonce, counter 0). */
static void ccm_format(uint8_t b0[16], uint8_t a0[16], const uint8_t *nonce, size_t nonce_len,
                       size_t aad_len, size_t len, size_t tag_len)
{
    size_t l = 15 - nonce_len;
    b0[0] = (uint8_t)((aad_len ? 64 : 0) | (tag_len - 2) / 2 << 3 | (l - 1));
    memcpy(b0 + 1, nonce, nonce_len);
    uint64_t q = len;
    for (size_t i = 15; i > nonce_len; i--, q >>= 8)
        b0[i] = (uint8_t)q;
    memset(a0, 0, 16);
    a0[0] = (uint8_t)(l - 1);
    memcpy(a0 + 1, nonce, nonce_len);
}

/* The formatted AAD through the CBC-MAC after B_0. */
static void ccm_mac_aad(const kuai_key *k, uint8_t mac[16], const uint8_t *aad, size_t aad_len)
{
    if (!aad_len)
        return;
    /* The AAD behind its length (2, 6 or 10 bytes), zero-padded to whole
     * blocks: staged a chunk at a time, as the prefix shifts it off the
     * block grid. */
    uint8_t stage[KUAI_CHUNK_BLOCKS * 16];
    size_t pos = 0;
    uint64_t a = aad_len;
    if (a < 0xff00) {
        store_be32(stage, (uint32_t)a << 16);
        pos = 2;
    } else if (a <= 0xffffffffu) {
        stage[0] = 0xff, stage[1] = 0xfe;
        store_be32(stage + 2, (uint32_t)a);
        pos = 6;
    } else {
        stage[0] = 0xff, stage[1] = 0xff;
        store_be64(stage + 2, a);
        pos = 10;
    }
    while (aad_len) {
        size_t n = sizeof stage - pos < aad_len ? sizeof stage - pos : aad_len;
        memcpy(stage + pos, aad, n);
        aad += n;
        aad_len -= n;
        pos += n;
        if (pos % 16) {
            memset(stage + pos, 0, 16 - pos % 16);
            pos += 16 - pos % 16;
        }
        kuai_cbc_mac(k, mac, stage, pos / 16);
        pos = 0;
    }
}

/* The payload's CBC-MAC alone, whole blocks then a zero-padded last one. */
static void ccm_mac_payload(const kuai_key *k, uint8_t mac[16], const uint8_t *p, size_t len)
{
    if (len >= 16)
        kuai_cbc_mac(k, mac, p, len / 16);
    if (len % 16) {
        uint8_t pad[16] = {0};
        memcpy(pad, p + (len & ~(size_t)15), len % 16);
        kuai_cbc_mac(k, mac, pad, 1);
        kuai_wipe(pad, sizeof pad);
    }
}

/* The payload: MAC and CTR a chunk at a time (see the top of the file). */
static void ccm_payload(const kuai_key *k, uint8_t mac[16], uint8_t ctr[16], const uint8_t *in,
                        uint8_t *out, size_t len, int enc)
{
    while (len >= 16) {
        size_t nb = len / 16 < KUAI_CHUNK_BLOCKS ? len / 16 : KUAI_CHUNK_BLOCKS;
        if (enc)
            kuai_cbc_mac(k, mac, in, nb);
        kuai_ctr_crypt(k, ctr, in, out, 16 * nb);
        if (!enc)
            kuai_cbc_mac(k, mac, out, nb);
        in += 16 * nb;
        out += 16 * nb;
        len -= 16 * nb;
    }
    if (len) {
        if (enc)
            ccm_mac_payload(k, mac, in, len);
        kuai_ctr_crypt(k, ctr, in, out, len);
        if (!enc)
            ccm_mac_payload(k, mac, out, len);
    }
}

/* Blocks of a short message's one cipher call: E(B_0), which starts the
 * CBC-MAC, E(A_0), which masks the tag, and the payload's keystream
 * (E(A_1) ...) are independent of each other, so a payload of up to
 * CCM_SHORT_BATCH - 2 blocks (224 bytes) takes them in one call where
 * there were three (one call of n + m blocks costs at most what calls of
 * n and m cost; gcm.c's GCM_SHORT_BATCH likewise). */
enum { CCM_SHORT_BATCH = 16 };

/* One CCM pass; mac gets the full masked tag, the CBC-MAC XOR E(A_0). */
static void ccm_run(const kuai_key *k, const uint8_t *nonce, size_t nonce_len, const uint8_t *aad,
                    size_t aad_len, const uint8_t *in, uint8_t *out, size_t len, size_t tag_len,
                    int enc, uint8_t mac[16])
{
    const size_t nd = len / 16 + (len % 16 != 0);
    if (nd <= CCM_SHORT_BATCH - 2) {
        _Alignas(16) uint8_t blk[16 * CCM_SHORT_BATCH];
        ccm_format(blk, blk + 16, nonce, nonce_len, aad_len, len, tag_len);
        for (size_t i = 1; i <= nd; i++) { /* A_i: i < 16 fits the counter's last byte */
            memcpy(blk + 16 * (1 + i), blk + 16, 15);
            blk[16 * (1 + i) + 15] = (uint8_t)i;
        }
        kuai_key_impl(k)->enc_blocks(k, blk, blk, 2 + nd);
        memcpy(mac, blk, 16); /* E(B_0): the CBC-MAC after B_0 */
        ccm_mac_aad(k, mac, aad, aad_len);
        if (enc) /* in == out allowed: the plaintext MACed before it is overwritten */
            ccm_mac_payload(k, mac, in, len);
        xor_bytes(out, in, blk + 32, len);
        if (!enc)
            ccm_mac_payload(k, mac, out, len);
        xor_bytes(mac, mac, blk + 16, 16);
        kuai_wipe(blk, 16 * (2 + nd));
        return;
    }
    uint8_t b0[16], a0[16], ctr[16];
    ccm_format(b0, a0, nonce, nonce_len, aad_len, len, tag_len);
    memset(mac, 0, 16);
    kuai_cbc_mac(k, mac, b0, 1);
    ccm_mac_aad(k, mac, aad, aad_len);
    memcpy(ctr, a0, 16);
    ctr[15] = 1;
    ccm_payload(k, mac, ctr, in, out, len, enc);
    kuai_key_impl(k)->enc_blocks(k, a0, a0, 1);
    xor_bytes(mac, mac, a0, 16);
    kuai_wipe(b0, sizeof b0);
    kuai_wipe(a0, sizeof a0);
    kuai_wipe(ctr, sizeof ctr);
}

int kuai_ccm_encrypt(const kuai_key *k, const uint8_t *nonce, size_t nonce_len, const uint8_t *aad,
                     size_t aad_len, const uint8_t *in, uint8_t *out, size_t len, uint8_t *tag,
                     size_t tag_len)
{
    int r = ccm_check(k, nonce, nonce_len, aad, aad_len, in, out, len, tag, tag_len);
    if (r)
        return r;
    uint8_t mac[16];
    ccm_run(k, nonce, nonce_len, aad, aad_len, in, out, len, tag_len, 1, mac);
    memcpy(tag, mac, tag_len);
    kuai_wipe(mac, sizeof mac);
    return KUAI_OK;
}

int kuai_ccm_decrypt(const kuai_key *k, const uint8_t *nonce, size_t nonce_len, const uint8_t *aad,
                     size_t aad_len, const uint8_t *in, uint8_t *out, size_t len,
                     const uint8_t *tag, size_t tag_len)
{
    int r = ccm_check(k, nonce, nonce_len, aad, aad_len, in, out, len, tag, tag_len);
    if (r)
        return r;
    /* The tag is read before out is written: a caller may decrypt a
     * ciphertext || tag buffer to where its tag lies. */
    uint8_t want[16], mac[16];
    memcpy(want, tag, tag_len);
    ccm_run(k, nonce, nonce_len, aad, aad_len, in, out, len, tag_len, 0, mac);
    return tag_verdict(mac, want, tag_len, out, len);
}
