/* SPDX-License-Identifier: Apache-2.0 */
/*
 * kuai_file_test: the .kuai container component (include/kuai_file.h).
 * Containers made by the kuai tool before the component existed
 * (tests/vectors/container) must open, and be made again byte for byte
 * from their headers; round trips over chunk boundaries for every cipher;
 * truncation, reordering, tampering, wrong keys and passwords rejected
 * with nothing unverified written. Runs in about a second.
 */
#include "kuai_file.h"

#include <openssl/evp.h>
#include <openssl/rand.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CH KUAI_FILE_CHUNK_SIZE
#define TAG KUAI_FILE_TAG_SIZE
#define HDR KUAI_FILE_HEADER_SIZE

static int passed, failed;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (cond) {                                                                                \
            passed++;                                                                              \
        } else {                                                                                   \
            failed++;                                                                              \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                                   \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
        }                                                                                          \
    } while (0)

static const struct {
    kuai_cipher c;
    const char *name;
} ciphers[] = {{KUAI_UBLOCK_128_128, "ublock-128-128"},
               {KUAI_UBLOCK_128_256, "ublock-128-256"},
               {KUAI_UBLOCK_256_256, "ublock-256-256"},
               {KUAI_SM4, "sm4"},
               {KUAI_AES_128, "aes-128"},
               {KUAI_AES_192, "aes-192"},
               {KUAI_AES_256, "aes-256"}};
#define NCIPHERS (sizeof ciphers / sizeof ciphers[0])

/* Memory streams for the callbacks; reads come in pieces of at most step
 * bytes (step 0: as asked), to exercise short reads. */
typedef struct mem {
    uint8_t *p;
    size_t len, pos, cap, step;
    int fail_at; /* write: fail the fail_at-th call (1-based); 0 never */
    int calls;
} mem;

static long mem_read(void *ctx, uint8_t *buf, size_t n)
{
    mem *m = ctx;
    size_t k = m->len - m->pos < n ? m->len - m->pos : n;
    if (m->step && k > m->step)
        k = m->step;
    memcpy(buf, m->p + m->pos, k);
    m->pos += k;
    return (long)k;
}

static int mem_write(void *ctx, const uint8_t *buf, size_t n)
{
    mem *m = ctx;
    if (++m->calls == m->fail_at || m->len + n > m->cap)
        return -1;
    memcpy(m->p + m->len, buf, n);
    m->len += n;
    return 0;
}

static size_t sealed_len(size_t n)
{
    return HDR + n + TAG * (n == 0 ? 1 : (n + CH - 1) / CH);
}

static uint8_t *xalloc(size_t n)
{
    uint8_t *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }
    return p;
}

static int encrypt_mem(const kuai_file_params *p, const uint8_t *secret, size_t slen,
                       const uint8_t *pt, size_t n, uint8_t *ct, size_t cap, size_t *ct_len)
{
    mem in = {.p = (uint8_t *)pt, .len = n, .step = 100003}, out = {.p = ct, .cap = cap};
    int rc = kuai_file_encrypt_stream(p, secret, slen, mem_read, &in, mem_write, &out);
    *ct_len = out.len;
    return rc;
}

static int decrypt_mem(kuai_file_kdf kdf, const uint8_t *secret, size_t slen, const uint8_t *ct,
                       size_t n, uint8_t *pt, size_t cap, size_t *pt_len)
{
    mem in = {.p = (uint8_t *)ct, .len = n, .step = 77777}, out = {.p = pt, .cap = cap};
    int rc = kuai_file_decrypt_stream(kdf, secret, slen, mem_read, &in, mem_write, &out, NULL);
    *pt_len = out.len;
    return rc;
}

static uint8_t *read_file(const char *name, size_t *len)
{
    char path[512];
    snprintf(path, sizeof path, "%s/tests/vectors/container/%s", KUAI_SOURCE_DIR, name);
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "cannot open %s\n", path);
        exit(2);
    }
    uint8_t *buf = xalloc(1 << 16);
    *len = fread(buf, 1, 1 << 16, f);
    fclose(f);
    return buf;
}

static void pattern(uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)(131 * i + (i >> 11));
}

/* A container of the tool opens; made again from its header (same salt and
 * nonce), it comes out byte for byte. */
static void check_known(const char *file, kuai_file_kdf kdf, const uint8_t *secret, size_t slen,
                        const uint8_t *want, size_t want_len)
{
    size_t n, got;
    uint8_t *ct = read_file(file, &n), out[256], again[512];
    kuai_file_params p;
    int rc = decrypt_mem(kdf, secret, slen, ct, n, out, sizeof out, &got);
    CHECK(rc == 0 && got == want_len && memcmp(out, want, got) == 0, "%s: opens (rc %d)", file, rc);
    CHECK(kuai_file_header_parse(ct, n, &p, NULL) == 0, "%s: header", file);
    rc = encrypt_mem(&p, secret, slen, want, want_len, again, sizeof again, &got);
    CHECK(rc == 0 && got == n && memcmp(again, ct, n) == 0, "%s: made again byte for byte", file);
    /* The wrong secret: the header tag fails. */
    uint8_t wrong[64];
    memcpy(wrong, secret, slen);
    wrong[0] ^= 1;
    rc = decrypt_mem(kdf, wrong, slen, ct, n, out, sizeof out, &got);
    CHECK(rc == KUAI_ERR_AUTH && got == 0, "%s: wrong key or password gives AUTH (%d)", file, rc);
    free(ct);
}

static void test_known_answers(void)
{
    static const uint8_t pt[] = "kuai container test vector\n";
    uint8_t key[32];
    for (int i = 0; i < 32; i++)
        key[i] = (uint8_t)i;
    for (size_t i = 0; i < NCIPHERS; i++) {
        char file[64];
        snprintf(file, sizeof file, "%s.kuai", ciphers[i].name);
        check_known(file, KUAI_FILE_KDF_KEY, key, kuai_key_size(ciphers[i].c), pt, sizeof pt - 1);
    }
    check_known("sm4-password.kuai", KUAI_FILE_KDF_SCRYPT, (const uint8_t *)"password", 8, pt,
                sizeof pt - 1);
    static const char pw[] = "pass word \xc3\xa9";
    check_known("ublock-256-256-password.kuai", KUAI_FILE_KDF_SCRYPT, (const uint8_t *)pw,
                sizeof pw - 1, pt, 0);

    /* Multi-chunk containers: made again, hashed, opened. */
    char path[512], line[512];
    snprintf(path, sizeof path, "%s/tests/vectors/container/multichunk.txt", KUAI_SOURCE_DIR);
    FILE *f = fopen(path, "r");
    CHECK(f != NULL, "open %s", path);
    int rows = 0;
    while (f && fgets(line, sizeof line, f)) {
        char name[32], hhex[2 * HDR + 1], shex[65];
        size_t n;
        if (line[0] == '#' || sscanf(line, "%31s %zu %128s %64s", name, &n, hhex, shex) != 4)
            continue;
        rows++;
        kuai_cipher c = 0;
        for (size_t i = 0; i < NCIPHERS; i++)
            if (strcmp(name, ciphers[i].name) == 0)
                c = ciphers[i].c;
        uint8_t hdr[HDR], sha[32], want[32];
        for (int i = 0; i < HDR; i++)
            sscanf(hhex + 2 * i, "%2hhx", &hdr[i]);
        for (int i = 0; i < 32; i++)
            sscanf(shex + 2 * i, "%2hhx", &want[i]);
        kuai_file_params p;
        CHECK(kuai_file_header_parse(hdr, HDR, &p, NULL) == 0 && p.cipher == c, "%s header", name);
        uint8_t *pat = xalloc(n), *ct = xalloc(sealed_len(n)), *back = xalloc(n);
        size_t ct_len, back_len;
        pattern(pat, n);
        int rc = encrypt_mem(&p, key, kuai_key_size(c), pat, n, ct, sealed_len(n), &ct_len);
        unsigned ol;
        EVP_Digest(ct, ct_len, sha, &ol, EVP_sha256(), NULL);
        CHECK(rc == 0 && ct_len == sealed_len(n) && memcmp(ct, hdr, HDR) == 0 &&
                  memcmp(sha, want, 32) == 0,
              "%s %zu bytes: the tool's container byte for byte", name, n);
        rc = decrypt_mem(KUAI_FILE_KDF_KEY, key, kuai_key_size(c), ct, ct_len, back, n, &back_len);
        CHECK(rc == 0 && back_len == n && memcmp(back, pat, n) == 0, "%s %zu bytes: opens", name,
              n);
        free(pat);
        free(ct);
        free(back);
    }
    CHECK(rows == 5, "multichunk.txt: %d rows", rows);
    if (f)
        fclose(f);
}

/* The output of a rejected decryption: whole verified chunks of pt only. */
static void check_rejected(const char *what, int rc, int want_rc, const uint8_t *out,
                           size_t out_len, const uint8_t *pt, size_t pt_len)
{
    CHECK(rc == want_rc, "%s: rc %d, want %d", what, rc, want_rc);
    CHECK(out_len % CH == 0 && out_len < (pt_len ? pt_len : 1) && memcmp(out, pt, out_len) == 0,
          "%s: %zu bytes released", what, out_len);
}

static void test_round_trips(void)
{
    static const size_t lens[] = {0, 1, CH - 1, CH, CH + 1, 3 * CH + 5};
    const size_t max = 3 * CH + 5;
    uint8_t *pt = xalloc(max), *ct = xalloc(sealed_len(max) + 64), *out = xalloc(max + 64);
    uint8_t key[32], wrong[32];
    RAND_bytes(pt, (int)max);
    for (size_t ci = 0; ci < NCIPHERS; ci++) {
        kuai_cipher c = ciphers[ci].c;
        const char *nm = ciphers[ci].name;
        size_t ks = kuai_key_size(c);
        RAND_bytes(key, sizeof key);
        memcpy(wrong, key, sizeof key);
        wrong[ks - 1] ^= 0x80;
        for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++) {
            size_t n = lens[li], ct_len, out_len;
            kuai_file_params p;
            CHECK(kuai_file_params_new(&p, c, KUAI_FILE_KDF_KEY, 0) == 0, "params");
            int rc = encrypt_mem(&p, key, ks, pt, n, ct, sealed_len(max) + 64, &ct_len);
            CHECK(rc == 0 && ct_len == sealed_len(n), "%s %zu: seal (%d, %zu bytes)", nm, n, rc,
                  ct_len);
            rc = decrypt_mem(KUAI_FILE_KDF_KEY, key, ks, ct, ct_len, out, max, &out_len);
            CHECK(rc == 0 && out_len == n && memcmp(out, pt, n) == 0, "%s %zu: open (%d)", nm, n,
                  rc);
            char what[96];
            /* Wrong key; a key of the wrong length. */
            rc = decrypt_mem(KUAI_FILE_KDF_KEY, wrong, ks, ct, ct_len, out, max, &out_len);
            snprintf(what, sizeof what, "%s %zu wrong key", nm, n);
            check_rejected(what, rc, KUAI_ERR_AUTH, out, out_len, pt, n);
            rc = decrypt_mem(KUAI_FILE_KDF_KEY, key, ks == 16 ? 32 : 16, ct, ct_len, out, max,
                             &out_len);
            CHECK(rc == KUAI_ERR_KEY_LEN && out_len == 0, "%s %zu: key length (%d)", nm, n, rc);
            /* One byte flipped: in the header (tag, nonce), in the first
             * chunk, its tag, and the last byte of the file. */
            size_t pos[] = {HDR - 1, 40, HDR, HDR + n / 2, ct_len - 1, ct_len - TAG - 1};
            for (size_t k = 0; k < sizeof pos / sizeof pos[0]; k++) {
                if (pos[k] >= ct_len)
                    continue;
                ct[pos[k]] ^= 0x10;
                rc = decrypt_mem(KUAI_FILE_KDF_KEY, key, ks, ct, ct_len, out, max, &out_len);
                snprintf(what, sizeof what, "%s %zu flip at %zu", nm, n, pos[k]);
                check_rejected(what, rc, KUAI_ERR_AUTH, out, out_len, pt, n);
                ct[pos[k]] ^= 0x10;
            }
            /* A header field changed: refused before any key work. */
            ct[11] ^= 1;
            rc = decrypt_mem(KUAI_FILE_KDF_KEY, key, ks, ct, ct_len, out, max, &out_len);
            CHECK(rc == KUAI_ERR_FORMAT && out_len == 0, "%s %zu: chunk size byte (%d)", nm, n, rc);
            ct[11] ^= 1;
            /* Cut: to the header alone, mid-chunk, at every chunk boundary. */
            rc = decrypt_mem(KUAI_FILE_KDF_KEY, key, ks, ct, HDR, out, max, &out_len);
            snprintf(what, sizeof what, "%s %zu header only", nm, n);
            check_rejected(what, rc, KUAI_ERR_TRUNCATED, out, out_len, pt, n);
            rc = decrypt_mem(KUAI_FILE_KDF_KEY, key, ks, ct, ct_len - 1, out, max, &out_len);
            snprintf(what, sizeof what, "%s %zu cut by a byte", nm, n);
            check_rejected(what, rc, n == 0 ? KUAI_ERR_TRUNCATED : KUAI_ERR_AUTH, out, out_len, pt,
                           n);
            for (size_t b = HDR + CH + TAG; b < ct_len; b += CH + TAG) {
                rc = decrypt_mem(KUAI_FILE_KDF_KEY, key, ks, ct, b, out, max, &out_len);
                snprintf(what, sizeof what, "%s %zu cut at %zu", nm, n, b);
                check_rejected(what, rc, KUAI_ERR_TRUNCATED, out, out_len, pt, n);
            }
            /* Appended bytes: the last chunk is not last any more. */
            memset(ct + ct_len, 0, 17);
            rc = decrypt_mem(KUAI_FILE_KDF_KEY, key, ks, ct, ct_len + 17, out, max, &out_len);
            snprintf(what, sizeof what, "%s %zu appended", nm, n);
            check_rejected(what, rc, KUAI_ERR_AUTH, out, out_len, pt, n);
            /* Chunks 0 and 1 swapped (both full). */
            if (n >= 2 * CH + 1) {
                uint8_t *tmp = xalloc(CH + TAG);
                memcpy(tmp, ct + HDR, CH + TAG);
                memmove(ct + HDR, ct + HDR + CH + TAG, CH + TAG);
                memcpy(ct + HDR + CH + TAG, tmp, CH + TAG);
                rc = decrypt_mem(KUAI_FILE_KDF_KEY, key, ks, ct, ct_len, out, max, &out_len);
                snprintf(what, sizeof what, "%s %zu chunks swapped", nm, n);
                check_rejected(what, rc, KUAI_ERR_AUTH, out, out_len, pt, n);
                /* Chunk 1 dropped. */
                memcpy(ct + HDR, tmp, CH + TAG);
                memmove(ct + HDR + CH + TAG, ct + HDR + 2 * (CH + TAG),
                        ct_len - HDR - 2 * (CH + TAG));
                rc = decrypt_mem(KUAI_FILE_KDF_KEY, key, ks, ct, ct_len - CH - TAG, out, max,
                                 &out_len);
                snprintf(what, sizeof what, "%s %zu chunk dropped", nm, n);
                check_rejected(what, rc, KUAI_ERR_AUTH, out, out_len, pt, n);
                free(tmp);
            }
            /* A write callback failure. */
            mem in = {.p = ct, .len = ct_len}, o = {.p = out, .cap = max, .fail_at = 1};
            CHECK(kuai_file_decrypt_stream(KUAI_FILE_KDF_KEY, key, ks, mem_read, &in, mem_write, &o,
                                           NULL) == KUAI_ERR_IO,
                  "%s %zu: write failure", nm, n);
        }
    }
    free(pt);
    free(ct);
    free(out);
}

/* Passwords: round trip, wrong password, a key where a password is due. */
static void test_password(void)
{
    static const uint8_t pt[] = "password protected";
    uint8_t ct[256], out[64];
    size_t ct_len, out_len;
    kuai_file_params p, q;
    CHECK(kuai_file_params_new(&p, KUAI_SM4, KUAI_FILE_KDF_SCRYPT, 10) == 0, "params");
    CHECK(p.scrypt_log2n == 10 && p.scrypt_r == 8 && p.scrypt_p == 1, "scrypt parameters");
    CHECK(kuai_file_params_new(&q, KUAI_SM4, KUAI_FILE_KDF_SCRYPT, 9) == KUAI_ERR_ARG,
          "scrypt cost below the format refused");
    CHECK(kuai_file_params_new(&q, KUAI_SM4, KUAI_FILE_KDF_SCRYPT, 0) == 0 &&
              q.scrypt_log2n == KUAI_FILE_SCRYPT_LOG2N_DEFAULT,
          "default cost");
    CHECK(kuai_file_params_new(&q, (kuai_cipher)8, KUAI_FILE_KDF_KEY, 0) == KUAI_ERR_ARG,
          "unknown cipher refused");
    CHECK(encrypt_mem(&p, (const uint8_t *)"pw", 2, pt, sizeof pt, ct, sizeof ct, &ct_len) == 0,
          "seal");
    CHECK(decrypt_mem(KUAI_FILE_KDF_SCRYPT, (const uint8_t *)"pw", 2, ct, ct_len, out, sizeof out,
                      &out_len) == 0 &&
              out_len == sizeof pt && memcmp(out, pt, sizeof pt) == 0,
          "open");
    CHECK(decrypt_mem(KUAI_FILE_KDF_SCRYPT, (const uint8_t *)"pW", 2, ct, ct_len, out, sizeof out,
                      &out_len) == KUAI_ERR_AUTH &&
              out_len == 0,
          "wrong password");
    CHECK(decrypt_mem(KUAI_FILE_KDF_KEY, (const uint8_t *)"0123456789abcdef", 16, ct, ct_len, out,
                      sizeof out, &out_len) == KUAI_ERR_ARG,
          "a key for a password file");
}

static void test_header_parse(void)
{
    uint8_t h[HDR], key[16] = {0};
    kuai_file_params p;
    kuai_file_keys k;
    kuai_file_header_error why;
    CHECK(kuai_file_params_new(&p, KUAI_AES_128, KUAI_FILE_KDF_KEY, 0) == 0, "params");
    CHECK(kuai_file_seal_begin(&k, &p, key, 16, h) == 0, "seal_begin");
    kuai_file_keys_wipe(&k);
    kuai_file_params q;
    CHECK(kuai_file_header_parse(h, HDR, &q, &why) == 0 && why == KUAI_FILE_HDR_OK &&
              q.cipher == KUAI_AES_128 && memcmp(q.nonce, p.nonce, 16) == 0,
          "parse what was formatted");
    /* Under 8 bytes, a prefix of the magic (none at all too) is a file cut
     * short, anything else no kuai file: before, every input under 8 bytes
     * was "no magic", so a kuai file cut after 3 bytes was not one. */
    static const struct {
        size_t pos;
        uint8_t val;
        size_t len;
        kuai_file_header_error why;
    } cases[] = {{0, 'k', HDR, KUAI_FILE_HDR_MAGIC}, {4, 0x0a, HDR, KUAI_FILE_HDR_MAGIC},
                 {0, 'K', 7, KUAI_FILE_HDR_SHORT},   {0, 'K', 3, KUAI_FILE_HDR_SHORT},
                 {0, 'K', 1, KUAI_FILE_HDR_SHORT},   {0, 'K', 0, KUAI_FILE_HDR_SHORT},
                 {0, 'k', 7, KUAI_FILE_HDR_MAGIC},   {0, 'k', 1, KUAI_FILE_HDR_MAGIC},
                 {4, 0x0a, 5, KUAI_FILE_HDR_MAGIC},  {6, 0x0a, 7, KUAI_FILE_HDR_MAGIC},
                 {0, 'K', 8, KUAI_FILE_HDR_SHORT},   {0, 'K', 63, KUAI_FILE_HDR_SHORT},
                 {8, 2, HDR, KUAI_FILE_HDR_VERSION}, {9, 0, HDR, KUAI_FILE_HDR_FIELD},
                 {9, 8, HDR, KUAI_FILE_HDR_FIELD},   {10, 2, HDR, KUAI_FILE_HDR_FIELD},
                 {11, 21, HDR, KUAI_FILE_HDR_FIELD}, {12, 10, HDR, KUAI_FILE_HDR_FIELD},
                 {15, 1, HDR, KUAI_FILE_HDR_FIELD},  {31, 1, HDR, KUAI_FILE_HDR_FIELD}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint8_t b[HDR];
        memcpy(b, h, HDR);
        b[cases[i].pos] = cases[i].val;
        int rc = kuai_file_header_parse(b, cases[i].len, &q, &why);
        CHECK(rc == KUAI_ERR_FORMAT && why == cases[i].why, "header case %zu: rc %d why %d", i, rc,
              (int)why);
    }
    /* Argument errors set *why too (it was left as it was, so a caller
     * switching on it read a stale or uninitialised reason); NULL with
     * length 0 is an empty input, not an argument error. */
    static const struct {
        int null_buf, null_p;
        size_t len;
        int rc;
        kuai_file_header_error why;
    } args[] = {{1, 0, HDR, KUAI_ERR_ARG, KUAI_FILE_HDR_ARG},
                {0, 1, HDR, KUAI_ERR_ARG, KUAI_FILE_HDR_ARG},
                {1, 1, HDR, KUAI_ERR_ARG, KUAI_FILE_HDR_ARG},
                {0, 1, 0, KUAI_ERR_ARG, KUAI_FILE_HDR_ARG},
                {1, 0, 0, KUAI_ERR_FORMAT, KUAI_FILE_HDR_SHORT}};
    for (size_t i = 0; i < sizeof args / sizeof args[0]; i++) {
        why = KUAI_FILE_HDR_OK;
        int rc = kuai_file_header_parse(args[i].null_buf ? NULL : h, args[i].len,
                                        args[i].null_p ? NULL : &q, &why);
        CHECK(rc == args[i].rc && why == args[i].why, "argument case %zu: rc %d why %d", i, rc,
              (int)why);
        CHECK(kuai_file_header_parse(args[i].null_buf ? NULL : h, args[i].len,
                                     args[i].null_p ? NULL : &q, NULL) == args[i].rc,
              "argument case %zu, why NULL", i);
    }
    /* scrypt: the parameter ranges and the N*r*p cap (the header made
     * at N = 2^10, then its cost byte raised: parsing runs no scrypt). */
    CHECK(kuai_file_params_new(&p, KUAI_SM4, KUAI_FILE_KDF_SCRYPT, 10) == 0, "params");
    CHECK(kuai_file_seal_begin(&k, &p, NULL, 0, h) == 0, "seal_begin, empty password");
    kuai_file_keys_wipe(&k);
    h[12] = 20;
    CHECK(kuai_file_header_parse(h, HDR, &q, &why) == 0 && q.scrypt_log2n == 20,
          "N=2^20 r=8 p=1 accepted");
    h[14] = 2;
    CHECK(kuai_file_header_parse(h, HDR, &q, &why) == KUAI_ERR_FORMAT && why == KUAI_FILE_HDR_COST,
          "N*r*p = 2^24 refused as a cost");
    h[12] = 21;
    CHECK(kuai_file_header_parse(h, HDR, &q, &why) == KUAI_ERR_FORMAT && why == KUAI_FILE_HDR_FIELD,
          "N=2^21 refused as a field");
    /* RFC 7914's N < 2^(16 r): with r = 1, log2 N 15 is the most. */
    h[14] = 1;
    h[13] = 1;
    h[12] = 15;
    CHECK(kuai_file_header_parse(h, HDR, &q, &why) == 0 && q.scrypt_r == 1, "N=2^15 r=1 accepted");
    h[12] = 16;
    CHECK(kuai_file_header_parse(h, HDR, &q, &why) == KUAI_ERR_FORMAT && why == KUAI_FILE_HDR_FIELD,
          "N=2^16 r=1 refused as a field");
    h[13] = 2;
    h[12] = 20;
    CHECK(kuai_file_header_parse(h, HDR, &q, &why) == 0, "N=2^20 r=2 accepted");
    /* Sealing with such parameters is an argument error, not a
     * libcrypto failure, and writes no header. */
    CHECK(kuai_file_params_new(&p, KUAI_SM4, KUAI_FILE_KDF_SCRYPT, 16) == 0, "params");
    p.scrypt_r = 1;
    memset(h, 0x5a, sizeof h);
    int src = kuai_file_seal_begin(&k, &p, (const uint8_t *)"pw", 2, h);
    CHECK(src == KUAI_ERR_ARG && h[0] == 0x5a, "seal_begin N=2^16 r=1: %d", src);
    kuai_file_keys_wipe(&k);
    /* Parameters outside the format are refused when sealing, also those
     * that the header's one-byte fields would wrap into range (a KDF of
     * 256 written as 0 would label a password file as a raw-key one). */
    static const unsigned bad_kdf[] = {2, 256, 257};
    for (size_t i = 0; i < sizeof bad_kdf / sizeof bad_kdf[0]; i++) {
        CHECK(kuai_file_params_new(&p, KUAI_SM4, KUAI_FILE_KDF_SCRYPT, 10) == 0, "params");
        p.kdf = (kuai_file_kdf)bad_kdf[i];
        memset(h, 0x5a, sizeof h);
        int rc = kuai_file_seal_begin(&k, &p, (const uint8_t *)"pw", 2, h);
        CHECK(rc == KUAI_ERR_ARG && h[0] == 0x5a && h[HDR - 1] == 0x5a, "kdf %u: seal_begin %d",
              bad_kdf[i], rc);
        kuai_file_keys_wipe(&k);
    }
    CHECK(kuai_file_params_new(&p, KUAI_SM4, KUAI_FILE_KDF_KEY, 0) == 0, "params");
    p.cipher = (kuai_cipher)(0x100 | KUAI_SM4);
    CHECK(kuai_file_seal_begin(&k, &p, key, 16, h) == KUAI_ERR_ARG, "cipher 0x104 refused");
    kuai_file_keys_wipe(&k);
}

/* The chunk calls: in place; a final chunk that is a non-final one. */
static void test_chunks(void)
{
    uint8_t key[32] = {1, 2, 3}, hdr[HDR];
    uint8_t *buf = xalloc(KUAI_FILE_SEALED_SIZE), *pt = xalloc(CH);
    pattern(pt, CH);
    for (size_t ci = 0; ci < NCIPHERS; ci++) {
        kuai_cipher c = ciphers[ci].c;
        kuai_file_params p;
        kuai_file_keys k, r;
        CHECK(kuai_file_params_new(&p, c, KUAI_FILE_KDF_KEY, 0) == 0 &&
                  kuai_file_seal_begin(&k, &p, key, kuai_key_size(c), hdr) == 0 &&
                  kuai_file_open_begin(&r, hdr, &p, key, kuai_key_size(c)) == 0,
              "%s: begin", ciphers[ci].name);
        memcpy(buf, pt, CH);
        CHECK(kuai_file_seal_chunk(&k, 5, 0, buf, CH - 1, buf) == KUAI_ERR_LENGTH,
              "a short non-final chunk refused");
        CHECK(kuai_file_seal_chunk(&k, 5, 0, buf, CH, buf) == 0, "seal in place");
        /* Opened in place as the last chunk: verified first, so the
         * truncation is seen. */
        int rc = kuai_file_open_chunk(&r, 5, 1, buf, KUAI_FILE_SEALED_SIZE, buf);
        CHECK(rc == KUAI_ERR_TRUNCATED, "%s: in place, non-final read as final: %d",
              ciphers[ci].name, rc);
        CHECK(kuai_file_open_chunk(&r, 4, 0, buf, KUAI_FILE_SEALED_SIZE, buf) == KUAI_ERR_AUTH,
              "%s: wrong index", ciphers[ci].name);
        /* GCM zeroes on failure in place; seal again. */
        memcpy(buf, pt, CH);
        CHECK(kuai_file_seal_chunk(&k, 5, 0, buf, CH, buf) == 0, "seal in place");
        CHECK(kuai_file_open_chunk(&r, 5, 0, buf, KUAI_FILE_SEALED_SIZE, buf) == 0 &&
                  memcmp(buf, pt, CH) == 0,
              "%s: open in place", ciphers[ci].name);
        /* A final chunk in place. */
        memcpy(buf, pt, 1000);
        CHECK(kuai_file_seal_chunk(&k, 9, 1, buf, 1000, buf) == 0 &&
                  kuai_file_open_chunk(&r, 9, 1, buf, 1000 + TAG, buf) == 0 &&
                  memcmp(buf, pt, 1000) == 0,
              "%s: final chunk in place", ciphers[ci].name);
        CHECK(kuai_file_open_chunk(&r, 9, 1, buf, TAG - 1, buf) == KUAI_ERR_TRUNCATED,
              "shorter than a tag");
        /* A failed open leaves zeros in out (kuai_file.h), out of place and
         * in place, final and not: uBlock-256/256's chunks are checked
         * before anything is written, and an in-place final chunk too, so
         * out once kept what it held (0x55s, or the ciphertext). */
        for (int last = 0; last < 2; last++) {
            const size_t n = last ? 1000 : CH, nb = n + TAG;
            uint8_t *other = xalloc(KUAI_FILE_SEALED_SIZE);
            memcpy(buf, pt, n);
            CHECK(kuai_file_seal_chunk(&k, 3, last, buf, n, buf) == 0, "seal");
            buf[nb - 1] ^= 1; /* the tag */
            memset(other, 0x55, n);
            rc = kuai_file_open_chunk(&r, 3, last, buf, nb, other);
            int nz = 0;
            for (size_t j = 0; j < n; j++)
                nz |= other[j];
            CHECK(rc == KUAI_ERR_AUTH && !nz, "%s: failed open, last %d, out of place: %d%s",
                  ciphers[ci].name, last, rc, nz ? ", out not zeros" : "");
            rc = kuai_file_open_chunk(&r, 3, last, buf, nb, buf);
            nz = 0;
            for (size_t j = 0; j < n; j++)
                nz |= buf[j];
            CHECK(rc == KUAI_ERR_AUTH && !nz, "%s: failed open, last %d, in place: %d%s",
                  ciphers[ci].name, last, rc, nz ? ", out not zeros" : "");
            free(other);
        }
        kuai_file_keys_wipe(&k);
        kuai_file_keys_wipe(&r);
        CHECK(kuai_file_seal_chunk(&k, 0, 1, buf, 0, buf) == KUAI_ERR_ARG, "wiped keys refused");
    }
    free(buf);
    free(pt);
}

/* The chunk calls' argument errors, for every cipher (GCM and, for
 * uBlock-256/256, CTR + HMAC): the error code, and nothing written. */
static void test_chunk_misuse(void)
{
    uint8_t key[32] = {7, 6, 5}, hdr[HDR], buf[512], snap[512];
    for (size_t ci = 0; ci < NCIPHERS; ci++) {
        kuai_cipher c = ciphers[ci].c;
        const char *nm = ciphers[ci].name;
        kuai_file_params p;
        kuai_file_keys k, r;
        CHECK(kuai_file_params_new(&p, c, KUAI_FILE_KDF_KEY, 0) == 0 &&
                  kuai_file_seal_begin(&k, &p, key, kuai_key_size(c), hdr) == 0 &&
                  kuai_file_open_begin(&r, hdr, &p, key, kuai_key_size(c)) == 0,
              "%s: begin", nm);
        /* No input, with a sealed length of a bare tag and more. */
        static const size_t sealed[] = {TAG, TAG + 1, 100};
        for (size_t i = 0; i < sizeof sealed / sizeof sealed[0]; i++) {
            memset(buf, 0x5a, sizeof buf);
            int rc = kuai_file_open_chunk(&r, 0, 1, NULL, sealed[i], buf);
            CHECK(rc == KUAI_ERR_ARG && buf[0] == 0x5a && buf[sizeof buf - 1] == 0x5a,
                  "%s: open_chunk with in NULL, sealed_len %zu: %d", nm, sealed[i], rc);
        }
        /* Input and output a byte apart, both ways: refused, both left
         * as they were (the input is part of the output's buffer). */
        for (int dir = 0; dir < 2; dir++) {
            for (size_t i = 0; i < sizeof buf; i++)
                buf[i] = (uint8_t)(i * 7 + 1);
            memcpy(snap, buf, sizeof buf);
            uint8_t *in = dir ? buf + 1 : buf, *out = dir ? buf : buf + 1;
            int rc = kuai_file_seal_chunk(&k, 3, 1, in, 100, out);
            CHECK(rc == KUAI_ERR_ARG && memcmp(buf, snap, sizeof buf) == 0,
                  "%s: seal_chunk with overlapping buffers (%s): %d", nm,
                  dir ? "out first" : "in first", rc);
        }
        /* Opening with out and the ciphertext a byte apart, both ways:
         * refused with nothing written, as sealing is (above). The
         * argument error once came after the ciphertext had been zeroed
         * as a failed open's out is. out starting on the tag, right
         * after the ciphertext, is no overlap of the two and opens (the
         * tag is read before out is written). */
        for (int last = 0; last < 2; last++) {
            const size_t n = last ? 100 : KUAI_FILE_CHUNK_SIZE, span = 2 * n + TAG + 2;
            uint8_t *big = xalloc(span), *bsnap = xalloc(span);
            memset(big, 0x5a, span);
            for (size_t i = 0; i < n; i++)
                big[1 + i] = (uint8_t)(i * 13 + 5);
            CHECK(kuai_file_seal_chunk(&k, 3, last, big + 1, n, big + 1) == 0, "%s: seal", nm);
            memcpy(bsnap, big, span);
            for (int dir = -1; dir <= 1; dir += 2) {
                int rc = kuai_file_open_chunk(&r, 3, last, big + 1, n + TAG, big + 1 + dir);
                int same = memcmp(big, bsnap, span) == 0;
                CHECK(rc == KUAI_ERR_ARG && same, "%s: open_chunk, last %d, out at in%+d: %d%s", nm,
                      last, dir, rc, same ? "" : ", buffer changed");
                memcpy(big, bsnap, span);
            }
            int rc = kuai_file_open_chunk(&r, 3, last, big + 1, n + TAG, big + 1 + n);
            int ok = rc == 0;
            for (size_t i = 0; ok && i < n; i++)
                ok = big[1 + n + i] == (uint8_t)(i * 13 + 5);
            CHECK(ok, "%s: open_chunk, last %d, out on the tag: %d", nm, last, rc);
            free(big);
            free(bsnap);
        }
        /* Parameters that are not the header's: the header tag covers the
         * header, not p, so keys from p would be unverified (a cipher of
         * the same key length, or scrypt costs the header never named). */
        kuai_file_params q = p;
        q.cipher = c == KUAI_SM4 ? KUAI_AES_128 : KUAI_SM4;
        kuai_file_keys x;
        memset(&x, 0x5a, sizeof x);
        int rc = kuai_file_open_begin(&x, hdr, &q, key, kuai_key_size(q.cipher));
        CHECK(rc == KUAI_ERR_ARG, "%s: open_begin with another cipher than the header's: %d", nm,
              rc);
        kuai_file_keys_wipe(&x);
        q = p;
        q.kdf = KUAI_FILE_KDF_SCRYPT;
        q.scrypt_log2n = 70;
        q.scrypt_r = 8;
        q.scrypt_p = 1;
        rc = kuai_file_open_begin(&x, hdr, &q, key, kuai_key_size(c));
        CHECK(rc == KUAI_ERR_ARG, "%s: open_begin with a KDF the header does not name: %d", nm, rc);
        kuai_file_keys_wipe(&x);
        q = p;
        q.nonce[3] ^= 1;
        rc = kuai_file_open_begin(&x, hdr, &q, key, kuai_key_size(c));
        CHECK(rc == KUAI_ERR_ARG, "%s: open_begin with another nonce: %d", nm, rc);
        kuai_file_keys_wipe(&x);
        kuai_file_keys_wipe(&k);
        kuai_file_keys_wipe(&r);
    }
}

/* A kuai_file_keys used for one file, then given to a begin call that
 * fails: it must hold no keys afterwards, whatever the failure (an
 * argument error once returned before touching it, leaving the previous
 * file's keys live: chunks still sealed and opened with them). */
static void test_failed_begin_wipes(void)
{
    uint8_t key[16] = {9, 8, 7}, hdr[HDR], other[HDR], buf[64] = {0};
    kuai_file_params p, q;
    CHECK(kuai_file_params_new(&p, KUAI_SM4, KUAI_FILE_KDF_KEY, 0) == 0 &&
              kuai_file_params_new(&q, KUAI_SM4, KUAI_FILE_KDF_KEY, 0) == 0,
          "params");
    kuai_file_keys tmp;
    CHECK(kuai_file_seal_begin(&tmp, &q, key, 16, other) == 0, "seal_begin");
    kuai_file_keys_wipe(&tmp);
    uint8_t junk[HDR] = {0};
    for (int how = 0; how < 7; how++) {
        kuai_file_keys k;
        CHECK(kuai_file_seal_begin(&k, &p, key, 16, hdr) == 0, "seal_begin");
        int rc;
        switch (how) {
        case 0: /* p is not the header's */
            rc = kuai_file_open_begin(&k, other, &p, key, 16);
            break;
        case 1: /* not a header */
            rc = kuai_file_open_begin(&k, junk, &p, key, 16);
            break;
        case 2:
            rc = kuai_file_open_begin(&k, NULL, &p, key, 16);
            break;
        case 3:
            rc = kuai_file_open_begin(&k, hdr, NULL, key, 16);
            break;
        case 4: /* a wrong key */
            key[0] ^= 1;
            rc = kuai_file_open_begin(&k, hdr, &p, key, 16);
            key[0] ^= 1;
            break;
        case 5:
            rc = kuai_file_seal_begin(&k, NULL, key, 16, hdr);
            break;
        default:
            rc = kuai_file_seal_begin(&k, &p, key, 16, NULL);
            break;
        }
        int seal = kuai_file_seal_chunk(&k, 0, 1, buf, 16, buf);
        int zero = 1;
        for (size_t i = 0; i < sizeof k; i++)
            zero &= ((const uint8_t *)&k)[i] == 0;
        CHECK(rc != 0 && seal == KUAI_ERR_ARG && zero,
              "failed begin %d (%d): keys still usable (%d) or not wiped (%d)", how, rc, seal,
              zero);
        kuai_file_keys_wipe(&k);
    }
}

int main(int argc, char **argv)
{
    int quiet = argc > 1 && strcmp(argv[1], "-q") == 0;
    test_known_answers();
    test_header_parse();
    test_chunks();
    test_chunk_misuse();
    test_failed_begin_wipes();
    test_password();
    test_round_trips();
    if (!quiet || failed)
        printf("kuai_file_test: %d passed, %d failed\n", passed, failed);
    else
        printf("kuai_file_test: %d passed, 0 failed\n", passed);
    return failed != 0;
}
