/* SPDX-License-Identifier: Apache-2.0 */
/* Pieces the MAC-bearing modes share (GCM, CCM, CMAC). */
#ifndef KUAI_MODES_MAC_H
#define KUAI_MODES_MAC_H

#include "../ct.h"
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

/* A verdict (bad: 0 or 1, computed without branches) made public: on a
 * failure the len bytes already written to out are wiped, so that data
 * that failed authentication (a plaintext, an unwrapped key) is never
 * handed back. */
static inline int auth_verdict(int bad, uint8_t *out, size_t len)
{
    kuai_declassify(&bad, sizeof bad);
    if (!bad)
        return KUAI_OK;
    if (len)
        kuai_wipe(out, len);
    return KUAI_ERR_AUTH;
}

/* An AEAD decryption's verdict on its computed tag (16 bytes, wiped here)
 * against the expected one. */
static inline int tag_verdict(uint8_t computed[16], const uint8_t *want, size_t tag_len,
                              uint8_t *out, size_t len)
{
    int bad = tag_differs(computed, want, tag_len);
    kuai_wipe(computed, 16);
    return auth_verdict(bad, out, len);
}

/* CBC-MAC of nblocks whole 16-byte blocks into mac (the chain, updated in
 * place), through the backend's fused CBC kernel when it has one
 * (src/modes/cmac.c). */
void kuai_cbc_mac(const kuai_key *k, uint8_t mac[16], const uint8_t *in, size_t nblocks);

#endif
