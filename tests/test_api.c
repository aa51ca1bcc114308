/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The public API's small print: helpers, every error path (and that an
 * error writes nothing), key wipe, and the KUAI_BACKEND variable.
 */
#include "test_util.h"

#include "internal.h" /* kuai_impls: "not built" vs "not usable on this CPU"; kuai_registry_reload */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__)
#include <cpuid.h>
#endif

/* ---- helpers ------------------------------------------------------------- */

/* Sizes and names from the cipher definitions (uBlock-n/k: n-bit block,
 * k-bit key; SM4 and AES: 128-bit block) and the header's naming scheme. */
static const struct {
    kuai_cipher c;
    size_t block, key;
    const char *name;
} cipher_facts[ALL_CIPHERS_N] = {
    {KUAI_UBLOCK_128_128, 16, 16, "ublock-128-128"},
    {KUAI_UBLOCK_128_256, 16, 32, "ublock-128-256"},
    {KUAI_UBLOCK_256_256, 32, 32, "ublock-256-256"},
    {KUAI_SM4, 16, 16, "sm4"},
    {KUAI_AES_128, 16, 16, "aes-128"},
    {KUAI_AES_192, 16, 24, "aes-192"},
    {KUAI_AES_256, 16, 32, "aes-256"},
};

static int all_zero(const void *p, size_t n)
{
    const uint8_t *b = p;
    for (size_t i = 0; i < n; i++)
        if (b[i])
            return 0;
    return 1;
}

static void helpers_backends(kuai_cipher c)
{
    const char *cn = kuai_cipher_name(c);
    /* A pointer kuai_backends never writes: tells written slots from not. */
    static const char untouched[] = "untouched";
    const char *names[MAX_BACKENDS + 1];
    for (size_t i = 0; i <= MAX_BACKENDS; i++)
        names[i] = untouched;
    size_t total = kuai_backends(c, NULL, 0);
    size_t got = kuai_backends(c, names, MAX_BACKENDS);
    CHECK(got == total, "%s: kuai_backends count %zu with names, %zu without", cn, got, total);
    if (!CHECK(total <= MAX_BACKENDS, "%s: %zu backends, test handles %d", cn, total, MAX_BACKENDS))
        return;
    CHECK(names[total] == untouched, "%s: kuai_backends wrote past the count", cn);
    if (is_ublock(c)) {
        /* ref is portable: always built, always usable, and (being the
         * slowest) listed last under "best first". */
        CHECK(total >= 1 && strcmp(names[total - 1], "ref") == 0,
              "%s: \"ref\" is not the last of %zu usable backends", cn, total);
    }
    for (size_t i = 0; i < total; i++) {
        if (!CHECK(names[i] && names[i] != untouched && *names[i], "%s: backend %zu has no name",
                   cn, i))
            continue;
        for (size_t j = 0; j < i; j++)
            CHECK(strcmp(names[i], names[j]) != 0, "%s: backend \"%s\" listed twice", cn, names[i]);
    }
    if (total >= 2) {
        const char *one[2] = {untouched, untouched};
        size_t r = kuai_backends(c, one, 1);
        CHECK(r == total && one[0] != untouched && strcmp(one[0], names[0]) == 0 &&
                  one[1] == untouched,
              "%s: kuai_backends(max=1) returned %zu, must write only names[0] and return %zu", cn,
              r, total);
    }

    /* Every listed backend: setup, name round trip, wipe. */
    for (size_t i = 0; i < total; i++) {
        kuai_key k, k2;
        uint8_t key[64], blk[KUAI_MAX_BLOCK] = {0}, ct1[KUAI_MAX_BLOCK], ct2[KUAI_MAX_BLOCK];
        const size_t bs = kuai_block_size(c);
        rng_fill(key, sizeof key);
        if (!key_init_ok(&k, c, key, names[i]))
            continue;
        const char *kb = kuai_key_backend(&k);
        CHECK(kb && strcmp(kb, names[i]) == 0, "%s: kuai_key_backend = \"%s\", set up with \"%s\"",
              cn, kb ? kb : "(null)", names[i]);
        CHECK_RC(kuai_ecb_encrypt(&k, blk, ct1, bs), KUAI_OK, "encrypt before wipe");

        /* Setting up another key must not disturb this one (no shared
         * mutable state between keys). */
        uint8_t other[64];
        rng_fill(other, sizeof other);
        key_init_ok(&k2, c, other, names[i]);
        CHECK_RC(kuai_ecb_encrypt(&k, blk, ct2, bs), KUAI_OK, "encrypt after another init");
        CHECK(memcmp(ct1, ct2, bs) == 0,
              "%s/%s: a second key's setup changed the first key's output", cn, names[i]);
        kuai_key_wipe(&k2);

        /* The schedule holds key material before the wipe, nothing after. */
        CHECK(!all_zero(k.priv_sched, sizeof k.priv_sched),
              "%s/%s: schedule is all zero right after setup", cn, names[i]);
        kuai_key_wipe(&k);
        size_t nz = 0;
        const unsigned char *sched = (const unsigned char *)k.priv_sched;
        for (size_t j = 0; j < sizeof k.priv_sched; j++)
            nz += sched[j] != 0;
        CHECK(nz == 0, "%s/%s: %zu schedule bytes non-zero after kuai_key_wipe", cn, names[i], nz);
        CHECK(kuai_key_backend(&k) == NULL, "%s/%s: kuai_key_backend of a wiped key is \"%s\"", cn,
              names[i], kuai_key_backend(&k));

        /* A wiped key can be set up again and works as before. */
        if (key_init_ok(&k, c, key, names[i])) {
            CHECK_RC(kuai_ecb_encrypt(&k, blk, ct2, bs), KUAI_OK, "encrypt after re-init");
            CHECK(memcmp(ct1, ct2, bs) == 0, "%s/%s: re-init after wipe gives another output", cn,
                  names[i]);
        }
        kuai_key_wipe(&k);
    }
}

/* kuai_ciphers and kuai_cipher_by_name against the table the tests are
 * built from (all_ciphers) and cipher_facts' names. */
static void helpers_cipher_list(void)
{
    kuai_cipher list[ALL_CIPHERS_N + 1];
    for (size_t i = 0; i <= ALL_CIPHERS_N; i++)
        list[i] = (kuai_cipher)0x5a;
    size_t n = kuai_ciphers(list, ALL_CIPHERS_N);
    CHECK(n == ALL_CIPHERS_N, "kuai_ciphers: %zu ciphers, the table has %d", n, ALL_CIPHERS_N);
    CHECK(kuai_ciphers(NULL, 0) == n && kuai_ciphers(NULL, 5) == n,
          "kuai_ciphers without a list gives another count");
    CHECK(list[ALL_CIPHERS_N] == (kuai_cipher)0x5a, "kuai_ciphers wrote past max");
    for (size_t i = 0; i < ALL_CIPHERS_N && i < n; i++)
        CHECK(list[i] == all_ciphers[i] && list[i] == cipher_facts[i].c,
              "kuai_ciphers[%zu] = %d, want %d (enum order)", i, (int)list[i],
              (int)cipher_facts[i].c);
    kuai_cipher one[2] = {(kuai_cipher)0x5a, (kuai_cipher)0x5a};
    CHECK(kuai_ciphers(one, 1) == n && one[0] == all_ciphers[0] && one[1] == (kuai_cipher)0x5a,
          "kuai_ciphers(max=1) must write only list[0]");

    for (size_t i = 0; i < ALL_CIPHERS_N; i++) {
        const char *name = cipher_facts[i].name;
        char upper[32], mixed[32];
        if (!CHECK(name, "cipher_facts has no row %zu: add the new cipher's facts", i))
            continue;
        size_t len = strlen(name);
        if (!CHECK(len < sizeof upper, "%s: name too long for the test", name))
            continue;
        for (size_t j = 0; j <= len; j++) {
            upper[j] = (char)(name[j] >= 'a' && name[j] <= 'z' ? name[j] - 32 : name[j]);
            mixed[j] = j % 2 ? upper[j] : name[j];
        }
        CHECK(kuai_cipher_by_name(name) == cipher_facts[i].c, "kuai_cipher_by_name(\"%s\") = %d",
              name, (int)kuai_cipher_by_name(name));
        CHECK(kuai_cipher_by_name(upper) == cipher_facts[i].c, "kuai_cipher_by_name(\"%s\") = %d",
              upper, (int)kuai_cipher_by_name(upper));
        CHECK(kuai_cipher_by_name(mixed) == cipher_facts[i].c, "kuai_cipher_by_name(\"%s\") = %d",
              mixed, (int)kuai_cipher_by_name(mixed));
        /* a prefix and an extension of the name are other names */
        char cut[32], longer[40];
        memcpy(cut, name, len - 1);
        cut[len - 1] = 0;
        snprintf(longer, sizeof longer, "%s ", name);
        CHECK(kuai_cipher_by_name(cut) == 0 && kuai_cipher_by_name(longer) == 0,
              "kuai_cipher_by_name matched \"%s\" or \"%s \"", cut, name);
    }
    static const char *const unknown[] = {"",        "aes",    "aes128",      "AES_128",
                                          "sm4-128", "ublock", "ublock128128"};
    for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++)
        CHECK(kuai_cipher_by_name(unknown[i]) == 0, "kuai_cipher_by_name(\"%s\") = %d, want 0",
              unknown[i], (int)kuai_cipher_by_name(unknown[i]));
}

/* kuai_cpu_ymm_split, kuai_cpu_zmm_split, kuai_cpu_zen and kuai_cpu_zen5
 * (src/cpu.h) against /proc/cpuinfo's vendor, family and model, read here
 * independently of CPUID: AMD family 23 below model 48 (Zen 1, Zen+) and
 * Hygon family 24 split 256-bit operations, AMD family 25 (Zen 3 and 4)
 * 512-bit ones; AMD from family 25 on (Zen 3, 4, 5) is a Zen, from family
 * 26 on (Zen 5) a Zen 5. In make test-shim's build all four are 0 (an
 * emulated AVX-512 CPU). */
static void helpers_ymm_split(void)
{
#if defined(__x86_64__) && defined(__linux__)
    if (!(kuai_cpu_features() & KUAI_CPU_SSSE3))
        return; /* a portable-only build detects nothing */
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return;
    char line[512], vendor[64] = "";
    int family = -1, model = -1;
    while (fgets(line, sizeof line, f) && (family < 0 || model < 0 || !*vendor)) {
        if (!*vendor)
            (void)sscanf(line, "vendor_id : %63s", vendor);
        if (family < 0)
            (void)sscanf(line, "cpu family : %d", &family);
        if (model < 0)
            (void)sscanf(line, "model : %d", &model);
    }
    fclose(f);
    if (!*vendor || family < 0 || model < 0)
        return;
    /* Under an emulator (make test-cross runs this build in qemu-x86_64
     * with another CPU model) CPUID is not /proc/cpuinfo's host: skip. */
    unsigned a, b, c, d;
    char cv[13] = "";
    if (__get_cpuid(0, &a, &b, &c, &d)) {
        memcpy(cv, &b, 4);
        memcpy(cv + 4, &d, 4);
        memcpy(cv + 8, &c, 4);
    }
    if (!__get_cpuid(1, &a, &b, &c, &d) || strcmp(cv, vendor) != 0)
        return;
    unsigned cf = (a >> 8) & 0xf, cm = (a >> 4) & 0xf;
    if (cf == 0xf) {
        cf += (a >> 20) & 0xff;
        cm |= ((a >> 16) & 0xf) << 4;
    }
    if ((int)cf != family || (int)cm != model)
        return;
#if KUAI_ISA_SHIM
    /* make test-shim's build: the emulated CPU splits neither, and is no Zen */
    const int want = 0, want_z = 0, want_zen = 0, want_zen5 = 0;
#else
    const int want = (strcmp(vendor, "AuthenticAMD") == 0 && family == 23 && model < 48) ||
                     (strcmp(vendor, "HygonGenuine") == 0 && family == 24);
    const int want_z = strcmp(vendor, "AuthenticAMD") == 0 && family == 25;
    const int want_zen = strcmp(vendor, "AuthenticAMD") == 0 && family >= 25;
    const int want_zen5 = strcmp(vendor, "AuthenticAMD") == 0 && family >= 26;
#endif
    /* src/cpu.c: KUAI_YMM_SPLIT, KUAI_ZMM_SPLIT, KUAI_ZEN, KUAI_ZEN5 0 or
     * 1 override each */
    const struct {
        const char *env;
        int got, want;
    } split[4] = {{"KUAI_YMM_SPLIT", kuai_cpu_ymm_split(), want},
                  {"KUAI_ZMM_SPLIT", kuai_cpu_zmm_split(), want_z},
                  {"KUAI_ZEN", kuai_cpu_zen(), want_zen},
                  {"KUAI_ZEN5", kuai_cpu_zen5(), want_zen5}};
    for (int i = 0; i < 4; i++) {
        const char *forced = getenv(split[i].env);
        if (forced && (!strcmp(forced, "0") || !strcmp(forced, "1")))
            CHECK(split[i].got == forced[0] - '0', "split %d, %s=%s", split[i].got, split[i].env,
                  forced);
        else
            CHECK(split[i].got == split[i].want, "split %d (%s unset) on %s family %d model %d",
                  split[i].got, split[i].env, vendor, family, model);
    }
#endif
}

/* kuai_cpu_feature_names: one name per feature bit the library detected
 * (so ARM64 and LoongArch report theirs too), and every usable backend's
 * features among them. The backend -> features table is the tests' own,
 * from what each backend's instructions are. */
static void helpers_cpu_features(void)
{
    static const char untouched[] = "untouched";
    const char *names[33];
    for (size_t i = 0; i < 33; i++)
        names[i] = untouched;
    size_t n = kuai_cpu_feature_names(names, 32);
    unsigned bits = kuai_cpu_features();
    size_t nbits = 0;
    for (unsigned b = bits; b; b &= b - 1)
        nbits++;
    CHECK(n == nbits, "kuai_cpu_feature_names: %zu names for %zu detected features (0x%x)", n,
          nbits, bits);
    CHECK(kuai_cpu_feature_names(NULL, 0) == n, "kuai_cpu_feature_names(NULL) gives another count");
    if (!CHECK(n <= 32, "%zu CPU features, the test handles 32", n))
        return;
    CHECK(names[n] == untouched, "kuai_cpu_feature_names wrote past the count");
    for (size_t i = 0; i < n; i++) {
        CHECK(names[i] && names[i] != untouched && *names[i], "feature %zu has no name", i);
        for (size_t j = 0; j < i; j++)
            CHECK(strcmp(names[i], names[j]) != 0, "feature \"%s\" listed twice", names[i]);
    }
    static const struct {
        const char *backend;
        kuai_cipher only; /* 0: every cipher with that backend */
        const char *needs[3];
    } uses[] = {
        {"ssse3", 0, {"ssse3"}},
        {"avx2", 0, {"avx2"}},
        {"aesni", 0, {"aes-ni"}},
        {"aesni-avx", 0, {"aes-ni", "avx2"}},
        {"vaes", 0, {"vaes", "avx2", "aes-ni"}},
        {"avx512", 0, {"avx512", "avx512vbmi"}},
        {"gfni", 0, {"gfni", "avx512"}},
        {"gfni-avx", 0, {"gfni", "avx2"}},
        {"neon", 0, {"neon"}},
        {"armce", KUAI_SM4, {"sm4"}},
        {"armce", KUAI_AES_128, {"aes"}},
        {"armaes", 0, {"aes"}},
        {"lsx", 0, {"lsx"}},
        {"lasx", 0, {"lasx", "lsx"}},
    };
    size_t matched = 0;
    for (size_t ci = 0; ci < ALL_CIPHERS_N; ci++) {
        kuai_cipher c = all_ciphers[ci];
        const char *be[MAX_BACKENDS];
        size_t nbe = usable_backends(c, be, MAX_BACKENDS);
        for (size_t b = 0; b < nbe; b++) {
            for (size_t u = 0; u < sizeof uses / sizeof uses[0]; u++) {
                if (strcmp(uses[u].backend, be[b]) != 0 || (uses[u].only && uses[u].only != c))
                    continue;
                matched++;
                for (size_t k = 0; k < 3 && uses[u].needs[k]; k++) {
                    size_t i = 0;
                    while (i < n && strcmp(names[i], uses[u].needs[k]) != 0)
                        i++;
                    CHECK(i < n, "%s backend %s is usable, but CPU feature %s is not reported",
                          kuai_cipher_name(c), be[b], uses[u].needs[k]);
                }
            }
        }
    }
    t_note("cpu features: %zu reported, %zu backend/feature pairs checked", n, matched);
}

void test_api_helpers(void)
{
    group_begin("api helpers");
    for (size_t i = 0; i < ALL_CIPHERS_N; i++) {
        kuai_cipher c = cipher_facts[i].c;
        const char *n = kuai_cipher_name(c);
        CHECK(kuai_block_size(c) == cipher_facts[i].block, "%s: kuai_block_size %zu, want %zu",
              cipher_facts[i].name, kuai_block_size(c), cipher_facts[i].block);
        CHECK(kuai_key_size(c) == cipher_facts[i].key, "%s: kuai_key_size %zu, want %zu",
              cipher_facts[i].name, kuai_key_size(c), cipher_facts[i].key);
        CHECK(n && strcmp(n, cipher_facts[i].name) == 0,
              "cipher %d: kuai_cipher_name \"%s\", want \"%s\"", (int)c, n ? n : "(null)",
              cipher_facts[i].name);
        CHECK(kuai_block_size(c) <= KUAI_MAX_BLOCK, "%s: block larger than KUAI_MAX_BLOCK",
              cipher_facts[i].name);
        helpers_backends(c);
    }
    /* Values outside the enum. */
    /* 0, the number after the last cipher, a large one, a negative one */
    const int bogus[] = {0, (int)all_ciphers[ALL_CIPHERS_N - 1] + 1, 99, -1};
    for (size_t i = 0; i < sizeof bogus / sizeof bogus[0]; i++) {
        kuai_cipher c = (kuai_cipher)bogus[i];
        CHECK(kuai_block_size(c) == 0 && kuai_key_size(c) == 0 && kuai_cipher_name(c) == NULL,
              "unknown cipher %d: block %zu, key %zu, name %s (want 0, 0, NULL)", bogus[i],
              kuai_block_size(c), kuai_key_size(c), kuai_cipher_name(c) ? "non-NULL" : "NULL");
        CHECK(kuai_backends(c, NULL, 0) == 0, "unknown cipher %d has backends", bogus[i]);
    }
    helpers_cipher_list();
    helpers_cpu_features();
    helpers_ymm_split();

    /* kuai_strerror: a distinct, non-empty message for every code. */
    const int codes[] = {KUAI_OK,         KUAI_ERR_ARG,      KUAI_ERR_KEY_LEN,
                         KUAI_ERR_LENGTH, KUAI_ERR_BACKEND,  KUAI_ERR_UNSUPPORTED,
                         KUAI_ERR_AUTH,   KUAI_ERR_MISMATCH, KUAI_ERR_KEY};
    const size_t ncodes = sizeof codes / sizeof codes[0];
    for (size_t i = 0; i < ncodes; i++) {
        const char *s = kuai_strerror(codes[i]);
        if (!CHECK(s && *s, "kuai_strerror(%d) is NULL or empty", codes[i]))
            continue;
        for (size_t j = 0; j < i; j++) {
            const char *t = kuai_strerror(codes[j]);
            CHECK(!t || strcmp(s, t) != 0, "kuai_strerror(%d) == kuai_strerror(%d): \"%s\"",
                  codes[i], codes[j], s);
        }
    }
    const char *u1 = kuai_strerror(-100), *u2 = kuai_strerror(1);
    CHECK(u1 && *u1 && u2 && *u2, "kuai_strerror of an unknown code is NULL or empty");

    /* kuai_key_backend on keys nobody set up. */
    kuai_key z;
    memset(&z, 0, sizeof z);
    CHECK(kuai_key_backend(NULL) == NULL, "kuai_key_backend(NULL) is not NULL");
    CHECK(kuai_key_backend(&z) == NULL, "kuai_key_backend of a zeroed key is not NULL");
    kuai_key_wipe(NULL); /* must be a no-op, not a crash */
    group_end();
}

/* ---- errors -------------------------------------------------------------- */

/* Buffers of one error-path call and their snapshots: the header promises
 * that on failure nothing is written to any output buffer, IV or counter. */
typedef struct errbufs {
    size_t len;
    uint8_t *in, *out, *iv;
    uint8_t *in0, *out0, *iv0;
} errbufs;

static void eb_init(errbufs *e, size_t len)
{
    e->len = len;
    e->in = xmalloc(len);
    e->out = xmalloc(len);
    e->iv = xmalloc(KUAI_MAX_BLOCK);
    e->in0 = xmalloc(len);
    e->out0 = xmalloc(len);
    e->iv0 = xmalloc(KUAI_MAX_BLOCK);
    rng_fill(e->in, len);
    memset(e->out, GUARD_FILL, len);
    rng_fill(e->iv, KUAI_MAX_BLOCK);
    memcpy(e->in0, e->in, len);
    memcpy(e->out0, e->out, len);
    memcpy(e->iv0, e->iv, KUAI_MAX_BLOCK);
}

static void eb_free(errbufs *e)
{
    free(e->in);
    free(e->out);
    free(e->iv);
    free(e->in0);
    free(e->out0);
    free(e->iv0);
}

/* rc must be want, or want2 where the header leaves both open (pass
 * want2 = want otherwise). */
static void expect_rc(int rc, int want, int want2, const char *what)
{
    CHECK_RC(rc, rc == want2 ? want2 : want, what);
}

/* Nothing of e may have changed. */
static void expect_unchanged(const errbufs *e, const char *what)
{
    char w2[256];
    snprintf(w2, sizeof w2, "%s: output buffer written", what);
    CHECK_MEM(e->out, e->out0, e->len, w2);
    snprintf(w2, sizeof w2, "%s: IV/counter written", what);
    CHECK_MEM(e->iv, e->iv0, KUAI_MAX_BLOCK, w2);
    snprintf(w2, sizeof w2, "%s: input written", what);
    CHECK_MEM(e->in, e->in0, e->len, w2);
}

static void expect_err(const errbufs *e, int rc, int want, int want2, const char *what)
{
    expect_rc(rc, want, want2, what);
    expect_unchanged(e, what);
}

enum { E_ECB_ENC, E_ECB_DEC, E_CBC_ENC, E_CBC_DEC, E_CTR, E_N };
static const char *const e_names[E_N] = {"kuai_ecb_encrypt", "kuai_ecb_decrypt", "kuai_cbc_encrypt",
                                         "kuai_cbc_decrypt", "kuai_ctr_crypt"};

static int call(int o, const kuai_key *k, uint8_t *iv, const uint8_t *in, uint8_t *out, size_t len)
{
    switch (o) {
    case E_ECB_ENC:
        return kuai_ecb_encrypt(k, in, out, len);
    case E_ECB_DEC:
        return kuai_ecb_decrypt(k, in, out, len);
    case E_CBC_ENC:
        return kuai_cbc_encrypt(k, iv, in, out, len);
    case E_CBC_DEC:
        return kuai_cbc_decrypt(k, iv, in, out, len);
    default:
        return kuai_ctr_crypt(k, iv, in, out, len);
    }
}

static void errors_single(kuai_cipher c, const char *backend)
{
    const size_t bs = kuai_block_size(c), len = 4 * bs;
    uint8_t keybytes[64];
    kuai_key k, wiped, zeroed, garbage;
    rng_fill(keybytes, sizeof keybytes);
    if (!key_init_ok(&k, c, keybytes, backend) || !key_init_ok(&wiped, c, keybytes, backend))
        return;
    kuai_key_wipe(&wiped);
    memset(&zeroed, 0, sizeof zeroed);
    memset(&garbage, 0x5a, sizeof garbage);
    errbufs e;
    eb_init(&e, len);
    char what[192];

    for (int o = 0; o < E_N; o++) {
        const int has_iv = o >= E_CBC_ENC;
#define W(desc)                                                                                    \
    (snprintf(what, sizeof what, "%s/%s %s: %s", kuai_cipher_name(c), backend, e_names[o], desc),  \
     what)
        expect_err(&e, call(o, NULL, e.iv, e.in, e.out, len), KUAI_ERR_ARG, KUAI_ERR_ARG,
                   W("NULL key"));
        expect_err(&e, call(o, &k, e.iv, NULL, e.out, len), KUAI_ERR_ARG, KUAI_ERR_ARG,
                   W("NULL in"));
        expect_err(&e, call(o, &k, e.iv, e.in, NULL, len), KUAI_ERR_ARG, KUAI_ERR_ARG,
                   W("NULL out"));
        if (has_iv)
            expect_err(&e, call(o, &k, NULL, e.in, e.out, len), KUAI_ERR_ARG, KUAI_ERR_ARG,
                       W("NULL iv/ctr"));
        expect_err(&e, call(o, &wiped, e.iv, e.in, e.out, len), KUAI_ERR_KEY, KUAI_ERR_KEY,
                   W("wiped key"));
        expect_err(&e, call(o, &zeroed, e.iv, e.in, e.out, len), KUAI_ERR_KEY, KUAI_ERR_KEY,
                   W("zeroed (never set up) key"));
        expect_err(&e, call(o, &garbage, e.iv, e.in, e.out, len), KUAI_ERR_KEY, KUAI_ERR_KEY,
                   W("key struct full of 0x5a"));
        if (o != E_CTR) {
            const size_t bad[] = {1, bs - 1, bs + 1, 3 * bs + 5};
            for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
                char d[48];
                snprintf(d, sizeof d, "len %zu not a block multiple", bad[i]);
                expect_err(&e, call(o, &k, e.iv, e.in, e.out, bad[i]), KUAI_ERR_LENGTH,
                           KUAI_ERR_LENGTH, W(d));
            }
        }
        /* Partial overlap of in and out ("in == out is allowed; other
         * overlaps are not"): refused as a malformed argument. */
        {
            uint8_t *sh = xmalloc(len + bs), *sh0 = xmalloc(len + bs);
            uint8_t iv_before[KUAI_MAX_BLOCK];
            rng_fill(sh, len + bs);
            memcpy(sh0, sh, len + bs);
            memcpy(iv_before, e.iv, KUAI_MAX_BLOCK);
            const size_t shift[2][2] = {{0, bs}, {bs, 0}}; /* out after in, out before in */
            for (int d = 0; d < 2; d++) {
                int rc = call(o, &k, e.iv, sh + shift[d][0], sh + shift[d][1], len);
                expect_rc(rc, KUAI_ERR_ARG, KUAI_ERR_ARG,
                          W(d ? "out overlaps in, one block before"
                              : "out overlaps in, one block after"));
                CHECK_MEM(sh, sh0, len + bs, what);
                CHECK_MEM(e.iv, iv_before, KUAI_MAX_BLOCK, what);
            }
            free(sh);
            free(sh0);
        }
        /* len 0 is a valid empty message: success, and still nothing
         * written (the IV/counter in particular stays). */
        expect_err(&e, call(o, &k, e.iv, e.in, e.out, 0), KUAI_OK, KUAI_OK,
                   W("len 0, valid pointers"));
        /* The header does not say whether NULL data pointers are fine
         * with len 0; either answer is accepted, a crash or write is not. */
        expect_err(&e, call(o, &k, e.iv, NULL, NULL, 0), KUAI_OK, KUAI_ERR_ARG,
                   W("len 0, NULL in and out"));
#undef W
    }
    eb_free(&e);
    kuai_key_wipe(&k);
}

/* Init errors: the key struct is an output, so it too must stay as it was. */
static void errors_init(kuai_cipher c, const char *backend)
{
    const size_t ks = kuai_key_size(c);
    const char *cn = kuai_cipher_name(c);
    uint8_t keybytes[80];
    char what[160];
    kuai_key *k = key_alloc(1), *k0 = key_alloc(1);
    rng_fill(keybytes, sizeof keybytes);
    memset(k0, 0x3c, sizeof *k0);

#define EXPECT_INIT(expr, want, desc)                                                              \
    do {                                                                                           \
        memcpy(k, k0, sizeof *k);                                                                  \
        snprintf(what, sizeof what, "%s/%s: %s", cn, backend, desc);                               \
        CHECK_RC((expr), (want), what);                                                            \
        CHECK(memcmp(k, k0, sizeof *k) == 0, "%s: key struct written by a failed init", what);     \
    } while (0)

    const size_t bad_len[] = {0, 1, ks - 1, ks + 1, 24, 48, 64};
    for (size_t i = 0; i < sizeof bad_len / sizeof bad_len[0]; i++) {
        if (bad_len[i] == ks)
            continue;
        char d[64];
        snprintf(d, sizeof d, "key length %zu (cipher needs %zu)", bad_len[i], ks);
        EXPECT_INIT(kuai_key_init_backend(k, c, keybytes, bad_len[i], backend), KUAI_ERR_KEY_LEN,
                    d);
        snprintf(d, sizeof d, "kuai_key_init, key length %zu", bad_len[i]);
        EXPECT_INIT(kuai_key_init(k, c, keybytes, bad_len[i]), KUAI_ERR_KEY_LEN, d);
    }
    EXPECT_INIT(kuai_key_init_backend(k, c, NULL, ks, backend), KUAI_ERR_ARG, "NULL key bytes");
    EXPECT_INIT(kuai_key_init_backend(k, c, keybytes, ks, NULL), KUAI_ERR_ARG, "NULL backend");
    EXPECT_INIT(kuai_key_init(k, c, NULL, ks), KUAI_ERR_ARG, "kuai_key_init, NULL key bytes");
    EXPECT_INIT(kuai_key_init_backend(k, c, keybytes, ks, "nonexistent"), KUAI_ERR_BACKEND,
                "backend \"nonexistent\"");
    EXPECT_INIT(kuai_key_init_backend(k, c, keybytes, ks, ""), KUAI_ERR_BACKEND, "backend \"\"");
    EXPECT_INIT(kuai_key_init_backend(k, c, keybytes, ks, "REF"), KUAI_ERR_BACKEND,
                "backend \"REF\" (names are lower case)");
    snprintf(what, sizeof what, "%s: kuai_key_init_backend(NULL key struct)", cn);
    CHECK_RC(kuai_key_init_backend(NULL, c, keybytes, ks, backend), KUAI_ERR_ARG, what);
    snprintf(what, sizeof what, "%s: kuai_key_init(NULL key struct)", cn);
    CHECK_RC(kuai_key_init(NULL, c, keybytes, ks), KUAI_ERR_ARG, what);
#undef EXPECT_INIT
    free(k);
    free(k0);
}

/* Multi-key errors over n streams, the fault at stream `at`. */
static void errors_multi(kuai_cipher c, const char *backend, kuai_cipher other, size_t n, size_t at)
{
    const size_t bs = kuai_block_size(c), len = 2 * bs;
    const char *cn = kuai_cipher_name(c);
    kuai_key *kobj = key_alloc(3); /* good, wiped, other cipher */
    uint8_t kb[64];
    rng_fill(kb, sizeof kb);
    if (!key_init_ok(&kobj[0], c, kb, backend) || !key_init_ok(&kobj[1], c, kb, backend)) {
        free(kobj);
        return;
    }
    kuai_key_wipe(&kobj[1]);
    int have_other = other && key_init_ok(&kobj[2], other, kb, "ref");

    errbufs e[33];
    const kuai_key *keys[33];
    const uint8_t *in[33];
    uint8_t *out[33], *ivs[33];
    for (size_t i = 0; i < n; i++) {
        eb_init(&e[i], len);
        keys[i] = &kobj[0];
        in[i] = e[i].in;
        out[i] = e[i].out;
        ivs[i] = e[i].iv;
    }
    char what[192];
    for (int o = 0; o < 4; o++) {
        const int cbc = o >= 2, enc = !(o & 1);
#define MULTI()                                                                                    \
    (cbc ? (enc ? kuai_cbc_encrypt_multi(keys, ivs, in, out, n, L)                                 \
                : kuai_cbc_decrypt_multi(keys, ivs, in, out, n, L))                                \
         : (enc ? kuai_ecb_encrypt_multi(keys, in, out, n, L)                                      \
                : kuai_ecb_decrypt_multi(keys, in, out, n, L)))
#define EXPECT_MULTI(want, want2, desc)                                                            \
    do {                                                                                           \
        int rc_ = MULTI();                                                                         \
        snprintf(what, sizeof what, "%s/%s %s-%s-multi n=%zu: %s", cn, backend,                    \
                 cbc ? "cbc" : "ecb", enc ? "enc" : "dec", n, desc);                               \
        expect_rc(rc_, (want), (want2), what);                                                     \
        for (size_t i = 0; i < n; i++)                                                             \
            expect_unchanged(&e[i], what);                                                         \
    } while (0)
        size_t L = len;

        keys[at] = NULL;
        EXPECT_MULTI(KUAI_ERR_ARG, KUAI_ERR_ARG, "keys[at] NULL");
        keys[at] = &kobj[1];
        EXPECT_MULTI(KUAI_ERR_KEY, KUAI_ERR_KEY, "keys[at] wiped");
        if (have_other) {
            keys[at] = &kobj[2];
            EXPECT_MULTI(KUAI_ERR_MISMATCH, KUAI_ERR_MISMATCH, "keys[at] another cipher");
        }
        keys[at] = &kobj[0];
        in[at] = NULL;
        EXPECT_MULTI(KUAI_ERR_ARG, KUAI_ERR_ARG, "in[at] NULL");
        in[at] = e[at].in;
        out[at] = NULL;
        EXPECT_MULTI(KUAI_ERR_ARG, KUAI_ERR_ARG, "out[at] NULL");
        out[at] = e[at].out;
        if (cbc) {
            ivs[at] = NULL;
            EXPECT_MULTI(KUAI_ERR_ARG, KUAI_ERR_ARG, "ivs[at] NULL");
            ivs[at] = e[at].iv;
        }
        L = bs + 1;
        EXPECT_MULTI(KUAI_ERR_LENGTH, KUAI_ERR_LENGTH, "len not a block multiple");
        L = 0;
        EXPECT_MULTI(KUAI_OK, KUAI_OK, "len 0");
        L = len;
        /* Whole arrays NULL. */
        {
            const kuai_key *const *kk = NULL;
            const uint8_t *const *ii = NULL;
            uint8_t *const *oo = NULL, *const *vv = NULL;
            int rc;
            rc = cbc ? (enc ? kuai_cbc_encrypt_multi(kk, ivs, in, out, n, L)
                            : kuai_cbc_decrypt_multi(kk, ivs, in, out, n, L))
                     : (enc ? kuai_ecb_encrypt_multi(kk, in, out, n, L)
                            : kuai_ecb_decrypt_multi(kk, in, out, n, L));
            snprintf(what, sizeof what, "%s %s-%s-multi: keys array NULL", cn, cbc ? "cbc" : "ecb",
                     enc ? "enc" : "dec");
            expect_rc(rc, KUAI_ERR_ARG, KUAI_ERR_ARG, what);
            for (size_t i = 0; i < n; i++)
                expect_unchanged(&e[i], what);
            rc = cbc ? (enc ? kuai_cbc_encrypt_multi(keys, ivs, ii, out, n, L)
                            : kuai_cbc_decrypt_multi(keys, ivs, ii, out, n, L))
                     : (enc ? kuai_ecb_encrypt_multi(keys, ii, out, n, L)
                            : kuai_ecb_decrypt_multi(keys, ii, out, n, L));
            snprintf(what, sizeof what, "%s %s-%s-multi: in array NULL", cn, cbc ? "cbc" : "ecb",
                     enc ? "enc" : "dec");
            expect_rc(rc, KUAI_ERR_ARG, KUAI_ERR_ARG, what);
            for (size_t i = 0; i < n; i++)
                expect_unchanged(&e[i], what);
            rc = cbc ? (enc ? kuai_cbc_encrypt_multi(keys, ivs, in, oo, n, L)
                            : kuai_cbc_decrypt_multi(keys, ivs, in, oo, n, L))
                     : (enc ? kuai_ecb_encrypt_multi(keys, in, oo, n, L)
                            : kuai_ecb_decrypt_multi(keys, in, oo, n, L));
            snprintf(what, sizeof what, "%s %s-%s-multi: out array NULL", cn, cbc ? "cbc" : "ecb",
                     enc ? "enc" : "dec");
            expect_rc(rc, KUAI_ERR_ARG, KUAI_ERR_ARG, what);
            for (size_t i = 0; i < n; i++)
                expect_unchanged(&e[i], what);
            if (cbc) {
                rc = enc ? kuai_cbc_encrypt_multi(keys, vv, in, out, n, L)
                         : kuai_cbc_decrypt_multi(keys, vv, in, out, n, L);
                snprintf(what, sizeof what, "%s cbc-%s-multi: ivs array NULL", cn,
                         enc ? "enc" : "dec");
                expect_rc(rc, KUAI_ERR_ARG, KUAI_ERR_ARG, what);
                for (size_t i = 0; i < n; i++)
                    expect_unchanged(&e[i], what);
            }
        }
        /* n = 0: no streams. The header does not say whether that is an
         * empty job or a malformed call; either answer, but no write. */
        {
            size_t n_save = n;
            n = 0;
            int rc = MULTI();
            n = n_save;
            snprintf(what, sizeof what, "%s %s-%s-multi: n = 0", cn, cbc ? "cbc" : "ecb",
                     enc ? "enc" : "dec");
            expect_rc(rc, KUAI_OK, KUAI_ERR_ARG, what);
            for (size_t i = 0; i < n; i++)
                expect_unchanged(&e[i], what);
        }
#undef MULTI
#undef EXPECT_MULTI
    }
    for (size_t i = 0; i < n; i++)
        eb_free(&e[i]);
    kuai_key_wipe(&kobj[0]);
    kuai_key_wipe(&kobj[2]);
    free(kobj);
}

void test_api_errors(void)
{
    group_begin("api errors");
    uint8_t keybytes[64];
    rng_fill(keybytes, sizeof keybytes);
    for (size_t ci = 0; ci < ALL_CIPHERS_N; ci++) {
        kuai_cipher c = all_ciphers[ci];
        const char *cn = kuai_cipher_name(c);
        if (kuai_impls(c)[0] == NULL) {
            /* Not implemented (yet): setup says so, whichever entry point. */
            kuai_key k;
            char what[96];
            snprintf(what, sizeof what, "%s (no backend): kuai_key_init", cn);
            CHECK_RC(kuai_key_init(&k, c, keybytes, kuai_key_size(c)), KUAI_ERR_UNSUPPORTED, what);
            snprintf(what, sizeof what, "%s (no backend): kuai_key_init_backend(ref)", cn);
            CHECK_RC(kuai_key_init_backend(&k, c, keybytes, kuai_key_size(c), "ref"),
                     KUAI_ERR_UNSUPPORTED, what);
            continue;
        }
        const char *be[MAX_BACKENDS];
        size_t nbe = test_backends(c, be, MAX_BACKENDS);
        /* Another cipher with a backend, for the mismatch case; prefer one
         * with another block size, the nastier mix. */
        kuai_cipher other = 0;
        for (size_t j = 0; j < ALL_CIPHERS_N; j++) {
            kuai_cipher d = all_ciphers[j];
            if (d == c || kuai_backends(d, NULL, 0) == 0)
                continue;
            if (!other || kuai_block_size(d) != kuai_block_size(c))
                other = d;
        }
        for (size_t b = 0; b < nbe; b++) {
            errors_single(c, be[b]);
            errors_init(c, be[b]);
            errors_multi(c, be[b], other, 3, 1);
            errors_multi(c, be[b], other, 17, 16); /* fault in a late lane */
        }
    }
    /* Ciphers outside the enum: a malformed argument, or "not supported";
     * the header does not pick, so either is accepted. */
    static const int bogus[] = {0, 99};
    for (size_t i = 0; i < sizeof bogus / sizeof bogus[0]; i++) {
        kuai_key k;
        int rc = kuai_key_init_backend(&k, (kuai_cipher)bogus[i], keybytes, 16, "ref");
        CHECK(rc == KUAI_ERR_ARG || rc == KUAI_ERR_UNSUPPORTED,
              "kuai_key_init_backend(cipher %d) returned %d, want KUAI_ERR_ARG or "
              "KUAI_ERR_UNSUPPORTED",
              bogus[i], rc);
    }
    group_end();
}

/* ---- KUAI_BACKEND -------------------------------------------------------- */

/* The library reads the two variables once per process: each change here
 * is followed by the registry's test hook, which makes the next key setup
 * read them again. */
static void env_backend(const char *backend, const char *leaky_optin)
{
    if (backend)
        setenv("KUAI_BACKEND", backend, 1);
    else
        unsetenv("KUAI_BACKEND");
    if (leaky_optin)
        setenv("KUAI_ALLOW_LEAKY_BACKENDS", leaky_optin, 1);
    else
        unsetenv("KUAI_ALLOW_LEAKY_BACKENDS");
    kuai_registry_reload();
}

void test_api_env(void)
{
    group_begin("KUAI_BACKEND env");
    const char *prev = getenv("KUAI_BACKEND"), *prev_leaky = getenv("KUAI_ALLOW_LEAKY_BACKENDS");
    char *saved = prev ? strdup(prev) : NULL;
    char *saved_leaky = prev_leaky ? strdup(prev_leaky) : NULL;
    uint8_t keybytes[64];
    rng_fill(keybytes, sizeof keybytes);
    kuai_key *k = key_alloc(1), *k0 = key_alloc(1);
    for (size_t ci = 0; ci < ALL_CIPHERS_N; ci++) {
        kuai_cipher c = all_ciphers[ci];
        const char *cn = kuai_cipher_name(c), *all[MAX_BACKENDS];
        size_t nall = usable_backends(c, all, MAX_BACKENDS), ks = kuai_key_size(c);
        if (nall == 0)
            continue;
        char what[160];

        env_backend(NULL, NULL);
        snprintf(what, sizeof what, "%s: kuai_key_init, KUAI_BACKEND unset", cn);
        if (CHECK_RC(kuai_key_init(k, c, keybytes, ks), KUAI_OK, what)) {
            const char *got = kuai_key_backend(k);
            CHECK(got && strcmp(got, all[0]) == 0, "%s: picked \"%s\", the best is \"%s\"", what,
                  got ? got : "(null)", all[0]);
        }
        for (size_t b = 0; b < nall; b++) {
            /* A backend that leaks through the cache needs a second, explicit
             * variable: "1" and nothing else. */
            const int leaky = kuai_backend_leaky(all[b]);
            static const char *const optin[] = {NULL, "0", "yes", "", "1"};
            for (size_t o = leaky ? 0 : 4; o < sizeof optin / sizeof optin[0]; o++) {
                env_backend(all[b], optin[o]);
                const int want = !leaky || o == 4 ? KUAI_OK : KUAI_ERR_BACKEND;
                snprintf(what, sizeof what, "%s: kuai_key_init, KUAI_BACKEND=%s%s%s%s%s", cn,
                         all[b], leaky ? " KUAI_ALLOW_LEAKY_BACKENDS=" : "",
                         leaky && optin[o] ? "\""
                         : leaky           ? "(unset)"
                                           : "",
                         leaky && optin[o] ? optin[o] : "", leaky && optin[o] ? "\"" : "");
                memset(k, 0x3c, sizeof *k);
                if (CHECK_RC(kuai_key_init(k, c, keybytes, ks), want, what) && want == KUAI_OK) {
                    const char *got = kuai_key_backend(k);
                    CHECK(got && strcmp(got, all[b]) == 0, "%s: picked \"%s\"", what,
                          got ? got : "(null)");
                }
            }
            env_backend(all[b], NULL);
            /* The API names a leaky backend without the variable. */
            if (leaky) {
                snprintf(what, sizeof what, "%s: kuai_key_init_backend(%s), no opt-in variable", cn,
                         all[b]);
                CHECK_RC(kuai_key_init_backend(k, c, keybytes, ks, all[b]), KUAI_OK, what);
            }
        }
        env_backend("nonexistent", NULL);
        memset(k0, 0x3c, sizeof *k0);
        memcpy(k, k0, sizeof *k);
        snprintf(what, sizeof what, "%s: kuai_key_init, KUAI_BACKEND=nonexistent", cn);
        CHECK_RC(kuai_key_init(k, c, keybytes, ks), KUAI_ERR_BACKEND, what);
        CHECK(memcmp(k, k0, sizeof *k) == 0, "%s: key struct written by a failed init", what);
        /* The variable steers only the automatic choice. */
        snprintf(what, sizeof what, "%s: kuai_key_init_backend(ref) with KUAI_BACKEND=nonexistent",
                 cn);
        CHECK_RC(kuai_key_init_backend(k, c, keybytes, ks, "ref"), KUAI_OK, what);
        /* Read once per process: a change the hook does not announce is
         * not seen, and the announced one is. */
        setenv("KUAI_BACKEND", "ref", 1);
        snprintf(what, sizeof what, "%s: kuai_key_init, KUAI_BACKEND=ref set after the read", cn);
        CHECK_RC(kuai_key_init(k, c, keybytes, ks), KUAI_ERR_BACKEND, what);
        kuai_registry_reload();
        snprintf(what, sizeof what, "%s: kuai_key_init, KUAI_BACKEND=ref read again", cn);
        if (CHECK_RC(kuai_key_init(k, c, keybytes, ks), KUAI_OK, what))
            CHECK(strcmp(kuai_key_backend(k), "ref") == 0, "%s: picked \"%s\"", what,
                  kuai_key_backend(k));
        /* kuai_backends reads them too (kuai.h): a program that lists the
         * backends before its first key setup has had its choice made. */
        env_backend("ref", NULL);
        (void)kuai_backends(c, NULL, 0);
        unsetenv("KUAI_BACKEND");
        snprintf(what, sizeof what, "%s: kuai_key_init, KUAI_BACKEND=ref read by kuai_backends",
                 cn);
        if (CHECK_RC(kuai_key_init(k, c, keybytes, ks), KUAI_OK, what))
            CHECK(strcmp(kuai_key_backend(k), "ref") == 0, "%s: picked \"%s\"", what,
                  kuai_key_backend(k));
        kuai_key_wipe(k);
    }
    /* Which backends leak: ttable, and none of the constant-time ones. */
    CHECK(kuai_backend_leaky("ttable") == 1, "kuai_backend_leaky(\"ttable\") is not 1");
    static const char *const ct_names[] = {"ref", "ssse3", "avx2", "aesni", "bogus", ""};
    for (size_t i = 0; i < sizeof ct_names / sizeof ct_names[0]; i++)
        CHECK(kuai_backend_leaky(ct_names[i]) == 0, "kuai_backend_leaky(\"%s\") is not 0",
              ct_names[i]);
    CHECK(kuai_backend_leaky(NULL) == 0, "kuai_backend_leaky(NULL) is not 0");
    env_backend(saved, saved_leaky);
    free(saved);
    free(saved_leaky);
    free(k);
    free(k0);
    group_end();
}
