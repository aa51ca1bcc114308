/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Portable GHASH, constant time: no table lookups and no branches on data
 * or key, only shifts, ANDs, XORs and integer multiplications (constant
 * time on the CPUs we target).
 *
 * Why the reflected Montgomery form works (the SIMD backends share it).
 * SP 800-38D numbers the bits of a block from the most significant bit of
 * byte 0, as coefficients of x^0 .. x^127. Read the block as a big-endian
 * integer and integer bit 127 - i holds the coefficient of x^i: the integer
 * is the element "reflected". Writing integers as polynomials in y (bit j
 * <-> y^j), reflect(A) = y^127 A(1/y), and the product of two reflected
 * elements is y^254 (AB)(1/y). Reducing AB modulo P = x^128 + x^7 + x^2 +
 * x + 1 turns, in the y picture, into Montgomery reduction modulo the
 * reciprocal polynomial P* = y^128 + y^127 + y^126 + y^121 + 1:
 *     reflect(AB mod P) = reflect(A) reflect(B) y^(1-128)  (mod P*).
 * Multiplying the key once by y (h' = reflect(H) y mod P*) absorbs the
 * stray y, so each step is one carry-less 128x128 product and one
 * reduction that divides by y^128. That reduction clears the low 128 bits
 * 64 at a time: P* = 1 mod y^64, so adding (low word) * P* clears it, and
 * P* - 1 - y^128 = y^64 (y^57 + y^62 + y^63), the constant 0xC2 << 56.
 *
 * Carry-less products come from integer multiplication with holes: keep
 * every fourth bit of each operand; in a 32x32 product of such operands at
 * most 8 pairs meet at any bit position, so the sum there fits below the
 * next position of the same residue and its low bit is the XOR we want.
 */
#include "ghash.h"

#include "../bytes.h"

#include <string.h>

typedef struct u128 {
    uint64_t hi, lo;
} u128;

/* Where the ISA reverses a word's bits in one instruction (LoongArch's
 * bitrev.d, ARM64's rbit) and the compiler says how, a 64x64 product's
 * two halves come from two 64-bit products with holes (clmul64 below). */
#if defined(__loongarch64) || defined(__aarch64__)
#if defined(__has_builtin)
#if __has_builtin(__builtin_bitreverse64)
#define GHASH_REF_BITREV 1
#endif
#endif
#endif

/* The low 64 bits of a carry-less 64x64 product, from integer products
 * with holes (the top of the file): below bit 60 at most 15 pairs meet at
 * a bit position, so each sum stays below the next position of its
 * residue, and the sums of 16 at bits 60-63 carry only past bit 63, out
 * of the word. With 32-bit operands it is their whole product (at most 8
 * pairs meet). */
static uint64_t clmul64_lo(uint64_t a, uint64_t b)
{
    const uint64_t m0 = 0x1111111111111111ull, m1 = m0 << 1, m2 = m0 << 2, m3 = m0 << 3;
    uint64_t a0 = a & m0, a1 = a & m1, a2 = a & m2, a3 = a & m3;
    uint64_t b0 = b & m0, b1 = b & m1, b2 = b & m2, b3 = b & m3;
    uint64_t z0 = (a0 * b0) ^ (a1 * b3) ^ (a2 * b2) ^ (a3 * b1);
    uint64_t z1 = (a0 * b1) ^ (a1 * b0) ^ (a2 * b3) ^ (a3 * b2);
    uint64_t z2 = (a0 * b2) ^ (a1 * b1) ^ (a2 * b0) ^ (a3 * b3);
    uint64_t z3 = (a0 * b3) ^ (a1 * b2) ^ (a2 * b1) ^ (a3 * b0);
    return (z0 & m0) | (z1 & m1) | (z2 & m2) | (z3 & m3);
}

#ifdef GHASH_REF_BITREV
/* Carry-less 64x64 -> 128: the low half as above; the product of the
 * reversed operands is the whole product reversed over its 127 bits, so
 * its low half reversed is the product's bits 63-126. 32 multiplications
 * where the Karatsuba form below takes 48 (QEMU's count of AES-128-GCM on
 * LoongArch's lsx, 4 KiB: docs/performance.md). */
static u128 clmul64(uint64_t a, uint64_t b)
{
    uint64_t lo = clmul64_lo(a, b);
    uint64_t hi =
        __builtin_bitreverse64(clmul64_lo(__builtin_bitreverse64(a), __builtin_bitreverse64(b))) >>
        1;
    u128 r = {hi, lo};
    return r;
}
#else
/* Carry-less 64x64 -> 128, Karatsuba over 32-bit halves. */
static u128 clmul64(uint64_t a, uint64_t b)
{
    uint32_t a0 = (uint32_t)a, a1 = (uint32_t)(a >> 32);
    uint32_t b0 = (uint32_t)b, b1 = (uint32_t)(b >> 32);
    uint64_t lo = clmul64_lo(a0, b0), hi = clmul64_lo(a1, b1);
    uint64_t mid = clmul64_lo(a0 ^ a1, b0 ^ b1) ^ lo ^ hi;
    u128 r = {hi ^ (mid >> 32), lo ^ (mid << 32)};
    return r;
}
#endif

/* reflect(a) * h' reduced: one GHASH multiplication in the reflected
 * Montgomery form (see the top of the file). */
static u128 gf_mul(u128 a, u128 h)
{
    /* 128x128 -> 256 as d3:d2:d1:d0, Karatsuba over 64-bit halves. */
    u128 lo = clmul64(a.lo, h.lo), hi = clmul64(a.hi, h.hi);
    u128 mid = clmul64(a.lo ^ a.hi, h.lo ^ h.hi);
    mid.hi ^= lo.hi ^ hi.hi;
    mid.lo ^= lo.lo ^ hi.lo;
    uint64_t d0 = lo.lo, d1 = lo.hi ^ mid.lo, d2 = hi.lo ^ mid.hi, d3 = hi.hi;

    u128 r;
    ghash_reduce_words(&r.hi, &r.lo, d0, d1, d2, d3);
    return r;
}

/* h' = reflect(H) * y mod P*: a shift left, and P*'s low 128 bits
 * (0xC2 << 120 | 1) added when a bit falls off the top. Exported within
 * the library for the SIMD backends' key setup. */
void kuai_ghash_key_reflect(uint8_t out[16], const uint8_t h[16])
{
    uint64_t hi = load_be64(h), lo = load_be64(h + 8);
    uint64_t carry = 0 - (hi >> 63); /* all ones when bit 127 is set */
    hi = (hi << 1 | lo >> 63) ^ (carry & 0xC200000000000000ull);
    lo = (lo << 1) ^ (carry & 1);
    store_be64(out, hi);
    store_be64(out + 8, lo);
}

/* Key material: h' as two words. */
static void ref_init(unsigned char *hkey, const uint8_t h[16])
{
    uint8_t hr[16];
    kuai_ghash_key_reflect(hr, h);
    u128 k = {load_be64(hr), load_be64(hr + 8)};
    memcpy(hkey, &k, sizeof k);
    kuai_wipe(hr, sizeof hr);
}

static void ref_update(const unsigned char *hkey, uint8_t y[16], const uint8_t *in, size_t nblocks)
{
    u128 h, acc = {load_be64(y), load_be64(y + 8)};
    memcpy(&h, hkey, sizeof h);
    for (size_t i = 0; i < nblocks; i++, in += 16) {
        acc.hi ^= load_be64(in);
        acc.lo ^= load_be64(in + 8);
        acc = gf_mul(acc, h);
    }
    store_be64(y, acc.hi);
    store_be64(y + 8, acc.lo);
    kuai_wipe(&h, sizeof h);
}

static int ref_available(void)
{
    return 1;
}

/* The portable one, below every other. */
KUAI_REGISTER_GHASH(ghash_ref);
const ghash_impl ghash_ref = {
    .priority = 0,
    .name = "ref",
    .available = ref_available,
    .powers = 1,
    .init = ref_init,
    .update = ref_update,
};
