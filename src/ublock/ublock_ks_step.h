/* SPDX-License-Identifier: Apache-2.0 */
/*
 * One round of the nibble key schedule (ublock_ks.h) over one vector
 * width, included once per width: UBK_S is the state type (its vectors of
 * type UBK_T), UBK_OP(op) the vocabulary's op, UBK_ROW(t, r) a row of
 * ublock_ks_rc in every 128-bit lane, UBK_OP(swap64)(x) the two qwords of
 * every lane swapped, UBK_STEP the function's name. Every operation works
 * per 128-bit lane, so a ymm state runs two schedules (one per lane).
 */

#define UBK_CAT_(a, b) a##b
#define UBK_CAT(a, b) UBK_CAT_(a, b)
#define UBK_DRIFT128_INIT UBK_CAT(UBK_S, _drift128_init)
#define UBK_DRIFT128_STEP UBK_CAT(UBK_S, _drift128_step)

#ifdef UBK_INIT
/*
 * The state of the schedules from their keys' bytes, lane by lane: b0 holds
 * bytes 0-15 of each lane's key, b1 bytes 16-31 (256-bit keys; unused for
 * uBlock-128/128). The key register is one nibble per byte, each byte's high
 * nibble first: for 128-bit keys k0 = K0||K1, k1 = K2||K3; for 256-bit keys
 * k0..k3 = K0..K3. The including file moves each key into its lane first
 * (ub_ksy_init, ub_ksz_init: loads into lanes, no shuffle of the state).
 */
static inline __attribute__((always_inline)) void UBK_INIT(UBK_S *s, kuai_cipher c, UBK_T b0,
                                                           UBK_T b1)
{
    const UBK_T m = UBK_OP(set1_8)(0x0f);
#define UBK_NIB2(b, n0, n1)                                                                        \
    do {                                                                                           \
        const UBK_T hi_ = UBK_OP(and)(UBK_OP(srl64)(b, 4), m), lo_ = UBK_OP(and)(b, m);            \
        (n0) = UBK_OP(unpacklo8)(hi_, lo_);                                                        \
        (n1) = UBK_OP(unpackhi8)(hi_, lo_);                                                        \
    } while (0)
    s->sbox = UBK_OP(row16)(ub_ks_const[0]);
    s->tk = UBK_OP(row16)(ub_ks_const[1]);
    s->lo80 = UBK_OP(row16)(ub_ks_const[2]);
    UBK_NIB2(b0, s->k0, s->k1);
    if (c == KUAI_UBLOCK_128_128) {
        s->t = 1;
        s->rounds = 16;
        s->pk0 = UBK_OP(row16)(ublock_pk1);
        s->pk1 = s->pk0;
        s->k2 = s->k3 = UBK_OP(zero)();
        s->kx = UBK_OP(xor)(s->k0, UBK_ROW(1, 0));
        return;
    }
    s->t = c == KUAI_UBLOCK_128_256 ? 2 : 3;
    s->rounds = 24;
    const uint8_t *pkb = s->t == 2 ? ublock_pk2 : ublock_pk3;
    s->pk0 = UBK_OP(row16)(pkb);
    /* PK2/3 take K1's nibbles from K1 only (16..31): ^ 16 is - 16 there */
    s->pk1 = UBK_OP(xor)(UBK_OP(row16)(pkb + 16), UBK_OP(set1_8)(16));
    UBK_NIB2(b1, s->k2, s->k3);
    s->kx = UBK_OP(xor)(s->k0, UBK_ROW(2, 0)); /* row 2 serves PK3 too */
#undef UBK_NIB2
}
#endif

/*
 * Round r (1..rounds) of the schedule: the register now gives RK_r.
 * zero_last (a constant at each call): what the step of the last round
 * folds into kx, which nothing reads after it. 0: the tables' next row as
 * in every other step (row 24 of ublock_ks_rc is 0; key setup: 21% fewer
 * instructions than choosing). 1: 0, chosen by a compare and a branch a
 * round (the one-shot kernels, where the row load measured slower on
 * Zen 1, e.g. uBlock-256/256 with one key 677 -> 734 cycles).
 */
static inline __attribute__((always_inline)) void UBK_STEP(UBK_S *s, unsigned r, int zero_last)
{
    if (s->t == 1) {
        UBK_T rcx = UBK_ROW(0, r - 1);
        UBK_T q = UBK_OP(shuf8)(s->kx, s->pk0); /* PK(K0||K1) ^ rcx */
        UBK_T sk = UBK_OP(shuf8z)(s->sbox, q);  /* bit 7 of K1's half: 0 */
        UBK_T t = UBK_OP(shuf8z)(s->tk, UBK_OP(xor)(q, UBK_OP(xor)(rcx, s->lo80)));
        UBK_T k1t = UBK_OP(xor)(s->k1, t);
        UBK_T next = zero_last && r >= 16 ? UBK_OP(zero)() : UBK_ROW(1, r);
        s->kx = UBK_OP(xor)(UBK_OP(xor)(k1t, next), sk);
        s->k0 = UBK_OP(xor)(k1t, sk);
        s->k1 = UBK_OP(swap64)(UBK_OP(xor)(q, rcx)); /* K1' || K0' */
        return;
    }
    /* RC nibbles, then 0 (Sk covers all of K0 here): ub_ks_rcf's row, a
     * load, where masking ublock_ks_rc's cost a shuffle-unit op a round */
    UBK_T rcx = UBK_ROWF(0, r - 1);
    UBK_T q = UBK_OP(shuf8)(s->kx, s->pk0); /* PK(K0) ^ rcx */
    UBK_T p1 = UBK_OP(shuf8)(s->k1, s->pk1);
    UBK_T sk = UBK_OP(shuf8)(s->sbox, q);
    UBK_T next = zero_last && r >= 24 ? UBK_OP(zero)() : UBK_ROW(2, r);
    s->kx = UBK_OP(xor)(UBK_OP(xor)(s->k2, next), sk);
    s->k0 = UBK_OP(xor)(s->k2, sk);
    s->k1 = UBK_OP(xor)(s->k3, UBK_OP(shuf8)(s->tk, p1));
    s->k2 = p1;
    s->k3 = UBK_OP(xor)(q, rcx);
}

/*
 * uBlock-128/256's and 256/256's schedule with one pshufb fewer a round.
 * PK2's and PK3's K1 half only exchanges K1's 64-bit halves, so instead
 * of moving the nibbles the register runs in two frames, the normal one
 * and the swapped one (nibble j at position j ^ 8), exchanged every
 * round. After UBK_FRAMES (once, after init) and UBK_STEPF of rounds 1,
 * 2, ... in order, round r's K0 (s->k0) is in the swapped frame for even
 * r (0 too) and the normal one for odd r, K1 (s->k1) in the other one;
 * K2 (s->k2, the earlier K1) is in K1's frame, K3 (s->k3) in K0's (what
 * uBlock-256/256's round keys read). sw = !(r & 1), a constant where the
 * caller's loop runs two rounds a pass. PK's K0 half reads one frame and
 * writes the other (rows pkn, pks); the round constants of the swapped
 * rounds are ub_ks_rcf's.
 */
static inline __attribute__((always_inline)) void UBK_FRAMES(UBK_S *s)
{
    s->k0 = UBK_OP(swap64)(s->k0);
    s->kx = UBK_OP(swap64)(s->kx);
    s->k3 = UBK_OP(swap64)(s->k3);
    s->rcp = UBK_OP(zero)();
    s->pkn = UBK_OP(xor)(s->pk0, UBK_OP(set1_8)(8)); /* swapped -> normal */
    s->pks = UBK_OP(swap64)(s->pk0);                 /* normal -> swapped */
}

/* lazy3 (a constant at each call; uBlock-128/256 only, whose round keys
 * never read K3): K3 keeps the round constant PK(K0) carries (s->rcp
 * remembers it) and the next step's K1 takes both out in one three-input
 * XOR, an operation fewer a round. s->k3 is then not K3. short_kx (a
 * constant at each call; where there is no three-input XOR): kx as
 * (K2 ^ next) ^ Sk, the first sum pinned so that the compiler does not
 * fold it back into K0 ^ next: the chain from kx to kx 3 operations
 * instead of 4, for one XOR more. Key setup takes it: on a Zen 4 (EPYC
 * family 25 model 17, avx2) key setup alone went 96 -> 87 TSC cycles for
 * uBlock-128/256 and 110 -> 104 for 256/256 (scripts/bench-ab, 60
 * alternations, 0.90-0.94x). The one-shot kernels do not: their rounds
 * share the pipes with the blocks', and the XOR more made 128/256's
 * one-shot calls 1.02-1.04x slower there. */
static inline __attribute__((always_inline)) void UBK_STEPF(UBK_S *s, unsigned r, int sw, int lazy3,
                                                            int short_kx)
{
    UBK_T rcx = UBK_ROWF(sw, r - 1);
    UBK_T q = UBK_OP(shuf8)(s->kx, sw ? s->pks : s->pkn); /* PK(K0) ^ rcx */
    UBK_T sk = UBK_OP(shuf8)(s->sbox, q);
    /* 0 after the last round, as UBK_STEP's zero_last (in the one-shot
     * kernels, loading row 24 here spilled more) */
    UBK_T next = r < 24 ? (sw ? UBK_ROWF(2, r) : UBK_ROW(2, r)) : UBK_OP(zero)();
    UBK_T k1 = s->k1; /* PK's K1 half: this vector, read in the other frame */
    /* kx from K0 unless short_kx (one XOR fewer than from k2, one longer
     * chain); with a three-input XOR from k2 at the same count, an
     * operation less deep (as UBK_STEP128F's) */
    s->k0 = UBK_OP(xor)(s->k2, sk);
    if (UBK_OP(has_xor3))
        s->kx = UBK_OP(xor3)(s->k2, next, sk);
    else if (short_kx)
        s->kx = UBK_OP(xor)(UBK_OP(pin)(UBK_OP(xor)(s->k2, next)), sk);
    else
        s->kx = UBK_OP(xor)(s->k0, next);
    if (lazy3) {
        s->k1 = UBK_OP(xor3)(s->k3, s->rcp, UBK_OP(shuf8)(s->tk, k1));
        s->k3 = q;
        s->rcp = rcx;
    } else {
        s->k1 = UBK_OP(xor)(s->k3, UBK_OP(shuf8)(s->tk, k1));
        s->k3 = UBK_OP(xor)(q, rcx);
    }
    s->k2 = k1;
}

/*
 * uBlock-128/128's schedule in the same two frames: the step above
 * exchanges the halves of K2||K3 every round (swap64); here the register
 * keeps them where PK put them and the frames alternate instead. After
 * UBK_FRAMES128 (once, after init) and UBK_STEP128F of rounds 1, 2, ... in
 * order, round r's K0||K1 (s->k0) is in the swapped frame for odd r and
 * the normal one for even r (0 too), K2||K3 (s->k1) in the other one
 * (sw = r & 1, a constant where the caller's loop runs two rounds a pass). PK
 * reads one frame and writes the other (pks, pkn); every row the round
 * adds comes in its frame from ub_ks_rc128f. Sk and Tk look up all of q
 * and a blend keeps Sk's half of K0||K1 and Tk's of the other, so the rows
 * need no 0x80 marks and Tk's index no XOR: a round is 3 shuffles, a blend
 * and 3 XORs where UBK_STEP's is 4 shuffles and 7 XORs, and its chain from
 * kx to kx is 5 operations, not 6. Key setup (ublock_expand_nib.h): 92 ->
 * 64 TSC cycles on a Xeon (Emerald Rapids).
 */
static inline __attribute__((always_inline)) void UBK_FRAMES128(UBK_S *s)
{
    s->k1 = UBK_OP(swap64)(s->k1);
    s->kx = UBK_OP(xor)(s->k0, UBK_ROW128F(1, 0));   /* no 0x80 marks */
    s->pkn = UBK_OP(xor)(s->pk0, UBK_OP(set1_8)(8)); /* swapped -> normal */
    s->pks = UBK_OP(swap64)(s->pk0);                 /* normal -> swapped */
}

static inline __attribute__((always_inline)) void UBK_STEP128F(UBK_S *s, unsigned r, int sw)
{
    UBK_T q = UBK_OP(shuf8)(s->kx, sw ? s->pks : s->pkn); /* PK(K0||K1) ^ rcx */
    UBK_T sk = UBK_OP(shuf8)(s->sbox, q), tk = UBK_OP(shuf8)(s->tk, q);
    /* Sk on K0's half, Tk on K1's: K0's is the high qword in the swapped frame */
    UBK_T st = sw ? UBK_OP(blend64)(tk, sk) : UBK_OP(blend64)(sk, tk);
    s->k0 = UBK_OP(xor)(s->k1, st);
    /* kx straight from k1 where a three-input XOR does it in one: the
     * chain from kx to kx 4 operations, not 5, at the same count. Alone it
     * measured level; with ublock_expand_nib_w.h's stores a round late,
     * key setup 53.5 -> 48.4 TSC cycles (avx512, Xeon, Sapphire Rapids) */
    if (UBK_OP(has_xor3))
        s->kx = UBK_OP(xor3)(s->k1, UBK_ROW128F(1, r), st);
    else
        s->kx = UBK_OP(xor)(s->k0, UBK_ROW128F(1, r));
    s->k1 = UBK_OP(xor)(q, UBK_ROW128F(0, r - 1)); /* K1' || K0' of the other frame */
}

/*
 * uBlock-128/128's schedule drifting (ublock_ks.h's ub_ks128d; the algebra
 * in scripts/gen-ublock-ks128, which derives the rows): the register is
 * never moved by PK1, its order drifts by PK1 every round instead and the
 * rows follow it, and Sk's and Tk's nibbles are told apart by bit 7,
 * pshufb's zero. After UBK_DRIFT128_INIT (once, after init) and
 * UBK_DRIFT128_STEP of rounds 1, 2, ... in order, k0 holds U_r, k1
 * U_{r-1} (R_0 for r = 0) and kx V_r, so that round r's key in the
 * low-latency kernel's form is k0 by row ub_ks128d[2][r] and k1 by row
 * ub_ks128d[3][r]. Without a three-input XOR, V carries 0x80 at Tk's
 * nibbles (rows [0]) and Sk and Tk look up V and V ^ 0x80..: a round is 3
 * shuffles and 6 XORs where UBK_STEP128F's is 3 shuffles, a blend and 3
 * XORs, more operations, but its chain from kx to kx is 3 (the flip, a
 * lookup, a sum) where the frames' is 5, PK1's shuffle first. With one
 * (vpternlogd), a select by the rows [4] picks the lookups' halves (V
 * from the rows [5]): 3 shuffles, the select and 2 XORs, chain 3. Where
 * the including file defines UBK_LUT32(idx, lo, hi), a 32-entry lookup of
 * lo's 16 bytes then hi's, V carries 0x10 at Tk's nibbles (rows [6]) and
 * one lookup does both tables: 2 shuffles and 2 XORs.
 */
static inline __attribute__((always_inline)) void UBK_DRIFT128_INIT(UBK_S *s)
{
#ifdef UBK_LUT32
    s->kx = UBK_OP(xor)(s->k0, UBK_OP(row16)(ub_ks128d[6][0]));
#else
    s->kx = UBK_OP(xor)(s->k0, UBK_OP(row16)(ub_ks128d[UBK_OP(has_xor3) ? 5 : 0][0]));
#endif
}

static inline __attribute__((always_inline)) void UBK_DRIFT128_STEP(UBK_S *s, unsigned r)
{
    /* R_{r-1} in U_r's order, from U_{r-2} */
    const UBK_T w = UBK_OP(shuf8)(s->k1, UBK_OP(row16)(ub_ks128d[1][r - 1]));
#ifdef UBK_LUT32
    {
        const UBK_T g = UBK_LUT32(s->kx, s->sbox, s->tk);
        s->kx = UBK_OP(xor3)(w, UBK_OP(row16)(ub_ks128d[6][r]), g);
        s->k1 = s->k0;
        s->k0 = UBK_OP(xor)(w, g);
        return;
    }
#endif
    if (UBK_OP(has_xor3)) {
        /* vpternlogd: a select costs what the 0x80 flip does, and takes
         * the flip off the chain */
        const UBK_T g = UBK_OP(sel8)(UBK_OP(row16)(ub_ks128d[4][r - 1]),
                                     UBK_OP(shuf8)(s->sbox, s->kx), UBK_OP(shuf8)(s->tk, s->kx));
        s->kx = UBK_OP(xor3)(w, UBK_OP(row16)(ub_ks128d[5][r]), g);
        s->k1 = s->k0;
        s->k0 = UBK_OP(xor)(w, g);
        return;
    }
    /* Sk where V has no bit 7, Tk where it has */
    const UBK_T sk = UBK_OP(shuf8z)(s->sbox, s->kx);
    const UBK_T tv = UBK_OP(shuf8z)(s->tk, UBK_OP(xor)(s->kx, UBK_OP(set1_8)(0x80)));
    s->kx = UBK_OP(xor3)(UBK_OP(xor)(w, UBK_OP(row16)(ub_ks128d[0][r])), sk, tv);
    s->k1 = s->k0;
    s->k0 = UBK_OP(xor3)(w, sk, tv);
}

/*
 * Either uBlock-128 member in its two frames, for the kernels that serve
 * both (t1: uBlock-128/128, a constant at each call): UBK_FRAMES_ANY once
 * after init, then UBK_STEP_ANY of rounds 1, 2, ... in order, sw being
 * round r's K0 frame, which the two members alternate in opposite
 * parity: sw = r & 1 for 128/128, !(r & 1) for 128/256. Two rounds a
 * pass from r = 1: sw = t1 for r, !t1 for r + 1 (and !t1 for round 0's
 * key).
 */
static inline __attribute__((always_inline)) void UBK_FRAMES_ANY(UBK_S *s, int t1)
{
    if (t1)
        UBK_FRAMES128(s);
    else
        UBK_FRAMES(s);
}

static inline __attribute__((always_inline)) void UBK_STEP_ANY(UBK_S *s, unsigned r, int t1, int sw)
{
    if (t1)
        UBK_STEP128F(s, r, sw);
    else
        UBK_STEPF(s, r, sw, UBK_OP(has_xor3), 0);
}

#undef UBK_DRIFT128_INIT
#undef UBK_DRIFT128_STEP
#undef UBK_LUT32
#undef UBK_CAT
#undef UBK_CAT_
#undef UBK_S
#undef UBK_T
#undef UBK_OP
#undef UBK_ROW
#undef UBK_STEP
#undef UBK_STEPF
#undef UBK_FRAMES
#undef UBK_ROWF
#undef UBK_ROW128F
#undef UBK_STEP128F
#undef UBK_FRAMES128
#undef UBK_FRAMES_ANY
#undef UBK_STEP_ANY
#undef UBK_INIT
