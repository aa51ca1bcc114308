/* SPDX-License-Identifier: Apache-2.0 */
/* vocab.h's 128-bit vocabulary on x86: SSE2 and SSSE3's pshufb (the xmm
 * backends; in a file built with -mavx2 the same code is VEX-encoded). */
#ifndef KUAI_SIMD_SSE_H
#define KUAI_SIMD_SSE_H

#include "vocab.h"

#include <tmmintrin.h>

typedef __m128i v128;

#define v128_loadu(p) _mm_loadu_si128((const __m128i *)(const void *)(p))
#define v128_storeu(p, x) _mm_storeu_si128((__m128i *)(void *)(p), x)
#define v128_load(p) _mm_load_si128((const __m128i *)(const void *)(p)) /* 16-aligned */
#define v128_row16(p) v128_loadu(p)
#define v128_xor(a, b) _mm_xor_si128(a, b)
#define v128_and(a, b) _mm_and_si128(a, b)
#define v128_or(a, b) _mm_or_si128(a, b)
#define v128_andn(a, b) _mm_andnot_si128(a, b) /* ~a & b */
#define v128_zero() _mm_setzero_si128()
#define v128_ones() _mm_set1_epi32(-1)
#define v128_set1_8(c) _mm_set1_epi8((char)(c))
#define v128_set1_32(w) _mm_set1_epi32((int)(w))
#define v128_set64x2(lo, hi) _mm_set_epi64x((long long)(hi), (long long)(lo))
#define v128_shuf8(x, idx) _mm_shuffle_epi8(x, idx)
#define v128_srl64(x, n) _mm_srli_epi64(x, n)
#define v128_sll64(x, n) _mm_slli_epi64(x, n)
#define v128_srl64v(x, n) _mm_srli_epi64(x, n) /* psrlq by a register if need be */
#define v128_sll64v(x, n) _mm_slli_epi64(x, n)
#define v128_srl32(x, n) _mm_srli_epi32(x, n)
#define v128_sll32(x, n) _mm_slli_epi32(x, n)
#define v128_add32(a, b) _mm_add_epi32(a, b)
#define v128_sub32(a, b) _mm_sub_epi32(a, b)
#define v128_cmpeq32(a, b) _mm_cmpeq_epi32(a, b)
#define v128_cmpgt32(a, b) _mm_cmpgt_epi32(a, b) /* signed */
#define v128_unpacklo32(a, b) _mm_unpacklo_epi32(a, b)
#define v128_unpackhi32(a, b) _mm_unpackhi_epi32(a, b)
#define v128_unpacklo64(a, b) _mm_unpacklo_epi64(a, b)
#define v128_unpackhi64(a, b) _mm_unpackhi_epi64(a, b)
#define v128_unpacklo8(a, b) _mm_unpacklo_epi8(a, b)
#define v128_unpackhi8(a, b) _mm_unpackhi_epi8(a, b)
#define v128_swap64(x) _mm_shuffle_epi32(x, 0x4e)
/* KUAI_SHIM_AVX512VL: make test-shim's stand-in (tests/shim/isa_shim.h) */
#if defined(__AVX512VL__) || defined(KUAI_SHIM_AVX512VL)
#define v128_xor3(a, b, c) _mm_ternarylogic_epi32(a, b, c, 0x96)
#define v128_has_xor3 1
#define v128_sel8(m, a, b) _mm_ternarylogic_epi32(m, a, b, 0xca)
#else
#define v128_xor3(a, b, c) _mm_xor_si128(_mm_xor_si128(a, b), c)
#define v128_has_xor3 0
#define v128_sel8(m, a, b) _mm_or_si128(_mm_and_si128(m, a), _mm_andnot_si128(m, b))
#endif
#define v128_blend64(a, b) _mm_castpd_si128(_mm_move_sd(_mm_castsi128_pd(b), _mm_castsi128_pd(a)))
#define v128_pin(x)                                                                                \
    __extension__({                                                                                \
        v128 pin_ = (x);                                                                           \
        __asm__("" : "+x"(pin_));                                                                  \
        pin_;                                                                                      \
    })
#define v128_shuf8z(x, idx) _mm_shuffle_epi8(x, idx)
#define v128_even32(a, b)                                                                          \
    _mm_castps_si128(                                                                              \
        _mm_shuffle_ps(_mm_castsi128_ps(a), _mm_castsi128_ps(b), _MM_SHUFFLE(2, 0, 2, 0)))
#define v128_odd32(a, b)                                                                           \
    _mm_castps_si128(                                                                              \
        _mm_shuffle_ps(_mm_castsi128_ps(a), _mm_castsi128_ps(b), _MM_SHUFFLE(3, 1, 3, 1)))

#endif
