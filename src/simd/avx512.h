/* SPDX-License-Identifier: Apache-2.0 */
/* vocab.h's 512-bit vocabulary on AVX-512 F/BW (zmm), the part the
 * low-latency uBlock kernel's zmm group uses (ublock_ll.h, UL_Z): shuffles
 * and unpacks work within each 128-bit lane, as vpshufb and vpunpck do;
 * uBlock's key setup of four keys at once (ublock_ks.h, ub_ksz) too.
 * Only for files compiled with AVX-512 (or make test-shim's stand-in). */
#ifndef KUAI_SIMD_AVX512_H
#define KUAI_SIMD_AVX512_H

#include "vocab.h"

#include <immintrin.h>

typedef __m512i v512;

#define v512_loadu(p) _mm512_loadu_si512((const void *)(p))
#define v512_storeu(p, x) _mm512_storeu_si512((void *)(p), x)
#define v512_load(p) _mm512_load_si512((const void *)(p)) /* 64-aligned */
/* 16 bytes from p into every lane */
#define v512_row16(p) _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)(const void *)(p)))
#define v512_xor(a, b) _mm512_xor_si512(a, b)
#define v512_and(a, b) _mm512_and_si512(a, b)
#define v512_or(a, b) _mm512_or_si512(a, b)
#define v512_xor3(a, b, c) _mm512_ternarylogic_epi32(a, b, c, 0x96)
#define v512_has_xor3 1
#define v512_sel8(m, a, b) _mm512_ternarylogic_epi32(m, a, b, 0xca)
/* never needed where xor3 is one instruction: the trees are built of it */
#define v512_pin(x) (x)
#define v512_zero() _mm512_setzero_si512()
#define v512_set1_8(c) _mm512_set1_epi8((char)(c))
#define v512_shuf8(x, idx) _mm512_shuffle_epi8(x, idx)
#define v512_srl64(x, n) _mm512_srli_epi64(x, n)
#define v512_sll64(x, n) _mm512_slli_epi64(x, n)
/* every qword rotated right by n bits (vprorq: a port-0 operation on
 * Intel cores, where 512-bit shuffles have port 5 alone) */
#define v512_ror64(x, n) _mm512_ror_epi64(x, n)
#define v512_unpacklo8(a, b) _mm512_unpacklo_epi8(a, b)
#define v512_unpackhi8(a, b) _mm512_unpackhi_epi8(a, b)
#define v512_unpacklo64(a, b) _mm512_unpacklo_epi64(a, b)
#define v512_unpackhi64(a, b) _mm512_unpackhi_epi64(a, b)
/* the two qwords of every lane exchanged */
#define v512_swap64(x) _mm512_shuffle_epi32(x, 0x4e)
/* a's low qword and b's high one, in every lane */
#define v512_blend64(a, b) _mm512_mask_blend_epi64(0xaa, a, b)
/* pshufb, relied on for 0 where the index byte's bit 7 is set */
#define v512_shuf8z(x, idx) _mm512_shuffle_epi8(x, idx)

#endif
