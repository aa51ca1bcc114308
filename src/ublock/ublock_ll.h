/* SPDX-License-Identifier: Apache-2.0 */
/*
 * uBlock, low-latency kernel for few blocks: whole blocks in registers, one
 * nibble per byte, over a 128-bit vector vocabulary. The wide bitsliced
 * kernels (ublock_bs.h) pay a whole pass of 8-32 blocks and a bit-matrix
 * transposition however few blocks a call has; this kernel's cost grows
 * with the block count from one block up, and its dependency chain per
 * round is ~10 operations, so it serves short calls, CBC encryption (the
 * chain stays in registers) and multi-key calls with few streams.
 *
 * Layout: a half block of 16 nibbles (uBlock-128) is one vector, byte
 * pos_i[n] holding nibble n (0..15) as a value 0..15: exactly the byte
 * positions of a bitsliced plane-half, so the drifting layouts and every
 * shuffle row of ub128_tab serve unchanged (only the S-box differs: here a
 * pshufb into a 16-entry register table, secret data only as the index).
 * A uBlock-256 half (32 nibbles) is two vectors in layout L with
 * ub256_tab's rows, PL/PR as two unpacks and a shuffle each (see
 * ublock_bs.h). Rounds are ublock_bs.h's (fused for uBlock-128), so the
 * same derivations hold; keys are the spec's RK_i, split into nibbles as
 * they are used (no S-box complement here).
 *
 * The including file includes the 128-bit vocabulary of src/simd/ (v128,
 * v128_xor, v128_shuf8, ...: sse.h), defines UL_FN(name) for this ISA's
 * names, and has included
 * ublock_bs.h's shared part (the tables). Constant time: no branch or
 * memory index depends on keys or data.
 */

#include "ublock_ks.h" /* the one-shot calls' key schedule */

/* Blocks a group runs side by side: 8 state vectors either way. */
#define UL_G128 4
#define UL_G256 2

/* The uBlock-128 round keys a key stored in this kernel's form (ublock.h,
 * UBLOCK_LLK_*, written by the nibble key setup) are 8-byte aligned only:
 * addressed through this type where they are taken as vectors. */
typedef v128 UL_FN(kv) __attribute__((aligned(1)));

static const _Alignas(UB_V_BYTES) uint8_t UL_FN(sbox_tab)[2][UB_V_BYTES] = {
    UB_ROW16(UBLOCK_S_ROW(UBLOCK_NIB)), UB_ROW16(UBLOCK_S_INV_ROW(UBLOCK_NIB))};
/* s and s^-1 in the high nibble, for two blocks packed in a byte
 * (round128p) */
static const _Alignas(UB_V_BYTES) uint8_t UL_FN(sbox_hi_tab)[2][UB_V_BYTES] = {
    UB_ROW16(UBLOCK_S_ROW(UBLOCK_NIB_HI)), UB_ROW16(UBLOCK_S_INV_ROW(UBLOCK_NIB_HI))};

#define UL_R128(x, l, row) v128_shuf8(x, v128_load(ub128_tab[l][row]))

/* 16 bytes -> their high nibbles (hi) and low nibbles (lo), one per byte. */
UB_KERNEL void UL_FN(split)(v128 v, v128 *hi, v128 *lo)
{
    v128 m = v128_set1_8(0x0f);
    *hi = v128_and(v128_srl64(v, 4), m);
    *lo = v128_and(v, m);
}

/* ---- uBlock-128 ---------------------------------------------------------- */

/* A 16-byte block (or round key) -> X0, X1 in layout pos_0. */
UB_KERNEL void UL_FN(load128)(const uint8_t *p, v128 *a, v128 *b)
{
    v128 hi, lo;
    UL_FN(split)(v128_loadu(p), &hi, &lo);
    *a = v128_unpacklo64(hi, lo);
    *b = v128_unpackhi64(hi, lo);
}

UB_KERNEL v128 UL_FN(merge128)(v128 a, v128 b)
{
    return v128_or(v128_sll64(v128_unpacklo64(a, b), 4), v128_unpackhi64(a, b));
}

/* Two blocks' nibble vectors (one nibble per byte) in one: x's nibble low,
 * y's high (round128p), and back. */
UB_KERNEL v128 UL_FN(pack2)(v128 x, v128 y)
{
    return v128_or(x, v128_sll64(y, 4));
}

UB_KERNEL void UL_FN(unpack2)(v128 v, v128 *x, v128 *y)
{
    const v128 m = v128_set1_8(0x0f);
    *x = v128_and(v, m);
    *y = v128_and(v128_srl64(v, 4), m);
}

/* The blocks at p0 and p1 as one packed pair (a, b), and back. */
UB_KERNEL void UL_FN(load128p)(const uint8_t *p0, const uint8_t *p1, v128 *a, v128 *b)
{
    v128 a0, b0, a1, b1;
    UL_FN(load128)(p0, &a0, &b0);
    UL_FN(load128)(p1, &a1, &b1);
    *a = UL_FN(pack2)(a0, a1);
    *b = UL_FN(pack2)(b0, b1);
}

UB_KERNEL void UL_FN(store128p)(uint8_t *p0, uint8_t *p1, v128 a, v128 b)
{
    v128 a0, b0, a1, b1;
    UL_FN(unpack2)(a, &a0, &a1);
    UL_FN(unpack2)(b, &b0, &b1);
    v128_storeu(p0, UL_FN(merge128)(a0, b0));
    v128_storeu(p1, UL_FN(merge128)(a1, b1));
}

/* Decryption, keys set up or made on the fly (the one-shot calls): one
 * vector alone, under one key or one key per lane (2 streams on ymm, 1 on
 * xmm), waits on the round's depth on every core and takes lin128_inv's
 * shallow form (2 keys x 1 block set up on a Xeon, Emerald Rapids: 0.90x
 * the cycles for uBlock-128/128, 0.94x for 128/256). Two vectors (a ymm
 * pair, two xmm blocks) wait on it on an AMD core (kuai_cpu_zen) but not
 * on one with three vector ports (the same Xeon: 4-5% slower). Zen 3,
 * llvm-mca's model: 13.1 -> 12.1 cycles a round; Zen 5 (EPYC family 26
 * model 2), avx2, scripts/bench-ab, TSC cycles: 4 blocks under a stored
 * key 234 -> 211 (128/128), 348 -> 311 (128/256), kuai_key_init + 4
 * blocks 314 -> 292, 448 -> 409, one-shot 332 -> 317, 465 -> 443, 4 keys'
 * blocks 245 -> 227, 358 -> 327; avx512 (its ymm pairs) 0.97-1.02x
 * (docs/performance.md, "Zen 5"). avx2's ymm pair takes it on Zen 5 only
 * (kuai_cpu_zen5): Zen 3 (EPYC family 25 model 1), scripts/bench-ab in both
 * orders, TSC cycles, measured the pair's decryption level to 2% faster
 * without it (4 blocks under a stored key 224 -> 219, 322 -> 313). */
#if defined(UL_Y) && !defined(UL_Z)
#define UL_SHALLOW(nv) ((nv) == 1 || ((nv) == 2 && kuai_cpu_zen5()))
#else
#define UL_SHALLOW(nv) ((nv) == 1 || ((nv) == 2 && kuai_cpu_zen()))
#endif

#ifdef UL_Y
/* Paths that run on ymm only where the core does 256 bits at once (not
 * kuai_cpu_ymm_split()): on Zen 1 their xmm forms cost the same or less,
 * elsewhere ymm halves the vector operations (docs/performance.md). */
#ifdef UL_Z
#define UL_YFULL 1 /* every core with AVX-512 does 256 bits at once: no call */
/* zmm forms that lose to their ymm ones where zmm is split (Zen 4): 4
 * uBlock-128 CBC chains' (zmk_cbc4) and 3-4 uBlock-128 blocks' under
 * several stored keys (zgroup128 with mk; docs/performance.md) */
#define UL_ZFULL (!kuai_cpu_zmm_split())
/* Forms Zen 4 takes for its split and Zen 5 (which runs zmm whole) takes
 * too, where an Intel core runs the zmm ones faster: the one-shot
 * encryption of 4 uBlock-128 blocks on ymm (ks_fused_y, not zks_fused and
 * zks_fused_mk) and the lone chain's 7-deep round (UL_CHAIN7). Zen 5 (EPYC
 * family 26 model 2), scripts/bench-ab, TSC cycles: one-shot of one key's
 * 4 blocks 184 -> 184 (128/128), 293 -> 265 (128/256), of 4 keys' 234 ->
 * 202, 330 -> 284; a CBC chain of 1 KiB 10,956 -> 10,075, 16,118 ->
 * 14,930; no other row of the harness moved by more than 3%
 * (docs/performance.md, "Zen 5"). */
#define UL_ZAMD (!UL_ZFULL || kuai_cpu_zen())
/* A one-shot decryption's round keys (a stack copy) zeroed on zmm by the
 * rounds that read them (zdec128's and zgroup256's wipe) rather than by
 * kuai_wipe after them: where zmm is split (Zen 4: EPYC family 25 model
 * 17, scripts/bench-ab, TSC cycles, both link orders, one key's 4 blocks
 * 332 -> 314 (128/128), 448 -> 424 and 451 -> 421 (128/256), 2 blocks of
 * 256/256 609 -> 566 and 609 -> 552). On a Xeon, where a zmm round waits
 * on port 5, the zeroing among the rounds measured slower, 183 -> 190 for
 * 128/128's 4 blocks (Sapphire Rapids); Zen 5 keeps that choice,
 * unmeasured. */
#define UL_ZWIPE (!UL_ZFULL)
#else
#define UL_YFULL (!kuai_cpu_ymm_split())
#endif
/* groupp's xmm decryption: 2 blocks reach it only where ymm is split, and
 * take the shallow inverse round there as the ymm pair's one vector did */
#define UL_SHALLOW_G(nb) (UL_SHALLOW(nb) || (nb) == 2)
#else
#define UL_SHALLOW_G(nb) UL_SHALLOW(nb)
#endif
/* One ymm pair of two vectors (4 uBlock-128 blocks under keys already
 * made, or 4 CBC chains) on Zen 3 and Zen 4 in avx2: lin128x3's sums of
 * two-input XORs, 8 operations deep and 38 a round, the two vectors in step
 * (round128_sums2's asm statement), where the full form's 34 are 10 deep.
 * Zen 3 (EPYC family 25 model 1), avx2, scripts/bench-ab, TSC cycles: 4
 * blocks under a stored key 210 -> 180 (128/128), 304 -> 256 (128/256),
 * kuai_key_init + 4 blocks 261 -> 229, 346 -> 328, 4 CBC chains of 1 KiB
 * under 4 keys 11,849 -> 10,935, 17,403 -> 15,940 (docs/performance.md,
 * "What a round loses to the order its operations arrive in"). Zen 4
 * (EPYC family 25 model 17), avx2, scripts/paper-table, TSC cycles, these
 * forms against Zen 5's (KUAI_ZEN5=1) and Intel's (KUAI_ZEN=0): 4 blocks
 * under a stored key 183 against 213 and 205 (128/128), 270 against 309
 * and 304 (128/256), 4 CBC chains 2.89 against 3.17 and 3.22 cycles a
 * byte. Zen 5 keeps the deep form it was measured with. The same cores
 * take the sums for a lone chain (UL_CHAIN7). In avx512 (three-input
 * XORs: 30 operations a round) Zen 4 takes the pair in step as well:
 * scripts/bench-ab, TSC cycles, both link orders, 4 CBC chains of 1 KiB
 * under 4 keys 12,409 -> 12,080 and 12,509 -> 12,066 (128/128), 18,466
 * -> 17,709 and 18,434 -> 17,717 (128/256), kuai_ecb_encrypt_multi of 4
 * keys' blocks 211 -> 202 and 210 -> 208; one key's 4 blocks run on zmm
 * there (zgroup128), and as this ymm pair measured level (172 and 172). */
#if defined(UL_Y)
#define UL_SUMS2 (kuai_cpu_zen() && !kuai_cpu_zen5())
#endif
/* The asm statements with EVEX instructions (vpternlogd: the three-input
 * XOR's forms of round128_sums2 and round128_chain_asm) where the
 * vocabulary has a three-input XOR, but not in make test-shim's build:
 * its stand-ins give it one on any AVX2 machine, where those instructions
 * would fault (and valgrind, which make test-ct runs that build under,
 * decodes no EVEX). There the forms without them run. */
#ifdef KUAI_ISA_SHIM_H
#define UL_ASM_EVEX 0
#else
#define UL_ASM_EVEX 1
#endif
/* round128_chain_asm built (the xmm chain's loop for it in enc128_chain):
 * avx512's build, not the shim's */
#if defined(UL_Z) && UL_ASM_EVEX
#define UL_CHAIN_ASM 1
#else
#define UL_CHAIN_ASM 0
#endif
/* A lone uBlock-128 chain's round 7 operations deep rather than 8 of
 * fewer operations (round128_chain's d7, lin128x3's sums): with a
 * three-input XOR on Zen 4 and Zen 5 (UL_ZAMD); without one everywhere but
 * on Zen 3 and Zen 4 (avx2), whose vector pipes run the 8-deep sums
 * faster. A Zen 3 (EPYC family 25 model 1) ran the 7-deep trees' loop
 * at 11.4 core cycles a round, the sums' at 10.4 (docs/performance.md,
 * "What a round loses to the order its operations arrive in"). 2: Zen 4
 * in avx512, the trees in round128_chain_asm's order: scripts/bench-ab,
 * TSC cycles, both link orders, CBC encryption of one chain of 1 KiB
 * 9,037 -> 8,863 and 9,037 -> 8,841 (128/128), 13,476 -> 13,147 and
 * 13,470 -> 13,147 (128/256), 64 KiB 8.77 -> 8.62 cycles a byte. */
#ifdef UL_Z
#define UL_CHAIN7 (UL_ZAMD ? 1 + (UL_CHAIN_ASM && UL_SUMS2) : 0)
#elif defined(UL_SUMS2)
#define UL_CHAIN7 (!UL_SUMS2)
#else
#define UL_CHAIN7 1
#endif

/* uBlock-256's linear layer, both ways, as round256_chain's sums of
 * two-input XORs where there is no three-input one (ublock_ll_r256.h):
 * 7 operations deep instead of 10 for a rotation and two XORs more, which
 * an AMD core's four vector pipes afford (kuai_cpu_zen) in the builds with
 * ymm groups and no three-input XOR (avx2). Zen 5 (EPYC family 26 model
 * 2), avx2, scripts/bench-ab, TSC cycles: 2 blocks under a stored key 431
 * -> 385 (decryption 436 -> 392), kuai_key_init + 2 blocks 534 -> 483,
 * one-shot 439 -> 401 (584 -> 547), one CBC block 448 -> 393. Zen 3 (EPYC
 * family 25 model 1), the same, two runs: 2 blocks under a stored key
 * 379-387 -> 340-354 (decryption 374-377 -> 345-368), one block 362-366
 * -> 313-325, 2 keys' blocks 390 -> 367-371, one CBC block 369-373 ->
 * 320-346, one-shot decryption 520 -> 488-499, though llvm-mca's Zen 3
 * model had put a ymm pair's round at 15.1 cycles in the ladder and 19.3
 * as sums. The one-shot encryption (UL_DEEP256_KS: its rounds beside the
 * schedules) takes them on Zen 5 only: on Zen 3 one key's 2 blocks 358 ->
 * 372 and 2 keys' 369 -> 384 with them (docs/performance.md, "Zen 5" and
 * "Zen 3"). ssse3 (xmm only) gained on those rows too on Zen 5 but lost
 * on the one-shot of 2 keys (661 -> 703), so it keeps the ladder. */
#if defined(UL_Y) && !defined(UL_Z)
#define UL_DEEP256 kuai_cpu_zen()
#define UL_DEEP256_KS kuai_cpu_zen5()
#else
#define UL_DEEP256 0
#define UL_DEEP256_KS 0
#endif

/* round128's forms (ublock_ll_r128.h): lin128, 10 operations deep; its
 * lean form, a shuffle fewer and two operations deeper; each vector's round
 * as a lone chain's, 7 deep for three shuffles and three XORs more;
 * lin128x3's sums, 8 deep for a shuffle and two XORs more (UL_SUMS2). */
enum { UL_FORM_FULL, UL_FORM_LEAN, UL_FORM_DEEP, UL_FORM_SUMS };
/* Two or more vectors under keys already made (a ymm pair: 4 uBlock-128
 * blocks, a key set up before the call) wait on the round's depth on Zen 5
 * (kuai_cpu_zen5) and on its shuffles on an Intel core and on Zen 3,
 * where the deep form's three shuffles and XORs more a vector cost more
 * than its depth saves.
 * Zen 5 (EPYC family 26 model 2), avx2, scripts/bench-ab, TSC cycles: 4
 * blocks under a stored key 218 -> 201 (128/128), 323 -> 293 (128/256),
 * kuai_key_init + 4 blocks 275 -> 258, 408 -> 376, 4 keys' blocks 355 ->
 * 340, 509 -> 471 (with kuai_key_init_multi); the lean form instead
 * 1.05-1.08x the cycles. Zen 3 (EPYC family 25 model 1), scripts/bench-ab,
 * TSC cycles in the full form against the deep one: 4 blocks under a
 * stored key 212 against 221, 303 against 313, kuai_ecb_encrypt_multi of
 * 4 keys 228 against 256, 309 against 352
 * (docs/performance.md, "Zen 5" and "Zen 3"). With a
 * three-input XOR (avx512) every form is lin128x3: no choice made at run
 * time there (a test of the CPU in the rounds cost that build up to 11% of
 * a short call's cycles). */
#ifdef UL_Z
#define UL_FORM_PAIR UL_FORM_FULL
#else
#define UL_FORM_PAIR (kuai_cpu_zen5() ? UL_FORM_DEEP : UL_FORM_FULL)
#endif

/* The rounds on xmm (one block per vector). */
#define UL_T v128
#define UL_OP(op) KUAI_V(v128, op)
#define UL_RN(name) UL_FN(name)
#include "ublock_ll_r128.h"

/* Round key i of block j: from the nibble forms kc[j] when the caller made
 * them, else loaded ready from rk[j], the rows of a key's stored forms
 * (ublock.h, UBLOCK_LLK_*: 8-byte aligned only). */
UB_KERNEL void UL_FN(kget128)(const uint8_t (*const *rk)[32], const v128 *const *kc, int j,
                              unsigned i, v128 *k0, v128 *k1)
{
    if (kc) {
        *k0 = kc[j][2 * i];
        *k1 = kc[j][2 * i + 1];
    } else {
        *k0 = v128_loadu(rk[j][i]);
        *k1 = v128_loadu(rk[j][i] + 16);
    }
}

/* One block through all rounds with round128_chain (a CBC chain: nothing
 * else to run beside it), keys as enc128's for j = 0. */
UB_KERNEL void UL_FN(enc128_chain)(v128 *a, v128 *b, const uint8_t (*const *rk)[32],
                                   const v128 *const *kc, unsigned rounds)
{
    v128 k0, k1;
    UL_FN(kget128)(rk, kc, 0, 0, &k0, &k1);
    *a = v128_xor(*a, k0);
    *b = v128_xor(*b, k1);
#if UL_CHAIN_ASM
    if (UL_CHAIN7 == 2) { /* each loop with its own round: no test in the rounds */
        for (unsigned i = 0; i < rounds; i++) {
            UL_FN(kget128)(rk, kc, 0, i + 1, &k0, &k1);
            UL_FN(round128_chain)(a, b, k0, k1, i & 7, 2);
        }
        return;
    }
#endif
    if (UL_CHAIN7) {
        for (unsigned i = 0; i < rounds; i++) {
            UL_FN(kget128)(rk, kc, 0, i + 1, &k0, &k1);
            UL_FN(round128_chain)(a, b, k0, k1, i & 7, 1);
        }
        return;
    }
    for (unsigned i = 0; i < rounds; i++) {
        UL_FN(kget128)(rk, kc, 0, i + 1, &k0, &k1);
        UL_FN(round128_chain)(a, b, k0, k1, i & 7, 0);
    }
}

/*
 * nb blocks (1..UL_G128) in registers through all rounds. Block j's keys
 * are rk[j] / kc[j] (mk) or rk[0] / kc[0] everyone's (see kget128). One
 * block alone waits on the round's depth, as a CBC chain does: it runs
 * the chain round.
 */
UB_KERNEL void UL_FN(enc128)(v128 *a, v128 *b, const uint8_t (*const *rk)[32],
                             const v128 *const *kc, unsigned rounds, int nb, int mk)
{
    if (nb == 1) {
        UL_FN(enc128_chain)(a, b, rk, kc, rounds);
        return;
    }
    v128 k0[UL_G128], k1[UL_G128];
    for (int j = 0; j < (mk ? nb : 1); j++)
        UL_FN(kget128)(rk, kc, j, 0, &k0[j], &k1[j]);
    for (int j = 0; j < nb; j++) {
        a[j] = v128_xor(a[j], k0[mk ? j : 0]);
        b[j] = v128_xor(b[j], k1[mk ? j : 0]);
    }
    for (unsigned i = 0; i < rounds; i++) {
        for (int j = 0; j < (mk ? nb : 1); j++)
            UL_FN(kget128)(rk, kc, j, i + 1, &k0[j], &k1[j]);
        UL_FN(round128)(a, b, k0, k1, i & 7, nb, mk, UL_FORM_FULL);
    }
}

/* Round key i of the nibble forms kc (two 16-byte rows) zeroed through a
 * volatile pointer, so the stores stay: a stack copy's wipe done by the
 * rounds that read it (the one-shot decryption, ublock_ll_oneshot.h) */
UB_KERNEL void UL_FN(kc_zero)(const void *p, unsigned i)
{
    volatile v128 *w = (volatile v128 *)(uintptr_t)p + 2 * i;
    w[0] = v128_zero();
    w[1] = v128_zero();
}

/* kc_zero for uBlock-256's round key i (two halves, 64 bytes) */
UB_KERNEL void UL_FN(kc_zero256)(const void *p, unsigned i)
{
#ifdef UL_Z
    *(volatile __m512i_u *)((uintptr_t)p + 64 * (uintptr_t)i) = v512_zero();
#else
    volatile v128 *w = (volatile v128 *)(uintptr_t)p + 4 * i;
    for (int q = 0; q < 4; q++)
        w[q] = v128_zero();
#endif
}

/* shallow (a constant at each call): the inverse round's shallow form,
 * UL_SHALLOW(nb) or groupp's choice; wipe (kc only): each of kc's round
 * keys zeroed once read (kc_zero) */
UB_KERNEL void UL_FN(dec128)(v128 *a, v128 *b, const uint8_t (*const *rk)[32],
                             const v128 *const *kc, unsigned rounds, int nb, int mk, int shallow,
                             int wipe)
{
    v128 k0[UL_G128], k1[UL_G128];
    for (int j = 0; j < (mk ? nb : 1); j++) {
        UL_FN(kget128)(rk, kc, j, rounds, &k0[j], &k1[j]);
        if (wipe)
            UL_FN(kc_zero)(kc[j], rounds);
    }
    for (int j = 0; j < nb; j++) {
        a[j] = v128_xor(a[j], k0[mk ? j : 0]);
        b[j] = v128_xor(b[j], k1[mk ? j : 0]);
    }
    for (unsigned i = rounds; i-- > 0;) {
        for (int j = 0; j < (mk ? nb : 1); j++) {
            UL_FN(kget128)(rk, kc, j, i, &k0[j], &k1[j]);
            if (wipe)
                UL_FN(kc_zero)(kc[j], i);
        }
        UL_FN(round128_inv)(a, b, k0, k1, i & 7, nb, mk, shallow);
    }
}

#ifndef UL_Y
/* xmm only: 4-block uBlock-128 groups always packed (group128p), and so
 * are 2-block uBlock-256 groups (group256p; on ssse3 on Zen 1 ECB of 2
 * blocks under one key +17%, one block under each of 2 keys +12%). */
#define UL_PACK4(enc, mk) 1
#define UL_PACK256(mk, yk) 1
#endif

#ifdef UL_Y
/*
 * uBlock-128 on ymm (UL_Y: the including file has avx2.h's vocabulary):
 * two blocks per vector, one per 128-bit lane, so a group of 4 blocks is
 * 4 ymm instead of 8 xmm and a round half the instructions. Every row is
 * the same in both lanes (vpshufb works per lane), and so are the single
 * key's round keys (broadcast at load); multi-key vectors hold the two
 * blocks' keys. Data and keys move between lanes only as they are loaded
 * and stored (vinserti128 / vextracti128 from and to memory). Groups of
 * 2 and 4 run here (UL_YNB); the kernels take any count, an odd one with
 * its last block in both lanes of the last vector. Where UL_Z (avx512),
 * groups of 3 and 4 under stored keys run on zmm instead (zgroup128).
 */
#define UL_T v256
#define UL_OP(op) KUAI_V(v256, op)
#define UL_RN(name) UL_FN(y##name)
#include "ublock_ll_r128.h"

#define UL_YV(n) (((n) + 1) / 2) /* vectors of n blocks */
/* Group sizes that run on ymm: 3 blocks stay on xmm (3 vectors there, 2
 * on ymm with one half empty: on Zen 1, which splits ymm operations, that
 * measured 31% slower), except a group of the keys' stored forms where the
 * core does 256 bits at once (UL_YNB3). */
#define UL_YNB(n) ((n) == 2 || (n) == 4)
/* Paths that run on ymm only where the core does 256 bits at once
 * (UL_YFULL, defined above dec128). */
/* groupp's 3 blocks on ymm where UL_YFULL: on a 2-core Xeon (Emerald
 * Rapids) ECB of 3 blocks took 285 -> 221 cycles (uBlock-128/128), 420 ->
 * 325 (128/256), the same as 4 (docs/performance.md). */
#define UL_YNB3(n) (UL_YNB(n) || ((n) == 3 && UL_YFULL))
/* 4-block uBlock-128 groups packed on xmm (group128p) where ymm is split
 * (the ymm group's 2 x 17 operations a round are 68 there), for
 * encryption: measured on Zen 1, one key's 6-8% faster than the ymm group,
 * 4 keys' (their round keys into the S-box, round128pk) 12-13% faster;
 * decryption 4% slower one key's, level or slower 4 keys' (whose round
 * keys are packed every round), so it stays on ymm (docs/performance.md). */
#define UL_PACK4(enc, mk) (!UL_YFULL && (enc))
/* 2-block uBlock-256 groups packed on xmm (group256p) unless they run on
 * ymm, a block per lane: one key's where the caller chose ymm (yk, cores
 * that do 256 bits at once), two keys' always. On Zen 1 one key's ECB of 2
 * blocks ran 23-25% faster packed than unpacked on xmm; two keys' packed
 * measured level with ymm there (-1 to -2%), whose pair halves the
 * operations on other cores. */
#define UL_PACK256(mk, yk) (!(yk) && !(mk))

/* Lane 0 from p0, lane 1 from p1 (16 bytes each); one load where p0 == p1. */
UB_KERNEL v256 UL_FN(yload2)(const void *p0, const void *p1, int same)
{
    return same ? v256_row16(p0) : _mm256_loadu2_m128i((const __m128i *)p1, (const __m128i *)p0);
}

/* Blocks p0 (lane 0) and p1 (lane 1) -> X0, X1 in layout pos_0 per lane
 * (load128 per lane). */
UB_KERNEL void UL_FN(yload128)(const uint8_t *p0, const uint8_t *p1, int same, v256 *a, v256 *b)
{
    v256 v = UL_FN(yload2)(p0, p1, same), m = v256_set1_8(0x0f);
    v256 hi = v256_and(v256_srl64(v, 4), m), lo = v256_and(v, m);
    *a = v256_unpacklo64(hi, lo);
    *b = v256_unpackhi64(hi, lo);
}

/* Lane 0 to p0; lane 1 to p1 unless p1 is NULL. */
UB_KERNEL void UL_FN(ystore128)(uint8_t *p0, uint8_t *p1, v256 a, v256 b)
{
    v256 x = v256_or(v256_sll64(v256_unpacklo64(a, b), 4), v256_unpackhi64(a, b));
    v128_storeu(p0, _mm256_castsi256_si128(x));
    if (p1)
        v128_storeu(p1, _mm256_extracti128_si256(x, 1));
}

/* pack2 and unpack2 on ymm, lane by lane. */
UB_KERNEL v256 UL_FN(ypack2)(v256 x, v256 y)
{
    return v256_or(x, v256_sll64(y, 4));
}

UB_KERNEL void UL_FN(yunpack2)(v256 v, v256 *x, v256 *y)
{
    const v256 m = v256_set1_8(0x0f);
    *x = v256_and(v, m);
    *y = v256_and(v256_srl64(v, 4), m);
}

/* mk of a ymm group whose block j's round keys are one key's xmm form at
 * kc[j] (as kget128's; the forms stored in the keys), loaded into the
 * lanes as they are used. */
#define UL_MK_XMM 2
/* mk of a ymm group whose vector j's round keys (both lanes) are ready at
 * kc[j] (the multi-key CBC chains: made once, used every block). */
#define UL_MK_YMM 3

/* Round key i of vector j: the xmm forms of blocks 2j and 2j + 1 at kc
 * (mk UL_MK_XMM; the last lane of an odd group repeats its block's key),
 * ready in ymm at kc[j] (mk UL_MK_YMM), or one key's xmm form at kc[0] in
 * both lanes (mk 0). */
UB_KERNEL void UL_FN(ykget128)(const v256 *const *kc, int j, unsigned i, int nb, int mk, v256 *k0,
                               v256 *k1)
{
    const int j0 = mk ? 2 * j : 0, j1 = mk ? (2 * j + 1 < nb ? 2 * j + 1 : 2 * j) : 0;
    if (mk == UL_MK_YMM) {
        *k0 = v256_load(&kc[j][2 * i]);
        *k1 = v256_load(&kc[j][2 * i + 1]);
        return;
    }
    if (mk == UL_MK_XMM) {
        const UL_FN(kv) *x0 = (const UL_FN(kv) *)(const void *)kc[j0];
        const UL_FN(kv) *x1 = (const UL_FN(kv) *)(const void *)kc[j1];
        *k0 = UL_FN(yload2)(&x0[2 * i], &x1[2 * i], j0 == j1);
        *k1 = UL_FN(yload2)(&x0[2 * i + 1], &x1[2 * i + 1], j0 == j1);
        return;
    }
    /* one key: an xmm form (ks_ll's, stored), into both lanes as it loads */
    const UL_FN(kv) *x = (const UL_FN(kv) *)(const void *)kc[0];
    *k0 = v256_row16(&x[2 * i]);
    *k1 = v256_row16(&x[2 * i + 1]);
}

/* nb blocks (2..2 UL_G128) in UL_YV(nb) vectors through all rounds, keys
 * as enc128's. */
UB_KERNEL void UL_FN(yenc128)(v256 *a, v256 *b, const v256 *const *kc, unsigned rounds, int nb,
                              int mk)
{
    const int nv = UL_YV(nb), nk = mk ? nv : 1, d7 = nv == 1 ? UL_CHAIN7 : 0;
    v256 k0[UL_YV(2 * UL_G128)], k1[UL_YV(2 * UL_G128)];
    for (int j = 0; j < nk; j++)
        UL_FN(ykget128)(kc, j, 0, nb, mk, &k0[j], &k1[j]);
    for (int j = 0; j < nv; j++) {
        a[j] = v256_xor(a[j], k0[mk ? j : 0]);
        b[j] = v256_xor(b[j], k1[mk ? j : 0]);
    }
#ifdef UL_SUMS2
    if (nv == 2 && UL_SUMS2) { /* its own loop: no test of the CPU in the rounds */
        for (unsigned i = 0; i < rounds; i++) {
            for (int j = 0; j < nk; j++)
                UL_FN(ykget128)(kc, j, i + 1, nb, mk, &k0[j], &k1[j]);
            UL_FN(yround128)(a, b, k0, k1, i & 7, 2, mk, UL_FORM_SUMS);
        }
        return;
    }
#endif
    for (unsigned i = 0; i < rounds; i++) {
        for (int j = 0; j < nk; j++)
            UL_FN(ykget128)(kc, j, i + 1, nb, mk, &k0[j], &k1[j]);
        if (nv == 1)
            UL_FN(yround128_chain)(a, b, k0[0], k1[0], i & 7, d7);
        else
            UL_FN(yround128)(a, b, k0, k1, i & 7, nv, mk, UL_FORM_PAIR);
    }
}

/* wipe (one key, mk 0): its round keys are a stack copy that each round
 * overwrites with zeros once it has read them (kc_zero) */
UB_KERNEL void UL_FN(ydec128)(v256 *a, v256 *b, const v256 *const *kc, unsigned rounds, int nb,
                              int mk, int wipe)
{
    const int nv = UL_YV(nb), nk = mk ? nv : 1;
    v256 k0[UL_YV(2 * UL_G128)], k1[UL_YV(2 * UL_G128)];
    for (int j = 0; j < nk; j++)
        UL_FN(ykget128)(kc, j, rounds, nb, mk, &k0[j], &k1[j]);
    if (wipe)
        UL_FN(kc_zero)(kc[0], rounds);
    for (int j = 0; j < nv; j++) {
        a[j] = v256_xor(a[j], k0[mk ? j : 0]);
        b[j] = v256_xor(b[j], k1[mk ? j : 0]);
    }
    for (unsigned i = rounds; i-- > 0;) {
        for (int j = 0; j < nk; j++)
            UL_FN(ykget128)(kc, j, i, nb, mk, &k0[j], &k1[j]);
        if (wipe)
            UL_FN(kc_zero)(kc[0], i);
        UL_FN(yround128_inv)(a, b, k0, k1, i & 7, nv, mk, UL_SHALLOW(nv));
    }
}

#ifdef UL_Z
/*
 * uBlock-128 on zmm (UL_Z: the including file has avx512.h's vocabulary as
 * well as avx2.h's): a group of 4 blocks, one per 128-bit lane, in one
 * vector pair. A round is then 9 shuffles and 6 three-input logic
 * operations (lin128x3) where the ymm group has twice both. On Intel cores
 * a 512-bit shuffle issues on one port and the logic on another, so the
 * round waits on its 9 shuffles instead of on 30 operations over the two
 * ports ymm uses (Xeon, Emerald Rapids, a throwaway loop of 16 rounds: 126
 * TSC cycles against 166; docs/performance.md). Rows and the S-box table
 * are the 64-byte rows (UB_ROW16), the same in every lane.
 */
#define UL_T v512
#define UL_OP(op) KUAI_V(v512, op)
#define UL_RN(name) UL_FN(z##name)
#include "ublock_ll_r128.h"

/* mk of a zmm group whose round keys (each lane its block's) are ready at
 * kc[0] (the multi-key CBC chains: made once, used every block). */
#define UL_MK_ZMM 4

/* p[j]'s 16 bytes into lane j (one load where contig: p[j] = p[0] + 16j). */
UB_KERNEL v512 UL_FN(zload4)(const uint8_t *const *p, int contig)
{
    if (contig)
        return v512_loadu(p[0]);
    return _mm512_inserti64x4(
        _mm512_castsi256_si512(_mm256_loadu2_m128i((const __m128i *)(const void *)p[1],
                                                   (const __m128i *)(const void *)p[0])),
        _mm256_loadu2_m128i((const __m128i *)(const void *)p[3],
                            (const __m128i *)(const void *)p[2]),
        1);
}

/* Lane j of x to p[j] (one store where contig; lane 3 nowhere where p[3]
 * is NULL). */
UB_KERNEL void UL_FN(zstore4)(uint8_t *const *p, v512 x, int contig)
{
    if (contig) {
        v512_storeu(p[0], x);
        return;
    }
    const v256 lo = _mm512_castsi512_si256(x), hi = _mm512_extracti64x4_epi64(x, 1);
    v128_storeu(p[0], _mm256_castsi256_si128(lo));
    v128_storeu(p[1], _mm256_extracti128_si256(lo, 1));
    v128_storeu(p[2], _mm256_castsi256_si128(hi));
    if (p[3])
        v128_storeu(p[3], _mm256_extracti128_si256(hi, 1));
}

/* Whether p[0..3] are 16 bytes apart, in order (addresses: public). */
UB_KERNEL int UL_FN(zcontig)(const uint8_t *const *p)
{
    const uintptr_t a = (uintptr_t)p[0];
    return (uintptr_t)p[1] == a + 16 && (uintptr_t)p[2] == a + 32 && (uintptr_t)p[3] == a + 48;
}

/* Four blocks (one per lane) -> X0, X1 in layout pos_0 (load128 per lane),
 * and back (merge128). */
UB_KERNEL void UL_FN(zsplit128)(v512 v, v512 *a, v512 *b)
{
    const v512 m = v512_set1_8(0x0f);
    const v512 hi = v512_and(v512_srl64(v, 4), m), lo = v512_and(v, m);
    *a = v512_unpacklo64(hi, lo);
    *b = v512_unpackhi64(hi, lo);
}

UB_KERNEL v512 UL_FN(zmerge128)(v512 a, v512 b)
{
    return v512_or(v512_sll64(v512_unpacklo64(a, b), 4), v512_unpackhi64(a, b));
}

/*
 * uBlock-128's round in the spec's nibble order (zround128n): nibble n of a
 * half in byte n of its lane, so a 32-bit word is a qword and <<<32 4k is
 * one vprorq by 8k, a port-0 operation, where every layout row of
 * zround128 is a shuffle on port 5. PL and PR are then one shuffle each,
 * after the round; each round key comes through PL^-1 / PR^-1 (one row
 * from key setup's frame, the same every round: the order does not drift)
 * so that it joins the sums before them. A round is 4 shuffles, 5
 * rotations and 6 logic operations (15 in all, as zround128's) over both
 * ports instead of 9 shuffles on one and 6 on the other; 9 deep instead
 * of 8. It serves where a schedule's own shuffles share port 5 with the
 * rounds (the one-shot calls; docs/performance.md).
 */
enum {
    UB_ZN_IN,
    UB_ZN_OUT,
    UB_ZN_PL,
    UB_ZN_PR,
    UB_ZN_KEY,
    UB_ZN_KPL = UB_ZN_KEY + 2,
    UB_ZN_KPR = UB_ZN_KPL + 2
};
/* pos_0 -> nibble order and back; PL, PR on nibbles (PLn[2q + e] = 2
 * PL128[q] + e); from key setup's frame sw (halves exchanged where sw) to
 * the nibble order, and through PL^-1, PR^-1 (kpl[sw][m] = PLn^-1[m] ^ 8sw) */
static const _Alignas(16) uint8_t
    UL_FN(zn_rows)[UB_ZN_KPR + 2][16] = {{0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15},
                                         {0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15},
                                         {2, 3, 6, 7, 8, 9, 12, 13, 0, 1, 4, 5, 14, 15, 10, 11},
                                         {4, 5, 14, 15, 10, 11, 0, 1, 2, 3, 12, 13, 8, 9, 6, 7},
                                         {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15},
                                         {8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7},
                                         {8, 9, 0, 1, 10, 11, 2, 3, 4, 5, 14, 15, 6, 7, 12, 13},
                                         {0, 1, 8, 9, 2, 3, 10, 11, 12, 13, 6, 7, 14, 15, 4, 5},
                                         {6, 7, 8, 9, 0, 1, 14, 15, 12, 13, 4, 5, 10, 11, 2, 3},
                                         {14, 15, 0, 1, 8, 9, 6, 7, 4, 5, 12, 13, 2, 3, 10, 11}};

/* x, y: the S-box's outputs; with w = x ^ y the spec's steps are b2 = w ^
 * R2 x ^ R3 w, a2 = x ^ R1 w ^ R2 b2, then X1 = b2 ^ R5 a2 and X0 = a2 ^
 * X1 (R_k: <<<32 4k), each with its key folded in before PL / PR. */
UB_KERNEL void UL_FN(zround128n)(v512 *a, v512 *b, v512 k0, v512 k1)
{
    const v512 sbox = v512_load(UL_FN(sbox_tab)[0]), pl = v512_row16(UL_FN(zn_rows)[UB_ZN_PL]),
               pr = v512_row16(UL_FN(zn_rows)[UB_ZN_PR]);
    const v512 x = v512_shuf8(sbox, *a), y = v512_shuf8(sbox, *b);
    const v512 w = v512_xor(x, y);
    const v512 b2 = v512_xor3(w, v512_ror64(x, 16), v512_ror64(w, 24));
    const v512 a2 = v512_xor3(x, v512_ror64(w, 8), v512_ror64(b2, 16));
    const v512 r5 = v512_ror64(a2, 40);
    *a = v512_shuf8(v512_xor3(v512_xor(b2, k0), a2, r5), pl);
    *b = v512_shuf8(v512_xor3(b2, k1, r5), pr);
}

/* 4 blocks (p[j] to lane j) into zround128n's order, and back. */
UB_KERNEL void UL_FN(zload4n)(const uint8_t *const *p, v512 *a, v512 *b)
{
    const v512 nin = v512_row16(UL_FN(zn_rows)[UB_ZN_IN]);
    UL_FN(zsplit128)(UL_FN(zload4)(p, UL_FN(zcontig)(p)), a, b);
    *a = v512_shuf8(*a, nin);
    *b = v512_shuf8(*b, nin);
}

UB_KERNEL void UL_FN(zstore4n)(uint8_t *const *p, v512 a, v512 b)
{
    const v512 nout = v512_row16(UL_FN(zn_rows)[UB_ZN_OUT]);
    UL_FN(zstore4)
    (p, UL_FN(zmerge128)(v512_shuf8(a, nout), v512_shuf8(b, nout)),
     UL_FN(zcontig)((const uint8_t *const *)p));
}

/* Round key i: one key's xmm form at kc[0] in every lane (mk 0), block j's
 * xmm form at kc[j] in lane j (UL_MK_XMM; the stored forms, 8-byte
 * aligned), or ready at kc[0] (UL_MK_ZMM). */
UB_KERNEL void UL_FN(zkget128)(const void *const *kc, unsigned i, int mk, v512 *k0, v512 *k1)
{
    if (mk == UL_MK_ZMM) {
        const v512 *z = (const v512 *)kc[0];
        *k0 = z[2 * i];
        *k1 = z[2 * i + 1];
        return;
    }
    if (mk == UL_MK_XMM) {
        /* lane j from key j's row by a masked broadcast load: a plain
         * load for lane 0, one port-0/5 operation for each other lane, 6
         * a round and none on port 5, which the round's 9 shuffles fill.
         * Four-lane loads (zload4's) took 6 with 2 on port 5, two keys to
         * a zmm and a vshufi64x2 per half 4 with 2; kuai_ecb_encrypt_multi
         * of 4 keys x 1 block, uBlock-128/128, 202 -> 194 TSC cycles
         * (decryption 209 -> 190) against zload4's, 193 -> 188 against the
         * vshufi64x2 form (Xeon, Sapphire Rapids, scripts/bench-ab) */
        const uint8_t *x[4];
        for (int j = 0; j < 4; j++) {
            x[j] = (const uint8_t *)((const UL_FN(kv) *)kc[j] + 2 * i);
            /* each address in a general register, as groupp's (gcc had
             * loaded zgroup128's k4[], stored a pointer at a time, as one
             * ymm) */
            __asm__("" : "+r"(x[j]));
        }
        *k0 = ub_ksz_lanes(x, 0); /* ublock_ks.h */
        *k1 = ub_ksz_lanes(x, 16);
        return;
    }
    const UL_FN(kv) *x = (const UL_FN(kv) *)kc[0];
    *k0 = v512_row16(&x[2 * i]);
    *k1 = v512_row16(&x[2 * i + 1]);
}

/* 4 blocks (X0, X1 in a, b) through all rounds, keys as zkget128's. The
 * rounds eight to a pass (uBlock-128's 16 and 24), so that each round's
 * layout rows are at constant addresses: their index arithmetic had taken
 * ports 0 and 5, which the round's shuffles and logic fill (Xeon, Sapphire
 * Rapids, scripts/bench-ab, TSC cycles: 4 blocks under a set-up key 136 ->
 * 117 and 185 -> 163, decryption 130 -> 122 and 178 -> 165, 4 keys' blocks
 * 192 -> 180 and 273 -> 258; ymm's rounds so, on avx2, measured 1% slower:
 * three vector ports there) */
UB_KERNEL void UL_FN(zenc128)(v512 *a, v512 *b, const void *const *kc, unsigned rounds, int mk,
                              int nv)
{
    v512 k0, k1;
    UL_FN(zkget128)(kc, 0, mk, &k0, &k1);
    for (int j = 0; j < nv; j++) {
        a[j] = v512_xor(a[j], k0);
        b[j] = v512_xor(b[j], k1);
    }
    for (unsigned i0 = 0; i0 < rounds; i0 += 8)
#pragma GCC unroll 8
        for (unsigned l = 0; l < 8; l++) {
            UL_FN(zkget128)(kc, i0 + l + 1, mk, &k0, &k1);
            UL_FN(zround128)(a, b, &k0, &k1, l, nv, 0, UL_FORM_FULL);
        }
}

/* wipe (one key, mk 0): as ydec128's */
UB_KERNEL void UL_FN(zdec128)(v512 *a, v512 *b, const void *const *kc, unsigned rounds, int mk,
                              int nv, int wipe)
{
    v512 k0, k1;
    UL_FN(zkget128)(kc, rounds, mk, &k0, &k1);
    if (wipe)
        UL_FN(kc_zero)(kc[0], rounds);
    for (int j = 0; j < nv; j++) {
        a[j] = v512_xor(a[j], k0);
        b[j] = v512_xor(b[j], k1);
    }
    for (unsigned i0 = rounds; i0 > 0; i0 -= 8)
#pragma GCC unroll 8
        for (unsigned l = 8; l-- > 0;) {
            UL_FN(zkget128)(kc, i0 - 8 + l, mk, &k0, &k1);
            if (wipe)
                UL_FN(kc_zero)(kc[0], i0 - 8 + l);
            UL_FN(zround128_inv)(a, b, &k0, &k1, l, nv, 0, UL_SHALLOW(nv));
        }
}

/* nb (3..4) blocks, block j from src[j] to dst[j] (all loads before the
 * stores), keys as zkget128's (kc[j] for j < nb where mk is UL_MK_XMM);
 * 3 blocks: the third in lanes 2 and 3, stored once. wipe: zdec128's. */
UB_KERNEL void UL_FN(zgroup128)(const void *const *kc, unsigned rounds, const uint8_t *const *src,
                                uint8_t *const *dst, int nb, int enc, int mk, int wipe)
{
    const int l = nb > 3 ? 3 : 2; /* lane 3's block */
    const uint8_t *s4[4] = {src[0], src[1], src[2], src[l]};
    uint8_t *d4[4] = {dst[0], dst[1], dst[2], nb > 3 ? dst[3] : NULL};
    const void *k4[4] = {kc[0], kc[0], kc[0], kc[0]};
    for (int j = 0; mk == UL_MK_XMM && j < 4; j++)
        k4[j] = kc[j < nb ? j : l];
    v512 a, b;
    UL_FN(zsplit128)(UL_FN(zload4)(s4, UL_FN(zcontig)(s4)), &a, &b);
    if (enc)
        UL_FN(zenc128)(&a, &b, k4, rounds, mk, 1);
    else
        UL_FN(zdec128)(&a, &b, k4, rounds, mk, 1, wipe);
    UL_FN(zstore4)(d4, UL_FN(zmerge128)(a, b), UL_FN(zcontig)((const uint8_t *const *)d4));
}
#endif

/* nb blocks (2..UL_G128, or up to twice that under several keys, mk
 * UL_MK_XMM: two groups side by side), block j from src[j] to dst[j] (all
 * loads before the stores), keys as enc128's; wipe as ydec128's (on zmm
 * only where UL_ZWIPE); returns whether it zeroed them. */
UB_KERNEL int UL_FN(ygroup128)(const v256 *const *kc, unsigned rounds, const uint8_t *const *src,
                               uint8_t *const *dst, int nb, int enc, int mk, int wipe)
{
#ifdef UL_Z
    if (nb >= 3 && nb <= UL_G128 && (UL_ZFULL || !mk)) { /* one vector pair on zmm */
        const int zw = wipe && !enc && !mk && UL_ZWIPE;
        UL_FN(zgroup128)((const void *const *)kc, rounds, src, dst, nb, enc, mk, zw);
        return zw;
    }
#endif
    v256 a[UL_YV(2 * UL_G128)], b[UL_YV(2 * UL_G128)];
    for (int j = 0; j < UL_YV(nb); j++) {
        const int j1 = 2 * j + 1 < nb ? 2 * j + 1 : 2 * j;
        UL_FN(yload128)(src[2 * j], src[j1], j1 == 2 * j, &a[j], &b[j]);
    }
    if (enc)
        UL_FN(yenc128)(a, b, kc, rounds, nb, mk);
    else
        UL_FN(ydec128)(a, b, kc, rounds, nb, mk, wipe && !enc);
    for (int j = 0; j < UL_YV(nb); j++)
        UL_FN(ystore128)(dst[2 * j], 2 * j + 1 < nb ? dst[2 * j + 1] : NULL, a[j], b[j]);
    return wipe && !enc;
}
#endif

/* ---- uBlock-256 ---------------------------------------------------------- */

/* The halves and rounds on xmm (a half in two vectors). */
#define UL_T v128
#define UL_OP(op) KUAI_V(v128, op)
#define UL_RN(name) UL_FN(name)
#define UL_ROW256(row, lane) v128_load(ub256_tab[row] + 16 * (lane))
#include "ublock_ll_r256.h"
#define UL_H UL_FN(h256)

UB_KERNEL UL_H UL_FN(load256)(const uint8_t *p)
{
    return UL_FN(load256v)(v128_loadu(p));
}

UB_KERNEL void UL_FN(store256)(uint8_t *p, UL_H x)
{
    v128_storeu(p, UL_FN(merge256)(x));
}

/* A stored half (ublock.h, UBLOCK_LLK_*): layout L's two vectors in one,
 * l's nibble low, h's high. */
UB_KERNEL UL_H UL_FN(unpack256)(v128 w)
{
    v128 m = v128_set1_8(0x0f);
    return UL_FN(mk256)(v128_and(w, m), v128_and(v128_srl64(w, 4), m));
}

/* All round keys in layout L (kc[2i], kc[2i + 1]) from a key's stored
 * forms. */
UB_KERNEL void UL_FN(keys256s)(UL_H *kc, const ublock_sched *s)
{
    const uint8_t *llk = ublock_llk(s);
    for (unsigned i = 0; i <= s->rounds; i++) {
        kc[2 * i] = UL_FN(unpack256)(v128_loadu(llk + 32 * i));
        kc[2 * i + 1] = UL_FN(unpack256)(v128_loadu(llk + 32 * i + 16));
    }
}

/* Round key i of block j, as kget128's: from kc[j], else unpacked from
 * the rows of a key's stored forms rk[j]. */
UB_KERNEL void UL_FN(kget256)(const uint8_t (*const *rk)[32], const UL_H *const *kc, int j,
                              unsigned i, UL_H *k0, UL_H *k1)
{
    if (kc) {
        *k0 = kc[j][2 * i];
        *k1 = kc[j][2 * i + 1];
    } else {
        *k0 = UL_FN(unpack256)(v128_loadu(rk[j][i]));
        *k1 = UL_FN(unpack256)(v128_loadu(rk[j][i] + 16));
    }
}

UB_KERNEL void UL_FN(enc256)(UL_H *a, UL_H *b, const uint8_t (*const *rk)[32],
                             const UL_H *const *kc, unsigned rounds, int nb, int mk)
{
    UL_H k0[UL_G256], k1[UL_G256];
    for (unsigned i = 0; i < rounds; i++) {
        for (int j = 0; j < (mk ? nb : 1); j++)
            UL_FN(kget256)(rk, kc, j, i, &k0[j], &k1[j]);
        for (int j = 0; j < nb; j++)
            UL_FN(round256)(&a[j], &b[j], k0[mk ? j : 0], k1[mk ? j : 0], 0, UL_DEEP256);
    }
    for (int j = 0; j < (mk ? nb : 1); j++)
        UL_FN(kget256)(rk, kc, j, rounds, &k0[j], &k1[j]);
    for (int j = 0; j < nb; j++) {
        a[j] = UL_FN(xor256)(a[j], k0[mk ? j : 0]);
        b[j] = UL_FN(xor256)(b[j], k1[mk ? j : 0]);
    }
}

/* wipe (kc only): each of kc's round keys zeroed once read (kc_zero256) */
UB_KERNEL void UL_FN(dec256)(UL_H *a, UL_H *b, const uint8_t (*const *rk)[32],
                             const UL_H *const *kc, unsigned rounds, int nb, int mk, int wipe)
{
    UL_H k0[UL_G256], k1[UL_G256];
    for (int j = 0; j < (mk ? nb : 1); j++) {
        UL_FN(kget256)(rk, kc, j, rounds, &k0[j], &k1[j]);
        if (wipe)
            UL_FN(kc_zero256)(kc[j], rounds);
    }
    for (int j = 0; j < nb; j++) {
        a[j] = UL_FN(xor256)(a[j], k0[mk ? j : 0]);
        b[j] = UL_FN(xor256)(b[j], k1[mk ? j : 0]);
    }
    for (unsigned i = rounds; i-- > 0;) {
        for (int j = 0; j < (mk ? nb : 1); j++) {
            UL_FN(kget256)(rk, kc, j, i, &k0[j], &k1[j]);
            if (wipe)
                UL_FN(kc_zero256)(kc[j], i);
        }
        for (int j = 0; j < nb; j++)
            UL_FN(round256_inv)(&a[j], &b[j], k0[mk ? j : 0], k1[mk ? j : 0], 0);
    }
}

/* Two blocks' halves as one packed half (pack2 on each vector: x's
 * nibble low, y's high), and back. */
UB_KERNEL UL_H UL_FN(pack256)(UL_H x, UL_H y)
{
    return UL_FN(mk256)(UL_FN(pack2)(x.l, y.l), UL_FN(pack2)(x.h, y.h));
}

UB_KERNEL void UL_FN(unpack256p)(UL_H v, UL_H *x, UL_H *y)
{
    UL_FN(unpack2)(v.l, &x->l, &y->l);
    UL_FN(unpack2)(v.h, &x->h, &y->h);
}

/* Round key i packed as the blocks: block j's key (mk) or the one key in
 * both nibbles of every byte. */
UB_KERNEL void UL_FN(kget256p)(const uint8_t (*const *rk)[32], unsigned i, int mk, UL_H *k0,
                               UL_H *k1)
{
    UL_H x0, x1, y0, y1;
    UL_FN(kget256)(rk, NULL, 0, i, &x0, &x1);
    if (mk) {
        UL_FN(kget256)(rk, NULL, 1, i, &y0, &y1);
    } else {
        y0 = x0;
        y1 = x1;
    }
    *k0 = UL_FN(pack256)(x0, y0);
    *k1 = UL_FN(pack256)(x1, y1);
}

/*
 * Two uBlock-256 blocks as one packed pair (round256's p: block 0 in the
 * low nibbles, block 1 in the high), under one key or block j's (mk);
 * src[j] == dst[j] allowed. On xmm two blocks' rounds are bound by the
 * shuffle ports, 40 shuffles a round; packed, the S-box costs two shuffles
 * a vector and the rest serves both blocks: 24 a round.
 */
UB_KERNEL void UL_FN(group256p)(const uint8_t (*const *rk)[32], unsigned rounds,
                                const uint8_t *const *src, uint8_t *const *dst, int enc, int mk)
{
    UL_H a = UL_FN(pack256)(UL_FN(load256)(src[0]), UL_FN(load256)(src[1]));
    UL_H b = UL_FN(pack256)(UL_FN(load256)(src[0] + 16), UL_FN(load256)(src[1] + 16));
    UL_H k0, k1, a0, a1, b0, b1;
    if (enc) {
        for (unsigned i = 0; i < rounds; i++) {
            UL_FN(kget256p)(rk, i, mk, &k0, &k1);
            UL_FN(round256)(&a, &b, k0, k1, 1, UL_DEEP256);
        }
        UL_FN(kget256p)(rk, rounds, mk, &k0, &k1);
        a = UL_FN(xor256)(a, k0);
        b = UL_FN(xor256)(b, k1);
    } else {
        UL_FN(kget256p)(rk, rounds, mk, &k0, &k1);
        a = UL_FN(xor256)(a, k0);
        b = UL_FN(xor256)(b, k1);
        for (unsigned i = rounds; i-- > 0;) {
            UL_FN(kget256p)(rk, i, mk, &k0, &k1);
            UL_FN(round256_inv)(&a, &b, k0, k1, 1);
        }
    }
    UL_FN(unpack256p)(a, &a0, &a1);
    UL_FN(unpack256p)(b, &b0, &b1);
    UL_FN(store256)(dst[0], a0);
    UL_FN(store256)(dst[0] + 16, b0);
    UL_FN(store256)(dst[1], a1);
    UL_FN(store256)(dst[1] + 16, b1);
}

/* keys256s's round keys for round256_chain, which adds each key but the
 * first inside the round before it: key i >= 1 through PL^-1, PR^-1. */
UB_KERNEL void UL_FN(keys256chain)(UL_H *kc, const ublock_sched *s)
{
    UL_FN(keys256s)(kc, s);
    for (unsigned i = 1; i <= s->rounds; i++) {
        kc[2 * i] = UL_FN(pl256_inv)(kc[2 * i]);
        kc[2 * i + 1] = UL_FN(pr256_inv)(kc[2 * i + 1]);
    }
}

/* One block with round256_chain (a CBC chain), keys from keys256chain. */
UB_KERNEL void UL_FN(enc256_chain)(UL_H *a, UL_H *b, const UL_H *kc, unsigned rounds)
{
    *a = UL_FN(xor256)(*a, kc[0]);
    *b = UL_FN(xor256)(*b, kc[1]);
    for (unsigned i = 1; i <= rounds; i++)
        UL_FN(round256_chain)(a, b, kc[2 * i], kc[2 * i + 1]);
}

#ifdef UL_Y
/*
 * uBlock-256/256 on ymm: a group of 2 blocks, block j in lane j of every
 * vector, so the group's 8 xmm halves are 4 ymm; rows for lane 0 and lane
 * 1 of a half (ub256_tab) are each broadcast to both 128-bit lanes. Keys
 * as for uBlock-128 (one key in both lanes, or block j's in lane j).
 */
#define UL_T v256
#define UL_OP(op) KUAI_V(v256, op)
#define UL_RN(name) UL_FN(y##name)
#define UL_ROW256(row, lane) v256_row16(ub256_tab[row] + 16 * (lane))
#include "ublock_ll_r256.h"
#define UL_HY UL_FN(yh256)

/* Round key i of a group of nb blocks: the caller's xmm forms kc[0] (and
 * kc[1], mk) loaded into the lanes, else the keys' stored forms (rk's
 * rows, as kget256's). */
UB_KERNEL void UL_FN(ykget256)(const uint8_t (*const *rk)[32], const UL_H *const *kc, unsigned i,
                               int nb, int mk, UL_HY *k0, UL_HY *k1)
{
    const int j1 = mk && nb > 1 ? 1 : 0, same = j1 == 0;
    if (!kc) {
        const v256 m = v256_set1_8(0x0f);
        v256 w0 = UL_FN(yload2)(rk[0][i], rk[j1][i], same);
        v256 w1 = UL_FN(yload2)(rk[0][i] + 16, rk[j1][i] + 16, same);
        *k0 = UL_FN(ymk256)(v256_and(w0, m), v256_and(v256_srl64(w0, 4), m));
        *k1 = UL_FN(ymk256)(v256_and(w1, m), v256_and(v256_srl64(w1, 4), m));
        return;
    }
    const UL_H *x = &kc[0][2 * i], *y = &kc[j1][2 * i];
    *k0 =
        UL_FN(ymk256)(UL_FN(yload2)(&x[0].l, &y[0].l, same), UL_FN(yload2)(&x[0].h, &y[0].h, same));
    *k1 =
        UL_FN(ymk256)(UL_FN(yload2)(&x[1].l, &y[1].l, same), UL_FN(yload2)(&x[1].h, &y[1].h, same));
}

/* Lane 0 of x to p0, lane 1 to p1 unless p1 is NULL. */
UB_KERNEL void UL_FN(ystore2)(uint8_t *p0, uint8_t *p1, v256 x)
{
    v128_storeu(p0, _mm256_castsi256_si128(x));
    if (p1)
        v128_storeu(p1, _mm256_extracti128_si256(x, 1));
}

/* nb (1..2) blocks, block j from src[j] to dst[j] in lane j (all loads
 * before the stores). Used for two keys, for one key whose round keys are
 * ready (kc: broadcast loads), and for one key's stored round keys (rk)
 * unless the core splits ymm operations (UL_YFULL): a core that runs
 * 256 bits at once does a pair here in half the operations of two blocks
 * on xmm, while on Zen 1 the xmm pair with one split serving both blocks
 * cost 4% less for ECB of 2 blocks and 8% less for the one-shot
 * encryption with its schedule broadcast (docs/performance.md). */
UB_KERNEL void UL_FN(ygroup256)(const uint8_t (*const *rk)[32], const UL_H *const *kc,
                                unsigned rounds, const uint8_t *const *src, uint8_t *const *dst,
                                int nb, int enc, int mk, int wipe)
{
    const int j1 = nb > 1 ? 1 : 0, same = j1 == 0;
    UL_HY a = UL_FN(yload256v)(UL_FN(yload2)(src[0], src[j1], same));
    UL_HY b = UL_FN(yload256v)(UL_FN(yload2)(src[0] + 16, src[j1] + 16, same));
    UL_HY k0, k1;
    if (enc) {
        for (unsigned i = 0; i < rounds; i++) {
            UL_FN(ykget256)(rk, kc, i, nb, mk, &k0, &k1);
            UL_FN(yround256)(&a, &b, k0, k1, 0, UL_DEEP256);
        }
        UL_FN(ykget256)(rk, kc, rounds, nb, mk, &k0, &k1);
        a = UL_FN(yxor256)(a, k0);
        b = UL_FN(yxor256)(b, k1);
    } else {
        UL_FN(ykget256)(rk, kc, rounds, nb, mk, &k0, &k1);
        if (wipe)
            UL_FN(kc_zero256)(kc[0], rounds);
        a = UL_FN(yxor256)(a, k0);
        b = UL_FN(yxor256)(b, k1);
        for (unsigned i = rounds; i-- > 0;) {
            UL_FN(ykget256)(rk, kc, i, nb, mk, &k0, &k1);
            if (wipe)
                UL_FN(kc_zero256)(kc[0], i);
            UL_FN(yround256_inv)(&a, &b, k0, k1, 0);
        }
    }
    UL_FN(ystore2)(dst[0], nb > 1 ? dst[1] : NULL, UL_FN(ymerge256)(a));
    UL_FN(ystore2)(dst[0] + 16, nb > 1 ? dst[1] + 16 : NULL, UL_FN(ymerge256)(b));
}

/* 3..4 uBlock-256 blocks under one key (stored round keys), two pairs
 * side by side, as ygroup8 does for uBlock-128: ECB of 4 blocks 628 ->
 * 497 TSC cycles on avx2 (Xeon, Sapphire Rapids class); on avx512 this
 * took 448 against 389 for zgroup256 twice, and zgroup256x2 takes it */
UB_KERNEL void UL_FN(ygroup256x2)(const uint8_t (*rk)[32], const UL_H *kc1, unsigned rounds,
                                  const uint8_t *in, uint8_t *out, int nb, int enc)
{
    const uint8_t(*const rkp[1])[32] = {rk};
    const UL_H *const kcp[1] = {kc1}, *const *kc = kc1 ? kcp : NULL;
    UL_HY a[2], b[2], k0, k1;
    for (int p = 0; p < 2; p++) {
        const uint8_t *s0 = in + 64 * p, *s1 = 2 * p + 1 < nb ? s0 + 32 : s0;
        a[p] = UL_FN(yload256v)(UL_FN(yload2)(s0, s1, s1 == s0));
        b[p] = UL_FN(yload256v)(UL_FN(yload2)(s0 + 16, s1 + 16, s1 == s0));
    }
    if (enc) {
        for (unsigned i = 0; i < rounds; i++) {
            UL_FN(ykget256)(rkp, kc, i, 1, 0, &k0, &k1);
            for (int p = 0; p < 2; p++)
                UL_FN(yround256)(&a[p], &b[p], k0, k1, 0, UL_DEEP256);
        }
        UL_FN(ykget256)(rkp, kc, rounds, 1, 0, &k0, &k1);
        for (int p = 0; p < 2; p++) {
            a[p] = UL_FN(yxor256)(a[p], k0);
            b[p] = UL_FN(yxor256)(b[p], k1);
        }
    } else {
        UL_FN(ykget256)(rkp, kc, rounds, 1, 0, &k0, &k1);
        for (int p = 0; p < 2; p++) {
            a[p] = UL_FN(yxor256)(a[p], k0);
            b[p] = UL_FN(yxor256)(b[p], k1);
        }
        for (unsigned i = rounds; i-- > 0;) {
            UL_FN(ykget256)(rkp, kc, i, 1, 0, &k0, &k1);
            for (int p = 0; p < 2; p++)
                UL_FN(yround256_inv)(&a[p], &b[p], k0, k1, 0);
        }
    }
    for (int p = 0; p < 2; p++) {
        uint8_t *d0 = out + 64 * p, *d1 = 2 * p + 1 < nb ? d0 + 32 : NULL;
        UL_FN(ystore2)(d0, d1, UL_FN(ymerge256)(a[p]));
        UL_FN(ystore2)(d0 + 16, d1 ? d1 + 16 : NULL, UL_FN(ymerge256)(b[p]));
    }
}

/*
 * One uBlock-256 block in two ymm (UL_HALF1: a half's l and h in one
 * vector), for one CBC chain: a round is half the vector operations of
 * its xmm form, for PL's and PR's cross-lane moves on the chain (vpermq,
 * vpermd: 3 cycles each on Intel, 6 and 8 on Zen 3, hence UL_YCHAIN256
 * below). Taken where the core does 256 bits at once (UL_YFULL).
 */
#define UL_T v256
#define UL_OP(op) KUAI_V(v256, op)
#define UL_RN(name) UL_FN(c##name)
#define UL_HALF1
#define UL_ROW256H(row) v256_load(ub256_tab[row])
#define UL_Q0213(x) _mm256_permute4x64_epi64(x, 0xd8)
#define UL_D04261537(x) _mm256_permutevar8x32_epi32(x, _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7))
#ifdef UL_VPERMB256
#define UL_PERM256H(x, row) _mm256_permutexvar_epi8(v256_load(UL_VPERMB256(row)), x)
#endif
#include "ublock_ll_r256.h"

/* A half of the xmm form (UL_H) as one ymm, and back. */
UB_KERNEL v256 UL_FN(cjoin)(UL_H x)
{
    return _mm256_set_m128i(x.h, x.l);
}

UB_KERNEL UL_H UL_FN(csplit)(v256 x)
{
    return UL_FN(mk256)(_mm256_castsi256_si128(x), _mm256_extracti128_si256(x, 1));
}

/* cbc_enc_chain's uBlock-256/256 on UL_HALF1's form: round256_next with
 * the stored round keys where PL and PR are one permute (UL_VPERMB256),
 * else round256_chain with keys256chain's; joined once per call. */
UB_KERNEL void UL_FN(ycbc_enc256)(const ublock_sched *s, uint8_t *iv, const uint8_t *in,
                                  uint8_t *out, size_t n)
{
    const unsigned rounds = s->rounds;
    UL_H kx[2 * (UBLOCK_MAX_ROUNDS + 1)];
    v256 kc[2 * (UBLOCK_MAX_ROUNDS + 1)];
#ifdef UL_VPERMB256
    UL_FN(keys256s)(kx, s);
#else
    UL_FN(keys256chain)(kx, s);
#endif
    for (unsigned i = 0; i < 2 * (rounds + 1); i++)
        kc[i] = UL_FN(cjoin)(kx[i]);
    v256 a = UL_FN(cjoin)(UL_FN(load256)(iv)), b = UL_FN(cjoin)(UL_FN(load256)(iv + 16));
    for (size_t i = 0; i < n; i++) {
        a = v256_xor3(a, UL_FN(cjoin)(UL_FN(load256)(in + 32 * i)), kc[0]);
        b = v256_xor3(b, UL_FN(cjoin)(UL_FN(load256)(in + 32 * i + 16)), kc[1]);
        for (unsigned r = 1; r <= rounds; r++)
#ifdef UL_VPERMB256
            UL_FN(cround256_next)(&a, &b, kc[2 * r], kc[2 * r + 1]);
#else
            UL_FN(cround256_chain)(&a, &b, kc[2 * r], kc[2 * r + 1]);
#endif
        UL_FN(store256)(out + 32 * i, UL_FN(csplit)(a));
        UL_FN(store256)(out + 32 * i + 16, UL_FN(csplit)(b));
    }
    UL_FN(store256)(iv, UL_FN(csplit)(a));
    UL_FN(store256)(iv + 16, UL_FN(csplit)(b));
    kuai_wipe(kx, sizeof kx);
    kuai_wipe(kc, sizeof kc);
}

/* Where ycbc_enc256 runs: on every core that does 256 bits at once, but
 * for a Zen 3 or 4 (kuai_cpu_zen, not kuai_cpu_zen5) in the build without
 * vpermb (avx2), where the xmm form (round256_chain on two vectors a half)
 * is the faster one. Zen 3 (EPYC family 25 model 1), scripts/bench-ab,
 * TSC cycles: a chain of 1 KiB 11,562 -> 10,127; kuai_bench's 256 KiB
 * chain 11.03 -> 9.78 cycles/byte. Zen 4 has Zen 3's vector pipes and has
 * not timed it; Zen 5 and the Intel cores keep the ymm form they were
 * measured with (docs/performance.md, "Zen 3"). */
#ifdef UL_VPERMB256
#define UL_YCHAIN256 1
#else
#define UL_YCHAIN256 (UL_YFULL && !(kuai_cpu_zen() && !kuai_cpu_zen5()))
#endif

#ifdef UL_VPERMB256
/*
 * One uBlock-256 block (not a chain) in that form: round256_next or
 * round256_prev, each round key unpacked from the key's stored row as it
 * is added (keys: the key's rows, packed), or joined from the xmm forms
 * (keys: the one-shot call's, not packed; each zeroed once read where
 * wipe: kc_zero256). On xmm (enc256, two vectors a half, PL and PR by
 * unpacks and shuffles) one block took longer than two on zmm (Xeon,
 * Emerald Rapids: 352 against 273 TSC cycles); here the round is as deep
 * as one chain's and nothing runs on zmm: 243.
 */
UB_KERNEL void UL_FN(cblock256)(const void *keys, int packed, unsigned rounds, const uint8_t *src,
                                uint8_t *dst, int enc, int wipe)
{
    const v256 m = v256_set1_8(0x0f), shift = _mm256_setr_epi64x(0, 0, 4, 4);
    const uint8_t(*rk)[32] = (const uint8_t(*)[32])keys;
    const UL_H *kc = (const UL_H *)keys;
#define UL_CKEY(i, h)                                                                              \
    (packed ? v256_and(_mm256_srlv_epi64(v256_row16(rk[i] + 16 * (h)), shift), m)                  \
            : UL_FN(cjoin)(kc[2 * (i) + (h)]))
    v256 a = UL_FN(cjoin)(UL_FN(load256)(src)), b = UL_FN(cjoin)(UL_FN(load256)(src + 16));
    const unsigned first = enc ? 0 : rounds;
    a = v256_xor(a, UL_CKEY(first, 0));
    b = v256_xor(b, UL_CKEY(first, 1));
    if (wipe)
        UL_FN(kc_zero256)(kc, first);
    for (unsigned i = 1; i <= rounds; i++) {
        const unsigned r = enc ? i : rounds - i;
        const v256 k0 = UL_CKEY(r, 0), k1 = UL_CKEY(r, 1);
        if (wipe)
            UL_FN(kc_zero256)(kc, r);
        if (enc)
            UL_FN(cround256_next)(&a, &b, k0, k1);
        else
            UL_FN(cround256_prev)(&a, &b, k0, k1);
    }
#undef UL_CKEY
    UL_FN(store256)(dst, UL_FN(csplit)(a));
    UL_FN(store256)(dst + 16, UL_FN(csplit)(b));
}
#endif

#ifdef UL_Z
/*
 * Two uBlock-256 blocks on zmm, block j in 256-bit half j, each half as
 * UL_HALF1's ymm (l in its lane 0, h in lane 1): a pair's round is the
 * operations of one block's ymm round where the ymm pair (ygroup256, a
 * block per lane) has twice the shuffles and logic. Used for 2 CBC chains
 * (zmk_cbc256) and ECB pairs (zgroup256, both directions), with
 * round256_next and round256_prev. With round256's PL and PR (vpermq/vpermd and a
 * shuffle, 13 cycles a round) ECB pairs stayed on ymm: there (Xeon,
 * Emerald Rapids, lowest of 4 alternating runs, TSC cycles) the zmm pair
 * took 2 blocks under a stored key 350 -> 322 (decryption 374 -> 328),
 * but a key setup before each call 483 -> 497 and 4 of them in a
 * multi-key row 629 -> 689. With round256_next (10 cycles deep) the same
 * rows went 350 -> 272, 481 -> 452 and 632 -> 601 (2026-11-28,
 * docs/performance.md); decryption (round256_prev) 371 -> 298; with
 * zload2x256's way in and out 241, 437, 577 and 266. The one-shot pairs
 * run here too (zks_fused256, ks_ydec_c, ks_group's decryption).
 */
#define UL_T v512
#define UL_OP(op) KUAI_V(v512, op)
#define UL_RN(name) UL_FN(z##name)
#define UL_HALF1
#define UL_ROW256H(row) _mm512_broadcast_i64x4(v256_load(ub256_tab[row]))
#define UL_Q0213(x) _mm512_permutex_epi64(x, 0xd8)
#define UL_D04261537(x)                                                                            \
    _mm512_permutexvar_epi32(                                                                      \
        _mm512_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7, 8, 10, 12, 14, 9, 11, 13, 15), x)
#define UL_PERM256H(x, row) _mm512_permutexvar_epi8(v512_load(UL_VPERMB256(row)), x)
#include "ublock_ll_r256.h"

/*
 * Blocks p0 and p1 (32 bytes each) -> the pair's halves a and b in that
 * form, and back (p1 NULL: block 0 only). Both blocks' nibbles are split
 * at once (high nibbles, low nibbles), then one two-source vpermb a half
 * puts them where load256, cjoin and the lane inserts put them, one at a
 * time: the wide kernel's rows LOAD_X0 / LOAD_X1 (ublock_avx512.c) are
 * that composition (its sources after the transposition are the same
 * high- and low-nibble bytes), and STORE_R4 / STORE_R0 gather each
 * byte's high and low nibble back. A pair's 9 operations in and 6 out,
 * where the half-by-half forms took ~34 and ~32 (2 blocks, key outside:
 * see zgroup256).
 */
UB_KERNEL void UL_FN(zload2x256)(const uint8_t *p0, const uint8_t *p1, v512 *a, v512 *b)
{
    const v512 m = v512_set1_8(0x0f);
    const v512 x = p1 == p0 + 32 ? v512_loadu(p0)
                                 : _mm512_inserti64x4(_mm512_castsi256_si512(v256_loadu(p0)),
                                                      v256_loadu(p1), 1);
    const v512 hi = v512_and(v512_srl64(x, 4), m), lo = v512_and(x, m);
    *a = _mm512_permutex2var_epi8(hi, v512_load(UL_VPERMB256(LOAD_X0)), lo);
    *b = _mm512_permutex2var_epi8(hi, v512_load(UL_VPERMB256(LOAD_X1)), lo);
}

UB_KERNEL void UL_FN(zstore2x256)(uint8_t *p0, uint8_t *p1, v512 a, v512 b)
{
    const v512 hi = _mm512_permutex2var_epi8(a, v512_load(UL_VPERMB256(STORE_R4)), b);
    const v512 lo = _mm512_permutex2var_epi8(a, v512_load(UL_VPERMB256(STORE_R0)), b);
    const v512 x = v512_or(v512_sll64(hi, 4), lo); /* nibbles: nothing crosses a byte */
    if (p1 == p0 + 32) {
        v512_storeu(p0, x);
        return;
    }
    v256_storeu(p0, _mm512_castsi512_si256(x));
    if (p1)
        v256_storeu(p1, _mm512_extracti64x4_epi64(x, 1));
}

/* Round key i of a pair in that form: from the stored forms' rows (rk:
 * each 16-byte half two nibbles a byte, l low, h high) or from the xmm
 * forms kc; block 1's from key j1 (0 or 1). */
UB_KERNEL void UL_FN(zkget256)(const uint8_t (*const *rk)[32], const UL_H *const *kc, unsigned i,
                               int j1, v512 *k0, v512 *k1)
{
    if (!kc) {
        const v512 m = v512_set1_8(0x0f), shift = _mm512_setr_epi64(0, 0, 4, 4, 0, 0, 4, 4);
        for (int h = 0; h < 2; h++) {
            const __m128i *p0 = (const __m128i *)(const void *)(rk[0][i] + 16 * h);
            const __m128i *p1 = (const __m128i *)(const void *)(rk[j1][i] + 16 * h);
            v512 w = _mm512_broadcast_i32x4(_mm_loadu_si128(p0));
            if (j1)
                w = _mm512_mask_broadcast_i32x4(w, 0xff00, _mm_loadu_si128(p1));
            *(h ? k1 : k0) = v512_and(_mm512_srlv_epi64(w, shift), m);
        }
        return;
    }
    const UL_H *x = &kc[0][2 * i], *y = &kc[j1][2 * i];
    *k0 = _mm512_inserti64x4(_mm512_castsi256_si512(UL_FN(cjoin)(x[0])), UL_FN(cjoin)(y[0]), 1);
    *k1 = _mm512_inserti64x4(_mm512_castsi256_si512(UL_FN(cjoin)(x[1])), UL_FN(cjoin)(y[1]), 1);
}

/* nb (1..2) uBlock-256 blocks on zmm, block j in 256-bit half j, keys as
 * ygroup256's (mk: block 1 under keys 1): round256_next (enc) or
 * round256_prev, each round key fetched as it is added; wipe (kc[0] only,
 * one key): each of its round keys zeroed once read (kc_zero256). */
UB_KERNEL void UL_FN(zgroup256)(const uint8_t (*const *rk)[32], const UL_H *const *kc,
                                unsigned rounds, const uint8_t *const *src, uint8_t *const *dst,
                                int nb, int enc, int mk, int wipe)
{
    const int j1 = nb > 1 ? 1 : 0, kj1 = mk && nb > 1 ? 1 : 0;
    v512 a, b, k0, k1;
    UL_FN(zload2x256)(src[0], src[j1], &a, &b);
    UL_FN(zkget256)(rk, kc, enc ? 0 : rounds, kj1, &k0, &k1);
    if (wipe)
        UL_FN(kc_zero256)(kc[0], enc ? 0 : rounds);
    a = v512_xor(a, k0);
    b = v512_xor(b, k1);
    for (unsigned i = 1; i <= rounds; i++) {
        UL_FN(zkget256)(rk, kc, enc ? i : rounds - i, kj1, &k0, &k1);
        if (wipe)
            UL_FN(kc_zero256)(kc[0], enc ? i : rounds - i);
        if (enc)
            UL_FN(zround256_next)(&a, &b, k0, k1);
        else
            UL_FN(zround256_prev)(&a, &b, k0, k1);
    }
    UL_FN(zstore2x256)(dst[0], nb > 1 ? dst[1] : NULL, a, b);
}

/* 3..4 uBlock-256 blocks under one key (stored round keys) as two zmm
 * pairs side by side: ECB of 4 blocks 382 -> 358 TSC cycles, decryption
 * 425 -> 367 (Xeon, Sapphire Rapids class) */
UB_KERNEL void UL_FN(zgroup256x2)(const uint8_t (*rk)[32], const UL_H *kc1, unsigned rounds,
                                  const uint8_t *in, uint8_t *out, int nb, int enc)
{
    const uint8_t(*const rkp[1])[32] = {rk};
    const UL_H *const kcp[1] = {kc1}, *const *kc = kc1 ? kcp : NULL;
    v512 a[2], b[2], k0, k1;
    UL_FN(zload2x256)(in, in + 32, &a[0], &b[0]);
    UL_FN(zload2x256)(in + 64, nb > 3 ? in + 96 : in + 64, &a[1], &b[1]);
    UL_FN(zkget256)(rkp, kc, enc ? 0 : rounds, 0, &k0, &k1);
    for (int p = 0; p < 2; p++) {
        a[p] = v512_xor(a[p], k0);
        b[p] = v512_xor(b[p], k1);
    }
    for (unsigned i = 1; i <= rounds; i++) {
        UL_FN(zkget256)(rkp, kc, enc ? i : rounds - i, 0, &k0, &k1);
        for (int p = 0; p < 2; p++) {
            if (enc)
                UL_FN(zround256_next)(&a[p], &b[p], k0, k1);
            else
                UL_FN(zround256_prev)(&a[p], &b[p], k0, k1);
        }
    }
    UL_FN(zstore2x256)(out, out + 32, a[0], b[0]);
    UL_FN(zstore2x256)(out + 64, nb > 3 ? out + 96 : NULL, a[1], b[1]);
}
#endif
#endif

/* ---- calls --------------------------------------------------------------- */

/* The round keys key setup stored in this kernel's form (ublock.h). */
UB_KERNEL const UL_FN(kv) * UL_FN(stored)(const ublock_sched *s)
{
    return (const UL_FN(kv) *)(const void *)ublock_llk(s);
}

/* the same as 32-byte rows (a round key each: uBlock-256/256's form),
 * the address made in a general register (groupp's note) */
typedef uint8_t UL_FN(row32)[32];
UB_KERNEL const UL_FN(row32) * UL_FN(rows)(const ublock_sched *s)
{
    const UL_FN(row32) *r = (const UL_FN(row32) *)(const void *)ublock_llk(s);
    __asm__("" : "+r"(r));
    return r;
}

/* All of a uBlock-128 key's round keys, copied from its stored forms into
 * aligned storage (the multi-key CBC chains read them every block). */
UB_KERNEL void UL_FN(keys128s)(v128 *kc, const ublock_sched *s)
{
    const UL_FN(kv) *kf = UL_FN(stored)(s);
    for (unsigned i = 0; i < 2 * (s->rounds + 1); i++)
        kc[i] = kf[i];
}

/* Round key i of two packed pairs (pack2: blocks 2p and 2p + 1 in pair p),
 * from the forms kget128 fetches: block j's (mk) or one key's in both
 * nibbles of every byte. */
UB_KERNEL void UL_FN(kget128p)(const uint8_t (*const *rk)[32], unsigned i, int mk, v128 *k0,
                               v128 *k1)
{
    for (int p = 0; p < 2; p++) {
        v128 x0, x1, y0, y1;
        UL_FN(kget128)(rk, NULL, mk ? 2 * p : 0, i, &x0, &x1);
        if (!mk) {
            k0[0] = k0[1] = UL_FN(pack2)(x0, x0);
            k1[0] = k1[1] = UL_FN(pack2)(x1, x1);
            return;
        }
        UL_FN(kget128)(rk, NULL, 2 * p + 1, i, &y0, &y1);
        k0[p] = UL_FN(pack2)(x0, y0);
        k1[p] = UL_FN(pack2)(x1, y1);
    }
}

/* Round key i added to two packed pairs (kget128p's keys). */
UB_KERNEL void UL_FN(xkey128p)(const uint8_t (*const *rk)[32], unsigned i, int mk, v128 *a, v128 *b)
{
    v128 k0[2], k1[2];
    UL_FN(kget128p)(rk, i, mk, k0, k1);
    for (int p = 0; p < 2; p++) {
        a[p] = v128_xor(a[p], k0[p]);
        b[p] = v128_xor(b[p], k1[p]);
    }
}

/*
 * A group of 4 uBlock-128 blocks as two packed pairs (round128p: blocks 0
 * and 1 in pair 0, 2 and 3 in pair 1), keys as enc128's (rk: the keys'
 * stored forms). Four blocks side by side are
 * bound by the ports, which packing relieves (see mk_cbc_groupp). One
 * key's round keys are packed as they are used (two operations a vector);
 * 4 keys' (mk) would take eight a round, so their encryption adds them
 * unpacked inside the S-box (round128pk) and packs only the last.
 */
UB_KERNEL void UL_FN(group128p)(const uint8_t (*const *rk)[32], unsigned rounds,
                                const uint8_t *const *src, uint8_t *const *dst, int enc, int mk)
{
    v128 a[2], b[2], k0[2], k1[2];
    for (int p = 0; p < 2; p++)
        UL_FN(load128p)(src[2 * p], src[2 * p + 1], &a[p], &b[p]);
    if (enc && mk) { /* round i's keys into its S-box (round128pk), the last one packed */
        for (unsigned i = 0; i < rounds; i++) {
            v128 kx[4], ky[4];
            for (int j = 0; j < 4; j++) {
                const int slot = (j & 1) * 2 + j / 2; /* pair j / 2's, + 2 if high (odd j) */
                UL_FN(kget128)(rk, NULL, j, i, &kx[slot], &ky[slot]);
            }
            UL_FN(round128pk)(a, b, kx, ky, i & 7, 2);
        }
        UL_FN(xkey128p)(rk, rounds, mk, a, b);
    } else if (enc) {
        UL_FN(xkey128p)(rk, 0, mk, a, b);
        for (unsigned i = 0; i < rounds; i++) {
            UL_FN(kget128p)(rk, i + 1, mk, k0, k1);
            UL_FN(round128p)(a, b, k0, k1, i & 7, 2);
        }
    } else {
        UL_FN(xkey128p)(rk, rounds, mk, a, b);
        for (unsigned i = rounds; i-- > 0;) {
            UL_FN(kget128p)(rk, i, mk, k0, k1);
            UL_FN(round128p_inv)(a, b, k0, k1, i & 7, 2);
        }
    }
    for (int p = 0; p < 2; p++)
        UL_FN(store128p)(dst[2 * p], dst[2 * p + 1], a[p], b[p]);
}

/*
 * One group of nb blocks, block j from src[j] to dst[j] (src[j] == dst[j]
 * allowed: all loads come first). keys[j]: block j's schedule (mk) or
 * keys[0] for all; round keys from the forms every key stores (ublock.h:
 * a multi-key call may mix keys of other backends, ref's too).
 */
UB_KERNEL void UL_FN(groupp)(const ublock_sched *const *keys, const uint8_t *const *src,
                             uint8_t *const *dst, int nb, int enc, int mk, int yk)
{
    (void)yk; /* read on ymm only (UL_Y) */
    const unsigned rounds = keys[0]->rounds;
    const UL_FN(kv) * kf[UL_G128];
    const uint8_t(*rkf[UL_G128])[32]; /* the stored forms as 32-byte rows */
    for (int j = 0; j < (mk ? nb : 1); j++) {
        /* Opaque, so each address is made in a general register. gcc had
         * loaded keys[] as one ymm and added the offset to all four at once;
         * the callers store keys[] a pointer at a time just before the
         * call, and no store forwards into a wider load, which then waits
         * for those stores to reach the cache. kuai_ecb_encrypt_multi of 4
         * keys x 1 block (mk_short_bs's array), TSC cycles: avx512 174 ->
         * 164, avx2 229 -> 198, ssse3 292 -> 278 (uBlock-128/128; Xeon,
         * Sapphire Rapids, scripts/bench-ab) */
        const UL_FN(kv) *kfj = UL_FN(stored)(keys[j]);
        __asm__("" : "+r"(kfj));
        kf[j] = kfj;
        rkf[j] = (const uint8_t(*)[32])(const void *)kf[j];
    }
    if (keys[0]->nbytes == 16 && nb == 4 && UL_PACK4(enc, mk)) {
        UL_FN(group128p)(rkf, rounds, src, dst, enc, mk);
        return;
    }
#ifdef UL_Y
    /* 2 blocks on xmm where ymm is split: the ymm pair's one vector waits
     * on a round's µops there, two xmm vectors on its depth (Zen 1: ECB
     * of 2 blocks 240 -> 205 cycles, decryption 224 -> 206 with the
     * shallow inverse round, UL_SHALLOW_G; docs/performance.md) */
    if (keys[0]->nbytes == 16 && UL_YNB3(nb) && (nb != 2 || UL_YFULL)) {
        const v256 *ky[UL_G128];
        for (int j = 0; j < (mk ? nb : 1); j++)
            ky[j] = (const v256 *)(const void *)kf[j];
        UL_FN(ygroup128)(ky, rounds, src, dst, nb, enc, mk ? UL_MK_XMM : 0, 0);
        return;
    }
#endif
    if (keys[0]->nbytes == 16) {
        v128 a[UL_G128], b[UL_G128];
        for (int j = 0; j < nb; j++)
            UL_FN(load128)(src[j], &a[j], &b[j]);
        if (enc)
            UL_FN(enc128)(a, b, rkf, NULL, rounds, nb, mk);
        else
            UL_FN(dec128)(a, b, rkf, NULL, rounds, nb, mk, UL_SHALLOW_G(nb), 0);
        for (int j = 0; j < nb; j++)
            v128_storeu(dst[j], UL_FN(merge128)(a[j], b[j]));
    } else {
        if (nb == 2 && UL_PACK256(mk, yk)) {
            UL_FN(group256p)(rkf, rounds, src, dst, enc, mk);
            return;
        }
#ifdef UL_VPERMB256
        if (nb == 1) {
            UL_FN(cblock256)(rkf[0], 1, rounds, src[0], dst[0], enc, 0);
            return;
        }
#endif
#ifdef UL_Z
        if (nb == 2 && (mk || yk)) {
            UL_FN(zgroup256)(rkf, NULL, rounds, src, dst, 2, enc, mk, 0);
            return;
        }
#endif
#ifdef UL_Y
        if (nb >= 2 && (mk || yk)) { /* one key: see ygroup256 */
            UL_FN(ygroup256)(rkf, NULL, rounds, src, dst, 2, enc, mk, 0);
            return;
        }
#endif
        UL_H a[UL_G256], b[UL_G256];
        for (int j = 0; j < nb && j < UL_G256; j++) {
            a[j] = UL_FN(load256)(src[j]);
            b[j] = UL_FN(load256)(src[j] + 16);
        }
        if (enc)
            UL_FN(enc256)(a, b, rkf, NULL, rounds, nb < UL_G256 ? nb : UL_G256, mk);
        else
            UL_FN(dec256)(a, b, rkf, NULL, rounds, nb < UL_G256 ? nb : UL_G256, mk, 0);
        for (int j = 0; j < nb && j < UL_G256; j++) {
            UL_FN(store256)(dst[j], a[j]);
            UL_FN(store256)(dst[j] + 16, b[j]);
        }
    }
}

/* One group of nb contiguous blocks from in to out (in == out allowed). */
UB_KERNEL void UL_FN(group)(const ublock_sched *const *keys, const uint8_t *in, uint8_t *out,
                            int nb, int enc, int mk, int yk)
{
    const size_t bs = keys[0]->nbytes;
    const uint8_t *src[UL_G128];
    uint8_t *dst[UL_G128];
    for (int j = 0; j < nb; j++) {
        src[j] = in + bs * (size_t)j;
        dst[j] = out + bs * (size_t)j;
    }
    UL_FN(groupp)(keys, src, dst, nb, enc, mk, yk);
}

/* The kernels, one per (group size, direction, key form): nb constant in
 * each, so the state stays in registers. */
#define UL_GROUP_KERNEL(nb)                                                                        \
    static void UL_FN(enc##nb)(const ublock_sched *const *k, const uint8_t *in, uint8_t *out)      \
    {                                                                                              \
        UL_FN(group)(k, in, out, nb, 1, 0, 0);                                                     \
    }                                                                                              \
    static void UL_FN(dec##nb)(const ublock_sched *const *k, const uint8_t *in, uint8_t *out)      \
    {                                                                                              \
        UL_FN(group)(k, in, out, nb, 0, 0, 0);                                                     \
    }                                                                                              \
    static void UL_FN(mkenc##nb)(const ublock_sched *const *k, const uint8_t *in, uint8_t *out)    \
    {                                                                                              \
        UL_FN(group)(k, in, out, nb, 1, 1, 0);                                                     \
    }                                                                                              \
    static void UL_FN(mkdec##nb)(const ublock_sched *const *k, const uint8_t *in, uint8_t *out)    \
    {                                                                                              \
        UL_FN(group)(k, in, out, nb, 0, 1, 0);                                                     \
    }                                                                                              \
    static void UL_FN(pmkenc##nb)(const ublock_sched *const *k, const uint8_t *const *src,         \
                                  uint8_t *const *dst)                                             \
    {                                                                                              \
        UL_FN(groupp)(k, src, dst, nb, 1, 1, 0);                                                   \
    }                                                                                              \
    static void UL_FN(pmkdec##nb)(const ublock_sched *const *k, const uint8_t *const *src,         \
                                  uint8_t *const *dst)                                             \
    {                                                                                              \
        UL_FN(groupp)(k, src, dst, nb, 0, 1, 0);                                                   \
    }
UL_GROUP_KERNEL(1)
UL_GROUP_KERNEL(2)
UL_GROUP_KERNEL(3)
UL_GROUP_KERNEL(4)
#undef UL_GROUP_KERNEL

#ifdef UL_Y
/* Whether mk_short_bs packs up to 8 uBlock-128 blocks of several streams
 * into two groups side by side: where ymm runs whole, not where zmm does.
 * Two zmm vector pairs with each lane's key (masked broadcast loads)
 * measured no faster than one after the other (8 streams x 1 block 330 ->
 * 326 TSC cycles, 4 x 4 492 -> 661; Xeon, Sapphire Rapids): a zmm group's
 * round already fills ports 0 and 5 with its shuffles and lane-key loads. */
#ifdef UL_Z
#define UL_MK8 (!UL_ZFULL)
#else
#define UL_MK8 UL_YFULL
#endif
/* 5..8 uBlock-128 blocks under their keys (block j from src[j] to dst[j]
 * under keys[j]) as two groups side by side, where ymm runs whole: the
 * multi-key calls' groups (mk_short_bs), as g2 runs one key's. */
UB_KERNEL void UL_FN(groupp8)(const ublock_sched *const *keys, const uint8_t *const *src,
                              uint8_t *const *dst, int nb, int enc)
{
    const v256 *ky[2 * UL_G128];
    for (int j = 0; j < nb; j++) {
        const UL_FN(kv) *kfj = UL_FN(stored)(keys[j]);
        __asm__("" : "+r"(kfj)); /* in a general register (groupp's note) */
        ky[j] = (const v256 *)(const void *)kfj;
    }
    UL_FN(ygroup128)(ky, keys[0]->rounds, src, dst, nb, enc, UL_MK_XMM, 0);
}

#define UL_GROUPP8_KERNEL(nb)                                                                      \
    static void UL_FN(pmkenc8_##nb)(const ublock_sched *const *k, const uint8_t *const *src,       \
                                    uint8_t *const *dst)                                           \
    {                                                                                              \
        UL_FN(groupp8)(k, src, dst, nb, 1);                                                        \
    }                                                                                              \
    static void UL_FN(pmkdec8_##nb)(const ublock_sched *const *k, const uint8_t *const *src,       \
                                    uint8_t *const *dst)                                           \
    {                                                                                              \
        UL_FN(groupp8)(k, src, dst, nb, 0);                                                        \
    }
UL_GROUPP8_KERNEL(5)
UL_GROUPP8_KERNEL(6)
UL_GROUPP8_KERNEL(7)
UL_GROUPP8_KERNEL(8)
#undef UL_GROUPP8_KERNEL
#endif

#ifdef UL_Y
/* One key's uBlock-256/256 pair on ymm (the choice made by the caller, so
 * that each kernel holds one path: made inside, it cost Zen 1's xmm pair
 * 12% on ECB of 2 blocks; see ygroup256k). */
static void UL_FN(yenc2)(const ublock_sched *const *k, const uint8_t *in, uint8_t *out)
{
    UL_FN(group)(k, in, out, 2, 1, 0, 1);
}
static void UL_FN(ydec2)(const ublock_sched *const *k, const uint8_t *in, uint8_t *out)
{
    UL_FN(group)(k, in, out, 2, 0, 0, 1);
}
#endif

typedef void (*UL_FN(group_fn))(const ublock_sched *const *, const uint8_t *, uint8_t *);

#ifdef UL_Y
/* A key's round keys for the groups side by side: the stored forms (rk:
 * key setup's, or ks_ll's copy of uBlock-128's) or ks_ll's uBlock-256/256
 * halves (kc, rk NULL) */
typedef struct {
    const void *rk;
    const UL_H *kc;
    unsigned rounds;
} UL_FN(gkey);

/*
 * 5..8 uBlock-128 blocks under one key: two groups of 4 side by side, as
 * two zmm vector pairs where the core runs zmm whole, else as 3-4 ymm
 * pairs (where it runs ymm whole). One group's round waits on its chain
 * (10 operations deep) more than on the ports, so a second group beside it
 * costs less than one after it: ECB of 5 / 8 blocks, TSC cycles, Xeon
 * (Sapphire Rapids class), uBlock-128/128 (128/256), two groups one after
 * the other against side by side: avx512 (zmm) encryption 223 -> 204 / 214
 * -> 201 (319 -> 292 / 315 -> 292), decryption 254 -> 188 / 230 -> 188 (366
 * -> 273 / 320 -> 273); avx2 (ymm) encryption 286 -> 224 / 344 -> 286 (427
 * -> 330 / 510 -> 420), decryption 301 -> 240 / 359 -> 289 (459 -> 351 /
 * 530 -> 421). On avx512 the ymm pairs took 213 / 249 (encryption): four
 * pairs are 68 operations a round over the three vector ports, the zmm
 * pairs 18 shuffles on port 5. Where ymm is split (Zen 1) the groups stay
 * one after the other.
 */
UB_KERNEL void UL_FN(ygroup8)(const UL_FN(gkey) * k, const uint8_t *in, uint8_t *out, int nb,
                              int enc)
{
    const v256 *kc[1] = {(const v256 *)k->rk};
    __asm__("" : "+r"(kc[0])); /* in a general register (groupp's note) */
    v256 a[4], b[4];
    for (int j = 0; j < UL_YV(nb); j++) {
        const int j1 = 2 * j + 1 < nb ? 2 * j + 1 : 2 * j;
        UL_FN(yload128)(in + 32 * j, in + 16 * j1, j1 == 2 * j, &a[j], &b[j]);
    }
    if (enc)
        UL_FN(yenc128)(a, b, kc, k->rounds, nb, 0);
    else
        UL_FN(ydec128)(a, b, kc, k->rounds, nb, 0, 0);
    for (int j = 0; j < UL_YV(nb); j++)
        UL_FN(ystore128)(out + 32 * j, 2 * j + 1 < nb ? out + 32 * j + 16 : NULL, a[j], b[j]);
}

#ifdef UL_Z
/* the same on zmm: blocks 0-3 in one vector pair, the 1-4 others in a
 * second, loaded and stored masked */
UB_KERNEL void UL_FN(zgroup8)(const UL_FN(gkey) * k, const uint8_t *in, uint8_t *out, int nb,
                              int enc)
{
    const __mmask8 m = (__mmask8)((1u << (2 * (nb - 4))) - 1);
    const void *kc[1] = {k->rk};
    __asm__("" : "+r"(kc[0]));
    v512 a[2], b[2];
    UL_FN(zsplit128)(v512_loadu(in), &a[0], &b[0]);
    UL_FN(zsplit128)(_mm512_maskz_loadu_epi64(m, in + 64), &a[1], &b[1]);
    if (enc)
        UL_FN(zenc128)(a, b, kc, k->rounds, 0, 2);
    else
        UL_FN(zdec128)(a, b, kc, k->rounds, 0, 2, 0);
    v512_storeu(out, UL_FN(zmerge128)(a[0], b[0]));
    _mm512_mask_storeu_epi64(out + 64, m, UL_FN(zmerge128)(a[1], b[1]));
}
#endif

/* The kernels of two groups side by side, one per block count and
 * direction (nb constant in each): uBlock-128's 5..8 blocks (UL_G8),
 * 256/256's 3..4 (UL_G4) */
#ifdef UL_Z
#define UL_G8(nb, enc) (UL_ZFULL ? UL_FN(zgroup8) : UL_FN(ygroup8))(k, in, out, nb, enc)
#define UL_G4(nb, enc)                                                                             \
    (UL_ZFULL ? UL_FN(zgroup256x2) : UL_FN(ygroup256x2))(k->rk, k->kc, k->rounds, in, out, nb, enc)
#else
#define UL_G8(nb, enc) UL_FN(ygroup8)(k, in, out, nb, enc)
#define UL_G4(nb, enc) UL_FN(ygroup256x2)(k->rk, k->kc, k->rounds, in, out, nb, enc)
#endif
#define UL_G2_KERNEL(name, nb, run)                                                                \
    static void UL_FN(enc##name)(const UL_FN(gkey) * k, const uint8_t *in, uint8_t *out)           \
    {                                                                                              \
        run(nb, 1);                                                                                \
    }                                                                                              \
    static void UL_FN(dec##name)(const UL_FN(gkey) * k, const uint8_t *in, uint8_t *out)           \
    {                                                                                              \
        run(nb, 0);                                                                                \
    }
UL_G2_KERNEL(8_5, 5, UL_G8)
UL_G2_KERNEL(8_6, 6, UL_G8)
UL_G2_KERNEL(8_7, 7, UL_G8)
UL_G2_KERNEL(8_8, 8, UL_G8)
UL_G2_KERNEL(4_3, 3, UL_G4)
UL_G2_KERNEL(4_4, 4, UL_G4)
#undef UL_G2_KERNEL
#undef UL_G8
#undef UL_G4

/* Up to two groups' worth of the *n blocks (of bs bytes, more than one
 * group) at *in to *out as one group of two, and the pointers and count
 * moved past them; 0 (nothing done) where ymm is split. */
static inline int UL_FN(g2)(const UL_FN(gkey) * k, size_t bs, const uint8_t **in, uint8_t **out,
                            size_t *n, int enc)
{
    typedef void (*g2_fn)(const UL_FN(gkey) *, const uint8_t *, uint8_t *);
    static const g2_fn fns[2][2][4] = {
        {{UL_FN(dec8_5), UL_FN(dec8_6), UL_FN(dec8_7), UL_FN(dec8_8)},
         {UL_FN(enc8_5), UL_FN(enc8_6), UL_FN(enc8_7), UL_FN(enc8_8)}},
        {{UL_FN(dec4_3), UL_FN(dec4_4), 0, 0}, {UL_FN(enc4_3), UL_FN(enc4_4), 0, 0}}};
    if (!UL_YFULL)
        return 0;
    const size_t g = bs == 16 ? UL_G128 : UL_G256, m = *n < 2 * g ? *n : 2 * g;
    fns[bs == 32][enc][m - g - 1](k, *in, *out);
    *in += bs * m;
    *out += bs * m;
    *n -= m;
    return 1;
}
#endif

/* n blocks under one key (mk = 0) or block i under keys[i] (mk = 1), in
 * groups of UL_G128 / UL_G256 blocks. in == out allowed. */
static void UL_FN(crypt)(const ublock_sched *const *keys, const uint8_t *in, uint8_t *out, size_t n,
                         int enc, int mk)
{
    static const UL_FN(group_fn)
        fns[2][2][5] = {{{0, UL_FN(dec1), UL_FN(dec2), UL_FN(dec3), UL_FN(dec4)},
                         {0, UL_FN(enc1), UL_FN(enc2), UL_FN(enc3), UL_FN(enc4)}},
                        {{0, UL_FN(mkdec1), UL_FN(mkdec2), UL_FN(mkdec3), UL_FN(mkdec4)},
                         {0, UL_FN(mkenc1), UL_FN(mkenc2), UL_FN(mkenc3), UL_FN(mkenc4)}}};
    const size_t bs = keys[0]->nbytes, g = bs == 16 ? UL_G128 : UL_G256;
#ifdef UL_Y
    const int yk = bs == 32 && !mk && UL_YFULL;
#endif
    while (n) {
        size_t m = n < g ? n : g;
#ifdef UL_Y
        if (yk && m == 2)
            (enc ? UL_FN(yenc2) : UL_FN(ydec2))(keys, in, out);
        else
#endif
            fns[mk][enc][m](keys, in, out);
        in += m * bs;
        out += m * bs;
        keys += mk ? m : 0;
        n -= m;
    }
}

/* Chains of at least this many blocks copy a key's stored round keys into
 * aligned storage first: legacy SSE (no VEX) cannot fold an unaligned load
 * into pxor, and the stored forms are only 8-byte aligned (ublock.h), so
 * read in place they cost a movdqu each per round; measured on Zen 1, the
 * ssse3 chain of uBlock-128/256 lost 3% that way. VEX, NEON and LSX load
 * them in place at no cost. */
#if defined(__SSE2__) && !defined(__AVX__)
#define UL_CBC_KCOPY 4
#else
#define UL_CBC_KCOPY SIZE_MAX
#endif

/* uBlock-256/256 CBC chains of fewer than 4 blocks run round256 on the
 * key's stored round keys, as one ECB block does, not round256_chain: the
 * chain round's key forms (keys256chain: PL^-1 and PR^-1 of every round
 * key, and their wipe) cost about one block's rounds a call. On Zen 1
 * (avx2 and ssse3) both rounds cost the same a block (~330 TSC cycles,
 * bound by the shuffle ports), so one block went 667 -> 350 cycles and 3
 * blocks 1315 -> 1020; llvm-mca's Zen 3 model gives the chain round 13.1
 * cycles against round256's 17.1 (xmm), which puts the break-even near 4
 * blocks (docs/performance.md). Where PL and PR are one permute
 * (UL_VPERMB256) the ymm chain takes the stored keys as they are. */
#ifdef UL_VPERMB256
#define UL_CBC256_SHORT(n) 0
#else
#define UL_CBC256_SHORT(n) ((n) < 4)
#endif

/*
 * CBC encryption of one chain: the chain stays in registers in nibble
 * form (XOR commutes with the nibble split), so a block costs its rounds
 * and nothing else on the dependency chain.
 */
UB_KERNEL void UL_FN(cbc_enc_chain)(const ublock_sched *s, uint8_t *iv, const uint8_t *in,
                                    uint8_t *out, size_t n, int bs)
{
    if (bs == 16) {
        /* the key's stored forms (rows of rkf) in place, else kc copied
         * here for the call */
        v128 a, b, kc[2 * (UBLOCK_MAX_ROUNDS + 1)];
        const v128 *kcp[1] = {kc};
        const uint8_t(*rkf[1])[32] = {(const uint8_t(*)[32])(const void *)UL_FN(stored)(s)};
        const int kf = n < UL_CBC_KCOPY; /* public: the length */
        if (!kf)
            UL_FN(keys128s)(kc, s);
        UL_FN(load128)(iv, &a, &b);
        for (size_t i = 0; i < n; i++) {
            v128 pa, pb;
            UL_FN(load128)(in + 16 * i, &pa, &pb);
            a = v128_xor(a, pa);
            b = v128_xor(b, pb);
            if (kf)
                UL_FN(enc128_chain)(&a, &b, rkf, NULL, s->rounds);
            else
                UL_FN(enc128_chain)(&a, &b, NULL, kcp, s->rounds);
            v128_storeu(out + 16 * i, UL_FN(merge128)(a, b));
        }
        v128_storeu(iv, UL_FN(merge128)(a, b));
        if (!kf)
            kuai_wipe(kc, sizeof kc);
    } else {
        /* a short chain on the key's stored forms (rows of rkf, round256),
         * else round256_chain on kc made here for the call */
        const int kf = UL_CBC256_SHORT(n); /* public: the length */
#ifdef UL_Y
        if (!kf && UL_YCHAIN256) {
            UL_FN(ycbc_enc256)(s, iv, in, out, n);
            return;
        }
#endif
        UL_H a = UL_FN(load256)(iv), b = UL_FN(load256)(iv + 16), kc[2 * (UBLOCK_MAX_ROUNDS + 1)];
        const uint8_t(*rkf[1])[32] = {(const uint8_t(*)[32])(const void *)UL_FN(stored)(s)};
        if (!kf)
            UL_FN(keys256chain)(kc, s);
        for (size_t i = 0; i < n; i++) {
            a = UL_FN(xor256)(a, UL_FN(load256)(in + 32 * i));
            b = UL_FN(xor256)(b, UL_FN(load256)(in + 32 * i + 16));
            if (kf)
                UL_FN(enc256)(&a, &b, rkf, NULL, s->rounds, 1, 0);
            else
                UL_FN(enc256_chain)(&a, &b, kc, s->rounds);
            UL_FN(store256)(out + 32 * i, a);
            UL_FN(store256)(out + 32 * i + 16, b);
        }
        UL_FN(store256)(iv, a);
        UL_FN(store256)(iv + 16, b);
        if (!kf)
            kuai_wipe(kc, sizeof kc);
    }
}

static void UL_FN(cbc_enc128)(const ublock_sched *s, uint8_t *iv, const uint8_t *in, uint8_t *out,
                              size_t n)
{
    UL_FN(cbc_enc_chain)(s, iv, in, out, n, 16);
}

static void UL_FN(cbc_enc256)(const ublock_sched *s, uint8_t *iv, const uint8_t *in, uint8_t *out,
                              size_t n)
{
    UL_FN(cbc_enc_chain)(s, iv, in, out, n, 32);
}

/*
 * mk_cbc_group for 4 chains (m, even), two per vector pair (round128p):
 * chains 2p and 2p + 1 share pair p, 2p in the low nibble of each byte.
 * Four chains are then 2 pairs of vectors, not 4: the round's shuffles and
 * XORs act on both blocks of a byte at once, and only the S-box costs more
 * (sboxp: and, shift, and, two shuffles, or), 27 operations a round for
 * two blocks instead of 34, where four chains are bound by the ports. Two
 * chains are not: one packed pair would wait on the longer S-box (13
 * operations deep a round instead of 10), so they stay unpacked. The round
 * keys are packed the same way once per call.
 */
UB_KERNEL void UL_FN(mk_cbc_groupp)(const ublock_sched *const *keys, uint8_t *ivs,
                                    const uint8_t *const *in, uint8_t *const *out, size_t nblocks,
                                    int m)
{
    const int np = m / 2;
    const unsigned rounds = keys[0]->rounds;
    v128 a[UL_G128 / 2], b[UL_G128 / 2], kp[UL_G128 / 2][2 * (UBLOCK_MAX_ROUNDS + 1)];
    v128 kc[2][2 * (UBLOCK_MAX_ROUNDS + 1)];
    for (int p = 0; p < np; p++) {
        UL_FN(keys128s)(kc[0], keys[2 * p]);
        UL_FN(keys128s)(kc[1], keys[2 * p + 1]);
        for (unsigned i = 0; i < 2 * (rounds + 1); i++)
            kp[p][i] = UL_FN(pack2)(kc[0][i], kc[1][i]);
        UL_FN(load128p)(ivs + 32 * p, ivs + 32 * p + 16, &a[p], &b[p]);
    }
    kuai_wipe(kc, sizeof kc);
    for (size_t i = 0; i < nblocks; i++) {
        for (int p = 0; p < np; p++) {
            v128 pa, pb;
            UL_FN(load128p)(in[2 * p] + 16 * i, in[2 * p + 1] + 16 * i, &pa, &pb);
            a[p] = v128_xor(a[p], v128_xor(pa, kp[p][0]));
            b[p] = v128_xor(b[p], v128_xor(pb, kp[p][1]));
        }
        for (unsigned r = 0; r < rounds; r++) {
            v128 k0[UL_G128 / 2], k1[UL_G128 / 2];
            for (int p = 0; p < np; p++) {
                k0[p] = kp[p][2 * r + 2];
                k1[p] = kp[p][2 * r + 3];
            }
            UL_FN(round128p)(a, b, k0, k1, r & 7, np);
        }
        for (int p = 0; p < np; p++)
            UL_FN(store128p)(out[2 * p] + 16 * i, out[2 * p + 1] + 16 * i, a[p], b[p]);
    }
    for (int p = 0; p < np; p++)
        UL_FN(store128p)(ivs + 32 * p, ivs + 32 * p + 16, a[p], b[p]);
    kuai_wipe(kp, (size_t)np * sizeof kp[0]);
}

/*
 * m CBC chains (m <= UL_G128, 16-byte blocks), chain j under keys[j], one
 * block of every chain per group pass: the chains run side by side in
 * registers.
 */
UB_KERNEL void UL_FN(mk_cbc_group)(const ublock_sched *const *keys, uint8_t *ivs,
                                   const uint8_t *const *in, uint8_t *const *out, size_t nblocks,
                                   int m)
{
    v128 a[UL_G128], b[UL_G128], kc[UL_G128][2 * (UBLOCK_MAX_ROUNDS + 1)];
    const v128 *kcp[UL_G128];
    for (int j = 0; j < m; j++) {
        /* The chains are throughput-bound: round keys from aligned copies
         * on this frame (SSE folds only aligned loads into its XORs; the
         * stored forms are 8-byte aligned), copied from the key's stored
         * forms. */
        kcp[j] = kc[j];
        UL_FN(keys128s)(kc[j], keys[j]);
        UL_FN(load128)(ivs + 16 * j, &a[j], &b[j]);
    }
    for (size_t i = 0; i < nblocks; i++) {
        for (int j = 0; j < m; j++) {
            v128 pa, pb;
            UL_FN(load128)(in[j] + 16 * i, &pa, &pb);
            a[j] = v128_xor(a[j], pa);
            b[j] = v128_xor(b[j], pb);
        }
        UL_FN(enc128)(a, b, NULL, kcp, keys[0]->rounds, m, 1); /* m == 1: the chain round */
        for (int j = 0; j < m; j++)
            v128_storeu(out[j] + 16 * i, UL_FN(merge128)(a[j], b[j]));
    }
    for (int j = 0; j < m; j++)
        v128_storeu(ivs + 16 * j, UL_FN(merge128)(a[j], b[j]));
    kuai_wipe(kc, (size_t)m * sizeof kc[0]);
}

/* The same for uBlock-256/256, m <= UL_G256 chains of 32-byte blocks. */
UB_KERNEL void UL_FN(mk_cbc_group256)(const ublock_sched *const *keys, uint8_t *ivs,
                                      const uint8_t *const *in, uint8_t *const *out, size_t nblocks,
                                      int m)
{
    UL_H a[UL_G256], b[UL_G256], kc[UL_G256][2 * (UBLOCK_MAX_ROUNDS + 1)];
    const UL_H *kcp[UL_G256];
    const int chain = m == 1 && !UL_CBC256_SHORT(nblocks); /* public: the length */
    for (int j = 0; j < m; j++) {
        kcp[j] = kc[j];
        if (chain) /* one chain: round256_chain's key forms */
            UL_FN(keys256chain)(kc[j], keys[j]);
        else
            UL_FN(keys256s)(kc[j], keys[j]);
        a[j] = UL_FN(load256)(ivs + 32 * j);
        b[j] = UL_FN(load256)(ivs + 32 * j + 16);
    }
    for (size_t i = 0; i < nblocks; i++) {
        for (int j = 0; j < m; j++) {
            a[j] = UL_FN(xor256)(a[j], UL_FN(load256)(in[j] + 32 * i));
            b[j] = UL_FN(xor256)(b[j], UL_FN(load256)(in[j] + 32 * i + 16));
        }
        if (chain)
            UL_FN(enc256_chain)(a, b, kc[0], keys[0]->rounds);
        else
            UL_FN(enc256)(a, b, NULL, kcp, keys[0]->rounds, m, 1);
        for (int j = 0; j < m; j++) {
            UL_FN(store256)(out[j] + 32 * i, a[j]);
            UL_FN(store256)(out[j] + 32 * i + 16, b[j]);
        }
    }
    for (int j = 0; j < m; j++) {
        UL_FN(store256)(ivs + 32 * j, a[j]);
        UL_FN(store256)(ivs + 32 * j + 16, b[j]);
    }
    kuai_wipe(kc, (size_t)m * sizeof kc[0]);
}

static void UL_FN(mk_cbc256_1)(const ublock_sched *const *keys, uint8_t *ivs,
                               const uint8_t *const *in, uint8_t *const *out, size_t nblocks)
{
    UL_FN(mk_cbc_group256)(keys, ivs, in, out, nblocks, 1);
}

static void UL_FN(mk_cbc256_2)(const ublock_sched *const *keys, uint8_t *ivs,
                               const uint8_t *const *in, uint8_t *const *out, size_t nblocks)
{
    UL_FN(mk_cbc_group256)(keys, ivs, in, out, nblocks, 2);
}

#ifdef UL_Z
/* 4 CBC chains on zmm, chain j in lane j (zgroup128's form), the four
 * keys' round keys made into zmm once (UL_MK_ZMM). */
UB_KERNEL void UL_FN(zmk_cbc4)(const ublock_sched *const *keys, uint8_t *ivs,
                               const uint8_t *const *in, uint8_t *const *out, size_t nblocks)
{
    const unsigned rounds = keys[0]->rounds;
    v512 kz[2 * (UBLOCK_MAX_ROUNDS + 1)], a, b;
    const void *kf[4], *kcp[1] = {kz};
    for (int j = 0; j < 4; j++)
        kf[j] = UL_FN(stored)(keys[j]);
    for (unsigned i = 0; i <= rounds; i++)
        UL_FN(zkget128)(kf, i, UL_MK_XMM, &kz[2 * i], &kz[2 * i + 1]);
    UL_FN(zsplit128)(v512_loadu(ivs), &a, &b);
    for (size_t i = 0; i < nblocks; i++) {
        const size_t o = 16 * i;
        const uint8_t *p[4] = {in[0] + o, in[1] + o, in[2] + o, in[3] + o};
        uint8_t *q[4] = {out[0] + o, out[1] + o, out[2] + o, out[3] + o};
        v512 pa, pb;
        UL_FN(zsplit128)(UL_FN(zload4)(p, 0), &pa, &pb);
        a = v512_xor(a, pa);
        b = v512_xor(b, pb);
        UL_FN(zenc128)(&a, &b, kcp, rounds, UL_MK_ZMM, 1);
        UL_FN(zstore4)(q, UL_FN(zmerge128)(a, b), 0);
    }
    v512_storeu(ivs, UL_FN(zmerge128)(a, b));
    kuai_wipe(kz, sizeof kz);
}
#endif

#ifdef UL_Y
/*
 * mk_cbc_group on ymm, two chains per vector (chain 2v in lane 0 of vector
 * v, 2v + 1 in lane 1; an odd last chain in both lanes), m in 2..UL_G128,
 * the pairs' round keys made into ymm once (UL_MK_YMM). Where the core
 * runs 256 bits at once (UL_YFULL) this is half the vector operations per
 * block of every chain; Zen 1 keeps the xmm group.
 */
UB_KERNEL void UL_FN(ymk_cbc_group)(const ublock_sched *const *keys, uint8_t *ivs,
                                    const uint8_t *const *in, uint8_t *const *out, size_t nblocks,
                                    int m)
{
#ifdef UL_Z
    if (m == 4 && UL_ZFULL) {
        UL_FN(zmk_cbc4)(keys, ivs, in, out, nblocks);
        return;
    }
    if (m == 3 && UL_ZFULL) {
        /* one zmm pass with chain 2 in lanes 2 and 3 as well: less than the
         * two ymm pairs (Xeon, 3 streams of 64 KiB: 3.09 -> 2.27 TSC cycles
         * per byte). Lane 3 computes what lane 2 does and stores the same
         * bytes after it, at each block after both lanes loaded it. */
        _Alignas(64) uint8_t iv4[64];
        const ublock_sched *k4[4] = {keys[0], keys[1], keys[2], keys[2]};
        const uint8_t *in4[4] = {in[0], in[1], in[2], in[2]};
        uint8_t *out4[4] = {out[0], out[1], out[2], out[2]};
        memcpy(iv4, ivs, 48);
        memcpy(iv4 + 48, ivs + 32, 16);
        UL_FN(zmk_cbc4)(k4, iv4, in4, out4, nblocks);
        memcpy(ivs, iv4, 48);
        kuai_wipe(iv4, sizeof iv4);
        return;
    }
#endif
    const int nv = UL_YV(m);
    const unsigned nk = 2 * (keys[0]->rounds + 1);
    v128 x[2][2 * (UBLOCK_MAX_ROUNDS + 1)];
    v256 a[UL_YV(UL_G128)], b[UL_YV(UL_G128)], kc[UL_YV(UL_G128)][2 * (UBLOCK_MAX_ROUNDS + 1)];
    const v256 *kcp[UL_YV(UL_G128)];
    for (int v = 0; v < nv; v++) {
        const int j[2] = {2 * v, 2 * v + 1 < m ? 2 * v + 1 : 2 * v};
        UL_FN(keys128s)(x[0], keys[j[0]]);
        UL_FN(keys128s)(x[1], keys[j[1]]);
        for (unsigned i = 0; i < nk; i++)
            kc[v][i] = _mm256_set_m128i(x[1][i], x[0][i]);
        kcp[v] = kc[v];
        UL_FN(yload128)(ivs + 16 * j[0], ivs + 16 * j[1], j[0] == j[1], &a[v], &b[v]);
    }
    kuai_wipe(x, sizeof x);
    for (size_t i = 0; i < nblocks; i++) {
        for (int v = 0; v < nv; v++) {
            const int j1 = 2 * v + 1 < m ? 2 * v + 1 : 2 * v;
            v256 pa, pb;
            UL_FN(yload128)(in[2 * v] + 16 * i, in[j1] + 16 * i, j1 == 2 * v, &pa, &pb);
            a[v] = v256_xor(a[v], pa);
            b[v] = v256_xor(b[v], pb);
        }
        UL_FN(yenc128)(a, b, kcp, keys[0]->rounds, m, UL_MK_YMM);
        for (int v = 0; v < nv; v++) {
            const int j1 = 2 * v + 1 < m ? 2 * v + 1 : 2 * v;
            UL_FN(ystore128)
            (out[2 * v] + 16 * i, j1 != 2 * v ? out[j1] + 16 * i : NULL, a[v], b[v]);
        }
    }
    for (int v = 0; v < nv; v++) {
        const int j1 = 2 * v + 1 < m ? 2 * v + 1 : 2 * v;
        UL_FN(ystore128)(ivs + 16 * 2 * v, j1 != 2 * v ? ivs + 16 * j1 : NULL, a[v], b[v]);
    }
    kuai_wipe(kc, (size_t)nv * sizeof kc[0]);
}

#ifdef UL_Z
/* 2 uBlock-256 CBC chains on zmm, chain j in 256-bit half j (zload2x256's
 * form), the two keys' round keys made into that form once, the rounds
 * round256_next's (4.91 -> 4.24 c/B against round256's; round256_chain's
 * form with its keys had measured 4.91 -> 5.19 here). */
UB_KERNEL void UL_FN(zmk_cbc256)(const ublock_sched *const *keys, uint8_t *ivs,
                                 const uint8_t *const *in, uint8_t *const *out, size_t nblocks)
{
    const unsigned rounds = keys[0]->rounds;
    UL_H x[2][2 * (UBLOCK_MAX_ROUNDS + 1)];
    v512 kz[2 * (UBLOCK_MAX_ROUNDS + 1)];
    UL_FN(keys256s)(x[0], keys[0]);
    UL_FN(keys256s)(x[1], keys[1]);
    for (unsigned i = 0; i < 2 * (rounds + 1); i++)
        kz[i] = _mm512_inserti64x4(_mm512_castsi256_si512(UL_FN(cjoin)(x[0][i])),
                                   UL_FN(cjoin)(x[1][i]), 1);
    kuai_wipe(x, sizeof x);
    v512 a, b, ia, ib;
    UL_FN(zload2x256)(ivs, ivs + 32, &a, &b);
    for (size_t i = 0; i < nblocks; i++) {
        const size_t o = 32 * i;
        UL_FN(zload2x256)(in[0] + o, in[1] + o, &ia, &ib);
        a = v512_xor3(a, ia, kz[0]);
        b = v512_xor3(b, ib, kz[1]);
        for (unsigned r = 1; r <= rounds; r++)
            UL_FN(zround256_next)(&a, &b, kz[2 * r], kz[2 * r + 1]);
        UL_FN(zstore2x256)(out[0] + o, out[1] + o, a, b);
    }
    UL_FN(zstore2x256)(ivs, ivs + 32, a, b);
    kuai_wipe(kz, sizeof kz);
}
#endif

/* mk_cbc_group256 on ymm for 2 chains (chain j in lane j; UL_YFULL as
 * above): the two keys' round keys made into ymm halves once. */
UB_KERNEL void UL_FN(ymk_cbc_group256)(const ublock_sched *const *keys, uint8_t *ivs,
                                       const uint8_t *const *in, uint8_t *const *out,
                                       size_t nblocks)
{
    const unsigned rounds = keys[0]->rounds;
    UL_H x[2][2 * (UBLOCK_MAX_ROUNDS + 1)];
    UL_HY kc[2 * (UBLOCK_MAX_ROUNDS + 1)];
    UL_FN(keys256s)(x[0], keys[0]);
    UL_FN(keys256s)(x[1], keys[1]);
    for (unsigned i = 0; i < 2 * (rounds + 1); i++)
        kc[i] = UL_FN(ymk256)(_mm256_set_m128i(x[1][i].l, x[0][i].l),
                              _mm256_set_m128i(x[1][i].h, x[0][i].h));
    kuai_wipe(x, sizeof x);
    UL_HY a = UL_FN(yload256v)(UL_FN(yload2)(ivs, ivs + 32, 0));
    UL_HY b = UL_FN(yload256v)(UL_FN(yload2)(ivs + 16, ivs + 48, 0));
    for (size_t i = 0; i < nblocks; i++) {
        const size_t o = 32 * i;
        a = UL_FN(yxor256)(a, UL_FN(yload256v)(UL_FN(yload2)(in[0] + o, in[1] + o, 0)));
        b = UL_FN(yxor256)(b, UL_FN(yload256v)(UL_FN(yload2)(in[0] + o + 16, in[1] + o + 16, 0)));
        for (unsigned r = 0; r < rounds; r++)
            UL_FN(yround256)(&a, &b, kc[2 * r], kc[2 * r + 1], 0, UL_DEEP256);
        a = UL_FN(yxor256)(a, kc[2 * rounds]);
        b = UL_FN(yxor256)(b, kc[2 * rounds + 1]);
        UL_FN(ystore2)(out[0] + o, out[1] + o, UL_FN(ymerge256)(a));
        UL_FN(ystore2)(out[0] + o + 16, out[1] + o + 16, UL_FN(ymerge256)(b));
    }
    UL_FN(ystore2)(ivs, ivs + 32, UL_FN(ymerge256)(a));
    UL_FN(ystore2)(ivs + 16, ivs + 48, UL_FN(ymerge256)(b));
    kuai_wipe(kc, sizeof kc);
}
#endif

/* m chains' CBC encryption kernels, one per m (mk_cbc_enc's tables) */
typedef void (*UL_FN(mk_cbc_fn))(const ublock_sched *const *, uint8_t *, const uint8_t *const *,
                                 uint8_t *const *, size_t);

#ifdef UL_Y
/* ymk_cbc_group with m constant in each, so that the chains stay in
 * registers (with m a variable they lived on the stack: 4 chains ran at
 * half speed). */
#define UL_YMK_CBC_KERNEL(m)                                                                       \
    static void UL_FN(ymk_cbc##m)(const ublock_sched *const *keys, uint8_t *ivs,                   \
                                  const uint8_t *const *in, uint8_t *const *out, size_t nblocks)   \
    {                                                                                              \
        UL_FN(ymk_cbc_group)(keys, ivs, in, out, nblocks, m);                                      \
    }
UL_YMK_CBC_KERNEL(2)
UL_YMK_CBC_KERNEL(3)
UL_YMK_CBC_KERNEL(4)
#undef UL_YMK_CBC_KERNEL
#endif

#define UL_MK_CBC_KERNEL(m)                                                                        \
    static void UL_FN(mk_cbc##m)(const ublock_sched *const *keys, uint8_t *ivs,                    \
                                 const uint8_t *const *in, uint8_t *const *out, size_t nblocks)    \
    {                                                                                              \
        if (m == 4) /* two pairs; one pair alone would wait on its S-box */                        \
            UL_FN(mk_cbc_groupp)(keys, ivs, in, out, nblocks, m);                                  \
        else                                                                                       \
            UL_FN(mk_cbc_group)(keys, ivs, in, out, nblocks, m);                                   \
    }
UL_MK_CBC_KERNEL(1)
UL_MK_CBC_KERNEL(2)
UL_MK_CBC_KERNEL(3)
UL_MK_CBC_KERNEL(4)
#undef UL_MK_CBC_KERNEL

/* ---- the backend seam ---------------------------------------------------- */

/* Multi-key "lane format": the schedules' addresses (every uBlock key
 * stores this kernel's form, which is all it reads). */
#define UL_MK_LANES 8
static void UL_FN(mk_setup)(kuai_mk *m, const kuai_key *const *keys, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const ublock_sched *s = ublock_sched_const(keys[i]);
        memcpy(m->b + i * sizeof s, &s, sizeof s);
    }
}

static void UL_FN(mk_enc)(const kuai_mk *m, const uint8_t *in, uint8_t *out, size_t n)
{
    UL_FN(crypt)((const ublock_sched *const *)(const void *)m->b, in, out, n, 1, 1);
}

static void UL_FN(mk_dec)(const kuai_mk *m, const uint8_t *in, uint8_t *out, size_t n)
{
    UL_FN(crypt)((const ublock_sched *const *)(const void *)m->b, in, out, n, 0, 1);
}

static void UL_FN(mk_cbc_enc)(const kuai_mk *mk, uint8_t *ivs, const uint8_t *const *in,
                              uint8_t *const *out, size_t n, size_t nblocks)
{
    const ublock_sched *const *keys = (const ublock_sched *const *)(const void *)mk->b;
    static const UL_FN(mk_cbc_fn)
        fns[2][5] = {{0, UL_FN(mk_cbc1), UL_FN(mk_cbc2), UL_FN(mk_cbc3), UL_FN(mk_cbc4)},
                     {0, UL_FN(mk_cbc256_1), UL_FN(mk_cbc256_2), 0, 0}};
    const size_t bs = keys[0]->nbytes, g = bs == 16 ? UL_G128 : UL_G256;
    while (n) {
        size_t m = n < g ? n : g;
#ifdef UL_Y
        if (m >= 2 && UL_YFULL) {
            static const UL_FN(mk_cbc_fn)
                yfns[5] = {0, 0, UL_FN(ymk_cbc2), UL_FN(ymk_cbc3), UL_FN(ymk_cbc4)};
            if (bs == 16)
                yfns[m](keys, ivs, in, out, nblocks);
            else
#ifdef UL_Z
                UL_FN(zmk_cbc256)(keys, ivs, in, out, nblocks);
#else
                UL_FN(ymk_cbc_group256)(keys, ivs, in, out, nblocks);
#endif
        } else
#endif
            fns[bs == 32][m](keys, ivs, in, out, nblocks);
        keys += m;
        ivs += bs * m;
        in += m;
        out += m;
        n -= m;
    }
}

/* One block (bs 16 or 32) as vector moves: a memcpy of variable length is
 * a call, and CBC decryption makes three per block. */
UB_KERNEL void UL_FN(copy_block)(uint8_t *dst, const uint8_t *src, size_t bs)
{
    for (size_t o = 0; o < bs; o += 16)
        v128_storeu(dst + o, v128_loadu(src + o));
}

/* n blocks under one key: crypt, and first 5..8 uBlock-128 blocks at a
 * time as one group of 8, 3..4 of 256/256 as one of 4 (g2). Here,
 * not in crypt, which the multi-key calls share: calls of one group pay
 * one test. */
static inline void UL_FN(crypt1)(const ublock_sched *s, const uint8_t *in, uint8_t *out, size_t n,
                                 int enc)
{
#ifdef UL_Y
    const size_t g = s->nbytes == 16 ? UL_G128 : UL_G256;
    if (n > g) {
        const UL_FN(gkey) k = {UL_FN(rows)(s), NULL, s->rounds};
        while (n > g && UL_FN(g2)(&k, s->nbytes, &in, &out, &n, enc))
            ;
    }
#endif
    UL_FN(crypt)(&s, in, out, n, enc, 0);
}

/*
 * The mk_short hook: n streams of nblocks blocks each (below the
 * crossover), stream i from in[i] to out[i] under keys[i], straight from
 * each key's stored forms and on the callers' buffers. Blocks are taken in
 * order (stream by stream) into groups of UL_G128 / UL_G256: a group of
 * one stream's blocks runs under its one key, any other (one block of each
 * of 4 streams, a stream's tail with the next one's head) as a multi-key
 * group; where ymm runs whole but zmm does not (UL_MK8), up to 8
 * uBlock-128 blocks of several streams go at once as two multi-key groups
 * side by side (groupp8); in the avx512 build streams of more than half a
 * group take groups of their own where sharing would not save a group
 * (by_stream). Streams of more than a group's blocks never come here
 * (mk_short_blocks, ublock_ll_front.h). Only which stream a block
 * belongs to (public) picks the kernel.
 * CBC decryption (ivs) keeps a copy of each group's ciphertext (public)
 * for the XOR, since out[i] may be in[i].
 */
UB_KERNEL void UL_FN(mk_short_bs)(const kuai_key *const *keys, uint8_t *const *ivs,
                                  const uint8_t *const *in, uint8_t *const *out, size_t n,
                                  size_t nblocks, int enc, const size_t bs)
{
    static const UL_FN(group_fn)
        one[2][5] = {{0, UL_FN(dec1), UL_FN(dec2), UL_FN(dec3), UL_FN(dec4)},
                     {0, UL_FN(enc1), UL_FN(enc2), UL_FN(enc3), UL_FN(enc4)}};
    static void (*const many[2][5])(const ublock_sched *const *, const uint8_t *const *,
                                    uint8_t *const *) = {
        {0, UL_FN(pmkdec1), UL_FN(pmkdec2), UL_FN(pmkdec3), UL_FN(pmkdec4)},
        {0, UL_FN(pmkenc1), UL_FN(pmkenc2), UL_FN(pmkenc3), UL_FN(pmkenc4)}};
    const size_t g = bs == 16 ? UL_G128 : UL_G256;
#ifdef UL_Y
    static void (*const many8[2][4])(const ublock_sched *const *, const uint8_t *const *,
                                     uint8_t *const *) = {
        {UL_FN(pmkdec8_5), UL_FN(pmkdec8_6), UL_FN(pmkdec8_7), UL_FN(pmkdec8_8)},
        {UL_FN(pmkenc8_5), UL_FN(pmkenc8_6), UL_FN(pmkenc8_7), UL_FN(pmkenc8_8)}};
    const size_t gmax = bs == 16 && UL_MK8 ? 2 * UL_G128 : g;
#define UL_MANY(ks, src, dst, m) ((m) > g ? many8[enc][(m)-g - 1] : many[enc][m])(ks, src, dst)
#else
    const size_t gmax = g;
#define UL_MANY(ks, src, dst, m) many[enc][m](ks, src, dst)
#endif
    const ublock_sched *ks[2 * UL_G128];
    const uint8_t *src[2 * UL_G128];
    uint8_t *dst[2 * UL_G128];
    size_t sid[2 * UL_G128], tt[2 * UL_G128], m = 0;
    _Alignas(16) uint8_t ct[2 * UL_G128][32], carry[32];
    enc = enc != 0;
    if (!ivs && nblocks == 1) {
        /* one block a stream (ECB): groups of streams straight from the
         * callers' arrays, none of the bookkeeping below */
        for (size_t i = 0, w; i < n; i += w) {
            w = n - i < gmax ? n - i : gmax;
            for (size_t j = 0; j < w; j++)
                ks[j] = ublock_sched_const(keys[i + j]);
            if (w == 1)
                one[enc][1](ks, in[i], out[i]);
            else
                UL_MANY(ks, in + i, out + i, w);
        }
        return;
    }
#ifdef UL_Z
    /* In the avx512 build a group under several keys costs more than one
     * key's (each lane's round keys loaded a round beside the round's
     * shuffles, against one key's one load), more than ymm's and xmm's
     * do: there a stream of more than half a group takes groups of its
     * own unless sharing saves a group (whole zmm), or always (zmm split:
     * the EVEX ymm groups of one key are fast, groupp8's not). Measured, uBlock-128/128 ECB, TSC
     * cycles against the single-key calls one by one (Xeon, Sapphire Rapids): 2 streams x 3 blocks
     * 288 -> 241 (single 223), 3 x 3 437 -> 356 (334); zmm split, 2 x 4 338 -> 234 (227), 4 x 3 508
     * -> 471 (446). Shared groups of 4 x 3 blocks on whole zmm stay (470; by stream 483), as do
     * ymm's and xmm's everywhere (avx2, 4 x 3: 588 against 794 by stream; ssse3 820 against 958).
     */
    const int by_stream = 2 * nblocks > g && (!UL_ZFULL || (n * nblocks + g - 1) / g >= n);
#else
    const int by_stream = 0;
#endif
    if (by_stream && !ivs) {
        for (size_t i = 0; i < n; i++) {
            const ublock_sched *s = ublock_sched_const(keys[i]);
            UL_FN(crypt)(&s, in[i], out[i], nblocks, enc, 0);
        }
        return;
    }
    for (size_t i = 0; i < n; i++) {
        const ublock_sched *s = ublock_sched_const(keys[i]);
        for (size_t t = 0; t < nblocks; t++) {
            ks[m] = s;
            src[m] = in[i] + t * bs;
            dst[m] = out[i] + t * bs;
            sid[m] = i;
            tt[m] = t;
            if (++m < gmax && !(t == nblocks - 1 && (by_stream || i == n - 1)))
                continue;
            if (ivs)
                for (size_t j = 0; j < m; j++)
                    UL_FN(copy_block)(ct[j], src[j], bs);
            if (sid[0] == sid[m - 1] && m <= g) { /* one stream: its blocks are contiguous */
                /* one key's 256/256 pair through crypt, which runs it on
                 * ymm where ymm runs whole (yenc2); one[enc][2] had run it
                 * on xmm: 2 streams x 2 blocks 881 -> 410 TSC cycles
                 * (avx512), 957 -> 677 (avx2) (Xeon, Sapphire Rapids) */
                if (bs == 32)
                    UL_FN(crypt)(ks, src[0], dst[0], m, enc, 0);
                else
                    one[enc][m](ks, src[0], dst[0]);
            } else {
                UL_MANY(ks, src, dst, m);
            }
            if (ivs) {
                for (size_t j = 0; j < m; j++) {
                    const uint8_t *prev = tt[j] == 0 ? ivs[sid[j]] : j ? ct[j - 1] : carry;
                    for (size_t o = 0; o < bs; o += 16)
                        v128_storeu(dst[j] + o,
                                    v128_xor(v128_loadu(dst[j] + o), v128_loadu(prev + o)));
                    if (tt[j] == nblocks - 1)
                        UL_FN(copy_block)(ivs[sid[j]], ct[j], bs);
                }
                UL_FN(copy_block)(carry, ct[m - 1], bs);
            }
            m = 0;
        }
    }
#undef UL_MANY
}
#undef UL_MK8

/* bs constant in each copy: the block moves and XORs become fixed moves */
static void UL_FN(mk_short)(const kuai_key *const *keys, uint8_t *const *ivs,
                            const uint8_t *const *in, uint8_t *const *out, size_t n, size_t nblocks,
                            int enc)
{
    if (ublock_sched_const(keys[0])->nbytes == 16)
        UL_FN(mk_short_bs)(keys, ivs, in, out, n, nblocks, enc, 16);
    else
        UL_FN(mk_short_bs)(keys, ivs, in, out, n, nblocks, enc, 32);
}

/* Single key: below the crossover (the calling file's, measured) the
 * blocks go here, above it to the wide kernel. */
static void UL_FN(enc_blocks)(const kuai_key *k, const uint8_t *in, uint8_t *out, size_t n)
{
    UL_FN(crypt1)(ublock_sched_const(k), in, out, n, 1);
}

static void UL_FN(dec_blocks)(const kuai_key *k, const uint8_t *in, uint8_t *out, size_t n)
{
    UL_FN(crypt1)(ublock_sched_const(k), in, out, n, 0);
}

static void UL_FN(cbc_enc_blocks)(const kuai_key *k, uint8_t *iv, const uint8_t *in, uint8_t *out,
                                  size_t n)
{
    const ublock_sched *s = ublock_sched_const(k);
    if (s->nbytes == 16)
        UL_FN(cbc_enc128)(s, iv, in, out, n);
    else
        UL_FN(cbc_enc256)(s, iv, in, out, n);
}

#ifdef UL_Z
/* 4 counter blocks as one zmm */
UB_KERNEL __m512i UL_FN(ctr_z4)(const v128 *b)
{
    return _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_set_m128i(b[1], b[0])),
                              _mm256_set_m128i(b[3], b[2]), 1);
}
#endif

/* The counter blocks of w + 0..m-1 (nw 64-bit words a block; m <= 8 for
 * uBlock-128, 4 for 256/256) into ks, for the group kernels to load, and w
 * advanced by m. Each 16 bytes are made in a register and stored whole,
 * and 4 or more uBlock-128 blocks as the groups load them: a 64-byte store
 * per zmm vector (the second one zero-padded), 32-byte ones for ymm pairs
 * (gcc makes their two 16-byte loads of contiguous blocks one).
 * A load gets its bytes from the store buffer only where one store holds
 * them all; ub_ctr_fill's 8-byte stores made the group's loads wait for
 * them to reach the cache (CTR of 64 bytes, avx2: 229 -> 201 TSC cycles
 * with the 32-byte stores; 16-byte ones had measured 248 -> 273). Not for 4
 * or more uBlock-128 blocks on xmm (ssse3, neon, lsx), where 16-byte stores
 * measured slower than ub_ctr_fill's (ssse3 308 -> 319; not understood),
 * nor across a carry out of the low word (rare). Xeon, Sapphire Rapids. */
UB_KERNEL void UL_FN(ctr_fill)(uint8_t *ks, uint64_t *w, unsigned nw, unsigned m)
{
#if defined(UL_Z) || defined(UL_Y)
    const int wide4 = 0;
#else
    const int wide4 = nw == 2 && m >= 4;
#endif
    if (w[nw - 1] > UINT64_MAX - m || wide4) {
        ub_ctr_fill(ks, w, nw, m);
        return;
    }
    v128 b[8];
    const uint64_t p0 = __builtin_bswap64(w[0]);
    const uint64_t p1 = nw == 4 ? __builtin_bswap64(w[1]) : 0;
    const uint64_t p2 = nw == 4 ? __builtin_bswap64(w[2]) : 0;
    for (unsigned i = 0; i < m; i++) {
        const uint64_t low = __builtin_bswap64(w[nw - 1] + i);
        if (nw == 2) {
            b[i] = v128_set64x2(p0, low);
        } else {
            b[2 * i] = v128_set64x2(p0, p1);
            b[2 * i + 1] = v128_set64x2(p2, low);
        }
    }
    w[nw - 1] += m;
#ifdef UL_Z
    if (nw == 4 && m >= 2) { /* a pair of 256-bit blocks as zload2x256 loads it */
        _mm512_storeu_si512((void *)ks, UL_FN(ctr_z4)(b));
        if (m == 4)
            _mm512_storeu_si512((void *)(ks + 64), UL_FN(ctr_z4)(b + 4));
        else if (m == 3)
            _mm256_storeu_si256((__m256i *)(void *)(ks + 64), _mm256_set_m128i(b[5], b[4]));
        return;
    }
    if (nw == 2 && m >= 4) {
        _mm512_storeu_si512((void *)ks, UL_FN(ctr_z4)(b));
        if (m > 4) { /* blocks 4..m-1, zeros after them */
            for (unsigned i = m; i < 8; i++)
                b[i] = v128_zero();
            _mm512_storeu_si512((void *)(ks + 64), UL_FN(ctr_z4)(b + 4));
        }
        return;
    }
#elif defined(UL_Y)
    if (nw == 2 && m >= 4) { /* pairs as 32 bytes, an odd last block as 16 */
        for (unsigned q = 0; q + 1 < m; q += 2)
            _mm256_storeu_si256((__m256i *)(void *)(ks + 16 * q), _mm256_set_m128i(b[q + 1], b[q]));
        if (m & 1)
            v128_storeu(ks + 16 * (m - 1), b[m - 1]);
        return;
    }
#endif
    for (unsigned j = 0; j < m * nw / 2; j++)
        v128_storeu(ks + 16 * j, b[j]);
}

/* CTR for few blocks: counter blocks built here (public), encrypted in
 * place, XORed in. */
static void UL_FN(ctr_blocks)(const kuai_key *k, uint8_t *ctr, const uint8_t *in, uint8_t *out,
                              size_t n)
{
    const ublock_sched *s = ublock_sched_const(k);
    /* the block size read once: out may alias *s as far as the compiler
     * knows, and the XOR below, reading s->nbytes again after every byte
     * stored, was a byte loop (uBlock-128/128 CTR of 64 bytes 240 -> 164
     * TSC cycles on avx512, 298 -> 248 on avx2; Xeon, Sapphire Rapids) */
    const size_t bs = s->nbytes;
    const unsigned nw = (unsigned)(bs / 8);
    uint64_t w[4];
    _Alignas(16) uint8_t ks[4 * 32];
    ub_ctr_read(w, ctr, nw);
    while (n) {
        /* 8 uBlock-128 blocks (a group of 8 or 2 of 4: crypt), 4 of 256/256
         * (2 groups); ks holds either */
        const size_t g = bs == 16 ? 8 : 4, m = n < g ? n : g;
        UL_FN(ctr_fill)(ks, w, nw, (unsigned)m);
        UL_FN(crypt1)(s, ks, ks, m, 1);
        for (size_t o = 0; o < m * bs; o += 16)
            v128_storeu(out + o, v128_xor(v128_loadu(in + o), v128_load(ks + o)));
        in += m * bs;
        out += m * bs;
        n -= m;
    }
    ub_ctr_write(ctr, w, nw);
    kuai_wipe(ks, sizeof ks);
}

#undef UL_R128

#include "ublock_ll_oneshot.h"
#undef UL_H
#ifdef UL_Y
#undef UL_HY
#undef UL_YV
#endif

#include "ublock_ll_front.h"
