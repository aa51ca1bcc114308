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

#include <openssl/crypto.h>

/* Everything a chunk needs: read-only while the workers run. */
typedef kuai_file_keys file_keys;

/* The secret of key_material: the raw key, or the password's bytes. */
static const uint8_t *secret_of(const key_material *km, size_t *len)
{
    if (km->password) {
        *len = km->password_len;
        return (const uint8_t *)km->password;
    }
    *len = km->key_len;
    return km->keys[0];
}

/* The file keys: tracked from before the key derivation to their wipe, so
 * that a fail() in between (output_create, an allocation, a thread that
 * cannot start) wipes them; shared, as the pipeline's workers seal or open
 * with them (cli.h). */
static file_keys *keys_new(void)
{
    file_keys *fk = xmalloc(sizeof *fk);
    memset(fk, 0, sizeof *fk);
    secret_track_shared(fk, sizeof *fk);
    return fk;
}

static void keys_free(file_keys *fk)
{
    kuai_file_keys_wipe(fk);
    secret_untrack(fk);
    free(fk);
}

/* A failure of kuai_file_seal_begin/open_begin that is libcrypto's:
 * scrypt (out of memory, most likely) or HKDF/HMAC. */
static _Noreturn void derive_fail(const kuai_file_params *p)
{
    if (p->kdf == KUAI_FILE_KDF_SCRYPT)
        fail(EXIT_INTERNAL, "scrypt (N=2^%u, r=%u, p=%u) failed: out of memory?", p->scrypt_log2n,
             p->scrypt_r, p->scrypt_p);
    fail(EXIT_INTERNAL, "OpenSSL HKDF or HMAC-SHA-256 failed");
}

/* ---- the pipeline ---- */

/* Results of a chunk followed by too few bytes for another (slot.frag),
 * beside the library's negative codes. */
enum { RC_CUT_IN_NEXT = 1, RC_APPENDED = 2 };

enum { SLOT_FREE, SLOT_FILLED, SLOT_BUSY, SLOT_DONE };

typedef struct slot {
    uint8_t *in, *out;
    uint8_t *res; /* the result: in (sealed or opened in place) or out */
    size_t in_len, out_len;
    uint64_t idx;
    int last, state, rc;
    size_t frag; /* decrypt: the input ends this many bytes (1..15) after this full chunk */
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
        if (p->decrypt && s->frag) {
            /* Fewer bytes than a tag after this full chunk: the file was cut
             * inside the next chunk (this one verifies as non-final), or
             * they were added after this, its final chunk. Opened out of
             * place to try both; nothing of it is written. */
            s->res = s->out;
            s->rc = kuai_file_open_chunk(p->fk, s->idx, 0, s->in, s->in_len, s->out);
            if (!s->rc)
                s->rc = RC_CUT_IN_NEXT;
            else if (s->rc == KUAI_ERR_AUTH &&
                     kuai_file_open_chunk(p->fk, s->idx, 1, s->in, s->in_len, s->out) == 0)
                s->rc = RC_APPENDED;
            s->out_len = 0;
        } else if (p->decrypt) {
            s->res = s->last ? s->out : s->in;
            s->rc = kuai_file_open_chunk(p->fk, s->idx, s->last, s->in, s->in_len, s->res);
            s->out_len = s->in_len - TAG_SIZE;
        } else {
            s->res = s->in;
            s->rc = kuai_file_seal_chunk(p->fk, s->idx, s->last, s->in, s->in_len, s->res);
            s->out_len = s->in_len + TAG_SIZE;
        }
        pthread_mutex_lock(&p->mu);
        s->state = SLOT_DONE;
        if (s->rc == RC_CUT_IN_NEXT)
            pl_error(p, EXIT_VERIFY,
                     "%s: truncated: the file ends %zu byte%s into chunk %llu, before its tag",
                     p->in_name, s->frag, s->frag == 1 ? "" : "s", (unsigned long long)s->idx + 1);
        else if (s->rc == RC_APPENDED)
            pl_error(p, EXIT_VERIFY,
                     "%s: data appended after the last chunk (chunk %llu): %zu byte%s", p->in_name,
                     (unsigned long long)s->idx, s->frag, s->frag == 1 ? "" : "s");
        else if (s->rc == KUAI_ERR_TRUNCATED)
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

/* Reads whole chunks, looking ahead to know which is the last: one byte
 * when encrypting; a tag's worth when decrypting, so that a file ending
 * fewer bytes than a tag after a full chunk is known before that chunk is
 * opened (and opened as both, to tell a cut from bytes appended). */
typedef struct chunk_reader {
    int fd;
    size_t ahead; /* how far to look: 1, or TAG_SIZE */
    size_t npeek; /* bytes looked at, the start of the next chunk */
    uint8_t peek[TAG_SIZE];
} chunk_reader;

/* Fills buf with up to want bytes; *last is set when the input ends right
 * after them, *frag to the count (1..ahead-1) when it ends that many bytes
 * after them (those are then dropped: not a chunk). Returns the byte count
 * or -1 (errno set). */
static ssize_t read_chunk(chunk_reader *r, uint8_t *buf, size_t want, int *last, size_t *frag)
{
    size_t got = r->npeek;
    memcpy(buf, r->peek, r->npeek);
    r->npeek = 0;
    *frag = 0;
    ssize_t n = read_full(r->fd, buf + got, want - got);
    if (n < 0)
        return -1;
    got += (size_t)n;
    if (got < want) {
        *last = 1;
        return (ssize_t)got;
    }
    n = read_full(r->fd, r->peek, r->ahead);
    if (n < 0)
        return -1;
    if ((size_t)n < r->ahead && n > 0) {
        *frag = (size_t)n;
        n = 0;
    }
    r->npeek = (size_t)n;
    *last = n == 0;
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
    /* The slots are not tracked secrets: they hold data only from the
     * first read to their wipe below, where nothing fail()s (the threads
     * report errors through pl_error). */
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
        size_t frag = 0;
        ssize_t n = read_chunk(rd, s->in, want, &last, &frag);
        pthread_mutex_lock(&p->mu);
        if (n < 0) {
            pl_error(p, EXIT_IO, "%s: read error: %s", in_name, strerror(errno));
        } else if (decrypt && (size_t)n < TAG_SIZE) {
            /* chunk 0 only: after a full chunk the look-ahead holds a tag's
             * worth, or the chunk before carries frag */
            if (n == 0)
                pl_error(p, EXIT_VERIFY, "%s: truncated: no chunk after the header", in_name);
            else
                pl_error(p, EXIT_VERIFY,
                         "%s: truncated: chunk %llu is %zd byte%s, shorter than its tag", in_name,
                         (unsigned long long)idx, n, n == 1 ? "" : "s");
        } else {
            s->in_len = (size_t)n;
            s->idx = idx;
            s->last = last;
            s->frag = frag;
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
    kuai_file_params fp;
    int rc = kuai_file_params_new(&fp, o->cipher,
                                  km->password ? KUAI_FILE_KDF_SCRYPT : KUAI_FILE_KDF_KEY,
                                  (unsigned)o->scrypt_log2n);
    if (rc == KUAI_ERR_EXTERNAL)
        fail(EXIT_INTERNAL, "OpenSSL RAND_bytes failed");
    if (rc) {
        msg("%s: %s", kuai_cipher_name(o->cipher), cli_strerror(rc, o->cipher));
        return kuai_exit_code(rc);
    }
    size_t secret_len;
    const uint8_t *secret = secret_of(km, &secret_len);
    file_keys *fk = keys_new();
    rc = kuai_file_seal_begin(fk, &fp, secret, secret_len, hdr);
    if (rc == KUAI_ERR_EXTERNAL)
        derive_fail(&fp);
    if (rc) {
        keys_free(fk);
        msg("%s: %s", kuai_cipher_name(o->cipher), cli_strerror(rc, o->cipher));
        return kuai_exit_code(rc);
    }
    output_create(out); /* after scrypt: a kill during it leaves no temporary file */
    if (write_full(out->fd, hdr, HEADER_SIZE)) {
        keys_free(fk);
        msg("%s: write error: %s", out_name(out), strerror(errno));
        return EXIT_IO;
    }
    progress_start(pg, o->quiet, input_size(in_fd));
    chunk_reader rd = {.fd = in_fd, .ahead = 1};
    rc = run_pipeline(fk, 0, &rd, out, o->threads, pg, in_name);
    progress_end(pg);
    keys_free(fk);
    return rc;
}

int container_decrypt(const cli_opts *o, key_material *km, int in_fd, output *out, progress *pg,
                      const char *in_name)
{
    uint8_t hdr[HEADER_SIZE];
    kuai_file_params fp;
    kuai_file_header_error why;
    ssize_t n = read_full(in_fd, hdr, HEADER_SIZE);
    if (n < 0) {
        msg("%s: read error: %s", in_name, strerror(errno));
        return EXIT_IO;
    }
    if (kuai_file_header_parse(hdr, (size_t)n, &fp, &why) != 0) {
        switch (why) {
        case KUAI_FILE_HDR_MAGIC:
            msg("%s: not a kuai file (no kuai header; for raw openssl-style data use --raw)",
                in_name);
            break;
        case KUAI_FILE_HDR_SHORT:
            /* An empty input is one too (kuai_file.h): most often an output
             * that was never written (a shell redirect made it, the
             * command failed), so it is named as such. */
            if (n == 0)
                msg("%s: truncated: the input is empty (no kuai header)", in_name);
            else
                msg("%s: truncated: the header is cut short", in_name);
            break;
        case KUAI_FILE_HDR_VERSION:
            msg("%s: format version %u, this kuai reads version %u", in_name, hdr[8],
                KUAI_FILE_VERSION);
            break;
        case KUAI_FILE_HDR_COST:
            msg("%s: scrypt cost N=2^%u, r=%u, p=%u is above what kuai accepts (N*r*p <= 2^%d); "
                "not spending that memory and time on an unverified header",
                in_name, hdr[12], hdr[13], hdr[14], KUAI_FILE_SCRYPT_COST_LOG2_MAX);
            break;
        default:
            msg("%s: damaged header (an unknown cipher, chunk size or KDF setting)", in_name);
        }
        return EXIT_VERIFY;
    }
    int kdf = fp.kdf;
    kuai_cipher c = fp.cipher;
    if (o->cipher && o->cipher != c) {
        msg("%s: encrypted with %s, not %s", in_name, kuai_cipher_name(c),
            kuai_cipher_name(o->cipher));
        return EXIT_VERIFY;
    }
    if (kdf == KUAI_FILE_KDF_SCRYPT && !km->password) {
        if (km->nkeys) {
            msg("%s: encrypted with a password; use --password", in_name);
            return EXIT_USAGE;
        }
        read_password(0, km); /* no key option given: ask, as -p would */
    }
    if (kdf == KUAI_FILE_KDF_KEY && !km->nkeys && !km->password) {
        msg("%s: encrypted with a key; give --key HEX or --key-file FILE", in_name);
        return EXIT_USAGE;
    }
    if (kdf == KUAI_FILE_KDF_KEY && km->password) {
        msg("%s: encrypted with a key, not a password; use --key or --key-file", in_name);
        return EXIT_USAGE;
    }
    /* The cipher id is not verified yet (the header tag needs the key), so
     * a key of another length is a wrong key or a damaged header alike. */
    if (kdf == KUAI_FILE_KDF_KEY && km->key_len != kuai_key_size(c)) {
        msg("%s: wrong key, or a damaged header (the header names %s, whose key is %zu bytes; "
            "the key given is %zu)",
            in_name, kuai_cipher_name(c), kuai_key_size(c), km->key_len);
        return EXIT_VERIFY;
    }
    size_t secret_len;
    const uint8_t *secret = secret_of(km, &secret_len);
    file_keys *fk = keys_new();
    int rc = kuai_file_open_begin(fk, hdr, &fp, secret, secret_len);
    if (rc == KUAI_ERR_EXTERNAL)
        derive_fail(&fp);
    if (rc == KUAI_ERR_AUTH) {
        keys_free(fk);
        msg("%s: wrong %s, or a damaged header", in_name, kdf ? "password" : "key");
        return EXIT_VERIFY;
    }
    if (rc) {
        keys_free(fk);
        msg("%s: %s: %s", in_name, kuai_cipher_name(c), cli_strerror(rc, c));
        return kuai_exit_code(rc);
    }
    output_create(out); /* after scrypt: a kill during it leaves no temporary file */
    uint64_t sz = input_size(in_fd);
    progress_start(pg, o->quiet, sz > HEADER_SIZE ? sz - HEADER_SIZE : 0);
    chunk_reader rd = {.fd = in_fd, .ahead = TAG_SIZE};
    rc = run_pipeline(fk, 1, &rd, out, o->threads, pg, in_name);
    progress_end(pg);
    keys_free(fk);
    return rc;
}
