/* SPDX-License-Identifier: Apache-2.0 */
/* Helpers shared by the mode files. */
#ifndef KUAI_MODES_H
#define KUAI_MODES_H

#include "../internal.h"

#include <stdint.h>
#include <string.h>

/* Blocks per internal chunk: the widest pass of any backend (SM4 gfni runs
 * 128 blocks at once), small enough for the stack (128 x 32 bytes). */
#define KUAI_CHUNK_BLOCKS 128

/* 16 bytes as one vector (GNU vector extension: SSE2 on x86, NEON on Arm,
 * pairs of words elsewhere). */
typedef uint64_t kuai_u64x2 __attribute__((vector_size(16)));

/* dst may equal a or b. 16 bytes at a time through memcpy, which compilers
 * turn into plain (or vector) loads and stores without alignment demands:
 * the CBC decryption pass XORs whole chunks behind a fast kernel, and 16-byte
 * loads of what the kernel stored forward from its 16-byte stores. */
static inline void xor_bytes(uint8_t *dst, const uint8_t *a, const uint8_t *b, size_t n)
{
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        kuai_u64x2 x, y;
        memcpy(&x, a + i, 16);
        memcpy(&y, b + i, 16);
        x ^= y;
        memcpy(dst + i, &x, 16);
    }
    for (; i + 8 <= n; i += 8) {
        uint64_t x, y;
        memcpy(&x, a + i, 8);
        memcpy(&y, b + i, 8);
        x ^= y;
        memcpy(dst + i, &x, 8);
    }
    for (; i < n; i++)
        dst[i] = a[i] ^ b[i];
}

/* in == out is fine; any other overlap is refused, since the wide kernels
 * read ahead of where they write. No buffer is larger than PTRDIFF_MAX or
 * runs past the end of the address space, so such a length is a caller's
 * mistake (a negative value turned size_t, a wrong subtraction) and refused
 * for in == out too. The overlap test compares the distance between the
 * buffers with len: a sum (in + len) wraps for a len near SIZE_MAX and
 * would let two small buffers pass. */
static inline int buffers_ok(const uint8_t *in, const uint8_t *out, size_t len)
{
    if (len == 0)
        return 1;
    if (!in || !out)
        return 0;
    uintptr_t a = (uintptr_t)in, b = (uintptr_t)out;
    if (len > (size_t)PTRDIFF_MAX || len > UINTPTR_MAX - a || len > UINTPTR_MAX - b)
        return 0;
    if (a == b)
        return 1;
    return (a < b ? b - a : a - b) >= len;
}

/* A buffer that is only read (the CMAC message, CCM's AAD): as
 * buffers_ok for one buffer. NULL with a length, a length over PTRDIFF_MAX
 * or one running past the end of the address space is refused, where
 * reading it would run off the caller's buffer. */
static inline int span_ok(const uint8_t *p, size_t len)
{
    return buffers_ok(p, p, len);
}

/* What a single-key call needs beyond key and buffers. */
enum call_kind {
    CALL_ECB, /* whole blocks */
    CALL_CBC, /* whole blocks and an IV */
    CALL_CTR  /* any length and a counter */
};

/* Common checks of the single-key calls, all made before anything is
 * written. Returns the block size through *bs. */
static inline int check_call(const kuai_key *k, const uint8_t *in, const uint8_t *out, size_t len,
                             enum call_kind kind, const uint8_t *iv, size_t *bs)
{
    int r = kuai_key_check(k);
    if (r)
        return r;
    if (!buffers_ok(in, out, len) || (kind != CALL_ECB && !iv))
        return KUAI_ERR_ARG;
    *bs = kuai_cipher_block((kuai_cipher)k->priv_cipher);
    if (kind != CALL_CTR && kuai_tail_of(len, *bs))
        return KUAI_ERR_LENGTH;
    return KUAI_OK;
}

/* kuai_cbc_encrypt and kuai_cbc_decrypt after their checks (check_call's,
 * or the multi-key call's for every stream; bs the key's block size). */
void cbc_encrypt_checked(const kuai_key *k, uint8_t *iv, const uint8_t *in, uint8_t *out,
                         size_t len, size_t bs);
void cbc_decrypt_checked(const kuai_key *k, uint8_t *iv, const uint8_t *in, uint8_t *out,
                         size_t len, size_t bs);

/* A key set up, of a cipher with a 128-bit block (the modes SP 800-38B..F
 * define for those alone: CFB, OFB, CCM, CMAC, key wrap). */
static inline int check_key128(const kuai_key *k)
{
    int r = kuai_key_check(k);
    if (r)
        return r;
    return kuai_cipher_block((kuai_cipher)k->priv_cipher) == 16 ? KUAI_OK : KUAI_ERR_UNSUPPORTED;
}

/* The checks of CFB and OFB (128-bit blocks only, any length, an IV; CCM
 * passes its nonce), all made before anything is written. */
static inline int check_stream128(const kuai_key *k, const uint8_t *iv, const uint8_t *in,
                                  const uint8_t *out, size_t len)
{
    int r = check_key128(k);
    if (r)
        return r;
    if (!iv || !buffers_ok(in, out, len))
        return KUAI_ERR_ARG;
    return KUAI_OK;
}

/* Add n to a big-endian counter of bs bytes, mod 2^(8 bs). No branch on
 * the counter's value. */
static inline void ctr_add(uint8_t *ctr, size_t bs, uint64_t n)
{
    unsigned carry = 0;
    for (size_t i = bs; i-- > 0;) {
        unsigned s = ctr[i] + (unsigned)(n & 0xff) + carry;
        ctr[i] = (uint8_t)s;
        carry = s >> 8;
        n >>= 8;
    }
}

/* GCM's CTR (gcm.c): the low 32 bits of ctr count (inc32), the upper 96
 * stay. ctr_secret: the counter was derived from the key (IVs other than 12
 * bytes), so no branch or fused backend path may see it. Exposed for the
 * tests, which drive it across the 2^32 wrap. */
void kuai_gcm_ctr32(const kuai_key *k, uint8_t ctr[16], const uint8_t *in, uint8_t *out,
                    size_t nblocks, int ctr_secret);

#endif
