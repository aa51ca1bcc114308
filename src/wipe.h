/* SPDX-License-Identifier: Apache-2.0 */
/* Wiping secrets: a leaf every layer may call (src/wipe.c). */
#ifndef KUAI_WIPE_H
#define KUAI_WIPE_H

#include <stddef.h>
#include <string.h>

/* Out of line: libc's memset, then the barrier below. */
void kuai_wipe_call(void *p, size_t n);

/*
 * The n bytes of stack just below the caller's frame (at most
 * KUAI_WIPE_STACK_MAX), where the frames of the calls it has made lay. A
 * kernel's register spills are copies the compiler makes (round keys
 * among them) that no C code can reach to wipe; a call that promises to
 * leave nothing of its key behind (the one-shot ECB calls) runs such a
 * kernel in a function of its own and, once that has returned, overwrites
 * its frame with this (in 32-byte stores where the CPU has AVX, else
 * 16-byte ones). tests/test_oneshot.c searches the stack for the round
 * keys after each such call.
 */
#ifndef KUAI_WIPE_STACK_MAX /* make test-shim's build: 32 KiB (CMakeLists.txt) */
/* the most a backend says its kernels use (kuai_impl.stack_bytes: avx512's
 * uBlock kernels) */
#define KUAI_WIPE_STACK_MAX 16384
/* what a backend's kernels use unless it says more */
#define KUAI_WIPE_STACK_DEFAULT 4096
#else
#define KUAI_WIPE_STACK_DEFAULT KUAI_WIPE_STACK_MAX
#endif
void kuai_wipe_stack(size_t n);

/*
 * Stores the compiler may not drop: memset, then an empty asm that takes p
 * and clobbers memory, so the compiler must assume the zeros are read
 * (BoringSSL's OPENSSL_cleanse and Linux's memzero_explicit do the same).
 * A buffer of a size known where it is wiped is wiped inline: up to 64
 * bytes as gcc's own stores, whole blocks up to 512 bytes 16 bytes a
 * store (an empty asm in the loop, or gcc makes it rep stosq, whose
 * start-up costs more than the stores); anything else goes to libc's
 * memset. The call through a volatile function pointer to memset that
 * this replaced cost 10-25 TSC cycles a wipe, a tenth of a 64-byte
 * AES-128-GCM message (Xeon, Sapphire Rapids class). n == 0 touches
 * nothing (p may then be NULL).
 */
static inline void kuai_wipe(void *p, size_t n)
{
    if (__builtin_constant_p(n) && n <= 64) {
        memset(p, 0, n);
        __asm__ volatile("" : : "r"(p) : "memory");
    } else if (__builtin_constant_p(n) && n % 16 == 0 && n <= 512) {
        for (size_t i = 0; i < n; i += 16) {
            memset((unsigned char *)p + i, 0, 16);
            __asm__ volatile("" : : "r"(p) : "memory");
        }
    } else {
        kuai_wipe_call(p, n);
    }
}

#endif
