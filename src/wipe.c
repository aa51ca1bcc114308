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

__attribute__((noinline)) void kuai_wipe_stack(size_t n)
{
    unsigned char area[KUAI_WIPE_STACK_MAX];
    if (n > sizeof area)
        n = sizeof area;
    n &= ~(size_t)63;
    /* The top of this frame's area lies just below the caller's frame.
     * 64 bytes a step, with the barrier in the loop so that gcc keeps the
     * stores (four vector stores a step; libc's memset of 1 KiB, a rep
     * stosb, had cost AES-128's one-shot decryption 110 TSC cycles, Zen 3). */
    for (unsigned char *p = area + sizeof area - n; p < area + sizeof area; p += 64) {
        memset(p, 0, 64);
        __asm__ volatile("" : : "r"(p) : "memory");
    }
}
