/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The low-latency kernel's place in a backend's table (ublock_ll.h, which
 * includes this at its end): the front that splits single-key calls at
 * the crossover, and the impl macros. UL_FN(name) names the kernel copy
 * the macros use: each backend compiles its own copy of the kernel for
 * its ISA (ublock_avx512.c an EVEX-encoded one of avx2's).
 */
#ifndef KUAI_UBLOCK_LL_FRONT_H
#define KUAI_UBLOCK_LL_FRONT_H

#include "ublock.h"

/*
 * Backend tables of an ISA with this kernel in front of the wide one: W is
 * the wide kernels' name prefix (e.g. ublock128_avx2_), X the crossover in
 * blocks (calls below it come here, and so do tails below it after whole
 * groups of wide passes), measured per ISA and member by kuai_bench's
 * crossover rows (kuai_bench --mode paper). The wide kernel runs up to G
 * passes of P blocks side by side (ublock_bs.h's UBM_NS and UBM_PASS), a
 * part pass among them too, and a pass beside another costs less than a
 * lone one: a tail that would join whole passes in a group stays there
 * from XT blocks up (XT at most X). front_tail is always inlined: gcc had
 * stopped inlining it into the callers, and avx512's ECB of 4 uBlock-128
 * blocks under a set-up key took 113 -> 116 TSC cycles, 1 block's
 * decryption 112 -> 120 (Xeon, Sapphire Rapids, scripts/bench-ab). The
 * narrow multi-key table serves the
 * mk_narrow hook: few streams run as one pass of this kernel.
 */
/* A backend file may define, before including ublock_ll.h, UL_FRONT_X(W, X)
 * and UL_FRONT_XT(W, XT) (the crossovers to use, e.g. chosen by the CPU at
 * run time) and
 * UL_WIDE(W, op) (the function running W's whole passes, for op enc_blocks,
 * dec_blocks or ctr_blocks): ublock_avx512.c does, for CPUs that split zmm. */
#ifndef UL_FRONT_X
#define UL_FRONT_X(W, X) (X)
#endif
#ifndef UL_FRONT_XT
#define UL_FRONT_XT(W, XT) (XT)
#endif
#ifndef UL_WIDE
#define UL_WIDE(W, op) W##op
#endif
/* The stack the wide kernels' calls use below the caller's frame
 * (kuai_impl.stack_bytes): what the one-shot calls' generic path
 * overwrites after them. A backend file sets what its kernels need with
 * some margin (tests/test_oneshot.c finds the deepest byte written); this
 * is the most. */
#ifndef UL_KERNEL_STACK
#define UL_KERNEL_STACK 16384
#endif
/* A call on a key whose wide kernel's round-key masks are not built yet
 * (they are built on first bulk use: ublock_bs.h) pays for them: about
 * 1,200 TSC cycles for uBlock-128/128 on avx512, 4,000 for 256/256, more
 * than the wide kernel's work on a few hundred bytes. Below
 * UL_FRONT_COLD_BLOCKS such a call runs on this kernel instead, once
 * (ublock_masks_defer), so that a key set up for one message of up to
 * 752 bytes (uBlock-128) or 1,248 (256/256) never builds them; the next
 * bulk call on the key builds them as before. Where the two meet, key
 * setup + ECB of n blocks on this kernel against with the build (Zen 4,
 * scripts/bench-ab, KUAI_AB_LEN): uBlock-128/128 and 128/256 32 blocks
 * 0.78-0.86 (avx512, avx2), 0.87-0.97 (ssse3); 48 blocks 0.95-1.01
 * (avx2); 64 blocks 1.12-1.32 everywhere; uBlock-256/256 32 blocks
 * 0.73-0.90, 48 0.92 (avx2), 64 1.06-1.23 (docs/performance.md). */
#define UL_FRONT_COLD_BLOCKS(nbytes) ((nbytes) == 16 ? 48u : 40u)
#define UL_FRONT(W, X, P, G, XT)                                                                   \
    enum { W##crossover = (X) };                                                                   \
    static inline __attribute__((always_inline)) size_t W##front_tail(const kuai_key *k, size_t n) \
    {                                                                                              \
        size_t x = UL_FRONT_X(W, X), r = n % (P);                                                  \
        if (n < x)                                                                                 \
            return n;                                                                              \
        if (n < UL_FRONT_COLD_BLOCKS(ublock_sched_const(k)->nbytes) &&                             \
            ublock_masks_defer(ublock_sched_const(k)))                                             \
            return n;                                                                              \
        if ((n / (P)) % (G)) /* the tail would join whole passes in a group */                     \
            x = UL_FRONT_XT(W, XT);                                                                \
        return r < x ? r : 0;                                                                      \
    }                                                                                              \
    static void W##front_enc(const kuai_key *k, const uint8_t *in, uint8_t *out, size_t n)         \
    {                                                                                              \
        size_t r = W##front_tail(k, n), off = (n - r) * ublock_sched_const(k)->nbytes;             \
        if (n > r)                                                                                 \
            UL_WIDE(W, enc_blocks)(k, in, out, n - r);                                             \
        if (r)                                                                                     \
            UL_FN(enc_blocks)(k, in + off, out + off, r);                                          \
    }                                                                                              \
    static void W##front_dec(const kuai_key *k, const uint8_t *in, uint8_t *out, size_t n)         \
    {                                                                                              \
        size_t r = W##front_tail(k, n), off = (n - r) * ublock_sched_const(k)->nbytes;             \
        if (n > r)                                                                                 \
            UL_WIDE(W, dec_blocks)(k, in, out, n - r);                                             \
        if (r)                                                                                     \
            UL_FN(dec_blocks)(k, in + off, out + off, r);                                          \
    }                                                                                              \
    static void W##front_ctr(const kuai_key *k, uint8_t *ctr, const uint8_t *in, uint8_t *out,     \
                             size_t n)                                                             \
    {                                                                                              \
        size_t r = W##front_tail(k, n), off = (n - r) * ublock_sched_const(k)->nbytes;             \
        if (n > r)                                                                                 \
            UL_WIDE(W, ctr_blocks)(k, ctr, in, out, n - r);                                        \
        if (r)                                                                                     \
            UL_FN(ctr_blocks)(k, ctr, in + off, out + off, r);                                     \
    }

#define UL_NARROW_IMPL(var, name_, fam, avail)                                                     \
    static const kuai_impl var = {                                                                 \
        .name = name_,                                                                             \
        .family = fam,                                                                             \
        .available = avail,                                                                        \
        .mk_lanes = UL_MK_LANES,                                                                   \
        .mk_setup = UL_FN(mk_setup),                                                               \
        .mk_bytes = UL_MK_LANES * sizeof(const ublock_sched *),                                    \
        .mk_enc = UL_FN(mk_enc),                                                                   \
        .mk_dec = UL_FN(mk_dec),                                                                   \
        .mk_cbc_enc = UL_FN(mk_cbc_enc),                                                           \
    }

/* The wide kernel W's two-key setup where the file's key setup has one
 * (UB_KEY_SETUP2, ublock_bs.h), else none (kuai_key_init_multi then
 * sets its keys up one by one). */
#ifdef UB_KEY_SETUP2
#define UL_EXPAND2(W) W##expand2
#else
#define UL_EXPAND2(W) NULL
#endif
/* and its four-key setup (UB_KEY_SETUP4: avx512), or another file's
 * (UB_EXPAND4_EXT: avx2's, ublock_avx2_keys4.c) */
#if defined(UB_EXPAND4_EXT)
#define UL_EXPAND4(W) UB_EXPAND4_EXT
#elif defined(UB_KEY_SETUP4)
#define UL_EXPAND4(W) W##expand4
#else
#define UL_EXPAND4(W) NULL
#endif

/* mk_short packs the blocks of several streams into its groups (4 blocks
 * of 16 bytes, 2 of 32); a stream of more than a group's blocks gains
 * nothing there and goes through its key's single-key call (multi.c's
 * streams_alone), which takes the wide kernel from the crossover measured
 * on the core: below a group and one block, and below the crossover. */
#define UL_MK_SHORT_BLOCKS(fam, W)                                                                 \
    ((fam) == KUAI_FAMILY_UBLOCK128 ? UL_MIN_BLOCKS(UL_G128 + 1, W##crossover)                     \
                                    : UL_MIN_BLOCKS(UL_G256 + 1, W##crossover))
#define UL_MIN_BLOCKS(a, b) ((size_t)(a) < (size_t)(b) ? (size_t)(a) : (size_t)(b))

/* M: the prefix of the wide kernel's multi-key functions (UL_IMPL: W's own;
 * avx512 has a second, full-width instantiation for them); cbcn: the most
 * CBC encryption streams the narrow kernel takes (kuai_impl.mk_cbc_narrow);
 * cbcw: the fewest blocks a stream for the wide kernel's CBC encryption
 * (kuai_impl.mk_cbc_wide_blocks): below, the wide kernel's mk_setup (every
 * lane's bitsliced round-key masks) costs more than its lanes save over
 * the narrow kernel's chains */
#define UL_IMPL_MK(var, name_, fam, prio, avail, W, M, lanes, narrow, cbcn, cbcw)                  \
    const kuai_impl var = {                                                                        \
        .name = name_,                                                                             \
        .family = fam,                                                                             \
        .priority = prio,                                                                          \
        .available = avail,                                                                        \
        .expand = W##expand,                                                                       \
        .expand2 = UL_EXPAND2(W),                                                                  \
        .expand4 = UL_EXPAND4(W),                                                                  \
        .enc_blocks = W##front_enc,                                                                \
        .dec_blocks = W##front_dec,                                                                \
        .ctr_blocks = W##front_ctr,                                                                \
        .cbc_enc_blocks = UL_FN(cbc_enc_blocks),                                                   \
        .mk_lanes = lanes,                                                                         \
        .mk_setup = M##mk_setup,                                                                   \
        .mk_bytes = M##mk_bytes,                                                                   \
        .mk_enc = M##mk_enc,                                                                       \
        .mk_dec = M##mk_dec,                                                                       \
        .mk_narrow = narrow,                                                                       \
        .mk_cbc_narrow = cbcn,                                                                     \
        .mk_cbc_wide_blocks = cbcw,                                                                \
        .mk_short_blocks = UL_MK_SHORT_BLOCKS(fam, W),                                             \
        .mk_slots_blocks = 1,                                                                      \
        .mk_short = UL_FN(mk_short),                                                               \
        .oneshot = UL_FN(oneshot),                                                                 \
        .stack_bytes = UL_KERNEL_STACK,                                                            \
    }
#define UL_IMPL(var, name_, fam, prio, avail, W, lanes, narrow, cbcn, cbcw)                        \
    UL_IMPL_MK(var, name_, fam, prio, avail, W, W, lanes, narrow, cbcn, cbcw)

#endif
