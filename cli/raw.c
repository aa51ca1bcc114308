/* SPDX-License-Identifier: Apache-2.0 */
/*
 * --raw: the bytes `openssl enc -K HEX -iv HEX` reads and writes, no header
 * and no authentication. ECB and CBC are padded with PKCS#7 unless --nopad;
 * CTR uses the whole block as a big-endian counter, as OpenSSL does; CFB
 * (CFB128) and OFB are not padded, a final partial block ends the stream.
 * No XTS: openssl enc refuses XTS ciphers, so there are no bytes to match
 * (docs/cli.md says why kuai does not invent a file format for it).
 */
#define _GNU_SOURCE
#include "cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/crypto.h>

/* Buffer per read: a multiple of every block size, and large enough that the
 * library's parallel calls split it over the threads. */
#define RAW_BUF ((size_t)4 << 20)
/* Per-stream step of the lockstep multi-key CBC encryption. */
#define LOCKSTEP_BUF ((size_t)1 << 20)

int parse_raw_cipher(const char *name, kuai_cipher *c, raw_mode *m)
{
    size_t n = strlen(name);
    static const struct {
        const char *suffix;
        raw_mode mode;
    } modes[] = {{"-ecb", MODE_ECB},
                 {"-cbc", MODE_CBC},
                 {"-ctr", MODE_CTR},
                 {"-cfb", MODE_CFB},
                 {"-ofb", MODE_OFB}};
    if (n > 4 && !strcasecmp(name + n - 4, "-xts"))
        fail(EXIT_USAGE,
             "%s: --raw has no XTS (openssl enc refuses XTS ciphers, so there are no bytes to "
             "match; the library's kuai_xts_encrypt and the provider's AES-XTS/SM4-XTS have it)",
             name);
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) {
        size_t sl = strlen(modes[i].suffix);
        if (n > sl && !strcasecmp(name + n - sl, modes[i].suffix)) {
            char base[64];
            if (n - sl >= sizeof base)
                return -1;
            memcpy(base, name, n - sl);
            base[n - sl] = '\0';
            if (parse_cipher(base, c))
                return -1;
            /* the library's CFB and OFB are for 128-bit blocks, as OpenSSL's */
            if ((modes[i].mode == MODE_CFB || modes[i].mode == MODE_OFB) &&
                kuai_block_size(*c) != 16)
                fail(EXIT_USAGE, "%s: CFB and OFB are for the 128-bit-block ciphers, not %s", name,
                     kuai_cipher_name(*c));
            *m = modes[i].mode;
            return 0;
        }
    }
    return -1;
}

static uint64_t input_size(int fd)
{
    struct stat st;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
        return (uint64_t)st.st_size;
    return 0;
}

typedef struct raw_ctx {
    const cli_opts *o;
    kuai_key key;
    uint8_t iv[KUAI_MAX_BLOCK];
    size_t bs;
} raw_ctx;

static int setup(raw_ctx *r, const cli_opts *o, const key_material *km, size_t key_index)
{
    memset(r, 0, sizeof *r);
    r->o = o;
    r->bs = kuai_block_size(o->cipher);
    int rc =
        kuai_key_init(&r->key, o->cipher, km->keys[km->nkeys > 1 ? key_index : 0], km->key_len);
    if (rc) {
        msg("%s: %s", kuai_cipher_name(o->cipher), cli_strerror(rc, o->cipher));
        return kuai_exit_code(rc);
    }
    if (o->mode != MODE_ECB) {
        size_t n;
        if (hex_decode(o->iv_hex, r->iv, sizeof r->iv, &n) || n != r->bs)
            fail(EXIT_USAGE, "--iv: need %zu hex digits (one %zu-byte block) for %s", r->bs * 2,
                 r->bs, o->cipher_arg);
    }
    return 0;
}

/* A library error on data (an internal one: keys, IVs and lengths are
 * checked before): said, and returned as the exit code rather than
 * fail()ed, so that the caller still wipes the buffers, which hold
 * plaintext by then, and the keys. */
static int lib_error(int rc)
{
    if (rc)
        msg("%s", kuai_strerror(rc)); /* after key setup: never KUAI_ERR_BACKEND */
    return rc ? kuai_exit_code(rc) : 0;
}

/* Encrypt or decrypt full blocks (any length for CTR, CFB and OFB: only the
 * last piece of a stream may end in a partial block). */
static int crypt_buf(raw_ctx *r, uint8_t *buf, size_t len)
{
    const cli_opts *o = r->o;
    unsigned t = o->threads;
    int rc = 0;
    if (!len)
        return 0;
    switch (o->mode) {
    case MODE_CTR:
        rc = kuai_ctr_crypt_parallel(&r->key, r->iv, buf, buf, len, t);
        break;
    case MODE_ECB:
        rc = o->decrypt ? kuai_ecb_decrypt_parallel(&r->key, buf, buf, len, t)
                        : kuai_ecb_encrypt_parallel(&r->key, buf, buf, len, t);
        break;
    case MODE_CBC:
        rc = o->decrypt ? kuai_cbc_decrypt_parallel(&r->key, r->iv, buf, buf, len, t)
                        : kuai_cbc_encrypt(&r->key, r->iv, buf, buf, len);
        break;
    case MODE_CFB:
        rc = o->decrypt ? kuai_cfb_decrypt(&r->key, r->iv, buf, buf, len)
                        : kuai_cfb_encrypt(&r->key, r->iv, buf, buf, len);
        break;
    case MODE_OFB:
        rc = kuai_ofb_crypt(&r->key, r->iv, buf, buf, len);
        break;
    }
    return lib_error(rc);
}

static int out_write(output *out, const uint8_t *buf, size_t len)
{
    if (len && write_full(out->fd, buf, len)) {
        msg("%s: write error: %s", out_name(out), strerror(errno));
        return EXIT_IO;
    }
    return 0;
}

/* PKCS#7: 1..bs bytes, each holding the count. Checked without an early
 * exit on the first bad byte. */
static int unpad(const uint8_t *blk, size_t bs, size_t *keep)
{
    unsigned p = blk[bs - 1], bad = (p == 0) | (p > bs);
    for (size_t i = 0; i < bs; i++) {
        unsigned in_pad = i >= bs - (p > bs ? bs : p);
        bad |= in_pad & (blk[i] != p);
    }
    *keep = bad ? 0 : bs - p;
    return bad ? -1 : 0;
}

int raw_run(const cli_opts *o, const key_material *km, size_t key_index, int in_fd, output *out,
            progress *pg, const char *in_name)
{
    /* The key schedule: tracked (a fail() until it is wiped below wipes
     * it). The buffer is not: nothing fail()s once it holds data. */
    raw_ctx *r = xmalloc(sizeof *r);
    secret_track(r, sizeof *r);
    int rc = setup(r, o, km, key_index);
    if (rc) {
        OPENSSL_cleanse(r, sizeof *r);
        secret_untrack(r);
        free(r);
        return rc;
    }
    size_t bs = r->bs;
    int stream = raw_mode_is_stream(o->mode);
    int padded = !stream && !o->nopad;
    /* One block more than a read: decryption holds the last block back
     * until it knows it is the last (it carries the padding). */
    uint8_t *buf = xmalloc(RAW_BUF + 2 * KUAI_MAX_BLOCK);
    size_t held = 0; /* bytes at the start of buf carried over */
    progress_start(pg, o->quiet, input_size(in_fd));
    for (;;) {
        ssize_t n = read_full(in_fd, buf + held, RAW_BUF);
        if (n < 0) {
            msg("%s: read error: %s", in_name, strerror(errno));
            rc = EXIT_IO;
            break;
        }
        progress_add(pg, (uint64_t)n);
        size_t have = held + (size_t)n;
        int eof = (size_t)n < RAW_BUF;
        if (!eof) {
            /* Keep the tail that is not a whole block (a partial block
             * ends a CFB/OFB stream), and for padded decryption one whole
             * block more. */
            size_t keep = o->mode == MODE_CTR ? 0 : have % bs;
            if (padded && o->decrypt && keep == 0)
                keep = bs;
            if ((rc = crypt_buf(r, buf, have - keep)) || (rc = out_write(out, buf, have - keep)))
                break;
            memmove(buf, buf + have - keep, keep);
            held = keep;
            continue;
        }
        /* end of input */
        if (stream) {
            if (!(rc = crypt_buf(r, buf, have)))
                rc = out_write(out, buf, have);
        } else if (!o->decrypt && padded) {
            size_t p = bs - have % bs;
            memset(buf + have, (int)p, p);
            have += p;
            if (!(rc = crypt_buf(r, buf, have)))
                rc = out_write(out, buf, have);
        } else if (have % bs) {
            msg("%s: %s input is not a whole number of %zu-byte blocks%s", in_name,
                o->decrypt ? "encrypted" : "the", bs,
                o->decrypt ? " (truncated, or not this cipher)" : " (--nopad needs that)");
            rc = EXIT_VERIFY;
        } else if (o->decrypt && padded) {
            size_t keep;
            if (have == 0) {
                msg("%s: empty input: padded ciphertext holds at least one block", in_name);
                rc = EXIT_VERIFY;
                break;
            }
            if ((rc = crypt_buf(r, buf, have)))
                break;
            if (unpad(buf + have - bs, bs, &keep)) {
                msg("%s: bad decrypt: the padding is wrong (wrong key or IV, or damaged data)",
                    in_name);
                rc = EXIT_VERIFY;
            } else {
                rc = out_write(out, buf, have - bs + keep);
            }
        } else {
            if (!(rc = crypt_buf(r, buf, have)))
                rc = out_write(out, buf, have);
        }
        break;
    }
    progress_end(pg);
    OPENSSL_cleanse(buf, RAW_BUF + 2 * KUAI_MAX_BLOCK);
    free(buf);
    OPENSSL_cleanse(r, sizeof *r); /* the key schedule and the IV */
    secret_untrack(r);
    free(r);
    return rc;
}

/*
 * Several files in CBC encryption at once: each round reads up to 1 MiB of
 * every file still open, and the files that filled their buffer go through
 * one kuai_cbc_encrypt_multi call, which interleaves the serial CBC chains
 * of all of them across the vector lanes. A file whose read came up short
 * is at its end: its last piece is padded and finished alone.
 */
int raw_cbc_encrypt_lockstep(const cli_opts *o, const key_material *km, const int *in_fds,
                             output *outs, size_t n, progress *pg)
{
    /* the key schedules tracked as in raw_run; the buffers hold data only
     * where nothing fail()s */
    raw_ctx *r = xmalloc(n * sizeof *r);
    secret_track(r, n * sizeof *r);
    uint8_t **bufs = calloc(n, sizeof *bufs);
    const kuai_key **keys = calloc(n, sizeof *keys);
    uint8_t **ivs = calloc(n, sizeof *ivs);
    const uint8_t **ins = calloc(n, sizeof *ins);
    uint8_t **outp = calloc(n, sizeof *outp);
    size_t *lens = calloc(n, sizeof *lens);
    int *active = calloc(n, sizeof *active);
    if (!bufs || !keys || !ivs || !ins || !outp || !lens || !active)
        fail(EXIT_INTERNAL, "out of memory");
    uint64_t total = 0;
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        rc = setup(&r[i], o, km, i);
        bufs[i] = xmalloc(LOCKSTEP_BUF + KUAI_MAX_BLOCK);
        active[i] = 1;
        total += input_size(in_fds[i]);
    }
    size_t bs = kuai_block_size(o->cipher), nactive = rc ? 0 : n;
    progress_start(pg, o->quiet, total);
    while (nactive && !rc) {
        size_t m = 0;
        for (size_t i = 0; i < n && !rc; i++) {
            if (!active[i])
                continue;
            ssize_t got = read_full(in_fds[i], bufs[i], LOCKSTEP_BUF);
            if (got < 0) {
                msg("%s: read error: %s", o->inputs[i], strerror(errno));
                rc = EXIT_IO;
                break;
            }
            progress_add(pg, (uint64_t)got);
            lens[i] = (size_t)got;
            if ((size_t)got == LOCKSTEP_BUF) {
                keys[m] = &r[i].key;
                ivs[m] = r[i].iv;
                ins[m] = bufs[i];
                outp[m] = bufs[i];
                m++;
            }
        }
        if (rc)
            break;
        if (m && (rc = lib_error(kuai_cbc_encrypt_multi(keys, ivs, ins, outp, m, LOCKSTEP_BUF))))
            break;
        for (size_t i = 0; i < n && !rc; i++) {
            if (!active[i])
                continue;
            size_t len = lens[i];
            if (len < LOCKSTEP_BUF) {
                if (o->nopad && len % bs) {
                    msg("%s: the input is not a whole number of %zu-byte blocks (--nopad needs "
                        "that)",
                        o->inputs[i], bs);
                    rc = EXIT_VERIFY;
                    break;
                }
                if (!o->nopad) {
                    size_t p = bs - len % bs;
                    memset(bufs[i] + len, (int)p, p);
                    len += p;
                }
                if (len &&
                    (rc = lib_error(kuai_cbc_encrypt(&r[i].key, r[i].iv, bufs[i], bufs[i], len))))
                    break;
                active[i] = 0;
                nactive--;
            }
            rc = out_write(&outs[i], bufs[i], len);
        }
    }
    progress_end(pg);
    for (size_t i = 0; i < n; i++) {
        if (bufs[i]) {
            OPENSSL_cleanse(bufs[i], LOCKSTEP_BUF + KUAI_MAX_BLOCK);
            free(bufs[i]);
        }
    }
    OPENSSL_cleanse(r, n * sizeof *r);
    secret_untrack(r);
    free(r), free(bufs), free(keys), free(ivs), free(ins), free(outp), free(lens), free(active);
    return rc;
}
