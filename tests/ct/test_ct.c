/* SPDX-License-Identifier: Apache-2.0 */
/*
 * make test-ct: constant time, checked the ctgrind way.
 *
 * Run under valgrind's memcheck. Keys and data are marked undefined
 * ("secret"); memcheck then reports every conditional jump and every memory
 * address that depends on them. Values the algorithm makes public
 * (ciphertext, tags, the verdict of a tag check) are marked defined again
 * before this program looks at them, so any report comes from the library.
 *
 * Each backend runs every mode; the count of memcheck errors before and
 * after tells which backend leaked. Backends that promise constant time
 * must add none. The ttable SM4 backend, which indexes tables with secret
 * bytes on purpose, must add some: that is the proof that the check can
 * fail, reported as "caught".
 */
#define _POSIX_C_SOURCE 200809L
#include "ghash/ghash.h"
#include "kuai.h"
#include "kuai_prov_tls.h" /* the provider's TLS record unpadding */
#include "seam.h"          /* kuai_registry_reload */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <valgrind/memcheck.h>
#include <valgrind/valgrind.h>

#define SECRET(p, n) VALGRIND_MAKE_MEM_UNDEFINED((p), (n))
#define PUBLIC(p, n) VALGRIND_MAKE_MEM_DEFINED((p), (n))

/* Backends documented as not constant time: run, and expected to leak. */
static int is_leaky(const char *backend)
{
    return strcmp(backend, "ttable") == 0;
}

static uint64_t rng = 0x6b7561692d637421u;
static void fill(void *p, size_t n)
{
    uint8_t *b = p;
    for (size_t i = 0; i < n; i++) {
        rng += 0x9e3779b97f4a7c15u;
        uint64_t z = rng;
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
        b[i] = (uint8_t)(z ^ (z >> 31));
    }
}

#define MAXLEN 4200
static uint8_t pt[MAXLEN], ct[MAXLEN], buf[MAXLEN];
static int usage_errors; /* calls that failed: a broken harness, not a leak */

static void expect_ok(int rc, const char *what, const char *cipher, const char *backend)
{
    PUBLIC(&rc, sizeof rc);
    if (rc != KUAI_OK) {
        fprintf(stderr, "test-ct: %s %s %s returned %d (%s)\n", cipher, backend, what, rc,
                kuai_strerror(rc));
        usage_errors++;
    }
}

#define OK(call, what) expect_ok((call), (what), name, backend)

static void run_modes(kuai_cipher c, const char *backend)
{
    const char *name = kuai_cipher_name(c);
    size_t bs = kuai_block_size(c), ks = kuai_key_size(c);
    uint8_t key[32], iv[32];
    kuai_key k;

    fill(key, ks);
    SECRET(key, ks);
    OK(kuai_key_init_backend(&k, c, key, ks, backend), "key setup");

    /* Block counts that reach the single-block, partial-group and full
     * wide-kernel paths of every backend. */
    static const size_t nblocks[] = {1, 3, 8, 17, 64, 130};
    for (size_t i = 0; i < sizeof nblocks / sizeof nblocks[0]; i++) {
        size_t len = nblocks[i] * bs;
        fill(pt, len);
        SECRET(pt, len);
        OK(kuai_ecb_encrypt(&k, pt, ct, len), "ecb encrypt");
        PUBLIC(ct, len);
        OK(kuai_ecb_decrypt(&k, ct, buf, len), "ecb decrypt");

        fill(iv, bs);
        OK(kuai_cbc_encrypt(&k, iv, pt, ct, len), "cbc encrypt");
        PUBLIC(ct, len);
        PUBLIC(iv, bs);
        OK(kuai_cbc_decrypt(&k, iv, ct, buf, len), "cbc decrypt");
        PUBLIC(iv, bs);
        /* in place as well: the backends take other paths for in == out */
        memcpy(buf, ct, len);
        OK(kuai_cbc_decrypt(&k, iv, buf, buf, len), "cbc decrypt in place");
        PUBLIC(iv, bs);
    }

    static const size_t lens[] = {1, 15, 16, 83, 1000, 4099};
    for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++) {
        size_t len = lens[i];
        fill(pt, len);
        SECRET(pt, len);
        fill(iv, bs);
        OK(kuai_ctr_crypt(&k, iv, pt, ct, len), "ctr");
        PUBLIC(ct, len);
        PUBLIC(iv, bs);
    }

    if (bs == 16) {
        /* Key wrap: the key wrapped is secret, the wrapped key public;
         * unwrapping may branch on its verdict only (and KWP's length,
         * public once the verdict is), not on the ICV, length or padding
         * it checks, right or wrong. */
        static const size_t wlens[] = {1, 7, 8, 9, 16, 20, 24, 40};
        for (size_t i = 0; i < sizeof wlens / sizeof wlens[0]; i++) {
            size_t len = wlens[i], wl = kuai_kwp_wrapped_len(len), got = 0;
            for (int pad = 0; pad < 2; pad++) {
                if (!pad && (len < 16 || len % 8))
                    continue;
                fill(pt, len);
                SECRET(pt, len);
                OK(pad ? kuai_kwp_wrap(&k, pt, len, ct) : kuai_kw_wrap(&k, pt, len, ct),
                   pad ? "kwp wrap" : "kw wrap");
                size_t n = pad ? wl : len + 8;
                PUBLIC(ct, n);
                OK(pad ? kuai_kwp_unwrap(&k, ct, n, buf, &got) : kuai_kw_unwrap(&k, ct, n, buf),
                   pad ? "kwp unwrap" : "kw unwrap");
                ct[i % n] ^= 1;
                int rc =
                    pad ? kuai_kwp_unwrap(&k, ct, n, buf, &got) : kuai_kw_unwrap(&k, ct, n, buf);
                PUBLIC(&rc, sizeof rc);
                if (rc != KUAI_ERR_AUTH) {
                    fprintf(stderr, "test-ct: %s %s key wrap accepted a changed wrapped key\n",
                            name, backend);
                    usage_errors++;
                }
            }
        }

        uint8_t nonce[13], aad[40], tag[16];
        for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++) {
            size_t len = lens[i];
            size_t ivl = i & 1 ? 13 : 12; /* both the fast and the GHASH'd J0 */
            fill(nonce, ivl);
            fill(aad, sizeof aad);
            fill(pt, len);
            SECRET(pt, len);
            OK(kuai_gcm_encrypt(&k, nonce, ivl, aad, sizeof aad, pt, ct, len, tag, 16),
               "gcm encrypt");
            PUBLIC(ct, len);
            PUBLIC(tag, sizeof tag);
            OK(kuai_gcm_decrypt(&k, nonce, ivl, aad, sizeof aad, ct, buf, len, tag, 16),
               "gcm decrypt");
            tag[i % 16] ^= 1;
            int rc = kuai_gcm_decrypt(&k, nonce, ivl, aad, sizeof aad, ct, buf, len, tag, 16);
            PUBLIC(&rc, sizeof rc);
            if (rc != KUAI_ERR_AUTH) {
                fprintf(stderr, "test-ct: %s %s gcm accepted a wrong tag\n", name, backend);
                usage_errors++;
            }

            /* Streaming, in uneven pieces. */
            kuai_gcm_ctx g;
            OK(kuai_gcm_init(&g, &k, nonce, ivl), "gcm init");
            OK(kuai_gcm_aad(&g, aad, 7), "gcm aad");
            OK(kuai_gcm_aad(&g, aad + 7, sizeof aad - 7), "gcm aad");
            size_t cut = len / 3;
            OK(kuai_gcm_encrypt_update(&g, pt, ct, cut), "gcm update");
            OK(kuai_gcm_encrypt_update(&g, pt + cut, ct + cut, len - cut), "gcm update");
            OK(kuai_gcm_encrypt_final(&g, tag, 16), "gcm final");

            /* A template context, copied and restarted (its GHASH
             * material kept when H matches, made anew when not). */
            kuai_gcm_ctx tmpl;
            OK(kuai_gcm_init(&tmpl, &k, nonce, ivl), "gcm init");
            memcpy(&g, &tmpl, sizeof g);
            OK(kuai_gcm_restart(&g, &k, nonce, ivl), "gcm restart");
            OK(kuai_gcm_encrypt_update(&g, pt, ct, len), "gcm update");
            OK(kuai_gcm_encrypt_final(&g, tag, 16), "gcm final");
            kuai_key k2;
            uint8_t key2[32];
            fill(key2, sizeof key2);
            SECRET(key2, sizeof key2);
            OK(kuai_key_init_backend(&k2, c, key2, ks, backend), "second key");
            memcpy(&g, &tmpl, sizeof g);
            OK(kuai_gcm_restart(&g, &k2, nonce, ivl), "gcm restart, another key");
            OK(kuai_gcm_encrypt_update(&g, pt, ct, len), "gcm update");
            OK(kuai_gcm_encrypt_final(&g, tag, 16), "gcm final");
            /* The one-shot calls under the template: short messages read
             * its material where it lies, others run on a copy; under
             * another key the material is made for the call. */
            OK(kuai_gcm_encrypt_with(&tmpl, &k, nonce, ivl, aad, sizeof aad, pt, ct, len, tag, 16),
               "gcm encrypt with a template");
            OK(kuai_gcm_decrypt_with(&tmpl, &k, nonce, ivl, aad, sizeof aad, ct, ct, len, tag, 16),
               "gcm decrypt with a template");
            OK(kuai_gcm_encrypt_with(&tmpl, &k2, nonce, ivl, aad, sizeof aad, pt, ct, len, tag, 16),
               "gcm encrypt with a template, another key");
            kuai_gcm_wipe(&tmpl);
            kuai_key_wipe(&k2);
        }
    }

    /* Multi-key: several secret keys in lockstep. 2 blocks per stream run
     * the short path (mk_short) on every x86 uBlock backend, 5 the slots
     * or the short path, depending on the backend's crossover. The keys
     * are set up in one kuai_key_init_multi call for the first length
     * (uBlock-128's on avx2: in fours where ymm runs at full width, as in
     * this build's emulated CPU, else as four xmm schedules (128/128) or
     * pairs of them (128/256), as in make test-ct's KUAI_YMM_SPLIT=1 run;
     * uBlock-256/256's on avx2:
     * in pairs; avx512: in fours), one by one for the second. */
    enum { NK = 8 };
    kuai_key mk[NK];
    kuai_key *mkp[NK];
    const kuai_key *keys[NK];
    const uint8_t *ins[NK], *mkb[NK];
    uint8_t *outs[NK], *ivs[NK];
    static uint8_t mivs[NK][32], mkey[NK][32];
    for (size_t len = 2 * bs; len <= 5 * bs; len += 3 * bs) {
        fill(mkey, sizeof mkey);
        SECRET(mkey, sizeof mkey);
        for (size_t j = 0; j < NK; j++) {
            mkp[j] = &mk[j];
            mkb[j] = mkey[j];
            if (len != 2 * bs)
                OK(kuai_key_init_backend(&mk[j], c, mkey[j], ks, backend), "multi-key setup");
            keys[j] = &mk[j];
            ins[j] = pt + j * len;
            outs[j] = ct + j * len;
            ivs[j] = mivs[j];
            fill(mivs[j], bs);
        }
        if (len == 2 * bs)
            OK(kuai_key_init_multi_backend(mkp, c, mkb, ks, NK, backend),
               "multi-key setup, one call");
        fill(pt, NK * len);
        SECRET(pt, NK * len);
        OK(kuai_ecb_encrypt_multi(keys, ins, outs, NK, len), "ecb multi encrypt");
        OK(kuai_cbc_encrypt_multi(keys, ivs, ins, outs, NK, len), "cbc multi encrypt");
        PUBLIC(ct, NK * len);
        PUBLIC(mivs, sizeof mivs);
        for (size_t j = 0; j < NK; j++)
            ins[j] = ct + j * len, outs[j] = buf + j * len;
        OK(kuai_ecb_decrypt_multi(keys, ins, outs, NK, len), "ecb multi decrypt");
        OK(kuai_cbc_decrypt_multi(keys, ivs, ins, outs, NK, len), "cbc multi decrypt");
        PUBLIC(mivs, sizeof mivs);
        for (size_t j = 0; j < NK; j++)
            kuai_key_wipe(&mk[j]);
    }

    /* One-shot ECB, single and 4 keys: uBlock's x86 backends and SM4's and
     * AES's AES-NI ones run their own path (the key schedule and the kernel
     * on the stack, or round keys made between the rounds), so the backend
     * is forced the way kuai_key_init would take it (the library reads the
     * variables once; the registry's test hook makes it read them again). */
    static uint8_t okey[4][32];
    const uint8_t *okeys[4];
    setenv("KUAI_BACKEND", backend, 1);
    /* ttable is leaky: the environment may name it only with the opt-in. */
    setenv("KUAI_ALLOW_LEAKY_BACKENDS", "1", 1);
    kuai_registry_reload();
    fill(okey, sizeof okey);
    SECRET(okey, sizeof okey);
    fill(pt, 4 * bs);
    SECRET(pt, 4 * bs);
    OK(kuai_ecb_encrypt_oneshot(c, okey[0], ks, pt, ct, 4 * bs), "oneshot encrypt");
    PUBLIC(ct, 4 * bs);
    OK(kuai_ecb_decrypt_oneshot(c, okey[0], ks, ct, buf, 4 * bs), "oneshot decrypt");
    for (size_t j = 0; j < 4; j++) {
        okeys[j] = okey[j];
        ins[j] = pt + j * bs;
        outs[j] = ct + j * bs;
    }
    OK(kuai_ecb_encrypt_oneshot_multi(c, okeys, ks, ins, outs, 4, bs), "oneshot multi encrypt");
    PUBLIC(ct, 4 * bs);
    for (size_t j = 0; j < 4; j++)
        ins[j] = ct + j * bs, outs[j] = buf + j * bs;
    OK(kuai_ecb_decrypt_oneshot_multi(c, okeys, ks, ins, outs, 4, bs), "oneshot multi decrypt");
    unsetenv("KUAI_BACKEND");
    unsetenv("KUAI_ALLOW_LEAKY_BACKENDS");
    kuai_registry_reload();
    kuai_key_wipe(&k);
}

/* Every GHASH backend usable here, driven directly: GCM above only reaches
 * the best one. */
static unsigned run_ghash(void)
{
    unsigned bad = 0;
    static _Alignas(64) unsigned char hkey[GHASH_KEY_BYTES];
    for (const ghash_impl *const *g = kuai_ghash_impls(); *g; g++) {
        if (!(*g)->available())
            continue;
        uint8_t h[16], y[16] = {0};
        fill(h, 16);
        SECRET(h, 16);
        fill(pt, 16 * 37);
        SECRET(pt, 16 * 37);
        unsigned before = VALGRIND_COUNT_ERRORS;
        (*g)->init(hkey, h);
        (*g)->update(hkey, y, pt, 1);
        (*g)->update(hkey, y, pt + 16, 36);
        unsigned leaks = VALGRIND_COUNT_ERRORS - before;
        printf("ghash   %-10s %s\n", (*g)->name, leaks ? "LEAKS" : "constant time");
        bad += leaks != 0;
    }
    return bad;
}

/* The OpenSSL provider's TLS CBC record unpadding (provider/kuai_prov_tls.c):
 * the decrypted record secret, every length class of padding (good, bad,
 * longer than the record) and MAC (none, SHA-1's, SHA-256's, SHA-384's, the
 * longest); its verdict, length and MAC are what libssl gets, made public
 * after the call. Returns 1 if memcheck saw a leak. */
static unsigned run_tls_unpad(void)
{
    static const size_t macs[] = {0, 20, 32, 48, KP_TLS_MAC_MAX};
    unsigned before = VALGRIND_COUNT_ERRORS;
    uint8_t rec[600], rnd[KP_TLS_MAC_MAX], mac[KP_TLS_MAC_MAX];
    for (size_t mi = 0; mi < sizeof macs / sizeof macs[0]; mi++)
        for (size_t len = macs[mi] + 1; len <= 600; len += 37) {
            for (int kind = 0; kind < 3; kind++) {
                fill(rec, len);
                fill(rnd, sizeof rnd);
                size_t pad = kind == 2 ? 255 : (size_t)rec[0] % 40;
                for (size_t i = 0; i <= pad && i < len; i++)
                    rec[len - 1 - i] = (uint8_t)pad;
                if (kind == 1 && pad > 0 && pad < len)
                    rec[len - 1 - pad] ^= 1;
                SECRET(rec, len);
                size_t data_len;
                size_t good = kp_tls_cbc_unpad(rec, len, macs[mi], rnd, &data_len, mac);
                PUBLIC(&good, sizeof good);
                PUBLIC(&data_len, sizeof data_len);
                PUBLIC(mac, macs[mi]);
                if (data_len > len)
                    usage_errors++;
            }
        }
    unsigned leaks = VALGRIND_COUNT_ERRORS - before;
    printf("%-24s %s\n", "provider TLS CBC unpad",
           leaks ? "LEAKS (see the memcheck report above)" : "constant time");
    return leaks != 0;
}

int main(void)
{
    if (!RUNNING_ON_VALGRIND) {
        fprintf(stderr, "test-ct: run me under valgrind (make test-ct does)\n");
        return 2;
    }
    kuai_cipher ciphers[64];
    size_t nciphers = kuai_ciphers(ciphers, 64);
    if (nciphers > 64)
        nciphers = 64;
    unsigned failures = 0, caught = 0, leaky_run = 0, ran = 0;
    /* KUAI_CT_BACKEND=NAME: that backend alone (make test-ct's runs after
     * the first: avx2 and avx512 as other kinds of core, e.g. avx2 with
     * KUAI_YMM_SPLIT=1, the paths taken where ymm is split) */
    const char *only = getenv("KUAI_CT_BACKEND");
    /* Two passes so that the leaky backends run last: memcheck reports a
     * site once, and a shared mode-code site must be blamed on the first
     * backend that reaches it. */
    for (int pass = 0; pass < 2; pass++) {
        for (size_t ci = 0; ci < nciphers; ci++) {
            kuai_cipher c = ciphers[ci];
            const char *names[16];
            size_t n = kuai_backends(c, names, 16);
            if (n > 16)
                n = 16;
            if (n == 0)
                printf("%-15s (no backend in this build: skipped)\n", kuai_cipher_name(c));
            for (size_t b = 0; b < n; b++) {
                if (is_leaky(names[b]) != pass || (only && strcmp(names[b], only) != 0))
                    continue;
                unsigned before = VALGRIND_COUNT_ERRORS;
                run_modes(c, names[b]);
                unsigned leaks = VALGRIND_COUNT_ERRORS - before;
                ran++;
                if (pass == 0) {
                    printf("%-15s %-8s %s\n", kuai_cipher_name(c), names[b],
                           leaks ? "LEAKS (see the memcheck report above)" : "constant time");
                    failures += leaks != 0;
                } else {
                    leaky_run++;
                    printf("%-15s %-8s %s\n", kuai_cipher_name(c), names[b],
                           leaks ? "caught (not constant time, as documented)"
                                 : "NOT CAUGHT: the check failed to see a known leak");
                    caught += leaks != 0;
                }
            }
        }
        if (pass == 0 && !only) {
            failures += run_ghash();
            failures += run_tls_unpad();
        }
    }
    if (usage_errors)
        fprintf(stderr, "test-ct: %d library calls failed\n", usage_errors);
    /* the known leak is looked for when every backend runs */
    int ok = failures == 0 && caught == leaky_run && (only ? ran > 0 : leaky_run > 0) &&
             usage_errors == 0;
    printf("test-ct: %u backend runs, %u leaking where constant time is promised, %u/%u known "
           "leaks caught: %s\n",
           ran, failures, caught, leaky_run, ok ? "PASS" : "FAIL");
    return ok ? 0 : 1;
}
