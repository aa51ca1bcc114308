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

/* The backend table of c: sane entries, and kuai_backends lists exactly the
 * available ones in table order. */
static void check_table(kuai_cipher c)
{
    const char *cn = kuai_cipher_name(c), *listed[MAX_BACKENDS];
    const kuai_impl *const *impls = kuai_impls(c);
    size_t nlisted = usable_backends(c, listed, MAX_BACKENDS), avail = 0;
    int have_ref = 0;
    for (size_t i = 0; impls[i]; i++) {
        const kuai_impl *p = impls[i];
        CHECK(p->name && p->cipher == c && p->available && p->expand && p->enc_blocks &&
                  p->dec_blocks,
              "%s: backend table entry %zu (%s) incomplete or for cipher %d", cn, i,
              p->name ? p->name : "(null)", (int)p->cipher);
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

/* Every backend stores the same raw schedule (the seam contract); RK0 is
 * the left n bits of the key (spec, "Key schedule"). */
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
        CHECK_MEM(sk->rk[0], key, bs, what);
        for (unsigned i = 0; i <= want_rounds; i++) {
            snprintf(what, sizeof what, "%s/%s key %s: raw RK%u differs from ref's", cn, backend,
                     kh, i);
            if (!CHECK_MEM(sk->rk[i], sr->rk[i], bs, what))
                break;
        }
    }
    kuai_key_wipe(k);
    kuai_key_wipe(r);
    free(k);
    free(r);
}

/* enc_blocks/dec_blocks/ctr_blocks for 1..70 blocks against ref's. */
static void check_kernels(kuai_cipher c, const kuai_impl *p, const kuai_impl *ref)
{
    const char *cn = kuai_cipher_name(c);
    const size_t bs = kuai_block_size(c), maxb = 70;
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
        }
    }
    group_end();
}
