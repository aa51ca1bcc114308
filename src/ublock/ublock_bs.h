/* SPDX-License-Identifier: Apache-2.0 */
/*
 * uBlock, bitsliced by nibble bit-plane: the algorithm written once over a
 * small vector vocabulary. Each ISA file (ublock_ssse3.c, ublock_avx2.c, ...)
 * defines that vocabulary (or takes src/simd/'s with UB_V_ISA), includes this header once for the
 * shared part and then once per block size ("member template", see below).
 *
 * ---- State layout --------------------------------------------------------
 *
 * Eight blocks share every byte: bit b of a state byte belongs to block b.
 * A "plane-half" holds one bit-plane j (bit j of every nibble, j = 0..3,
 * j = 3 the most significant) of one half X0 or X1 of those eight blocks,
 * one byte per nibble position. The state is eight plane-halves:
 *
 *     x[0..3] = X0 planes 0..3        x[4..7] = X1 planes 0..3
 *
 * uBlock-128 (16 nibbles per half): a plane-half is 16 bytes = one xmm. With
 * ymm registers each 128-bit lane carries its own eight blocks: lane l, bit b
 * is block 2b + l of the pass, so a pass is 16 blocks loaded as 8 ymm of two
 * consecutive blocks each.
 * uBlock-256 (32 nibbles per half): a plane-half is 32 bytes = one ymm or two
 * xmm ("lanes" 0 and 1); a pass is always 8 blocks.
 *
 * Which byte holds which nibble position is a free choice made to save
 * shuffles; every layout used is defined next to its table below, by rules
 * from which each table row can be rederived by hand.
 *
 * ---- S-box ---------------------------------------------------------------
 *
 * s is four Feistel-like updates of its bits (checked exhaustively):
 *     x0 ^= ~(x3 & x2); x3 ^= x2 | x1; x2 ^= ~(x1 & x0); x1 ^= x0 | x3;
 * The NOTs are dropped. Without them the S-box layer leaves planes 0, 1, 2
 * of both halves complemented (plane 3 exact). The linear layer only XORs
 * halves together and permutes nibble positions, so a whole-plane
 * complement pattern C = (planes 0,1,2 of both halves) maps to itself; the
 * next round key therefore carries C (every stored key K'_i = RK_i ^ C for
 * i >= 1, K'_0 = RK_0) and cancels it: rounds cost 8 gates, no NOT.
 * Decryption uses the same stored keys: each S^-1 input then arrives
 * complemented by C, and the circuit below, written for that input, returns
 * the exact output, which meets K'_{i-1} = RK_{i-1} ^ C and gives pattern C
 * again at the next S^-1 (and the exact plaintext after K'_0).
 *
 * ---- Linear layer --------------------------------------------------------
 *
 * <<<32 by 4k bits is a permutation of nibble positions within each 8-nibble
 * word; with the words of a half never crossing a 128-bit lane, it is one
 * pshufb per plane-half. PL/PR permute nibble pairs.
 *
 * uBlock-128 lets the layout drift instead of moving X0: after PL the bytes
 * of X0 stay where they are and the layout is renamed, pos_{i+1} =
 * pos_i o PL; X1 is moved once (PR and the renaming in one pshufb, "fix").
 * PL has order 8, so there are 8 layouts and 16 and 24 rounds both end in
 * layout 0; the round keys are stored in their round's layout. The rounds
 * then spend their shuffles on a short dependency chain (see round_enc).
 *
 * uBlock-256: PL256/PR256 take, for every output word, one pair from each
 * input word, so they cross lanes whatever the layout. Layout L groups the
 * nibble pairs of each lane into dwords of two pairs with the same
 * destination lane under PL and under PR (the pairs of each lane fall into
 * four such classes of exactly two). Then PL is a qword permutation
 * (vpermq, or two unpacks) plus an in-lane pshufb, PR a dword permutation
 * (vpermd, or two shufps) plus a pshufb: 2 operations per plane-half each.
 */

/* ===================== shared part (once per ISA) ======================== */
#ifndef UBLOCK_BS_SHARED
#define UBLOCK_BS_SHARED

/* A backend over src/simd/ names its vector type (UB_V_ISA: v128, v256)
 * after including the ISA's header; the vocabulary is then that header's
 * (ub_row: an aligned table row; ub_shuf .. ub_odd32 for ublock_v128.h). */
#ifdef UB_V_ISA
typedef UB_V_ISA ub_v;
#define ub_xor KUAI_V(UB_V_ISA, xor)
#define ub_and KUAI_V(UB_V_ISA, and)
#define ub_or KUAI_V(UB_V_ISA, or)
#define ub_andn KUAI_V(UB_V_ISA, andn)
#define ub_srl64 KUAI_V(UB_V_ISA, srl64v)
#define ub_sll64 KUAI_V(UB_V_ISA, sll64v)
#define ub_set1_8 KUAI_V(UB_V_ISA, set1_8)
#define ub_unpacklo64 KUAI_V(UB_V_ISA, unpacklo64)
#define ub_unpackhi64 KUAI_V(UB_V_ISA, unpackhi64)
#define ub_loadu KUAI_V(UB_V_ISA, loadu)
#define ub_storeu KUAI_V(UB_V_ISA, storeu)
#define ub_row KUAI_V(UB_V_ISA, load)
#define ub_ones KUAI_V(UB_V_ISA, ones)
#define ub_shuf KUAI_V(UB_V_ISA, shuf8)
#define ub_unpacklo32 KUAI_V(UB_V_ISA, unpacklo32)
#define ub_unpackhi32 KUAI_V(UB_V_ISA, unpackhi32)
#define ub_even32 KUAI_V(UB_V_ISA, even32)
#define ub_odd32 KUAI_V(UB_V_ISA, odd32)
#endif

/* The key setup every backend derives its own form from (ublock.h): the
 * portable one unless the file names its ISA's nibble one (before
 * including this). */
#ifndef UB_KEY_SETUP
#define UB_KEY_SETUP ublock_expand_raw
#endif

/* The kernels take ns (passes side by side) as an argument that is a
 * constant in each caller; only inlined does it unroll the pass loops and
 * keep the state in registers. gcc clones them by itself, clang (zig cc,
 * the ARM64 and LoongArch builds) does not: it must be told. */
#define UB_KERNEL static inline __attribute__((always_inline))

/*
 * uBlock-128 shuffle rows, per layout i = 0..7, generated by composing the
 * spec tables (PL128, PR128 from ublock_tables.c):
 *   pos_0[2k + e] = 8e + k   (byte k: high nibble of pair k, byte 8+k: low
 *                             nibble: what the transposition yields)
 *   pos_{i+1}[n] = pos_i[PLn[n]],  PLn[2q + e] = 2 PL128[q] + e
 * rows, each "out byte at pos_i[n] = in byte ...":
 *   rot1/rot2/rot5: idx[pos_i[n]] = pos_i[8(n/8) + (n + k) % 8]
 *   fix:     idx[pos_{i+1}[n]] = pos_i[PRn[n]]   (X1 through PR into pos_{i+1})
 *   fix_inv: its inverse
 *   key:     idx[pos_i[n]] = pos_0[n]            (pos_0 key masks into pos_i)
 * and two compositions (a pshufb by row A then by row B is one pshufb by
 * idx[b] = A[B[b]]) that let the rounds run two shuffles side by side.
 */
enum {
    UB128_ROT1,
    UB128_ROT2,
    UB128_ROT5,
    UB128_FIX,
    UB128_FIX_INV,
    UB128_KEY,
    UB128_FIX_ROT5,     /* fix o rot5: idx[b] = rot5[fix[b]] */
    UB128_ROT5_FIX_INV, /* rot5 o fix_inv: idx[b] = fix_inv[rot5[b]] */
    UB128_ROT3,         /* rot1 o rot2 (the low-latency round, ublock_ll_r128.h) */
    UB128_ROT4,         /* rot2 o rot2 */
    UB128_ROWS
};

static const _Alignas(UB_V_BYTES) uint8_t ub128_tab[8][UB128_ROWS][UB_V_BYTES] = {
    {
        /* layout 0 */
        UB_ROW16(0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x01, 0x02, 0x03, 0x00, 0x05, 0x06,
                 0x07, 0x04),
        UB_ROW16(0x01, 0x02, 0x03, 0x00, 0x05, 0x06, 0x07, 0x04, 0x09, 0x0a, 0x0b, 0x08, 0x0d, 0x0e,
                 0x0f, 0x0c),
        UB_ROW16(0x0a, 0x0b, 0x08, 0x09, 0x0e, 0x0f, 0x0c, 0x0d, 0x03, 0x00, 0x01, 0x02, 0x07, 0x04,
                 0x05, 0x06),
        UB_ROW16(0x01, 0x02, 0x06, 0x07, 0x05, 0x03, 0x00, 0x04, 0x09, 0x0a, 0x0e, 0x0f, 0x0d, 0x0b,
                 0x08, 0x0c),
        UB_ROW16(0x06, 0x00, 0x01, 0x05, 0x07, 0x04, 0x02, 0x03, 0x0e, 0x08, 0x09, 0x0d, 0x0f, 0x0c,
                 0x0a, 0x0b),
        UB_ROW16(0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d,
                 0x0e, 0x0f),
        UB_ROW16(0x0b, 0x08, 0x0c, 0x0d, 0x0f, 0x09, 0x0a, 0x0e, 0x00, 0x01, 0x05, 0x06, 0x04, 0x02,
                 0x03, 0x07),
        UB_ROW16(0x09, 0x0d, 0x0e, 0x08, 0x0a, 0x0b, 0x0f, 0x0c, 0x05, 0x06, 0x00, 0x01, 0x03, 0x07,
                 0x04, 0x02),
        UB_ROW16(0x09, 0x0a, 0x0b, 0x08, 0x0d, 0x0e, 0x0f, 0x0c, 0x02, 0x03, 0x00, 0x01, 0x06, 0x07,
                 0x04, 0x05),
        UB_ROW16(0x02, 0x03, 0x00, 0x01, 0x06, 0x07, 0x04, 0x05, 0x0a, 0x0b, 0x08, 0x09, 0x0e, 0x0f,
                 0x0c, 0x0d),
    },
    {
        /* layout 1 */
        UB_ROW16(0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x02, 0x03, 0x07, 0x04, 0x06, 0x00,
                 0x01, 0x05),
        UB_ROW16(0x02, 0x03, 0x07, 0x04, 0x06, 0x00, 0x01, 0x05, 0x0a, 0x0b, 0x0f, 0x0c, 0x0e, 0x08,
                 0x09, 0x0d),
        UB_ROW16(0x0f, 0x0c, 0x0d, 0x0e, 0x09, 0x0a, 0x0b, 0x08, 0x05, 0x06, 0x00, 0x01, 0x03, 0x07,
                 0x04, 0x02),
        UB_ROW16(0x02, 0x03, 0x06, 0x04, 0x07, 0x00, 0x05, 0x01, 0x0a, 0x0b, 0x0e, 0x0c, 0x0f, 0x08,
                 0x0d, 0x09),
        UB_ROW16(0x05, 0x07, 0x00, 0x01, 0x03, 0x06, 0x02, 0x04, 0x0d, 0x0f, 0x08, 0x09, 0x0b, 0x0e,
                 0x0a, 0x0c),
        UB_ROW16(0x04, 0x00, 0x05, 0x01, 0x02, 0x07, 0x03, 0x06, 0x0c, 0x08, 0x0d, 0x09, 0x0a, 0x0f,
                 0x0b, 0x0e),
        UB_ROW16(0x0d, 0x0e, 0x0b, 0x09, 0x08, 0x0f, 0x0a, 0x0c, 0x00, 0x01, 0x04, 0x03, 0x02, 0x05,
                 0x07, 0x06),
        UB_ROW16(0x0c, 0x0b, 0x0e, 0x0a, 0x0f, 0x08, 0x09, 0x0d, 0x06, 0x02, 0x05, 0x07, 0x01, 0x04,
                 0x03, 0x00),
        UB_ROW16(0x0a, 0x0b, 0x0f, 0x0c, 0x0e, 0x08, 0x09, 0x0d, 0x07, 0x04, 0x05, 0x06, 0x01, 0x02,
                 0x03, 0x00),
        UB_ROW16(0x07, 0x04, 0x05, 0x06, 0x01, 0x02, 0x03, 0x00, 0x0f, 0x0c, 0x0d, 0x0e, 0x09, 0x0a,
                 0x0b, 0x08),
    },
    {
        /* layout 2 */
        UB_ROW16(0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x07, 0x04, 0x01, 0x06, 0x05, 0x02,
                 0x00, 0x03),
        UB_ROW16(0x07, 0x04, 0x01, 0x06, 0x05, 0x02, 0x00, 0x03, 0x0f, 0x0c, 0x09, 0x0e, 0x0d, 0x0a,
                 0x08, 0x0b),
        UB_ROW16(0x0b, 0x0d, 0x0c, 0x08, 0x0a, 0x09, 0x0f, 0x0e, 0x06, 0x02, 0x05, 0x07, 0x01, 0x04,
                 0x03, 0x00),
        UB_ROW16(0x05, 0x04, 0x01, 0x06, 0x07, 0x03, 0x00, 0x02, 0x0d, 0x0c, 0x09, 0x0e, 0x0f, 0x0b,
                 0x08, 0x0a),
        UB_ROW16(0x06, 0x02, 0x07, 0x05, 0x01, 0x00, 0x03, 0x04, 0x0e, 0x0a, 0x0f, 0x0d, 0x09, 0x08,
                 0x0b, 0x0c),
        UB_ROW16(0x02, 0x04, 0x07, 0x00, 0x05, 0x06, 0x01, 0x03, 0x0a, 0x0c, 0x0f, 0x08, 0x0d, 0x0e,
                 0x09, 0x0b),
        UB_ROW16(0x09, 0x0a, 0x0d, 0x0f, 0x0e, 0x08, 0x0b, 0x0c, 0x04, 0x01, 0x02, 0x03, 0x00, 0x07,
                 0x06, 0x05),
        UB_ROW16(0x0d, 0x08, 0x09, 0x0e, 0x0f, 0x0a, 0x0c, 0x0b, 0x03, 0x07, 0x00, 0x04, 0x02, 0x01,
                 0x05, 0x06),
        UB_ROW16(0x0f, 0x0c, 0x09, 0x0e, 0x0d, 0x0a, 0x08, 0x0b, 0x03, 0x05, 0x04, 0x00, 0x02, 0x01,
                 0x07, 0x06),
        UB_ROW16(0x03, 0x05, 0x04, 0x00, 0x02, 0x01, 0x07, 0x06, 0x0b, 0x0d, 0x0c, 0x08, 0x0a, 0x09,
                 0x0f, 0x0e),
    },
    {
        /* layout 3 */
        UB_ROW16(0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x02, 0x05, 0x04, 0x00, 0x03, 0x06,
                 0x07, 0x01),
        UB_ROW16(0x02, 0x05, 0x04, 0x00, 0x03, 0x06, 0x07, 0x01, 0x0a, 0x0d, 0x0c, 0x08, 0x0b, 0x0e,
                 0x0f, 0x09),
        UB_ROW16(0x0c, 0x0e, 0x0b, 0x0a, 0x08, 0x0f, 0x09, 0x0d, 0x03, 0x07, 0x00, 0x04, 0x02, 0x01,
                 0x05, 0x06),
        UB_ROW16(0x05, 0x02, 0x06, 0x00, 0x03, 0x04, 0x07, 0x01, 0x0d, 0x0a, 0x0e, 0x08, 0x0b, 0x0c,
                 0x0f, 0x09),
        UB_ROW16(0x03, 0x07, 0x01, 0x04, 0x05, 0x00, 0x02, 0x06, 0x0b, 0x0f, 0x09, 0x0c, 0x0d, 0x08,
                 0x0a, 0x0e),
        UB_ROW16(0x05, 0x02, 0x06, 0x04, 0x07, 0x03, 0x00, 0x01, 0x0d, 0x0a, 0x0e, 0x0c, 0x0f, 0x0b,
                 0x08, 0x09),
        UB_ROW16(0x0f, 0x0b, 0x09, 0x0c, 0x0a, 0x08, 0x0d, 0x0e, 0x01, 0x00, 0x05, 0x03, 0x04, 0x02,
                 0x06, 0x07),
        UB_ROW16(0x0d, 0x0a, 0x0c, 0x09, 0x0b, 0x0e, 0x0f, 0x08, 0x04, 0x06, 0x03, 0x05, 0x01, 0x07,
                 0x00, 0x02),
        UB_ROW16(0x0a, 0x0d, 0x0c, 0x08, 0x0b, 0x0e, 0x0f, 0x09, 0x04, 0x06, 0x03, 0x02, 0x00, 0x07,
                 0x01, 0x05),
        UB_ROW16(0x04, 0x06, 0x03, 0x02, 0x00, 0x07, 0x01, 0x05, 0x0c, 0x0e, 0x0b, 0x0a, 0x08, 0x0f,
                 0x09, 0x0d),
    },
    {
        /* layout 4 */
        UB_ROW16(0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x06, 0x04, 0x07, 0x02, 0x00, 0x03,
                 0x01, 0x05),
        UB_ROW16(0x06, 0x04, 0x07, 0x02, 0x00, 0x03, 0x01, 0x05, 0x0e, 0x0c, 0x0f, 0x0a, 0x08, 0x0b,
                 0x09, 0x0d),
        UB_ROW16(0x09, 0x08, 0x0d, 0x0f, 0x0e, 0x0a, 0x0c, 0x0b, 0x04, 0x06, 0x03, 0x05, 0x01, 0x07,
                 0x00, 0x02),
        UB_ROW16(0x06, 0x02, 0x00, 0x04, 0x07, 0x03, 0x01, 0x05, 0x0e, 0x0a, 0x08, 0x0c, 0x0f, 0x0b,
                 0x09, 0x0d),
        UB_ROW16(0x02, 0x06, 0x01, 0x05, 0x03, 0x07, 0x00, 0x04, 0x0a, 0x0e, 0x09, 0x0d, 0x0b, 0x0f,
                 0x08, 0x0c),
        UB_ROW16(0x07, 0x05, 0x03, 0x02, 0x06, 0x01, 0x04, 0x00, 0x0f, 0x0d, 0x0b, 0x0a, 0x0e, 0x09,
                 0x0c, 0x08),
        UB_ROW16(0x0c, 0x0d, 0x09, 0x0e, 0x0b, 0x0f, 0x08, 0x0a, 0x00, 0x03, 0x04, 0x01, 0x02, 0x05,
                 0x06, 0x07),
        UB_ROW16(0x0e, 0x0a, 0x0f, 0x0c, 0x08, 0x09, 0x0b, 0x0d, 0x03, 0x00, 0x05, 0x07, 0x06, 0x04,
                 0x02, 0x01),
        UB_ROW16(0x0e, 0x0c, 0x0f, 0x0a, 0x08, 0x0b, 0x09, 0x0d, 0x01, 0x00, 0x05, 0x07, 0x06, 0x02,
                 0x04, 0x03),
        UB_ROW16(0x01, 0x00, 0x05, 0x07, 0x06, 0x02, 0x04, 0x03, 0x09, 0x08, 0x0d, 0x0f, 0x0e, 0x0a,
                 0x0c, 0x0b),
    },
    {
        /* layout 5 */
        UB_ROW16(0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x01, 0x07, 0x06, 0x00, 0x05, 0x02,
                 0x04, 0x03),
        UB_ROW16(0x01, 0x07, 0x06, 0x00, 0x05, 0x02, 0x04, 0x03, 0x09, 0x0f, 0x0e, 0x08, 0x0d, 0x0a,
                 0x0c, 0x0b),
        UB_ROW16(0x0f, 0x0b, 0x0c, 0x09, 0x0a, 0x0e, 0x0d, 0x08, 0x03, 0x00, 0x05, 0x07, 0x06, 0x04,
                 0x02, 0x01),
        UB_ROW16(0x05, 0x07, 0x06, 0x04, 0x01, 0x02, 0x00, 0x03, 0x0d, 0x0f, 0x0e, 0x0c, 0x09, 0x0a,
                 0x08, 0x0b),
        UB_ROW16(0x06, 0x04, 0x05, 0x07, 0x03, 0x00, 0x02, 0x01, 0x0e, 0x0c, 0x0d, 0x0f, 0x0b, 0x08,
                 0x0a, 0x09),
        UB_ROW16(0x06, 0x07, 0x01, 0x05, 0x03, 0x00, 0x02, 0x04, 0x0e, 0x0f, 0x09, 0x0d, 0x0b, 0x08,
                 0x0a, 0x0c),
        UB_ROW16(0x0e, 0x08, 0x0d, 0x0a, 0x0b, 0x0c, 0x0f, 0x09, 0x04, 0x01, 0x02, 0x06, 0x00, 0x05,
                 0x03, 0x07),
        UB_ROW16(0x09, 0x0f, 0x0b, 0x0c, 0x0d, 0x0a, 0x08, 0x0e, 0x07, 0x06, 0x00, 0x01, 0x02, 0x03,
                 0x05, 0x04),
        UB_ROW16(0x09, 0x0f, 0x0e, 0x08, 0x0d, 0x0a, 0x0c, 0x0b, 0x07, 0x03, 0x04, 0x01, 0x02, 0x06,
                 0x05, 0x00),
        UB_ROW16(0x07, 0x03, 0x04, 0x01, 0x02, 0x06, 0x05, 0x00, 0x0f, 0x0b, 0x0c, 0x09, 0x0a, 0x0e,
                 0x0d, 0x08),
    },
    {
        /* layout 6 */
        UB_ROW16(0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x02, 0x03, 0x04, 0x05, 0x07, 0x06,
                 0x01, 0x00),
        UB_ROW16(0x02, 0x03, 0x04, 0x05, 0x07, 0x06, 0x01, 0x00, 0x0a, 0x0b, 0x0c, 0x0d, 0x0f, 0x0e,
                 0x09, 0x08),
        UB_ROW16(0x0c, 0x0d, 0x0f, 0x0e, 0x08, 0x09, 0x0b, 0x0a, 0x07, 0x06, 0x00, 0x01, 0x02, 0x03,
                 0x05, 0x04),
        UB_ROW16(0x03, 0x02, 0x04, 0x05, 0x07, 0x06, 0x00, 0x01, 0x0b, 0x0a, 0x0c, 0x0d, 0x0f, 0x0e,
                 0x08, 0x09),
        UB_ROW16(0x06, 0x07, 0x01, 0x00, 0x02, 0x03, 0x05, 0x04, 0x0e, 0x0f, 0x09, 0x08, 0x0a, 0x0b,
                 0x0d, 0x0c),
        UB_ROW16(0x03, 0x06, 0x00, 0x07, 0x01, 0x04, 0x05, 0x02, 0x0b, 0x0e, 0x08, 0x0f, 0x09, 0x0c,
                 0x0d, 0x0a),
        UB_ROW16(0x0e, 0x0f, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x01, 0x00, 0x02, 0x03, 0x04, 0x05,
                 0x07, 0x06),
        UB_ROW16(0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x08, 0x09, 0x04, 0x05, 0x06, 0x07, 0x01, 0x00,
                 0x03, 0x02),
        UB_ROW16(0x0a, 0x0b, 0x0c, 0x0d, 0x0f, 0x0e, 0x09, 0x08, 0x04, 0x05, 0x07, 0x06, 0x00, 0x01,
                 0x03, 0x02),
        UB_ROW16(0x04, 0x05, 0x07, 0x06, 0x00, 0x01, 0x03, 0x02, 0x0c, 0x0d, 0x0f, 0x0e, 0x08, 0x09,
                 0x0b, 0x0a),
    },
    {
        /* layout 7 */
        UB_ROW16(0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x05, 0x04, 0x07, 0x06, 0x00, 0x01,
                 0x02, 0x03),
        UB_ROW16(0x05, 0x04, 0x07, 0x06, 0x00, 0x01, 0x02, 0x03, 0x0d, 0x0c, 0x0f, 0x0e, 0x08, 0x09,
                 0x0a, 0x0b),
        UB_ROW16(0x09, 0x08, 0x0b, 0x0a, 0x0d, 0x0c, 0x0f, 0x0e, 0x04, 0x05, 0x06, 0x07, 0x01, 0x00,
                 0x03, 0x02),
        UB_ROW16(0x05, 0x06, 0x07, 0x04, 0x00, 0x03, 0x02, 0x01, 0x0d, 0x0e, 0x0f, 0x0c, 0x08, 0x0b,
                 0x0a, 0x09),
        UB_ROW16(0x04, 0x07, 0x06, 0x05, 0x03, 0x00, 0x01, 0x02, 0x0c, 0x0f, 0x0e, 0x0d, 0x0b, 0x08,
                 0x09, 0x0a),
        UB_ROW16(0x01, 0x03, 0x04, 0x06, 0x00, 0x02, 0x07, 0x05, 0x09, 0x0b, 0x0c, 0x0e, 0x08, 0x0a,
                 0x0f, 0x0d),
        UB_ROW16(0x0c, 0x0f, 0x0e, 0x0d, 0x09, 0x0a, 0x0b, 0x08, 0x00, 0x03, 0x02, 0x01, 0x04, 0x07,
                 0x06, 0x05),
        UB_ROW16(0x0f, 0x0c, 0x0d, 0x0e, 0x08, 0x0b, 0x0a, 0x09, 0x03, 0x00, 0x01, 0x02, 0x07, 0x04,
                 0x05, 0x06),
        UB_ROW16(0x0d, 0x0c, 0x0f, 0x0e, 0x08, 0x09, 0x0a, 0x0b, 0x01, 0x00, 0x03, 0x02, 0x05, 0x04,
                 0x07, 0x06),
        UB_ROW16(0x01, 0x00, 0x03, 0x02, 0x05, 0x04, 0x07, 0x06, 0x09, 0x08, 0x0b, 0x0a, 0x0d, 0x0c,
                 0x0f, 0x0e),
    },
};

/*
 * uBlock-256 layout L (byte L[n] of a plane-half holds nibble n; bytes
 * 0..15 = lane 0 = words 0 and 1, bytes 16..31 = lane 1 = words 2 and 3):
 *   L = {12,13, 8, 9, 0, 1, 4, 5,10,11,14,15, 2, 3, 6, 7,
 *        20,21,16,17,28,29,24,25,18,19,22,23,30,31,26,27}
 * Dword d of lane l holds the two pairs q of that lane whose destination
 * lanes are (PL: d >> 1, PR: d & 1), destination of pair q under P being the
 * lane of the output pair j with P[j] = q. So PL gathers dwords {0,1} of
 * each lane into lane 0 (vpermq 0xd8) and PR dwords {0,2} (vpermd
 * 0,2,4,6,1,3,5,7); the rows below finish each inside the lanes.
 * The transposition yields the split layout S (lane l: bytes 0..7 the high
 * nibbles of pairs 8l..8l+7, bytes 8..15 their low nibbles); to_l/from_l
 * convert. All rows are pshufb indices per 16-byte lane.
 */
enum {
    UB256_ROT1,
    UB256_ROT2,
    UB256_ROT5,
    UB256_PL,
    UB256_PR,
    UB256_PL_INV, /* applied before the inverse dword move */
    UB256_PR_INV,
    UB256_TO_L,
    UB256_FROM_L,
    UB256_ROT3, /* rot1 o rot2 (the low-latency round, ublock_ll_r256.h) */
    UB256_ROT4, /* rot2 o rot2 */
    UB256_ROWS
};

static const _Alignas(32) uint8_t ub256_tab[UB256_ROWS][32] = {
    {0x01, 0x04, 0x03, 0x06, 0x05, 0x0c, 0x07, 0x0a, 0x09, 0x00, 0x0b,
     0x0e, 0x0d, 0x08, 0x0f, 0x02, 0x01, 0x0c, 0x03, 0x06, 0x05, 0x00,
     0x07, 0x0e, 0x09, 0x04, 0x0b, 0x02, 0x0d, 0x08, 0x0f, 0x0a},
    {0x04, 0x05, 0x06, 0x07, 0x0c, 0x0d, 0x0a, 0x0b, 0x00, 0x01, 0x0e,
     0x0f, 0x08, 0x09, 0x02, 0x03, 0x0c, 0x0d, 0x06, 0x07, 0x00, 0x01,
     0x0e, 0x0f, 0x04, 0x05, 0x02, 0x03, 0x08, 0x09, 0x0a, 0x0b},
    {0x0d, 0x08, 0x0b, 0x0e, 0x09, 0x00, 0x0f, 0x02, 0x05, 0x0c, 0x03,
     0x06, 0x01, 0x04, 0x07, 0x0a, 0x09, 0x04, 0x0f, 0x0a, 0x0d, 0x08,
     0x0b, 0x02, 0x01, 0x0c, 0x07, 0x0e, 0x05, 0x00, 0x03, 0x06},
    {0x0c, 0x0d, 0x08, 0x09, 0x0e, 0x0f, 0x0a, 0x0b, 0x06, 0x07, 0x04,
     0x05, 0x00, 0x01, 0x02, 0x03, 0x02, 0x03, 0x0e, 0x0f, 0x00, 0x01,
     0x08, 0x09, 0x0c, 0x0d, 0x04, 0x05, 0x0a, 0x0b, 0x06, 0x07},
    {0x04, 0x05, 0x00, 0x01, 0x0a, 0x0b, 0x0e, 0x0f, 0x0c, 0x0d, 0x08,
     0x09, 0x02, 0x03, 0x06, 0x07, 0x04, 0x05, 0x0e, 0x0f, 0x02, 0x03,
     0x00, 0x01, 0x0c, 0x0d, 0x06, 0x07, 0x0a, 0x0b, 0x08, 0x09},
    {0x0c, 0x0d, 0x0e, 0x0f, 0x0a, 0x0b, 0x08, 0x09, 0x02, 0x03, 0x06,
     0x07, 0x00, 0x01, 0x04, 0x05, 0x04, 0x05, 0x00, 0x01, 0x0a, 0x0b,
     0x0e, 0x0f, 0x06, 0x07, 0x0c, 0x0d, 0x08, 0x09, 0x02, 0x03},
    {0x02, 0x03, 0x0c, 0x0d, 0x00, 0x01, 0x0e, 0x0f, 0x0a, 0x0b, 0x04,
     0x05, 0x08, 0x09, 0x06, 0x07, 0x06, 0x07, 0x04, 0x05, 0x00, 0x01,
     0x0a, 0x0b, 0x0e, 0x0f, 0x0c, 0x0d, 0x08, 0x09, 0x02, 0x03},
    {0x02, 0x0a, 0x06, 0x0e, 0x03, 0x0b, 0x07, 0x0f, 0x01, 0x09, 0x04,
     0x0c, 0x00, 0x08, 0x05, 0x0d, 0x01, 0x09, 0x04, 0x0c, 0x00, 0x08,
     0x05, 0x0d, 0x03, 0x0b, 0x07, 0x0f, 0x02, 0x0a, 0x06, 0x0e},
    {0x0c, 0x08, 0x00, 0x04, 0x0a, 0x0e, 0x02, 0x06, 0x0d, 0x09, 0x01,
     0x05, 0x0b, 0x0f, 0x03, 0x07, 0x04, 0x00, 0x0c, 0x08, 0x02, 0x06,
     0x0e, 0x0a, 0x05, 0x01, 0x0d, 0x09, 0x03, 0x07, 0x0f, 0x0b},
    {0x05, 0x0c, 0x07, 0x0a, 0x0d, 0x08, 0x0b, 0x0e, 0x01, 0x04, 0x0f,
     0x02, 0x09, 0x00, 0x03, 0x06, 0x0d, 0x08, 0x07, 0x0e, 0x01, 0x0c,
     0x0f, 0x0a, 0x05, 0x00, 0x03, 0x06, 0x09, 0x04, 0x0b, 0x02},
    {0x0c, 0x0d, 0x0a, 0x0b, 0x08, 0x09, 0x0e, 0x0f, 0x04, 0x05, 0x02,
     0x03, 0x00, 0x01, 0x06, 0x07, 0x08, 0x09, 0x0e, 0x0f, 0x0c, 0x0d,
     0x0a, 0x0b, 0x00, 0x01, 0x06, 0x07, 0x04, 0x05, 0x02, 0x03},
};

/*
 * 8x8 bit transposition inside every byte position of r[0..7]: afterwards
 * bit t of byte k of r[b] is what bit b of byte k of r[t] was. Each stage
 * exchanges bit n of the register index with bit n of the bit position;
 * the whole is an involution, so it is its own inverse. Byte-local masks
 * let 64-bit shifts stand in for byte shifts.
 */
static inline void ub_swapmove(ub_v *a, ub_v *b, int n, uint8_t m)
{
    ub_v t = ub_and(ub_xor(ub_srl64(*a, n), *b), ub_set1_8(m));
    *b = ub_xor(*b, t);
    *a = ub_xor(*a, ub_sll64(t, n));
}

static inline void ub_transpose8(ub_v r[8])
{
    ub_swapmove(&r[0], &r[1], 1, 0x55);
    ub_swapmove(&r[2], &r[3], 1, 0x55);
    ub_swapmove(&r[4], &r[5], 1, 0x55);
    ub_swapmove(&r[6], &r[7], 1, 0x55);
    ub_swapmove(&r[0], &r[2], 2, 0x33);
    ub_swapmove(&r[1], &r[3], 2, 0x33);
    ub_swapmove(&r[4], &r[6], 2, 0x33);
    ub_swapmove(&r[5], &r[7], 2, 0x33);
    ub_swapmove(&r[0], &r[4], 4, 0x0f);
    ub_swapmove(&r[1], &r[5], 4, 0x0f);
    ub_swapmove(&r[2], &r[6], 4, 0x0f);
    ub_swapmove(&r[3], &r[7], 4, 0x0f);
}

/*
 * uBlock-128 pass <-> planes in layout pos_0. After the transposition r[t]
 * byte k bit b is bit t of byte k of block b: bits 4..7 are the high nibble
 * (nibble 2k), bits 0..3 the low one. So plane j of X0 is bytes 0..7 of
 * r[j+4] then of r[j]; X1 the same with bytes 8..15.
 */
static inline void ub128_planes_from_transposed(ub_v x[8], const ub_v r[8])
{
    for (int j = 0; j < 4; j++) {
        x[j] = ub_unpacklo64(r[j + 4], r[j]);
        x[4 + j] = ub_unpackhi64(r[j + 4], r[j]);
    }
}

static inline void ub128_load(ub_v x[8], const uint8_t *in)
{
    ub_v r[8];
    for (int b = 0; b < 8; b++)
        r[b] = ub_loadu(in + b * UB_V_BYTES);
    ub_transpose8(r);
    ub128_planes_from_transposed(x, r);
}

static inline void ub128_planes_to_blocks(ub_v r[8], const ub_v x[8])
{
    for (int j = 0; j < 4; j++) {
        r[j + 4] = ub_unpacklo64(x[j], x[4 + j]);
        r[j] = ub_unpackhi64(x[j], x[4 + j]);
    }
    ub_transpose8(r);
}

static inline void ub128_store(uint8_t *out, const ub_v x[8])
{
    ub_v r[8];
    ub128_planes_to_blocks(r, x);
    for (int b = 0; b < 8; b++)
        ub_storeu(out + b * UB_V_BYTES, r[b]);
}

static inline void ub128_store_xor(uint8_t *out, const uint8_t *in, const ub_v x[8])
{
    ub_v r[8];
    ub128_planes_to_blocks(r, x);
    for (int b = 0; b < 8; b++)
        ub_storeu(out + b * UB_V_BYTES, ub_xor(r[b], ub_loadu(in + b * UB_V_BYTES)));
}

/* Big-endian counter of nw 64-bit words (w[0] most significant): write
 * the block of value w + i, for i = 0..n-1, then advance w by n. The
 * counter is public (CTR's security does not rest on hiding it), so the
 * common case, no carry out of the low word within the n blocks, may take
 * its own path: the high words are one fixed prefix, stored as is. */
static inline void ub_ctr_fill(uint8_t *buf, uint64_t *w, unsigned nw, unsigned n)
{
    if (w[nw - 1] <= UINT64_MAX - n) {
        uint64_t prefix[3];
        for (unsigned q = 0; q + 1 < nw; q++)
            prefix[q] = __builtin_bswap64(w[q]);
        for (unsigned i = 0; i < n; i++) {
            uint64_t be = __builtin_bswap64(w[nw - 1] + i);
            memcpy(buf, prefix, 8 * (nw - 1));
            memcpy(buf + 8 * (nw - 1), &be, 8);
            buf += 8 * nw;
        }
        w[nw - 1] += n;
        return;
    }
    for (unsigned i = 0; i < n; i++) {
        for (unsigned q = 0; q < nw; q++) {
            uint64_t be = __builtin_bswap64(w[q]);
            memcpy(buf + 8 * q, &be, 8);
        }
        buf += 8 * nw;
        uint64_t carry = 1;
        for (unsigned q = nw; q-- > 0;) {
            w[q] += carry;
            carry = carry & (w[q] == 0);
        }
    }
}

/* the counter's words (big-endian in ctr) as integers, and back: a load
 * and a byte swap each (ub_ctr_fill's stores assume a little-endian host
 * too), where the byte loops took 16 loads and 14 shifts and ORs a word */
static inline void ub_ctr_read(uint64_t *w, const uint8_t *ctr, unsigned nw)
{
    for (unsigned q = 0; q < nw; q++) {
        uint64_t v;
        memcpy(&v, ctr + 8 * q, 8);
        w[q] = __builtin_bswap64(v);
    }
}

static inline void ub_ctr_write(uint8_t *ctr, const uint64_t *w, unsigned nw)
{
    for (unsigned q = 0; q < nw; q++) {
        const uint64_t v = __builtin_bswap64(w[q]);
        memcpy(ctr + 8 * q, &v, 8);
    }
}

#endif /* UBLOCK_BS_SHARED */

#ifdef UBM_FN

/* ===================== member template ==================================
 *
 * Before each inclusion the ISA file defines:
 *   UBM_FN(name)          function name for this member and ISA
 *   UBM_H                 plane-half type
 *   UBM_XOR/AND/OR(a,b), UBM_ANDN(a,b) = ~a & b, UBM_ONES()
 *   UBM_ROT(x, l, row)    rotation row of layout l (row = UB128_ROT1 ...)
 *   UBM_PERM_L/R(x, l), UBM_PERM_L/R_INV(x, l)   PL/PR as the layout needs
 *   UBM_LAYOUT_MASK       layouts cycle as round & mask (7 or 0)
 *   UBM_DRIFT             1 for uBlock-128 (drifting layouts, ub128_tab rows)
 *   UBM_ROT1/ROT2/ROT5    row numbers of the rotations
 *   UBM_BLOCK             block bytes (16 or 32)
 *   UBM_PASS              blocks per pass (8 or 16)
 *   UBM_NS                passes run side by side (1, 2, 3...)
 *   UBM_LOAD(x, in), UBM_STORE(out, x), UBM_STORE_XOR(out, in, x)
 *   UBM_KEY_LAYOUT(x, i)  move round key i from the load layout to its own
 * and may define (defaults in brackets):
 *   UBM_K, UBM_KGET(p), UBM_KPUT(p, x)   stored round-key plane type, its
 *                         load and store [UBM_H, *p, *p = x]; a backend whose
 *                         lanes all carry the same key stores fewer bytes
 *   UBM_EMIT_SINGLE       emit expand/enc_blocks/dec_blocks/ctr_blocks [1]
 *   UBM_EMIT_MK           emit mk_setup/mk_enc/mk_dec [1]; a backend that
 *                         narrows UBM_K includes the template a second time
 *                         with the full-width key form for multi-key
 *   UBM_FUSED             rounds with fused output moves (see round_enc)
 *                         [UBM_DRIFT]; UBM_FUSED_DEC the same for
 *                         decryption [UBM_FUSED]; without UBM_DRIFT they need
 *   UBM_OUT_L/R(x, l), UBM_OUT_L/R_ROT5(x, l)  PL, PR, PL o R5, PR o R5
 *   UBM_IN_L/R_INV(x, l), UBM_IN_L/R_INV_ROT5(x, l)  PL^-1, PR^-1, R5 o
 *                         PL^-1, R5 o PR^-1 (each "o": right one first)
 *   UBM_LOAD_SAME(x, blk) UBM_LOAD of a pass whose blocks all equal blk
 *                         (single-key masks) [copies blk, UBM_LOAD]
 *   UBM_PLANE_UNROLL      a pragma before the rounds' loops over the 4 planes
 *                         and add_key's over 8 [nothing]; a backend whose
 *                         compiler leaves them rolled (the state then lives
 *                         in memory) asks for them unrolled
 *   UBM_KEEP_PARAMS       keep the member parameters defined after this
 *                         inclusion (for such a second one); only UBM_FN,
 *                         the UBM_K* and UBM_EMIT_* are reset
 */
#ifndef UBM_K
/* The schedule lives in a kuai_key, which is only 8-byte aligned (callers
 * may malloc it). So the slot type is the vector type with its alignment
 * taken away: clang trusts a pointer's type for alignment even through
 * memcpy, and emitted aligned stores for a plain UBM_H slot. */
typedef UBM_H UBM_FN(kslot) __attribute__((aligned(1)));
#define UBM_K UBM_FN(kslot)
static inline UBM_H UBM_FN(kget)(const void *p)
{
    UBM_H v;
    memcpy(&v, p, sizeof v);
    return v;
}
#define UBM_KGET(p) UBM_FN(kget)(p)
#define UBM_KPUT(p, x)                                                                             \
    do {                                                                                           \
        UBM_H kput_v_ = (x);                                                                       \
        memcpy((p), &kput_v_, sizeof kput_v_);                                                     \
    } while (0)
#endif
#ifndef UBM_EMIT_SINGLE
#define UBM_EMIT_SINGLE 1
#endif
#ifndef UBM_PLANE_UNROLL
#define UBM_PLANE_UNROLL
#endif
#ifndef UBM_FUSED
#define UBM_FUSED UBM_DRIFT
#endif
#ifndef UBM_FUSED_DEC
#define UBM_FUSED_DEC UBM_FUSED
#endif
#ifndef UBM_EMIT_MK
#define UBM_EMIT_MK 1
#endif

/* s without its NOTs: out planes 0, 1, 2 complemented (see top). */
UB_KERNEL void UBM_FN(sbox)(UBM_H x[4])
{
    UBM_H a = UBM_XOR(x[0], UBM_AND(x[3], x[2])); /* ~y0 */
    UBM_H y3 = UBM_XOR(x[3], UBM_OR(x[2], x[1])); /*  y3 */
    UBM_H c = UBM_XOR(x[2], UBM_ANDN(a, x[1]));   /* ~y2 */
    x[1] = UBM_XOR(x[1], UBM_ANDN(y3, a));        /* ~y1 */
    x[0] = a;
    x[2] = c;
    x[3] = y3;
}

/*
 * s^-1 of an input whose planes 0, 1, 2 are complemented; exact output, then
 * XORed with the key planes k (the next key addition of decryption). The
 * circuit inverts the four updates of sbox in reverse order,
 *     y1 = x1 ^ (~x3 & x0); y2 = x2 ^ (~x0 & y1);
 *     y3 = x3 ^ (y2 | y1);  y0 = x0 ^ (y3 & y2),
 * flattened (checked exhaustively) to depth two: ~x0 & y1 = ~x0 & x1, and
 * y3 & y2 = ~x3 & y2 (where y2 = 1, y3 = ~x3). y3 and y0 end the chain, so
 * their keys go into their own inputs (x3 ^ k3, x0 ^ k0, ready early): the
 * key costs no latency.
 */
UB_KERNEL void UBM_FN(sbox_inv_key)(UBM_H x[4], const UBM_K *k)
{
    UBM_H x0 = x[0], x1 = x[1], x2 = x[2], x3 = x[3];
    UBM_H x0k = UBM_XOR(x0, UBM_KGET(&k[0]));
    UBM_H x3k = UBM_XOR(x3, UBM_KGET(&k[3]));
    UBM_H y1 = UBM_XOR(x1, UBM_ANDN(x3, x0));
    UBM_H y2 = UBM_XOR(x2, UBM_ANDN(x0, x1));
    x[0] = UBM_XOR(x0k, UBM_ANDN(x3, y2));
    x[1] = UBM_XOR(y1, UBM_KGET(&k[1]));
    x[2] = UBM_XOR(y2, UBM_KGET(&k[2]));
    x[3] = UBM_XOR(x3k, UBM_OR(y2, y1));
}

/*
 * One round costs ~68 operations but its dependency chain (key, S-box, four
 * shuffle+XOR steps, PR) is ~30 cycles long while the pipes could retire it
 * in ~17; so the kernels run ns independent states ("passes") side by
 * side, stepping through each round together (ns up to UBM_NS: 2 with 16
 * registers, 3 with AVX-512's 32). All states share the key.
 */
UB_KERNEL void UBM_FN(add_key)(UBM_H *x, const UBM_K *k, int ns)
{
    UBM_PLANE_UNROLL
    for (int j = 0; j < 8; j++) {
        UBM_H kj = UBM_KGET(&k[j]);
        for (int s = 0; s < ns; s++)
            x[8 * s + j] = UBM_XOR(x[8 * s + j], kj);
    }
}

#if UBM_DRIFT && !defined(UBM_OUT_L) /* defaults for the fused rounds */
/* uBlock-128: X0 is never moved (drifting layouts), X1 by the fix rows. */
#define UBM_OUT_L(x, l) (x)
#define UBM_OUT_L_ROT5(x, l) UBM_ROT(x, l, UB128_ROT5)
#define UBM_OUT_R(x, l) UBM_ROT(x, l, UB128_FIX)
#define UBM_OUT_R_ROT5(x, l) UBM_ROT(x, l, UB128_FIX_ROT5)
#define UBM_IN_L_INV(x, l) (x)
#define UBM_IN_L_INV_ROT5(x, l) UBM_ROT(x, l, UB128_ROT5)
#define UBM_IN_R_INV(x, l) UBM_ROT(x, l, UB128_FIX_INV)
#define UBM_IN_R_INV_ROT5(x, l) UBM_ROT(x, l, UB128_ROT5_FIX_INV)
#endif

#if UBM_FUSED
/*
 * Rounds rearranged for a shorter dependency chain (the chain, not the
 * operation count, bounds a pass: a shuffle feeding an XOR costs 4 cycles on
 * Zen 4). With b1..b3, a1..a3 the spec's intermediate halves and PL, PR the
 * output moves of the layout (uBlock-128: identity and fix),
 *   X0' = PL(a3) ^ K0 = PL(b2 ^ a2) ^ K0 ^ PL(R5(a2))
 *   X1' = PR(b3) ^ K1 = PR(b2) ^ K1 ^ PR(R5(a2))
 * so the last rotation, PL/PR and the next key addition overlap instead of
 * following each other, each composite move being one shuffle
 * (UBM_OUT_*); b3 and a3 are never formed. Encryption adds key 0 up front
 * and each round ends with the next key (same stored keys).
 */
UB_KERNEL void UBM_FN(round_enc)(UBM_H *x, const UBM_K *knext, unsigned l, int ns)
{
    (void)l; /* unused by single-layout members */
    for (int s = 0; s < ns; s++) {
        UBM_FN(sbox)(x + 8 * s);
        UBM_FN(sbox)(x + 8 * s + 4);
    }
    UBM_PLANE_UNROLL
    for (int j = 0; j < 4; j++) {
        for (int s = 0; s < ns; s++) {
            UBM_H a = x[8 * s + j], b = x[8 * s + 4 + j];
            b = UBM_XOR(b, a);                       /* b1 */
            a = UBM_XOR(a, UBM_ROT(b, l, UBM_ROT1)); /* a1 */
            b = UBM_XOR(b, UBM_ROT(a, l, UBM_ROT2)); /* b2 */
            a = UBM_XOR(a, UBM_ROT(b, l, UBM_ROT2)); /* a2 */
            UBM_H t = UBM_XOR(UBM_OUT_L(UBM_XOR(b, a), l), UBM_KGET(&knext[j]));
            UBM_H u = UBM_XOR(UBM_OUT_R(b, l), UBM_KGET(&knext[4 + j]));
            x[8 * s + j] = UBM_XOR(t, UBM_OUT_L_ROT5(a, l));
            x[8 * s + 4 + j] = UBM_XOR(u, UBM_OUT_R_ROT5(a, l));
        }
    }
}

/* rk: (rounds + 1) keys of 8 plane-halves each, key i in layout of round i. */
UB_KERNEL void UBM_FN(encrypt)(UBM_H *x, const UBM_K *rk, unsigned rounds, int ns)
{
    UBM_FN(add_key)(x, rk, ns);
    for (unsigned i = 0; i < rounds; i++)
        UBM_FN(round_enc)(x, rk + 8 * (i + 1), i & UBM_LAYOUT_MASK, ns);
}

#else /* !UBM_FUSED */

/* One round in layout l; k = the round key in layout l. */
UB_KERNEL void UBM_FN(round_enc)(UBM_H *x, const UBM_K *k, unsigned l, int ns)
{
    (void)l; /* unused by single-layout members */
    UBM_FN(add_key)(x, k, ns);
    for (int s = 0; s < ns; s++) {
        UBM_FN(sbox)(x + 8 * s);
        UBM_FN(sbox)(x + 8 * s + 4);
    }
    UBM_PLANE_UNROLL
    for (int j = 0; j < 4; j++) {
        for (int s = 0; s < ns; s++) {
            UBM_H a = x[8 * s + j], b = x[8 * s + 4 + j];
            b = UBM_XOR(b, a);
            a = UBM_XOR(a, UBM_ROT(b, l, UBM_ROT1));
            b = UBM_XOR(b, UBM_ROT(a, l, UBM_ROT2));
            a = UBM_XOR(a, UBM_ROT(b, l, UBM_ROT2));
            b = UBM_XOR(b, UBM_ROT(a, l, UBM_ROT5));
            a = UBM_XOR(a, b);
            x[8 * s + j] = UBM_PERM_L(a, l);
            x[8 * s + 4 + j] = UBM_PERM_R(b, l);
        }
    }
}

/* rk: (rounds + 1) keys of 8 plane-halves each, key i in layout of round i. */
UB_KERNEL void UBM_FN(encrypt)(UBM_H *x, const UBM_K *rk, unsigned rounds, int ns)
{
    for (unsigned i = 0; i < rounds; i++)
        UBM_FN(round_enc)(x, rk + 8 * i, i & UBM_LAYOUT_MASK, ns);
    UBM_FN(add_key)(x, rk + 8 * rounds, ns);
}

#endif /* UBM_FUSED */

#if UBM_FUSED_DEC
/*
 * Undo round i (layout l) from X0', X1' (key i+1 already added), ending with
 * key i added (see sbox_inv_key). With a3 = PL^-1(X0'), b3 = PR^-1(X1'),
 *   a2 = a3 ^ b3,   b2 = b3 ^ R5(PL^-1(X0')) ^ R5(PR^-1(X1'))
 * (the input shuffles side by side), and at the end
 *   a = a1 ^ R1(b1), b = (b1 ^ a1) ^ R1(b1).
 */
UB_KERNEL void UBM_FN(round_dec)(UBM_H *x, const UBM_K *k, unsigned l, int ns)
{
    (void)l;
    UBM_PLANE_UNROLL
    for (int j = 0; j < 4; j++) {
        for (int s = 0; s < ns; s++) {
            UBM_H x0 = x[8 * s + j], x1 = x[8 * s + 4 + j];
            UBM_H b3 = UBM_IN_R_INV(x1, l);
            UBM_H a = UBM_XOR(UBM_IN_L_INV(x0, l), b3); /* a2 */
            UBM_H b =
                UBM_XOR(UBM_XOR(b3, UBM_IN_L_INV_ROT5(x0, l)), UBM_IN_R_INV_ROT5(x1, l)); /* b2 */
            a = UBM_XOR(a, UBM_ROT(b, l, UBM_ROT2));                                      /* a1 */
            b = UBM_XOR(b, UBM_ROT(a, l, UBM_ROT2));                                      /* b1 */
            UBM_H rb = UBM_ROT(b, l, UBM_ROT1);
            x[8 * s + 4 + j] = UBM_XOR(UBM_XOR(b, a), rb);
            x[8 * s + j] = UBM_XOR(a, rb);
        }
    }
    for (int s = 0; s < ns; s++) {
        UBM_FN(sbox_inv_key)(x + 8 * s, k);
        UBM_FN(sbox_inv_key)(x + 8 * s + 4, k + 4);
    }
}

#else /* !UBM_FUSED_DEC */

/* Undo round i (layout l = i & mask) of a state that carries key i+1, then
 * add key i (k, see sbox_inv_key). */
UB_KERNEL void UBM_FN(round_dec)(UBM_H *x, const UBM_K *k, unsigned l, int ns)
{
    (void)l;
    UBM_PLANE_UNROLL
    for (int j = 0; j < 4; j++) {
        for (int s = 0; s < ns; s++) {
            UBM_H a = UBM_PERM_L_INV(x[8 * s + j], l);
            UBM_H b = UBM_PERM_R_INV(x[8 * s + 4 + j], l);
            a = UBM_XOR(a, b);
            b = UBM_XOR(b, UBM_ROT(a, l, UBM_ROT5));
            a = UBM_XOR(a, UBM_ROT(b, l, UBM_ROT2));
            b = UBM_XOR(b, UBM_ROT(a, l, UBM_ROT2));
            a = UBM_XOR(a, UBM_ROT(b, l, UBM_ROT1));
            b = UBM_XOR(b, a);
            x[8 * s + j] = a;
            x[8 * s + 4 + j] = b;
        }
    }
    for (int s = 0; s < ns; s++) {
        UBM_FN(sbox_inv_key)(x + 8 * s, k);
        UBM_FN(sbox_inv_key)(x + 8 * s + 4, k + 4);
    }
}

#endif /* UBM_FUSED_DEC */

/* Each round ends with the key below it, so only the last key stands alone. */
UB_KERNEL void UBM_FN(decrypt)(UBM_H *x, const UBM_K *rk, unsigned rounds, int ns)
{
    UBM_FN(add_key)(x, rk + 8 * rounds, ns);
    for (unsigned i = rounds; i-- > 0;)
        UBM_FN(round_dec)(x, rk + 8 * i, i & UBM_LAYOUT_MASK, ns);
}

/*
 * The kernels: load, run, store ns passes of UBM_PASS blocks. One per ns in
 * {1, 2, UBM_NS} (ns is a constant in each, so the state stays in
 * registers): whole groups of UBM_NS passes, then what is left of a call
 * still runs passes side by side where it can (the modes call with chunks
 * of 64 blocks). The last pass reads last_in and writes last_out, so that
 * a part pass (through a padded buffer) runs beside whole ones.
 */
UB_KERNEL void UBM_FN(passes)(const UBM_K *rk, unsigned rounds, const uint8_t *in, uint8_t *out,
                              const uint8_t *last_in, uint8_t *last_out, int ns, int enc)
{
    enum { PASS_BYTES = UBM_PASS * UBM_BLOCK };
    UBM_H x[8 * UBM_NS];
    for (int s = 0; s < ns; s++)
        UBM_LOAD(x + 8 * s, s == ns - 1 ? last_in : in + s * PASS_BYTES);
    if (enc)
        UBM_FN(encrypt)(x, rk, rounds, ns);
    else
        UBM_FN(decrypt)(x, rk, rounds, ns);
    for (int s = 0; s < ns; s++)
        UBM_STORE(s == ns - 1 ? last_out : out + s * PASS_BYTES, x + 8 * s);
}

/* Out of line: gcc inlined a lone call's pass into enc_blocks, whose
 * frame holds the masks' stack copy, and a pass of uBlock-256/256 on
 * avx512 took 669 -> 706 TSC cycles (Xeon, Sapphire Rapids class). */
#define UBM_PASS_KERNELS(ns, name)                                                                 \
    static __attribute__((noinline)) void UBM_FN(enc_##name)(                                      \
        const UBM_K *rk, unsigned rounds, const uint8_t *in, uint8_t *out, const uint8_t *last_in, \
        uint8_t *last_out)                                                                         \
    {                                                                                              \
        UBM_FN(passes)(rk, rounds, in, out, last_in, last_out, ns, 1);                             \
    }                                                                                              \
    static __attribute__((noinline)) void UBM_FN(dec_##name)(                                      \
        const UBM_K *rk, unsigned rounds, const uint8_t *in, uint8_t *out, const uint8_t *last_in, \
        uint8_t *last_out)                                                                         \
    {                                                                                              \
        UBM_FN(passes)(rk, rounds, in, out, last_in, last_out, ns, 0);                             \
    }
UBM_PASS_KERNELS(1, pass1)
#if UBM_NS > 1
UBM_PASS_KERNELS(2, pass2)
#endif
#if UBM_NS > 2
UBM_PASS_KERNELS(UBM_NS, passn)
#endif
/* the kernels of a whole group of UBM_NS passes */
#if UBM_NS > 2
#define UBM_GROUP(op) UBM_FN(op##_passn)
#elif UBM_NS > 1
#define UBM_GROUP(op) UBM_FN(op##_pass2)
#else
#define UBM_GROUP(op) UBM_FN(op##_pass1)
#endif
#undef UBM_PASS_KERNELS

/*
 * Round-key masks: the raw round key i of each lane's key, transposed like
 * data (so a byte is 0x00/0xff for one key), moved to round i's layout and
 * carrying the S-box complement C from round 1 on. x holds rk_i of pass
 * block b's key in block b, loaded (UBM_LOAD or UBM_LOAD_SAME).
 */
static inline void UBM_FN(key_masks)(UBM_K *dst, UBM_H x[8], unsigned i)
{
    UBM_KEY_LAYOUT(x, i);
    if (i > 0) { /* public round index */
        UBM_H ones = UBM_ONES();
        for (int j = 0; j < 3; j++) {
            x[j] = UBM_XOR(x[j], ones);
            x[4 + j] = UBM_XOR(x[4 + j], ones);
        }
    }
    for (int j = 0; j < 8; j++)
        UBM_KPUT(&dst[j], x[j]);
}

#if UBM_EMIT_SINGLE

_Static_assert(sizeof(UBM_K) * 8 * (UBLOCK_MAX_ROUNDS + 1) <= sizeof(((ublock_sched *)0)->ext),
               "bitsliced round keys must fit in ublock_sched.ext");
/* ... before the low-latency kernel's round keys at ext's end (ublock.h) */
_Static_assert(sizeof(UBM_K) * 8 * (UBLOCK_MAX_ROUNDS + 1) <= UBLOCK_LLK_OFF,
               "bitsliced round keys must end before the kernel-form round keys");

/* The wide kernel's round-key masks from the raw schedule (derived from
 * the kernel form for a nibble key setup's keys: ublock_rk_row). */
static void UBM_FN(build_masks)(UBM_K *dst, const ublock_sched *s)
{
    UBM_H x[8];
    uint8_t row[32];
#ifdef UBM_LOAD_SAME
    for (unsigned i = 0; i <= s->rounds; i++) {
        UBM_LOAD_SAME(x, ublock_rk_row(s, i, row));
        UBM_FN(key_masks)(dst + 8 * i, x, i);
    }
#else
    _Alignas(32) uint8_t kbuf[UBM_PASS * UBM_BLOCK];
    for (unsigned i = 0; i <= s->rounds; i++) {
        const uint8_t *rk = ublock_rk_row(s, i, row);
        for (unsigned b = 0; b < UBM_PASS; b++)
            memcpy(kbuf + b * UBM_BLOCK, rk, UBM_BLOCK);
        UBM_LOAD(x, kbuf);
        UBM_FN(key_masks)(dst + 8 * i, x, i);
    }
    kuai_wipe(kbuf, sizeof kbuf);
#endif
    kuai_wipe(row, sizeof row);
}

#ifdef UBM_LAZY_MASKS
/*
 * Key setup stores the low-latency kernel's form only (what that kernel
 * reads; ublock_expand_nib.h); the masks are built on the first bulk
 * call, so short calls never pay for them. A const key may be shared by
 * threads: the first caller to claim the build (compare-and-swap) writes
 * the masks and publishes them with a release store; a caller that finds
 * them being built makes its own copy on its stack (no waiting, no
 * allocation).
 */
static KUAI_HOT_ALIGN void UBM_FN(expand)(kuai_key *k, const uint8_t *key)
{
    ublock_sched *s = ublock_sched_of(k);
    UB_KEY_SETUP(s, (kuai_cipher)k->priv_cipher, key);
    __atomic_store_n(&s->masks, UBLOCK_MASKS_NONE, __ATOMIC_RELAXED);
}

#ifdef UB_KEY_SETUP2
/* Two keys of one cipher in one pass (kuai_key_init_multi): UB_KEY_SETUP2
 * runs their schedules side by side. */
static KUAI_HOT_ALIGN void UBM_FN(expand2)(kuai_key *k0, kuai_key *k1, const uint8_t *key0,
                                           const uint8_t *key1)
{
    ublock_sched *s0 = ublock_sched_of(k0), *s1 = ublock_sched_of(k1);
    UB_KEY_SETUP2(s0, s1, (kuai_cipher)k0->priv_cipher, key0, key1);
    __atomic_store_n(&s0->masks, UBLOCK_MASKS_NONE, __ATOMIC_RELAXED);
    __atomic_store_n(&s1->masks, UBLOCK_MASKS_NONE, __ATOMIC_RELAXED);
}
#endif

#ifdef UB_KEY_SETUP4
/* Four keys of one cipher in one pass (kuai_key_init_multi): UB_KEY_SETUP4
 * runs their schedules side by side. */
static KUAI_HOT_ALIGN void UBM_FN(expand4)(kuai_key *const k[4], const uint8_t *const key[4])
{
    ublock_sched *s[4];
    for (int j = 0; j < 4; j++)
        s[j] = ublock_sched_of(k[j]);
    UB_KEY_SETUP4(s, (kuai_cipher)k[0]->priv_cipher, key);
    for (int j = 0; j < 4; j++)
        __atomic_store_n(&s[j]->masks, UBLOCK_MASKS_NONE, __ATOMIC_RELAXED);
}
#endif

enum { UBM_FN(nmasks) = 8 * (UBLOCK_MAX_ROUNDS + 1) };

static const UBM_K *UBM_FN(masks)(const kuai_key *k, UBM_K *tmp)
{
    /* the key's own storage: writable memory the caller handed us as const */
    ublock_sched *s = (ublock_sched *)(uintptr_t)(const void *)k->priv_sched;
    UBM_K *ext = (UBM_K *)(void *)s->ext;
    uint32_t st = __atomic_load_n(&s->masks, __ATOMIC_ACQUIRE);
    if (st == ublock_masks_ready(s))
        return ext;
    /* None yet, or a state copied from a key at another address (ublock.h):
     * claim the build here. Busy here: another thread is building them. */
    if (st != ublock_masks_busy(s) &&
        __atomic_compare_exchange_n(&s->masks, &st, ublock_masks_busy(s), 0, __ATOMIC_ACQUIRE,
                                    __ATOMIC_RELAXED)) {
        UBM_FN(build_masks)(ext, s);
        __atomic_store_n(&s->masks, ublock_masks_ready(s), __ATOMIC_RELEASE);
        return ext;
    }
    UBM_FN(build_masks)(tmp, s);
    return tmp;
}
#define UBM_MASKS_BEGIN(k, rk)                                                                     \
    UBM_K masks_tmp_[UBM_FN(nmasks)];                                                              \
    const UBM_K *rk = UBM_FN(masks)(k, masks_tmp_)
#define UBM_MASKS_END(rk)                                                                          \
    do {                                                                                           \
        if (rk == masks_tmp_)                                                                      \
            kuai_wipe(masks_tmp_, sizeof masks_tmp_);                                              \
    } while (0)
#else
static KUAI_HOT_ALIGN void UBM_FN(expand)(kuai_key *k, const uint8_t *key)
{
    ublock_sched *s = ublock_sched_of(k);
    UB_KEY_SETUP(s, (kuai_cipher)k->priv_cipher, key);
    UBM_FN(build_masks)((UBM_K *)(void *)s->ext, s);
}
#define UBM_MASKS_BEGIN(k, rk)                                                                     \
    const UBM_K *rk = (const UBM_K *)(const void *)ublock_sched_const(k)->ext
#define UBM_MASKS_END(rk) ((void)(rk))
#endif

#endif /* UBM_EMIT_SINGLE */

/*
 * A part pass: len bytes (whole blocks, fewer than a pass) into a pass's
 * buffer, zero-padded, and back out. Moved a vector at a time in
 * fixed-size copies, which the compiler makes single loads and stores, so
 * that the pass's loads and the copy out each meet one store (a load that
 * spans two smaller stores waits for them to retire), all but the one
 * vector a part vector of blocks shares with the padding; memcpy and
 * memset of a variable length were library calls: ~85 TSC cycles a call
 * of 9-15 blocks on Zen 1 (avx2) beyond a whole pass.
 */
UB_KERNEL void UBM_FN(tail_in)(uint8_t *buf, const uint8_t *in, size_t len)
{
    enum { V = UB_V_BYTES, PASS_BYTES = UBM_PASS * UBM_BLOCK };
    const size_t whole = len / V * V; /* public: the length */
    for (size_t o = 0; o < whole; o += V)
        memcpy(buf + o, in + o, V);
    for (size_t o = whole; o < PASS_BYTES; o += V)
        memset(buf + o, 0, V);
    for (size_t o = whole; o < len; o += UBM_BLOCK) /* the blocks of a part vector */
        memcpy(buf + o, in + o, UBM_BLOCK);
}

UB_KERNEL void UBM_FN(tail_out)(uint8_t *out, const uint8_t *buf, size_t len)
{
    enum { V = UB_V_BYTES };
    const size_t whole = len / V * V;
    for (size_t o = 0; o < whole; o += V)
        memcpy(out + o, buf + o, V);
    for (size_t o = whole; o < len; o += UBM_BLOCK)
        memcpy(out + o, buf + o, UBM_BLOCK);
}

/* The rest of a call, fewer blocks than a group: m passes, the last of
 * them r blocks (1 to UBM_PASS) read at last_in and written at last_out,
 * a part pass's through a zero-padded buffer (padding blocks are computed
 * and dropped). */
struct UBM_FN(rest) {
    size_t m, r;            /* passes, the last one's blocks */
    const uint8_t *last_in; /* where the last pass reads */
    uint8_t *last_out;      /* and writes */
};

_Static_assert(UBM_NS <= 3, "a group's pass count must have its kernel");

/* The rest runs as one group of m passes side by side, its part pass
 * among them, not as whole passes and then a lone part pass (and
 * ublock_ll_front.h sends it here from XT blocks up): ECB of 24
 * uBlock-128/128 blocks on avx2 751 -> 674 TSC cycles, 12 of 256/256
 * 1,292 -> 1,153, 24 of 256/256 on avx512 1,330 -> 1,201 (Xeon, Sapphire
 * Rapids class; docs/performance.md). */
static inline struct UBM_FN(rest)
    UBM_FN(rest_in)(uint8_t *buf, const uint8_t *in, uint8_t *out, size_t n)
{
    enum { PASS_BYTES = UBM_PASS * UBM_BLOCK };
    struct UBM_FN(rest) t;
    t.m = (n + UBM_PASS - 1) / UBM_PASS;
    t.r = n - (t.m - 1) * UBM_PASS;
    t.last_in = in + (t.m - 1) * PASS_BYTES;
    t.last_out = out + (t.m - 1) * PASS_BYTES;
    if (t.r < UBM_PASS) {
        UBM_FN(tail_in)(buf, t.last_in, t.r * UBM_BLOCK);
        t.last_in = buf;
        t.last_out = buf;
    }
    return t;
}

static inline void UBM_FN(rest_out)(const struct UBM_FN(rest) * t, uint8_t *out, const uint8_t *buf)
{
    if (t->r < UBM_PASS)
        UBM_FN(tail_out)(out + (t->m - 1) * UBM_PASS * UBM_BLOCK, buf, t->r * UBM_BLOCK);
}

/* Whole groups of UBM_NS passes straight from in to out, then the rest as
 * one group (above). */
UB_KERNEL void UBM_FN(crypt)(const UBM_K *rk, unsigned rounds, const uint8_t *in, uint8_t *out,
                             size_t n, int enc)
{
    enum { PASS_BYTES = UBM_PASS * UBM_BLOCK };
    for (; n >= UBM_NS * UBM_PASS; n -= UBM_NS * UBM_PASS) {
        const uint8_t *li = in + (UBM_NS - 1) * PASS_BYTES;
        uint8_t *lo = out + (UBM_NS - 1) * PASS_BYTES;
        (enc ? UBM_GROUP(enc) : UBM_GROUP(dec))(rk, rounds, in, out, li, lo);
        in += UBM_NS * PASS_BYTES;
        out += UBM_NS * PASS_BYTES;
    }
    if (n == 0)
        return;
    _Alignas(64) uint8_t buf[PASS_BYTES];
    const struct UBM_FN(rest) t = UBM_FN(rest_in)(buf, in, out, n);
    switch (t.m) {
#if UBM_NS > 2
    case 3:
        (enc ? UBM_FN(enc_passn) : UBM_FN(dec_passn))(rk, rounds, in, out, t.last_in, t.last_out);
        break;
#endif
#if UBM_NS > 1
    case 2:
        (enc ? UBM_FN(enc_pass2) : UBM_FN(dec_pass2))(rk, rounds, in, out, t.last_in, t.last_out);
        break;
#endif
    default:
        (enc ? UBM_FN(enc_pass1) : UBM_FN(dec_pass1))(rk, rounds, in, out, t.last_in, t.last_out);
    }
    UBM_FN(rest_out)(&t, out, buf);
}

#if UBM_EMIT_SINGLE
static void UBM_FN(enc_blocks)(const kuai_key *k, const uint8_t *in, uint8_t *out, size_t n)
{
    const ublock_sched *s = ublock_sched_const(k);
    UBM_MASKS_BEGIN(k, rk);
    UBM_FN(crypt)(rk, s->rounds, in, out, n, 1);
    UBM_MASKS_END(rk);
}

static void UBM_FN(dec_blocks)(const kuai_key *k, const uint8_t *in, uint8_t *out, size_t n)
{
    const ublock_sched *s = ublock_sched_const(k);
    UBM_MASKS_BEGIN(k, rk);
    UBM_FN(crypt)(rk, s->rounds, in, out, n, 0);
    UBM_MASKS_END(rk);
}

/* Keystream for ns passes from the counter blocks in ctrbuf, XORed into out
 * (the last pass's from last_in into last_out); kernels for ns in {1, 2,
 * UBM_NS} as for ECB. */
UB_KERNEL void UBM_FN(ctr_passes)(const UBM_K *rk, unsigned rounds, const uint8_t *ctrbuf,
                                  const uint8_t *in, uint8_t *out, const uint8_t *last_in,
                                  uint8_t *last_out, int ns)
{
    enum { PASS_BYTES = UBM_PASS * UBM_BLOCK };
    UBM_H x[UBM_NS * 8];
    for (int s = 0; s < ns; s++)
        UBM_LOAD(x + 8 * s, ctrbuf + s * PASS_BYTES);
    UBM_FN(encrypt)(x, rk, rounds, ns);
    for (int s = 0; s < ns; s++)
        UBM_STORE_XOR(s == ns - 1 ? last_out : out + s * PASS_BYTES,
                      s == ns - 1 ? last_in : in + s * PASS_BYTES, x + 8 * s);
}

/* Inlined into ctr_crypt, unlike ECB's: out of line, CTR of 48 blocks of
 * uBlock-256/256 on avx2 took 3,256 -> 3,534 TSC cycles (same host). */
#define UBM_CTR_KERNEL(name, ns)                                                                   \
    UB_KERNEL void UBM_FN(name)(const UBM_K *rk, unsigned rounds, const uint8_t *ctrbuf,           \
                                const uint8_t *in, uint8_t *out, const uint8_t *last_in,           \
                                uint8_t *last_out)                                                 \
    {                                                                                              \
        UBM_FN(ctr_passes)(rk, rounds, ctrbuf, in, out, last_in, last_out, ns);                    \
    }
UBM_CTR_KERNEL(ctr_pass1, 1)
#if UBM_NS > 1
UBM_CTR_KERNEL(ctr_pass2, 2)
#endif
#if UBM_NS > 2
UBM_CTR_KERNEL(ctr_passn, UBM_NS)
#endif
#undef UBM_CTR_KERNEL

/* CTR under the round-key masks rk: ctr_blocks, and the avx512 backend's
 * calls on the avx2 kernel (ublock_avx2.c's *_ctr_masks); passes grouped
 * as crypt's */
static inline void UBM_FN(ctr_crypt)(const UBM_K *rk, unsigned rounds, uint8_t *ctr,
                                     const uint8_t *in, uint8_t *out, size_t n)
{
    enum { NW = UBM_BLOCK / 8, PASS_BYTES = UBM_PASS * UBM_BLOCK };
    uint64_t w[NW];
    _Alignas(32) uint8_t cbuf[UBM_NS * PASS_BYTES];
    ub_ctr_read(w, ctr, NW);
    for (; n >= UBM_NS * UBM_PASS; n -= UBM_NS * UBM_PASS) {
        const uint8_t *li = in + (UBM_NS - 1) * PASS_BYTES;
        uint8_t *lo = out + (UBM_NS - 1) * PASS_BYTES;
        ub_ctr_fill(cbuf, w, NW, UBM_NS * UBM_PASS);
        UBM_GROUP(ctr)(rk, rounds, cbuf, in, out, li, lo);
        in += UBM_NS * PASS_BYTES;
        out += UBM_NS * PASS_BYTES;
    }
    if (n > 0) {
        _Alignas(64) uint8_t buf[PASS_BYTES];
        const struct UBM_FN(rest) t = UBM_FN(rest_in)(buf, in, out, n);
        /* Blocks past n are dropped, but the bitsliced kernel mixes every
         * block's bits into every lane: zeroed, not left uninitialised
         * (memcheck would trace them into the output). */
        if (t.r < UBM_PASS)
            memset(cbuf + n * UBM_BLOCK, 0, (UBM_PASS - t.r) * UBM_BLOCK);
        ub_ctr_fill(cbuf, w, NW, (unsigned)n);
        switch (t.m) {
#if UBM_NS > 2
        case 3:
            UBM_FN(ctr_passn)(rk, rounds, cbuf, in, out, t.last_in, t.last_out);
            break;
#endif
#if UBM_NS > 1
        case 2:
            UBM_FN(ctr_pass2)(rk, rounds, cbuf, in, out, t.last_in, t.last_out);
            break;
#endif
        default:
            UBM_FN(ctr_pass1)(rk, rounds, cbuf, in, out, t.last_in, t.last_out);
        }
        UBM_FN(rest_out)(&t, out, buf);
    }
    ub_ctr_write(ctr, w, NW);
}

static void UBM_FN(ctr_blocks)(const kuai_key *k, uint8_t *ctr, const uint8_t *in, uint8_t *out,
                               size_t n)
{
    UBM_MASKS_BEGIN(k, rk);
    UBM_FN(ctr_crypt)(rk, ublock_sched_const(k)->rounds, ctr, in, out, n);
    UBM_MASKS_END(rk);
}
#undef UBM_MASKS_BEGIN
#undef UBM_MASKS_END
#endif /* UBM_EMIT_SINGLE */

#if UBM_EMIT_MK

/*
 * Multi-key: the mk buffer holds the rounds count, then (rounds + 1) keys of
 * 8 plane-halves in which lane bit b carries the key of pass block b.
 */
#define UBM_MK_KEYS(m) ((UBM_K *)(void *)((m)->b + 64))
/* the backend table's mk_bytes */
enum { UBM_FN(mk_bytes) = 64 + sizeof(UBM_K) * 8 * (UBLOCK_MAX_ROUNDS + 1) };
_Static_assert(UBM_FN(mk_bytes) <= KUAI_MK_BYTES, "multi-key masks must fit in kuai_mk");

static void UBM_FN(mk_setup)(kuai_mk *m, const kuai_key *const *keys, size_t n)
{
    const ublock_sched *s0 = ublock_sched_const(keys[0]);
    unsigned rounds = s0->rounds;
    _Alignas(32) uint8_t kbuf[UBM_PASS * UBM_BLOCK];
    memcpy(m->b, &rounds, sizeof rounds);
    UBM_H x[8];
    memset(kbuf, 0, sizeof kbuf);
    uint8_t row[32];
    for (unsigned i = 0; i <= rounds; i++) {
        for (size_t b = 0; b < n; b++)
            memcpy(kbuf + b * UBM_BLOCK, ublock_rk_row(ublock_sched_const(keys[b]), i, row),
                   UBM_BLOCK);
        UBM_LOAD(x, kbuf);
        UBM_FN(key_masks)(UBM_MK_KEYS(m) + 8 * i, x, i);
    }
    kuai_wipe(kbuf, sizeof kbuf);
    kuai_wipe(row, sizeof row);
}

static void UBM_FN(mk_enc)(const kuai_mk *m, const uint8_t *in, uint8_t *out, size_t n)
{
    unsigned rounds;
    memcpy(&rounds, m->b, sizeof rounds);
    UBM_FN(crypt)((const UBM_K *)(const void *)(m->b + 64), rounds, in, out, n, 1);
}

static void UBM_FN(mk_dec)(const kuai_mk *m, const uint8_t *in, uint8_t *out, size_t n)
{
    unsigned rounds;
    memcpy(&rounds, m->b, sizeof rounds);
    UBM_FN(crypt)((const UBM_K *)(const void *)(m->b + 64), rounds, in, out, n, 0);
}
#endif /* UBM_EMIT_MK */

#undef UBM_MK_KEYS
#undef UBM_GROUP
#undef UBM_K
#undef UBM_KGET
#undef UBM_KPUT
#undef UBM_EMIT_SINGLE
#undef UBM_EMIT_MK
#undef UBM_FN
#undef UBM_LAZY_MASKS
#ifdef UBM_KEEP_PARAMS
#undef UBM_KEEP_PARAMS
#else
#undef UBM_H
#undef UBM_XOR
#undef UBM_AND
#undef UBM_OR
#undef UBM_ANDN
#undef UBM_ONES
#undef UBM_ROT
#undef UBM_ROT1
#undef UBM_ROT2
#undef UBM_ROT5
#undef UBM_PERM_L
#undef UBM_PERM_R
#undef UBM_PERM_L_INV
#undef UBM_PERM_R_INV
#undef UBM_LAYOUT_MASK
#undef UBM_DRIFT
#undef UBM_BLOCK
#undef UBM_PASS
#undef UBM_NS
#undef UBM_LOAD
#undef UBM_STORE
#undef UBM_STORE_XOR
#undef UBM_KEY_LAYOUT
#undef UBM_LOAD_SAME
#undef UBM_FUSED
#undef UBM_FUSED_DEC
#undef UBM_OUT_L
#undef UBM_OUT_L_ROT5
#undef UBM_OUT_R
#undef UBM_OUT_R_ROT5
#undef UBM_IN_L_INV
#undef UBM_IN_L_INV_ROT5
#undef UBM_IN_R_INV
#undef UBM_IN_R_INV_ROT5
#undef UBM_PLANE_UNROLL
#endif /* UBM_KEEP_PARAMS */

#endif /* UBM_FN */
