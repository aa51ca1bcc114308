/* SPDX-License-Identifier: Apache-2.0 */
/*
 * API misuse table: every public function of include/kuai.h, each misuse
 * that applies to it, every cipher and backend: the call returns its error
 * code and writes nothing.
 *
 * One table (api[] below) lists the functions; each row says which
 * arguments the function takes, and the misuses follow from that:
 *
 *   NULL      each pointer argument NULL (array and element for the
 *             multi-key calls) with a length > 0            -> KUAI_ERR_ARG
 *   wrap      a length near SIZE_MAX with two small buffers, in before out
 *             and out before in; for GCM also the IV, AAD and tag lengths,
 *             for key setup the key length   -> KUAI_ERR_ARG/LENGTH/KEY_LEN
 *   overlap   in and out one block apart, both ways         -> KUAI_ERR_ARG
 *   uninit    a key struct never set up (zeroed; full of 0x5a), a GCM
 *             context never initialised          -> KUAI_ERR_KEY / _ARG
 *   wiped     a wiped key (for streaming GCM: wiped after init)
 *                                                          -> KUAI_ERR_KEY
 *   other     a key of another cipher or block size where the call can
 *             tell: a multi-key stream (KUAI_ERR_MISMATCH), GCM with a
 *             256-bit block, the streaming context's key set up again as
 *             uBlock-256/256 after init (KUAI_ERR_UNSUPPORTED), the key
 *             length of another cipher (KUAI_ERR_KEY_LEN); XTS tweak key
 *             of another cipher (KUAI_ERR_MISMATCH); a CMAC context's key
 *             set up again as uBlock-256/256 (KUAI_ERR_UNSUPPORTED)
 *   length    lengths refused without wrapping: XTS under 16 or over
 *             2^24, CCM nonce and tag lengths, a CCM message over its
 *             length field, CMAC tag lengths, no streams or keys (n 0) in
 *             a multi-key call                 -> KUAI_ERR_LENGTH / _ARG
 *   auth      a wrong tag to a one-shot decryption: KUAI_ERR_AUTH, and
 *             out holds zeros (kuai.h's contract) and nothing else changes
 *
 * "Writes nothing": every buffer, key struct and context of a case lives
 * in one heap area with guard bytes around each piece; the whole area is
 * compared byte for byte before and after the call. Each row is also run
 * once with valid arguments, which must succeed, so a case's error comes
 * from its fault and nothing else.
 *
 * Functions without an error code (sizes, names, wipe; kuai_version, which
 * takes nothing and so has no misuse, checked equal to KUAI_VERSION) have a row too,
 * with a check of their NULL and unknown-argument behaviour. A last check
 * reads include/kuai.h and fails if a KUAI_API function is not in the
 * table. The regressions of issue 15 defect 10 (wrapping lengths, a GCM
 * context's key set up again, fork during a parallel call) are cases here
 * and a fork test at the end; another fork test forks while a second thread
 * builds the backend registry.
 */
#include "test_util.h"

#include <ctype.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <pthread.h>

/* ---- the world of one case ---------------------------------------------- */

#define NS 3                     /* streams of the multi-key calls */
#define DATA 4096                /* bytes of data: whole blocks of every cipher */
#define PIECE_GAP 64             /* guard bytes between the pieces of the area */
#define WRAP_LEN (SIZE_MAX - 31) /* a multiple of every block size */

/* key structs in the area; K_OUT.. K_OUT + NS - 1: the ones a call sets up */
enum { K_GOOD, K_GOOD2, K_BAD, K_OUT, K_N = K_OUT + NS };

typedef struct ws {
    kuai_cipher c;
    const char *backend;
    size_t bs;
    uint8_t *area, *snap, *area_alloc;
    size_t area_len;
    kuai_key *keys; /* K_N of them, in the area */
    kuai_gcm_ctx *ctx;
    kuai_cmac_ctx *mctx;
    uint8_t *in, *out, *iv, *aad, *tag, *keybytes, *small_a, *small_b;
    uint8_t *sin[NS], *sout[NS], *siv[NS], *skb[NS];
    /* The arguments of the call, from which the fault is made. */
    kuai_key *k;        /* key struct to set up (key_init) */
    const kuai_key *kc; /* key used */
    const uint8_t *kb;
    size_t key_len, len, iv_len, aad_len, tag_len, n;
    const char *bname;
    kuai_gcm_ctx *cx;
    kuai_cmac_ctx *mcx;
    const kuai_key *kt; /* XTS tweak key */
    kuai_xts_standard std;
    const kuai_key *kp[NS];
    kuai_key *kop[NS]; /* key structs to set up (kuai_key_init_multi) */
    kuai_key *const *keysov;
    const uint8_t *inp[NS], *kbp[NS];
    uint8_t *outp[NS], *ivp[NS];
    const kuai_key *const *keysv;
    const uint8_t *const *inv, *const *kbv;
    uint8_t *const *outv, *const *ivv;
    const uint8_t *pin;
    uint8_t *pout, *piv;
    const uint8_t *paad;
    uint8_t *ptag;
} ws;

/* Which arguments a function takes. */
enum {
    U_K = 1u << 0,       /* const kuai_key * */
    U_KOUT = 1u << 1,    /* kuai_key * to set up */
    U_KB = 1u << 2,      /* key bytes + key_len */
    U_BNAME = 1u << 3,   /* backend name */
    U_IN = 1u << 4,      /* in + len */
    U_OUT = 1u << 5,     /* out */
    U_IV = 1u << 6,      /* iv/ctr block */
    U_GIV = 1u << 7,     /* GCM iv + iv_len */
    U_AAD = 1u << 8,     /* aad + aad_len */
    U_TAG = 1u << 9,     /* tag + tag_len */
    U_CTX = 1u << 10,    /* an initialised GCM context */
    U_CTXOUT = 1u << 11, /* a GCM context to initialise */
    U_MK = 1u << 12,     /* arrays of key structs, in, out (+ n) */
    U_MKB = 1u << 13,    /* arrays of key bytes, in, out (+ n) */
    U_MIV = 1u << 14,    /* array of IVs */
    U_DEC = 1u << 15,    /* verifies a tag: KUAI_ERR_AUTH is a valid outcome */
    U_GCM = 1u << 16,    /* 128-bit-block ciphers only */
    U_TKEY = 1u << 17,   /* XTS tweak key + tweak (iv); len 16..2^24 */
    U_NONCE = 1u << 18,  /* CCM nonce (iv) + nonce_len (iv_len) */
    U_MAC = 1u << 19,    /* an initialised CMAC context */
    U_MACOUT = 1u << 20, /* a CMAC context to initialise */
    U_MTAG = 1u << 21,   /* tag_len limited to 4..16 (CCM: even) */
    U_TAIL = 1u << 22,   /* any length: the valid call ends in a partial block */
    U_MKOUT = 1u << 23,  /* arrays of key structs to set up and of key bytes (+ n) */
    U_UNWRAP = 1u << 24  /* key unwrap: out is 8 bytes shorter than in */
};

typedef struct api_fn {
    const char *name;
    unsigned uses;
    int other_want;           /* error for a key of another cipher/size; 0: n/a */
    int (*call)(ws *w);       /* NULL: no error code, see check */
    unsigned (*check)(ws *w); /* those: returns the number of cases checked */
} api_fn;

/* ---- the calls ---------------------------------------------------------- */

static int c_key_init(ws *w)
{
    return kuai_key_init(w->k, w->c, w->kb, w->key_len);
}
static int c_key_init_backend(ws *w)
{
    return kuai_key_init_backend(w->k, w->c, w->kb, w->key_len, w->bname);
}
static int c_key_init_m(ws *w)
{
    return kuai_key_init_multi(w->keysov, w->c, w->kbv, w->key_len, w->n);
}
static int c_key_init_mb(ws *w)
{
    return kuai_key_init_multi_backend(w->keysov, w->c, w->kbv, w->key_len, w->n, w->bname);
}
static int c_ecb_enc(ws *w)
{
    return kuai_ecb_encrypt(w->kc, w->pin, w->pout, w->len);
}
static int c_ecb_dec(ws *w)
{
    return kuai_ecb_decrypt(w->kc, w->pin, w->pout, w->len);
}
static int c_cbc_enc(ws *w)
{
    return kuai_cbc_encrypt(w->kc, w->piv, w->pin, w->pout, w->len);
}
static int c_cbc_dec(ws *w)
{
    return kuai_cbc_decrypt(w->kc, w->piv, w->pin, w->pout, w->len);
}
static int c_ctr(ws *w)
{
    return kuai_ctr_crypt(w->kc, w->piv, w->pin, w->pout, w->len);
}
static int c_ecb_enc_1(ws *w)
{
    return kuai_ecb_encrypt_oneshot(w->c, w->kb, w->key_len, w->pin, w->pout, w->len);
}
static int c_ecb_dec_1(ws *w)
{
    return kuai_ecb_decrypt_oneshot(w->c, w->kb, w->key_len, w->pin, w->pout, w->len);
}
static int c_ecb_enc_1m(ws *w)
{
    return kuai_ecb_encrypt_oneshot_multi(w->c, w->kbv, w->key_len, w->inv, w->outv, w->n, w->len);
}
static int c_ecb_dec_1m(ws *w)
{
    return kuai_ecb_decrypt_oneshot_multi(w->c, w->kbv, w->key_len, w->inv, w->outv, w->n, w->len);
}
static int c_ecb_enc_m(ws *w)
{
    return kuai_ecb_encrypt_multi(w->keysv, w->inv, w->outv, w->n, w->len);
}
static int c_ecb_dec_m(ws *w)
{
    return kuai_ecb_decrypt_multi(w->keysv, w->inv, w->outv, w->n, w->len);
}
static int c_cbc_enc_m(ws *w)
{
    return kuai_cbc_encrypt_multi(w->keysv, w->ivv, w->inv, w->outv, w->n, w->len);
}
static int c_cbc_dec_m(ws *w)
{
    return kuai_cbc_decrypt_multi(w->keysv, w->ivv, w->inv, w->outv, w->n, w->len);
}
static int c_gcm_enc(ws *w)
{
    return kuai_gcm_encrypt(w->kc, w->piv, w->iv_len, w->paad, w->aad_len, w->pin, w->pout, w->len,
                            w->ptag, w->tag_len);
}
static int c_gcm_dec(ws *w)
{
    return kuai_gcm_decrypt(w->kc, w->piv, w->iv_len, w->paad, w->aad_len, w->pin, w->pout, w->len,
                            w->ptag, w->tag_len);
}
static int c_gcm_enc_with(ws *w)
{
    return kuai_gcm_encrypt_with(w->cx, w->kc, w->piv, w->iv_len, w->paad, w->aad_len, w->pin,
                                 w->pout, w->len, w->ptag, w->tag_len);
}
static int c_gcm_dec_with(ws *w)
{
    return kuai_gcm_decrypt_with(w->cx, w->kc, w->piv, w->iv_len, w->paad, w->aad_len, w->pin,
                                 w->pout, w->len, w->ptag, w->tag_len);
}
static int c_gcm_init(ws *w)
{
    return kuai_gcm_init(w->cx, w->kc, w->piv, w->iv_len);
}
static int c_gcm_restart(ws *w)
{
    return kuai_gcm_restart(w->cx, w->kc, w->piv, w->iv_len);
}
static int c_gcm_aad(ws *w)
{
    return kuai_gcm_aad(w->cx, w->paad, w->aad_len);
}
static int c_gcm_enc_up(ws *w)
{
    return kuai_gcm_encrypt_update(w->cx, w->pin, w->pout, w->len);
}
static int c_gcm_dec_up(ws *w)
{
    return kuai_gcm_decrypt_update(w->cx, w->pin, w->pout, w->len);
}
static int c_gcm_enc_fin(ws *w)
{
    return kuai_gcm_encrypt_final(w->cx, w->ptag, w->tag_len);
}
static int c_gcm_dec_fin(ws *w)
{
    return kuai_gcm_decrypt_final(w->cx, w->ptag, w->tag_len);
}
static int c_ecb_enc_p(ws *w)
{
    return kuai_ecb_encrypt_parallel(w->kc, w->pin, w->pout, w->len, 4);
}
static int c_ecb_dec_p(ws *w)
{
    return kuai_ecb_decrypt_parallel(w->kc, w->pin, w->pout, w->len, 4);
}
static int c_ctr_p(ws *w)
{
    return kuai_ctr_crypt_parallel(w->kc, w->piv, w->pin, w->pout, w->len, 4);
}
static int c_cbc_dec_p(ws *w)
{
    return kuai_cbc_decrypt_parallel(w->kc, w->piv, w->pin, w->pout, w->len, 4);
}

static int c_xts_enc(ws *w)
{
    return kuai_xts_encrypt(w->kc, w->kt, w->piv, w->pin, w->pout, w->len, w->std);
}
static int c_xts_dec(ws *w)
{
    return kuai_xts_decrypt(w->kc, w->kt, w->piv, w->pin, w->pout, w->len, w->std);
}
static int c_ccm_enc(ws *w)
{
    return kuai_ccm_encrypt(w->kc, w->piv, w->iv_len, w->paad, w->aad_len, w->pin, w->pout, w->len,
                            w->ptag, w->tag_len);
}
static int c_ccm_dec(ws *w)
{
    return kuai_ccm_decrypt(w->kc, w->piv, w->iv_len, w->paad, w->aad_len, w->pin, w->pout, w->len,
                            w->ptag, w->tag_len);
}
static int c_cfb_enc(ws *w)
{
    return kuai_cfb_encrypt(w->kc, w->piv, w->pin, w->pout, w->len);
}
static int c_cfb_dec(ws *w)
{
    return kuai_cfb_decrypt(w->kc, w->piv, w->pin, w->pout, w->len);
}
static int c_ofb(ws *w)
{
    return kuai_ofb_crypt(w->kc, w->piv, w->pin, w->pout, w->len);
}
static int c_cmac(ws *w)
{
    return kuai_cmac(w->kc, w->pin, w->len, w->ptag, w->tag_len);
}
static int c_kw_wrap(ws *w)
{
    return kuai_kw_wrap(w->kc, w->pin, w->len, w->pout);
}
static int c_kw_unwrap(ws *w)
{
    return kuai_kw_unwrap(w->kc, w->pin, w->len, w->pout);
}
static int c_kwp_wrap(ws *w)
{
    return kuai_kwp_wrap(w->kc, w->pin, w->len, w->pout);
}
static int c_kwp_unwrap(ws *w)
{
    size_t key_len = 0;
    return kuai_kwp_unwrap(w->kc, w->pin, w->len, w->pout, &key_len);
}
static int c_cmac_init(ws *w)
{
    return kuai_cmac_init(w->mcx, w->kc);
}
static int c_cmac_update(ws *w)
{
    return kuai_cmac_update(w->mcx, w->pin, w->len);
}
static int c_cmac_final(ws *w)
{
    return kuai_cmac_final(w->mcx, w->ptag, w->tag_len);
}

/* ---- functions without an error code ------------------------------------ */

static kuai_cipher bogus_cipher(void)
{
    return (kuai_cipher)99;
}

static unsigned k_wipe(ws *w)
{
    kuai_key_wipe(NULL); /* a no-op, not a crash */
    kuai_key_wipe(&w->keys[K_BAD]);
    return CHECK(kuai_key_backend(&w->keys[K_BAD]) == NULL, "kuai_key_wipe: key still set up");
}
static unsigned k_backend(ws *w)
{
    unsigned n = 0;
    n += CHECK(kuai_key_backend(NULL) == NULL, "kuai_key_backend(NULL) is not NULL");
    memset(&w->keys[K_BAD], 0, sizeof(kuai_key));
    n += CHECK(kuai_key_backend(&w->keys[K_BAD]) == NULL, "kuai_key_backend(zeroed key)");
    memset(&w->keys[K_BAD], 0x5a, sizeof(kuai_key));
    n += CHECK(kuai_key_backend(&w->keys[K_BAD]) == NULL, "kuai_key_backend(0x5a key)");
    return n;
}
static unsigned k_leaky(ws *w)
{
    (void)w;
    return CHECK(kuai_backend_leaky(NULL) == 0 && kuai_backend_leaky("") == 0,
                 "kuai_backend_leaky(NULL or \"\") is not 0");
}
static unsigned k_env_refused(ws *w)
{
    (void)w;
    unsigned n = CHECK(kuai_backend_env_refused(bogus_cipher()) == NULL,
                       "kuai_backend_env_refused(99) is not NULL");
    /* whatever KUAI_BACKEND says in this run: NULL or a leaky backend */
    for (int c = 0; c < 16; c++) {
        const char *r = kuai_backend_env_refused((kuai_cipher)c);
        n += CHECK(r == NULL || kuai_backend_leaky(r) == 1,
                   "kuai_backend_env_refused(%d) names a backend that does not leak", c);
    }
    return n;
}
static unsigned k_block_size(ws *w)
{
    (void)w;
    return CHECK(kuai_block_size(bogus_cipher()) == 0, "kuai_block_size(99) is not 0");
}
static unsigned k_key_size(ws *w)
{
    (void)w;
    return CHECK(kuai_key_size(bogus_cipher()) == 0, "kuai_key_size(99) is not 0");
}
static unsigned k_cipher_name(ws *w)
{
    (void)w;
    return CHECK(kuai_cipher_name(bogus_cipher()) == NULL, "kuai_cipher_name(99) is not NULL");
}
static unsigned k_backends(ws *w)
{
    const char *names[2] = {"x", "x"};
    size_t n = kuai_backends(w->c, NULL, 5); /* NULL names: count only */
    size_t m = kuai_backends(w->c, names, 0);
    unsigned r = CHECK(n == m && names[0][0] == 'x', "kuai_backends(NULL, 5) or (names, 0) wrote");
    r += CHECK(kuai_backends(bogus_cipher(), names, 2) == 0 && names[0][0] == 'x',
               "kuai_backends(99) returned or wrote something");
    return r;
}
static unsigned k_ciphers(ws *w)
{
    (void)w;
    kuai_cipher list[2] = {(kuai_cipher)0x5a, (kuai_cipher)0x5a};
    size_t n = kuai_ciphers(NULL, 5); /* NULL list: count only */
    size_t m = kuai_ciphers(list, 0);
    return CHECK(n == m && n > 0 && list[0] == (kuai_cipher)0x5a,
                 "kuai_ciphers(NULL, 5) or (list, 0) wrote or miscounted");
}
static unsigned k_cipher_by_name(ws *w)
{
    (void)w;
    return CHECK(kuai_cipher_by_name(NULL) == 0 && kuai_cipher_by_name("") == 0 &&
                     kuai_cipher_by_name("no such cipher") == 0,
                 "kuai_cipher_by_name(NULL, \"\" or unknown) is not 0");
}
static unsigned k_cpu_feature_names(ws *w)
{
    (void)w;
    const char *names[1] = {"x"};
    size_t n = kuai_cpu_feature_names(NULL, 5); /* NULL names: count only */
    size_t m = kuai_cpu_feature_names(names, 0);
    return CHECK(n == m && names[0][0] == 'x',
                 "kuai_cpu_feature_names(NULL, 5) or (names, 0) wrote or miscounted");
}
static unsigned k_strerror(ws *w)
{
    (void)w;
    const char *s = kuai_strerror(-12345);
    return CHECK(s && *s, "kuai_strerror(unknown) is NULL or empty");
}
static unsigned k_gcm_wipe(ws *w)
{
    kuai_gcm_wipe(NULL);
    kuai_gcm_wipe(w->ctx);
    uint8_t tag[16];
    return CHECK_RC(kuai_gcm_encrypt_final(w->ctx, tag, 16), KUAI_ERR_ARG,
                    "kuai_gcm_encrypt_final after kuai_gcm_wipe");
}

/* No arguments, so no misuse: the row checks what it returns. */
static unsigned k_version(ws *w)
{
    (void)w;
    const char *v = kuai_version();
    return CHECK(v != NULL && strcmp(v, KUAI_VERSION) == 0,
                 "kuai_version() is \"%s\", not KUAI_VERSION \"%s\"", v ? v : "(null)",
                 KUAI_VERSION);
}
/* The wrapped length of a KWP key: no error code, 0 for a length KWP
 * cannot wrap. */
static unsigned k_kwp_wrapped_len(ws *w)
{
    (void)w;
    static const struct {
        size_t len, want;
    } t[] = {{0, 0},
             {1, 16},
             {8, 16},
             {9, 24},
             {16, 24},
             {17, 32},
             {24, 32},
             {4096, 4104},
             {UINT32_MAX, 8 + (size_t)UINT32_MAX + 1},
             {(size_t)UINT32_MAX + 1, 0},
             {SIZE_MAX, 0}};
    unsigned n = 0;
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        n += CHECK(kuai_kwp_wrapped_len(t[i].len) == t[i].want,
                   "kuai_kwp_wrapped_len(%zu) = %zu, want %zu", t[i].len,
                   kuai_kwp_wrapped_len(t[i].len), t[i].want);
    return n;
}

static unsigned k_cmac_wipe(ws *w)
{
    uint8_t tag[16];
    unsigned n = 0;
    kuai_cmac_wipe(NULL);
    if (w->bs == 16)
        n += CHECK_RC(kuai_cmac_init(w->mctx, w->kc), KUAI_OK, "kuai_cmac_init before wipe");
    kuai_cmac_wipe(w->mctx);
    n += CHECK_RC(kuai_cmac_update(w->mctx, w->in, 16), KUAI_ERR_ARG,
                  "kuai_cmac_update after kuai_cmac_wipe");
    n += CHECK_RC(kuai_cmac_final(w->mctx, tag, 16), KUAI_ERR_ARG,
                  "kuai_cmac_final after kuai_cmac_wipe");
    return n;
}

/* ---- the table ------------------------------------------------------------ */

#define BLOCKS (U_K | U_IN | U_OUT)
#define ONESHOT (U_KB | U_IN | U_OUT)
#define GCM1 (U_K | U_GIV | U_AAD | U_IN | U_OUT | U_TAG | U_GCM)
#define STREAM (U_CTX | U_GCM)
#define XTS (U_K | U_TKEY | U_IN | U_OUT | U_GCM | U_TAIL)
#define CCM (U_K | U_NONCE | U_AAD | U_IN | U_OUT | U_TAG | U_MTAG | U_GCM | U_TAIL)
#define CFB (BLOCKS | U_IV | U_GCM | U_TAIL)
#define UNSUP KUAI_ERR_UNSUPPORTED

static const api_fn api[] = {
    {"kuai_key_init", U_KOUT | U_KB, KUAI_ERR_KEY_LEN, c_key_init, NULL},
    {"kuai_key_init_backend", U_KOUT | U_KB | U_BNAME, KUAI_ERR_KEY_LEN, c_key_init_backend, NULL},
    {"kuai_key_init_multi", U_MKOUT, KUAI_ERR_KEY_LEN, c_key_init_m, NULL},
    {"kuai_key_init_multi_backend", U_MKOUT | U_BNAME, KUAI_ERR_KEY_LEN, c_key_init_mb, NULL},
    {"kuai_key_wipe", 0, 0, NULL, k_wipe},
    {"kuai_key_backend", 0, 0, NULL, k_backend},
    {"kuai_backend_leaky", 0, 0, NULL, k_leaky},
    {"kuai_backend_env_refused", 0, 0, NULL, k_env_refused},
    {"kuai_block_size", 0, 0, NULL, k_block_size},
    {"kuai_key_size", 0, 0, NULL, k_key_size},
    {"kuai_cipher_name", 0, 0, NULL, k_cipher_name},
    {"kuai_backends", 0, 0, NULL, k_backends},
    {"kuai_ciphers", 0, 0, NULL, k_ciphers},
    {"kuai_cipher_by_name", 0, 0, NULL, k_cipher_by_name},
    {"kuai_cpu_feature_names", 0, 0, NULL, k_cpu_feature_names},
    {"kuai_strerror", 0, 0, NULL, k_strerror},
    {"kuai_version", 0, 0, NULL, k_version},
    {"kuai_ecb_encrypt", BLOCKS, 0, c_ecb_enc, NULL},
    {"kuai_ecb_decrypt", BLOCKS, 0, c_ecb_dec, NULL},
    {"kuai_cbc_encrypt", BLOCKS | U_IV, 0, c_cbc_enc, NULL},
    {"kuai_cbc_decrypt", BLOCKS | U_IV, 0, c_cbc_dec, NULL},
    {"kuai_ctr_crypt", BLOCKS | U_IV, 0, c_ctr, NULL},
    {"kuai_ecb_encrypt_oneshot", ONESHOT, KUAI_ERR_KEY_LEN, c_ecb_enc_1, NULL},
    {"kuai_ecb_decrypt_oneshot", ONESHOT, KUAI_ERR_KEY_LEN, c_ecb_dec_1, NULL},
    {"kuai_ecb_encrypt_oneshot_multi", U_MKB, KUAI_ERR_KEY_LEN, c_ecb_enc_1m, NULL},
    {"kuai_ecb_decrypt_oneshot_multi", U_MKB, KUAI_ERR_KEY_LEN, c_ecb_dec_1m, NULL},
    {"kuai_ecb_encrypt_multi", U_MK, KUAI_ERR_MISMATCH, c_ecb_enc_m, NULL},
    {"kuai_ecb_decrypt_multi", U_MK, KUAI_ERR_MISMATCH, c_ecb_dec_m, NULL},
    {"kuai_cbc_encrypt_multi", U_MK | U_MIV, KUAI_ERR_MISMATCH, c_cbc_enc_m, NULL},
    {"kuai_cbc_decrypt_multi", U_MK | U_MIV, KUAI_ERR_MISMATCH, c_cbc_dec_m, NULL},
    {"kuai_gcm_encrypt", GCM1, KUAI_ERR_UNSUPPORTED, c_gcm_enc, NULL},
    {"kuai_gcm_decrypt", GCM1 | U_DEC, KUAI_ERR_UNSUPPORTED, c_gcm_dec, NULL},
    {"kuai_gcm_init", U_CTXOUT | U_K | U_GIV | U_GCM, KUAI_ERR_UNSUPPORTED, c_gcm_init, NULL},
    {"kuai_gcm_restart", STREAM | U_K | U_GIV, KUAI_ERR_UNSUPPORTED, c_gcm_restart, NULL},
    {"kuai_gcm_encrypt_with", STREAM | GCM1, KUAI_ERR_UNSUPPORTED, c_gcm_enc_with, NULL},
    {"kuai_gcm_decrypt_with", STREAM | GCM1 | U_DEC, KUAI_ERR_UNSUPPORTED, c_gcm_dec_with, NULL},
    {"kuai_gcm_aad", STREAM | U_AAD, KUAI_ERR_UNSUPPORTED, c_gcm_aad, NULL},
    {"kuai_gcm_encrypt_update", STREAM | U_IN | U_OUT, KUAI_ERR_UNSUPPORTED, c_gcm_enc_up, NULL},
    {"kuai_gcm_decrypt_update", STREAM | U_IN | U_OUT, KUAI_ERR_UNSUPPORTED, c_gcm_dec_up, NULL},
    {"kuai_gcm_encrypt_final", STREAM | U_TAG, KUAI_ERR_UNSUPPORTED, c_gcm_enc_fin, NULL},
    {"kuai_gcm_decrypt_final", STREAM | U_TAG | U_DEC, KUAI_ERR_UNSUPPORTED, c_gcm_dec_fin, NULL},
    {"kuai_gcm_wipe", 0, 0, NULL, k_gcm_wipe},
    {"kuai_ecb_encrypt_parallel", BLOCKS, 0, c_ecb_enc_p, NULL},
    {"kuai_ecb_decrypt_parallel", BLOCKS, 0, c_ecb_dec_p, NULL},
    {"kuai_ctr_crypt_parallel", BLOCKS | U_IV, 0, c_ctr_p, NULL},
    {"kuai_cbc_decrypt_parallel", BLOCKS | U_IV, 0, c_cbc_dec_p, NULL},
    {"kuai_xts_encrypt", XTS, UNSUP, c_xts_enc, NULL},
    {"kuai_xts_decrypt", XTS, UNSUP, c_xts_dec, NULL},
    {"kuai_ccm_encrypt", CCM, UNSUP, c_ccm_enc, NULL},
    {"kuai_ccm_decrypt", CCM | U_DEC, UNSUP, c_ccm_dec, NULL},
    {"kuai_cfb_encrypt", CFB, UNSUP, c_cfb_enc, NULL},
    {"kuai_cfb_decrypt", CFB, UNSUP, c_cfb_dec, NULL},
    {"kuai_ofb_crypt", CFB, UNSUP, c_ofb, NULL},
    {"kuai_cmac", U_K | U_IN | U_TAG | U_MTAG | U_GCM | U_TAIL, UNSUP, c_cmac, NULL},
    {"kuai_cmac_init", U_MACOUT | U_K | U_GCM, UNSUP, c_cmac_init, NULL},
    {"kuai_cmac_update", U_MAC | U_IN | U_GCM | U_TAIL, UNSUP, c_cmac_update, NULL},
    {"kuai_cmac_final", U_MAC | U_TAG | U_MTAG | U_GCM, UNSUP, c_cmac_final, NULL},
    {"kuai_cmac_wipe", 0, 0, NULL, k_cmac_wipe},
    {"kuai_kw_wrap", BLOCKS | U_GCM, UNSUP, c_kw_wrap, NULL},
    {"kuai_kw_unwrap", BLOCKS | U_GCM | U_DEC | U_UNWRAP, UNSUP, c_kw_unwrap, NULL},
    {"kuai_kwp_wrapped_len", 0, 0, NULL, k_kwp_wrapped_len},
    {"kuai_kwp_wrap", BLOCKS | U_GCM, UNSUP, c_kwp_wrap, NULL},
    {"kuai_kwp_unwrap", BLOCKS | U_GCM | U_DEC | U_UNWRAP, UNSUP, c_kwp_unwrap, NULL},
};
#define NAPI (sizeof api / sizeof api[0])

/* ---- building a case ----------------------------------------------------- */

/* Carves the area: each piece 64-byte aligned with PIECE_GAP guard bytes
 * after it (the guards are part of the area, so part of the comparison). */
static uint8_t *carve(ws *w, size_t *off, size_t n)
{
    uint8_t *p = w->area + *off;
    *off += (n + PIECE_GAP + 63) & ~(size_t)63;
    return p;
}

static void ws_alloc(ws *w)
{
    size_t need = K_N * (sizeof(kuai_key) + 128) + sizeof(kuai_gcm_ctx) + 128 +
                  sizeof(kuai_cmac_ctx) + 128 + (2 + 2 * NS) * (DATA + 128) + (6 + 2 * NS) * 128 +
                  4096;
    w->area_len = need;
    w->area_alloc = xmalloc(need + 64);
    w->snap = xmalloc(need + 64);
    /* 64-byte alignment for the key structs (kuai_key needs 8). */
    w->area = w->area_alloc + ((64 - ((uintptr_t)w->area_alloc & 63)) & 63);
    size_t off = 0;
    w->keys = (kuai_key *)(void *)carve(w, &off, K_N * sizeof(kuai_key));
    w->ctx = (kuai_gcm_ctx *)(void *)carve(w, &off, sizeof(kuai_gcm_ctx));
    w->mctx = (kuai_cmac_ctx *)(void *)carve(w, &off, sizeof(kuai_cmac_ctx));
    w->in = carve(w, &off, DATA + 32);
    w->out = carve(w, &off, DATA + 32);
    w->iv = carve(w, &off, 64);
    w->aad = carve(w, &off, 64);
    w->tag = carve(w, &off, 16);
    w->keybytes = carve(w, &off, 32);
    w->small_a = carve(w, &off, 64);
    w->small_b = carve(w, &off, 64);
    for (int i = 0; i < NS; i++) {
        w->sin[i] = carve(w, &off, DATA);
        w->sout[i] = carve(w, &off, DATA);
        w->siv[i] = carve(w, &off, 32);
        w->skb[i] = carve(w, &off, 32);
    }
    if (off > w->area_len) {
        fprintf(stderr, "test_misuse: area too small (%zu > %zu)\n", off, w->area_len);
        exit(2);
    }
}

static int is_gcm_stream(const api_fn *f)
{
    return (f->uses & U_CTX) != 0;
}

/* A valid call of f: fresh data, keys set up, a context initialised (and
 * for the final calls of a message a few bytes in). Returns 0 if the setup
 * itself failed (reported). */
static int ws_reset(ws *w, const api_fn *f)
{
    memset(w->area, GUARD_FILL, w->area_len);
    rng_fill(w->in, DATA + 32);
    rng_fill(w->iv, 64);
    rng_fill(w->aad, 64);
    rng_fill(w->keybytes, 32);
    size_t ks = kuai_key_size(w->c);
    if (!key_init_ok(&w->keys[K_GOOD], w->c, w->keybytes, w->backend) ||
        !key_init_ok(&w->keys[K_GOOD2], w->c, w->keybytes, w->backend))
        return 0;
    w->k = &w->keys[K_OUT];
    w->kc = &w->keys[K_GOOD];
    w->kb = w->keybytes;
    w->key_len = ks;
    w->bname = w->backend;
    /* Whole blocks of every cipher, plus a tail where any length goes. */
    w->len =
        DATA -
        ((f->uses & (U_GIV | U_CTX | U_TAIL)) || f->call == c_ctr || f->call == c_ctr_p ? 5 : 0);
    w->iv_len = 12;
    w->aad_len = 20;
    w->tag_len = 16;
    w->n = NS;
    w->pin = w->in;
    w->pout = w->out;
    w->piv = w->iv;
    w->paad = w->aad;
    w->ptag = w->tag;
    w->cx = w->ctx;
    w->mcx = w->mctx;
    w->kt = &w->keys[K_GOOD2];
    w->std = KUAI_XTS_IEEE1619;
    for (int i = 0; i < NS; i++) {
        rng_fill(w->sin[i], DATA);
        rng_fill(w->siv[i], 32);
        rng_fill(w->skb[i], 32);
        w->kp[i] = i == 1 ? &w->keys[K_GOOD2] : &w->keys[K_GOOD];
        w->inp[i] = w->sin[i];
        w->outp[i] = w->sout[i];
        w->ivp[i] = w->siv[i];
        w->kbp[i] = w->skb[i];
        w->kop[i] = &w->keys[K_OUT + i];
    }
    w->keysov = w->kop;
    w->keysv = w->kp;
    w->inv = w->inp;
    w->outv = w->outp;
    w->ivv = w->ivp;
    w->kbv = w->kbp;
    if (is_gcm_stream(f)) {
        if (!CHECK_RC(kuai_gcm_init(w->ctx, w->kc, w->iv, 12), KUAI_OK, "setup: kuai_gcm_init"))
            return 0;
        /* final: after some data (a partial block pending); aad and update:
         * right after init, so both are in order. */
        if (f->uses & U_TAG) {
            int dec = (f->uses & U_DEC) != 0;
            int rc = dec ? kuai_gcm_decrypt_update(w->ctx, w->in, w->out, 21)
                         : kuai_gcm_encrypt_update(w->ctx, w->in, w->out, 21);
            if (!CHECK_RC(rc, KUAI_OK, "setup: update before final"))
                return 0;
        }
    }
    if (f->uses & U_MAC) {
        if (!CHECK_RC(kuai_cmac_init(w->mctx, w->kc), KUAI_OK, "setup: kuai_cmac_init"))
            return 0;
        /* final: after some data (a partial block held); update: right
         * after init. */
        if ((f->uses & U_TAG) &&
            !CHECK_RC(kuai_cmac_update(w->mctx, w->in, 21), KUAI_OK, "setup: kuai_cmac_update"))
            return 0;
    }
    return 1;
}

/* ---- faults --------------------------------------------------------------- */

enum { S_NULL, S_WRAP, S_OVERLAP, S_UNINIT, S_WIPED, S_OTHER, S_LEN, S_AUTH, S_N };
static const char *const s_names[S_N] = {"NULL",  "wrap",  "overlap", "uninit",
                                         "wiped", "other", "length",  "auth"};
static unsigned long long s_count[S_N];

/* The variants of scenario s for f: how many, and apply number v to w
 * (after ws_reset). Also the errors accepted. Returns 0 when v is past the
 * last variant. */
typedef struct fault {
    const char *desc;
    int want, want2, want3;
    uint8_t *zeros; /* the one region the call must write: zeros (AUTH) */
    size_t zeros_len;
} fault;

static kuai_cipher other_cipher(kuai_cipher c, int want_other_key_len)
{
    for (size_t i = 0; i < ALL_CIPHERS_N; i++) {
        kuai_cipher d = all_ciphers[i];
        if (d == c || kuai_backends(d, NULL, 0) == 0)
            continue;
        if (want_other_key_len ? kuai_key_size(d) != kuai_key_size(c)
                               : kuai_block_size(d) != kuai_block_size(c))
            return d;
    }
    for (size_t i = 0; i < ALL_CIPHERS_N; i++)
        if (all_ciphers[i] != c && kuai_backends(all_ciphers[i], NULL, 0))
            return all_ciphers[i];
    return 0;
}

/* Another cipher with a 128-bit block and a backend, or 0. */
static kuai_cipher other_cipher16(kuai_cipher c)
{
    for (size_t i = 0; i < ALL_CIPHERS_N; i++) {
        kuai_cipher d = all_ciphers[i];
        if (d != c && kuai_block_size(d) == 16 && kuai_backends(d, NULL, 0))
            return d;
    }
    return 0;
}

static int ublock256_key(kuai_key *k, const uint8_t *kb)
{
    return kuai_backends(KUAI_UBLOCK_256_256, NULL, 0) != 0 &&
           kuai_key_init(k, KUAI_UBLOCK_256_256, kb, 32) == KUAI_OK;
}

/* Sets up *k as a key of another cipher (another block size if there is
 * one with a backend). */
static int other_key(kuai_key *k, kuai_cipher c, const uint8_t *kb, int block_size_needed)
{
    kuai_cipher d = other_cipher(c, 0);
    if (!d || (block_size_needed && kuai_block_size(d) == kuai_block_size(c)))
        return 0;
    return kuai_key_init(k, d, kb, kuai_key_size(d)) == KUAI_OK;
}

static int apply(ws *w, const api_fn *f, int s, int v, fault *ft)
{
    const unsigned u = f->uses;
    ft->want2 = ft->want3 = 0;
    ft->zeros = NULL;
    ft->zeros_len = 0;
    /* XTS checks the length (16..2^24) before the buffers. */
    const int wrap_want = u & U_TKEY ? KUAI_ERR_LENGTH : KUAI_ERR_ARG;
    int i = 0; /* variant counter */
#define VARIANT(cond, d, w1) if ((cond) && v == i++ && (ft->desc = (d), ft->want = (w1), 1))
    switch (s) {
    case S_NULL:
        VARIANT(u & (U_K | U_CTXOUT) && !(u & U_CTX), "key NULL", KUAI_ERR_ARG)
        {
            w->kc = NULL;
            return 1;
        }
        VARIANT(u & U_KOUT, "key struct NULL", KUAI_ERR_ARG)
        {
            w->k = NULL;
            return 1;
        }
        VARIANT(u & U_KB, "key bytes NULL", KUAI_ERR_ARG)
        {
            w->kb = NULL;
            return 1;
        }
        VARIANT(u & U_BNAME, "backend name NULL", KUAI_ERR_ARG)
        {
            w->bname = NULL;
            return 1;
        }
        VARIANT(u & U_IN, "in NULL", KUAI_ERR_ARG)
        {
            w->pin = NULL;
            return 1;
        }
        VARIANT(u & U_OUT, "out NULL", KUAI_ERR_ARG)
        {
            w->pout = NULL;
            return 1;
        }
        VARIANT(u & U_TKEY, "tweak key NULL", KUAI_ERR_ARG)
        {
            w->kt = NULL;
            return 1;
        }
        VARIANT(u & (U_IV | U_GIV | U_NONCE | U_TKEY), "iv/ctr/nonce/tweak NULL", KUAI_ERR_ARG)
        {
            w->piv = NULL;
            return 1;
        }
        VARIANT(u & U_AAD, "aad NULL, aad_len 20", KUAI_ERR_ARG)
        {
            w->paad = NULL;
            return 1;
        }
        VARIANT(u & U_TAG, "tag NULL", KUAI_ERR_ARG)
        {
            w->ptag = NULL;
            return 1;
        }
        VARIANT(u & (U_CTX | U_CTXOUT), "context NULL", KUAI_ERR_ARG)
        {
            w->cx = NULL;
            return 1;
        }
        VARIANT(u & (U_MAC | U_MACOUT), "CMAC context NULL", KUAI_ERR_ARG)
        {
            w->mcx = NULL;
            return 1;
        }
        VARIANT(u & U_MK, "keys array NULL", KUAI_ERR_ARG)
        {
            w->keysv = NULL;
            return 1;
        }
        VARIANT(u & U_MK, "keys[1] NULL", KUAI_ERR_ARG)
        {
            w->kp[1] = NULL;
            return 1;
        }
        VARIANT(u & U_MKOUT, "key structs array NULL", KUAI_ERR_ARG)
        {
            w->keysov = NULL;
            return 1;
        }
        VARIANT(u & U_MKOUT, "key structs[2] NULL", KUAI_ERR_ARG)
        {
            w->kop[2] = NULL;
            return 1;
        }
        VARIANT(u & (U_MKB | U_MKOUT), "key bytes array NULL", KUAI_ERR_ARG)
        {
            w->kbv = NULL;
            return 1;
        }
        VARIANT(u & (U_MKB | U_MKOUT), "key bytes[1] NULL", KUAI_ERR_ARG)
        {
            w->kbp[1] = NULL;
            return 1;
        }
        VARIANT(u & (U_MK | U_MKB), "in array NULL", KUAI_ERR_ARG)
        {
            w->inv = NULL;
            return 1;
        }
        VARIANT(u & (U_MK | U_MKB), "in[1] NULL", KUAI_ERR_ARG)
        {
            w->inp[1] = NULL;
            return 1;
        }
        VARIANT(u & (U_MK | U_MKB), "out array NULL", KUAI_ERR_ARG)
        {
            w->outv = NULL;
            return 1;
        }
        VARIANT(u & (U_MK | U_MKB), "out[2] NULL", KUAI_ERR_ARG)
        {
            w->outp[2] = NULL;
            return 1;
        }
        VARIANT(u & U_MIV, "ivs array NULL", KUAI_ERR_ARG)
        {
            w->ivv = NULL;
            return 1;
        }
        VARIANT(u & U_MIV, "ivs[1] NULL", KUAI_ERR_ARG)
        {
            w->ivp[1] = NULL;
            return 1;
        }
        return 0;
    case S_WRAP:
        /* Two small buffers 64 bytes apart and a length that wraps the
         * address space: in + len and out + len land just before in and
         * out. A check made with sums lets that through. */
        for (int d = 0; d < 2; d++) {
            uint8_t *a = d ? w->small_b : w->small_a, *b = d ? w->small_a : w->small_b;
            VARIANT(u & U_IN && u & U_OUT,
                    d ? "len SIZE_MAX-31, out before in" : "len SIZE_MAX-31, in before out",
                    wrap_want)
            {
                w->len = WRAP_LEN;
                w->pin = a;
                w->pout = b;
                return 1;
            }
            VARIANT(u & (U_MK | U_MKB),
                    d ? "len SIZE_MAX-31, stream 1 out before in"
                      : "len SIZE_MAX-31, stream 1 in before out",
                    KUAI_ERR_ARG)
            {
                w->len = WRAP_LEN;
                for (int j = 0; j < NS; j++) {
                    w->inp[j] = w->sin[j];
                    w->outp[j] = w->sin[j]; /* in place: fine but for the length */
                }
                w->inp[1] = a;
                w->outp[1] = b;
                return 1;
            }
        }
        VARIANT(u & (U_MK | U_MKB), "len SIZE_MAX-31, every stream in place", KUAI_ERR_ARG)
        {
            w->len = WRAP_LEN;
            for (int j = 0; j < NS; j++)
                w->outp[j] = w->sin[j];
            return 1;
        }
        VARIANT(u & U_IN && u & U_OUT, "len SIZE_MAX-31, in == out", wrap_want)
        {
            w->len = WRAP_LEN;
            w->pout = w->in;
            return 1;
        }
        VARIANT(u & U_IN && u & U_OUT, "len 2^63, in == out", KUAI_ERR_ARG)
        {
            w->len = (size_t)1 << (sizeof(size_t) * 8 - 1);
            w->pout = w->in;
            ft->want2 = KUAI_ERR_LENGTH;
            return 1;
        }
        VARIANT(u & U_GIV, "iv_len SIZE_MAX", KUAI_ERR_LENGTH)
        {
            w->iv_len = SIZE_MAX;
            return 1;
        }
        /* A buffer that is only read (the CMAC message, CCM's AAD, which
         * has no limit below 2^64) with a length no buffer can have: refused
         * as the buffers written are (it read past the caller's buffer into
         * a crash). GCM's AAD is over its limit first. */
        VARIANT(u & U_IN && !(u & U_OUT), "len SIZE_MAX-31, message only read", KUAI_ERR_ARG)
        {
            w->len = WRAP_LEN;
            return 1;
        }
        VARIANT(u & U_IN && !(u & U_OUT), "len 2^63, message only read", KUAI_ERR_ARG)
        {
            w->len = (size_t)1 << (sizeof(size_t) * 8 - 1);
            return 1;
        }
        VARIANT(u & U_AAD && u & U_NONCE, "aad_len SIZE_MAX-31", KUAI_ERR_ARG)
        {
            w->aad_len = WRAP_LEN;
            return 1;
        }
        VARIANT(u & U_AAD && !(u & U_NONCE), "aad_len SIZE_MAX-31", KUAI_ERR_LENGTH)
        {
            w->aad_len = WRAP_LEN;
            return 1;
        }
        /* A length that fits the mode's limit (every GCM length does
         * under a 32-bit size_t) but runs past the end of the address
         * space: refused as CCM's AAD always was (GCM's AAD and IV were
         * read there, into a crash). The fixed-size IVs of the other
         * modes have no length to be wrong. */
        VARIANT(u & U_AAD, "aad 8 bytes below the top of the address space, aad_len 20",
                KUAI_ERR_ARG)
        {
            w->paad = (const uint8_t *)(UINTPTR_MAX - 7);
            return 1;
        }
        VARIANT(u & (U_GIV | U_NONCE), "iv/nonce 4 bytes below the top of the address space",
                KUAI_ERR_ARG)
        {
            w->piv = (uint8_t *)(UINTPTR_MAX - 3);
            return 1;
        }
        VARIANT(u & U_NONCE, "nonce_len SIZE_MAX", KUAI_ERR_ARG)
        {
            w->iv_len = SIZE_MAX;
            return 1;
        }
        VARIANT(u & U_TAG, "tag_len SIZE_MAX", KUAI_ERR_ARG)
        {
            w->tag_len = SIZE_MAX;
            return 1;
        }
        VARIANT(u & (U_KB | U_MKB | U_MKOUT), "key_len SIZE_MAX", KUAI_ERR_KEY_LEN)
        {
            w->key_len = SIZE_MAX;
            return 1;
        }
        return 0;
    case S_OVERLAP:
        for (int d = 0; d < 2; d++) {
            VARIANT(u & U_IN && u & U_OUT, d ? "out one block before in" : "out one block after in",
                    KUAI_ERR_ARG)
            {
                w->pin = w->in + (d ? w->bs : 0);
                w->pout = w->in + (d ? 0 : w->bs);
                w->len = (DATA - 32) - (w->len % w->bs ? 5 : 0);
                return 1;
            }
            VARIANT(u & (U_MK | U_MKB),
                    d ? "stream 1: out one block before in" : "stream 1: out one block after in",
                    KUAI_ERR_ARG)
            {
                w->len = DATA - 32;
                w->inp[1] = w->sin[1] + (d ? w->bs : 0);
                w->outp[1] = w->sin[1] + (d ? 0 : w->bs);
                return 1;
            }
        }
        return 0;
    case S_UNINIT:
        for (int g = 0; g < 2; g++) {
            const int fill = g ? 0x5a : 0;
            VARIANT(u & U_K && !(u & U_CTX), g ? "key struct full of 0x5a" : "key struct zeroed",
                    KUAI_ERR_KEY)
            {
                memset(&w->keys[K_BAD], fill, sizeof(kuai_key));
                w->kc = &w->keys[K_BAD];
                return 1;
            }
            VARIANT(u & U_MK, g ? "keys[1] full of 0x5a" : "keys[1] zeroed", KUAI_ERR_KEY)
            {
                memset(&w->keys[K_BAD], fill, sizeof(kuai_key));
                w->kp[1] = &w->keys[K_BAD];
                return 1;
            }
            VARIANT(u & U_TKEY, g ? "tweak key full of 0x5a" : "tweak key zeroed", KUAI_ERR_KEY)
            {
                memset(&w->keys[K_BAD], fill, sizeof(kuai_key));
                w->kt = &w->keys[K_BAD];
                return 1;
            }
            VARIANT(u & U_CTX, g ? "context full of 0x5a" : "context zeroed (never initialised)",
                    KUAI_ERR_ARG)
            {
                memset(w->ctx, fill, sizeof *w->ctx);
                return 1;
            }
            VARIANT(u & U_MAC,
                    g ? "CMAC context full of 0x5a" : "CMAC context zeroed (never initialised)",
                    KUAI_ERR_ARG)
            {
                memset(w->mctx, fill, sizeof *w->mctx);
                return 1;
            }
            VARIANT(u & (U_CTX | U_MAC),
                    g ? "its key overwritten with 0x5a after init" : "its key zeroed after init",
                    KUAI_ERR_KEY)
            {
                memset(&w->keys[K_GOOD], fill, sizeof(kuai_key));
                return 1;
            }
        }
        return 0;
    case S_WIPED:
        VARIANT(u & U_K && !(u & U_CTX), "wiped key", KUAI_ERR_KEY)
        {
            kuai_key_wipe(&w->keys[K_GOOD]);
            return 1;
        }
        VARIANT(u & U_MK, "keys[2] wiped", KUAI_ERR_KEY)
        {
            kuai_key_wipe(&w->keys[K_GOOD]); /* keys[0] and [2] */
            return 1;
        }
        VARIANT(u & (U_CTX | U_MAC), "its key wiped after init", KUAI_ERR_KEY)
        {
            kuai_key_wipe(&w->keys[K_GOOD]);
            return 1;
        }
        VARIANT(u & U_TKEY, "tweak key wiped", KUAI_ERR_KEY)
        {
            kuai_key_wipe(&w->keys[K_GOOD2]);
            return 1;
        }
        VARIANT(u & U_MAC, "CMAC context wiped (kuai_cmac_wipe)", KUAI_ERR_ARG)
        {
            kuai_cmac_wipe(w->mctx);
            return 1;
        }
        VARIANT(u & U_MAC, "CMAC context used after final", KUAI_ERR_ARG)
        {
            uint8_t t[16];
            if (!CHECK_RC(kuai_cmac_final(w->mctx, t, 16), KUAI_OK, "setup: kuai_cmac_final"))
                return -1;
            return 1;
        }
        return 0;
    case S_OTHER:
        if (!f->other_want)
            return 0;
        VARIANT(u & (U_KB | U_MKB | U_MKOUT), "key length of another cipher", f->other_want)
        {
            kuai_cipher d = other_cipher(w->c, 1);
            if (!d)
                return -1;
            w->key_len = kuai_key_size(d);
            return 1;
        }
        VARIANT(u & U_MK, "keys[1] of another cipher", f->other_want)
        {
            if (!other_key(&w->keys[K_BAD], w->c, w->keybytes, 0))
                return -1;
            w->kp[1] = &w->keys[K_BAD];
            return 1;
        }
        VARIANT(u & U_K && !(u & U_CTX), "key of a 256-bit-block cipher", f->other_want)
        {
            if (kuai_backends(KUAI_UBLOCK_256_256, NULL, 0) == 0 ||
                kuai_key_init(&w->keys[K_BAD], KUAI_UBLOCK_256_256, w->keybytes, 32))
                return -1;
            w->kc = &w->keys[K_BAD];
            return 1;
        }
        /* Issue 15 defect 10: the context's key set up again as a cipher
         * with a 32-byte block after init. */
        VARIANT(u & (U_CTX | U_MAC), "its key set up again as ublock-256-256 after init",
                f->other_want)
        {
            if (kuai_backends(KUAI_UBLOCK_256_256, NULL, 0) == 0 ||
                kuai_key_init(&w->keys[K_GOOD], KUAI_UBLOCK_256_256, w->keybytes, 32))
                return -1;
            return 1;
        }
        VARIANT(u & (U_CTX | U_MAC) && u & U_IN, "as before, 5 bytes (partial block)",
                f->other_want)
        {
            if (kuai_backends(KUAI_UBLOCK_256_256, NULL, 0) == 0 ||
                kuai_key_init(&w->keys[K_GOOD], KUAI_UBLOCK_256_256, w->keybytes, 32))
                return -1;
            w->len = 5;
            return 1;
        }
        /* XTS: the tweak key must be of the data key's cipher. */
        VARIANT(u & U_TKEY, "tweak key of a 256-bit-block cipher", KUAI_ERR_MISMATCH)
        {
            if (!ublock256_key(&w->keys[K_BAD], w->keybytes))
                return -1;
            w->kt = &w->keys[K_BAD];
            return 1;
        }
        VARIANT(u & U_TKEY, "both keys of a 256-bit-block cipher", KUAI_ERR_UNSUPPORTED)
        {
            if (!ublock256_key(&w->keys[K_BAD], w->keybytes))
                return -1;
            w->kc = w->kt = &w->keys[K_BAD];
            return 1;
        }
        for (int d = 0; d < 2; d++) {
            VARIANT(u & U_TKEY,
                    d ? "data key of another 128-bit-block cipher"
                      : "tweak key of another 128-bit-block cipher",
                    KUAI_ERR_MISMATCH)
            {
                kuai_cipher o = other_cipher16(w->c);
                if (!o || kuai_key_init(&w->keys[K_BAD], o, w->keybytes, kuai_key_size(o)))
                    return -1;
                if (d)
                    w->kc = &w->keys[K_BAD];
                else
                    w->kt = &w->keys[K_BAD];
                return 1;
            }
        }
        VARIANT(u & U_TKEY, "unknown standard 2", KUAI_ERR_ARG)
        {
            w->std = (kuai_xts_standard)2;
            return 1;
        }
        return 0;
    case S_LEN:
        /* Lengths the contract refuses without wrapping: XTS 16..2^24;
         * CCM nonce 7..13, tag 4..16 even, the message within the length
         * field; CMAC tag 4..16. The long lengths come with small buffers
         * (in == out): only a refusal before any access keeps the area. */
        VARIANT(u & U_TKEY, "len 0", KUAI_ERR_LENGTH)
        {
            w->len = 0;
            return 1;
        }
        VARIANT(u & (U_MK | U_MKB | U_MKOUT), "n 0 (no streams or keys)", KUAI_ERR_ARG)
        {
            w->n = 0;
            return 1;
        }
        VARIANT(u & U_TKEY, "len 15", KUAI_ERR_LENGTH)
        {
            w->len = 15;
            return 1;
        }
        VARIANT(u & U_TKEY, "len 2^24 + 16, in == out", KUAI_ERR_LENGTH)
        {
            w->len = ((size_t)1 << 24) + 16;
            w->pout = w->in;
            return 1;
        }
        static const size_t bad_nonce[] = {0, 6, 14, 16};
        static const char *const bad_nonce_d[] = {"nonce_len 0", "nonce_len 6", "nonce_len 14",
                                                  "nonce_len 16"};
        for (size_t j = 0; j < sizeof bad_nonce / sizeof bad_nonce[0]; j++) {
            VARIANT(u & U_NONCE, bad_nonce_d[j], KUAI_ERR_ARG)
            {
                w->iv_len = bad_nonce[j];
                return 1;
            }
        }
        static const size_t bad_tag[] = {0, 2, 3, 17, 32};
        static const char *const bad_tag_d[] = {"tag_len 0", "tag_len 2", "tag_len 3", "tag_len 17",
                                                "tag_len 32"};
        for (size_t j = 0; j < sizeof bad_tag / sizeof bad_tag[0]; j++) {
            VARIANT(u & U_MTAG, bad_tag_d[j], KUAI_ERR_ARG)
            {
                w->tag_len = bad_tag[j];
                return 1;
            }
        }
        VARIANT(u & U_MTAG && u & U_NONCE, "tag_len 5 (odd)", KUAI_ERR_ARG)
        {
            w->tag_len = 5;
            return 1;
        }
        VARIANT(u & U_NONCE, "nonce_len 13, len 2^16 (over the 2-byte length field), in == out",
                KUAI_ERR_LENGTH)
        {
            w->iv_len = 13;
            w->len = (size_t)1 << 16;
            w->pout = w->in;
            return 1;
        }
        return 0;
    case S_AUTH:
        /* A tag that does not match: KUAI_ERR_AUTH and, as kuai.h says,
         * out holds zeros; nothing else is written. */
        for (int d = 0; d < 2; d++) {
            VARIANT(u & U_DEC && !(u & U_CTX), d ? "wrong tag, in place" : "wrong tag",
                    KUAI_ERR_AUTH)
            {
                /* Some backends build tables in the key on first bulk
                 * use (ublock_sched.masks: allowed on a const key); a
                 * first call builds them so that the case sees only its
                 * own writes. Then out is made non-zero again. */
                if (f->call(w) != KUAI_ERR_AUTH)
                    return -1;
                memset(w->out, GUARD_FILL, DATA + 32);
                w->tag[0] ^= 1; /* unlike anything the valid call could make */
                if (d)
                    w->pout = w->in;
                ft->zeros = w->pout;
                ft->zeros_len = w->len - (u & U_UNWRAP ? 8 : 0);
                return 1;
            }
        }
        return 0;
    }
#undef VARIANT
    return 0;
}

/* ---- running the table ---------------------------------------------------- */

static unsigned long long n_cases;

static void run_row(ws *w, const api_fn *f)
{
    const char *cn = kuai_cipher_name(w->c);
    char what[256];
    if (!f->call) {
        if (!ws_reset(w, f))
            return;
        n_cases += f->check(w);
        return;
    }
    if ((f->uses & U_GCM) && w->bs != 16)
        return; /* GCM is for 128-bit blocks; the "other" column covers 256 */

    /* The valid call: must succeed (decryption may fail authentication). */
    if (!ws_reset(w, f))
        return;
    int rc = f->call(w);
    snprintf(what, sizeof what, "%s/%s %s: valid arguments", cn, w->backend, f->name);
    if (f->uses & U_DEC && rc == KUAI_ERR_AUTH)
        rc = KUAI_OK;
    CHECK_RC(rc, KUAI_OK, what);

    for (int s = 0; s < S_N; s++) {
        for (int v = 0;; v++) {
            if (!ws_reset(w, f))
                return;
            fault ft;
            int a = apply(w, f, s, v, &ft);
            if (a == 0)
                break;
            if (a < 0)
                continue; /* not possible in this build (no such cipher) */
            memcpy(w->snap, w->area, w->area_len);
            if (ft.zeros_len)
                memset(w->snap + (ft.zeros - w->area), 0, ft.zeros_len);
            rc = f->call(w);
            snprintf(what, sizeof what, "%s/%s %s [%s] %s", cn, w->backend, f->name, s_names[s],
                     ft.desc);
            int want = rc == ft.want2 && ft.want2 ? ft.want2 : ft.want;
            CHECK_RC(rc, want, what);
            if (memcmp(w->snap, w->area, w->area_len) != 0) {
                size_t first = 0;
                while (w->snap[first] == w->area[first])
                    first++;
                CHECK(0, "%s: wrote memory (first changed byte at area offset %zu)", what, first);
            } else {
                t_passed++;
            }
            s_count[s]++;
            n_cases++;
        }
    }
}

/* Every KUAI_API function declared in include/kuai.h must have a row. */
static void table_covers_header(void)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/include/kuai.h", KUAI_SOURCE_DIR);
    FILE *fp = fopen(path, "r");
    if (!CHECK(fp != NULL, "cannot open %s", path))
        return;
    static char text[1 << 16];
    size_t n = fread(text, 1, sizeof text - 1, fp);
    fclose(fp);
    text[n] = 0;
    size_t found = 0;
    for (char *p = strstr(text, "KUAI_API "); p; p = strstr(p + 1, "KUAI_API ")) {
        char *paren = strchr(p, '(');
        char *semi = strchr(p, ';');
        char *nl = strchr(p, '\n');
        if (p - text >= 7 && strncmp(p - 7, "define ", 7) == 0)
            continue; /* the macro's own definition */
        if (!paren || (nl && nl < paren) || (semi && semi < paren))
            continue;
        char *e = paren;
        while (e > p && (e[-1] == ' '))
            e--;
        char *b = e;
        while (b > p && (isalnum((unsigned char)b[-1]) || b[-1] == '_'))
            b--;
        char name[96];
        size_t len = (size_t)(e - b) < sizeof name - 1 ? (size_t)(e - b) : sizeof name - 1;
        memcpy(name, b, len);
        name[len] = 0;
        found++;
        int in_table = 0;
        for (size_t i = 0; i < NAPI; i++)
            in_table |= strcmp(api[i].name, name) == 0;
        CHECK(in_table,
              "%s is declared KUAI_API in include/kuai.h but has no row in the misuse "
              "table (tests/test_misuse.c)",
              name);
    }
    CHECK(found == NAPI, "include/kuai.h declares %zu KUAI_API functions, the misuse table has %zu",
          found, NAPI);
}

/* ---- fork during a parallel call (issue 15 defect 10) -------------------- */

typedef struct busy {
    const kuai_key *k;
    uint8_t *buf;
    size_t len;
    atomic_int stop; /* set by the forking thread, read by busy_main */
    unsigned long calls;
} busy;

static void *busy_main(void *arg)
{
    busy *b = arg;
    while (!atomic_load(&b->stop)) {
        kuai_ecb_encrypt_parallel(b->k, b->buf, b->buf, b->len, 4);
        b->calls++;
    }
    return NULL;
}

/* Another thread inside kuai_*_parallel all the time; this one forks. Each
 * child must finish a parallel call of its own (checked against the
 * single-threaded call) within its alarm. */
static void fork_during_parallel(void)
{
    const int forks = t_short ? 10 : 20;
    const size_t len = 1u << 20;
    uint8_t kb[32];
    rng_fill(kb, sizeof kb);
    kuai_key *k = key_alloc(1);
    if (kuai_key_init(k, KUAI_AES_128, kb, 16) != KUAI_OK &&
        !key_init_ok(k, KUAI_UBLOCK_128_128, kb, "ref")) {
        free(k);
        return;
    }
    busy b = {k, xmalloc(len), len, 0, 0};
    rng_fill(b.buf, len);
    uint8_t *x = xmalloc(len), *y = xmalloc(len);
    rng_fill(x, len);
    pthread_t t;
    if (!CHECK(pthread_create(&t, NULL, busy_main, &b) == 0, "fork test: pthread_create")) {
        free(k);
        return;
    }
    int finished = 0;
    for (int i = 0; i < forks; i++) {
        /* Let the other thread get into a call. */
        struct timespec ts = {0, 2000000};
        nanosleep(&ts, NULL);
        pid_t pid = fork();
        if (pid == 0) {
            alarm(30); /* a deadlock ends here, as a failure */
            int ok = kuai_ecb_encrypt_parallel(k, x, y, len, 4) == KUAI_OK &&
                     kuai_ecb_encrypt(k, x, x, len) == KUAI_OK && memcmp(x, y, len) == 0;
            _exit(ok ? 0 : 1);
        }
        if (!CHECK(pid > 0, "fork failed"))
            break;
        int st = 0;
        waitpid(pid, &st, 0);
        finished += WIFEXITED(st) && WEXITSTATUS(st) == 0;
    }
    atomic_store(&b.stop, 1);
    pthread_join(t, NULL);
    CHECK(finished == forks,
          "fork while another thread is in kuai_ecb_encrypt_parallel: %d of %d children finished "
          "a parallel call (deadlock or wrong output)",
          finished, forks);
    t_note("fork during parallel: %d of %d children finished, %lu parallel calls meanwhile",
           finished, forks, b.calls);
    free(b.buf);
    free(x);
    free(y);
    kuai_key_wipe(k);
    free(k);
}

/* ---- fork while the registry is being built ----------------------------- */

void kuai_registry_reload(void); /* src/registry.c: internal, not thread-safe */

/* src/registry.c calls the function this points to (a hidden variable of
 * the internal archive; registry_building below, once armed) inside the
 * registry's build. Armed, it holds the build in the process that armed it
 * until that process has forked; in the child it returns at once. */
extern void (*kuai_test_registry_building)(void);
static pthread_mutex_t rb_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t rb_cv = PTHREAD_COND_INITIALIZER;
static atomic_long rb_pid;   /* armed in this process (read without rb_lock: the child) */
static int rb_in, rb_forked; /* under rb_lock */

static void registry_building(void)
{
    if (atomic_load(&rb_pid) != (long)getpid())
        return;
    pthread_mutex_lock(&rb_lock);
    rb_in = 1;
    pthread_cond_broadcast(&rb_cv);
    while (!rb_forked)
        pthread_cond_wait(&rb_cv, &rb_lock);
    pthread_mutex_unlock(&rb_lock);
}

static void *first_key_main(void *arg)
{
    uint8_t kb[16] = {1};
    kuai_key k;
    *(int *)arg = kuai_key_init(&k, KUAI_AES_128, kb, sizeof kb);
    kuai_key_wipe(&k);
    return NULL;
}

/* Another thread is inside the process's first key setup (the registry
 * build) when this one forks: the child's first key setup must not wait
 * for a build whose thread does not exist there. */
static void fork_during_registry_build(void)
{
    kuai_registry_reload(); /* no other thread is setting up keys now */
    pthread_mutex_lock(&rb_lock);
    rb_in = rb_forked = 0;
    pthread_mutex_unlock(&rb_lock);
    atomic_store(&rb_pid, (long)getpid());
    kuai_test_registry_building = registry_building;
    int rc = -1;
    pthread_t t;
    if (!CHECK(pthread_create(&t, NULL, first_key_main, &rc) == 0, "registry fork: pthread_create"))
        return;
    pthread_mutex_lock(&rb_lock);
    while (!rb_in)
        pthread_cond_wait(&rb_cv, &rb_lock);
    pthread_mutex_unlock(&rb_lock);
    pid_t pid = fork();
    if (pid == 0) {
        alarm(10); /* a child waiting for ever ends here, as a failure */
        uint8_t kb[16] = {2}, x[16] = {0};
        kuai_key k;
        int ok = kuai_key_init(&k, KUAI_AES_128, kb, sizeof kb) == KUAI_OK &&
                 kuai_ecb_encrypt(&k, x, x, sizeof x) == KUAI_OK;
        _exit(ok ? 0 : 1);
    }
    pthread_mutex_lock(&rb_lock);
    rb_forked = 1;
    atomic_store(&rb_pid, 0);
    pthread_cond_broadcast(&rb_cv);
    pthread_mutex_unlock(&rb_lock);
    pthread_join(t, NULL);
    CHECK_RC(rc, KUAI_OK, "registry fork: the parent's first key setup");
    if (!CHECK(pid > 0, "registry fork: fork failed"))
        return;
    int st = 0;
    waitpid(pid, &st, 0);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0,
          "fork while another thread builds the registry: the child's first key setup %s",
          WIFSIGNALED(st) && WTERMSIG(st) == SIGALRM ? "never returned" : "failed");
}

void test_misuse(void)
{
    group_begin("api misuse table");
    table_covers_header();
    ws w;
    memset(&w, 0, sizeof w);
    ws_alloc(&w);
    n_cases = 0;
    memset(s_count, 0, sizeof s_count);
    for (size_t ci = 0; ci < ALL_CIPHERS_N; ci++) {
        kuai_cipher c = all_ciphers[ci];
        const char *be[MAX_BACKENDS];
        size_t nbe = test_backends(c, be, MAX_BACKENDS);
        for (size_t b = 0; b < nbe; b++) {
            w.c = c;
            w.backend = be[b];
            w.bs = kuai_block_size(c);
            for (size_t i = 0; i < NAPI; i++)
                run_row(&w, &api[i]);
            kuai_key_wipe(&w.keys[K_GOOD]);
            kuai_key_wipe(&w.keys[K_GOOD2]);
            kuai_key_wipe(&w.keys[K_BAD]);
            for (int i = 0; i < NS; i++)
                kuai_key_wipe(&w.keys[K_OUT + i]);
        }
    }
    printf("api misuse table: %zu functions, %llu cases (NULL %llu, wrap %llu, overlap %llu, "
           "uninit %llu, wiped %llu, other %llu, length %llu, auth %llu; with the no-error-code "
           "functions' checks)\n",
           NAPI, n_cases, s_count[S_NULL], s_count[S_WRAP], s_count[S_OVERLAP], s_count[S_UNINIT],
           s_count[S_WIPED], s_count[S_OTHER], s_count[S_LEN], s_count[S_AUTH]);
    free(w.area_alloc);
    free(w.snap);
    group_end();

    group_begin("fork during parallel");
    fork_during_parallel();
    group_end();

    group_begin("fork during the registry build");
    fork_during_registry_build();
    group_end();
}
