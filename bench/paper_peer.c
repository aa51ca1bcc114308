/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The 2024 uBlock AVX2 paper's own code beside kuai in one process
 * (scripts/paper-side-by-side builds it with bench/paper_peer_wrap.cpp
 * against a checkout of that code): the encryption rows of the paper's
 * matrix, the paper's call and kuai's in turn, lowest TSC cycles per call
 * (per byte on the long rows) over many batches, and the ratio paper /
 * kuai (above 1: kuai is faster). A
 * same-run peer, where kuai_bench --mode paper can only print the figures
 * issue 14 measured on another machine. Every output of both sides is
 * checked against kuai_ecb_encrypt of the same block first.
 *
 * usage: paper_peer [ALTERNATIONS]   (x86-64 with AVX2: the paper's code)
 */
#include "bench_internal.h" /* calibrate_tsc, cpu_model (bench_timing.c) */
#include "kuai.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <x86intrin.h>

typedef unsigned char u8;
#define PAPER(m)                                                                                   \
    void paper_short_##m(u8 *in, u8 *out, u8 *key);                                                \
    void paper_setup_##m(u8 *key);                                                                 \
    void paper_enc_##m(u8 *in, u8 *out);                                                           \
    void paper_mk_short_##m(u8 *in, u8 *out, u8 *keys);                                            \
    void paper_mk_setup_##m(u8 *keys);                                                             \
    void paper_mk_enc_##m(u8 *in, u8 *out);
PAPER(128_128)
PAPER(128_256)
PAPER(256_256)
void paper_cbc_128_128(u8 **in, u8 **out, int len, u8 *keys);
void paper_cbc_128_256(u8 **in, u8 **out, int len, u8 *keys);
void paper_cbc_256_256(u8 *in, u8 *out, int len, u8 *keys);
void paper_ecb_128_128(u8 **in, u8 **out, int len, u8 *key);
void paper_ecb_128_256(u8 **in, u8 **out, int len, u8 *key);
void paper_ecb_256_256(u8 *in, u8 *out, int len, u8 *key2);

typedef struct member {
    const char *name;
    kuai_cipher c;
    size_t bs, klen, n; /* block and key bytes; blocks a call = keys of the keys rows */
    void (*p_short)(u8 *, u8 *, u8 *), (*p_setup)(u8 *), (*p_enc)(u8 *, u8 *);
    void (*p_mk_short)(u8 *, u8 *, u8 *), (*p_mk_setup)(u8 *), (*p_mk_enc)(u8 *, u8 *);
    /* CBC encryption of n chains: separate buffers, or (uBlock-256/256)
     * interleaved in one, 32 bytes of each chain in turn */
    void (*p_cbc)(u8 **, u8 **, int, u8 *), (*p_cbc_il)(u8 *, u8 *, int, u8 *);
    size_t chain; /* bytes a chain: the paper's own long message */
    /* its long ECB message under one key: 4 buffers, or one (256/256) */
    void (*p_ecb)(u8 **, u8 **, int, u8 *), (*p_ecb1)(u8 *, u8 *, int, u8 *);
} member;

#define PAPER_CALLS(m)                                                                             \
    .p_short = paper_short_##m, .p_setup = paper_setup_##m, .p_enc = paper_enc_##m,                \
    .p_mk_short = paper_mk_short_##m, .p_mk_setup = paper_mk_setup_##m,                            \
    .p_mk_enc = paper_mk_enc_##m
static const member members[] = {
    {"ublock-128-128", KUAI_UBLOCK_128_128, 16, 16, 4, PAPER_CALLS(128_128),
     .p_cbc = paper_cbc_128_128, .chain = 262144, .p_ecb = paper_ecb_128_128},
    {"ublock-128-256", KUAI_UBLOCK_128_256, 16, 32, 4, PAPER_CALLS(128_256),
     .p_cbc = paper_cbc_128_256, .chain = 262144, .p_ecb = paper_ecb_128_256},
    {"ublock-256-256", KUAI_UBLOCK_256_256, 32, 32, 2, PAPER_CALLS(256_256),
     .p_cbc_il = paper_cbc_256_256, .chain = 131072, .p_ecb1 = paper_ecb_256_256}};

enum { BATCH = 1000, CBC_BATCH = 2, MAX_CHAIN = 262144 };

/* what the rows' calls work on: one member at a time */
static const member *m;
static _Alignas(64) u8 key[64], key2[64], keys[4 * 32], in[4 * 32], out[4 * 32];
static const u8 *keyp[4], *inp[4];
static u8 *outp[4];
static kuai_key k1, ks[4];
static kuai_key *ksw[4];
static const kuai_key *ksr[4];
/* CBC: kuai's chains, the paper's (or its interleaved buffer), the IVs */
static u8 *cin[4], *cout[4], *pout[4], *il_in, *il_out, ivs[4][32];
static u8 *ivp[4];

static void ok(int rc, const char *what)
{
    if (rc != KUAI_OK) {
        fprintf(stderr, "paper_peer: %s: %s\n", what, kuai_strerror(rc));
        exit(1);
    }
}

/* the one-key rows' key as the paper's call takes it (uBlock-256/256: twice) */
static u8 *pkey(void)
{
    return m->bs == 32 ? key2 : key;
}
static void p_short(void)
{
    m->p_short(in, out, pkey());
}
static void p_setup(void)
{
    m->p_setup(pkey());
}
static void p_enc(void)
{
    m->p_enc(in, out);
}
static void p_mk_short(void)
{
    m->p_mk_short(in, out, keys);
}
static void p_mk_setup(void)
{
    m->p_mk_setup(keys);
}
static void p_mk_enc(void)
{
    m->p_mk_enc(in, out);
}
static void k_short(void)
{
    kuai_key_init(&k1, m->c, key, m->klen);
    kuai_ecb_encrypt(&k1, in, out, m->n * m->bs);
}
static void k_oneshot(void)
{
    kuai_ecb_encrypt_oneshot(m->c, key, m->klen, in, out, m->n * m->bs);
}
static void k_setup(void)
{
    kuai_key_init(&k1, m->c, key, m->klen);
}
static void k_enc(void)
{
    kuai_ecb_encrypt(&k1, in, out, m->n * m->bs);
}
static void k_mk_setup(void)
{
    kuai_key_init_multi(ksw, m->c, keyp, m->klen, m->n);
}
static void k_mk_enc(void)
{
    kuai_ecb_encrypt_multi(ksr, inp, outp, m->n, m->bs);
}
static void k_mk_short(void)
{
    k_mk_setup();
    k_mk_enc();
}
static void k_mk_short_1by1(void)
{
    for (size_t j = 0; j < m->n; j++)
        kuai_key_init(ksw[j], m->c, keyp[j], m->klen);
    k_mk_enc();
}
static void k_mk_each(void)
{
    for (size_t j = 0; j < m->n; j++) {
        kuai_key_init(ksw[j], m->c, keyp[j], m->klen);
        kuai_ecb_encrypt(ksr[j], inp[j], outp[j], m->bs);
    }
}
static void k_mk_oneshot(void)
{
    kuai_ecb_encrypt_oneshot_multi(m->c, keyp, m->klen, inp, outp, m->n, m->bs);
}

static void p_cbc(void)
{
    if (m->p_cbc)
        m->p_cbc(cin, pout, (int)m->chain, keys);
    else
        m->p_cbc_il(il_in, il_out, (int)(m->n * m->chain), keys);
}
static void k_cbc(void)
{
    memset(ivs, 0, sizeof ivs);
    k_mk_setup();
    kuai_cbc_encrypt_multi(ksr, ivp, (const u8 *const *)cin, cout, m->n, m->chain);
}

/* the long ECB row: MAX_CHAIN bytes a buffer, 4 buffers (1 for 256/256) */
static size_t ecb_buffers(void)
{
    return m->p_ecb ? 4 : 1;
}
static void p_ecb(void)
{
    if (m->p_ecb)
        m->p_ecb(cin, pout, MAX_CHAIN, pkey());
    else
        m->p_ecb1(cin[0], pout[0], MAX_CHAIN, pkey());
}
static void k_ecb(void)
{
    kuai_key_init(&k1, m->c, key, m->klen);
    for (size_t j = 0; j < ecb_buffers(); j++)
        kuai_ecb_encrypt(&k1, cin[j], cout[j], MAX_CHAIN);
}

typedef void (*call_fn)(void);

/* out must hold block j of in encrypted under key j (mk) or key */
static void check(call_fn f, int mk, const char *what)
{
    memset(out, 0, sizeof out);
    f();
    for (size_t j = 0; j < m->n; j++) {
        kuai_key t;
        u8 want[32];
        ok(kuai_key_init(&t, m->c, mk ? keys + j * m->klen : key, m->klen), "kuai_key_init");
        ok(kuai_ecb_encrypt(&t, in + j * m->bs, want, m->bs), "kuai_ecb_encrypt");
        if (memcmp(want, out + j * m->bs, m->bs) != 0) {
            fprintf(stderr, "paper_peer: %s %s: block %zu differs from kuai_ecb_encrypt\n", m->name,
                    what, j);
            exit(1);
        }
    }
}

/* every chain of both sides against kuai_cbc_encrypt of that chain alone */
static void check_cbc(void)
{
    memset(pout[0], 0, MAX_CHAIN);
    p_cbc();
    k_cbc();
    u8 *want = malloc(m->chain);
    if (!want)
        exit(1);
    for (size_t j = 0; j < m->n; j++) {
        kuai_key t;
        u8 iv[32] = {0};
        ok(kuai_key_init(&t, m->c, keys + j * m->klen, m->klen), "kuai_key_init");
        ok(kuai_cbc_encrypt(&t, iv, cin[j], want, m->chain), "kuai_cbc_encrypt");
        int bad = memcmp(want, cout[j], m->chain) != 0;
        for (size_t b = 0; b < m->chain; b += m->bs)
            bad |= memcmp(want + b, m->p_cbc ? pout[j] + b : il_out + b * m->n + j * m->bs,
                          m->bs) != 0;
        if (bad) {
            fprintf(stderr, "paper_peer: %s CBC chain %zu differs from kuai_cbc_encrypt\n", m->name,
                    j);
            exit(1);
        }
    }
    free(want);
}

static void check_ecb(void)
{
    p_ecb();
    k_ecb();
    for (size_t j = 0; j < ecb_buffers(); j++)
        if (memcmp(pout[j], cout[j], MAX_CHAIN) != 0) {
            fprintf(stderr, "paper_peer: %s long ECB buffer %zu: the two differ\n", m->name, j);
            exit(1);
        }
    /* and kuai's own against its single-block call, on a sample */
    check(k_short, 0, "kuai_key_init + kuai_ecb_encrypt");
}

static double batch(call_fn f, int calls)
{
    for (int i = 0; i < 1 + calls / 50; i++)
        f();
    uint64_t t0 = __rdtsc();
    for (int i = 0; i < calls; i++)
        f();
    return (double)(__rdtsc() - t0) / calls;
}

/* the paper's call, then kuai's forms (NULL-ended), in turn; cycles per
 * call, or per byte where bytes is not 0 */
static void pair_row(int alternations, const char *what, call_fn paper, const char *const *names,
                     const call_fn *kuai, size_t bytes)
{
    enum { MAX_FORMS = 4 }; /* kuai's forms a row may time */
    double best[1 + MAX_FORMS] = {1e30, 1e30, 1e30, 1e30, 1e30};
    int nk = 0;
    while (kuai[nk])
        nk++;
    if (nk > MAX_FORMS) {
        fprintf(stderr, "paper_peer: %s: more than %d forms\n", what, MAX_FORMS);
        exit(2);
    }
    for (int a = 0; a < alternations; a++)
        for (int i = 0; i <= nk; i++) {
            double t = batch(i ? kuai[i - 1] : paper, bytes ? CBC_BATCH : BATCH);
            best[i] = t < best[i] ? t : best[i];
        }
    const double per = bytes ? (double)bytes : 1;
    printf("%-15s %-22s %7.*f", m->name, what, bytes ? 2 : 0, best[0] / per);
    for (int i = 1; i <= nk; i++)
        printf("   %-19s %6.*f %5.2fx", names[i - 1], bytes ? 2 : 0, best[i] / per,
               best[0] / best[i]);
    printf("\n");
}

int main(int argc, char **argv)
{
    const int alternations = argc > 1 ? atoi(argv[1]) : 21;
    if (alternations < 1) {
        fprintf(stderr, "usage: paper_peer [ALTERNATIONS >= 1]\n");
        return 2;
    }
    srand(14);
    for (size_t i = 0; i < sizeof keys; i++) {
        keys[i] = (u8)rand();
        in[i] = (u8)rand();
    }
    for (int j = 0; j < 4; j++) {
        ksw[j] = &ks[j];
        ksr[j] = &ks[j];
        ivp[j] = ivs[j];
        cin[j] = aligned_alloc(64, MAX_CHAIN);
        cout[j] = aligned_alloc(64, MAX_CHAIN);
        pout[j] = aligned_alloc(64, MAX_CHAIN);
        if (!cin[j] || !cout[j] || !pout[j])
            return 1;
        for (size_t i = 0; i < MAX_CHAIN; i++)
            cin[j][i] = (u8)rand();
    }
    il_in = aligned_alloc(64, 2 * MAX_CHAIN);
    il_out = aligned_alloc(64, 2 * MAX_CHAIN);
    if (!il_in || !il_out)
        return 1;
    char cpu[128];
    cpu_model(cpu, sizeof cpu);
    printf("the 2024 paper's AVX2 code (optimized_codes, f2b5fc7) and kuai in one process: %s, "
           "TSC %.3f GHz\n"
           "TSC cycles per call, lowest of %d alternations of %d calls each; ratio = paper / "
           "kuai (above 1: kuai takes fewer)\n\n",
           cpu, calibrate_tsc() / 1e9, alternations, BATCH);
    printf("%-15s %-22s %7s   %s\n", "member", "row", "paper", "kuai: call, cycles, ratio");
    for (size_t i = 0; i < sizeof members / sizeof members[0]; i++) {
        m = &members[i];
        memcpy(key, keys, m->klen);
        memcpy(key2, key, m->klen);
        memcpy(key2 + m->klen, key, m->klen);
        for (size_t j = 0; j < 4; j++) {
            keyp[j] = keys + j * m->klen;
            inp[j] = in + j * m->bs;
            outp[j] = out + j * m->bs;
        }
        /* the schedules the rows with keys set up outside read */
        ok(kuai_key_init(&k1, m->c, key, m->klen), "kuai_key_init");
        ok(kuai_key_init_multi(ksw, m->c, keyp, m->klen, m->n), "kuai_key_init_multi");
        check(p_short, 0, "paper short call");
        check(k_short, 0, "kuai_key_init + kuai_ecb_encrypt");
        check(k_oneshot, 0, "kuai_ecb_encrypt_oneshot");
        check(p_mk_short, 1, "paper multi-key short call");
        check(k_mk_short, 1, "kuai_key_init_multi + kuai_ecb_encrypt_multi");
        check(k_mk_oneshot, 1, "kuai_ecb_encrypt_oneshot_multi");
        check(k_mk_each, 1, "kuai_key_init + kuai_ecb_encrypt, key by key");
        p_setup();
        check(p_enc, 0, "paper blocks, key set up");
        p_mk_setup();
        check(p_mk_enc, 1, "paper multi-key blocks, keys set up");
        check(k_enc, 0, "kuai_ecb_encrypt");
        check(k_mk_enc, 1, "kuai_ecb_encrypt_multi");

        char keys_row[32];
        snprintf(keys_row, sizeof keys_row, "short enc, %zu keys", m->n);
        pair_row(alternations, "short enc, 1 key", p_short,
                 (const char *const[]){"init + ecb", "oneshot"},
                 (const call_fn[]){k_short, k_oneshot, NULL}, 0);
        pair_row(alternations, keys_row, p_mk_short,
                 (const char *const[]){"init_multi + multi", "init x n + multi", "oneshot_multi",
                                       "(init + ecb) x n"},
                 (const call_fn[]){k_mk_short, k_mk_short_1by1, k_mk_oneshot, k_mk_each, NULL}, 0);
        ok(kuai_key_init(&k1, m->c, key, m->klen), "kuai_key_init");
        ok(kuai_key_init_multi(ksw, m->c, keyp, m->klen, m->n), "kuai_key_init_multi");
        p_setup();
        pair_row(alternations, "key outside, 1 key", p_enc, (const char *const[]){"ecb"},
                 (const call_fn[]){k_enc, NULL}, 0);
        p_mk_setup();
        pair_row(alternations, "keys outside", p_mk_enc, (const char *const[]){"multi"},
                 (const call_fn[]){k_mk_enc, NULL}, 0);
        pair_row(alternations, "key setup alone", p_setup, (const char *const[]){"init"},
                 (const call_fn[]){k_setup, NULL}, 0);
        pair_row(alternations, "keys setup alone", p_mk_setup, (const char *const[]){"init_multi"},
                 (const call_fn[]){k_mk_setup, NULL}, 0);
        check_ecb();
        pair_row(alternations, "long ECB enc, 1 key (c/B)", p_ecb,
                 (const char *const[]){"init + ecb"}, (const call_fn[]){k_ecb, NULL},
                 ecb_buffers() * MAX_CHAIN);
        /* uBlock-256/256's chains interleaved for the paper: the same bytes */
        for (size_t b = 0; b < 2 * 131072 / 32 && m->p_cbc_il; b++)
            memcpy(il_in + 32 * b, cin[b % 2] + 32 * (b / 2), 32);
        check_cbc();
        char cbc_row[40];
        snprintf(cbc_row, sizeof cbc_row, "CBC enc, %zu chains (c/B)", m->n);
        pair_row(alternations, cbc_row, p_cbc, (const char *const[]){"init_multi + cbc_multi"},
                 (const call_fn[]){k_cbc, NULL}, m->n * m->chain);
    }
    return 0;
}
