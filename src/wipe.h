/* SPDX-License-Identifier: Apache-2.0 */
/* Wiping secrets: a leaf every layer may call (src/wipe.c). */
#ifndef KUAI_WIPE_H
#define KUAI_WIPE_H

#include <stddef.h>

/* Stores the compiler may not drop. */
void kuai_wipe(void *p, size_t n);

#endif
