/* SPDX-License-Identifier: Apache-2.0 */
/* Wiping secrets: a leaf every layer may call (src/wipe.c). */
#ifndef KUAI_WIPE_H
#define KUAI_WIPE_H

#include <stddef.h>
#include <string.h>

/* Stores the compiler may not drop. */
void kuai_wipe(void *p, size_t n);

/* kuai_wipe inlined, for a small buffer of a size known where it is
 * called: memset, then an empty asm that takes p and clobbers memory, so
 * the compiler must assume the zeros are read and keeps the stores (a
 * few vector stores, where kuai_wipe's call into libc's memset cost a
 * tenth of a 64-byte AES-GCM message; Xeon, Sapphire Rapids). */
static inline void kuai_wipe_inline(void *p, size_t n)
{
    memset(p, 0, n);
    __asm__ volatile("" : : "r"(p) : "memory");
}

#endif
