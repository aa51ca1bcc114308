/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The LASX backend's few blocks (aes_lasx.c, aes_bs.h's AES_BS_NARROW): the
 * bitsliced cipher on 128-bit LSX vectors, 8 blocks a pass, reading the
 * LASX key planes' low lanes (32 bytes apart). A 256-bit plane is two
 * copies of the 128-bit one (each lane holds 8 blocks of the same key), so
 * no second key set is stored. Compiled with -mlsx.
 */
#include "../simd/lsx.h"

#define AES_V_ISA v128
#define AES_V_BYTES 16
#define AES_BS_KEY_STRIDE 32
/* aes_bs.h's backend functions are not wanted here, only its passes */
#pragma GCC diagnostic ignored "-Wunused-function"
#include "aes_bs.h"

_Static_assert(AES_BS_BLOCKS == 8, "half of LASX's 16 blocks a pass");

void aes_lasx_narrow(const unsigned char *kb, unsigned nr, const uint8_t *in, uint8_t *out,
                     size_t n, int dec)
{
    if (n < AES_BS_BLOCKS)
        aes_bs_part(kb, nr, in, out, n, dec);
    else if (dec)
        aes_bs_decrypt_pass(kb, nr, in, out);
    else
        aes_bs_encrypt_pass(kb, nr, in, out);
}

void aes_lasx_narrow_ctr(const unsigned char *kb, unsigned nr, const uint8_t *cb, const uint8_t *in,
                         uint8_t *out, size_t n)
{
    if (n < AES_BS_BLOCKS)
        aes_bs_ctr_part(kb, nr, cb, in, out, n);
    else
        aes_bs_encrypt_pass_xor(kb, nr, cb, out, in);
}
