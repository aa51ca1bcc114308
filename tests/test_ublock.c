/* SPDX-License-Identifier: Apache-2.0 */
/*
 * uBlock: the three vectors of the spec table through every backend, and
 * checks below the public API on the backend seam (src/internal.h,
 * src/ublock/ublock.h): the backend tables, the shared raw schedule every
 * backend must store (what lets keys of different backends share a
 * multi-key call), and each backend's kernels, multi-key ones included,
 * against ref's — the public calls may route only some sizes to a kernel.
 */
#include "test_util.h"

#include "ublock/ublock.h"
#include "vectors.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const kuai_cipher ublocks[3] = {KUAI_UBLOCK_128_128, KUAI_UBLOCK_128_256,
                                       KUAI_UBLOCK_256_256};

/* /work/shared/spec/ublock.md, section "Test vectors", the table of spec
 * vectors (plaintext and key are the fixed patterns shown there). */
static const struct {
    kuai_cipher c;
    const char *pt, *key, *ct;
} spec_vectors[3] = {
    {KUAI_UBLOCK_128_128, "0123456789abcdeffedcba9876543210", "0123456789abcdeffedcba9876543210",
     "32122bedd023c429023470e1158c147d"},
    {KUAI_UBLOCK_128_256, "0123456789abcdeffedcba9876543210",
     "0123456789abcdeffedcba9876543210000102030405060708090a0b0c0d0e0f",
     "64accd6e34cac84d384cd4ba7aeadd19"},
    {KUAI_UBLOCK_256_256, "0123456789abcdeffedcba9876543210000102030405060708090a0b0c0d0e0f",
     "0123456789abcdeffedcba9876543210000102030405060708090a0b0c0d0e0f",
     "d8e9351c5f4d27ea842135ca1640ad4b0ce119bc25c03e7c329ea8fe93e7bdfe"},
};

void test_ublock_spec(void)
{
    group_begin("uBlock spec vectors");
    for (size_t i = 0; i < 3; i++) {
        kat v;
        memset(&v, 0, sizeof v);
        v.mode = KAT_ECB;
        v.n = i + 1;
        v.file = "spec/ublock.md";
        if (!CHECK(hex_decode(spec_vectors[i].key, &v.key, &v.key_len) &&
                       hex_decode(spec_vectors[i].pt, &v.pt, &v.pt_len) &&
                       hex_decode(spec_vectors[i].ct, &v.ct, &v.ct_len),
                   "spec vector %zu: bad hex", i))
            continue;
        const char *be[MAX_BACKENDS];
        size_t nbe = test_backends(spec_vectors[i].c, be, MAX_BACKENDS);
        CHECK(nbe > 0 || t_only_backend, "%s: no usable backend at all",
              kuai_cipher_name(spec_vectors[i].c));
        for (size_t b = 0; b < nbe; b++)
            kat_run(&v, spec_vectors[i].c, be[b]);
        free(v.key);
        free(v.pt);
        free(v.ct);
    }
    group_end();
}

/* ---- below the API ------------------------------------------------------- */

static int selected(const char *name)
{
    return !t_only_backend || strcmp(name, t_only_backend) == 0;
}

/* The backend table of c: sane entries of c's family, highest priority
 * first, each name once, and kuai_backends lists exactly the available ones
 * in table order. */
static void check_table(kuai_cipher c)
{
    const char *cn = kuai_cipher_name(c), *listed[MAX_BACKENDS];
    const kuai_impl *const *impls = kuai_impls(c);
    size_t nlisted = usable_backends(c, listed, MAX_BACKENDS), avail = 0;
    int have_ref = 0;
    for (size_t i = 0; impls[i]; i++) {
        const kuai_impl *p = impls[i];
        CHECK(p->name && p->family == kuai_cipher_family(c) && p->available && p->expand &&
                  p->enc_blocks && p->dec_blocks,
              "%s: backend table entry %zu (%s) incomplete or for family %d", cn, i,
              p->name ? p->name : "(null)", (int)p->family);
        const int prev = i ? impls[i - 1]->priority : p->priority;
        CHECK(prev >= p->priority, "%s: backend %s (priority %d) after one of priority %d", cn,
              p->name, p->priority, prev);
        for (size_t j = 0; j < i; j++)
            CHECK(strcmp(impls[j]->name, p->name) != 0, "%s: two backends named %s", cn, p->name);
        CHECK(p->mk_lanes >= 1 && p->mk_lanes <= KUAI_MK_MAX_LANES && p->mk_setup && p->mk_enc &&
                  p->mk_dec,
              "%s/%s: mk_lanes %zu (want 1..%d) or a multi-key kernel missing", cn, p->name,
              p->mk_lanes, KUAI_MK_MAX_LANES);
        have_ref |= strcmp(p->name, "ref") == 0;
        if (p->available()) {
            CHECK(avail < nlisted && strcmp(listed[avail], p->name) == 0,
                  "%s: available backend %s is not number %zu of kuai_backends", cn, p->name,
                  avail);
            avail++;
        } else {
            /* Named but not usable on this CPU: setup must refuse it. */
            kuai_key k;
            uint8_t key[32] = {0};
            char what[96];
            snprintf(what, sizeof what, "%s: kuai_key_init_backend(%s), not available here", cn,
                     p->name);
            CHECK_RC(kuai_key_init_backend(&k, c, key, kuai_key_size(c), p->name), KUAI_ERR_BACKEND,
                     what);
        }
    }
    CHECK(avail == nlisted, "%s: %zu available backends in the table, kuai_backends lists %zu", cn,
          avail, nlisted);
    CHECK(have_ref, "%s: no \"ref\" backend in the table", cn);
}

/* Every backend's key gives the same raw schedule (the seam contract:
 * stored by ref, derived from the kernel form by ublock_rk_row for the
 * nibble key setup's keys) and stores the same kernel form (ref converts
 * its schedule, ublock_llk_from_rk); RK0 is the left n bits of the key
 * (spec, "Key schedule"). */
static void check_raw_schedule(kuai_cipher c, const char *backend)
{
    const char *cn = kuai_cipher_name(c);
    const size_t bs = kuai_block_size(c);
    const unsigned want_rounds = c == KUAI_UBLOCK_128_128 ? 16 : 24; /* spec member table */
    kuai_key *k = key_alloc(1), *r = key_alloc(1);
    for (int t = 0; t < 8; t++) {
        uint8_t key[32];
        rng_fill(key, sizeof key);
        if (!key_init_ok(k, c, key, backend) || !key_init_ok(r, c, key, "ref"))
            break;
        const ublock_sched *sk = ublock_sched_const(k), *sr = ublock_sched_const(r);
        if (!CHECK(sk->nbytes == bs && sk->rounds == want_rounds,
                   "%s/%s: schedule says %u-byte blocks, %u rounds (want %zu, %u)", cn, backend,
                   sk->nbytes, sk->rounds, bs, want_rounds))
            break;
        char kh[65], what[160];
        to_hex(kh, key, kuai_key_size(c));
        snprintf(what, sizeof what, "%s/%s key %s: RK0 = left n bits of the key", cn, backend, kh);
        uint8_t rowk[32], rowr[32];
        CHECK(sr->raw == 1, "%s/ref: the key does not say it holds the raw schedule", cn);
        CHECK_MEM(ublock_rk_row(sk, 0, rowk), key, bs, what);
        for (unsigned i = 0; i <= want_rounds; i++) {
            snprintf(what, sizeof what, "%s/%s key %s: raw RK%u differs from ref's", cn, backend,
                     kh, i);
            if (!CHECK_MEM(ublock_rk_row(sk, i, rowk), ublock_rk_row(sr, i, rowr), bs, what))
                break;
        }
        snprintf(what, sizeof what, "%s/%s key %s: kernel-form round keys differ from ref's", cn,
                 backend, kh);
        CHECK_MEM(ublock_llk(sk), ublock_llk(sr), 32 * (size_t)(want_rounds + 1), what);
    }
    kuai_key_wipe(k);
    kuai_key_wipe(r);
    free(k);
    free(r);
}

/* enc_blocks/dec_blocks/ctr_blocks for 1..100 blocks against ref's: past
 * three of the widest passes (32 uBlock-128 blocks on avx512), so that a
 * part pass beside one and two whole ones runs (ublock_bs.h's rest_in). */
static void check_kernels(kuai_cipher c, const kuai_impl *p, const kuai_impl *ref)
{
    const char *cn = kuai_cipher_name(c);
    const size_t bs = kuai_block_size(c), maxb = 100;
    kuai_key *k = key_alloc(1), *r = key_alloc(1);
    uint8_t key[32];
    rng_fill(key, sizeof key);
    int ok = key_init_ok(k, c, key, p->name) && key_init_ok(r, c, key, "ref");
    uint8_t *in = xmalloc(maxb * bs), *want = xmalloc(maxb * bs), *got = xmalloc(maxb * bs);
    char what[160];
    for (size_t nb = 1; ok && nb <= maxb; nb++) {
        const size_t len = nb * bs;
        rng_fill(in, len);
        for (int dec = 0; dec <= 1; dec++) {
            (dec ? ref->dec_blocks : ref->enc_blocks)(r, in, want, nb);
            (dec ? p->dec_blocks : p->enc_blocks)(k, in, got, nb);
            snprintf(what, sizeof what, "%s/%s %s_blocks(%zu)", cn, p->name, dec ? "dec" : "enc",
                     nb);
            CHECK_MEM(got, want, len, what);
            memcpy(got, in, len);
            (dec ? p->dec_blocks : p->enc_blocks)(k, got, got, nb);
            snprintf(what, sizeof what, "%s/%s %s_blocks(%zu) in place", cn, p->name,
                     dec ? "dec" : "enc", nb);
            CHECK_MEM(got, want, len, what);
        }
        if (p->ctr_blocks) {
            /* Counter tails of ff bytes (carry across bytes, 32/64/128-bit
             * words, the whole block), wrapping within the first blocks. */
            static const size_t tails[] = {0, 1, 4, 8, 16, 32};
            uint8_t ctr[KUAI_MAX_BLOCK], ctr_want[KUAI_MAX_BLOCK], ctr0[KUAI_MAX_BLOCK];
            size_t tail = tails[nb % 6] > bs ? bs : tails[nb % 6];
            rng_fill(ctr0, bs);
            memset(ctr0 + bs - tail, 0xff, tail);
            if (tail)
                ctr0[bs - 1] = (uint8_t)(0x100 - 1 - rng_below(nb));
            memcpy(ctr_want, ctr0, bs);
            model_ctr(r, bs, ctr_want, in, want, len);
            memcpy(ctr, ctr0, bs);
            p->ctr_blocks(k, ctr, in, got, nb);
            char ch[65];
            to_hex(ch, ctr0, bs);
            snprintf(what, sizeof what, "%s/%s ctr_blocks(%zu) ctr0=%s", cn, p->name, nb, ch);
            CHECK_MEM(got, want, len, what);
            snprintf(what, sizeof what, "%s/%s ctr_blocks(%zu) ctr0=%s: counter after", cn, p->name,
                     nb, ch);
            CHECK_MEM(ctr, ctr_want, bs, what);
        }
    }
    free(in);
    free(want);
    free(got);
    kuai_key_wipe(k);
    kuai_key_wipe(r);
    free(k);
    free(r);
}

/* mk_setup/mk_enc/mk_dec for every batch size 1..mk_lanes, keys of every
 * usable backend mixed, against ref's one-block kernels. */
static void check_mk_kernels(kuai_cipher c, const kuai_impl *p, const kuai_impl *ref)
{
    static kuai_mk mk; /* 32 KiB: not on the stack */
    const char *cn = kuai_cipher_name(c), *all[MAX_BACKENDS];
    const size_t bs = kuai_block_size(c), lanes = p->mk_lanes;
    const size_t nall = usable_backends(c, all, MAX_BACKENDS);
    if (lanes < 1 || lanes > KUAI_MK_MAX_LANES || !p->mk_setup)
        return; /* reported by check_table */
    kuai_key *kobj = key_alloc(lanes);
    const kuai_key *keys[KUAI_MK_MAX_LANES];
    uint8_t in[KUAI_MK_MAX_LANES * KUAI_MAX_BLOCK], want[sizeof in], got[sizeof in];
    char what[160];
    for (size_t i = 0; i < lanes; i++) {
        uint8_t key[32];
        rng_fill(key, sizeof key);
        key_init_ok(&kobj[i], c, key, all[i % nall]);
    }
    for (size_t n = 1; n <= lanes; n++) {
        for (size_t i = 0; i < n; i++)
            keys[i] = &kobj[(i * 7 + n) % lanes]; /* n > 7 repeats some keys */
        rng_fill(in, n * bs);
        p->mk_setup(&mk, keys, n);
        for (int dec = 0; dec <= 1; dec++) {
            for (size_t i = 0; i < n; i++)
                (dec ? ref->dec_blocks : ref->enc_blocks)(keys[i], in + i * bs, want + i * bs, 1);
            (dec ? p->mk_dec : p->mk_enc)(&mk, in, got, n);
            snprintf(what, sizeof what, "%s/%s mk_%s, %zu lanes", cn, p->name, dec ? "dec" : "enc",
                     n);
            CHECK_MEM(got, want, n * bs, what);
            memcpy(got, in, n * bs);
            (dec ? p->mk_dec : p->mk_enc)(&mk, got, got, n);
            snprintf(what, sizeof what, "%s/%s mk_%s, %zu lanes, in place", cn, p->name,
                     dec ? "dec" : "enc", n);
            CHECK_MEM(got, want, n * bs, what);
        }
    }
    for (size_t i = 0; i < lanes; i++)
        kuai_key_wipe(&kobj[i]);
    kuai_wipe(&mk, sizeof mk);
    free(kobj);
}

/* ---- the low-latency kernel and its dispatch ------------------------------ */

/* enc_blocks/dec_blocks/ctr_blocks (the low-latency kernel below the
 * crossover, the wide one above, tails split between them) for 0..64
 * blocks, whole and split in two calls at several points, against ref.
 * A fresh key per count, so the wide kernel's masks are built by whichever
 * call comes first (split calls start small). */
static void check_split_calls(kuai_cipher c, const kuai_impl *p, const kuai_impl *ref)
{
    const char *cn = kuai_cipher_name(c);
    const size_t bs = kuai_block_size(c), maxb = 64;
    kuai_key *k = key_alloc(1), *r = key_alloc(1);
    uint8_t *in = xmalloc(maxb * bs + 1), *want = xmalloc(maxb * bs), *got = xmalloc(maxb * bs);
    char what[160];
    for (size_t nb = 0; nb <= maxb; nb++) {
        uint8_t key[32];
        rng_fill(key, sizeof key);
        if (!key_init_ok(k, c, key, p->name) || !key_init_ok(r, c, key, "ref"))
            break;
        rng_fill(in, nb * bs);
        const size_t cuts[4] = {0, 1, nb / 2, nb ? nb - 1 : 0};
        for (int dec = 0; dec <= 1; dec++) {
            if (nb)
                (dec ? ref->dec_blocks : ref->enc_blocks)(r, in, want, nb);
            for (size_t ci = 0; ci < 4; ci++) {
                size_t a = cuts[ci] > nb ? nb : cuts[ci];
                memset(got, 0xa5, maxb * bs);
                if (a)
                    (dec ? p->dec_blocks : p->enc_blocks)(k, in, got, a);
                if (nb - a)
                    (dec ? p->dec_blocks : p->enc_blocks)(k, in + a * bs, got + a * bs, nb - a);
                snprintf(what, sizeof what, "%s/%s %s %zu blocks as %zu + %zu", cn, p->name,
                         dec ? "dec" : "enc", nb, a, nb - a);
                CHECK_MEM(got, want, nb * bs, what);
                CHECK(nb == maxb || got[nb * bs] == 0xa5, "%s: wrote past the end", what);
            }
        }
    }
    free(in);
    free(want);
    free(got);
    kuai_key_wipe(k);
    kuai_key_wipe(r);
    free(k);
    free(r);
}

/* cbc_enc_blocks (the chain in registers) over long chains, in place and
 * out, against ref's one block at a time. */
static void check_cbc_chain(kuai_cipher c, const kuai_impl *p, const kuai_impl *ref)
{
    if (!p->cbc_enc_blocks)
        return;
    const char *cn = kuai_cipher_name(c);
    const size_t bs = kuai_block_size(c), nb = t_short ? 300 : 3000;
    kuai_key *k = key_alloc(1), *r = key_alloc(1);
    uint8_t key[32], iv[32], ivw[32], *in = xmalloc(nb * bs), *want = xmalloc(nb * bs),
                                      *got = xmalloc(nb * bs);
    char what[160];
    rng_fill(key, sizeof key);
    rng_fill(iv, sizeof iv);
    rng_fill(in, nb * bs);
    if (key_init_ok(k, c, key, p->name) && key_init_ok(r, c, key, "ref")) {
        memcpy(ivw, iv, bs);
        for (size_t i = 0; i < nb; i++) {
            for (size_t j = 0; j < bs; j++)
                ivw[j] ^= in[i * bs + j];
            ref->enc_blocks(r, ivw, ivw, 1);
            memcpy(want + i * bs, ivw, bs);
        }
        for (int inplace = 0; inplace <= 1; inplace++) {
            uint8_t ivg[32];
            memcpy(ivg, iv, bs);
            if (inplace)
                memcpy(got, in, nb * bs);
            p->cbc_enc_blocks(k, ivg, inplace ? got : in, got, nb);
            snprintf(what, sizeof what, "%s/%s cbc_enc_blocks(%zu)%s", cn, p->name, nb,
                     inplace ? " in place" : "");
            CHECK_MEM(got, want, nb * bs, what);
            snprintf(what, sizeof what, "%s/%s cbc_enc_blocks(%zu): chain after", cn, p->name, nb);
            CHECK_MEM(ivg, ivw, bs, what);
        }
    }
    free(in);
    free(want);
    free(got);
    kuai_key_wipe(k);
    kuai_key_wipe(r);
    free(k);
    free(r);
}

/* The public multi-key calls with 1..33 streams of 1..8 blocks of this backend's keys
 * (few streams go to the low-latency narrow kernel, more to the wide one),
 * ECB and CBC both ways, against each stream alone on ref. mixed: key 0 is
 * this backend's (its kernels run the call), the others are set up by
 * every usable backend in turn, and every fourth is a memcpy of a key of
 * this backend (the round keys a key stores must survive a plain copy). */
static void check_multi_streams(kuai_cipher c, const kuai_impl *p, int mixed)
{
    enum { MAXN = 33, MAXB = 8 };
    const char *cn = kuai_cipher_name(c);
    const size_t bs = kuai_block_size(c), kl = kuai_key_size(c);
    kuai_key *k = key_alloc(MAXN), *r = key_alloc(1);
    static uint8_t in[MAXN][MAXB * 32], got[MAXN][MAXB * 32], want[MAXN][MAXB * 32];
    static uint8_t iv[MAXN][32], ivw[MAXN][32];
    const kuai_key *kp[MAXN];
    const uint8_t *ip[MAXN];
    uint8_t *op[MAXN], *ivp[MAXN];
    uint8_t keys[MAXN][32];
    char what[160];
    const char *all[MAX_BACKENDS];
    const size_t nall = usable_backends(c, all, MAX_BACKENDS);
    for (size_t i = 0; i < MAXN; i++) {
        rng_fill(keys[i], sizeof keys[i]);
        if (mixed && i % 4 == 3) {
            key_init_ok(r, c, keys[i], p->name);
            memcpy(&k[i], r, sizeof *r);
        } else {
            key_init_ok(&k[i], c, keys[i], mixed && i ? all[i % nall] : p->name);
        }
        kp[i] = &k[i];
        ip[i] = in[i];
        op[i] = got[i];
        ivp[i] = iv[i];
    }
    for (size_t n = 1; n <= MAXN; n += t_short ? 3 : 1) {
        size_t len = (1 + rng_below(MAXB)) * bs;
        for (int mode = 0; mode < 4; mode++) { /* ecb enc, ecb dec, cbc enc, cbc dec */
            for (size_t i = 0; i < n; i++) {
                rng_fill(in[i], len);
                rng_fill(iv[i], bs);
                memcpy(ivw[i], iv[i], bs);
                key_init_ok(r, c, keys[i], "ref");
                int rc = mode == 0   ? kuai_ecb_encrypt(r, in[i], want[i], len)
                         : mode == 1 ? kuai_ecb_decrypt(r, in[i], want[i], len)
                         : mode == 2 ? kuai_cbc_encrypt(r, ivw[i], in[i], want[i], len)
                                     : kuai_cbc_decrypt(r, ivw[i], in[i], want[i], len);
                CHECK_RC(rc, KUAI_OK, "ref stream");
            }
            int rc = mode == 0   ? kuai_ecb_encrypt_multi(kp, ip, op, n, len)
                     : mode == 1 ? kuai_ecb_decrypt_multi(kp, ip, op, n, len)
                     : mode == 2 ? kuai_cbc_encrypt_multi(kp, ivp, ip, op, n, len)
                                 : kuai_cbc_decrypt_multi(kp, ivp, ip, op, n, len);
            snprintf(what, sizeof what, "%s/%s %s multi%s, %zu streams of %zu blocks", cn, p->name,
                     mixed ? " (mixed, copied keys)" : "",
                     mode == 0   ? "ecb enc"
                     : mode == 1 ? "ecb dec"
                     : mode == 2 ? "cbc enc"
                                 : "cbc dec",
                     n, len / bs);
            CHECK_RC(rc, KUAI_OK, what);
            for (size_t i = 0; i < n; i++) {
                CHECK_MEM(got[i], want[i], len, what);
                if (mode >= 2)
                    CHECK_MEM(iv[i], ivw[i], bs, what);
            }
        }
    }
    (void)kl;
    for (size_t i = 0; i < MAXN; i++)
        kuai_key_wipe(&k[i]);
    kuai_key_wipe(r);
    free(k);
    free(r);
}

/* The oneshot hook against ref: 1..9 streams of 0..33 blocks (one block
 * per stream is the multi-key pass). */
static void check_oneshot_hook(kuai_cipher c, const kuai_impl *p, const kuai_impl *ref)
{
    if (!p->oneshot)
        return;
    enum { MAXN = 9, MAXB = 33 };
    const char *cn = kuai_cipher_name(c);
    const size_t bs = kuai_block_size(c), kl = kuai_key_size(c);
    static uint8_t keys[MAXN][32], in[MAXN][MAXB * 32], got[MAXN][MAXB * 32], want[MAXN][MAXB * 32];
    const uint8_t *kp[MAXN], *ip[MAXN];
    uint8_t *op[MAXN];
    kuai_key *r = key_alloc(1);
    char what[160];
    for (size_t n = 1; n <= MAXN; n++) {
        for (size_t nb = 0; nb <= MAXB; nb += (nb < 4 ? 1 : 7)) {
            for (int enc = 0; enc <= 1; enc++) {
                int inplace = (int)((n + nb) & 1);
                for (size_t i = 0; i < n; i++) {
                    rng_fill(keys[i], kl);
                    rng_fill(in[i], nb * bs);
                    kp[i] = keys[i];
                    key_init_ok(r, c, keys[i], "ref");
                    if (nb)
                        (enc ? ref->enc_blocks : ref->dec_blocks)(r, in[i], want[i], nb);
                    if (inplace)
                        memcpy(got[i], in[i], nb * bs);
                    ip[i] = inplace ? got[i] : in[i];
                    op[i] = got[i];
                }
                p->oneshot(c, kp, ip, op, n, nb, enc);
                snprintf(what, sizeof what, "%s/%s oneshot %s, %zu streams of %zu blocks%s", cn,
                         p->name, enc ? "enc" : "dec", n, nb, inplace ? ", in place" : "");
                for (size_t i = 0; i < n; i++)
                    CHECK_MEM(got[i], want[i], nb * bs, what);
            }
        }
    }
    kuai_key_wipe(r);
    free(r);
}

/* One fresh key, shared: threads race to the first bulk call, which builds
 * the wide kernel's masks lazily (one builds them in the key, the others
 * may use their own copy); every result must match ref. */
typedef struct race_arg {
    const kuai_key *k;
    const uint8_t *in;
    uint8_t out[64 * 32];
    size_t nb, bs;
} race_arg;

static void *race_run(void *p)
{
    race_arg *a = p;
    kuai_ecb_encrypt(a->k, a->in, a->out, a->nb * a->bs);
    return NULL;
}

static void check_lazy_race(kuai_cipher c, const kuai_impl *p)
{
    enum { NT = 4 };
    const char *cn = kuai_cipher_name(c);
    const size_t bs = kuai_block_size(c), nb = 64;
    kuai_key *k = key_alloc(1), *r = key_alloc(1);
    static race_arg args[NT];
    static uint8_t in[64 * 32], want[64 * 32];
    for (int t = 0; t < (t_short ? 4 : 40); t++) {
        uint8_t key[32];
        rng_fill(key, sizeof key);
        rng_fill(in, nb * bs);
        if (!key_init_ok(k, c, key, p->name) || !key_init_ok(r, c, key, "ref"))
            break;
        CHECK_RC(kuai_ecb_encrypt(r, in, want, nb * bs), KUAI_OK, "ref");
        pthread_t th[NT];
        for (int i = 0; i < NT; i++) {
            args[i].k = k;
            args[i].in = in;
            args[i].nb = nb;
            args[i].bs = bs;
            CHECK(pthread_create(&th[i], NULL, race_run, &args[i]) == 0, "pthread_create");
        }
        for (int i = 0; i < NT; i++) {
            pthread_join(th[i], NULL);
            char what[96];
            snprintf(what, sizeof what, "%s/%s first bulk call from %d threads", cn, p->name, NT);
            CHECK_MEM(args[i].out, want, nb * bs, what);
        }
    }
    kuai_key_wipe(k);
    kuai_key_wipe(r);
    free(k);
    free(r);
}

/*
 * A copy of a key taken while another thread's first bulk call builds its
 * masks (kuai.h forbids it; this is what a program that does it anyway
 * would get): a copy that ran backwards, or in any order that takes the
 * masks before the build ends and the state word after, holds a "built"
 * state over unbuilt masks. That interleaving, made in one thread: the
 * copy's bytes from before the build, its state word from after. The
 * state names the address it was built at (ublock.h), so the copy must
 * build masks of its own and agree with ref; a plain "built" flag would
 * make it encrypt with whatever its mask area held. Then a copy of the
 * built key made the allowed way (no call in flight) must agree too.
 */
static void check_stale_copy(kuai_cipher c, const kuai_impl *p)
{
    const char *cn = kuai_cipher_name(c);
    const size_t bs = kuai_block_size(c), nb = 64;
    kuai_key *k = key_alloc(1), *cp = key_alloc(1), *r = key_alloc(1);
    static uint8_t in[64 * 32], want[64 * 32], got[64 * 32];
    uint8_t key[32];
    char what[128];
    rng_fill(key, sizeof key);
    rng_fill(in, nb * bs);
    if (!key_init_ok(k, c, key, p->name) || !key_init_ok(r, c, key, "ref"))
        goto out;
    CHECK_RC(kuai_ecb_encrypt(r, in, want, nb * bs), KUAI_OK, "ref");
    memcpy(cp, k, sizeof *cp); /* the masks area before the build */
    CHECK_RC(kuai_ecb_encrypt(k, in, got, nb * bs), KUAI_OK, "first bulk call");
    ublock_sched *ks = ublock_sched_of(k), *cs = ublock_sched_of(cp);
    memcpy(&cs->masks, &ks->masks, sizeof cs->masks); /* the state after it */
    snprintf(what, sizeof what, "%s/%s copy taken during the first bulk call", cn, p->name);
    CHECK_RC(kuai_ecb_encrypt(cp, in, got, nb * bs), KUAI_OK, what);
    CHECK_MEM(got, want, nb * bs, what);
    memcpy(cp, k, sizeof *cp);
    snprintf(what, sizeof what, "%s/%s copy of a built key", cn, p->name);
    CHECK_RC(kuai_ecb_encrypt(cp, in, got, nb * bs), KUAI_OK, what);
    CHECK_MEM(got, want, nb * bs, what);
out:
    kuai_key_wipe(k);
    kuai_key_wipe(cp);
    kuai_key_wipe(r);
    free(k);
    free(cp);
    free(r);
}

/*
 * A key's first call below the cold crossover (ublock_ll_front.h's
 * UL_FRONT_COLD_BLOCKS: 48 uBlock-128 blocks, 40 of 256/256) runs on the
 * low-latency kernel and leaves the wide kernel's masks unbuilt
 * (UBLOCK_MASKS_DEFERRED); the key's next such call builds them; a first
 * call from the cold crossover up builds them at once. The block counts
 * lie above every backend's crossover, where a call with the masks built
 * takes the wide kernel. Every output agrees with ref, encryption and
 * decryption.
 */
static void check_cold_call(kuai_cipher c, const kuai_impl *p, const kuai_impl *ref)
{
    const char *cn = kuai_cipher_name(c);
    const size_t bs = kuai_block_size(c), cold = bs == 16 ? 48 : 40;
    const size_t nbs[] = {bs == 16 ? 24 : 16, cold - 1, cold};
    kuai_key *k = key_alloc(1), *r = key_alloc(1);
    static uint8_t in[64 * 32], want[64 * 32], got[64 * 32];
    char what[128];
    for (size_t i = 0; i < sizeof nbs / sizeof nbs[0]; i++) {
        const size_t nb = nbs[i], len = nb * bs;
        uint8_t key[32];
        rng_fill(key, sizeof key);
        if (!key_init_ok(k, c, key, p->name) || !key_init_ok(r, c, key, ref->name))
            break;
        const ublock_sched *s = ublock_sched_const(k);
        for (int call = 0; call < 2; call++) {
            const int enc = call == 0;
            rng_fill(in, len);
            CHECK_RC((enc ? kuai_ecb_encrypt : kuai_ecb_decrypt)(r, in, want, len), KUAI_OK, "ref");
            CHECK_RC((enc ? kuai_ecb_encrypt : kuai_ecb_decrypt)(k, in, got, len), KUAI_OK, "ecb");
            snprintf(what, sizeof what, "%s/%s, a fresh key's call %d of %zu blocks", cn, p->name,
                     call + 1, nb);
            CHECK_MEM(got, want, len, what);
            if (!p->oneshot) /* no low-latency front (ref) */
                continue;
            const uint32_t st = __atomic_load_n(&s->masks, __ATOMIC_ACQUIRE);
            const uint32_t expect =
                nb < cold && call == 0 ? UBLOCK_MASKS_DEFERRED : ublock_masks_ready(s);
            CHECK(st == expect, "%s: masks state %#x, not %#x", what, (unsigned)st,
                  (unsigned)expect);
        }
    }
    kuai_key_wipe(k);
    kuai_key_wipe(r);
    free(k);
    free(r);
}

/*
 * Round keys stored in the low-latency kernel's form (ublock.h,
 * UBLOCK_LLK_*): every key setup writes them (the nibble key setup only
 * them), and that kernel's calls (1..4 blocks, CBC encryption, the
 * multi-key short path) must read them: one flipped bit in a stored round
 * key must change every such call's output, and the key put back must
 * agree with ref again, as must a copy of the key at another alignment.
 */
static void check_stored_round_keys(kuai_cipher c, const kuai_impl *p, const kuai_impl *ref)
{
    const char *cn = kuai_cipher_name(c);
    const size_t bs = kuai_block_size(c);
    /* the backends with the nibble key setup (ublock_expand_nib.h), and of
     * them those with the kernel in front (avx512 fronts its wide kernel
     * with avx2's) */
    const int nib = strcmp(p->name, "ssse3") == 0 || strcmp(p->name, "avx2") == 0 ||
                    strcmp(p->name, "avx512") == 0 || strcmp(p->name, "neon") == 0 ||
                    strcmp(p->name, "lsx") == 0 || strcmp(p->name, "lasx") == 0;
    const int ll = nib && p->mk_short != NULL;
    /* k: the key under test; o: three more of this backend (multi-key
     * groups of 4 whose keys all stored theirs); r, ro: the same on ref */
    kuai_key *k = key_alloc(1), *o = key_alloc(3), *r = key_alloc(1), *ro = key_alloc(3);
    /* a copy of k at an address 8 mod 16 (a kuai_key needs only 8) */
    unsigned char *mis_buf = xmalloc(sizeof(kuai_key) + 16);
    kuai_key *mis = (kuai_key *)(void *)(mis_buf + ((24 - ((uintptr_t)mis_buf & 15)) & 15));
    uint8_t key[32], in[4 * 32], want[4 * 32], got[4 * 32], iv[32], ivw[32];
    char what[200];
    int ok = 1;
    for (int i = 0; i < 4; i++) {
        rng_fill(key, sizeof key);
        ok &= key_init_ok(i ? &o[i - 1] : k, c, key, p->name) &&
              key_init_ok(i ? &ro[i - 1] : r, c, key, "ref");
    }
    if (!ok)
        goto out;
    ublock_sched *s = ublock_sched_of(k);
    /* the nibble key setup leaves the raw schedule unwritten, ref writes it */
    CHECK(s->raw == !nib, "%s/%s: the key says raw = %u", cn, p->name, (unsigned)s->raw);
    if (!ll || !p->cbc_enc_blocks)
        goto out;
    uint8_t *llk = (uint8_t *)(uintptr_t)ublock_llk(s);
    const char *fn[3] = {"stored", "one stored bit flipped",
                         "stored, key copied to an address 8 mod 16"};
    for (int form = 0; form < 3; form++) {
        const unsigned round = 1 + (unsigned)rng_below(s->rounds), byte = (unsigned)rng_below(32);
        if (form == 1)
            llk[32 * round + byte] ^= 1;
        if (form == 2)
            memcpy(mis, k, sizeof *k);
        kuai_key *kk = form == 2 ? mis : k;
        int agree_all = 1, agree_any = 0;
        for (size_t nb = 1; nb <= 4; nb++) {
            rng_fill(in, nb * bs);
            /* 1..4 blocks: below every backend's crossover (the lowest is
             * 5), so the low-latency kernel */
            for (int dec = 0; dec <= 1; dec++) {
                (dec ? ref->dec_blocks : ref->enc_blocks)(r, in, want, nb);
                (dec ? p->dec_blocks : p->enc_blocks)(kk, in, got, nb);
                int same = memcmp(got, want, nb * bs) == 0;
                agree_all &= same;
                agree_any |= same;
            }
            /* CBC encryption, one chain */
            rng_fill(iv, bs);
            memcpy(ivw, iv, bs);
            CHECK_RC(kuai_cbc_encrypt(r, ivw, in, want, nb * bs), KUAI_OK, "ref cbc");
            p->cbc_enc_blocks(kk, iv, in, got, nb);
            int same = memcmp(got, want, nb * bs) == 0;
            agree_all &= same;
            agree_any |= same;
            /* the multi-key short path: nb streams of a block, kk's first */
            const kuai_key *kp[4] = {kk, &o[0], &o[1], &o[2]};
            const uint8_t *ip[4] = {in, in + bs, in + 2 * bs, in + 3 * bs};
            uint8_t *op[4] = {got, got + bs, got + 2 * bs, got + 3 * bs};
            for (int dec = 0; dec <= 1; dec++) {
                for (size_t i = 0; i < nb; i++)
                    (dec ? ref->dec_blocks : ref->enc_blocks)(i ? &ro[i - 1] : r, ip[i],
                                                              want + i * bs, 1);
                CHECK_RC(dec ? kuai_ecb_decrypt_multi(kp, ip, op, nb, bs)
                             : kuai_ecb_encrypt_multi(kp, ip, op, nb, bs),
                         KUAI_OK, "ecb multi");
                same = memcmp(got, want, bs) == 0; /* kk's stream */
                agree_all &= same && memcmp(got + bs, want + bs, (nb - 1) * bs) == 0;
                agree_any |= same;
            }
        }
        snprintf(what, sizeof what, "%s/%s low-latency calls, %s (round %u byte %u)", cn, p->name,
                 fn[form], round, byte);
        if (form == 1) {
            CHECK(!agree_any, "%s: some call did not read the stored round keys", what);
            llk[32 * round + byte] ^= 1;
        } else {
            CHECK(agree_all, "%s: differs from ref", what);
        }
    }
out:
    kuai_key_wipe(k);
    kuai_key_wipe(r);
    for (int i = 0; i < 3; i++) {
        kuai_key_wipe(&o[i]);
        kuai_key_wipe(&ro[i]);
    }
    free(k);
    free(o);
    free(r);
    free(ro);
    kuai_wipe(mis_buf, sizeof(kuai_key) + 16);
    free(mis_buf);
}

void test_ublock_backend_internals(void)
{
    group_begin("uBlock backend seam");
    for (size_t ci = 0; ci < 3; ci++) {
        kuai_cipher c = ublocks[ci];
        check_table(c);
        const kuai_impl *const *impls = kuai_impls(c), *ref = NULL;
        for (size_t i = 0; impls[i]; i++)
            if (strcmp(impls[i]->name, "ref") == 0)
                ref = impls[i];
        if (!ref)
            continue;
        for (size_t i = 0; impls[i]; i++) {
            const kuai_impl *p = impls[i];
            if (!p->available() || !selected(p->name))
                continue;
            check_raw_schedule(c, p->name);
            check_kernels(c, p, ref);
            check_mk_kernels(c, p, ref);
            if (p->mk_narrow)
                check_mk_kernels(c, p->mk_narrow, ref);
            check_split_calls(c, p, ref);
            check_cbc_chain(c, p, ref);
            check_multi_streams(c, p, 0);
            check_multi_streams(c, p, 1);
            check_stored_round_keys(c, p, ref);
            check_oneshot_hook(c, p, ref);
            check_lazy_race(c, p);
            check_stale_copy(c, p);
            check_cold_call(c, p, ref);
        }
    }
    group_end();
}
