/* SPDX-License-Identifier: Apache-2.0 */
/* uBlock: parameters and the schedule form every uBlock backend shares. */
#ifndef KUAI_UBLOCK_H
#define KUAI_UBLOCK_H

#include "../internal.h"

#define UBLOCK_MAX_ROUNDS 24

/*
 * Stored at the start of kuai_key.priv_sched by every uBlock backend.
 * rk[i] is RK_i exactly as the spec defines it (n/8 bytes, byte 0 leftmost);
 * the first n/16 bytes are the left half RK0_i, the rest the right half.
 * ext is the backend's own derived form (e.g. bitsliced masks).
 */
typedef struct ublock_sched {
    uint8_t rk[UBLOCK_MAX_ROUNDS + 1][32];
    uint32_t nbytes; /* block size: 16 or 32 */
    uint32_t rounds; /* 16 or 24 */
    /* Backends that build their wide kernel's round-key masks on first bulk
     * use (UBLOCK_MASKS_*, atomic: a const key may be shared by threads). */
    uint32_t masks;
    uint32_t pad;
    unsigned char ext[8192 - 816]; /* 8-byte aligned: backends load it unaligned */
} ublock_sched;

enum { UBLOCK_MASKS_NONE = 0, UBLOCK_MASKS_BUSY = 1, UBLOCK_MASKS_READY = 2 };

_Static_assert(sizeof(ublock_sched) <= sizeof(((kuai_key *)0)->priv_sched),
               "uBlock schedule must fit in kuai_key");

static inline ublock_sched *ublock_sched_of(kuai_key *k)
{
    return (ublock_sched *)(void *)k->priv_sched;
}
static inline const ublock_sched *ublock_sched_const(const kuai_key *k)
{
    return (const ublock_sched *)(const void *)k->priv_sched;
}

/* The portable key schedule (ublock_ref.c): fills rk, nbytes, rounds. Every
 * backend calls it (or the same on nibbles with pshufb,
 * ublock_expand_raw_ssse3 in ublock_ssse3.c, for the x86 backends: the
 * scalar nibble permutation was most of a short message's cost) first and
 * then derives its own form into ext. */
void ublock_expand_raw(ublock_sched *s, kuai_cipher c, const uint8_t *key);
void ublock_expand_raw_ssse3(ublock_sched *s, kuai_cipher c, const uint8_t *key);

/* Spec tables (ublock_tables.c; the key schedule's in ublock_ref.c), shared
 * by all backends. Source: ../shared/spec/ublock.md (Wu, Zhang, Zheng, Li,
 * JCR 2019 6(6)). */
extern const uint8_t ublock_pl128[8], ublock_pr128[8], ublock_pl256[16], ublock_pr256[16];
extern const uint8_t ublock_pl128_inv[8], ublock_pr128_inv[8], ublock_pl256_inv[16],
    ublock_pr256_inv[16];
/* key schedule: nibble permutations PK1-3 (new nibble j = old nibble
 * pk[j]) and the round constants RC1..RC24 */
extern const uint8_t ublock_pk1[16], ublock_pk2[32], ublock_pk3[32];
extern const uint32_t ublock_rc[24];

#endif
