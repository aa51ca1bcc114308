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

/* The vaes and gfni backends' short calls (one-shot and multi-key) and
 * vaes's key setup (sm4.h):
 * every CPU with those has AES-NI and AVX2. */
void sm4_aesni_avx_oneshot(kuai_cipher c, const uint8_t *const *keys, const uint8_t *const *in,
                           uint8_t *const *out, size_t n, size_t nblocks, int enc)
{
    sm4s_oneshot(c, keys, in, out, n, nblocks, enc);
}

void sm4_aesni_avx_expand(kuai_key *k, const uint8_t *key)
{
    sm4s_expand(k, key);
}

void sm4_aesni_avx_expand2(kuai_key *k0, kuai_key *k1, const uint8_t *key0, const uint8_t *key1)
{
    sm4s_expand2(k0, k1, key0, key1);
}

void sm4_aesni_avx_expand4(kuai_key *const k[4], const uint8_t *const key[4])
{
    sm4s_expand4(k, key);
}

void sm4_aesni_avx_mk_short(const kuai_key *const *keys, uint8_t *const *ivs,
                            const uint8_t *const *in, uint8_t *const *out, size_t n, size_t nblocks,
                            int enc)
{
    sm4s_mk_short(keys, ivs, in, out, n, nblocks, enc);
}

static int sm4_aesni_avx_available(void)
{
    unsigned need = KUAI_CPU_AESNI | KUAI_CPU_SSSE3 | KUAI_CPU_AVX2;
    return (kuai_cpu_features() & need) == need;
}

/* Above aesni, below VAES. */
KUAI_REGISTER(sm4_aesni_avx);
SM4S_IMPLS(sm4_aesni_avx, "aesni-avx", 110, sm4_aesni_avx_available);
