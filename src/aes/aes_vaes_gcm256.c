/* SPDX-License-Identifier: Apache-2.0 */
/*
 * AES-GCM in one pass on 256-bit registers (aes_vaes_gcm.h): the VAES
 * backend's fused GCM where the context's GHASH backend is vpclmul, i.e.
 * on CPUs with VAES and VPCLMULQDQ but no AVX-512 (AMD Zen 3) or where
 * GCM is set up on that GHASH backend. 16 counter blocks (8 ymm) a batch.
 * Built with -mavx2 -mvaes -mvpclmulqdq for this file only; reached only
 * through that GHASH backend.
 */
#include "aes_ni_xmm.h"
#include "aes_x86.h"

#include "../ghash/ghash_vclmul256.h"

#define gv_aesenc(x, k) _mm256_aesenc_epi128(x, k)
#define gv_aesenclast(x, k) _mm256_aesenclast_epi128(x, k)
#define gv_add32(a, b) _mm256_add_epi32(a, b)
#define gv_shuf8(a, b) _mm256_shuffle_epi8(a, b)
#define gv_lane_index() _mm256_setr_epi32(0, 0, 0, 0, 1, 0, 0, 0)
#define GCMV_FN(name) aes_vaes_gcm256_##name

#include "aes_vaes_gcm.h"
