/* SPDX-License-Identifier: Apache-2.0 */
/*
 * SM4, AES-NI backend (128-bit vectors): the S-box through aesenclast
 * between two affine maps of nibble lookups (sm4_aes_sbox.h), 4 blocks per
 * xmm group (sm4_simd.h), several groups in flight.
 *
 * Compiled with -maes -mssse3 only, not -mavx: it is the backend of CPUs
 * with AES-NI but without VAES, some of which (Westmere, Goldmont) have no
 * AVX. Nothing here needs more than SSE2 + SSSE3 (pshufb) + AES-NI; the
 * CTR carries use only signed compares. sm4_aesni_avx.c is the same code
 * in VEX encoding, chosen first where AVX2 is present.
 */
#include "sm4.h"
#include "sm4_xmm_vocab.h"

#include "sm4_aes_sbox.h"
#define SM4S_ONESHOT 1
#include "sm4_simd.h"

static int sm4_aesni_available(void)
{
    unsigned need = KUAI_CPU_AESNI | KUAI_CPU_SSSE3;
    return (kuai_cpu_features() & need) == need;
}

/* AES-NI without VEX: below aesni-avx. */
KUAI_REGISTER(sm4_aesni);
SM4S_IMPLS(sm4_aesni, "aesni", 100, sm4_aesni_available);
