/* SPDX-License-Identifier: Apache-2.0 */
/* vocab.h's 256-bit vocabulary on LoongArch LASX, the operations the
 * bitsliced AES (src/aes/aes_bs.h) uses; as avx2.h's, xvshuf.b and the
 * shifts work within each 128-bit lane. Files that include it are compiled
 * with -mlasx. */
#ifndef KUAI_SIMD_LASX_H
#define KUAI_SIMD_LASX_H

#include "vocab.h"

#include <lasxintrin.h>
#include <stdint.h>
#include <string.h>

typedef __m256i v256;

#define v256_loadu(p) __lasx_xvld((const void *)(p), 0)
#define v256_storeu(p, x) __lasx_xvst(x, (void *)(p), 0)
#define v256_xor(a, b) __lasx_xvxor_v(a, b)
#define v256_and(a, b) __lasx_xvand_v(a, b)
#define v256_set1_8(c) __lasx_xvreplgr2vr_b((int)(c))
/* xvshuf.b xd, xj, xk, xa, per 128-bit lane: byte i = (xa[i] & 31) < 16 ?
 * xk[xa[i]] : xj[xa[i] - 16]; with both sources x, pshufb's for 0..15 */
#define v256_shuf8(x, idx) __lasx_xvshuf_b(x, x, idx)
#define v256_srl64(x, n) __lasx_xvsrli_d(x, n)
#define v256_sll64(x, n) __lasx_xvslli_d(x, n)

/* 16 bytes from p into both lanes (no 16-byte load into a 256-bit
 * register among the intrinsics: two 64-bit words, each into its place in
 * both lanes) */
static inline v256 v256_row16(const void *p)
{
    uint64_t w[2];
    memcpy(w, p, 16);
    v256 x = __lasx_xvreplgr2vr_d((long)w[0]);
    x = __lasx_xvinsgr2vr_d(x, (long)w[1], 1);
    return __lasx_xvinsgr2vr_d(x, (long)w[1], 3);
}

#endif
