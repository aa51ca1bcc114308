/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The kuai container (docs/format.md, include/kuai_file.h): a 64-byte
 * header, then 1 MiB chunks, each sealed on its own with its index and a
 * final-chunk flag bound in (the STREAM construction of age). The ciphers
 * come from libkuai; SHA-256, HMAC, HKDF, scrypt and random bytes from
 * libcrypto.
 */
#include "kuai_file.h"

#include <stdlib.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/rand.h>

/* "KUAI", then CR LF SUB LF as in PNG's signature: a text-mode transfer
 * that rewrites line ends is caught as a bad magic. */
static const uint8_t magic[8] = {'K', 'U', 'A', 'I', 0x0d, 0x0a, 0x1a, 0x0a};
#define SCRYPT_R 8
#define SCRYPT_P 1
#define MASTER_LEN 32 /* scrypt output length */
#define KEYS_MAGIC 0x6b666b31u
#define HDR KUAI_FILE_HEADER_SIZE
#define TAG KUAI_FILE_TAG_SIZE

/* Cipher ids in the header: the kuai_cipher values of kuai.h 0.1.0, fixed
 * by the format from now on. */
static int cipher_id_valid(unsigned id)
{
    return id >= KUAI_UBLOCK_128_128 && id <= KUAI_AES_256;
}

static void put_be64(uint8_t *p, uint64_t v)
{
    for (int i = 7; i >= 0; i--, v >>= 8)
        p[i] = (uint8_t)v;
}

int kuai_file_header_parse(const uint8_t *buf, size_t len, kuai_file_params *p,
                           kuai_file_header_error *why)
{
    kuai_file_header_error w = KUAI_FILE_HDR_OK;
    /* A caller switching on *why after any failure must not read a stale
     * or uninitialised value: the argument error has its own reason. NULL
     * with len 0 is an empty input, as elsewhere in the library. */
    if ((!buf && len) || !p) {
        if (why)
            *why = KUAI_FILE_HDR_ARG;
        return KUAI_ERR_ARG;
    }
    /* Fewer than 8 bytes are judged by what is there: a prefix of the
     * magic (none at all included) is a kuai file cut short, as a file of
     * the magic and part of a header is, not some other format. */
    size_t m = len < 8 ? len : 8;
    if (m && memcmp(buf, magic, m) != 0)
        w = KUAI_FILE_HDR_MAGIC;
    else if (len < HDR)
        w = KUAI_FILE_HDR_SHORT;
    else if (buf[8] != KUAI_FILE_VERSION)
        w = KUAI_FILE_HDR_VERSION;
    else {
        unsigned kdf = buf[10];
        int bad = !cipher_id_valid(buf[9]) || buf[11] != KUAI_FILE_CHUNK_LOG2 || buf[15] != 0 ||
                  (kdf != KUAI_FILE_KDF_KEY && kdf != KUAI_FILE_KDF_SCRYPT);
        if (!bad && kdf == KUAI_FILE_KDF_KEY)
            for (int i = 12; i < 32; i++)
                bad |= buf[i] != 0;
        /* scrypt (RFC 7914) also asks N < 2^(16 r): in the format's log2 N
         * range that only excludes r = 1 with log2 N >= 16, which libcrypto
         * would refuse after the header was accepted, and a damaged r byte
         * would then read as an out-of-memory failure, not as damage. */
        if (!bad && kdf == KUAI_FILE_KDF_SCRYPT)
            bad = buf[12] < KUAI_FILE_SCRYPT_LOG2N_MIN || buf[12] > KUAI_FILE_SCRYPT_LOG2N_MAX ||
                  buf[13] < 1 || buf[13] > 32 || buf[14] < 1 || buf[14] > 16 ||
                  buf[12] >= 16 * (unsigned)buf[13];
        if (bad)
            w = KUAI_FILE_HDR_FIELD;
        /* The header tag can only be checked after scrypt, so an unverified
         * header chooses scrypt's memory and time: cap them at the most
         * kuai itself writes (N = 2^20, r = 8, p = 1: 1 GiB). */
        else if (kdf == KUAI_FILE_KDF_SCRYPT && ((uint64_t)1 << buf[12]) * buf[13] * buf[14] >
                                                    ((uint64_t)1 << KUAI_FILE_SCRYPT_COST_LOG2_MAX))
            w = KUAI_FILE_HDR_COST;
    }
    if (why)
        *why = w;
    if (w != KUAI_FILE_HDR_OK)
        return KUAI_ERR_FORMAT;
    memset(p, 0, sizeof *p);
    p->cipher = (kuai_cipher)buf[9];
    p->kdf = (kuai_file_kdf)buf[10];
    p->scrypt_log2n = buf[12];
    p->scrypt_r = buf[13];
    p->scrypt_p = buf[14];
    memcpy(p->salt, buf + 16, 16);
    memcpy(p->nonce, buf + 32, 16);
    return 0;
}

int kuai_file_params_new(kuai_file_params *p, kuai_cipher cipher, kuai_file_kdf kdf,
                         unsigned scrypt_log2n)
{
    if (!p || !cipher_id_valid(cipher) || (kdf != KUAI_FILE_KDF_KEY && kdf != KUAI_FILE_KDF_SCRYPT))
        return KUAI_ERR_ARG;
    memset(p, 0, sizeof *p);
    p->cipher = cipher;
    p->kdf = kdf;
    if (kdf == KUAI_FILE_KDF_SCRYPT) {
        if (!scrypt_log2n)
            scrypt_log2n = KUAI_FILE_SCRYPT_LOG2N_DEFAULT;
        if (scrypt_log2n < KUAI_FILE_SCRYPT_LOG2N_MIN || scrypt_log2n > KUAI_FILE_SCRYPT_LOG2N_MAX)
            return KUAI_ERR_ARG;
        p->scrypt_log2n = scrypt_log2n;
        p->scrypt_r = SCRYPT_R;
        p->scrypt_p = SCRYPT_P;
        if (RAND_bytes(p->salt, 16) != 1)
            return KUAI_ERR_EXTERNAL;
    }
    if (RAND_bytes(p->nonce, 16) != 1)
        return KUAI_ERR_EXTERNAL;
    return 0;
}

/* Header bytes 0..47 from p; 0 or KUAI_ERR_ARG for values outside the
 * format (checked by parsing what was written). */
static int header_format(const kuai_file_params *p, uint8_t hdr[HDR])
{
    /* Checked whole before the byte casts below: a KDF of 256 would be
     * written as 0 (a raw key) while derive() ran scrypt for it. */
    if (!cipher_id_valid(p->cipher) ||
        (p->kdf != KUAI_FILE_KDF_KEY && p->kdf != KUAI_FILE_KDF_SCRYPT))
        return KUAI_ERR_ARG;
    memset(hdr, 0, HDR);
    memcpy(hdr, magic, 8);
    hdr[8] = KUAI_FILE_VERSION;
    hdr[9] = (uint8_t)p->cipher;
    hdr[10] = (uint8_t)p->kdf;
    hdr[11] = KUAI_FILE_CHUNK_LOG2;
    if (p->kdf == KUAI_FILE_KDF_SCRYPT) {
        if (p->scrypt_log2n > 255 || p->scrypt_r > 255 || p->scrypt_p > 255)
            return KUAI_ERR_ARG;
        hdr[12] = (uint8_t)p->scrypt_log2n;
        hdr[13] = (uint8_t)p->scrypt_r;
        hdr[14] = (uint8_t)p->scrypt_p;
        memcpy(hdr + 16, p->salt, 16);
    }
    memcpy(hdr + 32, p->nonce, 16);
    kuai_file_params check;
    if (kuai_file_header_parse(hdr, HDR, &check, NULL) != 0)
        return KUAI_ERR_ARG;
    return 0;
}

static int hkdf(const uint8_t *ikm, size_t ikm_len, const uint8_t *salt, const char *info,
                uint8_t *out, size_t out_len)
{
    EVP_KDF *kdf = EVP_KDF_fetch(NULL, "HKDF", NULL);
    if (!kdf)
        return KUAI_ERR_EXTERNAL;
    EVP_KDF_CTX *kc = EVP_KDF_CTX_new(kdf);
    EVP_KDF_free(kdf);
    if (!kc)
        return KUAI_ERR_EXTERNAL;
    OSSL_PARAM params[] = {
        OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, (char *)"SHA256", 0),
        OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY, (void *)ikm, ikm_len),
        OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SALT, (void *)salt, 16),
        OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_INFO, (void *)info, strlen(info)),
        OSSL_PARAM_construct_end()};
    int ok = EVP_KDF_derive(kc, out, out_len, params) == 1;
    EVP_KDF_CTX_free(kc);
    return ok ? 0 : KUAI_ERR_EXTERNAL;
}

/* HMAC-SHA-256 over the concatenation of up to three pieces, truncated to
 * 16 bytes. */
static int hmac16(const uint8_t key[32], const uint8_t *a, size_t alen, const uint8_t *b,
                  size_t blen, const uint8_t *c, size_t clen, uint8_t out[TAG])
{
    EVP_MAC *mac = EVP_MAC_fetch(NULL, "HMAC", NULL);
    EVP_MAC_CTX *mc = mac ? EVP_MAC_CTX_new(mac) : NULL;
    uint8_t full[32];
    size_t olen = 0;
    OSSL_PARAM params[] = {
        OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, (char *)"SHA256", 0),
        OSSL_PARAM_construct_end()};
    int ok = mc && EVP_MAC_init(mc, key, 32, params) == 1 && EVP_MAC_update(mc, a, alen) == 1 &&
             (!blen || EVP_MAC_update(mc, b, blen) == 1) &&
             (!clen || EVP_MAC_update(mc, c, clen) == 1) &&
             EVP_MAC_final(mc, full, &olen, sizeof full) == 1 && olen == 32;
    EVP_MAC_CTX_free(mc);
    EVP_MAC_free(mac);
    if (ok)
        memcpy(out, full, TAG);
    OPENSSL_cleanse(full, sizeof full);
    return ok ? 0 : KUAI_ERR_EXTERNAL;
}

/* The master key: the raw key, or scrypt(password, salt). */
static int master_key(const kuai_file_params *p, const uint8_t *secret, size_t secret_len,
                      uint8_t out[MASTER_LEN], size_t *out_len)
{
    if (p->kdf == KUAI_FILE_KDF_KEY) {
        if (secret_len != kuai_key_size(p->cipher))
            return KUAI_ERR_KEY_LEN;
        memcpy(out, secret, secret_len);
        *out_len = secret_len;
        return 0;
    }
    uint64_t n = (uint64_t)1 << p->scrypt_log2n;
    uint64_t r = p->scrypt_r, pp = p->scrypt_p;
    /* scrypt needs 128 r N p bytes (+ 128 r p); give it a little more. */
    uint64_t maxmem = 128 * r * (n + 2) * pp + (1u << 20);
    if (EVP_PBE_scrypt((const char *)secret, secret_len, p->salt, 16, n, r, pp, maxmem, out,
                       MASTER_LEN) != 1)
        return KUAI_ERR_EXTERNAL;
    *out_len = MASTER_LEN;
    return 0;
}

/* Derives k from the secret and hdr[0..48), and the header tag into tag. */
static int derive(kuai_file_keys *k, const kuai_file_params *p, const uint8_t *secret,
                  size_t secret_len, const uint8_t hdr[HDR], uint8_t tag[TAG])
{
    uint8_t master[MASTER_LEN], hkey[32], ckey[32];
    size_t mlen = 0, klen = kuai_key_size(p->cipher);
    memset(k, 0, sizeof *k);
    if (!secret && secret_len)
        return KUAI_ERR_ARG;
    k->priv_etm = kuai_block_size(p->cipher) != 16;
    int rc = master_key(p, secret, secret_len, master, &mlen);
    const uint8_t *nonce = hdr + 32;
    if (!rc)
        rc = hkdf(master, mlen, nonce, "kuai/v1 header", hkey, 32);
    if (!rc)
        rc = hkdf(master, mlen, nonce, "kuai/v1 cipher", ckey, klen);
    if (!rc && k->priv_etm)
        rc = hkdf(master, mlen, nonce, "kuai/v1 mac", k->priv_mac_key, 32);
    if (!rc)
        rc = hmac16(hkey, hdr, 48, NULL, 0, NULL, 0, tag);
    if (!rc)
        rc = kuai_key_init(&k->priv_key, p->cipher, ckey, klen);
    OPENSSL_cleanse(master, sizeof master);
    OPENSSL_cleanse(hkey, sizeof hkey);
    OPENSSL_cleanse(ckey, sizeof ckey);
    if (rc) {
        kuai_file_keys_wipe(k);
        return rc;
    }
    memcpy(k->priv_header, hdr, HDR);
    k->priv_magic = KEYS_MAGIC;
    return 0;
}

int kuai_file_seal_begin(kuai_file_keys *k, const kuai_file_params *p, const uint8_t *secret,
                         size_t secret_len, uint8_t header[HDR])
{
    uint8_t hdr[HDR];
    if (!k)
        return KUAI_ERR_ARG;
    /* k may hold another file's keys: whatever fails below, none are left
     * usable (or in memory) after a failed call. A plain wipe, not
     * kuai_file_keys_wipe: k may be uninitialised, and its magic is not
     * read (a kuai_key owns no memory, the wipe is all it needs). */
    OPENSSL_cleanse(k, sizeof *k);
    if (!p || !header)
        return KUAI_ERR_ARG;
    int rc = header_format(p, hdr);
    if (!rc)
        rc = derive(k, p, secret, secret_len, hdr, hdr + 48);
    if (rc)
        return rc;
    memcpy(k->priv_header, hdr, HDR);
    memcpy(header, hdr, HDR);
    return 0;
}

int kuai_file_open_begin(kuai_file_keys *k, const uint8_t header[HDR], const kuai_file_params *p,
                         const uint8_t *secret, size_t secret_len)
{
    uint8_t tag[TAG];
    if (!k)
        return KUAI_ERR_ARG;
    OPENSSL_cleanse(k, sizeof *k); /* as in kuai_file_seal_begin */
    if (!header || !p)
        return KUAI_ERR_ARG;
    /* The header tag covers the header, not p, and the keys come from p:
     * p must be the header's own fields (else keys for a cipher, salt or
     * scrypt cost the verified header does not name). */
    kuai_file_params h;
    if (kuai_file_header_parse(header, HDR, &h, NULL) != 0 || h.cipher != p->cipher ||
        h.kdf != p->kdf || h.scrypt_log2n != p->scrypt_log2n || h.scrypt_r != p->scrypt_r ||
        h.scrypt_p != p->scrypt_p || memcmp(h.salt, p->salt, 16) != 0 ||
        memcmp(h.nonce, p->nonce, 16) != 0)
        return KUAI_ERR_ARG;
    int rc = derive(k, p, secret, secret_len, header, tag);
    if (!rc && CRYPTO_memcmp(tag, header + 48, TAG) != 0) {
        kuai_file_keys_wipe(k);
        rc = KUAI_ERR_AUTH;
    }
    /* With a wrong secret, the header's tag under it: nothing to keep. */
    OPENSSL_cleanse(tag, sizeof tag);
    return rc;
}

void kuai_file_keys_wipe(kuai_file_keys *k)
{
    if (!k)
        return;
    if (k->priv_magic == KEYS_MAGIC)
        kuai_key_wipe(&k->priv_key);
    OPENSSL_cleanse(k, sizeof *k);
}

/* GCM IV: the chunk index as an 11-byte big-endian number, then the flag. */
static void gcm_iv(uint8_t iv[12], uint64_t idx, int last)
{
    memset(iv, 0, 12);
    put_be64(iv + 3, idx);
    iv[11] = (uint8_t)(last != 0);
}

/* CTR start block of uBlock-256/256: index (8 bytes), flag, 23 zero bytes;
 * a chunk uses 2^15 counter values, all in the zero bytes. */
static void etm_ctr(uint8_t ctr[32], uint64_t idx, int last)
{
    memset(ctr, 0, 32);
    put_be64(ctr, idx);
    ctr[8] = (uint8_t)(last != 0);
}

static int etm_tag(const kuai_file_keys *k, uint64_t idx, int last, const uint8_t *ct, size_t len,
                   uint8_t tag[TAG])
{
    uint8_t ib[9];
    put_be64(ib, idx);
    ib[8] = (uint8_t)(last != 0);
    return hmac16(k->priv_mac_key, k->priv_header, HDR, ib, 9, ct, len, tag);
}

static int chunk_args(const kuai_file_keys *k, int last, const uint8_t *in, size_t len,
                      const uint8_t *out)
{
    if (!k || k->priv_magic != KEYS_MAGIC || (!in && len) || !out)
        return KUAI_ERR_ARG;
    if (len > KUAI_FILE_CHUNK_SIZE || (!last && len != KUAI_FILE_CHUNK_SIZE))
        return KUAI_ERR_LENGTH;
    return 0;
}

int kuai_file_seal_chunk(const kuai_file_keys *k, uint64_t idx, int last, const uint8_t *in,
                         size_t len, uint8_t *out)
{
    int rc = chunk_args(k, last, in, len, out);
    if (rc)
        return rc;
    if (k->priv_etm) {
        uint8_t ctr[32];
        etm_ctr(ctr, idx, last);
        /* An argument error (in and out overlapping but not equal) comes
         * from kuai_ctr_crypt, which has then written nothing: out, which
         * holds part of in, is left alone. */
        rc = kuai_ctr_crypt(&k->priv_key, ctr, in, out, len);
        if (rc)
            return rc;
        rc = etm_tag(k, idx, last, out, len, out + len);
        if (rc)
            OPENSSL_cleanse(out, len + TAG);
        return rc;
    }
    uint8_t iv[12];
    gcm_iv(iv, idx, last);
    return kuai_gcm_encrypt(&k->priv_key, iv, 12, k->priv_header, HDR, in, out, len, out + len,
                            TAG);
}

/* 0 when the chunk's tag verifies under (idx, last), KUAI_ERR_AUTH if not;
 * writes nothing (GCM decrypts into a stack buffer that is wiped). */
static int verify_chunk(const kuai_file_keys *k, uint64_t idx, int last, const uint8_t *in,
                        size_t len)
{
    if (k->priv_etm) {
        uint8_t tag[TAG];
        int rc = etm_tag(k, idx, last, in, len, tag);
        if (!rc && CRYPTO_memcmp(tag, in + len, TAG) != 0)
            rc = KUAI_ERR_AUTH;
        /* On a mismatch this is the valid tag of a chunk someone altered:
         * a forgery, not to be left on the stack (GCM wipes its own). */
        OPENSSL_cleanse(tag, sizeof tag);
        return rc;
    }
    uint8_t iv[12], scratch[4096];
    kuai_gcm_ctx ctx;
    gcm_iv(iv, idx, last);
    int rc = kuai_gcm_init(&ctx, &k->priv_key, iv, 12);
    if (!rc)
        rc = kuai_gcm_aad(&ctx, k->priv_header, HDR);
    for (size_t off = 0; !rc && off < len; off += sizeof scratch) {
        size_t n = len - off < sizeof scratch ? len - off : sizeof scratch;
        rc = kuai_gcm_decrypt_update(&ctx, in + off, scratch, n);
    }
    if (!rc)
        rc = kuai_gcm_decrypt_final(&ctx, in + len, TAG);
    else
        kuai_gcm_wipe(&ctx);
    OPENSSL_cleanse(scratch, sizeof scratch);
    return rc;
}

static int open_one(const kuai_file_keys *k, uint64_t idx, int last, const uint8_t *in, size_t len,
                    uint8_t *out)
{
    if (k->priv_etm) {
        int rc = verify_chunk(k, idx, last, in, len);
        if (rc)
            return rc;
        uint8_t ctr[32];
        etm_ctr(ctr, idx, last);
        return kuai_ctr_crypt(&k->priv_key, ctr, in, out, len);
    }
    uint8_t iv[12];
    gcm_iv(iv, idx, last);
    return kuai_gcm_decrypt(&k->priv_key, iv, 12, k->priv_header, HDR, in, out, len, in + len, TAG);
}

int kuai_file_open_chunk(const kuai_file_keys *k, uint64_t idx, int last, const uint8_t *in,
                         size_t sealed_len, uint8_t *out)
{
    /* in holds at least the tag whatever sealed_len is: NULL is refused
     * here (chunk_args accepts it for no plaintext, as sealing may). */
    if (!k || k->priv_magic != KEYS_MAGIC || !in || !out)
        return KUAI_ERR_ARG;
    if (sealed_len < TAG)
        return last ? KUAI_ERR_TRUNCATED : KUAI_ERR_LENGTH;
    size_t len = sealed_len - TAG;
    int rc = chunk_args(k, last, in, len, out);
    if (rc)
        return rc;
    /* in == out is allowed, other overlaps of out and the ciphertext are
     * not (kuai_gcm_decrypt, kuai_ctr_crypt): refused here, before the
     * zeroing of a failed open's out below could wipe part of in. out on
     * the tag alone is fine: the tag is read (GCM) or checked (CTR+HMAC)
     * before out is written. Distances, not pointer order: in and out may
     * be different objects. */
    uintptr_t a = (uintptr_t)in, b = (uintptr_t)out;
    if (len && a != b && (a < b ? b - a : a - b) < len)
        return KUAI_ERR_ARG;
    if (!last) {
        rc = open_one(k, idx, 0, in, len, out);
    } else {
        /* A final chunk that fails may be a non-final one: the file was cut
         * at a chunk boundary. Opening in place would leave nothing to
         * check that on, so there the tag is checked first. */
        int overlap = out < in + sealed_len && in < out + len;
        rc = overlap ? verify_chunk(k, idx, 1, in, len) : open_one(k, idx, 1, in, len, out);
        if (rc == KUAI_ERR_AUTH && verify_chunk(k, idx, 0, in, len) == 0)
            rc = KUAI_ERR_TRUNCATED;
        if (!rc && overlap)
            rc = open_one(k, idx, 1, in, len, out);
    }
    /* out is zeros unless the tag verifies (kuai_file.h), in place too
     * (the ciphertext there): the encrypt-then-MAC chunks of uBlock-256/256
     * are checked before anything is written, and in place nothing was */
    if (rc)
        OPENSSL_cleanse(out, len);
    return rc;
}

/* ---- whole streams through callbacks ---- */

/* Fills buf with up to n bytes: the count, or -1. */
static long read_full_cb(kuai_file_read_fn rd, void *ctx, uint8_t *buf, size_t n)
{
    size_t got = 0;
    while (got < n) {
        long r = rd(ctx, buf + got, n - got);
        if (r < 0 || (size_t)r > n - got)
            return -1;
        if (r == 0)
            break;
        got += (size_t)r;
    }
    return (long)got;
}

int kuai_file_encrypt_stream(const kuai_file_params *p, const uint8_t *secret, size_t secret_len,
                             kuai_file_read_fn rd, void *rctx, kuai_file_write_fn wr, void *wctx)
{
    if (!p || !rd || !wr)
        return KUAI_ERR_ARG;
    kuai_file_keys k;
    uint8_t hdr[HDR];
    int rc = kuai_file_seal_begin(&k, p, secret, secret_len, hdr);
    if (rc)
        return rc;
    uint8_t *buf = malloc(KUAI_FILE_SEALED_SIZE + 1);
    if (!buf) {
        kuai_file_keys_wipe(&k);
        return KUAI_ERR_EXTERNAL;
    }
    if (wr(wctx, hdr, HDR) != 0)
        rc = KUAI_ERR_IO;
    /* One byte read ahead (kept at buf[CHUNK]) tells the last chunk. */
    size_t have = 0;
    for (uint64_t idx = 0; !rc; idx++) {
        long n = read_full_cb(rd, rctx, buf + have, KUAI_FILE_CHUNK_SIZE + 1 - have);
        if (n < 0) {
            rc = KUAI_ERR_IO;
            break;
        }
        have += (size_t)n;
        int last = have <= KUAI_FILE_CHUNK_SIZE;
        size_t len = last ? have : KUAI_FILE_CHUNK_SIZE;
        uint8_t peek = buf[KUAI_FILE_CHUNK_SIZE];
        rc = kuai_file_seal_chunk(&k, idx, last, buf, len, buf);
        if (!rc && wr(wctx, buf, len + TAG) != 0)
            rc = KUAI_ERR_IO;
        if (last)
            break;
        buf[0] = peek;
        have = 1;
    }
    OPENSSL_cleanse(buf, KUAI_FILE_SEALED_SIZE + 1);
    free(buf);
    kuai_file_keys_wipe(&k);
    return rc;
}

int kuai_file_decrypt_stream(kuai_file_kdf secret_kdf, const uint8_t *secret, size_t secret_len,
                             kuai_file_read_fn rd, void *rctx, kuai_file_write_fn wr, void *wctx,
                             kuai_file_params *params)
{
    if (!rd || !wr)
        return KUAI_ERR_ARG;
    uint8_t hdr[HDR];
    kuai_file_params p;
    long n = read_full_cb(rd, rctx, hdr, HDR);
    if (n < 0)
        return KUAI_ERR_IO;
    int rc = kuai_file_header_parse(hdr, (size_t)n, &p, NULL);
    if (rc)
        return rc;
    if (params)
        *params = p;
    if (p.kdf != secret_kdf)
        return KUAI_ERR_ARG;
    kuai_file_keys k;
    rc = kuai_file_open_begin(&k, hdr, &p, secret, secret_len);
    if (rc)
        return rc;
    uint8_t *buf = malloc(KUAI_FILE_SEALED_SIZE + 1);
    if (!buf) {
        kuai_file_keys_wipe(&k);
        return KUAI_ERR_EXTERNAL;
    }
    size_t have = 0;
    for (uint64_t idx = 0;; idx++) {
        n = read_full_cb(rd, rctx, buf + have, KUAI_FILE_SEALED_SIZE + 1 - have);
        if (n < 0) {
            rc = KUAI_ERR_IO;
            break;
        }
        have += (size_t)n;
        int last = have <= KUAI_FILE_SEALED_SIZE;
        size_t len = last ? have : KUAI_FILE_SEALED_SIZE;
        if (last && idx > 0 && len == 0) {
            rc = KUAI_ERR_TRUNCATED; /* unreachable: a full chunk then nothing is last */
            break;
        }
        uint8_t peek = buf[KUAI_FILE_SEALED_SIZE];
        rc = kuai_file_open_chunk(&k, idx, last, buf, len, buf);
        if (!rc && wr(wctx, buf, len - TAG) != 0)
            rc = KUAI_ERR_IO;
        if (rc || last)
            break;
        buf[0] = peek;
        have = 1;
    }
    OPENSSL_cleanse(buf, KUAI_FILE_SEALED_SIZE + 1);
    free(buf);
    kuai_file_keys_wipe(&k);
    return rc;
}
