/* SPDX-License-Identifier: Apache-2.0 */
/*
 * SM4's S-box, rounds and counters on LoongArch vectors, written once for
 * LSX (sm4_lsx.c, 4 blocks a group) and LASX (sm4_lasx.c, 8, the same
 * steps in each 128-bit lane). The S-box looks each byte up in all eight
 * 32-byte slices of the table (vshuf.b by the low five bits) and keeps the
 * slice its top three bits name by a tree of bit selects. Constant time:
 * the table is read whole into registers at fixed addresses, every byte
 * goes through all eight lookups, the selection is by masks.
 *
 * The including file has included sm4_vocab.h and defines SM4L(op), the
 * intrinsic of op for its width (__lsx_v##op, __lasx_xv##op), and
 * SM4L_TABLE(r, k), the S-box's 16-byte part r + k (0..15) in every
 * 128-bit lane, k a constant 0..3 (LSX loads at an immediate offset).
 */
#ifndef KUAI_SM4_LOONG_H
#define KUAI_SM4_LOONG_H

#define sm4v_xor4(a, b, c, d) sm4v_xor(sm4v_xor(a, b), sm4v_xor(c, d))
/* vshuf4i.b with 0b00011011: bytes 3, 2, 1, 0 of every word */
#define sm4v_bswap32(x) SM4L(shuf4i_b)(x, 0x1b)
#define SM4L_ROL(x, n) SM4L(rotri_w)(x, 32 - (n))

static inline sm4v sm4l_sub(sm4v x)
{
    /* the eight lookups by the low five bits, then a tree of bit selects
     * by bits 5, 6 and 7 (each mask: bit b shifted to the sign, a signed
     * compare with 0): 8 vshuf.b, 5 mask and 7 vbitsel.v operations where
     * a compare, an AND and an OR after each lookup had taken 8 x 3; each
     * pair selected as soon as it is looked up, so few vectors are live */
    const sm4v idx = SM4L(andi_b)(x, 0x1f);
    const sm4v m5 = SM4L(slti_b)(SM4L(slli_b)(x, 2), 0), m6 = SM4L(slti_b)(SM4L(slli_b)(x, 1), 0),
               m7 = SM4L(slti_b)(x, 0);
    sm4v u[2];
    for (int h = 0; h < 2; h++) {
        sm4v w[2];
        for (int p = 0; p < 2; p++) {
            const int r = 8 * h + 4 * p;
            /* vshuf.b vd, vj, vk, va: index < 16 picks vk, 16..31 picks vj */
            sm4v v0 = SM4L(shuf_b)(SM4L_TABLE(r, 1), SM4L_TABLE(r, 0), idx),
                 v1 = SM4L(shuf_b)(SM4L_TABLE(r, 3), SM4L_TABLE(r, 2), idx);
            /* vbitsel.v vd, vj, vk, va: vk's bits where va's are set, vj's elsewhere */
            w[p] = SM4L(bitsel_v)(v0, v1, m5);
        }
        u[h] = SM4L(bitsel_v)(w[0], w[1], m6);
    }
    return SM4L(bitsel_v)(u[0], u[1], m7);
}

/* x0 ^ L(tau(t)), L(B) = B ^ (B <<< 2) ^ (B <<< 10) ^ (B <<< 18) ^ (B <<< 24). */
static inline sm4v sm4v_round(sm4v x0, sm4v t)
{
    sm4v b = sm4l_sub(t);
    sm4v m = sm4v_xor(sm4v_xor(b, SM4L_ROL(b, 8)), SM4L_ROL(b, 16));
    return sm4v_xor(sm4v_xor(x0, b), sm4v_xor(SM4L_ROL(b, 24), SM4L_ROL(m, 2)));
}

/* x[0..3] = the 128-bit counter (w[0] most significant) + off, per lane:
 * word 3 wrapped iff it ended below the addend; the carry, an all-ones
 * mask, passes on through every word that became 0 (subtracting it adds 1). */
static inline void sm4v_ctr(sm4v x[4], const uint32_t w[4], sm4v off)
{
    x[3] = sm4v_add32(sm4v_set1(w[3]), off);
    sm4v c = SM4L(slt_wu)(x[3], off);
    for (int j = 2; j >= 0; j--) {
        x[j] = sm4v_sub32(sm4v_set1(w[j]), c);
        c = sm4v_and(c, SM4L(seqi_w)(x[j], 0));
    }
}

#endif
