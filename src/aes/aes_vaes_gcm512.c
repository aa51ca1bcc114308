/* SPDX-License-Identifier: Apache-2.0 */
/*
 * AES-GCM in one pass on 512-bit registers (aes_vaes_gcm.h): the VAES
 * backend's fused GCM where the context's GHASH backend is vpclmul512,
 * i.e. on CPUs with AVX-512, VAES and VPCLMULQDQ (Ice Lake and later,
 * Zen 4 and later). 32 counter blocks (8 zmm) a batch. Built with
 * -mavx512f -mavx512bw -mavx512vl -mvaes -mvpclmulqdq for this file only;
 * reached only through that GHASH backend. All registers are zmm: a
 * 256-bit AES beside 512-bit GHASH would lose the port Intel's cores close
 * to vector work while 512-bit operations are in flight.
 */
#include "aes_ni_xmm.h"
#include "aes_x86.h"

#include "../ghash/ghash_vclmul512.h"

#define gv_aesenc(x, k) _mm512_aesenc_epi128(x, k)
#define gv_aesenclast(x, k) _mm512_aesenclast_epi128(x, k)
#define gv_add32(a, b) _mm512_add_epi32(a, b)
#define gv_shuf8(a, b) _mm512_shuffle_epi8(a, b)
#define gv_lane_index() _mm512_setr_epi32(0, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0)
#define GCMV_FN(name) aes_vaes_gcm512_##name

#include "aes_vaes_gcm.h"
