/* SPDX-License-Identifier: Apache-2.0 */
/* sm4_simd.h's vocabulary on 128-bit SSE registers with AES-NI, shared by
 * sm4_aesni.c (legacy SSE encoding) and sm4_aesni_avx.c (the same code in
 * VEX encoding); each includes it, then sm4_aes_sbox.h and sm4_simd.h. */
#ifndef KUAI_SM4_XMM_VOCAB_H
#define KUAI_SM4_XMM_VOCAB_H

#include "../simd/sse.h"

#include <immintrin.h>

#define SM4V_ISA v128
#include "sm4_vocab.h"

#define SM4V_W 4
#define SM4S_G 8 /* 32 blocks in flight: 4 groups leave the rounds latency-bound */
#define SM4S_MK_G 8

#define sm4v_aesenclast(x, k) _mm_aesenclast_si128(x, k)
/* Word 0 (key setup: the broadcast schedule's round key). */
#define sm4v_word0(x) ((uint32_t)_mm_cvtsi128_si32(x))

/* See sm4_simd.h: with one 128-bit lane, position p holds block p. */
static inline sm4v sm4v_lane_blocks(void)
{
    return _mm_setr_epi32(0, 1, 2, 3);
}

#endif
