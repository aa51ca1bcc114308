/*
 * SM4, ARMv8 AES-instruction backend: the AES-NI method (sm4_aes_sbox.h,
 * the S-box through the AES S-box between two affine maps of nibble
 * lookups) on NEON registers, AESE as the S-box and tbl as pshufb; 4 blocks
 * per group (sm4_simd.h), 8 groups in flight. For ARM64 cores with the AES
 * instructions but without FEAT_SM4 (most of them: Cortex-A53..X4,
 * Neoverse N1, Graviton 2/3, Apple), where it beats any table-free
 * software S-box.
 *
 * Compiled with -mcpu=generic+aes for this file only; chosen at run time
 * from HWCAP_AES. AESE(x, k) = ShiftRows(SubBytes(x ^ k)): with k = 0 it
 * moves bytes exactly as aesenclast with a zero key, which is what
 * sm4_aes_sbox.h's tables undo.
 */
#include "sm4.h"

#include <arm_neon.h>

typedef uint32x4_t sm4v;
#define SM4V_W 4
#define SM4S_G 8 /* 32 blocks in flight, as the AES-NI backend */
#define SM4S_MK_G 8

#define sm4v_u8(x) vreinterpretq_u8_u32(x)
#define sm4v_of8(x) vreinterpretq_u32_u8(x)
#define sm4v_loadu(p) sm4v_of8(vld1q_u8((const uint8_t *)(const void *)(p)))
#define sm4v_storeu(p, x) vst1q_u8((uint8_t *)(void *)(p), sm4v_u8(x))
#define sm4v_row(p) sm4v_loadu(p)
#define sm4v_xor(a, b) veorq_u32(a, b)
#define sm4v_and(a, b) vandq_u32(a, b)
#define sm4v_or(a, b) vorrq_u32(a, b)
#define sm4v_set1(w) vdupq_n_u32((uint32_t)(w))
#define sm4v_zero() vdupq_n_u32(0)
#define sm4v_add32(a, b) vaddq_u32(a, b)
#define sm4v_sub32(a, b) vsubq_u32(a, b)
#define sm4v_srli32(x, n) vshrq_n_u32(x, n)
#define sm4v_slli32(x, n) vshlq_n_u32(x, n)
#define sm4v_cmpeq32(a, b) vceqq_u32(a, b)
#define sm4v_cmpgt32(a, b) vcgtq_s32(vreinterpretq_s32_u32(a), vreinterpretq_s32_u32(b))
/* tbl gives 0 for an index >= 16, pshufb for one with bit 7 set: the
 * tables here hold 0..15 only, where both agree. */
#define sm4v_shuffle8(x, idx) sm4v_of8(vqtbl1q_u8(sm4v_u8(x), sm4v_u8(idx)))
#define sm4v_aesenclast(x, k) veorq_u32(sm4v_of8(vaeseq_u8(sm4v_u8(x), vdupq_n_u8(0))), k)
#define sm4v_unpacklo32(a, b) vzip1q_u32(a, b)
#define sm4v_unpackhi32(a, b) vzip2q_u32(a, b)
#define sm4v_unpacklo64(a, b)                                                                      \
    vreinterpretq_u32_u64(vzip1q_u64(vreinterpretq_u64_u32(a), vreinterpretq_u64_u32(b)))
#define sm4v_unpackhi64(a, b)                                                                      \
    vreinterpretq_u32_u64(vzip2q_u64(vreinterpretq_u64_u32(a), vreinterpretq_u64_u32(b)))

/* See sm4_simd.h: with one 128-bit lane, position p holds block p. */
static inline sm4v sm4v_lane_blocks(void)
{
    static const uint32_t p[4] = {0, 1, 2, 3};
    return vld1q_u32(p);
}

#include "sm4_aes_sbox.h"

/* tau for key setup, on one word: the word in all four columns, so
 * ShiftRows moves only equal bytes and lane 0 is S of its bytes in place. */
static inline uint32_t sm4_armaes_tau(uint32_t a)
{
    sm4v x = sm4v_affine_nibbles(sm4v_set1(a), sm4_aes_pre_lo, sm4_aes_pre_hi);
    x = sm4v_aesenclast(x, sm4v_zero());
    x = sm4v_affine_nibbles(x, sm4_aes_post_lo, sm4_aes_post_hi);
    return vgetq_lane_u32(x, 0);
}
#define SM4S_TAU sm4_armaes_tau

#include "sm4_simd.h"

static int sm4_armaes_available(void)
{
    return (kuai_cpu_features() & KUAI_CPU_ARM_AES) != 0;
}

SM4S_IMPLS(sm4_armaes, "armaes", sm4_armaes_available);
