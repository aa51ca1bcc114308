/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The body of the nibble key setup (ublock_expand_nib.h) over one vector
 * width, included once per width: UBE_FN is the function's name, UBE_S the
 * schedule state (ublock_ks.h's ub_ks, ub_ksy or ub_ksz) of vectors UBE_T,
 * UBE_OP the vocabulary's op, UBE_ROW(p) a 16-byte row in every 128-bit
 * lane, UBE_N the schedules a state runs side by side (one per 128-bit
 * lane), UBE_PUT(p, off, x, y) stores lane j of x at p[j] + off and lane j
 * of y at p[j] + off + 16 (p[j]: schedule j's kernel form), schedule by
 * schedule: four keys in one zmm 182 -> 162 TSC cycles against lane after
 * lane (Xeon, Emerald Rapids; the likely reading: two stores in a row to
 * one cache line leave the store buffer together, and the several-key
 * setups are bound by their stores). The state comes in initialised
 * (ub_ks_init, ub_ksy_init, ub_ksz_init). Where the including file defines
 * UB_KS_UNROLL, uBlock-128/256's round loop is unrolled: the row addresses
 * of round r & 7 then are constants, and the loop's index arithmetic (a
 * third of its instructions) goes away, and so is uBlock-128/128's for four
 * keys on zmm, whose index arithmetic took ports 0 and 5 from its 10
 * shuffles and 8 logic operations a pass: kuai_key_init_multi of 4 keys
 * 110 -> 102 TSC cycles (Xeon, Sapphire Rapids). (128/128's for one key,
 * unrolled too, measured level or slower in the rows that use the key at
 * once; 256/256's made kuai_key_init_multi of two keys 1.27x slower.) UBE_STORE_NOW (optional):
 * each round's rows stored as it is made, not a round late (below).
 * UBE_KS128_FRAMES (optional, 0 or 1): 1 runs uBlock-128/128's key setup
 * in the two frames (ub_ks_step128f) instead of drifting (ub_ks128d):
 * AVX2's several keys on ymm, where the drift measured slower (below).
 */
#ifndef UBE_KS128_FRAMES
#define UBE_KS128_FRAMES 0
#endif
/* UB_KS_SHORT_KX (defined by the including file, optional): the 24-round
 * members' step with its shorter chain (ublock_ks_step.h's short_kx) */
#ifdef UB_KS_SHORT_KX
#define UBE_SHORT_KX 1
#else
#define UBE_SHORT_KX 0
#endif

/* the schedule's steps for UBE_S (ublock_ks_step.h's names: ub_ks_stepf,
 * ub_ksy_frames, ...) */
#define UBE_CAT_(a, b) a##b
#define UBE_CAT(a, b) UBE_CAT_(a, b)
#define UBE_STEPF UBE_CAT(UBE_S, _stepf)
#define UBE_FRAMES UBE_CAT(UBE_S, _frames)
#define UBE_STEP128F UBE_CAT(UBE_S, _step128f)
#define UBE_FRAMES128 UBE_CAT(UBE_S, _frames128)
#define UBE_DRIFT128_INIT UBE_CAT(UBE_S, _drift128_init)
#define UBE_DRIFT128_STEP UBE_CAT(UBE_S, _drift128_step)
#define UBE_ROWS_FN UBE_CAT(UBE_FN, _rows)

/* The rows alone: schedule j's kernel form at llk[j] (17 or 25 rows of
 * 32 bytes), from the state ks (the one-shot calls' stack copy takes this;
 * UBE_FN below, the key's own); frames (a constant at each call): 1 runs
 * uBlock-128/128 in the two frames, 0 drifting. */
static inline __attribute__((always_inline)) void UBE_ROWS_FN(uint8_t *const *llk, UBE_S *ks,
                                                              int frames)
{
    /* Round r's row p: the key register's natural nibble order to the
     * low-latency kernel's load layout (ublock_ll.h's load128: the high
     * nibbles of a half's bytes, then the low ones), then to the layout of
     * round r (ub128_tab's key row for r & 7): ublock_llk_p[0][r & 7], or
     * [1][r & 7] for a vector the schedule holds in its swapped frame (the
     * layouts drift by the same permutation every round; derived from
     * ub128_tab; tests check the forms against ref). uBlock-256/256: the
     * natural order to layout L of a half's two vectors (ub256_tab's to_l
     * after load256v's split; no drift), both stored in one: l's nibble
     * low, h's high (UBLOCK_LLK_*). ublock_sched.c holds the tables and
     * the scalar inverse. */
    /* Each round's key rows are stored a round late (p: the vectors of the
     * round before), so that their two shuffles come after the next round's
     * own in program order and take the shuffle ports after the schedule's
     * chain, not before it: key setup alone 53.5 -> 48.4 / 64.6 -> 60.5 /
     * 104.7 -> 92.9 TSC cycles on avx512 (with ublock_ks_step.h's
     * three-input kx), 53.2 -> 52.1 / 71.9 -> 68.9 / 103.5 -> 92.8 on avx2,
     * 52.9 -> 52.3 / 81.6 -> 78.9 / 101.1 -> 95.4 on ssse3; four keys on
     * zmm 115 -> 107 / 148 -> 139 (Xeon, Sapphire Rapids). Not where the
     * including file defines UBE_STORE_NOW (ublock_avx2_keys4.c: its pairs
     * of states spill, and the kept rows spilled more: four keys 116 ->
     * 118 / 172 -> 179 / 116 -> 120 so). */
#ifdef UBE_STORE_NOW
#define UBE_DEFER 0
#else
#define UBE_DEFER 1
#endif
    UBE_T p[4];
#define UBE_KEEP()                                                                                 \
    do {                                                                                           \
        p[0] = ks->k0;                                                                             \
        p[1] = ks->k1;                                                                             \
        p[2] = ks->k2;                                                                             \
        p[3] = ks->k3;                                                                             \
    } while (0)
/* round r just made (its frame sw, the round before's swp): the rows kept
 * stored where deferred, round r's kept, and stored where not */
#define UBE_NEXT(STORE, r, swp, sw)                                                                \
    do {                                                                                           \
        if (UBE_DEFER)                                                                             \
            STORE((r)-1, swp);                                                                     \
        UBE_KEEP();                                                                                \
        if (!UBE_DEFER)                                                                            \
            STORE(r, sw);                                                                          \
    } while (0)
    const int t = ks->t;
#define UBE_STORE128(r, sw)                                                                        \
    UBE_PUT(llk, 32 * (r), UBE_OP(shuf8)(p[0], UBE_ROW(ublock_llk_p[sw][(r)&7])),                  \
            UBE_OP(shuf8)(p[1], UBE_ROW(ublock_llk_p[!(sw)][(r)&7])))
    if (t == 3) {
        /* 128/256's two frames (PK3's K1 half is PK2's): round r's K0 and
         * K3 are in the swapped frame for even r, K1 and K2 in the other
         * (ublock_ks_step.h); a swapped vector takes the row with each
         * index's bit 3 flipped. Key setup alone 131-143 -> 125-137 TSC
         * cycles (avx512), 122-137 -> 116-131 (avx2); two keys 0.94-0.98x
         * (Xeon, Emerald Rapids; one process with the build before) */
        const UBE_T pl0 = UBE_ROW(ublock_llk_pl[0]), pl1 = UBE_ROW(ublock_llk_pl[1]);
        const UBE_T pl0s = UBE_OP(xor)(pl0, UBE_OP(set1_8)(8));
        const UBE_T pl1s = UBE_OP(xor)(pl1, UBE_OP(set1_8)(8));
#define UBE_STORE256(r, sw)                                                                        \
    UBE_PUT(llk, 32 * (r),                                                                         \
            UBE_OP(or)(UBE_OP(shuf8)(p[0], (sw) ? pl0s : pl0),                                     \
                       UBE_OP(sll64)(UBE_OP(shuf8)(p[1], (sw) ? pl1 : pl1s), 4)),                  \
            UBE_OP(or)(UBE_OP(shuf8)(p[2], (sw) ? pl0 : pl0s),                                     \
                       UBE_OP(sll64)(UBE_OP(shuf8)(p[3], (sw) ? pl1s : pl1), 4)))
        UBE_FRAMES(ks);
        UBE_KEEP();
        if (!UBE_DEFER)
            UBE_STORE256(0, 1);
        for (unsigned r = 1; r <= 24; r += 2) {
            UBE_STEPF(ks, r, 0, 0, UBE_SHORT_KX);
            UBE_NEXT(UBE_STORE256, r, 1, 0);
            UBE_STEPF(ks, r + 1, 1, 0, UBE_SHORT_KX);
            UBE_NEXT(UBE_STORE256, r + 1, 0, 1);
        }
        if (UBE_DEFER)
            UBE_STORE256(24, 1);
#undef UBE_STORE256
    } else if (t == 2) {
        /* the two-frame step (ublock_ks_step.h: no shuffle for PK's K1
         * half): round r's K0 is in the swapped frame for even r, K1 in the
         * other; two rounds a pass, so that each frame is a constant */
        UBE_FRAMES(ks);
        UBE_KEEP();
        if (!UBE_DEFER)
            UBE_STORE128(0, 1);
#ifdef UB_KS_UNROLL
#pragma GCC unroll 12
#endif
        for (unsigned r = 1; r <= 24; r += 2) {
            UBE_STEPF(ks, r, 0, 0, UBE_SHORT_KX);
            UBE_NEXT(UBE_STORE128, r, 1, 0);
            UBE_STEPF(ks, r + 1, 1, 0, UBE_SHORT_KX);
            UBE_NEXT(UBE_STORE128, r + 1, 0, 1);
        }
        if (UBE_DEFER)
            UBE_STORE128(24, 1);
    } else if (frames) {
        /* uBlock-128/128's two frames (ub_ks_step128f): round r's K0||K1
         * is in the swapped frame for odd r, K2||K3 in the other */
        UBE_FRAMES128(ks);
        UBE_KEEP();
        if (!UBE_DEFER)
            UBE_STORE128(0, 0);
#if defined(UB_KS_UNROLL) && UBE_N == 4
#pragma GCC unroll 8
#endif
        for (unsigned r = 1; r <= 16; r += 2) {
            UBE_STEP128F(ks, r, 1);
            UBE_NEXT(UBE_STORE128, r, 0, 1);
            UBE_STEP128F(ks, r + 1, 0);
            UBE_NEXT(UBE_STORE128, r + 1, 1, 0);
        }
        if (UBE_DEFER)
            UBE_STORE128(16, 0);
    } else {
        /* uBlock-128/128 drifting (ublock_ks.h's ub_ks128d, whose rows
         * scripts/gen-ublock-ks128 derives; ub_ks_drift128_step): o0 and o1
         * round r's two rows, stored a round late as above. Against the two frames
         * (ub_ks_step128f): no PK1 shuffle on the chain and no blend, key setup alone 0.84x the TSC
         * cycles on avx512, 0.88x on avx2, 0.93x on ssse3 (Xeon, Sapphire Rapids;
         * docs/performance.md). Unrolled: the rows' addresses are constants. */
        UBE_DRIFT128_INIT(ks);
        UBE_T o0 = UBE_OP(shuf8)(ks->k0, UBE_ROW(ub_ks128d[2][0]));
        UBE_T o1 = UBE_OP(shuf8)(ks->k1, UBE_ROW(ub_ks128d[3][0]));
#pragma GCC unroll 16
        for (unsigned r = 1; r <= 16; r++) {
            UBE_PUT(llk, 32 * (r - 1), o0, o1);
            UBE_DRIFT128_STEP(ks, r);
            o0 = UBE_OP(shuf8)(ks->k0, UBE_ROW(ub_ks128d[2][r]));
            o1 = UBE_OP(shuf8)(ks->k1, UBE_ROW(ub_ks128d[3][r]));
        }
        UBE_PUT(llk, 32 * 16, o0, o1);
    }
#undef UBE_STORE128
#undef UBE_NEXT
#undef UBE_KEEP
#undef UBE_DEFER
#undef UBE_STORE_NOW
}

static inline __attribute__((always_inline)) void UBE_FN(ublock_sched *const *s, UBE_S *ks)
{
    const int t = ks->t;
    const unsigned rounds = ks->rounds;
    /* the forms' addresses held here: the stores (bytes) may alias s[].
     * The loop unrolled, so that they live in registers: as a loop gcc kept
     * llk[] on the stack and reloaded an address before each of the four-key
     * setup's 8 stores a round (the asm stores might write it), and four
     * keys' setup took 128 -> 110 and 158 -> 139 TSC cycles (avx512,
     * uBlock-128/128 and 128/256, Xeon, Sapphire Rapids) */
    uint8_t *llk[UBE_N];
#pragma GCC unroll 4
    for (int j = 0; j < UBE_N; j++) {
        ublock_sched *sj = s[j];
        /* opaque: gcc made the four-key form of this loop a scatter
         * (vpscatterqd), slower than four plain stores */
        __asm__("" : "+r"(sj));
        sj->nbytes = t == 3 ? 32 : 16;
        sj->rounds = rounds;
        llk[j] = sj->ext + UBLOCK_LLK_OFF;
    }
    UBE_ROWS_FN(llk, ks, UBE_KS128_FRAMES);
    for (int j = 0; j < UBE_N; j++) {
        ublock_sched *sj = s[j];
        __asm__("" : "+r"(sj)); /* as above */
        sj->raw = 0;            /* rk left unwritten: ublock_rk_row derives it */
    }
}

#undef UBE_FN
#undef UBE_S
#undef UBE_T
#undef UBE_OP
#undef UBE_ROW
#undef UBE_N
#undef UBE_PUT
#undef UBE_CAT_
#undef UBE_CAT
#undef UBE_STEPF
#undef UBE_FRAMES
#undef UBE_STEP128F
#undef UBE_FRAMES128
#undef UBE_DRIFT128_INIT
#undef UBE_DRIFT128_STEP
#undef UBE_ROWS_FN
#undef UBE_KS128_FRAMES
#undef UBE_SHORT_KX
