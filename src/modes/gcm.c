/* SPDX-License-Identifier: Apache-2.0 */
/*
 * GCM (NIST SP 800-38D), written once over the cipher seam (enc_blocks and
 * the optional fused ctr_blocks) and the GHASH seam (ghash.h), for every
 * cipher with a 128-bit block.
 *
 * Pass structure: a backend with a fused kernel for the context's GHASH
 * backend (kuai_impl.gcm: aesni with pclmul, vaes with vpclmul512 and with
 * vpclmul) takes all whole blocks in one loop. Otherwise data goes in chunks of GCM_CHUNK_BLOCKS
 * blocks (4 KiB): CTR over the chunk, then GHASH over the same chunk while it is still in L1.
 * Decryption hashes the ciphertext chunk before decrypting it, which is also what makes in == out
 * work.
 *
 * The one-shot calls run the streaming code on a context on the stack;
 * the one-shot decrypt decrypts in that single pass and, on a tag
 * mismatch, zeroes out before returning. That is one pass over the data
 * instead of two (verify, then decrypt), and no unauthenticated plaintext
 * survives the call.
 */
#include "../bytes.h"
#include "../ct.h"
#include "../ghash/ghash.h"
#include "mac.h"
#include "modes.h"

#define GCM_MAGIC 0x67636d21u /* "gcm!": set by init, cleared by wipe */
#define GCM_CHUNK_BLOCKS 256
/* SP 800-38D: plaintext up to 2^39 - 256 bits; AAD and IV up to 2^64 - 1
 * bits, i.e. below 2^61 bytes. */
#define GCM_MAX_DATA ((UINT64_C(1) << 36) - 32)
#define GCM_MAX_AAD ((UINT64_C(1) << 61) - 1)

enum gcm_phase { PHASE_AAD = 1, PHASE_ENC, PHASE_DEC };

/* kuai_gcm_ctx.priv_ctr_secret: the counter comes from a 12-byte IV
 * (public), from GHASH of another IV (a function of the key), or from a
 * 12-byte IV of a restart whose cipher call is still to make (gcm_settle):
 * every use of the counter or of the key material settles first. */
enum gcm_ctr { CTR_PUBLIC = 0, CTR_SECRET = 1, CTR_PENDING = 2 };

/* Blocks of a message's first cipher call: H, E_K(J0) and the keystream
 * of up to GCM_SHORT_BATCH - 2 data blocks (gcm_oneshot_short, gcm_settle,
 * gcm_with_short): 224 bytes. One call of n + m blocks costs at most what
 * calls of n and of m cost, and the few-block kernels' costs rise in
 * steps; with 8 (96 bytes), a message of 112-224 bytes made a second call
 * (Xeon, Sapphire Rapids class, kuai_gcm_encrypt_with with 16 bytes of
 * AAD, TSC cycles: AES-128 vaes 112-224 B 292-304 -> 199-213, SM4 gfni
 * 797-809 -> 468-487, uBlock-128/128 avx512 635-884 -> 492-615). */
enum { GCM_SHORT_BATCH = 16 };

_Static_assert(sizeof(((kuai_gcm_ctx *)0)->priv_hkey) == GHASH_KEY_BYTES + 64,
               "kuai_gcm_ctx.priv_hkey must match GHASH_KEY_BYTES");

/* ---- counter mode with inc32 ------------------------------------------- */

/* The backends' ctr_blocks carries across the whole block; GCM's counter
 * wraps within the low 32 bits. So cut the run where the low word wraps
 * and put the upper 96 bits back after each piece. The cut depends on the
 * counter, which is public when it comes straight from a 12-byte IV (it
 * starts at 2 and no legal message reaches the wrap). From any other IV the
 * counter is GHASH_H(IV), a function of the key: then ctr_secret is set and
 * the counter blocks are built here with a wrapping 32-bit add, no branch
 * and no cut, and only enc_blocks sees them. */
void kuai_gcm_ctr32(const kuai_key *k, uint8_t ctr[16], const uint8_t *in, uint8_t *out,
                    size_t nblocks, int ctr_secret)
{
    const kuai_impl *impl = kuai_key_impl(k);
    while (nblocks) {
        size_t n = nblocks;
        if (!ctr_secret) {
            uint64_t room = (UINT64_C(1) << 32) - load_be32(ctr + 12);
            n = (uint64_t)nblocks < room ? nblocks : (size_t)room;
        }
        if (impl->ctr_blocks && !ctr_secret) {
            uint8_t top[12];
            memcpy(top, ctr, 12);
            impl->ctr_blocks(k, ctr, in, out, n);
            memcpy(ctr, top, 12);
        } else {
            uint8_t ks[KUAI_CHUNK_BLOCKS * 16];
            for (size_t done = 0; done < n;) {
                size_t m = n - done < KUAI_CHUNK_BLOCKS ? n - done : KUAI_CHUNK_BLOCKS;
                for (size_t i = 0; i < m; i++) {
                    memcpy(ks + 16 * i, ctr, 16);
                    store_be32(ctr + 12, load_be32(ctr + 12) + 1);
                }
                impl->enc_blocks(k, ks, ks, m);
                xor_bytes(out + 16 * done, in + 16 * done, ks, 16 * m);
                done += m;
            }
            kuai_wipe(ks, sizeof ks);
        }
        in += 16 * n;
        out += 16 * n;
        nblocks -= n;
    }
}

/* ---- the streaming core (arguments already checked) --------------------- */

static const ghash_impl *ctx_ghash(const kuai_gcm_ctx *c)
{
    return (const ghash_impl *)c->priv_ghash;
}

/*
 * The GHASH backends read their key material with aligned vector loads, but
 * a context may sit anywhere 8-byte aligned and be copied (EVP_CIPHER_CTX_copy
 * does) to a place with another alignment. So the material lives at the
 * first 64-byte boundary inside priv_hkey, and if a copy moved that boundary
 * it is moved along before use.
 */
/* H itself, which kuai_gcm_restart compares, in priv_hkey's 64 spare
 * bytes beside the material at off: after it, or before it where the
 * material starts past byte 48. */
static size_t hslot_off(uint32_t off)
{
    return off + GHASH_KEY_BYTES + 16 <= sizeof(((kuai_gcm_ctx *)0)->priv_hkey)
               ? off + GHASH_KEY_BYTES
               : 0;
}

static unsigned char *ctx_hslot(kuai_gcm_ctx *c, uint32_t off)
{
    return c->priv_hkey + hslot_off(off);
}

static unsigned char *ctx_hkey(kuai_gcm_ctx *c)
{
    uint32_t off = (uint32_t)(-(uintptr_t)c->priv_hkey & 63);
    if (off != c->priv_hkey_off) {
        uint8_t h[16];
        memcpy(h, ctx_hslot(c, c->priv_hkey_off), 16);
        memmove(c->priv_hkey + off, c->priv_hkey + c->priv_hkey_off, GHASH_KEY_BYTES);
        c->priv_hkey_off = off;
        memcpy(ctx_hslot(c, off), h, 16);
        kuai_wipe(h, sizeof h);
    }
    return c->priv_hkey + off;
}

static void gcm_settle(kuai_gcm_ctx *c, uint8_t *ks, size_t n);

static void ghash_blocks(kuai_gcm_ctx *c, const uint8_t *in, size_t nblocks)
{
    if (c->priv_ctr_secret == CTR_PENDING) /* the material's H not checked yet */
        gcm_settle(c, NULL, 0);
    ctx_ghash(c)->update(ctx_hkey(c), c->priv_y, in, nblocks);
}

/* A fresh context under key k with GHASH backend gh, its key material
 * from H (gcm_setup, gcm_oneshot_short). */
static void gcm_ctx_start(kuai_gcm_ctx *c, const kuai_key *k, const ghash_impl *gh,
                          const uint8_t h[16])
{
    c->priv_key = k;
    c->priv_ghash = gh;
    c->priv_hkey_off = (uint32_t)(-(uintptr_t)c->priv_hkey & 63);
    gh->init(ctx_hkey(c), h);
    memcpy(ctx_hslot(c, c->priv_hkey_off), h, 16);
}

/* Whether h differs from the H the context's key material was made from
 * (the key changed since, or is another). */
static int ctx_h_differs(kuai_gcm_ctx *c, const uint8_t h[16])
{
    ctx_hkey(c); /* the material and H where this copy of the context has them */
    int d = tag_differs(ctx_hslot(c, c->priv_hkey_off), h, 16);
    kuai_declassify(&d, sizeof d); /* whether the key changed: not the key */
    return d;
}

/* The first cipher call's batch in blk: the zero block (for H), then J0 =
 * IV || 0^31 || 1 and the n counter blocks after it (inc32). Only the
 * 2 + n blocks are written: zeroing the whole buffer cost more than the
 * blocks once it held 16. */
static void gcm_batch_blocks(uint8_t *blk, const uint8_t *iv, size_t n)
{
    memset(blk, 0, 16);
#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    /* Each block as one 16-byte store where the batch is shorter than a
     * wide pass: a 16-byte load takes it straight from the store buffer
     * (the VAES backend loads a call's last blocks so, aes_vaes.c's
     * aesy_loadu2), where the 12- and 4-byte stores below make it wait for
     * them to reach the cache. A full 16-block batch, loaded 32 bytes at a
     * time, ran faster from the stores below (AES-128 vaes, 224 bytes: 176
     * against 192 TSC cycles; Xeon, Sapphire Rapids class). */
    if (n + 2 < GCM_SHORT_BATCH) {
        typedef uint64_t u64x2 __attribute__((vector_size(16)));
        uint64_t lo, w = 0;
        memcpy(&lo, iv, 8);
        memcpy(&w, iv + 8, 4);
        for (size_t i = 1; i <= n + 1; i++) {
            u64x2 b = {lo, w | (uint64_t)__builtin_bswap32((uint32_t)i) << 32};
            memcpy(blk + 16 * i, &b, 16);
        }
        return;
    }
#endif
    for (size_t i = 1; i <= n + 1; i++) {
        memcpy(blk + 16 * i, iv, 12);
        store_be32(blk + 16 * i + 12, (uint32_t)i);
    }
}

/*
 * A restart's cipher call, made at the message's first use of the counter
 * or of the key material (gcm_setup): H = E_K(0), E_K(J0) and the
 * keystream of the n blocks from J0 + 1 into ks, as one batch (n at most
 * GCM_SHORT_BATCH - 2). H is checked against the one the material was made
 * from, and the material made anew where it differs; the counter moves
 * past the n blocks.
 */
static void gcm_settle(kuai_gcm_ctx *c, uint8_t *ks, size_t n)
{
    const kuai_key *k = c->priv_key;
    _Alignas(16) uint8_t blk[16 * GCM_SHORT_BATCH];
    gcm_batch_blocks(blk, c->priv_ctr, n);
    kuai_key_impl(k)->enc_blocks(k, blk, blk, 2 + n);
    c->priv_ctr_secret = CTR_PUBLIC;
    if (ctx_h_differs(c, blk))
        gcm_ctx_start(c, k, ctx_ghash(c), blk);
    memcpy(c->priv_ekj0, blk + 16, 16);
    if (c->priv_aad_len == 16) { /* a whole block of AAD held (gcm_absorb_aad) */
        ghash_blocks(c, c->priv_part, 1);
        memset(c->priv_part, 0, 16);
    }
    if (n)
        memcpy(ks, blk + 32, 16 * n);
    store_be32(c->priv_ctr + 12, (uint32_t)(2 + n));
    kuai_wipe(blk, sizeof blk);
}

/* A message under key k from IV iv. A new context (restart 0) is zeroed
 * and takes GHASH backend gh. A restart (gh the context's own) keeps the
 * context's GHASH key material when H is the one it was made from: the
 * powers of H cost more than the rest of a short message. */
static void gcm_setup(kuai_gcm_ctx *c, const kuai_key *k, const ghash_impl *gh, const uint8_t *iv,
                      size_t iv_len, int restart)
{
    const kuai_impl *impl = kuai_key_impl(k);
    if (restart) {
        c->priv_aad_len = c->priv_data_len = 0;
        c->priv_ctr_secret = 0;
        memset(c->priv_y, 0, sizeof c->priv_y);
        memset(c->priv_ctr, 0, sizeof c->priv_ctr);
        memset(c->priv_ekj0, 0, sizeof c->priv_ekj0);
        memset(c->priv_ks, 0, sizeof c->priv_ks);
        memset(c->priv_part, 0, sizeof c->priv_part);
    } else {
        memset(c, 0, sizeof *c);
    }

    uint8_t *j0 = c->priv_ctr;
    if (restart && iv_len == 12) {
        /* H, its check and E_K(J0) wait for the message's first cipher
         * call (gcm_settle): with its first data blocks, one call where
         * there were two */
        memcpy(j0, iv, 12);
        store_be32(j0 + 12, 2); /* J0 + 1: the first data block */
        c->priv_key = k;
        c->priv_ctr_secret = CTR_PENDING;
        c->priv_phase = PHASE_AAD;
        c->priv_magic = GCM_MAGIC;
        return;
    }
    /* H = E_K(0^128), and for 96-bit IVs E_K(J0) in the same call: the
     * wide backends cost nearly as much for one block as for a batch. */
    uint8_t blk[32] = {0};
    if (iv_len == 12) {
        /* J0 = IV || 0^31 || 1 */
        memcpy(j0, iv, 12);
        store_be32(j0 + 12, 1);
        memcpy(blk + 16, j0, 16);
        impl->enc_blocks(k, blk, blk, 2);
        memcpy(c->priv_ekj0, blk + 16, 16);
    } else {
        impl->enc_blocks(k, blk, blk, 1);
    }
    if (!restart || ctx_h_differs(c, blk))
        gcm_ctx_start(c, k, gh, blk);
    c->priv_key = k;
    kuai_wipe(blk, sizeof blk);

    /* Other IVs: J0 = GHASH(IV, 0-pad, 0^64, [len(IV)]_64), built in
     * priv_ctr (priv_y is still the zero accumulator). */
    if (iv_len != 12) {
        size_t full = iv_len / 16, rest = iv_len % 16;
        if (full)
            ghash_blocks(c, iv, full);
        uint8_t last[16] = {0};
        if (rest) {
            memcpy(last, iv + 16 * full, rest);
            ghash_blocks(c, last, 1);
            memset(last, 0, sizeof last);
        }
        store_be64(last + 8, (uint64_t)iv_len * 8);
        ghash_blocks(c, last, 1);
        memcpy(j0, c->priv_y, 16);
        memset(c->priv_y, 0, 16);
        impl->enc_blocks(k, j0, c->priv_ekj0, 1);
        c->priv_ctr_secret = CTR_SECRET;
    }
    store_be32(j0 + 12, load_be32(j0 + 12) + 1); /* inc32: the first data block */
    c->priv_phase = PHASE_AAD;
    c->priv_magic = GCM_MAGIC;
}

static void gcm_absorb_aad(kuai_gcm_ctx *c, const uint8_t *aad, size_t len)
{
    if (c->priv_ctr_secret == CTR_PENDING) {
        /* A restart's AAD of up to one block (TLS's and SSH's are 4-13
         * bytes) waits in priv_part, whole or not, for the restart's
         * cipher call and the check of H (gcm_settle hashes a whole one):
         * hashing it now would make that call apart from the data's. */
        if (c->priv_aad_len + len <= 16) {
            memcpy(c->priv_part + c->priv_aad_len, aad, len);
            c->priv_aad_len += len;
            return;
        }
        if (c->priv_aad_len == 16)
            gcm_settle(c, NULL, 0);
    }
    size_t pos = (size_t)(c->priv_aad_len % 16);
    c->priv_aad_len += len;
    if (pos) {
        size_t n = 16 - pos < len ? 16 - pos : len;
        memcpy(c->priv_part + pos, aad, n);
        aad += n;
        len -= n;
        if (pos + n < 16)
            return;
        ghash_blocks(c, c->priv_part, 1);
    }
    if (len >= 16)
        ghash_blocks(c, aad, len / 16);
    memcpy(c->priv_part, aad + (len & ~(size_t)15), len % 16);
}

/* The AAD's last partial block, zero-padded, before data or the lengths. */
static void gcm_close_aad(kuai_gcm_ctx *c)
{
    size_t pos = (size_t)(c->priv_aad_len % 16);
    if (pos) {
        memset(c->priv_part + pos, 0, 16 - pos);
        ghash_blocks(c, c->priv_part, 1);
    }
    memset(c->priv_part, 0, 16);
}

/* A message's first data, at most 16 * (GCM_SHORT_BATCH - 2) bytes, with
 * its keystream ks made (one block per 16 bytes or part): the AAD closed,
 * then the XOR and GHASH over the ciphertext, and a partial last block
 * kept as gcm_crypt keeps one (its keystream in priv_ks; the counter is
 * already past it). */
static void gcm_first_data(kuai_gcm_ctx *c, const uint8_t *ks, const uint8_t *in, uint8_t *out,
                           size_t len, int enc)
{
    const size_t whole = len / 16, rest = len % 16;
    gcm_close_aad(c); /* priv_part zeroed */
    c->priv_phase = enc ? PHASE_ENC : PHASE_DEC;
    c->priv_data_len = len;
    if (!enc) { /* GHASH takes the ciphertext: read before out (which may be in) is written */
        if (whole)
            ghash_blocks(c, in, whole);
        if (rest) /* in may be NULL when len is 0 (kuai.h): no memcpy from it */
            memcpy(c->priv_part, in + 16 * whole, rest);
    }
    xor_bytes(out, in, ks, len);
    if (enc) {
        if (whole)
            ghash_blocks(c, out, whole);
        if (rest)
            memcpy(c->priv_part, out + 16 * whole, rest);
    }
    if (rest)
        memcpy(c->priv_ks, ks + 16 * whole, 16);
}

static void gcm_crypt(kuai_gcm_ctx *c, const uint8_t *in, uint8_t *out, size_t len, int enc)
{
    if (c->priv_ctr_secret == CTR_PENDING) {
        /* a restart's first data: its keystream in the restart's cipher
         * call where the batch holds it */
        const size_t nd = len / 16 + (len % 16 != 0);
        if (nd <= GCM_SHORT_BATCH - 2) {
            _Alignas(16) uint8_t ks[16 * (GCM_SHORT_BATCH - 2)];
            gcm_settle(c, ks, nd);
            gcm_first_data(c, ks, in, out, len, enc);
            kuai_wipe(ks, sizeof ks);
            return;
        }
        gcm_settle(c, NULL, 0);
    }
    if (c->priv_phase == PHASE_AAD) {
        gcm_close_aad(c);
        c->priv_phase = enc ? PHASE_ENC : PHASE_DEC;
    }
    const kuai_key *k = c->priv_key;
    size_t pos = (size_t)(c->priv_data_len % 16);
    c->priv_data_len += len;

    /* Finish the partial block left by the previous call. */
    if (pos) {
        size_t n = 16 - pos < len ? 16 - pos : len;
        for (size_t i = 0; i < n; i++) {
            uint8_t x = in[i], y = x ^ c->priv_ks[pos + i];
            out[i] = y;
            c->priv_part[pos + i] = enc ? y : x; /* GHASH takes the ciphertext */
        }
        in += n;
        out += n;
        len -= n;
        if (pos + n < 16)
            return;
        ghash_blocks(c, c->priv_part, 1);
    }

    /* Whole blocks: in one pass where the cipher backend has a fused kernel
     * for this GHASH backend, else a chunk at a time, CTR and GHASH over the
     * same 4 KiB. */
    const struct kuai_gcm_fused *fused = NULL;
    const kuai_impl *impl = kuai_key_impl(k);
    for (int i = 0; i < KUAI_GCM_FUSED_MAX; i++)
        if (impl->gcm[i].blocks && impl->gcm[i].ghash == ctx_ghash(c))
            fused = &impl->gcm[i];
    if (len >= 16 && fused && !c->priv_ctr_secret) {
        size_t nb = len / 16;
        /* A counter from a 12-byte IV cannot reach the 2^32 wrap within
         * GCM_MAX_DATA; the kernel needs that, so it is checked anyway. */
        uint64_t room = (UINT64_C(1) << 32) - load_be32(c->priv_ctr + 12);
        if ((uint64_t)nb > room)
            nb = (size_t)room;
        fused->blocks(k, ctx_hkey(c), c->priv_y, c->priv_ctr, in, out, nb, enc);
        in += 16 * nb;
        out += 16 * nb;
        len -= 16 * nb;
    }
    while (len >= 16) {
        size_t nb = len / 16 < GCM_CHUNK_BLOCKS ? len / 16 : GCM_CHUNK_BLOCKS;
        if (enc) {
            kuai_gcm_ctr32(k, c->priv_ctr, in, out, nb, (int)c->priv_ctr_secret);
            ghash_blocks(c, out, nb);
        } else {
            ghash_blocks(c, in, nb);
            kuai_gcm_ctr32(k, c->priv_ctr, in, out, nb, (int)c->priv_ctr_secret);
        }
        in += 16 * nb;
        out += 16 * nb;
        len -= 16 * nb;
    }

    /* A new partial block: one counter value's keystream, kept for the
     * next call. */
    if (len) {
        memset(c->priv_ks, 0, 16);
        kuai_gcm_ctr32(k, c->priv_ctr, c->priv_ks, c->priv_ks, 1, (int)c->priv_ctr_secret);
        for (size_t i = 0; i < len; i++) {
            uint8_t x = in[i], y = x ^ c->priv_ks[i];
            out[i] = y;
            c->priv_part[i] = enc ? y : x;
        }
    }
}

/* The full 16-byte tag; the context is left for the caller to wipe. */
static void gcm_tag(kuai_gcm_ctx *c, uint8_t tag[16])
{
    if (c->priv_ctr_secret == CTR_PENDING) /* E_K(J0): a restart with no data */
        gcm_settle(c, NULL, 0);
    if (c->priv_phase == PHASE_AAD)
        gcm_close_aad(c);
    size_t pos = (size_t)(c->priv_data_len % 16);
    if (pos) {
        memset(c->priv_part + pos, 0, 16 - pos);
        ghash_blocks(c, c->priv_part, 1);
    }
    uint8_t lens[16];
    store_be64(lens, c->priv_aad_len * 8);
    store_be64(lens + 8, c->priv_data_len * 8);
    ghash_blocks(c, lens, 1);
    xor_bytes(tag, c->priv_y, c->priv_ekj0, 16);
}

/* ---- argument checks ---------------------------------------------------- */

static int check_key_iv(const kuai_key *k, const uint8_t *iv, size_t iv_len)
{
    int r = kuai_key_check(k);
    if (r)
        return r;
    if (kuai_cipher_block((kuai_cipher)k->priv_cipher) != 16)
        return KUAI_ERR_UNSUPPORTED;
    if (!iv || iv_len == 0)
        return KUAI_ERR_ARG;
    if ((uint64_t)iv_len > GCM_MAX_AAD)
        return KUAI_ERR_LENGTH;
    /* under GCM's limit yet past the end of the address space (a 32-bit
     * size_t's lengths all are under it): refused, as span_ok refuses
     * every buffer that is only read (CCM's AAD, CMAC's message) */
    if (!span_ok(iv, iv_len))
        return KUAI_ERR_ARG;
    return KUAI_OK;
}

static int check_tag(const uint8_t *tag, size_t tag_len)
{
    return tag && tag_len >= 4 && tag_len <= 16 ? KUAI_OK : KUAI_ERR_ARG;
}

/* A context that init set up, not finished, whose key is still set up with
 * a 128-bit block. The context holds only a pointer to the key, and the
 * caller may set that key up again (or wipe it) between calls: checked at
 * every call, since a 256-bit-block key would make the counter code write
 * twice the bytes its 16-byte-block buffers hold. */
static int check_ctx(const kuai_gcm_ctx *c)
{
    if (!c)
        return KUAI_ERR_ARG;
    if (c->priv_magic != GCM_MAGIC)
        return KUAI_ERR_ARG;
    int r = kuai_key_check(c->priv_key);
    if (r)
        return r;
    if (kuai_cipher_block((kuai_cipher)c->priv_key->priv_cipher) != 16)
        return KUAI_ERR_UNSUPPORTED;
    return KUAI_OK;
}

/* ---- public: one-shot --------------------------------------------------- */

static int check_oneshot(const kuai_key *k, const uint8_t *iv, size_t iv_len, const uint8_t *aad,
                         size_t aad_len, const uint8_t *in, const uint8_t *out, size_t len,
                         const uint8_t *tag, size_t tag_len)
{
    int r = check_key_iv(k, iv, iv_len);
    if (r)
        return r;
    if ((aad_len && !aad) || !buffers_ok(in, out, len) || check_tag(tag, tag_len))
        return KUAI_ERR_ARG;
    if ((uint64_t)len > GCM_MAX_DATA || (uint64_t)aad_len > GCM_MAX_AAD)
        return KUAI_ERR_LENGTH;
    if (!span_ok(aad, aad_len)) /* as the IV's, check_key_iv */
        return KUAI_ERR_ARG;
    return KUAI_OK;
}

/*
 * A short message with a 96-bit IV in one call of the cipher: H = E_K(0),
 * E_K(J0) and the data's keystream (counters J0 + 1 ...) as one batch of
 * up to GCM_SHORT_BATCH blocks, where gcm_setup and gcm_crypt make two
 * calls. The few-block kernels cost about as much for 8 blocks as for 2
 * (their rounds wait on a chain), so the second call was nearly a whole
 * one more: in kuai_bench gcm-enc-short (64 bytes, 16 of AAD) SM4 on vaes
 * went from 0.79x libgcrypt's speed to 1.19x, AES-128 on vaes from 1.15x
 * OpenSSL's to 1.35x (Xeon, Sapphire Rapids class; docs/performance.md). The
 * rest is gcm_oneshot's: the AAD, GHASH over the ciphertext (on
 * kuai_ghash_short's backend), the tag.
 */
static int gcm_short(const kuai_key *k, size_t iv_len, size_t len)
{
    return iv_len == 12 && len <= 16 * (GCM_SHORT_BATCH - 2) && kuai_key_impl(k)->enc_blocks;
}

static void gcm_oneshot_short(kuai_gcm_ctx *c, const kuai_key *k, const ghash_impl *gh,
                              const uint8_t *iv, const uint8_t *aad, size_t aad_len,
                              const uint8_t *in, uint8_t *out, size_t len, int enc)
{
    const size_t nd = (len + 15) / 16;
    _Alignas(16) uint8_t blk[16 * GCM_SHORT_BATCH];
    memset(c, 0, sizeof *c);
    gcm_batch_blocks(blk, iv, nd);
    kuai_key_impl(k)->enc_blocks(k, blk, blk, 2 + nd);
    memcpy(c->priv_ekj0, blk + 16, 16);
    gcm_ctx_start(c, k, gh, blk);
    c->priv_magic = GCM_MAGIC;
    if (aad_len)
        gcm_absorb_aad(c, aad, aad_len);
    gcm_first_data(c, blk + 32, in, out, len, enc);
    kuai_wipe(blk, sizeof blk);
}

/* The rest of a one-shot message on a context set up for it: AAD, data,
 * the full 16-byte tag into full; the context wiped. */
static void gcm_run(kuai_gcm_ctx *c, const uint8_t *aad, size_t aad_len, const uint8_t *in,
                    uint8_t *out, size_t len, int enc, uint8_t full[16])
{
    if (aad_len)
        gcm_absorb_aad(c, aad, aad_len);
    if (len)
        gcm_crypt(c, in, out, len, enc);
    gcm_tag(c, full);
    kuai_wipe(c, sizeof *c);
}

/* The one-shot calls' single pass on a context on the stack; full gets
 * the whole 16-byte tag. */
static void gcm_oneshot(const kuai_key *k, const uint8_t *iv, size_t iv_len, const uint8_t *aad,
                        size_t aad_len, const uint8_t *in, uint8_t *out, size_t len, int enc,
                        uint8_t full[16])
{
    kuai_gcm_ctx c;
    if (gcm_short(k, iv_len, len)) {
        gcm_oneshot_short(&c, k, kuai_ghash_short(), iv, aad, aad_len, in, out, len, enc);
        gcm_run(&c, NULL, 0, NULL, NULL, 0, enc, full);
        return;
    }
    gcm_setup(&c, k, kuai_ghash_best(), iv, iv_len, 0);
    gcm_run(&c, aad, aad_len, in, out, len, enc, full);
}

/*
 * A short message (gcm_short) under a template's GHASH key material, read
 * where it lies: nothing of the template is copied or written, so threads
 * may share one. One cipher call makes H, E_K(J0) and the keystream; the
 * AAD's whole blocks are hashed in place right after it is issued (they
 * need nothing of it, so their multiplies run beside its rounds); then H
 * is checked against the one the material was made from: on a difference
 * (k is not the template's key) that hash is dropped, nothing is written
 * and 0 returned, for the caller to take the general path. GHASH then
 * runs once more, over a block buffer of the AAD's partial block, the
 * ciphertext (both zero-padded) and the lengths. 64-byte AES-128 message,
 * 16 bytes of AAD, vaes: 151 TSC cycles against 241 for a template copied
 * and restarted and 314 through kuai_gcm_encrypt (Xeon, Sapphire Rapids
 * class; docs/performance.md).
 */
static int gcm_with_short(const kuai_gcm_ctx *t, const kuai_key *k, const uint8_t *iv,
                          const uint8_t *aad, size_t aad_len, const uint8_t *in, uint8_t *out,
                          size_t len, int enc, uint8_t full[16])
{
    const size_t nd = (len + 15) / 16, aw = aad_len / 16, ar = aad_len % 16;
    const unsigned char *hkey = t->priv_hkey + t->priv_hkey_off;
    const ghash_impl *gh = ctx_ghash(t);
    _Alignas(16) uint8_t y[16] = {0}, g[16 * GCM_SHORT_BATCH];
    size_t at = 0;
    if (ar) { /* the AAD's partial block, zero-padded */
        memset(g, 0, 16);
        memcpy(g, aad + 16 * aw, ar);
        at = 16;
    }
    _Alignas(16) uint8_t blk[16 * GCM_SHORT_BATCH];
    gcm_batch_blocks(blk, iv, nd);
    kuai_key_impl(k)->enc_blocks(k, blk, blk, 2 + nd);
    if (aw)
        gh->update(hkey, y, aad, aw);
    int d = tag_differs(t->priv_hkey + hslot_off(t->priv_hkey_off), blk, 16);
    kuai_declassify(&d, sizeof d); /* whether k is the template's key: not the key */
    if (!d) {
        if (len) {
            memset(g + at + 16 * (nd - 1), 0, 16); /* the last block's padding */
            if (!enc) /* GHASH takes the ciphertext: read before out (which may be in) is written */
                memcpy(g + at, in, len);
            xor_bytes(out, in, blk + 32, len);
            if (enc)
                memcpy(g + at, out, len);
        }
        at += 16 * nd;
        store_be64(g + at, (uint64_t)aad_len * 8);
        store_be64(g + at + 8, (uint64_t)len * 8);
        gh->update(hkey, y, g, at / 16 + 1);
        xor_bytes(full, y, blk + 16, 16);
    }
    kuai_wipe(blk, sizeof blk);
    kuai_wipe(y, sizeof y);
    return !d;
}

/* libc's memcpy through a pointer the compiler cannot see through: a
 * context's 960 bytes copied inline become rep movsq (gcm_with). */
static void *(*const volatile ctx_copy)(void *, const void *, size_t) = memcpy;

/* kuai_gcm_encrypt_with's and kuai_gcm_decrypt_with's single pass: a short
 * message under the template's material where it lies (gcm_with_short),
 * any other on a copy of the template, restarted (its material kept where
 * H matches, as kuai_gcm_restart keeps it). */
static void gcm_with(const kuai_gcm_ctx *t, const kuai_key *k, const uint8_t *iv, size_t iv_len,
                     const uint8_t *aad, size_t aad_len, const uint8_t *in, uint8_t *out,
                     size_t len, int enc, uint8_t full[16])
{
    /* the material where this copy of the template has it aligned (a
     * template copied to another alignment needs it moved: the copy) */
    const int in_place = t->priv_hkey_off == (uint32_t)(-(uintptr_t)t->priv_hkey & 63);
    if (in_place && gcm_short(k, iv_len, len) &&
        gcm_with_short(t, k, iv, aad, aad_len, in, out, len, enc, full))
        return;
    /* the copy at the template's alignment modulo 64, so that its material
     * stays where it is aligned (ctx_hkey would move it), by ctx_copy */
    _Alignas(64) unsigned char room[sizeof(kuai_gcm_ctx) + 64];
    kuai_gcm_ctx *c = (kuai_gcm_ctx *)(void *)(room + ((uintptr_t)t & 63));
    ctx_copy(c, t, sizeof *c);
    gcm_setup(c, k, ctx_ghash(c), iv, iv_len, 1);
    gcm_run(c, aad, aad_len, in, out, len, enc, full);
}

/* A one-shot message, on the template t's GHASH key material (t not NULL:
 * the _with calls) or on its own. */
static void gcm_message(const kuai_gcm_ctx *t, const kuai_key *k, const uint8_t *iv, size_t iv_len,
                        const uint8_t *aad, size_t aad_len, const uint8_t *in, uint8_t *out,
                        size_t len, int enc, uint8_t full[16])
{
    if (t)
        gcm_with(t, k, iv, iv_len, aad, aad_len, in, out, len, enc, full);
    else
        gcm_oneshot(k, iv, iv_len, aad, aad_len, in, out, len, enc, full);
}

static int gcm_seal(const kuai_gcm_ctx *t, const kuai_key *k, const uint8_t *iv, size_t iv_len,
                    const uint8_t *aad, size_t aad_len, const uint8_t *in, uint8_t *out, size_t len,
                    uint8_t *tag, size_t tag_len)
{
    int r = check_oneshot(k, iv, iv_len, aad, aad_len, in, out, len, tag, tag_len);
    if (r)
        return r;
    uint8_t full[16];
    gcm_message(t, k, iv, iv_len, aad, aad_len, in, out, len, 1, full);
    memcpy(tag, full, tag_len);
    kuai_wipe(full, sizeof full);
    return KUAI_OK;
}

static int gcm_open(const kuai_gcm_ctx *t, const kuai_key *k, const uint8_t *iv, size_t iv_len,
                    const uint8_t *aad, size_t aad_len, const uint8_t *in, uint8_t *out, size_t len,
                    const uint8_t *tag, size_t tag_len)
{
    int r = check_oneshot(k, iv, iv_len, aad, aad_len, in, out, len, tag, tag_len);
    if (r)
        return r;
    /* The tag is read before out is written: a caller may decrypt a
     * ciphertext || tag buffer to where its tag lies. */
    uint8_t want[16], full[16];
    memcpy(want, tag, tag_len);
    gcm_message(t, k, iv, iv_len, aad, aad_len, in, out, len, 0, full);
    return tag_verdict(full, want, tag_len, out, len);
}

int kuai_gcm_encrypt(const kuai_key *k, const uint8_t *iv, size_t iv_len, const uint8_t *aad,
                     size_t aad_len, const uint8_t *in, uint8_t *out, size_t len, uint8_t *tag,
                     size_t tag_len)
{
    return gcm_seal(NULL, k, iv, iv_len, aad, aad_len, in, out, len, tag, tag_len);
}

int kuai_gcm_decrypt(const kuai_key *k, const uint8_t *iv, size_t iv_len, const uint8_t *aad,
                     size_t aad_len, const uint8_t *in, uint8_t *out, size_t len,
                     const uint8_t *tag, size_t tag_len)
{
    return gcm_open(NULL, k, iv, iv_len, aad, aad_len, in, out, len, tag, tag_len);
}

/* A template init set up, in any state short of final or wipe (as
 * kuai_gcm_restart takes one), only read. */
static int check_template(const kuai_gcm_ctx *t)
{
    return t && t->priv_magic == GCM_MAGIC ? KUAI_OK : KUAI_ERR_ARG;
}

int kuai_gcm_encrypt_with(const kuai_gcm_ctx *tmpl, const kuai_key *k, const uint8_t *iv,
                          size_t iv_len, const uint8_t *aad, size_t aad_len, const uint8_t *in,
                          uint8_t *out, size_t len, uint8_t *tag, size_t tag_len)
{
    int r = check_template(tmpl);
    return r ? r : gcm_seal(tmpl, k, iv, iv_len, aad, aad_len, in, out, len, tag, tag_len);
}

int kuai_gcm_decrypt_with(const kuai_gcm_ctx *tmpl, const kuai_key *k, const uint8_t *iv,
                          size_t iv_len, const uint8_t *aad, size_t aad_len, const uint8_t *in,
                          uint8_t *out, size_t len, const uint8_t *tag, size_t tag_len)
{
    int r = check_template(tmpl);
    return r ? r : gcm_open(tmpl, k, iv, iv_len, aad, aad_len, in, out, len, tag, tag_len);
}

/* ---- public: streaming -------------------------------------------------- */

int kuai_gcm_init(kuai_gcm_ctx *ctx, const kuai_key *k, const uint8_t *iv, size_t iv_len)
{
    if (!ctx)
        return KUAI_ERR_ARG;
    int r = check_key_iv(k, iv, iv_len);
    if (r)
        return r;
    gcm_setup(ctx, k, kuai_ghash_best(), iv, iv_len, 0);
    return KUAI_OK;
}

/* A context init set up, in any state short of final or wipe: its key
 * material is checked against k's H, not trusted, so its own key may have
 * changed or gone since. */
int kuai_gcm_restart(kuai_gcm_ctx *ctx, const kuai_key *k, const uint8_t *iv, size_t iv_len)
{
    int r = check_template(ctx);
    if (r)
        return r;
    r = check_key_iv(k, iv, iv_len);
    if (r)
        return r;
    gcm_setup(ctx, k, ctx_ghash(ctx), iv, iv_len, 1);
    return KUAI_OK;
}

int kuai_gcm_aad(kuai_gcm_ctx *ctx, const uint8_t *aad, size_t len)
{
    int r = check_ctx(ctx);
    if (r)
        return r;
    if (ctx->priv_phase != PHASE_AAD || (len && !aad))
        return KUAI_ERR_ARG;
    if ((uint64_t)len > GCM_MAX_AAD - ctx->priv_aad_len)
        return KUAI_ERR_LENGTH;
    if (!span_ok(aad, len)) /* as the one-shot calls' AAD, check_oneshot */
        return KUAI_ERR_ARG;
    if (len)
        gcm_absorb_aad(ctx, aad, len);
    return KUAI_OK;
}

static int stream_update(kuai_gcm_ctx *ctx, const uint8_t *in, uint8_t *out, size_t len, int enc)
{
    int r = check_ctx(ctx);
    if (r)
        return r;
    enum gcm_phase want = enc ? PHASE_ENC : PHASE_DEC;
    if ((ctx->priv_phase != PHASE_AAD && ctx->priv_phase != want) || !buffers_ok(in, out, len))
        return KUAI_ERR_ARG;
    if ((uint64_t)len > GCM_MAX_DATA - ctx->priv_data_len)
        return KUAI_ERR_LENGTH;
    if (len)
        gcm_crypt(ctx, in, out, len, enc);
    return KUAI_OK;
}

int kuai_gcm_encrypt_update(kuai_gcm_ctx *ctx, const uint8_t *in, uint8_t *out, size_t len)
{
    return stream_update(ctx, in, out, len, 1);
}

int kuai_gcm_decrypt_update(kuai_gcm_ctx *ctx, const uint8_t *in, uint8_t *out, size_t len)
{
    return stream_update(ctx, in, out, len, 0);
}

/* A final call may follow AAD alone (no update) in either direction. */
static int check_final(const kuai_gcm_ctx *ctx, const uint8_t *tag, size_t tag_len, int enc)
{
    int r = check_ctx(ctx);
    if (r)
        return r;
    enum gcm_phase want = enc ? PHASE_ENC : PHASE_DEC;
    if (ctx->priv_phase != PHASE_AAD && ctx->priv_phase != want)
        return KUAI_ERR_ARG;
    return check_tag(tag, tag_len);
}

int kuai_gcm_encrypt_final(kuai_gcm_ctx *ctx, uint8_t *tag, size_t tag_len)
{
    int r = check_final(ctx, tag, tag_len, 1);
    if (r)
        return r;
    uint8_t full[16];
    gcm_tag(ctx, full);
    memcpy(tag, full, tag_len);
    kuai_wipe(full, sizeof full);
    kuai_gcm_wipe(ctx);
    return KUAI_OK;
}

int kuai_gcm_decrypt_final(kuai_gcm_ctx *ctx, const uint8_t *tag, size_t tag_len)
{
    int r = check_final(ctx, tag, tag_len, 0);
    if (r)
        return r;
    uint8_t full[16];
    gcm_tag(ctx, full);
    kuai_gcm_wipe(ctx);
    return tag_verdict(full, tag, tag_len, NULL, 0);
}

void kuai_gcm_wipe(kuai_gcm_ctx *ctx)
{
    if (ctx)
        kuai_wipe(ctx, sizeof *ctx);
}
