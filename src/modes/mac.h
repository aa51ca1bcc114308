/* SPDX-License-Identifier: Apache-2.0 */
/* Pieces the MAC-bearing modes share (GCM, CCM, CMAC). */
#ifndef KUAI_MODES_MAC_H
#define KUAI_MODES_MAC_H

#include "modes.h"

/* 0 when the first n bytes agree; time independent of where they differ. */
static inline int tag_differs(const uint8_t *a, const uint8_t *b, size_t n)
{
    unsigned d = 0;
    for (size_t i = 0; i < n; i++)
        d |= (unsigned)(a[i] ^ b[i]);
    /* d in 0..255: (d - 1) >> 8 is all ones exactly when d == 0. */
    return (int)(1 & ~((d - 1) >> 8));
}

/* CBC-MAC of nblocks whole 16-byte blocks into mac (the chain, updated in
 * place), through the backend's fused CBC kernel when it has one
 * (src/modes/cmac.c). */
void kuai_cbc_mac(const kuai_key *k, uint8_t mac[16], const uint8_t *in, size_t nblocks);

#endif
