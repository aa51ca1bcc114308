/* SPDX-License-Identifier: Apache-2.0 */
/*
 * uBlock on 128-bit vectors: the three members over the bitsliced algorithm
 * of ublock_bs.h, for any ISA with a 16-byte byte shuffle (SSSE3 pshufb,
 * NEON tbl, LSX vshuf.b). A pass is 8 blocks for both block sizes; a
 * uBlock-256 plane-half is two vectors ("lanes" 0 and 1 of ublock_bs.h's
 * layout L). In front of it, the low-latency kernel (ublock_ll.h) over the
 * same vocabulary, and the backend tables that join the two.
 *
 * The including file defines ublock_bs.h's vocabulary (ub_v, ub_xor, ...,
 * UB_ROW16) and then:
 *   ub_shuf(x, idx)          out byte i = x[idx[i]], idx bytes 0..15
 *   ub_unpacklo32/hi32(a, b) dwords {a0, b0, a1, b1} / {a2, b2, a3, b3}
 *   ub_even32/odd32(a, b)    dwords {a0, a2, b0, b2} / {a1, a3, b1, b3}
 *   UB_V128_ISA              token for the names (ssse3 -> ublock128_ssse3_*)
 *   UB_V128_NAME             backend name string
 *   UB_V128_AVAILABLE        int (*)(void), the run-time check
 *   UB_V128_PRIORITY         the tables' priority (the file registers
 *                            ublock128_<isa> and ublock256_<isa> with
 *                            KUAI_REGISTER lines)
 *   UB_V128_NS128            uBlock-128 passes run side by side (2 for 16
 *                            registers, 3 for 32; 1 where the compiler
 *                            spills with two: ublock_lsx.c)
 *   UB_V128_PLANE_UNROLL256  (optional) uBlock-256's wide rounds' plane loops
 *                            unrolled by pragma (ublock_bs.h's
 *                            UBM_PLANE_UNROLL)
 *   UB_V128_CROSSOVER128,    the low-latency kernel's crossovers in blocks,
 *   UB_V128_CROSSOVER256     per member size (ublock_ll_front.h's UL_FRONT)
 * and includes ublock_bs.h once (shared part), then this header once. The low-latency kernel
 * (ublock_ll.h, as ublock_ll_<isa>_*) goes in front of the wide one, whose round-key masks are
 * built on first bulk use (UBM_LAZY_MASKS): short calls never pay for them.
 */
#define UB_V128_PASTE(a, b, c) a##b##c
#define UB_V128_XPASTE(a, b, c) UB_V128_PASTE(a, b, c)
#define UB_V128_FN(member, name) UB_V128_XPASTE(member, UB_V128_ISA, _##name)
#define UB_V128_VAR(member) UB_V128_XPASTE(member, UB_V128_ISA, )

/* ---- uBlock-128: 8 blocks per pass, drifting layouts -------------------- */

static inline void UB_V128_FN(ublock128_, key_layout)(ub_v x[8], unsigned i)
{
    ub_v p = ub_row(ub128_tab[i & 7][UB128_KEY]);
    for (int j = 0; j < 8; j++)
        x[j] = ub_shuf(x[j], p);
}

#define UBM_FN(name) UB_V128_FN(ublock128_, name)
#define UBM_H ub_v
#define UBM_XOR ub_xor
#define UBM_AND ub_and
#define UBM_OR ub_or
#define UBM_ANDN ub_andn
#define UBM_ONES ub_ones
#define UBM_ROT(x, l, row) ub_shuf(x, ub_row(ub128_tab[l][row]))
#define UBM_ROT1 UB128_ROT1
#define UBM_ROT2 UB128_ROT2
#define UBM_ROT5 UB128_ROT5
#define UBM_PERM_L(x, l) (x)
#define UBM_PERM_R(x, l) ub_shuf(x, ub_row(ub128_tab[l][UB128_FIX]))
#define UBM_PERM_L_INV(x, l) (x)
#define UBM_PERM_R_INV(x, l) ub_shuf(x, ub_row(ub128_tab[l][UB128_FIX_INV]))
#define UBM_LAYOUT_MASK 7u
#define UBM_DRIFT 1
#define UBM_BLOCK 16
#define UBM_PASS 8
#define UBM_NS UB_V128_NS128
#define UBM_LOAD(x, in) ub128_load(x, in)
#define UBM_STORE(out, x) ub128_store(out, x)
#define UBM_STORE_XOR(out, in, x) ub128_store_xor(out, in, x)
#define UBM_KEY_LAYOUT(x, i) UB_V128_FN(ublock128_, key_layout)(x, i)
#define UBM_LAZY_MASKS
#include "ublock_bs.h"

/* ---- uBlock-256: 8 blocks per pass, plane-half = two xmm ---------------- */

typedef struct ub256_h {
    ub_v l, h; /* lane 0: words 0-1 of the half, lane 1: words 2-3 */
} ub256_h;

static inline ub256_h ub256_make(ub_v l, ub_v h)
{
    ub256_h r = {l, h};
    return r;
}

static inline ub256_h ub256_xor(ub256_h a, ub256_h b)
{
    return ub256_make(ub_xor(a.l, b.l), ub_xor(a.h, b.h));
}

static inline ub256_h ub256_and(ub256_h a, ub256_h b)
{
    return ub256_make(ub_and(a.l, b.l), ub_and(a.h, b.h));
}

static inline ub256_h ub256_or(ub256_h a, ub256_h b)
{
    return ub256_make(ub_or(a.l, b.l), ub_or(a.h, b.h));
}

static inline ub256_h ub256_andn(ub256_h a, ub256_h b)
{
    return ub256_make(ub_andn(a.l, b.l), ub_andn(a.h, b.h));
}

static inline ub256_h ub256_ones(void)
{
    return ub256_make(ub_ones(), ub_ones());
}

/* pshufb of each lane by its half of a 32-byte ub256_tab row */
static inline ub256_h ub256_shuf(ub256_h x, int row)
{
    return ub256_make(ub_shuf(x.l, ub_row(ub256_tab[row])),
                      ub_shuf(x.h, ub_row(ub256_tab[row] + 16)));
}

/* The dword gathers of layout L (see ublock_bs.h): PL takes qword 0 of
 * both lanes into lane 0 and qword 1 into lane 1; PR takes dwords 0, 2 of
 * both lanes into lane 0 and dwords 1, 3 into lane 1. */
static inline ub256_h ub256_pl(ub256_h x)
{
    return ub256_shuf(ub256_make(ub_unpacklo64(x.l, x.h), ub_unpackhi64(x.l, x.h)), UB256_PL);
}

static inline ub256_h ub256_pr(ub256_h x)
{
    return ub256_shuf(ub256_make(ub_even32(x.l, x.h), ub_odd32(x.l, x.h)), UB256_PR);
}

static inline ub256_h ub256_pl_inv(ub256_h x)
{
    ub256_h t = ub256_shuf(x, UB256_PL_INV);
    return ub256_make(ub_unpacklo64(t.l, t.h), ub_unpackhi64(t.l, t.h));
}

static inline ub256_h ub256_pr_inv(ub256_h x)
{
    ub256_h t = ub256_shuf(x, UB256_PR_INV);
    return ub256_make(ub_unpacklo32(t.l, t.h), ub_unpackhi32(t.l, t.h));
}

/* Block b is two xmm: half X0 (bytes 0-15) and half X1 (bytes 16-31),
 * transposed separately; the unpacks give pairs 0..7 ("lane 0") and 8..15
 * ("lane 1") of each half in split layout, to_l moves them to layout L. */
static inline void UB_V128_FN(ublock256_, load)(ub256_h x[8], const uint8_t *in)
{
    ub_v r0[8], r1[8];
    for (int b = 0; b < 8; b++) {
        r0[b] = ub_loadu(in + 32 * b);
        r1[b] = ub_loadu(in + 32 * b + 16);
    }
    ub_transpose8(r0);
    ub_transpose8(r1);
    for (int j = 0; j < 4; j++) {
        x[j] =
            ub256_shuf(ub256_make(ub_unpacklo64(r0[j + 4], r0[j]), ub_unpackhi64(r0[j + 4], r0[j])),
                       UB256_TO_L);
        x[4 + j] =
            ub256_shuf(ub256_make(ub_unpacklo64(r1[j + 4], r1[j]), ub_unpackhi64(r1[j + 4], r1[j])),
                       UB256_TO_L);
    }
}

static inline void UB_V128_FN(ublock256_, to_blocks)(ub_v r0[8], ub_v r1[8], const ub256_h x[8])
{
    for (int j = 0; j < 4; j++) {
        ub256_h a = ub256_shuf(x[j], UB256_FROM_L), b = ub256_shuf(x[4 + j], UB256_FROM_L);
        r0[j + 4] = ub_unpacklo64(a.l, a.h);
        r0[j] = ub_unpackhi64(a.l, a.h);
        r1[j + 4] = ub_unpacklo64(b.l, b.h);
        r1[j] = ub_unpackhi64(b.l, b.h);
    }
    ub_transpose8(r0);
    ub_transpose8(r1);
}

static inline void UB_V128_FN(ublock256_, store)(uint8_t *out, const ub256_h x[8])
{
    ub_v r0[8], r1[8];
    UB_V128_FN(ublock256_, to_blocks)(r0, r1, x);
    for (int b = 0; b < 8; b++) {
        ub_storeu(out + 32 * b, r0[b]);
        ub_storeu(out + 32 * b + 16, r1[b]);
    }
}

static inline void UB_V128_FN(ublock256_, store_xor)(uint8_t *out, const uint8_t *in,
                                                     const ub256_h x[8])
{
    ub_v r0[8], r1[8];
    UB_V128_FN(ublock256_, to_blocks)(r0, r1, x);
    for (int b = 0; b < 8; b++) {
        ub_storeu(out + 32 * b, ub_xor(r0[b], ub_loadu(in + 32 * b)));
        ub_storeu(out + 32 * b + 16, ub_xor(r1[b], ub_loadu(in + 32 * b + 16)));
    }
}

/* uBlock-256's stored round-key planes (ublock_bs.h's UBM_K), two vector
 * loads a plane: through the template's memcpy into ub256_h, a struct of
 * two vectors, gcc kept each key plane on the stack (a store and a reload
 * of both halves a plane, every round of the wide encryption). */
typedef struct {
    uint8_t b[sizeof(ub256_h)];
} ub256_kslot;

static inline ub256_h ub256_kget(const void *p)
{
    const uint8_t *b = (const uint8_t *)p;
    return (ub256_h){ub_loadu(b), ub_loadu(b + 16)};
}

static inline void ub256_kput(void *p, ub256_h x)
{
    uint8_t *b = (uint8_t *)p;
    ub_storeu(b, x.l);
    ub_storeu(b + 16, x.h);
}

#define UBM_K ub256_kslot
#define UBM_KGET(p) ub256_kget(p)
#define UBM_KPUT(p, x) ub256_kput(p, x)

#define UBM_FN(name) UB_V128_FN(ublock256_, name)
#define UBM_H ub256_h
#define UBM_XOR ub256_xor
#define UBM_AND ub256_and
#define UBM_OR ub256_or
#define UBM_ANDN ub256_andn
#define UBM_ONES ub256_ones
#define UBM_ROT(x, l, row) ub256_shuf(x, row)
#define UBM_ROT1 UB256_ROT1
#define UBM_ROT2 UB256_ROT2
#define UBM_ROT5 UB256_ROT5
#define UBM_PERM_L(x, l) ub256_pl(x)
#define UBM_PERM_R(x, l) ub256_pr(x)
#define UBM_PERM_L_INV(x, l) ub256_pl_inv(x)
#define UBM_PERM_R_INV(x, l) ub256_pr_inv(x)
#define UBM_LAYOUT_MASK 0u
#define UBM_DRIFT 0
#define UBM_BLOCK 32
#define UBM_PASS 8
#define UBM_NS 1
#ifdef UB_V128_PLANE_UNROLL256
#define UBM_PLANE_UNROLL _Pragma("GCC unroll 8")
#endif
#define UBM_LOAD(x, in) UB_V128_FN(ublock256_, load)(x, in)
#define UBM_STORE(out, x) UB_V128_FN(ublock256_, store)(out, x)
#define UBM_STORE_XOR(out, in, x) UB_V128_FN(ublock256_, store_xor)(out, in, x)
#define UBM_KEY_LAYOUT(x, i) ((void)(x), (void)(i))
#define UBM_LAZY_MASKS
#include "ublock_bs.h"

/* ---- the low-latency kernel in front, and the backend tables ----------- */

#define UL_FN(name) UB_V128_XPASTE(ublock_ll_, UB_V128_ISA, _##name)
/* kuai_impl.stack_bytes: ssse3's wide calls reached just past 4 KiB below
 * the generic one-shot path's frame (Zen 4, gcc 12, 2026-12-07); neon's
 * and lsx's (zig's clang) pass the suite's check with this under QEMU */
#define UL_KERNEL_STACK 8192
#include "ublock_ll.h"

/* UL_FRONT pastes its prefix: expanded here first */
#define UB_V128_PREFIX(member) UB_V128_XPASTE(member, UB_V128_ISA, _)
#define UB_V128_FRONT(W, X, G, XT) UL_FRONT(W, X, 8, G, XT)
UB_V128_FRONT(UB_V128_PREFIX(ublock128_), UB_V128_CROSSOVER128, UB_V128_NS128, UB_V128_CROSSOVER128)
UB_V128_FRONT(UB_V128_PREFIX(ublock256_), UB_V128_CROSSOVER256, 1, UB_V128_CROSSOVER256)
UL_NARROW_IMPL(UB_V128_XPASTE(ublock128_, UB_V128_ISA, _ll), UB_V128_NAME, KUAI_FAMILY_UBLOCK128,
               UB_V128_AVAILABLE);
UL_NARROW_IMPL(UB_V128_XPASTE(ublock256_, UB_V128_ISA, _ll), UB_V128_NAME, KUAI_FAMILY_UBLOCK256,
               UB_V128_AVAILABLE);
/* The last argument: multi-key CBC encryption of at most that many streams
 * runs on the low-latency kernel (groups of 4 chains, 2 for 256/256), more
 * on the wide one (8 lanes). SSSE3 on a Xeon (2026-12-01), kuai_cbc_encrypt_multi
 * over n streams of 64 KiB, TSC cycles per byte, narrow against wide:
 * uBlock-128 5 streams 4.65 against 5.08, 6 4.41 against 4.25, 8 3.96
 * against 3.19; uBlock-256/256 4 streams 7.25 against ~8, 5 7.78 against
 * 6.39. The argument after it (kuai_impl.mk_cbc_wide_blocks), 33 streams
 * of nb blocks, wide against narrow: uBlock-128/128 nb 32 5.02 against
 * 4.29, 64 4.20 against 4.19; 128/256 64 6.04 against 6.05; 256/256 16
 * 10.39 against 7.75, 32 7.30 against 7.53: 64 and 32 blocks a stream.
 * NEON and LSX take the same (not timed on their hardware). */
UL_IMPL(UB_V128_VAR(ublock128_), UB_V128_NAME, KUAI_FAMILY_UBLOCK128, UB_V128_PRIORITY,
        UB_V128_AVAILABLE, UB_V128_PREFIX(ublock128_), 8,
        &UB_V128_XPASTE(ublock128_, UB_V128_ISA, _ll), 5, 64);
UL_IMPL(UB_V128_VAR(ublock256_), UB_V128_NAME, KUAI_FAMILY_UBLOCK256, UB_V128_PRIORITY,
        UB_V128_AVAILABLE, UB_V128_PREFIX(ublock256_), 8,
        &UB_V128_XPASTE(ublock256_, UB_V128_ISA, _ll), 4, 32);
#undef UB_V128_FRONT
#undef UB_V128_PREFIX
