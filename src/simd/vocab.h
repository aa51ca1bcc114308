/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The vector vocabulary every cipher's SIMD backend is written over, one
 * header per ISA: sse.h (v128 on SSE2/SSSE3), avx2.h (v256), neon.h (v128
 * on ARM64 ASIMD), lsx.h (v128 on LoongArch LSX); avx512.h (v512) has only
 * the operations uBlock's zmm groups use, lasx.h (v256 on LoongArch LASX)
 * only those the bitsliced AES uses. Each defines, for its
 * prefix P (v128, v256 or v512), the type P and
 *   P_loadu(p), P_storeu(p, x)  unaligned; P_load(p) from an aligned constant
 *   P_row16(p)                  16 bytes from p in every 16-byte lane
 *   P_xor, P_and, P_or; P_andn(a, b) = ~a & b
 *   P_xor3(a, b, c)             a ^ b ^ c: one instruction where P_has_xor3
 *                               is 1 (vpternlogd, in a file compiled with
 *                               AVX-512VL, or make test-shim's stand-in),
 *                               else two XORs (P_has_xor3 0),
 *                               so a kernel can build its XOR trees for
 *                               either (a constant: the unused form folds)
 *   P_zero(), P_ones(), P_set1_8(c), P_set1_32(w)
 *   v128_set64x2(lo, hi)        qwords {lo, hi} from two 64-bit integers
 *                               (v128 only)
 *   P_shuf8(x, idx)             byte i = x[idx[i]] per 16-byte lane, for
 *                               indices 0..15 (where pshufb, tbl and
 *                               vshuf.b agree; callers use no others)
 *   P_srl64/sll64, P_srl32/sll32(x, n)  n a constant
 *   P_srl64v/sll64v(x, n)       n a variable (kernels whose count is a
 *                               constant only after inlining)
 *   P_add32, P_sub32, P_cmpeq32, P_cmpgt32 (signed)
 *   P_unpacklo32/hi32(a, b)     dwords {a0, b0, a1, b1} / {a2, b2, a3, b3}
 *   P_unpacklo64/hi64(a, b)     qwords {a0, b0} / {a1, b1}
 *   P_even32/odd32(a, b)        dwords {a0, a2, b0, b2} / {a1, a3, b1, b3}
 *   P_unpacklo8/hi8(a, b)       bytes {a0, b0, .., a7, b7} / {a8, b8, .., a15, b15}
 *   P_swap64(x)                 the two qwords (of each lane) exchanged
 *   P_blend64(a, b)             qwords {a0, b1} (of each lane)
 *   P_sel8(m, a, b)             a's bits where m's are set, b's elsewhere
 *                               (one vpternlogd, bsl or vbitsel.v; three
 *                               operations on SSE and AVX2)
 *   P_shuf8z(x, idx)            P_shuf8 where an index may also be 0x80..0x8f,
 *                               which gives 0 (pshufb's bit 7; tbl's >= 16;
 *                               LSX needs one more op)
 *   P_pin(x)                    x, but opaque to the compiler (an empty asm;
 *                               a macro: not nested in another P_pin):
 *                               a sum built from pinned parts keeps the tree
 *                               it is written as (compilers re-associate XOR
 *                               chains by operand rank, not by latency)
 * (v256, v512: per 128-bit lane, as the AVX2 and AVX-512 instructions). All are macros or static
 * inline, so each is the instruction(s) it names and shift counts stay immediates.
 *
 * A cipher's generic kernel keeps its own short names (ub_xor, v_shuf,
 * sm4v_add32, ...) so that one source serves several widths; its backend
 * file picks the prefix and KUAI_V(prefix, op) maps a name onto it.
 */
#ifndef KUAI_SIMD_VOCAB_H
#define KUAI_SIMD_VOCAB_H

#define KUAI_V_(p, op) p##_##op
#define KUAI_V(p, op) KUAI_V_(p, op)

#endif
