/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target: the provider's TLS 1.0-1.2 / DTLS CBC record mode
 * (provider/kuai_provider.c's kp_cbc_tls_record and kuai_prov_tls.c's
 * constant-time unpadding), compiled in and registered as a built-in
 * provider, on records of any length and content.
 *
 * The input picks the CBC cipher (any of kuai_ciphers() the provider
 * registers), key, IV, record version (TLS 1.0, 1.1, 1.2, DTLS 1.0, 1.2,
 * DTLS1_BAD_VER),
 * MAC size (0..64: 0 is encrypt-then-MAC), a record length (any, block
 * multiple or not) and its plaintext, which plain CBC (padding off, the
 * library's kuai_cbc_encrypt) turns into the record when the length is
 * whole blocks; then:
 *
 *  (a) opening the record gives what the record's bytes say, from a model
 *      written here from RFC 5246 6.2.3.2: a length that is not whole
 *      blocks, or too short for the explicit IV, a padding byte and the
 *      MAC, fails; a good padding (every one of its padding length + 1
 *      bytes equal to it, inside the record after IV and MAC) gives the
 *      data and the MAC before it; a bad one gives the length as if there
 *      were no padding and, with a MAC, success and a MAC that is not the
 *      record's bytes (checked from 8 bytes of MAC up: a random MAC of
 *      fewer bytes can match), without one (encrypt-then-MAC), failure;
 *  (b) nothing is left on OpenSSL's error queue by a record opened with a
 *      MAC, good padding or bad (a bad padding must look like a bad MAC);
 *  (c) for AES, OpenSSL's default provider opens the same record with the
 *      same result, length, data and (good padding) MAC;
 *  (d) the record's data and MAC sealed as an outgoing record open again
 *      to them, and for AES seal to the default provider's bytes.
 *
 * Any violation aborts.
 */
#include "fuzz_input.h"
#include "kuai.h"

#include <openssl/core.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <openssl/provider.h>

#include <string.h>

#define MAXREC 2048

int OSSL_provider_init(const OSSL_CORE_HANDLE *handle, const OSSL_DISPATCH *in,
                       const OSSL_DISPATCH **out, void **provctx);

static EVP_CIPHER *kuai_cbc[64], *dflt_cbc[64];
static kuai_cipher ids[64];
static size_t nciphers;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    must(OSSL_PROVIDER_add_builtin(NULL, "kuai", OSSL_provider_init) == 1);
    must(OSSL_PROVIDER_load(NULL, "kuai") != NULL);
    must(OSSL_PROVIDER_load(NULL, "default") != NULL);
    kuai_cipher all[64];
    size_t n = kuai_ciphers(all, 64);
    for (size_t i = 0; i < n && i < 64; i++) {
        char name[64];
        fuzz_provider_name(all[i], "CBC", name, sizeof name);
        EVP_CIPHER *c = EVP_CIPHER_fetch(NULL, name, "provider=kuai");
        if (c == NULL)
            continue; /* a cipher this build's provider leaves out */
        ids[nciphers] = all[i];
        kuai_cbc[nciphers] = c;
        dflt_cbc[nciphers] = EVP_CIPHER_fetch(NULL, name, "provider=default"); /* AES only */
        nciphers++;
    }
    must(nciphers > 0);
    ERR_clear_error();
    return 0;
}

static EVP_CIPHER_CTX *record_ctx(const EVP_CIPHER *c, const uint8_t *key, const uint8_t *iv,
                                  int enc, int version, size_t mac_size)
{
    EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
    OSSL_PARAM p[3] = {OSSL_PARAM_construct_int(OSSL_CIPHER_PARAM_TLS_VERSION, &version),
                       OSSL_PARAM_construct_size_t(OSSL_CIPHER_PARAM_TLS_MAC_SIZE, &mac_size),
                       OSSL_PARAM_END};
    must(x != NULL && EVP_CipherInit_ex2(x, c, key, iv, enc, NULL) == 1 &&
         EVP_CIPHER_CTX_set_params(x, p) == 1);
    return x;
}

/* Opens rec (len bytes, in place): 1 with the data length and MAC, or 0. */
static int record_open(const EVP_CIPHER *c, const uint8_t *key, const uint8_t *iv, int version,
                       size_t mac_size, uint8_t *rec, size_t len, int *outl, uint8_t *mac)
{
    EVP_CIPHER_CTX *x = record_ctx(c, key, iv, 0, version, mac_size);
    int ok = EVP_DecryptUpdate(x, rec, outl, rec, (int)len) == 1;
    if (ok && mac_size > 0) {
        uint8_t *m = NULL;
        OSSL_PARAM p[2] = {
            OSSL_PARAM_construct_octet_ptr(OSSL_CIPHER_PARAM_TLS_MAC, (void **)&m, mac_size),
            OSSL_PARAM_END};
        must(EVP_CIPHER_CTX_get_params(x, p) == 1 && m != NULL);
        memcpy(mac, m, mac_size);
    }
    EVP_CIPHER_CTX_free(x);
    return ok;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* DTLS1_BAD_VER (0x0100, the pre-standard DTLS OpenSSL still speaks)
     * has an explicit IV as DTLS 1.0 */
    static const int versions[] = {0x0301, 0x0302, 0x0303, 0xfeff, 0xfefd, 0x0100};
    reader r = {data, size};
    size_t ci = take_u8(&r) % nciphers;
    const kuai_cipher id = ids[ci];
    const size_t bs = kuai_block_size(id), keylen = kuai_key_size(id);
    const int version = versions[take_u8(&r) % 6];
    const size_t mac_size = take_u8(&r) % 65, skip = version == 0x0301 ? 0 : bs;
    size_t len = take_u8(&r);
    len = (len | (size_t)take_u8(&r) << 8) % (MAXREC + 1);
    if (take_u8(&r) & 1) /* mostly whole blocks: the lengths that reach the padding */
        len -= len % bs;
    uint8_t key[64], iv[32];
    take(&r, key, keylen);
    take(&r, iv, bs);
    /* the provider refuses a 32-byte IV ending in the key's first 16 bytes
     * (what `openssl enc` hands it for 16 given bytes: kp_init) */
    if (bs > 16 && memcmp(iv + 16, key, 16) == 0)
        iv[31] ^= 1;
    /* The plaintext: the input's bytes, with a padding of the input's
     * choosing at its end (else a good one is rare), one byte of it
     * changed if the input says so. */
    static uint8_t pt[MAXREC], rec[MAXREC], copy[MAXREC], mac[64], mac2[64];
    take(&r, pt, len);
    const uint8_t padv = take_u8(&r), how = take_u8(&r);
    size_t at = take_u8(&r);
    at |= (size_t)take_u8(&r) << 8;
    if (len > 0 && (how & 1)) {
        for (size_t i = 0; i <= padv && i < len; i++)
            pt[len - 1 - i] = padv;
        if (how & 2) /* a byte changed: mostly inside the padding */
            pt[len - 1 - at % (how & 4 ? len : (size_t)padv + 1u) % len] ^=
                (uint8_t)(1 + (how >> 3));
    }
    kuai_key k;
    must(kuai_key_init(&k, id, key, keylen) == KUAI_OK);
    if (len % bs == 0) {
        uint8_t ivc[32];
        memcpy(ivc, iv, bs);
        must(kuai_cbc_encrypt(&k, ivc, pt, rec, len) == KUAI_OK);
    } else {
        memcpy(rec, pt, len); /* refused before it is decrypted, whatever it holds */
    }

    /* (a) the model */
    const int pub_ok = len > 0 && len % bs == 0 && len >= skip + 1 + mac_size;
    int pad_ok = 0;
    size_t p = 0;
    if (pub_ok) {
        const size_t rl = len - skip;
        p = pt[len - 1];
        pad_ok = rl >= mac_size + 1 + p;
        for (size_t i = 0; pad_ok && i <= p; i++)
            pad_ok = pt[len - 1 - i] == p;
    }
    const int want_ok = pub_ok && (mac_size > 0 || pad_ok);
    const size_t want_len = !pub_ok  ? 0
                            : pad_ok ? len - skip - p - 1 - mac_size
                                     : len - skip - mac_size;

    ERR_clear_error();
    memcpy(copy, rec, len);
    int outl = -1;
    int ok = record_open(kuai_cbc[ci], key, iv, version, mac_size, copy, len, &outl, mac);
    must(ok == want_ok);
    if (ok) {
        must((size_t)outl == want_len);
        must(memcmp(copy + skip, pt + skip, want_len) == 0);
        if (mac_size > 0 && pad_ok)
            must(memcmp(mac, pt + skip + want_len, mac_size) == 0);
        if (mac_size >= 8 && !pad_ok)
            must(memcmp(mac, pt + skip + want_len, mac_size) != 0);
        must(ERR_peek_error() == 0); /* (b) */
    }
    ERR_clear_error();

    /* (c) */
    if (dflt_cbc[ci] != NULL) {
        memcpy(copy, rec, len);
        int outl2 = -1;
        int ok2 = record_open(dflt_cbc[ci], key, iv, version, mac_size, copy, len, &outl2, mac2);
        ERR_clear_error();
        must(ok2 == ok && (!ok || outl2 == outl));
        if (ok && mac_size > 0 && pad_ok)
            must(memcmp(mac2, mac, mac_size) == 0);
    }

    /* (d) the data and MAC the model read (or the whole record after its
     * IV) as an outgoing record: explicit IV || data || MAC, padded and
     * encrypted in place */
    if (len <= MAXREC - 2 * bs) {
        const size_t out_len = skip + (pub_ok ? want_len + mac_size : 0);
        uint8_t sealed[2][MAXREC];
        int sl[2] = {-1, -1};
        for (int s = 0; s < 2; s++) {
            const EVP_CIPHER *c = s ? dflt_cbc[ci] : kuai_cbc[ci];
            if (c == NULL)
                continue;
            memcpy(sealed[s], pt, out_len);
            EVP_CIPHER_CTX *x = record_ctx(c, key, iv, 1, version, mac_size);
            must(EVP_EncryptUpdate(x, sealed[s], &sl[s], sealed[s], (int)out_len) == 1);
            must((size_t)sl[s] == out_len + bs - out_len % bs);
            EVP_CIPHER_CTX_free(x);
            must(ERR_peek_error() == 0);
        }
        if (dflt_cbc[ci] != NULL)
            must(memcmp(sealed[0], sealed[1], (size_t)sl[0]) == 0);
        if (out_len >= skip + mac_size) { /* a record libssl could have made */
            int dl = -1;
            must(record_open(kuai_cbc[ci], key, iv, version, mac_size, sealed[0], (size_t)sl[0],
                             &dl, mac) == 1);
            must((size_t)dl == out_len - skip - mac_size);
            must(memcmp(sealed[0] + skip, pt + skip, (size_t)dl) == 0);
            must(memcmp(mac, pt + skip + (size_t)dl, mac_size) == 0);
        }
    }
    kuai_key_wipe(&k);
    ERR_clear_error();
    return 0;
}
