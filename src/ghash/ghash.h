/* SPDX-License-Identifier: Apache-2.0 */
/*
 * GHASH, a primitive of its own: GCM's mode code (src/modes/gcm.c) is
 * written once over these function pointers, and a fused AES-CTR+GHASH
 * kernel (an entry of a cipher backend's kuai_impl.gcm) hashes with one
 * backend's key material. The backends register as the cipher backends do
 * (KUAI_REGISTER_GHASH, collected by CMakeLists.txt), and the registry
 * (src/registry.c) sorts them by priority once and picks the best usable.
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

#include "../cpu.h"
#include "../wipe.h"

#include <stddef.h>
#include <stdint.h>

/* Size of the key-material area (kuai_gcm_ctx.priv_hkey). */
#define GHASH_KEY_BYTES 768

typedef struct ghash_impl {
    const char *name;
    int priority; /* highest usable first */
    int (*available)(void);
    /* powers of H init makes (the blocks update folds per reduction):
     * init's cost grows with them (kuai_ghash_short) */
    unsigned powers;
    /* h: the hash subkey E_K(0^128). Fills hkey (GHASH_KEY_BYTES, 64-byte
     * aligned) with whatever update needs. */
    void (*init)(unsigned char *hkey, const uint8_t h[16]);
    /* y = (...((y ^ in_0) H ^ in_1) H ... ^ in_{n-1}) H over nblocks whole
     * blocks; y in SP 800-38D byte order. */
    void (*update)(const unsigned char *hkey, uint8_t y[16], const uint8_t *in, size_t nblocks);
} ghash_impl;

/* The reduction of the reflected Montgomery form (derived in ghash_ref.c):
 * the 256-bit carry-less product d3:d2:d1:d0 times y^-128 mod P*, as its
 * high word *hi and low word *lo. Shifts and XORs only; the backends
 * without a carry-less multiplication instruction share it. Each step
 * clears one low word by adding that word times P* = 1 + y^64 (y^57 +
 * y^62 + y^63) + y^128; the result is what is left above y^128. */
static inline void ghash_reduce_words(uint64_t *hi, uint64_t *lo, uint64_t d0, uint64_t d1,
                                      uint64_t d2, uint64_t d3)
{
    d1 ^= (d0 << 57) ^ (d0 << 62) ^ (d0 << 63);
    d2 ^= (d0 >> 7) ^ (d0 >> 2) ^ (d0 >> 1) ^ d0;
    d2 ^= (d1 << 57) ^ (d1 << 62) ^ (d1 << 63);
    d3 ^= (d1 >> 7) ^ (d1 >> 2) ^ (d1 >> 1) ^ d1;
    *hi = d3;
    *lo = d2;
}

#if defined(__loongarch64)
/* hi[agg - k], lo[agg - k] = H^k in the key form (h' of
 * kuai_ghash_key_reflect and its Montgomery products), k = 1..agg, agg <=
 * GHASH_LSX_MAX_POWERS: the LSX and LASX backends' powers (ghash_lsx.c). */
#define GHASH_LSX_MAX_POWERS 4
void kuai_ghash_lsx_powers(uint64_t *hi, uint64_t *lo, const uint8_t h[16], int agg);
#endif

/* A backend file registers its table on a line of its own (see
 * KUAI_REGISTER in src/seam.h). */
#define KUAI_REGISTER_GHASH(sym) extern const ghash_impl sym

/* Named by others: the tests' reference, and the key material the fused
 * GCM kernels read (AES-NI's: pclmul; VAES's: vpclmul512 on zmm, vpclmul
 * on ymm). */
extern const ghash_impl ghash_ref;
#if defined(KUAI_X86_64)
extern const ghash_impl ghash_pclmul;
extern const ghash_impl ghash_vpclmul;
extern const ghash_impl ghash_vpclmul512;
#endif

/* h' = reflect(H) * y mod P*, as a big-endian block: the one key form
 * every backend starts from (ghash_ref.c). */
void kuai_ghash_key_reflect(uint8_t out[16], const uint8_t h[16]);

/* pow[agg - k] = H^k for k = 1..agg (the descending layout the backends'
 * keys share: a run of n blocks meets H^n..H^1 at pow[agg - n]), from
 * pow[agg - 1] = H already set, by doubling: H^(m + k) = H^m H^k for k <= m,
 * m a power of two. The chain is then log2(agg) + 1 multiplications deep
 * and the rest independent, where the powers one after another were agg - 1
 * dependent ones: every GCM message sets its key up, and this was most of
 * a short message's time (AES-128-GCM of 64 bytes, vpclmul512's 32 powers:
 * 733 -> 532 TSC cycles; Xeon, Sapphire Rapids). mul(a, b) is the
 * backend's product in its key form. */
#define GHASH_POWERS(pow, agg, mul)                                                                \
    do {                                                                                           \
        for (int m_ = 1; m_ < (agg); m_ *= 2)                                                      \
            for (int k_ = 1; k_ <= m_ && m_ + k_ <= (agg); k_++)                                   \
                (pow)[(agg)-m_ - k_] = mul((pow)[(agg)-m_], (pow)[(agg)-k_]);                      \
    } while (0)

/* All GHASH backends built in, best first, NULL-terminated (usable or not:
 * check available()); the tests reach them through this. The best usable
 * one, chosen once per process. (src/registry.c) */
const ghash_impl *const *kuai_ghash_impls(void);
const ghash_impl *kuai_ghash_best(void);
/* The one for a short message (a few blocks, where the powers of H init
 * makes are most of GHASH's time): the usable one with the fewest powers,
 * the higher priority among equals, ref (one power, but the slowest
 * product) only where no other is usable (src/registry.c). */
const ghash_impl *kuai_ghash_short(void);

#endif
