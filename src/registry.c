/* SPDX-License-Identifier: Apache-2.0 */
/* Backend tables per cipher, best first. */
#include "aes/aes.h"
#include "internal.h"
#if defined(KUAI_X86_64)
#include "aes/aes_x86.h"
#endif
#include "sm4/sm4.h"
#include "ublock/ublock.h"

#include <stddef.h>

#if defined(KUAI_X86_64)
#define X86(x) x,
#else
#define X86(x)
#endif
#if defined(KUAI_AARCH64)
#define A64(x) x,
#else
#define A64(x)
#endif
#if defined(KUAI_LOONGARCH64)
#define LA64(x) x,
#else
#define LA64(x)
#endif

static const kuai_impl *const ublock128_128[] = {
    A64(&ublock128_128_neon) LA64(&ublock128_128_lsx) X86(&ublock128_128_avx512)
            X86(&ublock128_128_avx2) X86(&ublock128_128_ssse3) &
        ublock128_128_ref,
    NULL};
static const kuai_impl *const ublock128_256[] = {
    A64(&ublock128_256_neon) LA64(&ublock128_256_lsx) X86(&ublock128_256_avx512)
            X86(&ublock128_256_avx2) X86(&ublock128_256_ssse3) &
        ublock128_256_ref,
    NULL};
static const kuai_impl *const ublock256_256[] = {
    A64(&ublock256_256_neon) LA64(&ublock256_256_lsx) X86(&ublock256_256_avx512)
            X86(&ublock256_256_avx2) X86(&ublock256_256_ssse3) &
        ublock256_256_ref,
    NULL};
/* ttable last: it is not constant time, and kuai_key_init takes the first
 * usable entry, so it runs only when named. */
static const kuai_impl *const sm4[] = {A64(&sm4_armce) A64(&sm4_armaes) A64(&sm4_neon)
                                               LA64(&sm4_lsx) X86(&sm4_gfni) X86(&sm4_vaes)
                                                   X86(&sm4_aesni_avx) X86(&sm4_aesni) &
                                           sm4_ref,
                                       &sm4_ttable, NULL};
/* AES: AES instructions first (VAES, AES-NI, the ARMv8 Cryptography
 * Extensions), then the bitsliced backends (avx2, ssse3; neon, lsx) and the
 * portable ref. */
static const kuai_impl *const aes128[] = {A64(&aes128_armce) X86(&aes128_vaes) X86(&aes128_aesni)
                                                  X86(&aes128_avx2) X86(&aes128_ssse3)
                                                      A64(&aes128_neon) LA64(&aes128_lsx) &
                                              aes128_ref,
                                          NULL};
static const kuai_impl *const aes192[] = {A64(&aes192_armce) X86(&aes192_vaes) X86(&aes192_aesni)
                                                  X86(&aes192_avx2) X86(&aes192_ssse3)
                                                      A64(&aes192_neon) LA64(&aes192_lsx) &
                                              aes192_ref,
                                          NULL};
static const kuai_impl *const aes256[] = {A64(&aes256_armce) X86(&aes256_vaes) X86(&aes256_aesni)
                                                  X86(&aes256_avx2) X86(&aes256_ssse3)
                                                      A64(&aes256_neon) LA64(&aes256_lsx) &
                                              aes256_ref,
                                          NULL};
static const kuai_impl *const none[] = {NULL};

const kuai_impl *const *kuai_impls(kuai_cipher c)
{
    switch (c) {
    case KUAI_UBLOCK_128_128:
        return ublock128_128;
    case KUAI_UBLOCK_128_256:
        return ublock128_256;
    case KUAI_UBLOCK_256_256:
        return ublock256_256;
    case KUAI_SM4:
        return sm4;
    case KUAI_AES_128:
        return aes128;
    case KUAI_AES_192:
        return aes192;
    case KUAI_AES_256:
        return aes256;
    default:
        return none;
    }
}
