/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Modes on random data: every usable backend against the oracle (modes
 * rebuilt here from one-block ECB calls on a "ref" key), whole and split,
 * in place and out of place, aligned and not; and the multi-key calls
 * against n single-key calls. Generic over ciphers: whatever cipher gains
 * a backend is covered.
 */
#include "test_util.h"

#include "internal.h" /* kuai_impls, kuai_mk: the multi-key scratch bound */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the oracle -------------------------------------------------------- */

void ctr_inc(uint8_t *ctr, size_t n)
{
    for (size_t i = n; i-- > 0;)
        if (++ctr[i] != 0)
            break;
}

int model_ecb(const kuai_key *ref, size_t bs, int enc, const uint8_t *in, uint8_t *out, size_t len)
{
    int rc = 0;
    for (size_t i = 0; i + bs <= len && !rc; i += bs)
        rc = enc ? kuai_ecb_encrypt(ref, in + i, out + i, bs)
                 : kuai_ecb_decrypt(ref, in + i, out + i, bs);
    return rc;
}

int model_cbc(const kuai_key *ref, size_t bs, int enc, uint8_t *iv, const uint8_t *in, uint8_t *out,
              size_t len)
{
    uint8_t x[KUAI_MAX_BLOCK];
    int rc = 0;
    for (size_t i = 0; i + bs <= len && !rc; i += bs) {
        if (enc) {
            for (size_t j = 0; j < bs; j++)
                x[j] = in[i + j] ^ iv[j];
            rc = kuai_ecb_encrypt(ref, x, out + i, bs);
            memcpy(iv, out + i, bs);
        } else {
            rc = kuai_ecb_decrypt(ref, in + i, x, bs);
            for (size_t j = 0; j < bs; j++)
                out[i + j] = x[j] ^ iv[j];
            memcpy(iv, in + i, bs);
        }
    }
    return rc;
}

int model_ctr(const kuai_key *ref, size_t bs, uint8_t *ctr, const uint8_t *in, uint8_t *out,
              size_t len)
{
    uint8_t ks[KUAI_MAX_BLOCK];
    int rc = 0;
    for (size_t i = 0; i < len && !rc; i += bs) {
        rc = kuai_ecb_encrypt(ref, ctr, ks, bs);
        for (size_t j = 0; j < bs && i + j < len; j++)
            out[i + j] = in[i + j] ^ ks[j];
        ctr_inc(ctr, bs); /* a partial last block consumes a counter value too */
    }
    return rc;
}

/* ---- counters near wrap-around ------------------------------------------ */

/* Counter patterns whose carries cross byte, 32-, 64- and 128-bit word
 * boundaries and the whole block (SIMD code that increments only a low
 * word gets them wrong), each wrapping within the first few blocks so that
 * the wrap lands inside a batch. Pattern 0 is plain random. */
#define CTR_PATTERNS 9
static void make_ctr(uint8_t *ctr, size_t bs, unsigned pattern, size_t nblocks)
{
    static const size_t ff_tail[CTR_PATTERNS] = {0, 1, 3, 4, 8, 12, 16, 0, 0};
    rng_fill(ctr, bs);
    size_t near = 1 + rng_below(nblocks < 20 ? nblocks + 1 : 21);
    if (pattern == 7) { /* ff..fe: the second increment ripples over every byte */
        memset(ctr, 0xff, bs);
        ctr[bs - 1] = 0xfe;
        return;
    }
    if (pattern == 8) { /* all ff: the first increment wraps to zero */
        memset(ctr, 0xff, bs);
        return;
    }
    size_t tail = ff_tail[pattern] < bs ? ff_tail[pattern] : bs - 1;
    if (pattern == 0)
        return;
    memset(ctr + bs - tail, 0xff, tail);
    ctr[bs - 1] = (uint8_t)(0x100 - near);
}

/* ---- differential vs the oracle ---------------------------------------- */

/* A few hundred KiB, an odd number of blocks: long enough for any
 * threading or big-batch path. */
#define BIG_LEN (t_short ? 24 * 1024 + 3 * 32 : 384 * 1024 + 3 * 32)

static void diff_cipher(kuai_cipher c)
{
    const char *be[MAX_BACKENDS];
    const size_t nbe = test_backends(c, be, MAX_BACKENDS), bs = kuai_block_size(c);
    if (nbe == 0)
        return;
    const size_t maxlen = BIG_LEN + bs;
    uint8_t *pt = xmalloc(maxlen), *ct = xmalloc(maxlen), *back = xmalloc(maxlen);
    uint8_t keybytes[64], iv0[KUAI_MAX_BLOCK], iv1[KUAI_MAX_BLOCK], tmp[KUAI_MAX_BLOCK];
    kuai_key ref, *keys = key_alloc(nbe);
    char ctx[128];

    /* Lengths in blocks for ECB and CBC: 0, 1, 2..70, and one long. */
    size_t nlens = 0, lens[80];
    for (size_t nb = 0; nb <= 70; nb += t_short && nb >= 20 ? 3 : 1)
        lens[nlens++] = nb * bs;
    lens[nlens++] = BIG_LEN;

    for (size_t li = 0; li < nlens; li++) {
        const size_t len = lens[li];
        rng_fill(keybytes, sizeof keybytes);
        rng_fill(pt, len);
        rng_fill(iv0, bs);
        if (!key_init_ok(&ref, c, keybytes, "ref"))
            break;
        int keys_ok = 1;
        for (size_t b = 0; b < nbe; b++)
            keys_ok &= key_init_ok(&keys[b], c, keybytes, be[b]);
        if (!keys_ok)
            break;

        /* ECB */
        snprintf(ctx, sizeof ctx, "%s oracle len=%zu", kuai_cipher_name(c), len);
        CHECK_RC(model_ecb(&ref, bs, 1, pt, ct, len), KUAI_OK, ctx);
        CHECK_RC(model_ecb(&ref, bs, 0, ct, back, len), KUAI_OK, ctx);
        CHECK_MEM(back, pt, len, ctx); /* decrypt(encrypt(x)) == x */
        for (size_t b = 0; b < nbe; b++) {
            snprintf(ctx, sizeof ctx, "%s/%s", kuai_cipher_name(c), be[b]);
            size_t oi = rng_below(16), oo = rng_below(16);
            tcase te = {OP_ECB_ENC, len, bs, pt, ct, NULL, NULL};
            tcase td = {OP_ECB_DEC, len, bs, ct, pt, NULL, NULL};
            check_case(&keys[b], ctx, &te, oi, oo, V_ALL);
            check_case(&keys[b], ctx, &td, oo, oi, V_ALL);
        }

        /* CBC */
        memcpy(iv1, iv0, bs);
        CHECK_RC(model_cbc(&ref, bs, 1, iv1, pt, ct, len), KUAI_OK, ctx);
        memcpy(tmp, iv0, bs);
        CHECK_RC(model_cbc(&ref, bs, 0, tmp, ct, back, len), KUAI_OK, ctx);
        CHECK_MEM(back, pt, len, ctx);
        for (size_t b = 0; b < nbe; b++) {
            snprintf(ctx, sizeof ctx, "%s/%s", kuai_cipher_name(c), be[b]);
            size_t oi = rng_below(16), oo = rng_below(16);
            tcase te = {OP_CBC_ENC, len, bs, pt, ct, iv0, iv1};
            tcase td = {OP_CBC_DEC, len, bs, ct, pt, iv0, iv1};
            check_case(&keys[b], ctx, &te, oi, oo, V_ALL);
            check_case(&keys[b], ctx, &td, oo, oi, V_ALL);
        }
    }

    /* CTR: every byte length up to 3 blocks + 1 (all tails), then
     * k blocks + a random tail for k = 3..70, and the long one + 7 bytes. */
    nlens = 0;
    size_t ctr_lens[3 * KUAI_MAX_BLOCK + 2 + 70];
    for (size_t l = 0; l <= 3 * bs + 1; l++)
        ctr_lens[nlens++] = l;
    for (size_t k = 3; k <= 70; k += t_short && k >= 20 ? 3 : 1)
        ctr_lens[nlens++] = k * bs + rng_below(bs);
    ctr_lens[nlens++] = BIG_LEN + 7;
    for (size_t li = 0; li < nlens; li++) {
        const size_t len = ctr_lens[li], nblocks = (len + bs - 1) / bs;
        rng_fill(keybytes, sizeof keybytes);
        rng_fill(pt, len);
        make_ctr(iv0, bs, (unsigned)(li % CTR_PATTERNS), nblocks);
        if (!key_init_ok(&ref, c, keybytes, "ref"))
            break;
        memcpy(iv1, iv0, bs);
        snprintf(ctx, sizeof ctx, "%s oracle CTR len=%zu", kuai_cipher_name(c), len);
        CHECK_RC(model_ctr(&ref, bs, iv1, pt, ct, len), KUAI_OK, ctx);
        for (size_t b = 0; b < nbe; b++) {
            char ivhex[2 * KUAI_MAX_BLOCK + 1];
            to_hex(ivhex, iv0, bs);
            snprintf(ctx, sizeof ctx, "%s/%s ctr0=%s", kuai_cipher_name(c), be[b], ivhex);
            if (!key_init_ok(&keys[b], c, keybytes, be[b]))
                continue;
            size_t oi = rng_below(16), oo = rng_below(16);
            tcase te = {OP_CTR, len, bs, pt, ct, iv0, iv1};
            tcase td = {OP_CTR, len, bs, ct, pt, iv0, iv1}; /* CTR decrypts by encrypting */
            check_case(&keys[b], ctx, &te, oi, oo, V_ALL);
            check_case(&keys[b], ctx, &td, oo, oi, V_WHOLE | V_SPLIT_INPLACE);
        }
    }

    /* The wrap, stated without the oracle's counter arithmetic: all-ff
     * plus one block is all zero, and the next block uses counter zero. */
    for (size_t b = 0; b < nbe; b++) {
        uint8_t ctr[KUAI_MAX_BLOCK], zero[KUAI_MAX_BLOCK] = {0}, ff[KUAI_MAX_BLOCK];
        uint8_t in2[2 * KUAI_MAX_BLOCK] = {0}, out2[2 * KUAI_MAX_BLOCK], ks[2 * KUAI_MAX_BLOCK];
        rng_fill(keybytes, sizeof keybytes);
        if (!key_init_ok(&keys[b], c, keybytes, be[b]))
            continue;
        snprintf(ctx, sizeof ctx, "%s/%s CTR from all-ff, 2 blocks of zeros", kuai_cipher_name(c),
                 be[b]);
        memset(ff, 0xff, bs);
        memcpy(ctr, ff, bs);
        CHECK_RC(kuai_ctr_crypt(&keys[b], ctr, in2, out2, 2 * bs), KUAI_OK, ctx);
        uint8_t one[KUAI_MAX_BLOCK] = {0};
        one[bs - 1] = 1;
        CHECK_MEM(ctr, one, bs, ctx);
        kuai_ecb_encrypt(&keys[b], ff, ks, bs);
        kuai_ecb_encrypt(&keys[b], zero, ks + bs, bs);
        CHECK_MEM(out2, ks, 2 * bs, ctx);
        kuai_key_wipe(&keys[b]);
    }

    kuai_key_wipe(&ref);
    free(keys);
    free(pt);
    free(ct);
    free(back);
}

void test_modes_diff(void)
{
    group_begin("modes vs oracle");
    for (size_t ci = 0; ci < ALL_CIPHERS_N; ci++)
        diff_cipher(all_ciphers[ci]);
    group_end();
}

/* ---- unaligned buffers --------------------------------------------------- */

void test_modes_unaligned(void)
{
    group_begin("unaligned buffers");
    for (size_t ci = 0; ci < ALL_CIPHERS_N; ci++) {
        kuai_cipher c = all_ciphers[ci];
        const char *be[MAX_BACKENDS];
        const size_t nbe = test_backends(c, be, MAX_BACKENDS), bs = kuai_block_size(c);
        if (nbe == 0)
            continue;
        /* An odd block count so paths that handle 2/4/8 blocks at a time
         * also meet a remainder; CTR gets a partial block too. */
        const size_t len = 37 * bs, ctr_len = len + 5;
        uint8_t keybytes[64], iv0[KUAI_MAX_BLOCK], ivw[KUAI_MAX_BLOCK];
        uint8_t *pt = xmalloc(ctr_len), *ct[OP_N], *ivs[OP_N];
        kuai_key ref, k;
        rng_fill(keybytes, sizeof keybytes);
        rng_fill(pt, ctr_len);
        rng_fill(iv0, bs);
        if (!key_init_ok(&ref, c, keybytes, "ref"))
            continue;
        for (int o = 0; o < OP_N; o++) {
            ct[o] = xmalloc(ctr_len);
            ivs[o] = xmalloc(bs);
            memcpy(ivs[o], iv0, bs);
        }
        /* Expected outputs of the three encrypting ops; the decrypting ops
         * take those back to pt. */
        model_ecb(&ref, bs, 1, pt, ct[OP_ECB_ENC], len);
        model_cbc(&ref, bs, 1, ivs[OP_CBC_ENC], pt, ct[OP_CBC_ENC], len);
        model_ctr(&ref, bs, ivs[OP_CTR], pt, ct[OP_CTR], ctr_len);
        memcpy(ivw, ivs[OP_CBC_ENC], bs);
        for (size_t b = 0; b < nbe; b++) {
            char ctx[96];
            snprintf(ctx, sizeof ctx, "%s/%s", kuai_cipher_name(c), be[b]);
            if (!key_init_ok(&k, c, keybytes, be[b]))
                continue;
            for (size_t off = 1; off < 16; off++) {
                size_t off2 = (off * 7 + 3) & 15; /* the other buffer elsewhere */
                tcase cases[OP_N] = {
                    {OP_ECB_ENC, len, bs, pt, ct[OP_ECB_ENC], NULL, NULL},
                    {OP_ECB_DEC, len, bs, ct[OP_ECB_ENC], pt, NULL, NULL},
                    {OP_CBC_ENC, len, bs, pt, ct[OP_CBC_ENC], iv0, ivw},
                    {OP_CBC_DEC, len, bs, ct[OP_CBC_ENC], pt, iv0, ivw},
                    {OP_CTR, ctr_len, bs, pt, ct[OP_CTR], iv0, ivs[OP_CTR]},
                };
                for (int o = 0; o < OP_N; o++) {
                    check_case(&k, ctx, &cases[o], off, off2, V_WHOLE | V_INPLACE);
                    check_case(&k, ctx, &cases[o], off2, off, V_WHOLE);
                }
            }
            kuai_key_wipe(&k);
        }
        for (int o = 0; o < OP_N; o++) {
            free(ct[o]);
            free(ivs[o]);
        }
        free(pt);
        kuai_key_wipe(&ref);
    }
    group_end();
}

/* ---- multi-key ----------------------------------------------------------- */

#define MULTI_MAX_N 33

static int run_multi(int cbc, int enc, const kuai_key *const *keys, uint8_t *const *ivs,
                     const uint8_t *const *in, uint8_t *const *out, size_t n, size_t len)
{
    if (cbc)
        return enc ? kuai_cbc_encrypt_multi(keys, ivs, in, out, n, len)
                   : kuai_cbc_decrypt_multi(keys, ivs, in, out, n, len);
    return enc ? kuai_ecb_encrypt_multi(keys, in, out, n, len)
               : kuai_ecb_decrypt_multi(keys, in, out, n, len);
}

static int run_single(int cbc, int enc, const kuai_key *k, uint8_t *iv, const uint8_t *in,
                      uint8_t *out, size_t len)
{
    return mode_op_run(cbc ? (enc ? OP_CBC_ENC : OP_CBC_DEC) : (enc ? OP_ECB_ENC : OP_ECB_DEC), k,
                       iv, in, out, len);
}

/*
 * One multi-key call over n streams of len bytes, checked against n
 * single-key calls with the same keys: outputs, advanced IVs, guards.
 * key_of[i] says which of the distinct key objects stream i uses (so the
 * same pointer can appear several times).
 */
static void multi_case(kuai_cipher c, kuai_key *kobj, const size_t *key_of, size_t n, size_t len,
                       int inplace, const char *ctx)
{
    const size_t bs = kuai_block_size(c);
    const kuai_key *keys[MULTI_MAX_N];
    gbuf in[MULTI_MAX_N], out[MULTI_MAX_N], ivb[MULTI_MAX_N];
    uint8_t *inp[MULTI_MAX_N], *outp[MULTI_MAX_N], *ivp[MULTI_MAX_N];
    uint8_t *want[MULTI_MAX_N], *data[MULTI_MAX_N];
    uint8_t iv0[MULTI_MAX_N][KUAI_MAX_BLOCK], ivwant[MULTI_MAX_N][KUAI_MAX_BLOCK];
    char what[256];

    for (size_t i = 0; i < n; i++) {
        keys[i] = &kobj[key_of[i]];
        in[i] = gbuf_new(len, (i * 5) & 15);
        out[i] = gbuf_new(len, (i * 3 + 1) & 15);
        ivb[i] = gbuf_new(bs, (i * 7 + 2) & 15);
        inp[i] = in[i].p;
        outp[i] = inplace ? in[i].p : out[i].p;
        ivp[i] = ivb[i].p;
        want[i] = xmalloc(len);
        data[i] = xmalloc(len);
        rng_fill(data[i], len);
        rng_fill(iv0[i], bs);
    }

    /* enc, then dec of what enc produced; ECB then CBC */
    for (int cbc = 0; cbc <= 1; cbc++) {
        for (int enc = 1; enc >= 0; enc--) {
            for (size_t i = 0; i < n; i++) {
                memcpy(ivwant[i], iv0[i], bs);
                int rc = run_single(cbc, enc, keys[i], ivwant[i], data[i], want[i], len);
                snprintf(what, sizeof what, "%s: single-key call for stream %zu", ctx, i);
                CHECK_RC(rc, KUAI_OK, what);
                memcpy(in[i].p, data[i], len);
                memset(out[i].p, GUARD_FILL, len);
                memcpy(ivb[i].p, iv0[i], bs);
            }
            int rc = run_multi(cbc, enc, keys, ivp, (const uint8_t *const *)inp, outp, n, len);
            snprintf(what, sizeof what, "%s %s-%s n=%zu len=%zu%s", ctx, cbc ? "CBC" : "ECB",
                     enc ? "enc" : "dec", n, len, inplace ? " in place" : "");
            if (CHECK_RC(rc, KUAI_OK, what)) {
                for (size_t i = 0; i < n; i++) {
                    char w2[320];
                    snprintf(w2, sizeof w2, "%s stream %zu (key #%zu, %s)", what, i, key_of[i],
                             kuai_key_backend(keys[i]));
                    if (!CHECK_MEM(outp[i], want[i], len, w2))
                        break; /* one stream's report is enough to debug */
                    GBUF_CHECK(inplace ? &in[i] : &out[i], w2);
                    if (!inplace)
                        CHECK_MEM(in[i].p, data[i], len, w2); /* input untouched */
                    if (cbc) {
                        snprintf(w2, sizeof w2, "%s stream %zu: IV after the call", what, i);
                        CHECK_MEM(ivb[i].p, ivwant[i], bs, w2);
                        GBUF_CHECK(&ivb[i], w2);
                    }
                }
            }
            /* Decrypt what we just encrypted next: round trip per stream. */
            if (enc)
                for (size_t i = 0; i < n; i++)
                    memcpy(data[i], want[i], len);
        }
    }

    for (size_t i = 0; i < n; i++) {
        gbuf_free(&in[i]);
        gbuf_free(&out[i]);
        gbuf_free(&ivb[i]);
        free(want[i]);
        free(data[i]);
    }
}

/* mk_bytes bounds what a backend's mk_setup writes into kuai_mk, and it is
 * all the mode code wipes afterwards: a write past it would leave lane keys
 * on the stack. Each backend (and its narrow kernel) sets up a full batch
 * of random keys over a patterned area; past mk_bytes the pattern must
 * stand, and before it the keys must have gone in. */
static void test_mk_bytes(void)
{
    group_begin("multi-key scratch bound");
    kuai_mk *m = aligned_alloc(64, sizeof *m);
    kuai_key *keys = key_alloc(KUAI_MK_MAX_LANES);
    const kuai_key *kp[KUAI_MK_MAX_LANES];
    for (size_t ci = 0; ci < ALL_CIPHERS_N; ci++) {
        const kuai_cipher c = all_ciphers[ci];
        const kuai_impl *const *impls = kuai_impls(c);
        for (size_t i = 0; impls[i]; i++) {
            const kuai_impl *top = impls[i];
            if (!top->available() || (t_only_backend && strcmp(top->name, t_only_backend) != 0))
                continue;
            for (const kuai_impl *p = top; p; p = p == top ? top->mk_narrow : NULL) {
                char what[96];
                snprintf(what, sizeof what, "%s/%s%s, %zu lanes", kuai_cipher_name(c), p->name,
                         p == top ? "" : " narrow", p->mk_lanes);
                if (!CHECK(p->mk_bytes > 0 && p->mk_bytes <= sizeof *m,
                           "%s: mk_bytes %zu not in 1..%zu", what, p->mk_bytes, sizeof *m))
                    continue;
                for (size_t k = 0; k < p->mk_lanes; k++) {
                    uint8_t kb[64];
                    rng_fill(kb, sizeof kb);
                    key_init_ok(&keys[k], c, kb, top->name);
                    kp[k] = &keys[k];
                }
                static const uint8_t pats[] = {0xa5, 0x5a};
                for (size_t pi = 0; pi < sizeof pats; pi++) {
                    const uint8_t pat = pats[pi];
                    memset(m, pat, sizeof *m);
                    p->mk_setup(m, kp, p->mk_lanes);
                    size_t past = 0, inside = 0;
                    for (size_t b = p->mk_bytes; b < sizeof *m; b++)
                        past += m->b[b] != pat;
                    for (size_t b = 0; b < p->mk_bytes; b++)
                        inside += m->b[b] != pat;
                    CHECK(past == 0, "%s: mk_setup wrote %zu bytes past mk_bytes (%zu)", what, past,
                          p->mk_bytes);
                    CHECK(inside > p->mk_bytes / 4, "%s: mk_setup wrote only %zu of %zu bytes",
                          what, inside, p->mk_bytes);
                }
            }
        }
    }
    kuai_wipe(m, sizeof *m);
    free(m);
    free(keys);
    group_end();
}

void test_modes_multi(void)
{
    test_mk_bytes();
    group_begin("multi-key");
    /* 6 and 15: the 8-block groups' remainders of 6 and 7 streams
     * (AES-NI's mk_short groups 8 one-block streams, 4 of 2 blocks) */
    static const size_t ns[] = {1, 2, 3, 4, 5, 6, 8, 15, 16, 17, 33};
    /* 0..8: both sides of every crossover to the short multi-key path
     * (mk_short: fewer than 9 / 5 blocks on avx2, 5 / 3 on ssse3), groups
     * of one stream and groups spanning streams */
    static const size_t nblocks[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 259};
    /* short: the 259-block streams become 83 (still past every kernel's
     * widest pass and a tail, and past every backend's mk_cbc_wide_blocks,
     * below which CBC encryption of many streams leaves the wide kernel) */
    const size_t last_nblocks = t_short ? 83 : 259;
    for (size_t ci = 0; ci < ALL_CIPHERS_N; ci++) {
        kuai_cipher c = all_ciphers[ci];
        const char *be[MAX_BACKENDS], *all[MAX_BACKENDS];
        const size_t nbe = test_backends(c, be, MAX_BACKENDS);
        const size_t nall = usable_backends(c, all, MAX_BACKENDS), bs = kuai_block_size(c);
        if (nbe == 0)
            continue;
        /* The x86 uBlock backends must keep their short multi-key path, or
         * the 0..8-block cases below would test the slot path only. */
        for (size_t b = 0; b < nbe; b++) {
            const kuai_impl *impl = kuai_impl_named(c, be[b]);
            if (impl &&
                (impl->family == KUAI_FAMILY_UBLOCK128 || impl->family == KUAI_FAMILY_UBLOCK256) &&
                (!strcmp(be[b], "ssse3") || !strcmp(be[b], "avx2")))
                CHECK(impl->mk_short && impl->mk_short_blocks > 1, "%s/%s: no short multi-key path",
                      kuai_cipher_name(c), be[b]);
        }
        kuai_key *kobj = key_alloc(MULTI_MAX_N);
        size_t key_of[MULTI_MAX_N];
        /* lead: the backend of stream 0's key (a plausible choice of which
         * backend runs the batch). mixed: the other keys cycle through every
         * usable backend; otherwise all keys use the lead's backend. */
        for (size_t b = 0; b < nbe; b++) {
            for (int mixed = 0; mixed <= 1; mixed++) {
                for (size_t ni = 0; ni < sizeof ns / sizeof ns[0]; ni++) {
                    const size_t n = ns[ni];
                    size_t nkeys = 0;
                    for (size_t i = 0; i < n; i++) {
                        /* Every third stream reuses an earlier key object:
                         * identical pointers in one call. */
                        if (i % 3 == 2) {
                            key_of[i] = key_of[i - 1 - (i / 3) % 2];
                            continue;
                        }
                        uint8_t kb[64];
                        rng_fill(kb, sizeof kb);
                        const char *kbe = !mixed || i == 0 ? be[b] : all[(i + b) % nall];
                        key_init_ok(&kobj[nkeys], c, kb, kbe);
                        key_of[i] = nkeys++;
                    }
                    for (size_t li = 0; li < sizeof nblocks / sizeof nblocks[0]; li++) {
                        char ctx[128];
                        snprintf(ctx, sizeof ctx, "%s lead %s%s", kuai_cipher_name(c), be[b],
                                 mixed ? " mixed backends" : "");
                        /* in place on the mixed runs only: enough to catch a
                         * kernel that reads a block after writing it */
                        size_t nb = nblocks[li] == 259 ? last_nblocks : nblocks[li];
                        multi_case(c, kobj, key_of, n, nb * bs, 0, ctx);
                        if (mixed)
                            multi_case(c, kobj, key_of, n, nb * bs, 1, ctx);
                    }
                    for (size_t i = 0; i < nkeys; i++)
                        kuai_key_wipe(&kobj[i]);
                }
            }
        }
        free(kobj);
    }
    group_end();
}

/* ---- one key, many threads -------------------------------------------- */

#ifndef __STDC_NO_THREADS__
#include <threads.h>

/* One thread's work: its own data and IVs, the shared key, known answers
 * from the oracle. Counts mismatching rounds; the checks happen after join
 * (the counters of this runner are not thread-safe). */
typedef struct thr_job {
    const kuai_key *k;
    size_t bs, len;
    uint8_t *pt, *ecb, *cbc, *ctr, *buf;
    uint8_t iv0[KUAI_MAX_BLOCK], cbc_iv[KUAI_MAX_BLOCK], ctr0[KUAI_MAX_BLOCK],
        ctr_end[KUAI_MAX_BLOCK];
    int bad;
} thr_job;

static int thr_main(void *arg)
{
    thr_job *j = arg;
    uint8_t iv[KUAI_MAX_BLOCK];
    for (int round = 0; round < 8; round++) {
        j->bad += kuai_ecb_encrypt(j->k, j->pt, j->buf, j->len) != 0 ||
                  memcmp(j->buf, j->ecb, j->len) != 0;
        j->bad += kuai_ecb_decrypt(j->k, j->buf, j->buf, j->len) != 0 ||
                  memcmp(j->buf, j->pt, j->len) != 0;
        memcpy(iv, j->iv0, j->bs);
        j->bad += kuai_cbc_encrypt(j->k, iv, j->pt, j->buf, j->len) != 0 ||
                  memcmp(j->buf, j->cbc, j->len) != 0 || memcmp(iv, j->cbc_iv, j->bs) != 0;
        memcpy(iv, j->iv0, j->bs);
        j->bad += kuai_cbc_decrypt(j->k, iv, j->buf, j->buf, j->len) != 0 ||
                  memcmp(j->buf, j->pt, j->len) != 0;
        memcpy(iv, j->ctr0, j->bs);
        j->bad += kuai_ctr_crypt(j->k, iv, j->pt, j->buf, j->len) != 0 ||
                  memcmp(j->buf, j->ctr, j->len) != 0 || memcmp(iv, j->ctr_end, j->bs) != 0;
    }
    return 0;
}

#define THREADS 4

void test_modes_threads(void)
{
    group_begin("one key, 4 threads");
    for (size_t ci = 0; ci < ALL_CIPHERS_N; ci++) {
        kuai_cipher c = all_ciphers[ci];
        const char *be[MAX_BACKENDS];
        const size_t nbe = test_backends(c, be, MAX_BACKENDS), bs = kuai_block_size(c);
        if (nbe == 0)
            continue;
        const size_t len = 16 * 1024 + 5 * bs; /* odd block count for 16-byte blocks */
        uint8_t keybytes[64];
        rng_fill(keybytes, sizeof keybytes);
        kuai_key ref, k;
        if (!key_init_ok(&ref, c, keybytes, "ref"))
            continue;
        thr_job jobs[THREADS];
        for (int t = 0; t < THREADS; t++) {
            thr_job *j = &jobs[t];
            j->bs = bs;
            j->len = len;
            j->pt = xmalloc(len);
            j->ecb = xmalloc(len);
            j->cbc = xmalloc(len);
            j->ctr = xmalloc(len);
            j->buf = xmalloc(len);
            rng_fill(j->pt, len);
            rng_fill(j->iv0, bs);
            rng_fill(j->ctr0, bs);
            memcpy(j->cbc_iv, j->iv0, bs);
            memcpy(j->ctr_end, j->ctr0, bs);
            model_ecb(&ref, bs, 1, j->pt, j->ecb, len);
            model_cbc(&ref, bs, 1, j->cbc_iv, j->pt, j->cbc, len);
            model_ctr(&ref, bs, j->ctr_end, j->pt, j->ctr, len);
        }
        for (size_t b = 0; b < nbe; b++) {
            if (!key_init_ok(&k, c, keybytes, be[b]))
                continue;
            thrd_t th[THREADS];
            int started[THREADS];
            for (int t = 0; t < THREADS; t++) {
                jobs[t].k = &k;
                jobs[t].bad = 0;
                started[t] = thrd_create(&th[t], thr_main, &jobs[t]) == thrd_success;
                CHECK(started[t], "thrd_create failed");
            }
            for (int t = 0; t < THREADS; t++) {
                if (!started[t])
                    continue;
                thrd_join(th[t], NULL);
                CHECK(jobs[t].bad == 0,
                      "%s/%s: thread %d sharing one key: %d of 40 calls wrong (ECB/CBC/CTR "
                      "len=%zu)",
                      kuai_cipher_name(c), be[b], t, jobs[t].bad, len);
            }
            kuai_key_wipe(&k);
        }
        for (int t = 0; t < THREADS; t++) {
            free(jobs[t].pt);
            free(jobs[t].ecb);
            free(jobs[t].cbc);
            free(jobs[t].ctr);
            free(jobs[t].buf);
        }
        kuai_key_wipe(&ref);
    }
    group_end();
}
#else
void test_modes_threads(void)
{
    t_note("one key, many threads: skipped, this C library has no <threads.h>");
}
#endif

/*
 * kuai_key promises only 8-byte alignment (so it can be malloc'd or sit in
 * any struct); a backend that loaded its schedule with aligned vector loads
 * would fault or misread here. Every backend's key is set up at each 8-byte
 * offset inside a 64-byte line and must compute what a key at offset 0 does.
 */
void test_modes_key_placement(void)
{
    group_begin("key placement");
    static _Alignas(64) unsigned char area[sizeof(kuai_key) + 64];
    enum { NB = 100 };
    uint8_t key[32], in[NB * 32], want[NB * 32], got[NB * 32], ctr0[32], ctr[32];
    for (size_t ci = 0; ci < ALL_CIPHERS_N; ci++) {
        kuai_cipher c = all_ciphers[ci];
        const char *names[MAX_BACKENDS];
        size_t nb = test_backends(c, names, MAX_BACKENDS);
        size_t bs = kuai_block_size(c);
        for (size_t b = 0; b < nb; b++) {
            rng_fill(key, sizeof key);
            rng_fill(in, sizeof in);
            rng_fill(ctr0, sizeof ctr0);
            kuai_key *base = (kuai_key *)(void *)area;
            if (!key_init_ok(base, c, key, names[b]))
                continue;
            CHECK_RC(kuai_ecb_encrypt(base, in, want, NB * bs), 0, "ecb at offset 0");
            for (size_t off = 8; off < 64; off += 8) {
                kuai_key *k = (kuai_key *)(void *)(area + off);
                if (!key_init_ok(k, c, key, names[b]))
                    continue;
                CHECK_RC(kuai_ecb_encrypt(k, in, got, NB * bs), 0, "ecb at an offset");
                CHECK(memcmp(got, want, NB * bs) == 0,
                      "%s %s: ECB differs with the key at offset %zu", kuai_cipher_name(c),
                      names[b], off);
                CHECK_RC(kuai_ecb_decrypt(k, got, got, NB * bs), 0, "ecb dec at an offset");
                CHECK(memcmp(got, in, NB * bs) == 0,
                      "%s %s: ECB decryption differs with the key at offset %zu",
                      kuai_cipher_name(c), names[b], off);
                memcpy(ctr, ctr0, bs);
                CHECK_RC(kuai_ctr_crypt(k, ctr, in, got, NB * bs - 3), 0, "ctr at an offset");
                memcpy(ctr, ctr0, bs);
                uint8_t want_ctr[NB * 32];
                /* key at offset off-8 was set up identically one step ago */
                kuai_key *prev = (kuai_key *)(void *)(area + off - 8);
                if (key_init_ok(prev, c, key, names[b])) {
                    CHECK_RC(kuai_ctr_crypt(prev, ctr, in, want_ctr, NB * bs - 3), 0, "ctr ref");
                    if (!key_init_ok(k, c, key, names[b]))
                        continue;
                    memcpy(ctr, ctr0, bs);
                    CHECK_RC(kuai_ctr_crypt(k, ctr, in, got, NB * bs - 3), 0, "ctr again");
                    CHECK(memcmp(got, want_ctr, NB * bs - 3) == 0,
                          "%s %s: CTR differs with the key at offsets %zu and %zu",
                          kuai_cipher_name(c), names[b], off - 8, off);
                }
            }
            kuai_key_wipe(base);
        }
    }
    group_end();
}
