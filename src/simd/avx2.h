/* SPDX-License-Identifier: Apache-2.0 */
/* vocab.h's 256-bit vocabulary on AVX2 (the ymm backends): shuffles and
 * unpacks work within each 128-bit lane, as vpshufb and vpunpck do. */
#ifndef KUAI_SIMD_AVX2_H
#define KUAI_SIMD_AVX2_H

#include "vocab.h"

#include <immintrin.h>

typedef __m256i v256;

#define v256_loadu(p) _mm256_loadu_si256((const __m256i *)(const void *)(p))
#define v256_storeu(p, x) _mm256_storeu_si256((__m256i *)(void *)(p), x)
#define v256_load(p) _mm256_load_si256((const __m256i *)(const void *)(p)) /* 32-aligned */
/* 16 bytes from p into both lanes */
#define v256_row16(p)                                                                              \
    _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)(const void *)(p)))
#define v256_xor(a, b) _mm256_xor_si256(a, b)
#define v256_and(a, b) _mm256_and_si256(a, b)
#define v256_or(a, b) _mm256_or_si256(a, b)
#define v256_andn(a, b) _mm256_andnot_si256(a, b) /* ~a & b */
#define v256_zero() _mm256_setzero_si256()
#define v256_ones() _mm256_set1_epi32(-1)
#define v256_set1_8(c) _mm256_set1_epi8((char)(c))
#define v256_set1_32(w) _mm256_set1_epi32((int)(w))
#define v256_shuf8(x, idx) _mm256_shuffle_epi8(x, idx)
#define v256_srl64(x, n) _mm256_srli_epi64(x, n)
#define v256_sll64(x, n) _mm256_slli_epi64(x, n)
#define v256_srl64v(x, n) _mm256_srli_epi64(x, n)
#define v256_sll64v(x, n) _mm256_slli_epi64(x, n)
#define v256_srl32(x, n) _mm256_srli_epi32(x, n)
#define v256_sll32(x, n) _mm256_slli_epi32(x, n)
#define v256_add32(a, b) _mm256_add_epi32(a, b)
#define v256_sub32(a, b) _mm256_sub_epi32(a, b)
#define v256_cmpeq32(a, b) _mm256_cmpeq_epi32(a, b)
#define v256_cmpgt32(a, b) _mm256_cmpgt_epi32(a, b) /* signed */
#define v256_unpacklo32(a, b) _mm256_unpacklo_epi32(a, b)
#define v256_unpackhi32(a, b) _mm256_unpackhi_epi32(a, b)
#define v256_unpacklo64(a, b) _mm256_unpacklo_epi64(a, b)
#define v256_unpackhi64(a, b) _mm256_unpackhi_epi64(a, b)
#define v256_unpacklo8(a, b) _mm256_unpacklo_epi8(a, b)
#define v256_unpackhi8(a, b) _mm256_unpackhi_epi8(a, b)
#define v256_swap64(x) _mm256_shuffle_epi32(x, 0x4e)
/* KUAI_SHIM_AVX512VL: make test-shim's stand-in (tests/shim/isa_shim.h) */
#if defined(__AVX512VL__) || defined(KUAI_SHIM_AVX512VL)
#define v256_xor3(a, b, c) _mm256_ternarylogic_epi32(a, b, c, 0x96)
#define v256_has_xor3 1
#define v256_sel8(m, a, b) _mm256_ternarylogic_epi32(m, a, b, 0xca)
#else
#define v256_xor3(a, b, c) _mm256_xor_si256(_mm256_xor_si256(a, b), c)
#define v256_has_xor3 0
#define v256_sel8(m, a, b) _mm256_or_si256(_mm256_and_si256(m, a), _mm256_andnot_si256(m, b))
#endif
#define v256_blend64(a, b) _mm256_blend_epi32(a, b, 0xcc)
#define v256_pin(x)                                                                                \
    __extension__({                                                                                \
        v256 pin_ = (x);                                                                           \
        __asm__("" : "+x"(pin_));                                                                  \
        pin_;                                                                                      \
    })
#define v256_shuf8z(x, idx) _mm256_shuffle_epi8(x, idx)
/* Beyond vocab.h, for uBlock's 256-bit wide kernels (ublock_w256.h), as
 * lasx.h has them: bytes equal (all ones) or not; 128-bit lanes {a.lo,
 * b.lo} (imm 0x20) or {a.hi, b.hi} (0x31); qwords by an immediate; dwords
 * across lanes by index; dwords from eight integers, the first lowest. */
#define v256_cmpeq8(a, b) _mm256_cmpeq_epi8(a, b)
#define v256_lanes(a, b, imm) _mm256_permute2x128_si256(a, b, imm)
#define v256_perm64(x, imm) _mm256_permute4x64_epi64(x, imm)
#define v256_perm32(x, idx) _mm256_permutevar8x32_epi32(x, idx)
#define v256_set32(a, b, c, d, e, f, g, h) _mm256_setr_epi32(a, b, c, d, e, f, g, h)
#define v256_even32(a, b)                                                                          \
    _mm256_castps_si256(_mm256_shuffle_ps(_mm256_castsi256_ps(a), _mm256_castsi256_ps(b),          \
                                          _MM_SHUFFLE(2, 0, 2, 0)))
#define v256_odd32(a, b)                                                                           \
    _mm256_castps_si256(_mm256_shuffle_ps(_mm256_castsi256_ps(a), _mm256_castsi256_ps(b),          \
                                          _MM_SHUFFLE(3, 1, 3, 1)))

#endif
