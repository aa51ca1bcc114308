/* SPDX-License-Identifier: Apache-2.0 */
/* The one-shot ECB calls against key setup + kuai_ecb_* on the portable
 * backend: every cipher, 0..64 blocks, in place and out, 1..33 keys; and
 * kuai_key_init_multi against one key setup per key; run once per backend,
 * chosen through KUAI_BACKEND as kuai_key_init would (uBlock's x86
 * backends take their own one-shot path and set keys up in pairs). */
#include "test_util.h"

#include "aes/aes.h"       /* aes_sched_const: the rows to search the stack for */
#include "internal.h"      /* kuai_registry_reload */
#include "ublock/ublock.h" /* UBLOCK_MAX_ROUNDS */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void oneshot_single(kuai_cipher c)
{
    size_t bs = kuai_block_size(c), kl = kuai_key_size(c);
    uint8_t key[32], in[64 * 32], got[64 * 32], want[64 * 32];
    kuai_key k;
    for (size_t nb = 0; nb <= 64; nb++) {
        size_t len = nb * bs;
        rng_fill(key, sizeof key);
        rng_fill(in, len);
        CHECK_RC(kuai_key_init_backend(&k, c, key, kl, "ref"), KUAI_OK, "ref key");
        for (int enc = 0; enc < 2; enc++) {
            CHECK_RC(enc ? kuai_ecb_encrypt(&k, in, want, len)
                         : kuai_ecb_decrypt(&k, in, want, len),
                     KUAI_OK, "ref ecb");
            int r = enc ? kuai_ecb_encrypt_oneshot(c, key, kl, in, got, len)
                        : kuai_ecb_decrypt_oneshot(c, key, kl, in, got, len);
            CHECK_RC(r, KUAI_OK, "oneshot");
            CHECK_MEM(got, want, len, enc ? "oneshot enc" : "oneshot dec");
            memcpy(got, in, len); /* in place */
            r = enc ? kuai_ecb_encrypt_oneshot(c, key, kl, got, got, len)
                    : kuai_ecb_decrypt_oneshot(c, key, kl, got, got, len);
            CHECK_RC(r, KUAI_OK, "oneshot in place");
            CHECK_MEM(got, want, len, enc ? "oneshot enc in place" : "oneshot dec in place");
        }
        kuai_key_wipe(&k);
    }
    /* Refusals, nothing written. */
    memset(got, 0x5a, bs);
    CHECK_RC(kuai_ecb_encrypt_oneshot(c, key, kl + 1, in, got, bs), KUAI_ERR_KEY_LEN, "key len");
    CHECK_RC(kuai_ecb_encrypt_oneshot(c, key, kl, in, got, bs + 1), KUAI_ERR_LENGTH, "length");
    CHECK_RC(kuai_ecb_encrypt_oneshot(c, NULL, kl, in, got, bs), KUAI_ERR_ARG, "NULL key");
    CHECK_RC(kuai_ecb_encrypt_oneshot(c, key, kl, in, in + 1, bs), KUAI_ERR_ARG, "overlap");
    CHECK(got[0] == 0x5a && got[bs - 1] == 0x5a, "refused oneshot wrote its output");
}

static void oneshot_multi(kuai_cipher c)
{
    enum { MAXN = 33, MAXB = 40 };
    size_t bs = kuai_block_size(c), kl = kuai_key_size(c);
    static uint8_t keys[MAXN][32], in[MAXN][MAXB * 32], got[MAXN][MAXB * 32], want[MAXN][MAXB * 32];
    const uint8_t *kp[MAXN], *ip[MAXN];
    uint8_t *op[MAXN];
    kuai_key k;
    for (size_t n = 1; n <= MAXN; n += (t_short ? 4 : 1)) {
        /* odd n: 1..4 blocks in turn (the hooks' between-the-rounds paths
         * and one-block lanes), even n: 0..40 (their stored-schedule paths,
         * past the hook's limit) */
        size_t len = (n & 1 ? 1 + (n / 4) % 4 : rng_below(MAXB + 1)) * bs;
        for (int enc = 0; enc < 2; enc++) {
            for (size_t i = 0; i < n; i++) {
                rng_fill(keys[i], 32);
                rng_fill(in[i], len);
                kp[i] = keys[i];
                ip[i] = in[i];
                op[i] = got[i];
                CHECK_RC(kuai_key_init_backend(&k, c, keys[i], kl, "ref"), KUAI_OK, "ref key");
                CHECK_RC(enc ? kuai_ecb_encrypt(&k, in[i], want[i], len)
                             : kuai_ecb_decrypt(&k, in[i], want[i], len),
                         KUAI_OK, "ref ecb");
            }
            int r = enc ? kuai_ecb_encrypt_oneshot_multi(c, kp, kl, ip, op, n, len)
                        : kuai_ecb_decrypt_oneshot_multi(c, kp, kl, ip, op, n, len);
            CHECK_RC(r, KUAI_OK, "oneshot multi");
            for (size_t i = 0; i < n; i++)
                CHECK_MEM(got[i], want[i], len, enc ? "oneshot multi enc" : "oneshot multi dec");
            /* in place: every stream's input is its output */
            for (size_t i = 0; i < n; i++) {
                memcpy(got[i], in[i], len);
                ip[i] = got[i];
            }
            r = enc ? kuai_ecb_encrypt_oneshot_multi(c, kp, kl, ip, op, n, len)
                    : kuai_ecb_decrypt_oneshot_multi(c, kp, kl, ip, op, n, len);
            CHECK_RC(r, KUAI_OK, "oneshot multi in place");
            for (size_t i = 0; i < n; i++)
                CHECK_MEM(got[i], want[i], len,
                          enc ? "oneshot multi enc in place" : "oneshot multi dec in place");
        }
    }
    kuai_key_wipe(&k);
    /* A bad stream anywhere: refused before any stream is written. */
    for (size_t i = 0; i < 4; i++) {
        memset(got[i], 0x5a, bs);
        kp[i] = keys[i];
        ip[i] = in[i];
        op[i] = got[i];
    }
    op[3] = (uint8_t *)in[3] + 1;
    CHECK_RC(kuai_ecb_encrypt_oneshot_multi(c, kp, kl, ip, op, 4, bs), KUAI_ERR_ARG, "overlap");
    kp[3] = NULL;
    op[3] = got[3];
    CHECK_RC(kuai_ecb_encrypt_oneshot_multi(c, kp, kl, ip, op, 4, bs), KUAI_ERR_ARG, "NULL key");
    CHECK(got[0][0] == 0x5a && got[2][bs - 1] == 0x5a, "refused oneshot multi wrote an output");
}

/* A few blocks per key: one block with every n of 1..33 (uBlock's hooks'
 * groups of every width: 1..4 keys per pass, 2 for 256-bit blocks, each
 * direction's kept-keys and between-the-rounds forms), and 2..4 blocks with
 * every n of 1..9 (AES-NI's decryption: 4 keys of 1-2 blocks a group, 2 of
 * 3-4, and the keys left after them), in place and out, against ref. */
static void oneshot_multi_few_blocks(kuai_cipher c)
{
    enum { MAXN = 33, MAXB = 4 };
    size_t bs = kuai_block_size(c), kl = kuai_key_size(c);
    uint8_t keys[MAXN][32], in[MAXN][MAXB * 32], got[MAXN][MAXB * 32], want[MAXN][MAXB * 32];
    const uint8_t *kp[MAXN], *ip[MAXN];
    uint8_t *op[MAXN];
    kuai_key k;
    for (size_t nb = 1; nb <= MAXB; nb++)
        for (size_t n = 1; n <= (nb == 1 ? MAXN : 9); n++)
            for (int enc = 0; enc < 2; enc++)
                for (int inplace = 0; inplace < 2; inplace++) {
                    size_t len = nb * bs;
                    for (size_t i = 0; i < n; i++) {
                        rng_fill(keys[i], 32);
                        rng_fill(in[i], len);
                        CHECK_RC(kuai_key_init_backend(&k, c, keys[i], kl, "ref"), KUAI_OK,
                                 "ref key");
                        CHECK_RC(enc ? kuai_ecb_encrypt(&k, in[i], want[i], len)
                                     : kuai_ecb_decrypt(&k, in[i], want[i], len),
                                 KUAI_OK, "ref ecb");
                        if (inplace)
                            memcpy(got[i], in[i], len);
                        kp[i] = keys[i];
                        ip[i] = inplace ? got[i] : in[i];
                        op[i] = got[i];
                    }
                    int r = enc ? kuai_ecb_encrypt_oneshot_multi(c, kp, kl, ip, op, n, len)
                                : kuai_ecb_decrypt_oneshot_multi(c, kp, kl, ip, op, n, len);
                    CHECK_RC(r, KUAI_OK, "oneshot multi, 1-4 blocks");
                    for (size_t i = 0; i < n; i++)
                        CHECK_MEM(got[i], want[i], len,
                                  enc ? "oneshot multi enc, 1-4 blocks"
                                      : "oneshot multi dec, 1-4 blocks");
                }
    kuai_key_wipe(&k);
}

/* kuai_key_init_multi (the environment's backend, as kuai_key_init) and
 * kuai_key_init_multi_backend (backend be) against one kuai_key_init_backend
 * per key on the portable backend: n of 1..9 (fours, pairs and a key alone),
 * structs full of a pattern first, each key then run short (the
 * low-latency kernel's form) and long (the wide kernel's, derived from
 * it) both ways and through CBC; a struct twice in one call holds the
 * later key; a refused call writes no struct. */
static void key_init_multi(kuai_cipher c, const char *be)
{
    enum { MAXN = 9, NB = 64 };
    const size_t bs = kuai_block_size(c), kl = kuai_key_size(c);
    static kuai_key keys[MAXN], ref;
    static uint8_t kb[MAXN][32], in[NB * 32], got[NB * 32], want[NB * 32];
    static const size_t nbs[] = {1, 3, 4, 9, NB};
    kuai_key *kp[MAXN];
    const uint8_t *kbp[MAXN];
    for (size_t n = 1; n <= MAXN; n++) {
        for (int named = 0; named < 2; named++) {
            for (size_t i = 0; i < n; i++) {
                memset(&keys[i], 0xa5, sizeof keys[i]);
                rng_fill(kb[i], 32);
                kp[i] = &keys[i];
                kbp[i] = kb[i];
            }
            int r = named ? kuai_key_init_multi_backend(kp, c, kbp, kl, n, be)
                          : kuai_key_init_multi(kp, c, kbp, kl, n);
            if (!CHECK_RC(r, KUAI_OK, "key init multi"))
                continue;
            for (size_t i = 0; i < n; i++) {
                const char *kbe = kuai_key_backend(&keys[i]);
                CHECK(kbe && strcmp(kbe, be) == 0, "key init multi: key %zu has backend %s, not %s",
                      i, kbe ? kbe : "(none)", be);
                CHECK_RC(kuai_key_init_backend(&ref, c, kb[i], kl, "ref"), KUAI_OK, "ref key");
                for (size_t j = 0; j < sizeof nbs / sizeof nbs[0]; j++) {
                    const size_t len = nbs[j] * bs;
                    uint8_t iv_got[32], iv_want[32];
                    rng_fill(in, len);
                    for (int enc = 0; enc < 2; enc++) {
                        CHECK_RC(enc ? kuai_ecb_encrypt(&ref, in, want, len)
                                     : kuai_ecb_decrypt(&ref, in, want, len),
                                 KUAI_OK, "ref ecb");
                        CHECK_RC(enc ? kuai_ecb_encrypt(&keys[i], in, got, len)
                                     : kuai_ecb_decrypt(&keys[i], in, got, len),
                                 KUAI_OK, "ecb");
                        CHECK_MEM(got, want, len,
                                  enc ? "key init multi: ecb enc" : "key init multi: ecb dec");
                    }
                    rng_fill(iv_want, 32);
                    memcpy(iv_got, iv_want, 32);
                    CHECK_RC(kuai_cbc_encrypt(&ref, iv_want, in, want, len), KUAI_OK, "ref cbc");
                    CHECK_RC(kuai_cbc_encrypt(&keys[i], iv_got, in, got, len), KUAI_OK, "cbc");
                    CHECK_MEM(got, want, len, "key init multi: cbc enc");
                }
            }
        }
    }
    /* A struct twice: {A, A, B, A} from keys 0..3 leaves A with key 3,
     * B with key 2; {A, A} (one pair) leaves A with key 1. */
    for (int form = 0; form < 2; form++) {
        const size_t n = form ? 2 : 4;
        for (size_t i = 0; i < n; i++) {
            rng_fill(kb[i], 32);
            kbp[i] = kb[i];
            kp[i] = &keys[i == 2 ? 1 : 0];
        }
        if (!CHECK_RC(kuai_key_init_multi_backend(kp, c, kbp, kl, n, be), KUAI_OK,
                      "key init multi, a struct twice"))
            continue;
        for (int w = 0; w < (form ? 1 : 2); w++) {
            const size_t from = form ? 1 : w ? 2 : 3;
            rng_fill(in, 4 * bs);
            CHECK_RC(kuai_key_init_backend(&ref, c, kb[from], kl, "ref"), KUAI_OK, "ref key");
            CHECK_RC(kuai_ecb_encrypt(&ref, in, want, 4 * bs), KUAI_OK, "ref ecb");
            CHECK_RC(kuai_ecb_encrypt(&keys[w], in, got, 4 * bs), KUAI_OK, "ecb");
            CHECK_MEM(got, want, 4 * bs, "key init multi: a struct twice holds the later key");
        }
    }
    /* Refused (a NULL key, the wrong length, no keys): no struct written. */
    for (size_t i = 0; i < 4; i++) {
        memset(&keys[i], 0x5a, sizeof keys[i]);
        kp[i] = &keys[i];
        kbp[i] = kb[i];
    }
    kbp[3] = NULL;
    CHECK_RC(kuai_key_init_multi_backend(kp, c, kbp, kl, 4, be), KUAI_ERR_ARG, "NULL key bytes");
    kbp[3] = kb[3];
    CHECK_RC(kuai_key_init_multi_backend(kp, c, kbp, kl + 1, 4, be), KUAI_ERR_KEY_LEN, "key len");
    CHECK_RC(kuai_key_init_multi_backend(kp, c, kbp, kl, 0, be), KUAI_ERR_ARG, "n 0");
    CHECK_RC(kuai_key_init_multi_backend(kp, c, kbp, kl, 4, "no-such-backend"), KUAI_ERR_BACKEND,
             "unknown backend");
    for (size_t i = 0; i < 4; i++) {
        const uint8_t *b = (const uint8_t *)&keys[i];
        size_t changed = 0;
        for (size_t o = 0; o < sizeof keys[i]; o++)
            changed += b[o] != 0x5a;
        CHECK(changed == 0, "refused key init multi wrote %zu bytes of struct %zu", changed, i);
    }
    for (size_t i = 0; i < MAXN; i++)
        kuai_key_wipe(&keys[i]);
    kuai_key_wipe(&ref);
}

/* sched_bytes bounds what a backend writes into a key, and it is all the
 * one-shot call's generic path wipes: a write past it would leave key
 * material on the stack. Each backend sets up random keys over a patterned
 * kuai_key and runs every single-key call the key serves; past sched_bytes
 * the pattern must stand, and before it the schedule must have gone in. */
static void sched_bytes_bound(void)
{
    kuai_key *k = malloc(sizeof *k);
    uint8_t *buf = malloc(64 * 32 + 32), key[32], iv[32];
    if (!CHECK(k && buf, "out of memory")) {
        free(k);
        free(buf);
        return;
    }
    const size_t sched = sizeof k->priv_sched;
    for (size_t ci = 0; ci < ALL_CIPHERS_N; ci++) {
        const kuai_cipher c = all_ciphers[ci];
        const size_t bs = kuai_block_size(c), len = 64 * bs;
        const kuai_impl *const *impls = kuai_impls(c);
        for (size_t i = 0; impls[i]; i++) {
            const kuai_impl *p = impls[i];
            if (!p->available() || (t_only_backend && strcmp(p->name, t_only_backend) != 0))
                continue;
            if (!p->sched_bytes) /* the whole key (uBlock's lazy masks) */
                continue;
            char what[96];
            snprintf(what, sizeof what, "%s/%s", kuai_cipher_name(c), p->name);
            if (!CHECK(p->sched_bytes <= sched, "%s: sched_bytes %zu past the key's %zu", what,
                       p->sched_bytes, sched))
                continue;
            static const uint8_t pats[] = {0xa5, 0x5a};
            for (size_t pi = 0; pi < sizeof pats; pi++) {
                const uint8_t pat = pats[pi];
                const uint8_t *sb = (const uint8_t *)k->priv_sched;
                memset(k, pat, sizeof *k);
                rng_fill(key, sizeof key);
                rng_fill(buf, len);
                rng_fill(iv, sizeof iv);
                CHECK_RC(kuai_key_init_backend(k, c, key, kuai_key_size(c), p->name), KUAI_OK,
                         "key");
                CHECK_RC(kuai_ecb_encrypt(k, buf, buf, len), KUAI_OK, "ecb enc");
                CHECK_RC(kuai_ecb_decrypt(k, buf, buf, len), KUAI_OK, "ecb dec");
                CHECK_RC(kuai_cbc_encrypt(k, iv, buf, buf, len), KUAI_OK, "cbc enc");
                CHECK_RC(kuai_cbc_decrypt(k, iv, buf, buf, len), KUAI_OK, "cbc dec");
                CHECK_RC(kuai_ctr_crypt(k, iv, buf, buf, len), KUAI_OK, "ctr");
                size_t past = 0, inside = 0;
                for (size_t b = p->sched_bytes; b < sched; b++)
                    past += sb[b] != pat;
                for (size_t b = 0; b < p->sched_bytes; b++)
                    inside += sb[b] != pat;
                CHECK(past == 0, "%s: wrote %zu key bytes past sched_bytes (%zu)", what, past,
                      p->sched_bytes);
                CHECK(inside > p->sched_bytes / 4, "%s: wrote only %zu of %zu key bytes", what,
                      inside, p->sched_bytes);
            }
        }
    }
    kuai_wipe(k, sizeof *k);
    free(k);
    free(buf);
}

/* The one-shot calls promise that nothing of their schedule is left once
 * they return (include/kuai.h). The stack below the caller is searched
 * after each call (stack_holds) for 16-byte pieces of every key's
 * schedule: for AES, every inner row of the encryption and decryption
 * schedules (aes.h's rk and drk, the forms its kernels load); for every
 * cipher, each piece of the backend's own stored key (its kernels' forms,
 * uBlock's bitsliced masks among them: the key set up and used for 64
 * blocks each way) that is not a constant-looking row, and the raw key.
 * One key's, two, three or four keys' blocks through each path: 1-5 (the
 * hooks' short paths and AES's stored rows), 8-32 (the hooks' groups),
 * 33-1,000 (the generic path and the backends' wide kernels). Found so:
 * AES-NI's and VAES's decryption had left 8-10 rows; ssse3's and avx2's
 * uBlock one-shot kernels up to 30 pieces, 15 KiB below the caller (both
 * 2026-12-06; src/ublock/ublock_ll_oneshot.h); once three keys ran too,
 * avx2's and avx512's three-lane uBlock kernels 3-10 (2026-12-07). Unoptimised builds (make
 * test-sanitize's -O0) keep every value in a stack slot, in frames deeper
 * than the library's wipes reach (rows were found 9-15 KiB below the
 * caller): the check runs where the compiler optimises (the suite's own
 * build, -O2; make test-portable's -Os; the cross builds). */
#ifdef __OPTIMIZE__
static __attribute__((noinline)) int oneshot_call(kuai_cipher c, const uint8_t *const *keys,
                                                  size_t kl, const uint8_t *const *in,
                                                  uint8_t *const *out, size_t n, size_t len,
                                                  int enc)
{
    if (n == 1)
        return enc ? kuai_ecb_encrypt_oneshot(c, keys[0], kl, in[0], out[0], len)
                   : kuai_ecb_decrypt_oneshot(c, keys[0], kl, in[0], out[0], len);
    return enc ? kuai_ecb_encrypt_oneshot_multi(c, keys, kl, in, out, n, len)
               : kuai_ecb_decrypt_oneshot_multi(c, keys, kl, in, out, n, len);
}

/* A piece worth searching for: at least 5 distinct byte values and at
 * most 4 zero bytes, or only 0x00 and 0xff bytes (the bitsliced masks: one
 * byte a key bit) in at least 6 runs, so that the rows of zeros, of one
 * repeated byte and the plain masks the kernels' own tables and padding
 * hold (ffffffff00000000 repeated) are not taken for the key's; and not a
 * piece of a control key's schedule (residue_pieces' ctl), which would be
 * the layout's. The zeros' bound: a piece of 12 zero bytes and 4 of a
 * nibble row (a row's end beside its padding) carries 16 bits, and a block
 * state in nibble form on the stack matched one by chance in about one run
 * of this group in 12. */
static int piece_is_keyish(const uint8_t *p)
{
    uint8_t seen[256] = {0};
    int distinct = 0, runs = 1;
    for (int i = 0; i < 16; i++) {
        distinct += !seen[p[i]]++;
        runs += i > 0 && p[i] != p[i - 1];
    }
    if (distinct >= 5)
        return seen[0] <= 4;
    return distinct == 2 && seen[0] && seen[0xff] && runs >= 6;
}

enum { RESIDUE_NK = 4, RESIDUE_MAXB = 1000, RESIDUE_MAXP = 16384 };

static int piece_cmp(const void *a, const void *b)
{
    return memcmp(a, b, 16);
}

/* p among the n pieces at set (sorted) */
static int piece_in(const uint8_t *p, const uint8_t *set, size_t n)
{
    return n && bsearch(p, set, n, 16, piece_cmp) != NULL;
}

/* ublock_ll_oneshot.h's ks_ll_forms, from the 128-bit uBlock backend
 * of its architecture (none in a KUAI_PORTABLE_ONLY build) */
#if defined(__x86_64__)
#define UB_KS_LL_FORMS ublock_ll_ssse3_ks_ll_forms
#elif defined(__aarch64__)
#define UB_KS_LL_FORMS ublock_ll_neon_ks_ll_forms
#elif defined(__loongarch64)
#define UB_KS_LL_FORMS ublock_ll_lsx_ks_ll_forms
#endif
#ifdef UB_KS_LL_FORMS
/* weak: a KUAI_PORTABLE_ONLY build (make test-portable) has no such
 * backend, and no one-shot hook for uBlock either */
__attribute__((weak)) void UB_KS_LL_FORMS(uint8_t *out, size_t nbytes, kuai_cipher c,
                                          const uint8_t *key);
#endif

/* key's pieces appended to pat (npat of them so far), those of the nctl
 * pieces at ctl left out; the new count */
static size_t residue_pieces(kuai_cipher c, const char *backend, const uint8_t *key, uint8_t *pat,
                             size_t npat, size_t maxp, uint8_t *buf, const uint8_t *ctl,
                             size_t nctl)
{
    const size_t kl = kuai_key_size(c), bs = kuai_block_size(c);
    kuai_key *k = xmalloc(sizeof *k);
#define RESIDUE_ADD(p)                                                                             \
    do {                                                                                           \
        if (npat < maxp && piece_is_keyish(p) && !piece_in((p), ctl, nctl))                        \
            memcpy(pat + 16 * npat++, (p), 16);                                                    \
    } while (0)
    if (c == KUAI_AES_128 || c == KUAI_AES_192 || c == KUAI_AES_256) {
        CHECK_RC(kuai_key_init_backend(k, c, key, kl, "ref"), KUAI_OK, "ref key");
        const aes_sched *s = aes_sched_const(k);
        for (uint32_t r = 1; r < s->nr; r++) {
            RESIDUE_ADD(s->rk[r]);
            RESIDUE_ADD(s->drk[r]);
        }
        kuai_key_wipe(k);
    }
    CHECK_RC(kuai_key_init_backend(k, c, key, kl, backend), KUAI_OK, "key");
    CHECK_RC(kuai_ecb_encrypt(k, buf, buf, 64 * bs), KUAI_OK, "ecb");
    CHECK_RC(kuai_ecb_decrypt(k, buf, buf, 64 * bs), KUAI_OK, "ecb");
    const kuai_impl *impl = kuai_key_impl(k);
    const size_t used = impl->sched_bytes ? impl->sched_bytes : sizeof k->priv_sched;
    const uint8_t *sb = (const uint8_t *)k->priv_sched;
    for (size_t off = 0; off + 16 <= used; off += 4)
        RESIDUE_ADD(sb + off);
    for (size_t off = 0; off + 16 <= kl; off++)
        RESIDUE_ADD(key + off);
#ifdef UB_KS_LL_FORMS
    /* the uBlock one-shot decryption's round keys (its frame's forms; the
     * same on every backend) */
    if ((c == KUAI_UBLOCK_128_128 || c == KUAI_UBLOCK_128_256 || c == KUAI_UBLOCK_256_256) &&
        UB_KS_LL_FORMS) {
        enum { FORMS = 2 * (UBLOCK_MAX_ROUNDS + 1) * 32 };
        uint8_t *f = xmalloc(FORMS);
        UB_KS_LL_FORMS(f, FORMS, c, key);
        for (size_t off = 0; off + 16 <= FORMS; off += 16)
            RESIDUE_ADD(f + off);
        memset(f, 0, FORMS);
        free(f);
    }
#endif
#undef RESIDUE_ADD
    kuai_key_wipe(k);
    free(k);
    return npat;
}

static void oneshot_residue(kuai_cipher c, const char *backend)
{
    enum { NK = RESIDUE_NK, MAXB = RESIDUE_MAXB };
    static const size_t nbs[] = {1, 2, 3, 4, 5, 8, 16, 32, 33, 64, 200, MAXB};
    static const size_t nks[] = {1, 2, 3, NK};
    const size_t kl = kuai_key_size(c), bs = kuai_block_size(c);
    uint8_t *keys = xmalloc(NK * 32), *buf = xmalloc(NK * MAXB * 32);
    uint8_t *pat = xmalloc(16 * RESIDUE_MAXP);
    size_t upto[NK]; /* the pieces of keys 0..j: upto[j] */
    const uint8_t *kp[NK], *ip[NK];
    uint8_t *op[NK];
    size_t npat = 0;
    rng_fill(keys, NK * 32);
    rng_fill(buf, NK * MAXB * 32);
    /* two control keys' pieces: what they share with the keys is not the
     * keys' */
    uint8_t *ctl = xmalloc(16 * RESIDUE_MAXP), ckey[32];
    size_t nctl = 0;
    for (int j = 0; j < 2; j++) {
        rng_fill(ckey, sizeof ckey);
        nctl = residue_pieces(c, backend, ckey, ctl, nctl, RESIDUE_MAXP, buf, NULL, 0);
    }
    qsort(ctl, nctl, 16, piece_cmp);
    for (size_t j = 0; j < NK; j++) {
        kp[j] = keys + 32 * j;
        ip[j] = op[j] = buf + MAXB * bs * j;
        npat = residue_pieces(c, backend, kp[j], pat, npat, RESIDUE_MAXP, buf, ctl, nctl);
        upto[j] = npat;
    }
    free(ctl);
    CHECK(upto[0] > 0, "%s %s: no pieces of the schedule to search for", kuai_cipher_name(c),
          backend);
    /* the most blocks a stream the backend's one-shot hook takes (0: no
     * hook; src/modes/oneshot.c's 32 unless it says fewer) */
    size_t hook_blocks = 0;
    const kuai_impl *const *impls = kuai_impls(c);
    for (size_t i = 0; impls[i]; i++)
        if (!strcmp(impls[i]->name, backend) && impls[i]->oneshot)
            hook_blocks = impls[i]->oneshot_blocks ? impls[i]->oneshot_blocks : 32;
    for (int enc = 0; enc < 2; enc++)
        for (size_t b = 0; b < sizeof nbs / sizeof nbs[0]; b++)
            for (size_t i = 0; i < sizeof nks / sizeof nks[0]; i++) {
                const size_t n = nks[i];
                if (t_short && (n == 2 || n == 3 || nbs[b] == MAXB))
                    continue;
                char what[160];
                snprintf(what, sizeof what, "%s %s one-shot %s, %zu key(s), %zu blocks",
                         kuai_cipher_name(c), backend, enc ? "encryption" : "decryption", n,
                         nbs[b]);
                stack_clear();
                CHECK_RC(oneshot_call(c, kp, kl, ip, op, n, nbs[b] * bs, enc), KUAI_OK, what);
                size_t depth = 0, found = stack_holds(pat, upto[n - 1], &depth);
                CHECK(found == 0,
                      "%s: %zu pieces of the schedule left on the stack (the deepest %zu bytes "
                      "below the caller)",
                      what, found, depth);
                /* the generic path (past the hooks' blocks,
                 * src/modes/oneshot.c) overwrites all its kernels' frames,
                 * whatever they hold */
                if (nbs[b] <= hook_blocks)
                    continue;
                stack_fill(0xa5);
                CHECK_RC(oneshot_call(c, kp, kl, ip, op, n, nbs[b] * bs, enc), KUAI_OK, what);
                size_t unwiped = stack_unwiped(0xa5);
                CHECK(unwiped == 0,
                      "%s: the kernels' frames reached %zu bytes below the caller, past the "
                      "overwrite",
                      what, unwiped);
            }
    free(pat);
    free(buf);
    free(keys);
}
#endif

void test_oneshot(void)
{
    group_begin("oneshot");
    sched_bytes_bound();
    const char *prev = getenv("KUAI_BACKEND");
    char *saved = prev ? strdup(prev) : NULL;
    /* Every backend, the leaky ttable one too: the environment may name it
     * only with the opt-in (include/kuai.h). */
    const char *prev_leaky = getenv("KUAI_ALLOW_LEAKY_BACKENDS");
    char *saved_leaky = prev_leaky ? strdup(prev_leaky) : NULL;
    /* The library reads both variables once per process; the registry's
     * test hook makes the next call read them again. */
    setenv("KUAI_ALLOW_LEAKY_BACKENDS", "1", 1);
    for (size_t i = 0; i < ALL_CIPHERS_N; i++) {
        const char *be[MAX_BACKENDS];
        size_t nbe = test_backends(all_ciphers[i], be, MAX_BACKENDS);
        for (size_t b = 0; b < nbe; b++) {
            setenv("KUAI_BACKEND", be[b], 1);
            kuai_registry_reload();
            oneshot_single(all_ciphers[i]);
            oneshot_multi(all_ciphers[i]);
            oneshot_multi_few_blocks(all_ciphers[i]);
            key_init_multi(all_ciphers[i], be[b]);
#ifdef __OPTIMIZE__
            oneshot_residue(all_ciphers[i], be[b]);
#endif
        }
    }
    if (saved)
        setenv("KUAI_BACKEND", saved, 1);
    else
        unsetenv("KUAI_BACKEND");
    if (saved_leaky)
        setenv("KUAI_ALLOW_LEAKY_BACKENDS", saved_leaky, 1);
    else
        unsetenv("KUAI_ALLOW_LEAKY_BACKENDS");
    kuai_registry_reload();
    free(saved);
    free(saved_leaky);
    group_end();
}
