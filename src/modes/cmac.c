/* SPDX-License-Identifier: Apache-2.0 */
/*
 * CMAC (NIST SP 800-38B, RFC 4493) for the 128-bit-block ciphers, one-shot
 * and streaming, and the CBC-MAC core that CCM shares.
 *
 * The streaming context holds back the last block seen (even a whole one)
 * until final, since only the last block is masked with K1 or K2.
 */
#include "mac.h"
#include "modes.h"

#define CMAC_MAGIC 0x636d6163u /* "cmac": set by init, cleared by wipe */

void kuai_cbc_mac(const kuai_key *k, uint8_t mac[16], const uint8_t *in, size_t nblocks)
{
    const kuai_impl *impl = kuai_key_impl(k);
    if (!impl->cbc_enc_blocks) {
        for (size_t i = 0; i < nblocks; i++) {
            xor_bytes(mac, mac, in + 16 * i, 16);
            impl->enc_blocks(k, mac, mac, 1);
        }
        return;
    }
    /* The fused kernel writes every chain value; only the last is wanted.
     * They depend on the message and key, so the scratch is wiped. */
    uint8_t scratch[KUAI_CHUNK_BLOCKS * 16];
    size_t used = 0;
    while (nblocks) {
        size_t n = nblocks < KUAI_CHUNK_BLOCKS ? nblocks : KUAI_CHUNK_BLOCKS;
        impl->cbc_enc_blocks(k, mac, in, scratch, n);
        used = n > used ? n : used;
        in += 16 * n;
        nblocks -= n;
    }
    kuai_wipe(scratch, 16 * used);
}

/* Multiplication by x in GF(2^128) on a big-endian block (SP 800-38B's
 * subkey doubling): shift left, reduce by 0x87, with no branch on the
 * (secret) top bit. */
static void dbl(uint8_t out[16], const uint8_t in[16])
{
    uint8_t red = (uint8_t)(0 - (in[0] >> 7)) & 0x87;
    for (size_t i = 0; i < 15; i++)
        out[i] = (uint8_t)(in[i] << 1 | in[i + 1] >> 7);
    out[15] = (uint8_t)(in[15] << 1) ^ red;
}

static int check_ctx(const kuai_cmac_ctx *c)
{
    if (!c || c->priv_magic != CMAC_MAGIC)
        return KUAI_ERR_ARG;
    /* The block size at every call, not only at init: the key may have
     * been set up again (as uBlock-256/256) since, and the CBC-MAC of a
     * 32-byte block overruns the 16-byte chain (issue 15 defect 10's
     * class). */
    return check_key128(c->priv_key);
}

static void cmac_setup(kuai_cmac_ctx *c, const kuai_key *k)
{
    memset(c, 0, sizeof *c);
    c->priv_key = k;
    uint8_t l[16] = {0};
    kuai_key_impl(k)->enc_blocks(k, l, l, 1);
    dbl(c->priv_k1, l);
    dbl(c->priv_k2, c->priv_k1);
    kuai_wipe(l, sizeof l);
    c->priv_magic = CMAC_MAGIC;
}

static void cmac_absorb(kuai_cmac_ctx *c, const uint8_t *msg, size_t len)
{
    size_t have = c->priv_buf_len;
    /* Fill the held block; hash it only when more data follows. */
    if (have < 16) {
        size_t n = 16 - have < len ? 16 - have : len;
        memcpy(c->priv_buf + have, msg, n);
        have += n;
        msg += n;
        len -= n;
    }
    if (len) {
        /* have == 16 and more follows: the held block is not the last. */
        kuai_cbc_mac(c->priv_key, c->priv_mac, c->priv_buf, 1);
        /* Whole blocks but the last (which may be whole: held back). */
        size_t nb = (len - 1) / 16;
        kuai_cbc_mac(c->priv_key, c->priv_mac, msg, nb);
        have = len - 16 * nb;
        memcpy(c->priv_buf, msg + 16 * nb, have);
    }
    c->priv_buf_len = (uint32_t)have;
}

static void cmac_finish(kuai_cmac_ctx *c, uint8_t *tag, size_t tag_len)
{
    size_t have = c->priv_buf_len;
    if (have == 16) {
        xor_bytes(c->priv_buf, c->priv_buf, c->priv_k1, 16);
    } else {
        c->priv_buf[have] = 0x80;
        memset(c->priv_buf + have + 1, 0, 15 - have);
        xor_bytes(c->priv_buf, c->priv_buf, c->priv_k2, 16);
    }
    kuai_cbc_mac(c->priv_key, c->priv_mac, c->priv_buf, 1);
    memcpy(tag, c->priv_mac, tag_len);
    kuai_cmac_wipe(c);
}

int kuai_cmac(const kuai_key *k, const uint8_t *msg, size_t len, uint8_t *tag, size_t tag_len)
{
    int r = check_key128(k);
    if (r)
        return r;
    if (!span_ok(msg, len) || !tag || tag_len < 4 || tag_len > 16)
        return KUAI_ERR_ARG;
    kuai_cmac_ctx c;
    cmac_setup(&c, k);
    if (len)
        cmac_absorb(&c, msg, len);
    cmac_finish(&c, tag, tag_len);
    return KUAI_OK;
}

int kuai_cmac_init(kuai_cmac_ctx *ctx, const kuai_key *k)
{
    if (!ctx)
        return KUAI_ERR_ARG;
    int r = check_key128(k);
    if (r)
        return r;
    cmac_setup(ctx, k);
    return KUAI_OK;
}

int kuai_cmac_update(kuai_cmac_ctx *ctx, const uint8_t *msg, size_t len)
{
    int r = check_ctx(ctx);
    if (r)
        return r;
    if (!span_ok(msg, len))
        return KUAI_ERR_ARG;
    if (len)
        cmac_absorb(ctx, msg, len);
    return KUAI_OK;
}

int kuai_cmac_final(kuai_cmac_ctx *ctx, uint8_t *tag, size_t tag_len)
{
    int r = check_ctx(ctx);
    if (r)
        return r;
    if (!tag || tag_len < 4 || tag_len > 16)
        return KUAI_ERR_ARG;
    cmac_finish(ctx, tag, tag_len);
    return KUAI_OK;
}

void kuai_cmac_wipe(kuai_cmac_ctx *ctx)
{
    if (ctx)
        kuai_wipe(ctx, sizeof *ctx);
}
