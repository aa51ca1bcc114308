/* SPDX-License-Identifier: Apache-2.0 */
/* uBlock: parameters and the schedule form every uBlock backend shares. */
#ifndef KUAI_UBLOCK_H
#define KUAI_UBLOCK_H

#include "../internal.h"

#define UBLOCK_MAX_ROUNDS 24

/* The S-box s and its inverse (spec/ublock.md) as the 16 entries of a
 * table, each entry through F (e.g. UBLOCK_NIB, or UBLOCK_NIB_HI for the
 * high nibble): the one place the SIMD tables take their values from. */
#define UBLOCK_S_ROW(F)                                                                            \
    F(7), F(4), F(9), F(12), F(11), F(10), F(13), F(8), F(15), F(14), F(1), F(6), F(0), F(3),      \
        F(2), F(5)
#define UBLOCK_S_INV_ROW(F)                                                                        \
    F(12), F(10), F(14), F(13), F(1), F(15), F(11), F(0), F(7), F(2), F(5), F(4), F(3), F(6),      \
        F(9), F(8)
#define UBLOCK_NIB(x) (x)
#define UBLOCK_NIB_HI(x) ((x) << 4)

/*
 * Stored at the start of kuai_key.priv_sched by every uBlock backend.
 * rk[i] is RK_i exactly as the spec defines it (n/8 bytes, byte 0 leftmost;
 * the first n/16 bytes are the left half RK0_i, the rest the right half),
 * when raw is 1: the ref backend's key setup writes it. The nibble key
 * setup (ublock_expand_nib.h) leaves it unwritten (raw 0: storing it cost
 * 15-20% of a key setup) and stores the low-latency kernel's form only,
 * from which ublock_rk_row derives RK_i. ext is the backend's own derived
 * form (e.g. bitsliced masks), and the kernel form at its end.
 */
typedef struct ublock_sched {
    uint8_t rk[UBLOCK_MAX_ROUNDS + 1][32];
    uint32_t nbytes; /* block size: 16 or 32 */
    uint32_t rounds; /* 16 or 24 */
    /* Backends that build their wide kernel's round-key masks on first bulk
     * use: UBLOCK_MASKS_NONE, or the state of a build at an address
     * (ublock_masks_ready, ublock_masks_busy; atomic: a const key may be
     * shared by threads). The address is this schedule's own unless the key
     * was copied: a copy taken while another thread built the masks (which
     * kuai.h forbids) may hold a "built" state over half-built masks, and
     * since that state names the original's address, the copy builds its
     * own masks instead of trusting them (one build per copied key; copies
     * made the allowed way pay it too). The address's low 32 bits: a copy
     * a multiple of 4 GiB away would pass for its original (a safety net
     * for a race kuai.h forbids, not a promise). 32 bits keep the fields as
     * they were: with 16-bit nbytes and rounds beside a 64-bit state,
     * uBlock-256/256's key setup + 2 blocks took 721 TSC cycles, not 648
     * (Zen 1, docs/performance.md). */
    uint32_t masks;
    uint32_t raw;                  /* 1: rk holds the raw schedule; 0: derive it (ublock_rk_row) */
    unsigned char ext[8192 - 816]; /* 8-byte aligned: backends load it unaligned */
} ublock_sched;

/* UBLOCK_MASKS_DEFERRED: none yet, and one call that would have built
 * them ran without them (ublock_masks_defer) */
enum { UBLOCK_MASKS_NONE = 0, UBLOCK_MASKS_DEFERRED = 1 };
/* Built at s, or being built there: the low 32 bits of s's address with
 * bit 1 set (so that neither is ever UBLOCK_MASKS_NONE, whatever the
 * address), and bit 0 too while a build is under way. */
static inline uint32_t ublock_masks_ready(const ublock_sched *s)
{
    return (uint32_t)(uintptr_t)s | 2;
}
static inline uint32_t ublock_masks_busy(const ublock_sched *s)
{
    return (uint32_t)(uintptr_t)s | 3;
}
/* 1 for the first call on a key whose masks were never built nor put off
 * (UBLOCK_MASKS_NONE), which may then run without them (ublock_ll_front.h:
 * a key set up for one message of a few hundred bytes never pays for
 * them); 0 after, when the next bulk call builds them. The key may be
 * shared by threads (const): an atomic claim, as the build's. */
static inline int ublock_masks_defer(const ublock_sched *s)
{
    uint32_t *m = (uint32_t *)(uintptr_t)&s->masks, st = __atomic_load_n(m, __ATOMIC_RELAXED);
    return st == UBLOCK_MASKS_NONE &&
           __atomic_compare_exchange_n(m, &st, UBLOCK_MASKS_DEFERRED, 0, __ATOMIC_RELAXED,
                                       __ATOMIC_RELAXED);
}

/*
 * The low-latency kernel's round keys (ublock_ll.h), stored at key setup
 * by every uBlock backend (the nibble key setup, ublock_expand_nib.h; ref
 * converts its schedule: a multi-key call runs on its first key's backend
 * and may mix keys of all) so that the kernel's calls load them instead
 * of splitting each raw round key into nibbles as the rounds go; 32 bytes
 * per round i. uBlock-128: the two half vectors (one nibble per byte) in
 * round i's layout, exactly what the kernel adds (17 or 25 rounds: 544 or
 * 800 bytes). uBlock-256/256: each half's two vectors in layout L packed
 * into one, l's nibble in the low half of each byte, h's in the high half
 * (800 bytes; unpacked, 1,600 would not fit beside the raw schedule and
 * the AVX2 masks, 6,400 bytes). At the end of ext, after any backend's
 * masks (ublock_bs.h asserts it), 8-byte aligned only: read with unaligned
 * loads. A plain copy of the key keeps it valid (no pointers inside; the
 * masks' state holds an address only to tell a copy from its original).
 */
#define UBLOCK_LLK_BYTES ((UBLOCK_MAX_ROUNDS + 1) * 32)
#define UBLOCK_LLK_OFF (sizeof(((ublock_sched *)0)->ext) - UBLOCK_LLK_BYTES)

/* The kernel-form round keys of s (rows of 32 bytes). */
static inline const uint8_t *ublock_llk(const ublock_sched *s)
{
    return s->ext + UBLOCK_LLK_OFF;
}

/* ublock_sched.c: the scalar conversions between the two forms, and the
 * kernel form's layouts (ublock_expand_nib.h stores with the same). */
extern const _Alignas(16) uint8_t ublock_llk_p[2][8][16], ublock_llk_pl[2][16];
/* Writes the kernel form from rk (the ref backend's key setup). */
void ublock_llk_from_rk(ublock_sched *s);
/* RK_i of a schedule without rk (raw 0), derived from the kernel form into
 * buf; returns buf. */
const uint8_t *ublock_rk_derive(const ublock_sched *s, unsigned i, uint8_t buf[32]);

/* RK_i of any uBlock key: s->rk[i], else derived into buf (which then holds
 * key material: the caller wipes it). */
static inline const uint8_t *ublock_rk_row(const ublock_sched *s, unsigned i, uint8_t buf[32])
{
    return s->raw ? s->rk[i] : ublock_rk_derive(s, i, buf);
}

_Static_assert(offsetof(ublock_sched, ext) == 816, "ext's size above assumes it starts at 816");
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

/* The key setups every uBlock backend runs first, before deriving any
 * form of its own into ext: the portable one (ublock_ref.c: fills rk,
 * raw = 1, and the low-latency kernel's form from it), or the same
 * schedule on nibbles with vector shuffles (ublock_expand_nib.h: the
 * kernel's form only, raw = 0; ublock_expand_nib_ssse3 for ssse3,
 * avx2's and avx512's VEX copies, neon's and lsx's: the scalar nibble
 * permutation was most of a short message's cost). */
void ublock_expand_raw(ublock_sched *s, kuai_cipher c, const uint8_t *key);
void ublock_expand_nib_ssse3(ublock_sched *s, kuai_cipher c, const uint8_t *key);
/* avx2's one-key setup of uBlock-128/256 (ublock_avx2_keys4.c: its round
 * loop unrolled) */
void ublock_avx2_expand1_128_256(ublock_sched *s, const uint8_t *key);
/* avx2's four-key setup (ublock_avx2_keys4.c; kuai_key_init_multi) */
void ublock_avx2_expand4(kuai_key *const k[4], const uint8_t *const key[4]);
/* its schedules of four uBlock-128/128 or 128/256 keys, two per ymm, into
 * s (the caller marks the masks unbuilt): also avx512's where zmm is split */
void ublock_avx2_expand4y(ublock_sched *const s[4], kuai_cipher c, const uint8_t *const key[4]);
/* avx2's two-key setup on xmm for uBlock-128/128 and 128/256, for cores
 * that split ymm (ublock_avx2_keys4.c) */
void ublock_avx2_expand2x(ublock_sched *s0, ublock_sched *s1, kuai_cipher c, const uint8_t *key0,
                          const uint8_t *key1);
/* avx2's wide kernels under round-key masks rk (8 per round, 32 bytes
 * each, the AVX2 rows avx512's keys store too): ECB (enc nonzero:
 * encryption) and CTR of n blocks, for the avx512 backend on CPUs that
 * split zmm (ublock_avx512.c) */
void ublock128_avx2_crypt_masks(const void *rk, unsigned rounds, const uint8_t *in, uint8_t *out,
                                size_t n, int enc);
void ublock128_avx2_ctr_masks(const void *rk, unsigned rounds, uint8_t *ctr, const uint8_t *in,
                              uint8_t *out, size_t n);
void ublock256_avx2_crypt_masks(const void *rk, unsigned rounds, const uint8_t *in, uint8_t *out,
                                size_t n, int enc);
void ublock256_avx2_ctr_masks(const void *rk, unsigned rounds, uint8_t *ctr, const uint8_t *in,
                              uint8_t *out, size_t n);
/* avx2's multi-key setup (its kuai_impl's mk_setup: the rounds at m->b,
 * the lane masks of up to 16 (8) keys from m->b + 64, for crypt_masks), for
 * the same avx512 batches */
void ublock128_avx2_mk_setup_masks(kuai_mk *m, const kuai_key *const *keys, size_t n);
void ublock256_avx2_mk_setup_masks(kuai_mk *m, const kuai_key *const *keys, size_t n);

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
/* The nibble key schedule's round constants (ublock_ks.h), ublock_tables.c */
extern const _Alignas(16) uint8_t ublock_ks_rc[3][25][16];

#endif
