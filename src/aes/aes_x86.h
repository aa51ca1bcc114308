/* SPDX-License-Identifier: Apache-2.0 */
/* The AES-NI pieces the VAES backend reuses. */
#ifndef KUAI_AES_X86_H
#define KUAI_AES_X86_H

#include "aes.h"

/* CBC encryption runs at the latency of one block, which 256-bit
 * registers do not shorten: the VAES backend uses this one. */
void aes_aesni_cbc_enc_blocks(const kuai_key *k, uint8_t *iv, const uint8_t *in, uint8_t *out,
                              size_t nblocks);
void aes_aesni_expand(kuai_key *k, const uint8_t *key);
void aes_aesni_expand2(kuai_key *k0, kuai_key *k1, const uint8_t *key0, const uint8_t *key1);
void aes_aesni_expand4(kuai_key *const k[4], const uint8_t *const key[4]);
/* One-shot ECB (kuai_impl.oneshot): its short encryption makes each round
 * key between the rounds, one key and up to 4 blocks at a time, where a
 * 256-bit register has nothing to add; the VAES backend takes it too. */
void aes_aesni_oneshot(kuai_cipher c, const uint8_t *const *keys, const uint8_t *const *in,
                       uint8_t *const *out, size_t n, size_t nblocks, int enc);
/* The one-shot calls that store their rows wipe them, but their kernels
 * copy the rows into registers, which gcc spills to the stack: 8-10 rows
 * of an AES-128 key's schedule were still there after a decryption
 * (2026-12-06; tests/test_oneshot.c searches for them). Each such call
 * runs in a function of its own, and this much stack below its caller is
 * overwritten after it returns (kuai_wipe_stack), with room to spare.
 * The decryption of up to 4 blocks a key, one key's or several keys',
 * and the encryption of 1-2 blocks under 3 keys or more store their rows
 * but copy none (aesx_rows_wiping reads each as its round needs it and
 * zeroes it): no overwrite. */
#define AES_ONESHOT_STORED_STACK 1024
/* One key's round keys (AES-128, -192, -256: nk 4, 6, 8 words) to rk and
 * drk (aes.h's forms; either may be NULL), as key setup makes them: the
 * VAES backend's one-shot decryption, which runs its blocks on its own
 * kernel. */
void aes_aesni_rows(unsigned nk, const uint8_t *key, uint8_t (*rk)[16], uint8_t (*drk)[16]);
/* Multi-key ECB and CBC decryption of streams of 1-4 blocks
 * (kuai_impl.mk_short): the blocks of several streams side by side, each
 * under its own stored schedule; the VAES backend takes it too. */
void aes_aesni_mk_short(const kuai_key *const *keys, uint8_t *const *ivs, const uint8_t *const *in,
                        uint8_t *const *out, size_t n, size_t nblocks, int enc);
/* The VAES backend's CTR (128-bit counting), and its fused GCM on 512-bit
 * and 256-bit registers (aes_vaes_gcm512.c, aes_vaes_gcm256.c over
 * aes_vaes_gcm.h; kuai_impl.gcm where the context's GHASH backend is
 * vpclmul512, vpclmul). */
void aes_vaes_ctr_blocks(const kuai_key *k, uint8_t *ctr, const uint8_t *in, uint8_t *out,
                         size_t nblocks);
void aes_vaes_gcm512_blocks(const kuai_key *k, const unsigned char *hkey, uint8_t y[16],
                            uint8_t *ctr, const uint8_t *in, uint8_t *out, size_t nblocks, int enc);
void aes_vaes_gcm256_blocks(const kuai_key *k, const unsigned char *hkey, uint8_t y[16],
                            uint8_t *ctr, const uint8_t *in, uint8_t *out, size_t nblocks, int enc);

#endif
