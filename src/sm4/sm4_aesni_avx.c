/* SPDX-License-Identifier: Apache-2.0 */
/*
 * SM4, the aesni backend's code (sm4_aesni.c) compiled with -mavx: VEX
 * encoding, whose three-operand forms drop the register copies the
 * two-operand SSE forms need around every shuffle and XOR. 128-bit
 * registers still, and AES-NI, so it needs no VAES: on a Zen 1 EPYC it ran
 * SM4-CTR at 473 MB/s against the SSE build's 437 in the same session.
 * Offered where the AVX2 bit is set (it implies AVX and the OS's support
 * for its state; kuai has no AVX-only bit): the SSE build stays for the
 * rest.
 */
#include "sm4.h"
#include "sm4_xmm_vocab.h"

#include "sm4_aes_sbox.h"
#define SM4S_ONESHOT 1
#include "sm4_simd.h"

/* The vaes backend's short calls (one-shot and multi-key) and key setup
 * (sm4.h): every CPU with VAES has AES-NI and AVX2. */
SM4S_SHORT_EXPORT(sm4_aesni_avx)

static int sm4_aesni_avx_available(void)
{
    unsigned need = KUAI_CPU_AESNI | KUAI_CPU_SSSE3 | KUAI_CPU_AVX2;
    return (kuai_cpu_features() & need) == need;
}

/* Above aesni, below VAES. */
KUAI_REGISTER(sm4_aesni_avx);
SM4S_IMPLS(sm4_aesni_avx, "aesni-avx", 110, sm4_aesni_avx_available);
