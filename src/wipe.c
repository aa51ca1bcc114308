/* SPDX-License-Identifier: Apache-2.0 */
#include "wipe.h"

void kuai_wipe_call(void *p, size_t n)
{
    if (n) {
        memset(p, 0, n);
        /* the zeros may be read: the stores stay even where p is dead */
        __asm__ volatile("" : : "r"(p) : "memory");
    }
}

/* The overwrite below: its area's top lies just below the frame of
 * kuai_wipe_stack's caller (kuai_wipe_stack tail-calls it, so its frame is
 * where kuai_wipe_stack's would be). 64 bytes a step, with the barrier in
 * the loop so that gcc keeps the stores (libc's memset of 1 KiB, a rep
 * stosb, had cost AES-128's one-shot decryption 110 TSC cycles, Zen 3). */
__attribute__((noinline)) static void wipe_stack_sse(size_t n)
{
    unsigned char area[KUAI_WIPE_STACK_MAX];
    for (unsigned char *p = area + sizeof area - n; p < area + sizeof area; p += 64) {
        memset(p, 0, 64);
        __asm__ volatile("" : : "r"(p) : "memory");
    }
}

#if defined(__x86_64__) && defined(__GNUC__)
#include "cpu.h"
#include <immintrin.h>
#define KUAI_WIPE_AVX 1
/* The same in 32-byte stores, where the CPU has AVX2 (the library's own
 * feature test, src/cpu.c; every such CPU has AVX) (half the stores:
 * their count, not their bytes, is what a call waits for: docs/performance.md,
 * seventy-sixth session) */
__attribute__((noinline, target("avx"))) static void wipe_stack_avx(size_t n)
{
    unsigned char area[KUAI_WIPE_STACK_MAX];
    for (unsigned char *p = area + sizeof area - n; p < area + sizeof area; p += 64) {
        _mm256_storeu_si256((__m256i *)(void *)p, _mm256_setzero_si256());
        _mm256_storeu_si256((__m256i *)(void *)(p + 32), _mm256_setzero_si256());
        __asm__ volatile("" : : "r"(p) : "memory");
    }
}
#endif

__attribute__((noinline)) void kuai_wipe_stack(size_t n)
{
    if (n > KUAI_WIPE_STACK_MAX)
        n = KUAI_WIPE_STACK_MAX;
    n &= ~(size_t)63;
#ifdef KUAI_WIPE_AVX
    if (kuai_cpu_features() & KUAI_CPU_AVX2) {
        wipe_stack_avx(n);
        return;
    }
#endif
    wipe_stack_sse(n);
}
