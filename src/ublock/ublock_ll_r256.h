/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The low-latency kernel's uBlock-256 halves and rounds (ublock_ll.h) over
 * one vector width, included once per width as ublock_ll_r128.h, with
 * UL_ROW256(row, lane): ub256_tab's row for 128-bit lane `lane` of a half
 * (the 16 bytes at ub256_tab[row] + 16 * lane) in every lane of a vector.
 * A half is two vectors, l (its words 0-1) and h (words 2-3), in layout L;
 * a wider vector holds one block's half per 128-bit lane, so PL and PR,
 * which exchange words between l and h, never cross a lane.
 *
 * With UL_HALF1 a half is one 256-bit unit instead, l in its lane 0 and h
 * in its lane 1: on ymm one block in two vectors, for one chain; on zmm
 * two blocks, one per 256-bit half. Each operation then serves l and h at
 * once; PL and PR move words across the lanes (vpermq, vpermd) before
 * their rows. The including file gives, per 256-bit unit, UL_ROW256H(row)
 * (ub256_tab's 32-byte row), UL_Q0213(x) (qwords 0 2 1 3) and
 * UL_D04261537(x) (dwords 0 2 4 6 1 3 5 7).
 */

#ifdef UL_HALF1
typedef UL_T UL_RN(h256);
#define UL_HT UL_RN(h256)

UB_KERNEL UL_HT UL_RN(xor256)(UL_HT a, UL_HT b)
{
    return UL_OP(xor)(a, b);
}

UB_KERNEL UL_HT UL_RN(xor3_256)(UL_HT a, UL_HT b, UL_HT c)
{
    return UL_OP(xor3)(a, b, c);
}

UB_KERNEL UL_HT UL_RN(pin256)(UL_HT a)
{
    return UL_OP(pin)(a);
}

/* ub256_tab's rows are lane 0's 16 bytes, then lane 1's: the half's l, h */
UB_KERNEL UL_HT UL_RN(rot256)(UL_HT x, int row)
{
    return UL_OP(shuf8)(x, UL_ROW256H(row));
}

UB_KERNEL UL_HT UL_RN(sbox256)(UL_HT x, int inv)
{
    return UL_OP(shuf8)(UL_OP(load)(UL_FN(sbox_tab)[inv]), x);
}

/* qwords l0 l1 h0 h1 -> l0 h0 | l1 h1 (the two-vector form's unpacks) */
UB_KERNEL UL_HT UL_RN(pl256)(UL_HT x)
{
    return UL_RN(rot256)(UL_Q0213(x), UB256_PL);
}

/* dwords l0..l3 h0..h3 -> l0 l2 h0 h2 | l1 l3 h1 h3 (even32, odd32) */
UB_KERNEL UL_HT UL_RN(pr256)(UL_HT x)
{
    return UL_RN(rot256)(UL_D04261537(x), UB256_PR);
}
#else
typedef struct UL_RN(h256) {
    UL_T l, h;
} UL_RN(h256);
#define UL_HT UL_RN(h256)

UB_KERNEL UL_HT UL_RN(mk256)(UL_T l, UL_T h)
{
    UL_HT r = {l, h};
    return r;
}

UB_KERNEL UL_HT UL_RN(xor256)(UL_HT a, UL_HT b)
{
    return UL_RN(mk256)(UL_OP(xor)(a.l, b.l), UL_OP(xor)(a.h, b.h));
}

UB_KERNEL UL_HT UL_RN(xor3_256)(UL_HT a, UL_HT b, UL_HT c)
{
    return UL_RN(mk256)(UL_OP(xor3)(a.l, b.l, c.l), UL_OP(xor3)(a.h, b.h, c.h));
}

UB_KERNEL UL_HT UL_RN(pin256)(UL_HT a)
{
    return UL_RN(mk256)(UL_OP(pin)(a.l), UL_OP(pin)(a.h));
}

UB_KERNEL UL_HT UL_RN(rot256)(UL_HT x, int row)
{
    return UL_RN(mk256)(UL_OP(shuf8)(x.l, UL_ROW256(row, 0)), UL_OP(shuf8)(x.h, UL_ROW256(row, 1)));
}

/* 16 bytes (a half; per lane) -> layout L: the split layout S by two
 * unpacks, then to_l (as ublock_v128.h loads a transposed pass). */
UB_KERNEL UL_HT UL_RN(load256v)(UL_T v)
{
    UL_T m = UL_OP(set1_8)(0x0f);
    UL_T hi = UL_OP(and)(UL_OP(srl64)(v, 4), m), lo = UL_OP(and)(v, m);
    return UL_RN(rot256)(UL_RN(mk256)(UL_OP(unpacklo64)(hi, lo), UL_OP(unpackhi64)(hi, lo)),
                         UB256_TO_L);
}

/* layout L -> the 16 bytes of a half (per lane) */
UB_KERNEL UL_T UL_RN(merge256)(UL_HT x)
{
    UL_HT s = UL_RN(rot256)(x, UB256_FROM_L);
    return UL_OP(or)(UL_OP(sll64)(UL_OP(unpacklo64)(s.l, s.h), 4), UL_OP(unpackhi64)(s.l, s.h));
}

UB_KERNEL UL_HT UL_RN(sbox256)(UL_HT x, int inv)
{
    UL_T t = UL_OP(load)(UL_FN(sbox_tab)[inv]);
    return UL_RN(mk256)(UL_OP(shuf8)(t, x.l), UL_OP(shuf8)(t, x.h));
}

/* sbox256 on a half of two blocks packed in each byte (sboxp: ublock_ll.h's
 * pack2 on each vector). Every other step of the round moves or XORs whole
 * bytes, so it serves the two blocks at once. */
UB_KERNEL UL_HT UL_RN(sbox256p)(UL_HT x, int inv)
{
    return UL_RN(mk256)(UL_RN(sboxp)(x.l, inv), UL_RN(sboxp)(x.h, inv));
}

UB_KERNEL UL_HT UL_RN(pl256)(UL_HT x)
{
    return UL_RN(rot256)(UL_RN(mk256)(UL_OP(unpacklo64)(x.l, x.h), UL_OP(unpackhi64)(x.l, x.h)),
                         UB256_PL);
}

UB_KERNEL UL_HT UL_RN(pr256)(UL_HT x)
{
    return UL_RN(rot256)(UL_RN(mk256)(UL_OP(even32)(x.l, x.h), UL_OP(odd32)(x.l, x.h)), UB256_PR);
}

UB_KERNEL UL_HT UL_RN(pl256_inv)(UL_HT x)
{
    UL_HT t = UL_RN(rot256)(x, UB256_PL_INV);
    return UL_RN(mk256)(UL_OP(unpacklo64)(t.l, t.h), UL_OP(unpackhi64)(t.l, t.h));
}

UB_KERNEL UL_HT UL_RN(pr256_inv)(UL_HT x)
{
    UL_HT t = UL_RN(rot256)(x, UB256_PR_INV);
    return UL_RN(mk256)(UL_OP(unpacklo32)(t.l, t.h), UL_OP(unpackhi32)(t.l, t.h));
}

#endif

/* The ladder after the S-box with three-input XORs (has_xor3), as the
 * chain round below explains: w = x ^ y; y2 = w ^ z^2 x ^ z^3 w; x3 = x ^
 * z w ^ z^2 y2; t = z^5 x3. The round's outputs are x3 ^ y2 ^ t (left)
 * and y2 ^ t (right), keys aside. */
UB_KERNEL void UL_RN(ladder256x3)(UL_HT x, UL_HT y, UL_HT *y2, UL_HT *x3, UL_HT *t)
{
    UL_HT w = UL_RN(xor256)(x, y);
    *y2 = UL_RN(xor3_256)(w, UL_RN(rot256)(x, UB256_ROT2), UL_RN(rot256)(w, UB256_ROT3));
    *x3 = UL_RN(xor3_256)(x, UL_RN(rot256)(w, UB256_ROT1), UL_RN(rot256)(*y2, UB256_ROT2));
    *t = UL_RN(rot256)(*x3, UB256_ROT5);
}

#ifndef UL_HALF1
/* round256's linear layer on the S-box's outputs x, y; deep (a constant
 * or a CPU bit at each call): UL_DEEP256's sums */
UB_KERNEL void UL_RN(lin256)(UL_HT x, UL_HT y, UL_HT *a, UL_HT *b, int deep)
{
    if (UL_OP(has_xor3)) {
        /* round256_chain's sums (the keys come before the S-box here): 12
         * operations deep instead of 15, for one rotation more */
        UL_HT y2, t;
        UL_RN(ladder256x3)(x, y, &y2, &x, &t);
        *a = UL_RN(pl256)(UL_RN(xor3_256)(x, y2, t));
        *b = UL_RN(pr256)(UL_RN(xor256)(y2, t));
        return;
    }
    if (deep) {
        /* the same sums of two-input XORs: 7 operations deep instead of
         * 10, for one rotation and two XORs more */
        UL_HT w = UL_RN(xor256)(x, y);
        UL_HT t = UL_RN(pin256)(UL_RN(xor256)(w, UL_RN(rot256)(x, UB256_ROT2)));
        UL_HT y2 = UL_RN(xor256)(t, UL_RN(rot256)(w, UB256_ROT3));
        x = UL_RN(pin256)(UL_RN(xor256)(x, UL_RN(rot256)(w, UB256_ROT1)));
        x = UL_RN(xor256)(x, UL_RN(rot256)(y2, UB256_ROT2));
        t = UL_RN(rot256)(x, UB256_ROT5);
        *a = UL_RN(pl256)(UL_RN(xor256)(UL_RN(pin256)(UL_RN(xor256)(x, y2)), t));
        *b = UL_RN(pr256)(UL_RN(xor256)(y2, t));
        return;
    }
    y = UL_RN(xor256)(y, x);
    x = UL_RN(xor256)(x, UL_RN(rot256)(y, UB256_ROT1));
    y = UL_RN(xor256)(y, UL_RN(rot256)(x, UB256_ROT2));
    x = UL_RN(xor256)(x, UL_RN(rot256)(y, UB256_ROT2));
    y = UL_RN(xor256)(y, UL_RN(rot256)(x, UB256_ROT5));
    x = UL_RN(xor256)(x, y);
    *a = UL_RN(pl256)(x);
    *b = UL_RN(pr256)(y);
}

/* Add round key i (k0, k1), then round i; p: two blocks packed in each
 * byte (sbox256p), keys packed alike; deep: lin256's. */
UB_KERNEL void UL_RN(round256)(UL_HT *a, UL_HT *b, UL_HT k0, UL_HT k1, int p, int deep)
{
    UL_HT x = UL_RN(xor256)(*a, k0), y = UL_RN(xor256)(*b, k1);
    x = p ? UL_RN(sbox256p)(x, 0) : UL_RN(sbox256)(x, 0);
    y = p ? UL_RN(sbox256p)(y, 0) : UL_RN(sbox256)(y, 0);
    UL_RN(lin256)(x, y, a, b, deep);
}
#endif

/*
 * round256 for one block alone (a CBC chain), which waits on the round's
 * dependency chain, not on the shuffle ports. With z the rotation by a
 * nibble and w = x ^ y after the S-box, the ladder's y2 is w ^ z^2 x ^ z^3
 * w, ready two operations after w instead of four, and x3 is x ^ z w ^ z^2
 * y2. That is one rotation more (two shuffles) for three operations less
 * per round: x3 as a tree of five terms (as the uBlock-128 form in
 * ublock_ll_r128.h) would save one more but adds four shuffles, which a
 * half in two vectors cannot afford: its round is then port-bound.
 *
 * The next round's key comes in here, not at the next round's start:
 * PL and PR only move nibbles, so PL(x) ^ k = PL(x ^ PL^-1(k)), and with
 * kl = PL^-1 of the next key's left half, kr = PR^-1 of its right half
 * (keys256chain) the XORs join sums that wait on the rotation t anyway:
 * one operation less on the chain a round. With a three-input XOR
 * (has_xor3) the sums, keys included, take 6 operations instead of 10 per
 * vector.
 */
UB_KERNEL void UL_RN(round256_chain)(UL_HT *a, UL_HT *b, UL_HT kl, UL_HT kr)
{
    UL_HT x = UL_RN(sbox256)(*a, 0), y = UL_RN(sbox256)(*b, 0), y2, t;
    if (UL_OP(has_xor3)) {
        UL_RN(ladder256x3)(x, y, &y2, &x, &t);
        *a = UL_RN(pl256)(UL_RN(xor3_256)(x, UL_RN(xor256)(y2, kl), t));
        *b = UL_RN(pr256)(UL_RN(xor3_256)(y2, kr, t));
        return;
    }
    UL_HT w = UL_RN(xor256)(x, y);
    t = UL_RN(xor256)(w, UL_RN(rot256)(x, UB256_ROT2));
    t = UL_RN(pin256)(t);
    y2 = UL_RN(xor256)(t, UL_RN(rot256)(w, UB256_ROT3));
    x = UL_RN(xor256)(x, UL_RN(rot256)(w, UB256_ROT1));
    x = UL_RN(xor256)(x, UL_RN(rot256)(y2, UB256_ROT2));
    t = UL_RN(rot256)(x, UB256_ROT5);
    y = UL_RN(pin256)(UL_RN(xor256)(y2, kr));
    kl = UL_RN(pin256)(UL_RN(xor256)(y2, kl));
    x = UL_RN(pin256)(UL_RN(xor256)(x, kl));
    *a = UL_RN(pl256)(UL_RN(xor256)(x, t));
    *b = UL_RN(pr256)(UL_RN(xor256)(y, t));
}

#ifdef UL_PERM256H
/*
 * round256 where PL and PR are each one cross-lane byte permute
 * (UL_PERM256H, AVX-512 VBMI's vpermb: 3 cycles, where vpermq/vpermd and
 * the row's shuffle are 4) and the ladder's last rotation t = z^5 x3 goes
 * into the permutes: PL(x3 ^ y2 ^ t) = PL(x3 ^ y2) ^ (PL z^5)(x3) and
 * PR(y2 ^ t) = PR(y2) ^ (PR z^5)(x3), so after x3 the chain is an XOR, a
 * permute and an XOR (PL(x3) ^ PL(y2) as two permutes, one XOR less deep,
 * measured slower: docs/performance.md). The key of the next round is
 * added after PL and PR, so it is the stored key as it is (kl, kr: round
 * key i + 1; the last round's is the final key), with no PL^-1 form and
 * no XOR at the next round's start: about 10 cycles a round instead of
 * 13, for 10 shuffles (2 S-box, 4 rotations, 4 permutes).
 */
UB_KERNEL void UL_RN(round256_next)(UL_HT *a, UL_HT *b, UL_HT kl, UL_HT kr)
{
    UL_HT x = UL_RN(sbox256)(*a, 0), y = UL_RN(sbox256)(*b, 0), y2, x3;
    UL_HT w = UL_RN(xor256)(x, y);
    y2 = UL_RN(xor3_256)(w, UL_RN(rot256)(x, UB256_ROT2), UL_RN(rot256)(w, UB256_ROT3));
    x3 = UL_RN(xor3_256)(x, UL_RN(rot256)(w, UB256_ROT1), UL_RN(rot256)(y2, UB256_ROT2));
    *a = UL_RN(xor3_256)(UL_PERM256H(UL_RN(xor256)(x3, y2), PL), UL_PERM256H(x3, PL_ROT5), kl);
    *b = UL_RN(xor3_256)(UL_PERM256H(y2, PR), UL_PERM256H(x3, PR_ROT5), kr);
}

/*
 * round256_inv on the same permutes: undo round i, then add round key i
 * (k0, k1). x3 = PL^-1(a) ^ PR^-1(b) and its rotation by 5 nibbles are
 * permutes of a and b (ROT5_PL_INV, ROT5_PR_INV: PL^-1 or PR^-1, then the
 * rotation), so y2 = y ^ z^5 x3 is ready one permute and one XOR after
 * the round's start (4 cycles) instead of the two moves, the two shuffles,
 * an XOR and a rotation after it (7).
 */
UB_KERNEL void UL_RN(round256_prev)(UL_HT *a, UL_HT *b, UL_HT k0, UL_HT k1)
{
    UL_HT y = UL_PERM256H(*b, PR_INV);
    UL_HT x3 = UL_RN(xor256)(UL_PERM256H(*a, PL_INV), y);
    UL_HT y2 = UL_RN(xor3_256)(y, UL_PERM256H(*a, ROT5_PL_INV), UL_PERM256H(*b, ROT5_PR_INV));
    UL_HT x1 = UL_RN(xor256)(x3, UL_RN(rot256)(y2, UB256_ROT2));
    UL_HT w = UL_RN(xor3_256)(y2, UL_RN(rot256)(x3, UB256_ROT2), UL_RN(rot256)(y2, UB256_ROT4));
    UL_HT r = UL_RN(rot256)(w, UB256_ROT1);
    *a = UL_RN(xor256)(UL_RN(sbox256)(UL_RN(xor256)(x1, r), 1), k0);
    *b = UL_RN(xor256)(UL_RN(sbox256)(UL_RN(xor3_256)(w, x1, r), 1), k1);
}
#endif

#ifndef UL_HALF1
/* Undo round i, then add round key i (k0, k1); p as round256's. */
UB_KERNEL void UL_RN(round256_inv)(UL_HT *a, UL_HT *b, UL_HT k0, UL_HT k1, int p)
{
    UL_HT x = UL_RN(pl256_inv)(*a), y = UL_RN(pr256_inv)(*b);
    if (UL_OP(has_xor3)) {
        /* as round256's: w straight from y2 and x3 (the rotations by 2 and
         * 4 of y2), x and y from x1 and w: 12 operations deep, not 15 */
        UL_HT x3 = UL_RN(xor256)(x, y);
        UL_HT y2 = UL_RN(xor256)(y, UL_RN(rot256)(x3, UB256_ROT5));
        UL_HT x1 = UL_RN(xor256)(x3, UL_RN(rot256)(y2, UB256_ROT2));
        UL_HT w = UL_RN(xor3_256)(y2, UL_RN(rot256)(x3, UB256_ROT2), UL_RN(rot256)(y2, UB256_ROT4));
        UL_HT r = UL_RN(rot256)(w, UB256_ROT1);
        x = UL_RN(xor256)(x1, r);
        y = UL_RN(xor3_256)(w, x1, r);
    } else if (UL_DEEP256) {
        /* the same sums of two-input XORs: 7 operations deep, not 10 */
        UL_HT x3 = UL_RN(xor256)(x, y);
        UL_HT y2 = UL_RN(xor256)(y, UL_RN(rot256)(x3, UB256_ROT5));
        UL_HT x1 = UL_RN(pin256)(UL_RN(xor256)(x3, UL_RN(rot256)(y2, UB256_ROT2)));
        UL_HT w = UL_RN(pin256)(UL_RN(xor256)(y2, UL_RN(rot256)(x3, UB256_ROT2)));
        w = UL_RN(xor256)(w, UL_RN(rot256)(y2, UB256_ROT4));
        UL_HT r = UL_RN(rot256)(w, UB256_ROT1);
        x = UL_RN(xor256)(x1, r);
        y = UL_RN(xor256)(UL_RN(pin256)(UL_RN(xor256)(w, x1)), r);
    } else {
        x = UL_RN(xor256)(x, y);
        y = UL_RN(xor256)(y, UL_RN(rot256)(x, UB256_ROT5));
        x = UL_RN(xor256)(x, UL_RN(rot256)(y, UB256_ROT2));
        y = UL_RN(xor256)(y, UL_RN(rot256)(x, UB256_ROT2));
        x = UL_RN(xor256)(x, UL_RN(rot256)(y, UB256_ROT1));
        y = UL_RN(xor256)(y, x);
    }
    x = p ? UL_RN(sbox256p)(x, 1) : UL_RN(sbox256)(x, 1);
    y = p ? UL_RN(sbox256p)(y, 1) : UL_RN(sbox256)(y, 1);
    *a = UL_RN(xor256)(x, k0);
    *b = UL_RN(xor256)(y, k1);
}

#endif

#undef UL_HT
#undef UL_HALF1
#undef UL_ROW256
#undef UL_ROW256H
#undef UL_Q0213
#undef UL_D04261537
#undef UL_PERM256H
#undef UL_T
#undef UL_OP
#undef UL_RN
