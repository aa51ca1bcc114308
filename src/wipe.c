/* SPDX-License-Identifier: Apache-2.0 */
#include "wipe.h"

#include <string.h>

void kuai_wipe(void *p, size_t n)
{
    /* A volatile function pointer: the compiler cannot prove what memset
     * does through it, so the stores stay even when p is dead afterwards. */
    static void *(*const volatile wipe_memset)(void *, int, size_t) = memset;
    wipe_memset(p, 0, n);
}
