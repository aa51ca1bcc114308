/* SPDX-License-Identifier: Apache-2.0 */
/*
 * make test-shim: the x86 instructions that neither this CPU nor QEMU may
 * have (AVX-512 F/BW/VL/VBMI, GFNI, VPCLMULQDQ, VAES), as plain C and
 * the AVX2 / AES-NI / PCLMULQDQ instructions the build machine has, for a
 * test build only (KUAI_ISA_SHIM in CMakeLists.txt).
 *
 * The backend files that use them are compiled once more with this header
 * forced in front (-include) and without the missing ISA flags, so every
 * intrinsic they name resolves to a function below and the compiler cannot
 * emit one of those instructions. What that tests is the kernels' logic:
 * lane layouts, masks, immediates, tails, key layouts. The instruction
 * encodings are the compiler's and are not tested here (QEMU runs the real
 * VAES encodings in make test-cross; VPCLMULQDQ, GFNI and AVX-512 it cannot).
 *
 * Each function follows the operation pseudocode of Intel's Intrinsics
 * Guide. An error here shows as a backend disagreeing with the portable
 * one on the vectors, not as a pass: the shim has no way to agree with ref
 * except by computing what the instruction computes.
 *
 * Slow, and never linked into the library. The operations whose inputs
 * the kernels feed secret data (byte shuffles and permutes, GF(2^8)
 * products and inverses, masks) have no branch or memory index on their
 * data, so that make test-ct, built with this header too, runs the
 * shimmed backends (AVX-512, GFNI, VAES, VPCLMULQDQ) under valgrind,
 * whose CPU lacks those instructions: a secret-dependent branch or table
 * index in those backends' own code is then reported (docs/security.md).
 */
#ifndef KUAI_ISA_SHIM_H
#define KUAI_ISA_SHIM_H

#include <immintrin.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>

typedef union kshim512 {
    __m512i v;
    uint8_t b[64];
    uint32_t d[16];
    uint64_t q[8];
    __m128i x[4];
    __m256i y[2];
} kshim512;

typedef union kshim256 {
    __m256i v;
    uint64_t q[4];
    __m128i x[2];
} kshim256;

#define KSHIM static inline __attribute__((unused))

/* ---- 512-bit whole-register operations --------------------------------- */

KSHIM __m512i kshim_setzero(void)
{
    kshim512 r;
    memset(&r, 0, sizeof r);
    return r.v;
}

KSHIM __m512i kshim_set1_8(char c)
{
    kshim512 r;
    memset(r.b, (unsigned char)c, 64);
    return r.v;
}

KSHIM __m512i kshim_set1_32(int w)
{
    kshim512 r;
    for (int i = 0; i < 16; i++)
        r.d[i] = (uint32_t)w;
    return r.v;
}

KSHIM __m512i kshim_set1_64(long long w)
{
    kshim512 r;
    for (int i = 0; i < 8; i++)
        r.q[i] = (uint64_t)w;
    return r.v;
}

KSHIM __m512i kshim_setr_64(long long e0, long long e1, long long e2, long long e3, long long e4,
                            long long e5, long long e6, long long e7)
{
    const long long e[8] = {e0, e1, e2, e3, e4, e5, e6, e7};
    kshim512 r;
    for (int i = 0; i < 8; i++)
        r.q[i] = (uint64_t)e[i];
    return r.v;
}

KSHIM __m512i kshim_setr_32(int e0, int e1, int e2, int e3, int e4, int e5, int e6, int e7, int e8,
                            int e9, int e10, int e11, int e12, int e13, int e14, int e15)
{
    const int e[16] = {e0, e1, e2, e3, e4, e5, e6, e7, e8, e9, e10, e11, e12, e13, e14, e15};
    kshim512 r;
    for (int i = 0; i < 16; i++)
        r.d[i] = (uint32_t)e[i];
    return r.v;
}

KSHIM __m512i kshim_loadu(const void *p)
{
    kshim512 r;
    memcpy(r.b, p, 64);
    return r.v;
}

KSHIM void kshim_storeu(void *p, __m512i a)
{
    kshim512 u = {.v = a};
    memcpy(p, u.b, 64);
}

/* Masked-off quadwords are not read (the backends rely on it at the end of
 * a buffer, and the guard-page tests check it). */
KSHIM __m512i kshim_maskz_loadu_64(__mmask8 k, const void *p)
{
    kshim512 r;
    for (int i = 0; i < 8; i++) {
        r.q[i] = 0;
        if (k >> i & 1)
            memcpy(&r.q[i], (const uint8_t *)p + 8 * i, 8);
    }
    return r.v;
}

KSHIM void kshim_mask_storeu_64(void *p, __mmask8 k, __m512i a)
{
    kshim512 r = {.v = a};
    for (int i = 0; i < 8; i++)
        if (k >> i & 1)
            memcpy((uint8_t *)p + 8 * i, &r.q[i], 8);
}

/* Any bitwise function of three inputs: bit (a << 2 | b << 1 | c) of imm. */
KSHIM __m512i kshim_ternarylogic(__m512i a, __m512i b, __m512i c, int imm)
{
    kshim512 ua = {.v = a}, ub = {.v = b}, uc = {.v = c}, r;
    for (int i = 0; i < 8; i++) {
        uint64_t x = 0;
        for (int t = 0; t < 8; t++)
            if (imm >> t & 1)
                x |= (t & 4 ? ua.q[i] : ~ua.q[i]) & (t & 2 ? ub.q[i] : ~ub.q[i]) &
                     (t & 1 ? uc.q[i] : ~uc.q[i]);
        r.q[i] = x;
    }
    return r.v;
}

/* The same on a ymm and an xmm (AVX-512VL's forms): the vocabulary's
 * P_xor3 (src/simd/sse.h, avx2.h) takes them where KUAI_SHIM_AVX512VL
 * says this header stands in for AVX-512VL, so its three-input form is
 * tested on CPUs without it too. */
KSHIM __m256i kshim_ternarylogic256(__m256i a, __m256i b, __m256i c, int imm)
{
    kshim512 ua = {.y = {a, a}}, ub = {.y = {b, b}}, uc = {.y = {c, c}}, r;
    r.v = kshim_ternarylogic(ua.v, ub.v, uc.v, imm);
    return r.y[0];
}

KSHIM __m128i kshim_ternarylogic128(__m128i a, __m128i b, __m128i c, int imm)
{
    kshim512 ua = {.x = {a}}, ub = {.x = {b}}, uc = {.x = {c}}, r;
    r.v = kshim_ternarylogic(ua.v, ub.v, uc.v, imm);
    return r.x[0];
}
#define KUAI_SHIM_AVX512VL 1

#define KSHIM_BITWISE(name, expr)                                                                  \
    KSHIM __m512i name(__m512i a, __m512i b)                                                       \
    {                                                                                              \
        kshim512 ua = {.v = a}, ub = {.v = b}, r;                                                  \
        for (int i = 0; i < 8; i++)                                                                \
            r.q[i] = expr;                                                                         \
        return r.v;                                                                                \
    }
KSHIM_BITWISE(kshim_xor, ua.q[i] ^ ub.q[i])
KSHIM_BITWISE(kshim_and, ua.q[i] & ub.q[i])
KSHIM_BITWISE(kshim_or, ua.q[i] | ub.q[i])
KSHIM_BITWISE(kshim_andnot, ~ua.q[i] & ub.q[i])

/* ---- per-element arithmetic, shifts and compares ----------------------- */

KSHIM __m512i kshim_srli_64(__m512i a, unsigned n)
{
    kshim512 u = {.v = a};
    for (int i = 0; i < 8; i++)
        u.q[i] = n > 63 ? 0 : u.q[i] >> n;
    return u.v;
}

/* the shift counts are never secret; the data may be */
KSHIM __m512i kshim_add_8(__m512i a, __m512i b)
{
    kshim512 ua = {.v = a}, ub = {.v = b};
    for (int i = 0; i < 64; i++)
        ua.b[i] = (uint8_t)(ua.b[i] + ub.b[i]);
    return ua.v;
}

KSHIM __m512i kshim_srlv_64(__m512i a, __m512i n)
{
    kshim512 u = {.v = a}, c = {.v = n};
    for (int i = 0; i < 8; i++)
        u.q[i] = c.q[i] > 63 ? 0 : u.q[i] >> c.q[i];
    return u.v;
}

KSHIM __m512i kshim_slli_64(__m512i a, unsigned n)
{
    kshim512 u = {.v = a};
    for (int i = 0; i < 8; i++)
        u.q[i] = n > 63 ? 0 : u.q[i] << n;
    return u.v;
}

KSHIM __m512i kshim_rol_32(__m512i a, int n)
{
    kshim512 u = {.v = a};
    unsigned s = (unsigned)n & 31;
    for (int i = 0; i < 16; i++)
        u.d[i] = s ? u.d[i] << s | u.d[i] >> (32 - s) : u.d[i];
    return u.v;
}

KSHIM __m512i kshim_ror_64(__m512i a, int n)
{
    kshim512 u = {.v = a};
    unsigned s = (unsigned)n & 63;
    for (int i = 0; i < 8; i++)
        u.q[i] = s ? u.q[i] >> s | u.q[i] << (64 - s) : u.q[i];
    return u.v;
}

KSHIM __m512i kshim_mask_add_32(__m512i src, __mmask16 k, __m512i a, __m512i b)
{
    kshim512 us = {.v = src}, ua = {.v = a}, ub = {.v = b};
    for (int i = 0; i < 16; i++)
        if (k >> i & 1)
            us.d[i] = ua.d[i] + ub.d[i];
    return us.v;
}

KSHIM __m512i kshim_add_32(__m512i a, __m512i b)
{
    return kshim_mask_add_32(a, 0xffff, a, b);
}

KSHIM __mmask16 kshim_cmplt_epu32_mask(__m512i a, __m512i b)
{
    kshim512 ua = {.v = a}, ub = {.v = b};
    unsigned k = 0;
    for (int i = 0; i < 16; i++)
        k |= (unsigned)(ua.d[i] < ub.d[i]) << i;
    return (__mmask16)k;
}

KSHIM __mmask16 kshim_mask_cmpeq_32_mask(__mmask16 m, __m512i a, __m512i b)
{
    kshim512 ua = {.v = a}, ub = {.v = b};
    unsigned k = 0;
    for (int i = 0; i < 16; i++)
        k |= (unsigned)(ua.d[i] == ub.d[i]) << i;
    return (__mmask16)(k & m);
}

KSHIM __mmask64 kshim_test_8_mask(__m512i a, __m512i b)
{
    kshim512 ua = {.v = a}, ub = {.v = b};
    __mmask64 k = 0;
    for (int i = 0; i < 64; i++)
        k |= (__mmask64)((ua.b[i] & ub.b[i]) != 0) << i;
    return k;
}

KSHIM __m512i kshim_movm_8(__mmask64 k)
{
    kshim512 r;
    for (int i = 0; i < 64; i++)
        r.b[i] = (uint8_t)(0u - (unsigned)(k >> i & 1));
    return r.v;
}

/* ---- shuffles, within 128-bit lanes and across the register ------------ */

/* vpunpckl/h (bw, dq, qdq): in each 128-bit lane, the e-byte elements of
 * a's and b's low half (hi 0) or high half (hi 1), interleaved */
KSHIM __m512i kshim_unpack(__m512i a, __m512i b, int hi, int e)
{
    kshim512 ua = {.v = a}, ub = {.v = b}, r;
    for (int l = 0; l < 4; l++)
        for (int i = 0; i < 8 / e; i++) {
            memcpy(&r.b[16 * l + 2 * e * i], &ua.b[16 * l + 8 * hi + e * i], (size_t)e);
            memcpy(&r.b[16 * l + 2 * e * i + e], &ub.b[16 * l + 8 * hi + e * i], (size_t)e);
        }
    return r.v;
}

/* The index bytes are secret data in the kernels (S-box lookups), so the
 * byte shuffles below are built from AVX2's (constant time: make test-ct
 * runs the shimmed backends under valgrind) instead of array lookups:
 * vpshufb is this one per 256-bit half. */
KSHIM __m512i kshim_shuffle_8(__m512i a, __m512i idx)
{
    kshim512 ua = {.v = a}, ui = {.v = idx}, r;
    for (int h = 0; h < 2; h++)
        r.y[h] = _mm256_shuffle_epi8(ua.y[h], ui.y[h]);
    return r.v;
}

KSHIM __m512i kshim_shuffle_32(__m512i a, int imm)
{
    kshim512 ua = {.v = a}, r;
    for (int i = 0; i < 16; i++)
        r.d[i] = ua.d[(i & ~3) + (imm >> (2 * (i & 3)) & 3)];
    return r.v;
}

/* Byte j of the table of n 16-byte lanes t[0..n-1] for every index byte
 * of idx (bits 4 and up of an index byte, masked by n - 1, pick the lane):
 * each lane broadcast and looked up by vpshufb, kept where the index
 * names it. vpermb (n = 4) and vpermt2b (n = 8, b's lanes after a's). */
KSHIM __m256i kshim_lookup_lanes(const __m128i *t, int n, __m256i idx)
{
    const __m256i lo = _mm256_and_si256(idx, _mm256_set1_epi8(15));
    const __m256i lane =
        _mm256_and_si256(_mm256_srli_epi16(idx, 4), _mm256_set1_epi8((char)(n - 1)));
    __m256i r = _mm256_setzero_si256();
    for (int l = 0; l < n; l++) {
        const __m256i v = _mm256_shuffle_epi8(_mm256_broadcastsi128_si256(t[l]), lo);
        r = _mm256_or_si256(
            r, _mm256_and_si256(v, _mm256_cmpeq_epi8(lane, _mm256_set1_epi8((char)l))));
    }
    return r;
}

KSHIM __m512i kshim_permutexvar_8(__m512i idx, __m512i a)
{
    kshim512 ua = {.v = a}, ui = {.v = idx}, r;
    for (int h = 0; h < 2; h++)
        r.y[h] = kshim_lookup_lanes(ua.x, 4, ui.y[h]);
    return r.v;
}

KSHIM __m512i kshim_permutex2var_8(__m512i a, __m512i idx, __m512i b)
{
    kshim512 ua = {.v = a}, ui = {.v = idx}, ub = {.v = b}, r;
    const __m128i t[8] = {ua.x[0], ua.x[1], ua.x[2], ua.x[3], ub.x[0], ub.x[1], ub.x[2], ub.x[3]};
    for (int h = 0; h < 2; h++)
        r.y[h] = kshim_lookup_lanes(t, 8, ui.y[h]);
    return r.v;
}

KSHIM __m512i kshim_broadcast_128(__m128i a)
{
    kshim512 r;
    for (int l = 0; l < 4; l++)
        r.x[l] = a;
    return r.v;
}

/* 128-bit lane l of a where bit 4l of k is clear, else b (the mask names
 * 32-bit elements; the kernels give it whole lanes) */
KSHIM __m512i kshim_mask_broadcast_128(__m512i a, unsigned k, __m128i b)
{
    kshim512 r = {.v = a};
    for (int l = 0; l < 4; l++)
        if (k >> (4 * l) & 1)
            r.x[l] = b;
    return r.v;
}

/* vpermb on ymm: 5 index bits, two 16-byte lanes */
KSHIM __m256i kshim_permutexvar_8_256(__m256i idx, __m256i a)
{
    kshim256 ua = {.v = a};
    return kshim_lookup_lanes(ua.x, 2, idx);
}

KSHIM __m512i kshim_broadcast_256(__m256i a)
{
    kshim512 r;
    r.y[0] = r.y[1] = a;
    return r.v;
}

KSHIM __m256i kshim_extract_256(__m512i a, int i)
{
    kshim512 u = {.v = a};
    return u.y[i & 1];
}

KSHIM __m256i kshim_cast_256(__m512i a)
{
    return kshim_extract_256(a, 0);
}

KSHIM __m128i kshim_extract_128(__m512i a, int i)
{
    kshim512 u = {.v = a};
    return u.x[i & 3];
}

/* qword l from b where bit l of k is set, else from a (k: a constant) */
KSHIM __m512i kshim_mask_blend_64(unsigned k, __m512i a, __m512i b)
{
    kshim512 r = {.v = a}, v = {.v = b};
    for (int l = 0; l < 8; l++)
        if (k >> l & 1)
            r.q[l] = v.q[l];
    return r.v;
}

KSHIM __m512i kshim_zext_128(__m128i a)
{
    kshim512 r;
    memset(&r, 0, sizeof r);
    r.x[0] = a;
    return r.v;
}

KSHIM __m512i kshim_zext_256(__m256i a)
{
    kshim512 r;
    memset(&r, 0, sizeof r);
    r.y[0] = a;
    return r.v;
}

KSHIM __m512i kshim_insert_256(__m512i a, __m256i b, int i)
{
    kshim512 u = {.v = a};
    u.y[i & 1] = b;
    return u.v;
}

/* vpermq with an immediate: in each 256-bit half, qword j from qword
 * (imm >> 2j) & 3 of that half */
KSHIM __m512i kshim_permutex_64(__m512i a, int imm)
{
    kshim512 u = {.v = a}, r;
    for (int i = 0; i < 8; i++)
        r.q[i] = u.q[(i & 4) + ((imm >> (2 * (i & 3))) & 3)];
    return r.v;
}

/* vpermd per half from each half of a, blended by index bit 3 */
KSHIM __m512i kshim_permutexvar_32(__m512i idx, __m512i a)
{
    kshim512 u = {.v = a}, ui = {.v = idx}, r;
    for (int h = 0; h < 2; h++) {
        const __m256i hi = _mm256_slli_epi32(_mm256_and_si256(ui.y[h], _mm256_set1_epi32(8)), 28);
        r.y[h] = _mm256_blendv_epi8(_mm256_permutevar8x32_epi32(u.y[0], ui.y[h]),
                                    _mm256_permutevar8x32_epi32(u.y[1], ui.y[h]),
                                    _mm256_srai_epi32(hi, 31));
    }
    return r.v;
}

/* ---- carry-less multiplication, per 128-bit lane ----------------------- */

/* Built with -mpclmul: the 128-bit instruction once per lane. */
#define KSHIM_CLMUL_LANES(u, ua, ub, n, imm)                                                       \
    for (int l = 0; l < (n); l++)                                                                  \
    u.x[l] = (imm) == 0x00   ? _mm_clmulepi64_si128(ua.x[l], ub.x[l], 0x00)                        \
             : (imm) == 0x01 ? _mm_clmulepi64_si128(ua.x[l], ub.x[l], 0x01)                        \
             : (imm) == 0x10 ? _mm_clmulepi64_si128(ua.x[l], ub.x[l], 0x10)                        \
                             : _mm_clmulepi64_si128(ua.x[l], ub.x[l], 0x11)

KSHIM __m256i kshim_clmul256(__m256i a, __m256i b, int imm)
{
    kshim256 ua = {.v = a}, ub = {.v = b}, r;
    KSHIM_CLMUL_LANES(r, ua, ub, 2, imm & 0x11);
    return r.v;
}

KSHIM __m512i kshim_clmul512(__m512i a, __m512i b, int imm)
{
    kshim512 ua = {.v = a}, ub = {.v = b}, r;
    KSHIM_CLMUL_LANES(r, ua, ub, 4, imm & 0x11);
    return r.v;
}

/* ---- VAES: the 128-bit AES-NI round once per lane ---------------------- */

/* vec: __m256i or __m512i; uni: its union (kshim256, kshim512) */
#define KSHIM_AES(name, insn, vec, uni, lanes)                                                     \
    KSHIM vec name(vec a, vec k)                                                                   \
    {                                                                                              \
        uni ua = {.v = a}, uk = {.v = k};                                                          \
        for (int l = 0; l < (lanes); l++)                                                          \
            ua.x[l] = insn(ua.x[l], uk.x[l]);                                                      \
        return ua.v;                                                                               \
    }
KSHIM_AES(kshim_aesenc256, _mm_aesenc_si128, __m256i, kshim256, 2)
KSHIM_AES(kshim_aesenclast256, _mm_aesenclast_si128, __m256i, kshim256, 2)
KSHIM_AES(kshim_aesdec256, _mm_aesdec_si128, __m256i, kshim256, 2)
KSHIM_AES(kshim_aesdeclast256, _mm_aesdeclast_si128, __m256i, kshim256, 2)
KSHIM_AES(kshim_aesenc512, _mm_aesenc_si128, __m512i, kshim512, 4)
KSHIM_AES(kshim_aesenclast512, _mm_aesenclast_si128, __m512i, kshim512, 4)

/* ---- GFNI affine transforms, per byte ---------------------------------- */

/* Product in GF(2^8) modulo x^8 + x^4 + x^3 + x + 1, GFNI's field;
 * without branches on a or b (secret bytes in make test-ct). */
KSHIM uint8_t kshim_gf_mul(uint8_t a, uint8_t b)
{
    unsigned p = 0, x = a;
    for (int i = 0; i < 8; i++) {
        p ^= x & (0u - (unsigned)(b >> i & 1));
        x = (x << 1) ^ (0x11bu & (0u - (x >> 7 & 1)));
    }
    return (uint8_t)p;
}

/* x^254: x^-1, and 0 for 0 (the exponent's bits are public) */
KSHIM uint8_t kshim_gf_pow254(uint8_t x)
{
    uint8_t r = 1, sq = x;
    for (int e = 254; e; e >>= 1) {
        if (e & 1)
            r = kshim_gf_mul(r, sq);
        sq = kshim_gf_mul(sq, sq);
    }
    return r;
}

/* x^-1 from a table of x^254 filled once (the multi-threaded tests reach
 * it from several threads), or, in make test-ct's build, computed for
 * each byte: a table looked up by a secret byte would be reported. Both
 * are kshim_gf_pow254, which make test-shim's vectors check. */
#if KUAI_CTGRIND
KSHIM uint8_t kshim_gf_inv(uint8_t x)
{
    return kshim_gf_pow254(x);
}
#else
static uint8_t kshim_inv_table[256];

static void kshim_inv_fill(void)
{
    for (int v = 0; v < 256; v++)
        kshim_inv_table[v] = kshim_gf_pow254((uint8_t)v);
}

KSHIM uint8_t kshim_gf_inv(uint8_t x)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, kshim_inv_fill);
    return kshim_inv_table[x];
}
#endif

/* Output bit i of each byte: parity of (byte 7 - i of its quadword of m)
 * AND the input byte, XOR bit i of c. */
KSHIM void kshim_affine_bytes(uint8_t *r, const uint8_t *x, const uint8_t *m, int n, int c, int inv)
{
    for (int j = 0; j < n; j++) {
        uint8_t in = inv ? kshim_gf_inv(x[j]) : x[j], out = 0;
        const uint8_t *q = m + (j & ~7);
        for (int i = 0; i < 8; i++)
            out |= (uint8_t)(__builtin_parity(q[7 - i] & in) << i);
        r[j] = out ^ (uint8_t)c;
    }
}

KSHIM __m512i kshim_affine512(__m512i x, __m512i m, int c, int inv)
{
    kshim512 ux = {.v = x}, um = {.v = m}, r;
    kshim_affine_bytes(r.b, ux.b, um.b, 64, c, inv);
    return r.v;
}

KSHIM __m128i kshim_affine128(__m128i x, __m128i m, int c, int inv)
{
    uint8_t ux[16], um[16], r[16];
    memcpy(ux, &x, 16);
    memcpy(um, &m, 16);
    kshim_affine_bytes(r, ux, um, 16, c, inv);
    __m128i v;
    memcpy(&v, r, 16);
    return v;
}

/* ---- the intrinsics' names, to the functions above --------------------- */

/* Some of these are macros in gcc's headers when not optimizing. */
#undef _mm512_setzero_si512
#undef _mm512_set1_epi8
#undef _mm512_set1_epi32
#undef _mm512_set1_epi64
#undef _mm512_setr_epi32
#undef _mm512_loadu_si512
#undef _mm512_load_si512
#undef _mm512_storeu_si512
#undef _mm512_maskz_loadu_epi64
#undef _mm512_mask_storeu_epi64
#undef _mm512_ternarylogic_epi64
#undef _mm512_ternarylogic_epi32
#undef _mm256_ternarylogic_epi32
#undef _mm_ternarylogic_epi32
#undef _mm512_xor_si512
#undef _mm512_and_si512
#undef _mm512_or_si512
#undef _mm512_andnot_si512
#undef _mm512_srli_epi64
#undef _mm512_slli_epi64
#undef _mm512_rol_epi32
#undef _mm512_add_epi32
#undef _mm512_mask_add_epi32
#undef _mm512_cmplt_epu32_mask
#undef _mm512_mask_cmpeq_epi32_mask
#undef _mm512_test_epi8_mask
#undef _mm512_movm_epi8
#undef _mm512_unpacklo_epi32
#undef _mm512_unpackhi_epi32
#undef _mm512_unpacklo_epi8
#undef _mm512_unpackhi_epi8
#undef _mm512_unpacklo_epi64
#undef _mm512_unpackhi_epi64
#undef _mm512_shuffle_epi8
#undef _mm512_shuffle_epi32
#undef _mm512_permutexvar_epi8
#undef _mm512_permutex2var_epi8
#undef _mm512_broadcast_i32x4
#undef _mm512_broadcast_i64x4
#undef _mm512_extracti64x4_epi64
#undef _mm512_castsi512_si256
#undef _mm512_extracti32x4_epi32
#undef _mm512_castsi512_si128
#undef _mm512_mask_blend_epi64
#undef _mm512_zextsi128_si512
#undef _mm512_castsi128_si512
#undef _mm512_castsi256_si512
#undef _mm512_inserti64x4
#undef _mm512_permutex_epi64
#undef _mm512_permutexvar_epi32
#undef _mm256_clmulepi64_epi128
#undef _mm512_clmulepi64_epi128
#undef _mm256_aesenc_epi128
#undef _mm256_aesenclast_epi128
#undef _mm256_aesdec_epi128
#undef _mm256_aesdeclast_epi128
#undef _mm512_aesenc_epi128
#undef _mm512_aesenclast_epi128
#undef _mm_gf2p8affine_epi64_epi8
#undef _mm_gf2p8affineinv_epi64_epi8
#undef _mm512_gf2p8affine_epi64_epi8
#undef _mm512_gf2p8affineinv_epi64_epi8

#define _mm512_setzero_si512() kshim_setzero()
#define _mm512_set1_epi8(c) kshim_set1_8(c)
#define _mm512_set1_epi32(w) kshim_set1_32(w)
#define _mm512_set1_epi64(w) kshim_set1_64(w)
#define _mm512_setr_epi32 kshim_setr_32
#undef _mm512_setr_epi64 /* a macro in GCC's header */
#define _mm512_setr_epi64 kshim_setr_64
#define _mm512_loadu_si512(p) kshim_loadu(p)
#define _mm512_load_si512(p) kshim_loadu(p)
#define _mm512_storeu_si512(p, a) kshim_storeu(p, a)
#define _mm512_maskz_loadu_epi64(k, p) kshim_maskz_loadu_64(k, p)
#define _mm512_mask_storeu_epi64(p, k, a) kshim_mask_storeu_64(p, k, a)
#define _mm512_ternarylogic_epi64(a, b, c, imm) kshim_ternarylogic(a, b, c, imm)
#define _mm512_ternarylogic_epi32(a, b, c, imm) kshim_ternarylogic(a, b, c, imm)
#define _mm256_ternarylogic_epi32(a, b, c, imm) kshim_ternarylogic256(a, b, c, imm)
#define _mm_ternarylogic_epi32(a, b, c, imm) kshim_ternarylogic128(a, b, c, imm)
#define _mm512_xor_si512(a, b) kshim_xor(a, b)
#define _mm512_and_si512(a, b) kshim_and(a, b)
#define _mm512_or_si512(a, b) kshim_or(a, b)
#define _mm512_andnot_si512(a, b) kshim_andnot(a, b)
#define _mm512_srli_epi64(a, n) kshim_srli_64(a, n)
#define _mm512_srlv_epi64(a, n) kshim_srlv_64(a, n)
#define _mm512_slli_epi64(a, n) kshim_slli_64(a, n)
#define _mm512_rol_epi32(a, n) kshim_rol_32(a, n)
#define _mm512_ror_epi64(a, n) kshim_ror_64(a, n)
#define _mm512_add_epi32(a, b) kshim_add_32(a, b)
#define _mm512_add_epi8(a, b) kshim_add_8(a, b)
#define _mm512_mask_add_epi32(s, k, a, b) kshim_mask_add_32(s, k, a, b)
#define _mm512_cmplt_epu32_mask(a, b) kshim_cmplt_epu32_mask(a, b)
#define _mm512_mask_cmpeq_epi32_mask(k, a, b) kshim_mask_cmpeq_32_mask(k, a, b)
#define _mm512_test_epi8_mask(a, b) kshim_test_8_mask(a, b)
#define _mm512_movm_epi8(k) kshim_movm_8(k)
#define _mm512_unpacklo_epi32(a, b) kshim_unpack(a, b, 0, 4)
#define _mm512_unpackhi_epi32(a, b) kshim_unpack(a, b, 1, 4)
#define _mm512_unpacklo_epi8(a, b) kshim_unpack(a, b, 0, 1)
#define _mm512_unpackhi_epi8(a, b) kshim_unpack(a, b, 1, 1)
#define _mm512_unpacklo_epi64(a, b) kshim_unpack(a, b, 0, 8)
#define _mm512_unpackhi_epi64(a, b) kshim_unpack(a, b, 1, 8)
#define _mm512_shuffle_epi8(a, b) kshim_shuffle_8(a, b)
#define _mm512_shuffle_epi32(a, imm) kshim_shuffle_32(a, (int)(imm))
#define _mm512_permutexvar_epi8(i, a) kshim_permutexvar_8(i, a)
#define _mm512_permutex2var_epi8(a, i, b) kshim_permutex2var_8(a, i, b)
#define _mm512_broadcast_i32x4(a) kshim_broadcast_128(a)
#define _mm512_mask_broadcast_i32x4(a, k, b) kshim_mask_broadcast_128(a, k, b)
#define _mm256_permutexvar_epi8(i, a) kshim_permutexvar_8_256(i, a)
#define _mm512_broadcast_i64x4(a) kshim_broadcast_256(a)
#define _mm512_extracti64x4_epi64(a, i) kshim_extract_256(a, i)
#define _mm512_castsi512_si256(a) kshim_cast_256(a)
#define _mm512_extracti32x4_epi32(a, i) kshim_extract_128(a, i)
#define _mm512_castsi512_si128(a) kshim_extract_128(a, 0)
#define _mm512_mask_blend_epi64(k, a, b) kshim_mask_blend_64(k, a, b)
#define _mm512_zextsi128_si512(a) kshim_zext_128(a)
/* the casts leave the upper bits undefined: zero is one such value */
#define _mm512_castsi128_si512(a) kshim_zext_128(a)
#define _mm512_castsi256_si512(a) kshim_zext_256(a)
#define _mm512_inserti64x4(a, b, i) kshim_insert_256(a, b, i)
#define _mm512_permutex_epi64(a, imm) kshim_permutex_64(a, (int)(imm))
#define _mm512_permutexvar_epi32(i, a) kshim_permutexvar_32(i, a)
#define _mm256_clmulepi64_epi128(a, b, imm) kshim_clmul256(a, b, imm)
#define _mm512_clmulepi64_epi128(a, b, imm) kshim_clmul512(a, b, imm)
#define _mm256_aesenc_epi128(a, k) kshim_aesenc256(a, k)
#define _mm256_aesenclast_epi128(a, k) kshim_aesenclast256(a, k)
#define _mm256_aesdec_epi128(a, k) kshim_aesdec256(a, k)
#define _mm256_aesdeclast_epi128(a, k) kshim_aesdeclast256(a, k)
#define _mm512_aesenc_epi128(a, k) kshim_aesenc512(a, k)
#define _mm512_aesenclast_epi128(a, k) kshim_aesenclast512(a, k)
#define _mm_gf2p8affine_epi64_epi8(x, m, c) kshim_affine128(x, m, c, 0)
#define _mm_gf2p8affineinv_epi64_epi8(x, m, c) kshim_affine128(x, m, c, 1)
#define _mm512_gf2p8affine_epi64_epi8(x, m, c) kshim_affine512(x, m, c, 0)
#define _mm512_gf2p8affineinv_epi64_epi8(x, m, c) kshim_affine512(x, m, c, 1)

#endif
