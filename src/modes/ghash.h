/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The GHASH seam: GCM's mode code (gcm.c) is written once over these
 * function pointers; the backend is chosen at run time from
 * kuai_cpu_features().
 *
 * Every backend works in the same domain, so their key material differs
 * but their accumulator does not: the accumulator y is kept in the byte
 * order of SP 800-38D (a GCM block as it appears on the wire), and a
 * backend may switch to its own form inside update.
 *
 * The shared arithmetic (derived in ghash_ref.c): a block read as a
 * big-endian 128-bit integer is the bit-reflection of the field element.
 * In that reflected form, with h' = reflect(H) * y mod the reflected
 * polynomial, X*H = MontgomeryReduce(clmul(reflect(X), h')), where the
 * reduction divides by y^128 modulo y^128 + y^127 + y^126 + y^121 + 1 and
 * needs only a multiplication by the 64-bit constant 0xC200000000000000.
 * Powers of H in that form multiply the same way, which is what lets the
 * SIMD backends sum several products and reduce once.
 */
#ifndef KUAI_GHASH_H
#define KUAI_GHASH_H

#include "../internal.h"

#include <stddef.h>
#include <stdint.h>

/* Size of the key-material area (kuai_gcm_ctx.priv_hkey). */
#define GHASH_KEY_BYTES 768

typedef struct ghash_impl {
    const char *name;
    int (*available)(void);
    /* h: the hash subkey E_K(0^128). Fills hkey (GHASH_KEY_BYTES, 64-byte
     * aligned) with whatever update needs. */
    void (*init)(unsigned char *hkey, const uint8_t h[16]);
    /* y = (...((y ^ in_0) H ^ in_1) H ... ^ in_{n-1}) H over nblocks whole
     * blocks; y in SP 800-38D byte order. */
    void (*update)(const unsigned char *hkey, uint8_t y[16], const uint8_t *in, size_t nblocks);
} ghash_impl;

extern const ghash_impl ghash_ref;
#if defined(KUAI_X86_64)
extern const ghash_impl ghash_pclmul;
extern const ghash_impl ghash_vpclmul;
extern const ghash_impl ghash_vpclmul512;
#endif
#if defined(KUAI_AARCH64)
extern const ghash_impl ghash_pmull;
#endif

/* h' = reflect(H) * y mod P*, as a big-endian block: the one key form
 * every backend starts from (ghash_ref.c). */
void kuai_ghash_key_reflect(uint8_t out[16], const uint8_t h[16]);

/* All GHASH backends built in, best first, NULL-terminated (usable or not:
 * check available()). The tests reach them through this. */
const ghash_impl *const *kuai_ghash_impls(void);
/* The best usable backend. */
const ghash_impl *kuai_ghash_best(void);

/* GCM's CTR: the low 32 bits of ctr count (inc32), the upper 96 stay.
 * ctr_secret: the counter was derived from the key (IVs other than 12
 * bytes), so no branch or fused backend path may see it. Exposed for the
 * tests, which drive it across the 2^32 wrap. */
void kuai_gcm_ctr32(const kuai_key *k, uint8_t ctr[16], const uint8_t *in, uint8_t *out,
                    size_t nblocks, int ctr_secret);

#endif
