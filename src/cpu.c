/* SPDX-License-Identifier: Apache-2.0 */
/* CPU feature detection, done once and cached. */
#include "internal.h"

#include <stdatomic.h>
#include <stdlib.h>

/* The names kuai_cpu_feature_names reports, per architecture, next to the
 * detection that sets the bits; a NULL name ends each table. */
struct feature_name {
    unsigned bit;
    const char *name;
};

#if defined(KUAI_X86_64)
#include <cpuid.h>
#include <immintrin.h>

/* Called only when CPUID says OSXSAVE, so the instruction exists. */
__attribute__((target("xsave"))) static uint64_t xgetbv0(void)
{
    return _xgetbv(0);
}

static const struct feature_name feature_names[] = {
    {KUAI_CPU_SSSE3, "ssse3"},   {KUAI_CPU_AVX2, "avx2"},
    {KUAI_CPU_AESNI, "aes-ni"},  {KUAI_CPU_PCLMUL, "pclmulqdq"},
    {KUAI_CPU_VAES, "vaes"},     {KUAI_CPU_VPCLMUL, "vpclmulqdq"},
    {KUAI_CPU_AVX512, "avx512"}, {KUAI_CPU_AVX512VBMI, "avx512vbmi"},
    {KUAI_CPU_GFNI, "gfni"},     {0, NULL}};

static unsigned detect(void)
{
    unsigned a, b, c, d, f = 0;
    if (!__get_cpuid(1, &a, &b, &c, &d))
        return 0;
    if (c & bit_SSSE3)
        f |= KUAI_CPU_SSSE3;
    if (c & bit_AES)
        f |= KUAI_CPU_AESNI;
    if (c & bit_PCLMUL)
        f |= KUAI_CPU_PCLMUL;
    int osxsave = (c & bit_OSXSAVE) && (c & bit_AVX);
    uint64_t xcr0 = osxsave ? xgetbv0() : 0;
    int ymm_ok = (xcr0 & 0x6) == 0x6;   /* XMM and YMM state saved by the OS */
    int zmm_ok = (xcr0 & 0xe6) == 0xe6; /* plus opmask and ZMM state */
    if (__get_cpuid_max(0, NULL) >= 7) {
        __cpuid_count(7, 0, a, b, c, d);
        if (ymm_ok && (b & bit_AVX2))
            f |= KUAI_CPU_AVX2;
        if (ymm_ok && (c & bit_VAES))
            f |= KUAI_CPU_VAES;
        if (ymm_ok && (c & bit_VPCLMULQDQ))
            f |= KUAI_CPU_VPCLMUL;
        if (c & bit_GFNI)
            f |= KUAI_CPU_GFNI;
        if (zmm_ok && (b & bit_AVX512F) && (b & bit_AVX512BW) && (b & bit_AVX512VL))
            f |= KUAI_CPU_AVX512;
        if (zmm_ok && (c & bit_AVX512VBMI))
            f |= KUAI_CPU_AVX512VBMI;
    }
#if KUAI_ISA_SHIM
    /* make test-shim's build only (CMakeLists.txt): these instructions are
     * plain C there, built on the AVX2, AES-NI and PCLMULQDQ ones. */
    unsigned base = KUAI_CPU_AVX2 | KUAI_CPU_AESNI | KUAI_CPU_PCLMUL | KUAI_CPU_SSSE3;
    if ((f & base) == base)
        f |= KUAI_CPU_VAES | KUAI_CPU_VPCLMUL | KUAI_CPU_AVX512 | KUAI_CPU_AVX512VBMI |
             KUAI_CPU_GFNI;
#endif
    return f;
}

/* KUAI_SPLIT_YMM and KUAI_SPLIT_ZMM (cpu.h) of this CPU, from its vendor,
 * family and model: AMD Zen 1 and Zen+ (family 17h models 00h-2Fh) and
 * Hygon's family 18h run a 256-bit operation as two 128-bit halves; AMD
 * Zen 4 (family 19h; its Zen 3 models have no AVX-512) runs a 512-bit one
 * as two 256-bit halves; KUAI_ZEN is AMD from family 19h on (Zen 3 and
 * 4), KUAI_ZEN5 from family 1Ah on (Zen 5). */
static int detect_split(void)
{
#if KUAI_ISA_SHIM
    return 0;
#else
    unsigned a, b, c, d;
    if (!__get_cpuid(0, &a, &b, &c, &d))
        return 0;
    /* vendor string in ebx, edx, ecx */
    const int amd = b == 0x68747541u && d == 0x69746e65u && c == 0x444d4163u;   /* AuthenticAMD */
    const int hygon = b == 0x6f677948u && d == 0x6e65476eu && c == 0x656e6975u; /* HygonGenuine */
    if ((!amd && !hygon) || !__get_cpuid(1, &a, &b, &c, &d))
        return 0;
    unsigned family = (a >> 8) & 0xf, model = (a >> 4) & 0xf;
    if (family == 0xf) {
        family += (a >> 20) & 0xff;
        model |= ((a >> 16) & 0xf) << 4;
    }
    return ((family == 0x17 && model < 0x30) || family == 0x18 ? KUAI_SPLIT_YMM : 0) |
           (amd && family == 0x19 ? KUAI_SPLIT_ZMM : 0) | (amd && family >= 0x19 ? KUAI_ZEN : 0) |
           (amd && family >= 0x1a ? KUAI_ZEN5 : 0);
#endif
}
#elif defined(__aarch64__) && defined(__linux__)
#include <sys/auxv.h>

/* Linux's arch/arm64/include/uapi/asm/hwcap.h; spelled out because musl and
 * older glibc headers lack some of them. */
#define KUAI_HWCAP_ASIMD (1ul << 1)
#define KUAI_HWCAP_AES (1ul << 3)
#define KUAI_HWCAP_PMULL (1ul << 4)
#define KUAI_HWCAP_SM4 (1ul << 19)

static const struct feature_name feature_names[] = {{KUAI_CPU_NEON, "neon"},
                                                    {KUAI_CPU_ARM_AES, "aes"},
                                                    {KUAI_CPU_ARM_PMULL, "pmull"},
                                                    {KUAI_CPU_ARM_SM4, "sm4"},
                                                    {0, NULL}};

static unsigned detect(void)
{
    unsigned long h = getauxval(AT_HWCAP);
    unsigned f = 0;
    if (h & KUAI_HWCAP_ASIMD)
        f |= KUAI_CPU_NEON;
    /* The crypto-instruction backends use NEON registers around them. */
    if ((h & KUAI_HWCAP_ASIMD) && (h & KUAI_HWCAP_AES))
        f |= KUAI_CPU_ARM_AES;
    if ((h & KUAI_HWCAP_ASIMD) && (h & KUAI_HWCAP_PMULL))
        f |= KUAI_CPU_ARM_PMULL;
    if ((h & KUAI_HWCAP_ASIMD) && (h & KUAI_HWCAP_SM4))
        f |= KUAI_CPU_ARM_SM4;
    return f;
}
#elif defined(__loongarch64) && defined(__linux__)
#include <sys/auxv.h>

/* Linux's arch/loongarch/include/uapi/asm/hwcap.h */
#define KUAI_HWCAP_LOONGARCH_LSX (1ul << 4)
#define KUAI_HWCAP_LOONGARCH_LASX (1ul << 5)

static const struct feature_name feature_names[] = {
    {KUAI_CPU_LSX, "lsx"}, {KUAI_CPU_LASX, "lasx"}, {0, NULL}};

/* The kernel sets each bit only when it saves and restores that register
 * width; LASX's backends use LSX's for their narrow calls, so LASX counts
 * only beside LSX. */
static unsigned detect(void)
{
    const unsigned long h = getauxval(AT_HWCAP);
    unsigned f = 0;
    if (h & KUAI_HWCAP_LOONGARCH_LSX) {
        f |= KUAI_CPU_LSX;
        if (h & KUAI_HWCAP_LOONGARCH_LASX)
            f |= KUAI_CPU_LASX;
    }
    return f;
}
#else
static const struct feature_name feature_names[] = {{0, NULL}};

static unsigned detect(void)
{
    return 0;
}
#endif

#if !defined(KUAI_X86_64)
static int detect_split(void)
{
    return 0;
}
#endif

/* KUAI_YMM_SPLIT=0 or 1 (KUAI_ZMM_SPLIT, KUAI_ZEN, KUAI_ZEN5) in place of the
 * CPU's answer for that bit: the paths of either kind are correct on every CPU
 * with the ISA (they differ in speed only), so one machine's test run can
 * take the other kind's too (make test). */
static int split_override(int v, const char *name, int bit)
{
    const char *e = getenv(name);
    if (!e || (e[0] != '0' && e[0] != '1') || e[1] != '\0')
        return v;
    return e[0] == '1' ? v | bit : v & ~bit;
}

atomic_int kuai_cpu_split_v = -1; /* cpu.h's kuai_cpu_ymm_split, _zmm_split, _zen, _zen5 read it */

/* Racing first calls compute the same value (as kuai_cpu_features'). */
int kuai_cpu_split_detect(void)
{
    int v = split_override(detect_split(), "KUAI_YMM_SPLIT", KUAI_SPLIT_YMM);
    v = split_override(v, "KUAI_ZMM_SPLIT", KUAI_SPLIT_ZMM);
    v = split_override(v, "KUAI_ZEN", KUAI_ZEN);
    v = split_override(v, "KUAI_ZEN5", KUAI_ZEN5);
    atomic_store_explicit(&kuai_cpu_split_v, v, memory_order_relaxed);
    return v;
}

unsigned kuai_cpu_features(void)
{
    /* Racing first calls compute the same value; relaxed atomics keep the
     * cache free of data races without a lock. */
    static atomic_uint cache; /* bit 31: filled */
    unsigned f = atomic_load_explicit(&cache, memory_order_relaxed);
    if (!(f & 0x80000000u)) {
        f = detect() | 0x80000000u;
        atomic_store_explicit(&cache, f, memory_order_relaxed);
    }
    return f & 0x7fffffffu;
}

size_t kuai_cpu_feature_names(const char **names, size_t max)
{
    unsigned f = kuai_cpu_features();
    size_t n = 0;
    for (const struct feature_name *p = feature_names; p->name; p++) {
        if (!(f & p->bit))
            continue;
        if (names && n < max)
            names[n] = p->name;
        n++;
    }
    return n;
}
