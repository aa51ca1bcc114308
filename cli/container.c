/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The kuai container (docs/format.md): a 64-byte header, then 1 MiB chunks,
 * each sealed on its own with its index and a final-chunk flag bound in
 * (the STREAM construction of age). Chunks are sealed or opened by -j
 * worker threads while the main thread reads and a writer thread writes
 * them back in order; a fixed ring of slots bounds the memory.
 */
#define _GNU_SOURCE
#include "cli.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/rand.h>

/* "KUAI", then CR LF SUB LF as in PNG's signature: a text-mode transfer
 * that rewrites line ends is caught as a bad magic. */
static const uint8_t magic[8] = {'K', 'U', 'A', 'I', 0x0d, 0x0a, 0x1a, 0x0a};
#define FORMAT_VERSION 1
#define KDF_NONE 0
#define KDF_SCRYPT 1
#define SCRYPT_R 8
#define SCRYPT_P 1
#define MASTER_LEN 32 /* scrypt output length */

/* Cipher ids in the header: the kuai_cipher values of kuai.h 0.1.0, fixed
 * by the format from now on. */
static int cipher_id_valid(unsigned id)
{
    return id >= KUAI_UBLOCK_128_128 && id <= KUAI_AES_256;
}

/* Everything a chunk needs: read-only while the workers run. */
typedef struct file_keys {
    kuai_cipher cipher;
    kuai_key key; /* chunk cipher key */
    uint8_t mac_key[32];
    int etm; /* uBlock-256/256: CTR + HMAC-SHA-256 instead of GCM */
    uint8_t header[HEADER_SIZE];
    EVP_MAC *hmac;
} file_keys;

static void put_be64(uint8_t *p, uint64_t v)
{
    for (int i = 7; i >= 0; i--, v >>= 8)
        p[i] = (uint8_t)v;
}

static void ossl_fail(const char *what)
{
    fail(EXIT_INTERNAL, "OpenSSL %s failed", what);
}

static void hkdf(const uint8_t *ikm, size_t ikm_len, const uint8_t *salt, const char *info,
                 uint8_t *out, size_t out_len)
{
    EVP_KDF *kdf = EVP_KDF_fetch(NULL, "HKDF", NULL);
    if (!kdf)
        ossl_fail("HKDF fetch");
    EVP_KDF_CTX *kc = EVP_KDF_CTX_new(kdf);
    EVP_KDF_free(kdf);
    if (!kc)
        ossl_fail("HKDF context");
    OSSL_PARAM params[] = {
        OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, (char *)"SHA256", 0),
        OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY, (void *)ikm, ikm_len),
        OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SALT, (void *)salt, 16),
        OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_INFO, (void *)info, strlen(info)),
        OSSL_PARAM_construct_end()};
    if (EVP_KDF_derive(kc, out, out_len, params) != 1)
        ossl_fail("HKDF");
    EVP_KDF_CTX_free(kc);
}

/* HMAC-SHA-256 over the concatenation of up to three pieces, truncated to
 * 16 bytes. */
static void hmac16(EVP_MAC *mac, const uint8_t key[32], const uint8_t *a, size_t alen,
                   const uint8_t *b, size_t blen, const uint8_t *c, size_t clen,
                   uint8_t out[TAG_SIZE])
{
    EVP_MAC_CTX *mc = EVP_MAC_CTX_new(mac);
    uint8_t full[32];
    size_t olen = 0;
    OSSL_PARAM params[] = {
        OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, (char *)"SHA256", 0),
        OSSL_PARAM_construct_end()};
    if (!mc || EVP_MAC_init(mc, key, 32, params) != 1 || EVP_MAC_update(mc, a, alen) != 1 ||
        (blen && EVP_MAC_update(mc, b, blen) != 1) || (clen && EVP_MAC_update(mc, c, clen) != 1) ||
        EVP_MAC_final(mc, full, &olen, sizeof full) != 1 || olen != 32)
        ossl_fail("HMAC-SHA-256");
    EVP_MAC_CTX_free(mc);
    memcpy(out, full, TAG_SIZE);
    OPENSSL_cleanse(full, sizeof full);
}

/* The master key: the raw key, or scrypt(password, salt). */
static void master_key(const key_material *km, const uint8_t *hdr, uint8_t *out, size_t *out_len)
{
    if (hdr[10] == KDF_NONE) {
        memcpy(out, km->keys[0], km->key_len);
        *out_len = km->key_len;
        return;
    }
    uint64_t n = (uint64_t)1 << hdr[12];
    uint64_t r = hdr[13], p = hdr[14];
    /* scrypt needs 128 r N p bytes (+ 128 r p); give it a little more. */
    uint64_t maxmem = 128 * r * (n + 2) * p + (1u << 20);
    if (EVP_PBE_scrypt(km->password, km->password_len, hdr + 16, 16, n, r, p, maxmem, out,
                       MASTER_LEN) != 1)
        fail(EXIT_INTERNAL, "scrypt (N=2^%u, r=%u, p=%u) failed: out of memory?", hdr[12], hdr[13],
             hdr[14]);
    *out_len = MASTER_LEN;
}

/* Derive the chunk keys and the header tag key from the master key and the
 * header's nonce; fills fk and writes the header tag to tag. */
static int derive(file_keys *fk, const key_material *km, const uint8_t *hdr, uint8_t tag[TAG_SIZE])
{
    uint8_t master[64], hkey[32], ckey[32];
    size_t mlen;
    memset(fk, 0, sizeof *fk);
    fk->cipher = (kuai_cipher)hdr[9];
    fk->etm = kuai_block_size(fk->cipher) != 16;
    fk->hmac = EVP_MAC_fetch(NULL, "HMAC", NULL);
    if (!fk->hmac)
        ossl_fail("HMAC fetch");
    master_key(km, hdr, master, &mlen);
    const uint8_t *nonce = hdr + 32;
    hkdf(master, mlen, nonce, "kuai/v1 header", hkey, 32);
    hkdf(master, mlen, nonce, "kuai/v1 cipher", ckey, kuai_key_size(fk->cipher));
    if (fk->etm)
        hkdf(master, mlen, nonce, "kuai/v1 mac", fk->mac_key, 32);
    OPENSSL_cleanse(master, sizeof master);
    hmac16(fk->hmac, hkey, hdr, 48, NULL, 0, NULL, 0, tag);
    OPENSSL_cleanse(hkey, sizeof hkey);
    int rc = kuai_key_init(&fk->key, fk->cipher, ckey, kuai_key_size(fk->cipher));
    OPENSSL_cleanse(ckey, sizeof ckey);
    return rc;
}

static void fk_free(file_keys *fk)
{
    kuai_key_wipe(&fk->key);
    OPENSSL_cleanse(fk->mac_key, sizeof fk->mac_key);
    EVP_MAC_free(fk->hmac);
}

/* GCM IV: the chunk index as an 11-byte big-endian number, then the flag. */
static void gcm_iv(uint8_t iv[12], uint64_t idx, int last)
{
    memset(iv, 0, 12);
    put_be64(iv + 3, idx);
    iv[11] = (uint8_t)last;
}

/* CTR start block of uBlock-256/256: index (8 bytes), flag, 23 zero bytes;
 * a chunk uses 2^15 counter values, all in the zero bytes. */
static void etm_ctr(uint8_t ctr[32], uint64_t idx, int last)
{
    memset(ctr, 0, 32);
    put_be64(ctr, idx);
    ctr[8] = (uint8_t)last;
}

static void etm_tag(const file_keys *fk, uint64_t idx, int last, const uint8_t *ct, size_t len,
                    uint8_t tag[TAG_SIZE])
{
    uint8_t ib[9];
    put_be64(ib, idx);
    ib[8] = (uint8_t)last;
    hmac16(fk->hmac, fk->mac_key, fk->header, HEADER_SIZE, ib, 9, ct, len, tag);
}

/* Seal len bytes (<= CHUNK_SIZE) of in to out: ciphertext, then the tag. */
static int seal_chunk(const file_keys *fk, uint64_t idx, int last, const uint8_t *in, size_t len,
                      uint8_t *out)
{
    if (fk->etm) {
        uint8_t ctr[32];
        etm_ctr(ctr, idx, last);
        int rc = kuai_ctr_crypt(&fk->key, ctr, in, out, len);
        if (rc)
            return rc;
        etm_tag(fk, idx, last, out, len, out + len);
        return 0;
    }
    uint8_t iv[12];
    gcm_iv(iv, idx, last);
    return kuai_gcm_encrypt(&fk->key, iv, 12, fk->header, HEADER_SIZE, in, out, len, out + len,
                            TAG_SIZE);
}

/* Open a sealed chunk of len ciphertext bytes (tag after them); writes
 * plaintext only when the tag verifies (GCM zeroes out otherwise). */
static int open_chunk(const file_keys *fk, uint64_t idx, int last, const uint8_t *in, size_t len,
                      uint8_t *out)
{
    if (fk->etm) {
        uint8_t tag[TAG_SIZE], ctr[32];
        etm_tag(fk, idx, last, in, len, tag);
        if (CRYPTO_memcmp(tag, in + len, TAG_SIZE) != 0)
            return KUAI_ERR_AUTH;
        etm_ctr(ctr, idx, last);
        return kuai_ctr_crypt(&fk->key, ctr, in, out, len);
    }
    uint8_t iv[12];
    gcm_iv(iv, idx, last);
    return kuai_gcm_decrypt(&fk->key, iv, 12, fk->header, HEADER_SIZE, in, out, len, in + len,
                            TAG_SIZE);
}

/* ---- the pipeline ---- */

enum { SLOT_FREE, SLOT_FILLED, SLOT_BUSY, SLOT_DONE };

typedef struct slot {
    uint8_t *in, *out;
    uint8_t *res; /* the result: in (sealed or opened in place) or out */
    size_t in_len, out_len;
    uint64_t idx;
    int last, state, rc;
} slot;

typedef struct pipeline {
    const file_keys *fk;
    int decrypt;
    slot *slots;
    size_t nslots;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    uint64_t filled;   /* chunks handed to the workers */
    uint64_t claimed;  /* chunks a worker has taken */
    uint64_t written;  /* chunks written out */
    uint64_t total;    /* chunks in the file, once the reader has seen the last; else ~0 */
    int stop;          /* an error somewhere: everyone winds down */
    int err_code;      /* exit code of the first error */
    char err_msg[512]; /* and its message */
    int out_fd;
    const char *in_name, *out_name; /* for messages */
    progress *pg;
} pipeline;

static void pl_error(pipeline *p, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void pl_error(pipeline *p, int code, const char *fmt, ...)
{
    /* caller holds p->mu */
    if (!p->stop) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(p->err_msg, sizeof p->err_msg, fmt, ap);
        va_end(ap);
        p->err_code = code;
        p->stop = 1;
    }
    pthread_cond_broadcast(&p->cv);
}

static void *pl_worker(void *arg)
{
    pipeline *p = arg;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (!p->stop && p->claimed == p->filled && p->claimed != p->total)
            pthread_cond_wait(&p->cv, &p->mu);
        if (p->stop || p->claimed == p->total)
            break;
        slot *s = &p->slots[p->claimed % p->nslots];
        p->claimed++;
        s->state = SLOT_BUSY;
        pthread_mutex_unlock(&p->mu);
        /* In place where possible: half the memory traffic. The last chunk
         * is opened out of place so that its ciphertext survives a failure
         * for the truncation check below. */
        if (p->decrypt) {
            s->res = s->last ? s->out : s->in;
            s->rc = open_chunk(p->fk, s->idx, s->last, s->in, s->in_len - TAG_SIZE, s->res);
            s->out_len = s->in_len - TAG_SIZE;
            /* A final chunk that verifies as a non-final one: the file
             * was cut at a chunk boundary. */
            if (s->rc == KUAI_ERR_AUTH && s->last &&
                open_chunk(p->fk, s->idx, 0, s->in, s->in_len - TAG_SIZE, s->out) == 0) {
                OPENSSL_cleanse(s->out, s->out_len);
                s->rc = 1;
            }
        } else {
            s->res = s->in;
            s->rc = seal_chunk(p->fk, s->idx, s->last, s->in, s->in_len, s->res);
            s->out_len = s->in_len + TAG_SIZE;
        }
        pthread_mutex_lock(&p->mu);
        s->state = SLOT_DONE;
        if (s->rc == 1)
            pl_error(p, EXIT_VERIFY,
                     "%s: truncated: the file ends after chunk %llu, which is not its last chunk",
                     p->in_name, (unsigned long long)s->idx);
        else if (s->rc == KUAI_ERR_AUTH)
            pl_error(p, EXIT_VERIFY,
                     "%s: chunk %llu (at byte %llu) failed authentication: the file was "
                     "modified, damaged, truncated or reordered",
                     p->in_name, (unsigned long long)s->idx,
                     (unsigned long long)(HEADER_SIZE + s->idx * (CHUNK_SIZE + TAG_SIZE)));
        else if (s->rc)
            pl_error(p, kuai_exit_code(s->rc), "%s: chunk %llu: %s", p->in_name,
                     (unsigned long long)s->idx, kuai_strerror(s->rc));
        pthread_cond_broadcast(&p->cv);
    }
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

/* Writes chunks in order; a chunk reaches the output only once it (and
 * every chunk before it) has been sealed or has verified. */
static void *pl_writer(void *arg)
{
    pipeline *p = arg;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        slot *s = &p->slots[p->written % p->nslots];
        while (!p->stop && p->written != p->total &&
               !(p->written < p->claimed && s->state == SLOT_DONE))
            pthread_cond_wait(&p->cv, &p->mu);
        if (p->stop || p->written == p->total)
            break;
        pthread_mutex_unlock(&p->mu);
        int werr = write_full(p->out_fd, s->res, s->out_len) ? errno : 0;
        progress_add(p->pg, s->in_len);
        pthread_mutex_lock(&p->mu);
        if (werr) {
            pl_error(p, EXIT_IO, "%s: write error: %s", p->out_name, strerror(werr));
            break;
        }
        s->state = SLOT_FREE;
        p->written++;
        pthread_cond_broadcast(&p->cv);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

/* Reads whole chunks, looking one byte ahead to know which is the last. */
typedef struct chunk_reader {
    int fd;
    int has_peek;
    uint8_t peek;
} chunk_reader;

/* Fills buf with up to want bytes; *last is set when the input ends right
 * after them. Returns the byte count or -1 (errno set). */
static ssize_t read_chunk(chunk_reader *r, uint8_t *buf, size_t want, int *last)
{
    size_t got = 0;
    if (r->has_peek) {
        buf[got++] = r->peek;
        r->has_peek = 0;
    }
    ssize_t n = read_full(r->fd, buf + got, want - got);
    if (n < 0)
        return -1;
    got += (size_t)n;
    if (got < want) {
        *last = 1;
        return (ssize_t)got;
    }
    n = read_full(r->fd, &r->peek, 1);
    if (n < 0)
        return -1;
    r->has_peek = n == 1;
    *last = !r->has_peek;
    return (ssize_t)got;
}

static int run_pipeline(const file_keys *fk, int decrypt, chunk_reader *rd, const output *out,
                        unsigned threads, progress *pg, const char *in_name)
{
    pipeline P, *p = &P;
    memset(p, 0, sizeof *p);
    p->fk = fk;
    p->decrypt = decrypt;
    p->out_fd = out->fd;
    p->in_name = in_name;
    p->out_name = out_name(out);
    p->pg = pg;
    p->total = UINT64_MAX;
    /* Enough slots that the reader and the writer each have one to work on
     * while every worker seals another. */
    p->nslots = 2 * (size_t)threads + 2;
    p->slots = calloc(p->nslots, sizeof *p->slots);
    if (!p->slots)
        fail(EXIT_INTERNAL, "out of memory");
    for (size_t i = 0; i < p->nslots; i++) {
        p->slots[i].in = xmalloc(CHUNK_SIZE + TAG_SIZE);
        p->slots[i].out = xmalloc(CHUNK_SIZE + TAG_SIZE);
    }
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    pthread_t *tids = calloc(threads + 1, sizeof *tids);
    if (!tids)
        fail(EXIT_INTERNAL, "out of memory");
    for (unsigned t = 0; t < threads; t++)
        if (cli_thread_start(&tids[t], pl_worker, p))
            fail(EXIT_INTERNAL, "cannot start a thread");
    if (cli_thread_start(&tids[threads], pl_writer, p))
        fail(EXIT_INTERNAL, "cannot start a thread");

    size_t want = decrypt ? CHUNK_SIZE + TAG_SIZE : CHUNK_SIZE;
    for (uint64_t idx = 0;; idx++) {
        slot *s = &p->slots[idx % p->nslots];
        pthread_mutex_lock(&p->mu);
        while (!p->stop && idx >= p->nslots && idx - p->nslots >= p->written)
            pthread_cond_wait(&p->cv, &p->mu);
        int stop = p->stop;
        pthread_mutex_unlock(&p->mu);
        if (stop)
            break;
        int last = 0;
        ssize_t n = read_chunk(rd, s->in, want, &last);
        pthread_mutex_lock(&p->mu);
        if (n < 0) {
            pl_error(p, EXIT_IO, "%s: read error: %s", in_name, strerror(errno));
        } else if (decrypt && (size_t)n < TAG_SIZE) {
            if (n == 0 && idx == 0)
                pl_error(p, EXIT_VERIFY, "%s: truncated: no chunk after the header", in_name);
            else if (n == 0)
                /* impossible: a full chunk read with nothing after it is
                 * marked last; kept for safety */
                pl_error(p, EXIT_VERIFY, "%s: truncated", in_name);
            else
                pl_error(p, EXIT_VERIFY,
                         "%s: truncated: chunk %llu is %zd bytes, shorter than its tag", in_name,
                         (unsigned long long)idx, n);
        } else {
            s->in_len = (size_t)n;
            s->idx = idx;
            s->last = last;
            s->state = SLOT_FILLED;
            p->filled = idx + 1;
            if (last)
                p->total = idx + 1;
        }
        pthread_cond_broadcast(&p->cv);
        stop = p->stop || last;
        pthread_mutex_unlock(&p->mu);
        if (stop)
            break;
    }
    for (unsigned t = 0; t <= threads; t++)
        pthread_join(tids[t], NULL);
    free(tids);
    for (size_t i = 0; i < p->nslots; i++) {
        OPENSSL_cleanse(p->slots[i].in, CHUNK_SIZE + TAG_SIZE);
        OPENSSL_cleanse(p->slots[i].out, CHUNK_SIZE + TAG_SIZE);
        free(p->slots[i].in);
        free(p->slots[i].out);
    }
    free(p->slots);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->cv);
    if (p->stop) {
        msg("%s", p->err_msg); /* each names its file: the input or the output */
        return p->err_code;
    }
    return 0;
}

static uint64_t input_size(int fd)
{
    struct stat st;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
        return (uint64_t)st.st_size;
    return 0;
}

int container_encrypt(const cli_opts *o, const key_material *km, int in_fd, output *out,
                      progress *pg, const char *in_name)
{
    uint8_t hdr[HEADER_SIZE];
    memset(hdr, 0, sizeof hdr);
    memcpy(hdr, magic, 8);
    hdr[8] = FORMAT_VERSION;
    hdr[9] = (uint8_t)o->cipher;
    hdr[11] = CHUNK_LOG2;
    if (km->password) {
        hdr[10] = KDF_SCRYPT;
        hdr[12] = (uint8_t)o->scrypt_log2n;
        hdr[13] = SCRYPT_R;
        hdr[14] = SCRYPT_P;
        if (RAND_bytes(hdr + 16, 16) != 1)
            ossl_fail("RAND_bytes");
    }
    if (RAND_bytes(hdr + 32, 16) != 1)
        ossl_fail("RAND_bytes");
    file_keys *fk = xmalloc(sizeof *fk);
    int rc = derive(fk, km, hdr, hdr + 48);
    if (rc) {
        fk_free(fk);
        free(fk);
        msg("%s: %s", kuai_cipher_name(o->cipher), kuai_strerror(rc));
        return kuai_exit_code(rc);
    }
    memcpy(fk->header, hdr, HEADER_SIZE);
    if (write_full(out->fd, hdr, HEADER_SIZE)) {
        fk_free(fk);
        free(fk);
        msg("%s: write error: %s", out_name(out), strerror(errno));
        return EXIT_IO;
    }
    progress_start(pg, o->quiet, input_size(in_fd));
    chunk_reader rd = {.fd = in_fd};
    rc = run_pipeline(fk, 0, &rd, out, o->threads, pg, in_name);
    progress_end(pg);
    fk_free(fk);
    free(fk);
    return rc;
}

int container_decrypt(const cli_opts *o, key_material *km, int in_fd, output *out, progress *pg,
                      const char *in_name)
{
    uint8_t hdr[HEADER_SIZE], tag[TAG_SIZE];
    ssize_t n = read_full(in_fd, hdr, HEADER_SIZE);
    if (n < 0) {
        msg("%s: read error: %s", in_name, strerror(errno));
        return EXIT_IO;
    }
    if ((size_t)n < 8 || memcmp(hdr, magic, 8) != 0) {
        msg("%s: not a kuai file (no kuai header; for raw openssl-style data use --raw)", in_name);
        return EXIT_VERIFY;
    }
    if ((size_t)n < HEADER_SIZE) {
        msg("%s: truncated: the header is cut short", in_name);
        return EXIT_VERIFY;
    }
    if (hdr[8] != FORMAT_VERSION) {
        msg("%s: format version %u, this kuai reads version %u", in_name, hdr[8], FORMAT_VERSION);
        return EXIT_VERIFY;
    }
    int kdf = hdr[10];
    int bad = !cipher_id_valid(hdr[9]) || hdr[11] != CHUNK_LOG2 || hdr[15] != 0 ||
              (kdf != KDF_NONE && kdf != KDF_SCRYPT);
    if (!bad && kdf == KDF_NONE)
        for (int i = 12; i < 32; i++)
            bad |= hdr[i] != 0;
    if (!bad && kdf == KDF_SCRYPT)
        bad = hdr[12] < SCRYPT_LOG2N_MIN || hdr[12] > SCRYPT_LOG2N_MAX || hdr[13] < 1 ||
              hdr[13] > 32 || hdr[14] < 1 || hdr[14] > 16;
    if (bad) {
        msg("%s: damaged header (an unknown cipher, chunk size or KDF setting)", in_name);
        return EXIT_VERIFY;
    }
    /* The header tag can only be checked after scrypt, so an unverified
     * header chooses scrypt's memory and time: cap them at the most kuai
     * itself writes (N = 2^20, r = 8, p = 1: 1 GiB). */
    if (kdf == KDF_SCRYPT &&
        ((uint64_t)1 << hdr[12]) * hdr[13] * hdr[14] > ((uint64_t)1 << SCRYPT_LOG2N_MAX) * 8) {
        msg("%s: scrypt cost N=2^%u, r=%u, p=%u is above what kuai accepts (N*r*p <= 2^%d); "
            "not spending that memory and time on an unverified header",
            in_name, hdr[12], hdr[13], hdr[14], SCRYPT_LOG2N_MAX + 3);
        return EXIT_VERIFY;
    }
    kuai_cipher c = (kuai_cipher)hdr[9];
    if (o->cipher && o->cipher != c) {
        msg("%s: encrypted with %s, not %s", in_name, kuai_cipher_name(c),
            kuai_cipher_name(o->cipher));
        return EXIT_VERIFY;
    }
    if (kdf == KDF_SCRYPT && !km->password) {
        if (km->nkeys) {
            msg("%s: encrypted with a password; use --password", in_name);
            return EXIT_USAGE;
        }
        read_password(0, km); /* no key option given: ask, as -p would */
    }
    if (kdf == KDF_NONE && !km->nkeys && !km->password) {
        msg("%s: encrypted with a key; give --key HEX or --key-file FILE", in_name);
        return EXIT_USAGE;
    }
    if (kdf == KDF_NONE && km->password) {
        msg("%s: encrypted with a key, not a password; use --key or --key-file", in_name);
        return EXIT_USAGE;
    }
    /* The cipher id is not verified yet (the header tag needs the key), so
     * a key of another length is a wrong key or a damaged header alike. */
    if (kdf == KDF_NONE && km->key_len != kuai_key_size(c)) {
        msg("%s: wrong key, or a damaged header (the header names %s, whose key is %zu bytes; "
            "the key given is %zu)",
            in_name, kuai_cipher_name(c), kuai_key_size(c), km->key_len);
        return EXIT_VERIFY;
    }
    file_keys *fk = xmalloc(sizeof *fk);
    int rc = derive(fk, km, hdr, tag);
    if (rc) {
        fk_free(fk);
        free(fk);
        msg("%s: %s: %s", in_name, kuai_cipher_name(c), kuai_strerror(rc));
        return kuai_exit_code(rc);
    }
    if (CRYPTO_memcmp(tag, hdr + 48, TAG_SIZE) != 0) {
        fk_free(fk);
        free(fk);
        msg("%s: wrong %s, or a damaged header", in_name, kdf ? "password" : "key");
        return EXIT_VERIFY;
    }
    memcpy(fk->header, hdr, HEADER_SIZE);
    uint64_t sz = input_size(in_fd);
    progress_start(pg, o->quiet, sz > HEADER_SIZE ? sz - HEADER_SIZE : 0);
    chunk_reader rd = {.fd = in_fd};
    rc = run_pipeline(fk, 1, &rd, out, o->threads, pg, in_name);
    progress_end(pg);
    fk_free(fk);
    free(fk);
    return rc;
}
