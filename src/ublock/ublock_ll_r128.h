/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The low-latency kernel's uBlock-128 rounds (ublock_ll.h) over one vector
 * width, included once per width: UL_T is the vector type, UL_OP(op) the
 * vocabulary's op (KUAI_V(v128, op) or KUAI_V(v256, op)), UL_RN(name) the
 * names of this width. A vector holds one block's half per 128-bit lane;
 * every shuffle row is a ub128_tab row (16 bytes, repeated in every lane
 * where the tables are wider: UB_ROW16) and the S-box table UL_FN(sbox_tab)
 * the same, so the rows never move data across lanes.
 */

#define UL_RS(x, inv) UL_OP(shuf8)(UL_OP(load)(UL_FN(sbox_tab)[inv]), x)
#define UL_RR(x, l, row) UL_OP(shuf8)(x, UL_OP(load)(ub128_tab[l][row]))

/* The linear layer's four XOR-rotate steps on the S-box's outputs x, y
 * (in layout l): x becomes a2, y b2. */
UB_KERNEL void UL_RN(ladder128)(UL_T *x, UL_T *y, unsigned l)
{
    *y = UL_OP(xor)(*y, *x);                       /* b1 */
    *x = UL_OP(xor)(*x, UL_RR(*y, l, UB128_ROT1)); /* a1 */
    *y = UL_OP(xor)(*y, UL_RR(*x, l, UB128_ROT2)); /* b2 */
    *x = UL_OP(xor)(*x, UL_RR(*y, l, UB128_ROT2)); /* a2 */
}

/* The linear layer of round i (layout l = i & 7) on the S-box's outputs
 * x, y, ending with key i+1: ublock_bs.h's fused round_enc. The sums are
 * pinned so that a2 (the ladder's last term) and R5 a2 come in last: gcc
 * otherwise summed a as (R5 a2 ^ k0) ^ (b2 ^ a2), a round 11 operations
 * deep instead of 10. */
UB_KERNEL void UL_RN(lin128)(UL_T x, UL_T y, UL_T k0, UL_T k1, unsigned l, UL_T *a, UL_T *b)
{
    UL_RN(ladder128)(&x, &y, l);
    UL_T t = UL_OP(pin)(UL_OP(xor)(y, k0));
    t = UL_OP(pin)(UL_OP(xor)(t, x));
    UL_T u = UL_OP(pin)(UL_OP(xor)(UL_RR(y, l, UB128_FIX), k1));
    *a = UL_OP(xor)(t, UL_RR(x, l, UB128_ROT5));
    *b = UL_OP(xor)(u, UL_RR(x, l, UB128_FIX_ROT5));
}

/* lin128 with a shuffle fewer and two operations deeper: X1 = b2 ^ R5 a2
 * once, moved to the layout of X0 by one FIX after it (a layout row is a
 * byte permutation: it distributes over XOR) instead of FIX and FIX∘R5 on
 * its two terms. For kernels bound by the shuffle ports rather than by
 * the round's depth: the one-shot calls, whose schedules shuffle too. */
UB_KERNEL void UL_RN(lin128s)(UL_T x, UL_T y, UL_T k0, UL_T k1, unsigned l, UL_T *a, UL_T *b)
{
    UL_RN(ladder128)(&x, &y, l);
    UL_T s = UL_OP(xor)(y, UL_RR(x, l, UB128_ROT5));
    *a = UL_OP(xor)(UL_OP(xor)(x, k0), s);
    *b = UL_OP(xor)(UL_RR(s, l, UB128_FIX), k1);
}

/* a ^ b ^ c with a ^ b first: one instruction where there is a
 * three-input XOR, else two, a ^ b pinned (gcc re-associates XOR chains,
 * and the order is what keeps c, the last term ready, off the others'
 * chain). */
UB_KERNEL UL_T UL_RN(sum3)(UL_T a, UL_T b, UL_T c)
{
    if (UL_OP(has_xor3))
        return UL_OP(xor3)(a, b, c);
    return UL_OP(xor)(UL_OP(pin)(UL_OP(xor)(a, b)), c);
}

/* lin128 with three-input XORs, two operations less deep for one shuffle
 * more: b2 straight from x and w = x ^ y (as round128_chain's y2), a2 =
 * x ^ z w ^ z^2 b2. Where there is no three-input XOR, the same sums of
 * two-input XORs are 8 operations deep and 19 in all (a lone chain's round
 * on Zen 3 and Zen 4: round128_chain without d7). */
UB_KERNEL void UL_RN(lin128x3)(UL_T x, UL_T y, UL_T k0, UL_T k1, unsigned l, UL_T *a, UL_T *b)
{
    UL_T w = UL_OP(xor)(x, y);
    UL_T b2 = UL_RN(sum3)(w, UL_RR(x, l, UB128_ROT2), UL_RR(w, l, UB128_ROT3));
    UL_T a2 = UL_RN(sum3)(x, UL_RR(w, l, UB128_ROT1), UL_RR(b2, l, UB128_ROT2));
    UL_T t = UL_OP(xor)(b2, k0);
    if (!UL_OP(has_xor3))
        t = UL_OP(pin)(t); /* (b2 ^ k0) ^ a2, not b2 ^ (k0 ^ a2): a2 comes late */
    *a = UL_RN(sum3)(t, a2, UL_RR(a2, l, UB128_ROT5));
    *b = UL_RN(sum3)(UL_RR(b2, l, UB128_FIX), k1, UL_RR(a2, l, UB128_FIX_ROT5));
}

/*
 * round128 for one vector alone (a CBC chain), which waits on the round's
 * dependency chain, not on the shuffle ports. With z the rotation by a
 * nibble and w = x ^ y after the S-box, the four XOR-rotate steps give
 * y2 = w ^ z^2 x ^ z^3 w and x3 = x ^ z^4 x ^ (z + z^2 + z^5) w: terms
 * that all exist one shuffle after w, summed as trees (pinned: compilers
 * re-associate XOR chains) they are ready 3 and 4 operations after the
 * S-box instead of 5 and 7. A round is then 7 operations deep instead of
 * 10, for three more shuffles and three more XORs, which several blocks
 * side by side (round128) cannot afford on an Intel core; on an AMD one
 * they can (round128's UL_FORM_DEEP, ublock_ll.h). Without d7 the chain
 * takes lin128x3 instead, 8 operations deep: with a three-input XOR
 * (has_xor3) 15 operations in all, since the chain is bound by its count as
 * much as by its depth (Xeon, Emerald Rapids, where this is avx512: the
 * sums above as three-input trees, 18 operations 7 deep, ran CBC
 * encryption of one uBlock-128/128 chain at 8.35 c/B, lin128x3 at 7.77);
 * without one 19, fewer of them ready at once than the trees' (Zen 3).
 * d7 is UL_CHAIN7's (ublock_ll.h): Zen 4 and Zen 5 with a three-input
 * XOR, where the 7-deep trees run 5-9% faster; every core but Zen 3 and
 * Zen 4 without one (docs/performance.md). d7 == 2 (Zen 4 with a
 * three-input XOR) runs the trees as round128_chain_asm.
 */
#if UL_OP(has_xor3) && UL_ASM_EVEX
/*
 * round128_chain's 7-deep trees with three-input XORs in one asm statement,
 * in the order that ran fastest on a Zen 4 (d7 == 2, UL_CHAIN7): the five
 * terms of x3 first, each as soon as its input exists, then x3's two
 * sums and its rotation, then y2's sum and the rest. A Zen 4 ties an
 * operation to a vector pipe when it dispatches it, as a Zen 3 does
 * (docs/performance.md, "What a round loses to the order its operations
 * arrive in"); gcc's order, y2's sum before x3's, ran 12.3 core cycles a
 * round in a throwaway loop of rounds and this one 11.3 (the best of 750
 * orders tried; EPYC family 25 model 17).
 */
UB_KERNEL void UL_RN(round128_chain_asm)(UL_T *a, UL_T *b, UL_T k0, UL_T k1, unsigned l)
{
    UL_T t0, t1, t2, t3, t4, t5, t6, a0 = *a, b0 = *b;
    const UL_T sb = UL_OP(load)(UL_FN(sbox_tab)[0]);
#define UL_ROW(r) (*(const UL_T *)(const void *)ub128_tab[l][r])
    __asm__("vpshufb %[a], %[sb], %[t0]\n\t"            /* x = S(a) */
            "vpshufb %[b], %[sb], %[t1]\n\t"            /* y = S(b) */
            "vpxord %[t1], %[t0], %[t1]\n\t"            /* w = x ^ y */
            "vpshufb %[r5], %[t1], %[t2]\n\t"           /* z^5 w */
            "vpshufb %[r2], %[t1], %[t4]\n\t"           /* z^2 w */
            "vpshufb %[r2], %[t0], %[t3]\n\t"           /* z^2 x */
            "vpshufb %[r3], %[t1], %[t5]\n\t"           /* z^3 w */
            "vpshufb %[r4], %[t0], %[t6]\n\t"           /* z^4 x */
            "vpternlogd $0x96, %[t2], %[t6], %[t0]\n\t" /* x ^ z^4 x ^ z^5 w */
            "vpshufb %[r1], %[t1], %[t2]\n\t"           /* z w */
            "vpternlogd $0x96, %[t4], %[t2], %[t0]\n\t" /* x3 = ... ^ z w ^ z^2 w */
            "vpshufb %[r5], %[t0], %[t2]\n\t"           /* z^5 x3 */
            "vpternlogd $0x96, %[t5], %[t3], %[t1]\n\t" /* y2 = w ^ z^2 x ^ z^3 w */
            "vpxord %[k0], %[t1], %[a]\n\t"             /* y2 ^ k0 */
            "vpshufb %[fx], %[t1], %[b]\n\t"            /* F y2 */
            "vpternlogd $0x96, %[t2], %[t0], %[a]\n\t"  /* a = y2 ^ k0 ^ x3 ^ z^5 x3 */
            "vpshufb %[fr5], %[t0], %[t3]\n\t"          /* F z^5 x3 */
            "vpternlogd $0x96, %[k1], %[t3], %[b]\n\t"  /* b = F y2 ^ k1 ^ F z^5 x3 */
            : [a] "+v"(a0), [b] "+v"(b0), [t0] "=&v"(t0), [t1] "=&v"(t1), [t2] "=&v"(t2),
              [t3] "=&v"(t3), [t4] "=&v"(t4), [t5] "=&v"(t5), [t6] "=&v"(t6)
            : [sb] "v"(sb), [r1] "m"(UL_ROW(UB128_ROT1)), [r2] "m"(UL_ROW(UB128_ROT2)),
              [r3] "m"(UL_ROW(UB128_ROT3)), [r4] "m"(UL_ROW(UB128_ROT4)),
              [r5] "m"(UL_ROW(UB128_ROT5)), [fx] "m"(UL_ROW(UB128_FIX)),
              [fr5] "m"(UL_ROW(UB128_FIX_ROT5)), [k0] "vm"(k0), [k1] "vm"(k1));
#undef UL_ROW
    *a = a0;
    *b = b0;
}
#endif

UB_KERNEL void UL_RN(round128_chain)(UL_T *a, UL_T *b, UL_T k0, UL_T k1, unsigned l, int d7)
{
#if UL_OP(has_xor3) && UL_ASM_EVEX
    if (d7 == 2) {
        UL_RN(round128_chain_asm)(a, b, k0, k1, l);
        return;
    }
#endif
    UL_T x = UL_RS(*a, 0), y = UL_RS(*b, 0);
    if (!d7) {
        UL_RN(lin128x3)(x, y, k0, k1, l, a, b);
        return;
    }
    if (UL_OP(has_xor3)) {
        UL_T w = UL_OP(xor)(x, y);
        UL_T y2 = UL_OP(xor3)(w, UL_RR(x, l, UB128_ROT2), UL_RR(w, l, UB128_ROT3));
        UL_T x3 = UL_OP(xor3)(x, UL_RR(x, l, UB128_ROT4), UL_RR(w, l, UB128_ROT5));
        x3 = UL_OP(xor3)(x3, UL_RR(w, l, UB128_ROT1), UL_RR(w, l, UB128_ROT2));
        *a = UL_OP(xor3)(UL_OP(xor)(y2, k0), x3, UL_RR(x3, l, UB128_ROT5));
        *b = UL_OP(xor3)(UL_RR(y2, l, UB128_FIX), k1, UL_RR(x3, l, UB128_FIX_ROT5));
        return;
    }
    UL_T w = UL_OP(xor)(x, y);
    UL_T y2 =
        UL_OP(xor)(UL_OP(pin)(UL_OP(xor)(w, UL_RR(x, l, UB128_ROT2))), UL_RR(w, l, UB128_ROT3));
    UL_T x3 = UL_OP(pin)(UL_OP(xor)(x, UL_RR(x, l, UB128_ROT4)));
    x3 = UL_OP(pin)(UL_OP(xor)(x3, UL_RR(w, l, UB128_ROT5)));
    x3 = UL_OP(xor)(x3, UL_OP(pin)(UL_OP(xor)(UL_RR(w, l, UB128_ROT1), UL_RR(w, l, UB128_ROT2))));
    UL_T t = UL_OP(pin)(UL_OP(xor)(y2, k0));
    t = UL_OP(pin)(UL_OP(xor)(t, x3));
    UL_T u = UL_OP(pin)(UL_OP(xor)(UL_RR(y2, l, UB128_FIX), k1));
    *a = UL_OP(xor)(t, UL_RR(x3, l, UB128_ROT5));
    *b = UL_OP(xor)(u, UL_RR(x3, l, UB128_FIX_ROT5));
}

#ifdef UL_SUMS2
/*
 * lin128x3's sums of two-input XORs on two vectors (UL_FORM_SUMS), in one
 * asm statement: each operation of the first vector, then the same
 * operation of the second, in the order of lin128x3's sums (z the nibble
 * rotation, F the FIX row, each a row of layout l). A Zen 3 ties an
 * operation to one of its vector pipes when it dispatches it, and each
 * pipe takes the oldest of its ready operations: operations that become
 * ready together run at once only if they reach the core in this order.
 * gcc, which schedules by its own model, put the second vector's round
 * mostly after the first's, and the same 38 operations then took 13.6 core
 * cycles a round on their own (lifted into a loop of rounds), against 11.6
 * in this order and 15.3 for the full form's 34 (docs/performance.md,
 * "What a round loses to the order its operations arrive in"). The rows
 * and round keys are memory operands, as gcc's code has them; the state
 * goes in and out through locals (through a[] and b[] gcc stored it to
 * the stack every round).
 */
/* The template: with a three-input XOR (avx512's vocabulary, EVEX
 * vpternlogd) the same sums in 30 operations, 18 of them shuffles, and any
 * of the 32 vector registers; else 38 operations, VEX-encoded. */
#if UL_OP(has_xor3) && UL_ASM_EVEX
#define UL_SUMS2_ASM                                                                               \
    "vpshufb %[a0], %[sb], %[t0]\n\t" /* x = S(a) */                                               \
    "vpshufb %[a1], %[sb], %[t1]\n\t"                                                              \
    "vpshufb %[b0], %[sb], %[t2]\n\t" /* y = S(b) */                                               \
    "vpshufb %[b1], %[sb], %[t3]\n\t"                                                              \
    "vpxord %[t2], %[t0], %[t2]\n\t" /* w = x ^ y */                                               \
    "vpxord %[t3], %[t1], %[t3]\n\t"                                                               \
    "vpshufb %[r2], %[t0], %[t4]\n\t" /* z^2 x */                                                  \
    "vpshufb %[r2], %[t1], %[t5]\n\t"                                                              \
    "vpshufb %[r3], %[t2], %[t6]\n\t" /* z^3 w */                                                  \
    "vpshufb %[r3], %[t3], %[t7]\n\t"                                                              \
    "vpternlogd $0x96, %[t2], %[t4], %[t6]\n\t" /* b2 = w ^ z^2 x ^ z^3 w */                       \
    "vpternlogd $0x96, %[t3], %[t5], %[t7]\n\t"                                                    \
    "vpshufb %[r1], %[t2], %[t2]\n\t" /* z w */                                                    \
    "vpshufb %[r1], %[t3], %[t3]\n\t"                                                              \
    "vpshufb %[r2], %[t6], %[t4]\n\t" /* z^2 b2 */                                                 \
    "vpshufb %[r2], %[t7], %[t5]\n\t"                                                              \
    "vpternlogd $0x96, %[t4], %[t2], %[t0]\n\t" /* a2 = x ^ z w ^ z^2 b2 */                        \
    "vpternlogd $0x96, %[t5], %[t3], %[t1]\n\t"                                                    \
    "vpxord %[k00], %[t6], %[a0]\n\t" /* b2 ^ k0 */                                                \
    "vpxord %[k01], %[t7], %[a1]\n\t"                                                              \
    "vpshufb %[r5], %[t0], %[t4]\n\t" /* z^5 a2 */                                                 \
    "vpshufb %[r5], %[t1], %[t5]\n\t"                                                              \
    "vpternlogd $0x96, %[t4], %[t0], %[a0]\n\t" /* a = b2 ^ k0 ^ a2 ^ z^5 a2 */                    \
    "vpternlogd $0x96, %[t5], %[t1], %[a1]\n\t"                                                    \
    "vpshufb %[fx], %[t6], %[b0]\n\t" /* F b2 */                                                   \
    "vpshufb %[fx], %[t7], %[b1]\n\t"                                                              \
    "vpshufb %[fr5], %[t0], %[t0]\n\t" /* F z^5 a2 */                                              \
    "vpshufb %[fr5], %[t1], %[t1]\n\t"                                                             \
    "vpternlogd $0x96, %[k10], %[t0], %[b0]\n\t" /* b = F b2 ^ k1 ^ F z^5 a2 */                    \
    "vpternlogd $0x96, %[k11], %[t1], %[b1]\n\t"
#define UL_SUMS2_REG "v"
#else
#define UL_SUMS2_ASM                                                                               \
    "vpshufb %[a0], %[sb], %[t0]\n\t" /* x = S(a) */                                               \
    "vpshufb %[a1], %[sb], %[t1]\n\t"                                                              \
    "vpshufb %[b0], %[sb], %[t2]\n\t" /* y = S(b) */                                               \
    "vpshufb %[b1], %[sb], %[t3]\n\t"                                                              \
    "vpxor %[t2], %[t0], %[t2]\n\t" /* w = x ^ y */                                                \
    "vpxor %[t3], %[t1], %[t3]\n\t"                                                                \
    "vpshufb %[r2], %[t0], %[t4]\n\t" /* z^2 x */                                                  \
    "vpshufb %[r2], %[t1], %[t5]\n\t"                                                              \
    "vpshufb %[r3], %[t2], %[t6]\n\t" /* z^3 w */                                                  \
    "vpshufb %[r3], %[t3], %[t7]\n\t"                                                              \
    "vpxor %[t4], %[t2], %[t4]\n\t" /* w ^ z^2 x */                                                \
    "vpxor %[t5], %[t3], %[t5]\n\t"                                                                \
    "vpxor %[t6], %[t4], %[t6]\n\t" /* b2 = w ^ z^2 x ^ z^3 w */                                   \
    "vpxor %[t7], %[t5], %[t7]\n\t"                                                                \
    "vpshufb %[r1], %[t2], %[t2]\n\t" /* z w */                                                    \
    "vpshufb %[r1], %[t3], %[t3]\n\t"                                                              \
    "vpxor %[t2], %[t0], %[t2]\n\t" /* x ^ z w */                                                  \
    "vpxor %[t3], %[t1], %[t3]\n\t"                                                                \
    "vpshufb %[r2], %[t6], %[t1]\n\t" /* z^2 b2 */                                                 \
    "vpshufb %[r2], %[t7], %[t0]\n\t"                                                              \
    "vpxor %[t1], %[t2], %[t1]\n\t" /* a2 = x ^ z w ^ z^2 b2 */                                    \
    "vpxor %[t0], %[t3], %[t0]\n\t"                                                                \
    "vpxor %[k00], %[t6], %[t3]\n\t" /* b2 ^ k0 */                                                 \
    "vpxor %[k01], %[t7], %[t2]\n\t"                                                               \
    "vpxor %[t1], %[t3], %[t3]\n\t" /* b2 ^ k0 ^ a2 */                                             \
    "vpxor %[t0], %[t2], %[t2]\n\t"                                                                \
    "vpshufb %[r5], %[t1], %[t5]\n\t" /* z^5 a2 */                                                 \
    "vpshufb %[r5], %[t0], %[t4]\n\t"                                                              \
    "vpxor %[t5], %[t3], %[a0]\n\t" /* a = b2 ^ k0 ^ a2 ^ z^5 a2 */                                \
    "vpxor %[t4], %[t2], %[a1]\n\t"                                                                \
    "vpshufb %[fx], %[t6], %[t6]\n\t" /* F b2 */                                                   \
    "vpshufb %[fx], %[t7], %[t7]\n\t"                                                              \
    "vpxor %[k10], %[t6], %[t6]\n\t" /* F b2 ^ k1 */                                               \
    "vpxor %[k11], %[t7], %[t7]\n\t"                                                               \
    "vpshufb %[fr5], %[t1], %[t1]\n\t" /* F z^5 a2 */                                              \
    "vpshufb %[fr5], %[t0], %[t0]\n\t"                                                             \
    "vpxor %[t1], %[t6], %[b0]\n\t" /* b = F b2 ^ k1 ^ F z^5 a2 */                                 \
    "vpxor %[t0], %[t7], %[b1]\n\t"
#define UL_SUMS2_REG "x"
#endif
UB_KERNEL void UL_RN(round128_sums2)(UL_T *a, UL_T *b, const UL_T *k0, const UL_T *k1, unsigned l,
                                     int mk)
{
    UL_T t0, t1, t2, t3, t4, t5, t6, t7, a0 = a[0], b0 = b[0], a1 = a[1], b1 = b[1];
    const UL_T sb = UL_OP(load)(UL_FN(sbox_tab)[0]);
#define UL_ROW(r) (*(const UL_T *)(const void *)ub128_tab[l][r])
#define UL_R "=&" UL_SUMS2_REG
    __asm__(UL_SUMS2_ASM
            : [a0] "+" UL_SUMS2_REG(a0), [b0] "+" UL_SUMS2_REG(b0), [a1] "+" UL_SUMS2_REG(a1),
              [b1] "+" UL_SUMS2_REG(b1), [t0] UL_R(t0), [t1] UL_R(t1), [t2] UL_R(t2), [t3] UL_R(t3),
              [t4] UL_R(t4), [t5] UL_R(t5), [t6] UL_R(t6), [t7] UL_R(t7)
            : [sb] UL_SUMS2_REG(sb), [r1] "m"(UL_ROW(UB128_ROT1)), [r2] "m"(UL_ROW(UB128_ROT2)),
              [r3] "m"(UL_ROW(UB128_ROT3)), [r5] "m"(UL_ROW(UB128_ROT5)),
              [fx] "m"(UL_ROW(UB128_FIX)), [fr5] "m"(UL_ROW(UB128_FIX_ROT5)),
              [k00] UL_SUMS2_REG "m"(k0[0]), [k01] UL_SUMS2_REG "m"(k0[mk ? 1 : 0]),
              [k10] UL_SUMS2_REG "m"(k1[0]), [k11] UL_SUMS2_REG "m"(k1[mk ? 1 : 0]));
#undef UL_R
#undef UL_ROW
    a[0] = a0;
    b[0] = b0;
    a[1] = a1;
    b[1] = b1;
}
#undef UL_SUMS2_ASM
#undef UL_SUMS2_REG
#endif

/* Round i of nb vectors, ending with key i+1 (k0, k1 per vector), in
 * form (a constant at each call; ublock_ll.h's UL_FORM_*): lin128, lin128s
 * (UL_FORM_LEAN, where there is no three-input XOR), each vector's round
 * as a lone chain's (UL_FORM_DEEP: round128_chain's 7-deep trees; with a
 * three-input XOR lin128x3, as in the others), or lin128x3's sums
 * (UL_FORM_SUMS; two vectors in step where UL_SUMS2 is built). */
UB_KERNEL void UL_RN(round128)(UL_T *a, UL_T *b, const UL_T *k0, const UL_T *k1, unsigned l, int nb,
                               int mk, int form)
{
#ifdef UL_SUMS2
    if (form == UL_FORM_SUMS && nb == 2) {
        UL_RN(round128_sums2)(a, b, k0, k1, l, mk);
        return;
    }
#endif
    const int trees = !UL_OP(has_xor3); /* UL_FORM_DEEP: the 7-deep trees, or lin128x3 */
    for (int j = 0; j < nb; j++) {
        if (form == UL_FORM_DEEP) {
            UL_RN(round128_chain)(&a[j], &b[j], k0[mk ? j : 0], k1[mk ? j : 0], l, trees);
            continue;
        }
        UL_T x = UL_RS(a[j], 0), y = UL_RS(b[j], 0);
        if (UL_OP(has_xor3) || form == UL_FORM_SUMS)
            UL_RN(lin128x3)(x, y, k0[mk ? j : 0], k1[mk ? j : 0], l, &a[j], &b[j]);
        else if (form == UL_FORM_LEAN)
            UL_RN(lin128s)(x, y, k0[mk ? j : 0], k1[mk ? j : 0], l, &a[j], &b[j]);
        else
            UL_RN(lin128)(x, y, k0[mk ? j : 0], k1[mk ? j : 0], l, &a[j], &b[j]);
    }
}

/* The S-box (inv: its inverse) on two blocks packed in each byte (low and
 * high nibble). */
UB_KERNEL UL_T UL_RN(sboxp)(UL_T x, int inv)
{
    const UL_T m = UL_OP(set1_8)(0x0f);
    return UL_OP(or)(
        UL_OP(shuf8)(UL_OP(load)(UL_FN(sbox_tab)[inv]), UL_OP(and)(x, m)),
        UL_OP(shuf8)(UL_OP(load)(UL_FN(sbox_hi_tab)[inv]), UL_OP(and)(UL_OP(srl64)(x, 4), m)));
}

/* round128 on np pairs of vectors, each byte two blocks' nibbles (packed:
 * ublock_ll.h's pack2), key pair j's forms packed alike: the shuffles and
 * XORs act on both nibbles of a byte at once. */
UB_KERNEL void UL_RN(round128p)(UL_T *a, UL_T *b, const UL_T *k0, const UL_T *k1, unsigned l,
                                int np)
{
    for (int j = 0; j < np; j++) {
        UL_T x = UL_RN(sboxp)(a[j], 0), y = UL_RN(sboxp)(b[j], 0);
        UL_RN(lin128)(x, y, k0[j], k1[j], l, &a[j], &b[j]);
    }
}

/* Undo round i's linear layer from a state carrying key i+1 (ublock_bs.h's
 * fused round_dec): p, q are the S-box's outputs of the round, so that
 * S^-1(p) ^ key i, S^-1(q) ^ key i are the state before it. shallow (a
 * constant at each call): p = a1 ^ R1 b1 summed as a1 ^ R1 b2 ^ R3 a1
 * (b1 = b2 ^ R2 a1), whose terms exist before b1 does: a round 10
 * operations deep (inverse S-box and key included) instead of 12, for a
 * shuffle more: for one vector alone, which waits on the depth
 * (UL_SHALLOW, ublock_ll.h). */
UB_KERNEL void UL_RN(lin128_inv)(UL_T x0, UL_T x1, unsigned l, UL_T *p, UL_T *q, int shallow)
{
    UL_T b3 = UL_RR(x1, l, UB128_FIX_INV);
    UL_T x = UL_OP(xor)(x0, b3); /* a2 */
    UL_T y = UL_OP(xor)(UL_OP(xor)(b3, UL_RR(x0, l, UB128_ROT5)),
                        UL_RR(x1, l, UB128_ROT5_FIX_INV)); /* b2 */
    x = UL_OP(xor)(x, UL_RR(y, l, UB128_ROT2));            /* a1 */
    if (shallow) {
        UL_T t = UL_OP(pin)(UL_OP(xor)(x, UL_RR(y, l, UB128_ROT1)));
        *p = UL_OP(xor)(t, UL_RR(x, l, UB128_ROT3));            /* S(a0 ^ k0) */
        y = UL_OP(pin)(UL_OP(xor)(y, UL_RR(x, l, UB128_ROT2))); /* b1 */
        *q = UL_OP(xor)(y, *p);                                 /* S(b0 ^ k1) */
        return;
    }
    y = UL_OP(xor)(y, UL_RR(x, l, UB128_ROT2)); /* b1 */
    UL_T rb = UL_RR(y, l, UB128_ROT1);
    *p = UL_OP(xor)(x, rb);                /* S(a0 ^ k0) */
    *q = UL_OP(xor)(UL_OP(xor)(y, x), rb); /* S(b0 ^ k1) */
}

/* Round i backwards on nb vectors; shallow (a constant at each call):
 * lin128_inv's. */
UB_KERNEL void UL_RN(round128_inv)(UL_T *a, UL_T *b, const UL_T *k0, const UL_T *k1, unsigned l,
                                   int nb, int mk, int shallow)
{
    for (int j = 0; j < nb; j++) {
        UL_T p, q;
        UL_RN(lin128_inv)(a[j], b[j], l, &p, &q, shallow);
        b[j] = UL_OP(xor)(UL_RS(q, 1), k1[mk ? j : 0]);
        a[j] = UL_OP(xor)(UL_RS(p, 1), k0[mk ? j : 0]);
    }
}

/*
 * round128p for pairs of blocks under two keys each (multi-key: block 2j's
 * nibble low, 2j + 1's high), the round's key still to be added: its
 * rows go into the S-box's two index vectors as stored (one nibble a
 * byte), kx[j] / ky[j] the halves of block 2j's, kx[j + np] / ky[j + np]
 * of block 2j + 1's, so no key is packed (pack2: two operations a vector,
 * eight a round for 4 keys). The linear layer (lin128s, a shuffle fewer
 * than lin128; its key XORs with 0 fold away) leaves the next round's key
 * out: the state carries keys up to round i - 1.
 */
UB_KERNEL void UL_RN(round128pk)(UL_T *a, UL_T *b, const UL_T *kx, const UL_T *ky, unsigned l,
                                 int np)
{
    const UL_T m = UL_OP(set1_8)(0x0f), lo = UL_OP(load)(UL_FN(sbox_tab)[0]),
               hi = UL_OP(load)(UL_FN(sbox_hi_tab)[0]);
    for (int j = 0; j < np; j++) {
        UL_T h[2] = {a[j], b[j]}, s[2];
        const UL_T *k[2] = {kx, ky};
        for (int v = 0; v < 2; v++)
            s[v] = UL_OP(or)(
                UL_OP(shuf8)(lo, UL_OP(xor)(UL_OP(and)(h[v], m), k[v][j])),
                UL_OP(shuf8)(hi, UL_OP(xor)(UL_OP(and)(UL_OP(srl64)(h[v], 4), m), k[v][j + np])));
        UL_RN(lin128s)(s[0], s[1], UL_OP(zero)(), UL_OP(zero)(), l, &a[j], &b[j]);
    }
}

/* round128_inv on np packed pairs (round128p). */
UB_KERNEL void UL_RN(round128p_inv)(UL_T *a, UL_T *b, const UL_T *k0, const UL_T *k1, unsigned l,
                                    int np)
{
    for (int j = 0; j < np; j++) {
        UL_T p, q;
        UL_RN(lin128_inv)(a[j], b[j], l, &p, &q, 0);
        b[j] = UL_OP(xor)(UL_RN(sboxp)(q, 1), k1[j]);
        a[j] = UL_OP(xor)(UL_RN(sboxp)(p, 1), k0[j]);
    }
}

#undef UL_RS
#undef UL_RR
#undef UL_T
#undef UL_OP
#undef UL_RN
