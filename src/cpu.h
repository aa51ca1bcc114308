/* SPDX-License-Identifier: Apache-2.0 */
/* CPU features, as the backends' availability tests read them. */
#ifndef KUAI_CPU_H
#define KUAI_CPU_H

#include <stdatomic.h>

/* CPU features, detected once (src/cpu.c). */
enum {
    KUAI_CPU_SSSE3 = 1u << 0,
    KUAI_CPU_AVX2 = 1u << 1, /* includes OS support for YMM state (XCR0) */
    KUAI_CPU_AESNI = 1u << 2,
    KUAI_CPU_PCLMUL = 1u << 3,
    KUAI_CPU_VAES = 1u << 4,
    KUAI_CPU_VPCLMUL = 1u << 5,
    KUAI_CPU_AVX512 = 1u << 6, /* F+BW+VL, with OS support for ZMM state */
    KUAI_CPU_AVX512VBMI = 1u << 7,
    KUAI_CPU_GFNI = 1u << 8,
    /* ARM64, from getauxval(AT_HWCAP) */
    KUAI_CPU_NEON = 1u << 9, /* ASIMD */
    KUAI_CPU_ARM_AES = 1u << 10,
    KUAI_CPU_ARM_PMULL = 1u << 11,
    KUAI_CPU_ARM_SM4 = 1u << 12,
    /* LoongArch64, from getauxval(AT_HWCAP) */
    KUAI_CPU_LSX = 1u << 13,
    KUAI_CPU_LASX = 1u << 14 /* 256-bit; reported only with LSX */
};
unsigned kuai_cpu_features(void);

/* What kuai_cpu_split_v holds once detected: the CPU runs a 256-bit
 * operation as two 128-bit halves (AMD Zen 1 and Zen+, family 17h models
 * 00h-2Fh, and Hygon's family 18h built on them), resp. a 512-bit one as
 * two 256-bit halves (AMD Zen 4, family 19h); KUAI_ZEN: an AMD core of
 * family 19h or later (Zen 3, Zen 4, Zen 5), whose vector unit the uBlock
 * low-latency kernels meet with other forms than an Intel core's
 * (kuai_cpu_zen below); KUAI_ZEN5: family 1Ah or later (Zen 5). */
enum { KUAI_SPLIT_YMM = 1, KUAI_SPLIT_ZMM = 2, KUAI_ZEN = 4, KUAI_ZEN5 = 8 };
/* -1 until detected; hidden (a declaration takes no -fvisibility): read
 * directly, not through the GOT */
extern __attribute__((visibility("hidden"))) atomic_int kuai_cpu_split_v;
int kuai_cpu_split_detect(void);
static inline int kuai_cpu_split(void)
{
    int v = atomic_load_explicit(&kuai_cpu_split_v, memory_order_relaxed);
    return v >= 0 ? v : kuai_cpu_split_detect();
}
/* Nonzero where ymm is split, as above: ymm code does the work of xmm code
 * at the same cost and no faster there, so a latency-bound kernel picks xmm
 * there and ymm elsewhere (ublock_ll.h). Detected once (KUAI_YMM_SPLIT=0
 * or 1 overrides it, src/cpu.c); 0 in make test-shim's build, whose
 * emulated CPU has AVX-512. Inline, a load and a compare: the uBlock
 * kernels ask on every short call, where a call into cpu.c cost more. */
static inline int kuai_cpu_ymm_split(void)
{
    return kuai_cpu_split() & KUAI_SPLIT_YMM;
}
/* Nonzero where zmm is split, as above: a 512-bit pass costs twice a
 * 256-bit one there, so the avx512 uBlock backend sends calls a 256-bit
 * pass holds to one (ublock_avx512.c). KUAI_ZMM_SPLIT=0 or 1 overrides it;
 * 0 in make test-shim's build. */
static inline int kuai_cpu_zmm_split(void)
{
    return (kuai_cpu_split() & KUAI_SPLIT_ZMM) >> 1;
}
/* Nonzero on an AMD core of family 19h or later, as above. Such a core
 * (four vector ALU pipes, where an Intel core has three, two for zmm)
 * runs some of the uBlock low-latency kernel's forms faster than the ones
 * an Intel core runs faster: on ssse3 and avx512 two vectors' inverse
 * rounds in the shallow form (UL_SHALLOW), on avx2 uBlock-256's linear
 * layer as sums (UL_DEEP256) and, on a Zen that is not a Zen 5, one
 * uBlock-256 CBC chain on xmm (UL_YCHAIN256), and on avx512 the one-shot
 * encryption on ymm and the lone chain's 7-deep round, as Zen 4 takes
 * them for its split (UL_ZAMD), and on a Zen that is not a Zen 5 (Zen 4
 * there) that round and the ymm pair's sums as asm statements
 * (UL_SUMS2, UL_CHAIN7); ublock_ll.h has the figures (measured on Zen 5,
 * Zen 4 and Zen 3). KUAI_ZEN=0 or 1 overrides it; 0 in make test-shim's
 * build. */
static inline int kuai_cpu_zen(void)
{
    return (kuai_cpu_split() & KUAI_ZEN) >> 2;
}
/* Nonzero on an AMD core of family 1Ah or later (Zen 5), a Zen too: forms
 * measured faster there and slower on a Zen 3 (avx2's ymm pairs in the
 * lone chain's round and the shallow inverse round, uBlock-256's
 * linear layer as sums in the one-shot encryption: ublock_ll.h's
 * UL_DEEP256_KS). KUAI_ZEN5=0 or 1 overrides it; 0 in make test-shim's
 * build. */
static inline int kuai_cpu_zen5(void)
{
    return (kuai_cpu_split() & KUAI_ZEN5) >> 3;
}

#endif
