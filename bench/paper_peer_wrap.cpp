// SPDX-License-Identifier: Apache-2.0
/*
 * Entry points into the 2024 uBlock AVX2 paper's own code, for
 * scripts/paper-side-by-side (bench/paper_peer.c times them beside kuai in
 * one process). The paper's files are not part of kuai: the script compiles
 * this file against a checkout the user names (github.com/Xenooooooooo/
 * optimized_uBlock_algorithm, f2b5fc7, MIT), with the paper's own flags,
 * each of its files in a namespace of its own (their globals and functions
 * share names) and its main() renamed out of the way.
 *
 * Every entry point works on contiguous buffers: in and out hold n blocks,
 * keys n keys, block j under key j (n = 4, or 2 for uBlock-256/256), and
 * out gets the encryption of in block for block. The paper's calls pass
 * some of their outputs in another order; that is mapped here, and
 * paper_peer.c checks every output against kuai before it times anything.
 */
#include <immintrin.h>

#include <cstdio>
#include <cstring>
#include <ctime>
#include <iostream> /* the files' own includes, outside the namespaces */
#include <sys/types.h>

#define main paper_peer_unused_main
namespace p128_1
{
#include "optimized_codes/uBlock-128-128/128_128_4block_1key.cpp"
}
#undef _mm256_loadu2_m128i
#undef _mm256_storeu2_m128i
namespace p128_4
{
#include "optimized_codes/uBlock-128-128/128_128_4block_4key.cpp"
}
#undef _mm256_loadu2_m128i
#undef _mm256_storeu2_m128i
namespace p128_256_1
{
#include "optimized_codes/uBlock-128-256/128_256_4block_1key.cpp"
}
#undef _mm256_loadu2_m128i
#undef _mm256_storeu2_m128i
namespace p128_256_4
{
#include "optimized_codes/uBlock-128-256/128_256_4block_4key.cpp"
}
#undef _mm256_loadu2_m128i
#undef _mm256_storeu2_m128i
namespace p256_1
{
#include "optimized_codes/uBlock-256-256/256_256_2block_1key.cpp"
}
#undef _mm256_loadu2_m128i
#undef _mm256_storeu2_m128i
namespace p256_2
{
#include "optimized_codes/uBlock-256-256/256_256_2block_2key.cpp"
}
#undef main

typedef unsigned char u8;
#define B(j) (in + 16 * (j))
#define O(j) (out + 16 * (j))
#define K(j) (keys + 32 * (j))

extern "C" {

/* uBlock-128/128, one key: its short call (key schedule + 4 blocks), its
 * schedule alone, its 4 blocks under the schedule in place */
__attribute__((noinline)) void paper_short_128_128(u8 *in, u8 *out, u8 *key)
{
    p128_1::Crypt_Enc_Block(B(0), B(1), B(2), B(3), 16, O(0), O(1), O(2), O(3), key);
}
__attribute__((noinline)) void paper_setup_128_128(u8 *key)
{
    p128_1::uBlock_128_KeySchedule(key);
}
__attribute__((noinline)) void paper_enc_128_128(u8 *in, u8 *out)
{
    p128_1::uBlock_128_Encrypt(B(0), B(1), O(1), O(0), B(2), B(3), O(3), O(2), 16);
}
/* its long message: 4 buffers of len bytes under the key (schedule in the call) */
__attribute__((noinline)) void paper_ecb_128_128(u8 **in, u8 **out, int len, u8 *key)
{
    p128_1::Crypt_Enc_Block(in[0], in[1], in[2], in[3], len, out[0], out[1], out[2], out[3], key);
}
/* four keys, one block each (keys: 4 x 16 bytes) */
__attribute__((noinline)) void paper_mk_short_128_128(u8 *in, u8 *out, u8 *keys)
{
    p128_4::Crypt_Enc_Block(B(0), B(1), B(2), B(3), 16, O(0), O(1), O(2), O(3), keys, keys + 16,
                            keys + 32, keys + 48);
}
__attribute__((noinline)) void paper_mk_setup_128_128(u8 *keys)
{
    p128_4::uBlock_128_KeySchedule(keys, keys + 16, 0);
    p128_4::uBlock_128_KeySchedule(keys + 32, keys + 48, 1);
}
__attribute__((noinline)) void paper_mk_enc_128_128(u8 *in, u8 *out)
{
    p128_4::uBlock_128_Encrypt(B(0), B(1), O(1), O(0), B(2), B(3), O(3), O(2), 16);
}
/* CBC encryption of 4 chains of len bytes, chain j from in[j] to out[j]
 * under key j, the IVs 0; key schedules in the call (the paper's own) */
__attribute__((noinline)) void paper_cbc_128_128(u8 **in, u8 **out, int len, u8 *keys)
{
    p128_4::Crypt_Enc_Block_CBC(in[0], in[1], in[2], in[3], len, out[0], out[1], out[2], out[3],
                                keys, keys + 16, keys + 32, keys + 48);
}

/* uBlock-128/256 (keys: 32 bytes each) */
__attribute__((noinline)) void paper_short_128_256(u8 *in, u8 *out, u8 *key)
{
    p128_256_1::Crypt_Enc_Block(B(0), B(1), B(2), B(3), 16, O(0), O(1), O(2), O(3), key);
}
__attribute__((noinline)) void paper_setup_128_256(u8 *key)
{
    p128_256_1::uBlock_256_KeySchedule(key);
}
__attribute__((noinline)) void paper_enc_128_256(u8 *in, u8 *out)
{
    p128_256_1::uBlock_128_Encrypt(B(0), B(1), O(0), O(1), B(2), B(3), O(2), O(3), 24);
}
__attribute__((noinline)) void paper_ecb_128_256(u8 **in, u8 **out, int len, u8 *key)
{
    p128_256_1::Crypt_Enc_Block(in[0], in[1], in[2], in[3], len, out[0], out[1], out[2], out[3],
                                key);
}
__attribute__((noinline)) void paper_mk_short_128_256(u8 *in, u8 *out, u8 *keys)
{
    p128_256_4::Crypt_Enc_Block(B(0), B(1), B(2), B(3), 16, O(0), O(1), O(2), O(3), K(0), K(1),
                                K(2), K(3));
}
__attribute__((noinline)) void paper_mk_setup_128_256(u8 *keys)
{
    p128_256_4::uBlock_256_KeySchedule(K(0), K(1), K(2), K(3));
}
__attribute__((noinline)) void paper_mk_enc_128_256(u8 *in, u8 *out)
{
    p128_256_4::uBlock_128_Encrypt(B(1), B(0), O(0), O(1), B(3), B(2), O(2), O(3), 24);
}
__attribute__((noinline)) void paper_cbc_128_256(u8 **in, u8 **out, int len, u8 *keys)
{
    p128_256_4::Crypt_Enc_Block_CBC(in[0], in[1], in[2], in[3], len, out[0], out[1], out[2], out[3],
                                    K(0), K(1), K(2), K(3));
}

/* uBlock-256/256: 2 blocks of 32 bytes. Both files' schedules read 64 key
 * bytes, two keys (the one-key file's own short call passes a 32-byte key,
 * so its second block takes whatever follows it): the one-key rows pass
 * the key twice, keys = key || key, which the caller builds once. */
__attribute__((noinline)) void paper_short_256_256(u8 *in, u8 *out, u8 *key2)
{
    p256_1::Crypt_Enc_Block(in, 64, out, key2);
}
__attribute__((noinline)) void paper_setup_256_256(u8 *key2)
{
    p256_1::uBlock_256_KeySchedule(key2);
}
__attribute__((noinline)) void paper_enc_256_256(u8 *in, u8 *out)
{
    p256_1::uBlock_256_Encrypt(in, out, 24);
}
/* len bytes from in to out (one buffer) */
__attribute__((noinline)) void paper_ecb_256_256(u8 *in, u8 *out, int len, u8 *key2)
{
    p256_1::Crypt_Enc_Block(in, len, out, key2);
}
__attribute__((noinline)) void paper_mk_short_256_256(u8 *in, u8 *out, u8 *keys)
{
    p256_2::Crypt_Enc_Block(in, 64, out, keys);
}
__attribute__((noinline)) void paper_mk_setup_256_256(u8 *keys)
{
    p256_2::uBlock_256_KeySchedule(keys);
}
__attribute__((noinline)) void paper_mk_enc_256_256(u8 *in, u8 *out)
{
    p256_2::uBlock_256_Encrypt(in, out, 24);
}
/* its two chains interleaved in one buffer, 32 bytes of each in turn
 * (len: both chains' bytes) */
__attribute__((noinline)) void paper_cbc_256_256(u8 *in, u8 *out, int len, u8 *keys)
{
    p256_2::Crypt_Enc_Block_CBC(in, len, out, keys);
}
}
