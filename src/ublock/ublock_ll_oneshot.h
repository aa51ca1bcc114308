/* SPDX-License-Identifier: Apache-2.0 */
/*
 * uBlock low-latency kernel, its one-shot calls: the key schedule on
 * nibbles of ublock_ks.h, round keys made between the rounds. Included by
 * ublock_ll.h after the kernel's rounds and group loads/stores, whose
 * names (UL_FN, UL_H, UL_G128, ...) it uses; no include guard, as the
 * including file is itself included once per ISA.
 */

/*
 * The key schedule runs on nibbles (ublock_ks.h): every round key goes
 * from the key register straight into this kernel's form, one pshufb per
 * vector (the schedule's nibble order to the layout of the round that adds
 * it), into kc on this stack frame; no packed schedule, no split per
 * round. One block per key runs up to a group of keys as one pass, read
 * from and written to the callers' buffers directly (all loads of a group
 * before its stores).
 */
/* The one-shot kernels start on a cache line (KUAI_HOT_ALIGN, seam.h): on
 * Zen 1 their speed moved up to 5% either way with unrelated code. */

/* Rounds beside a schedule in flight, two or more vectors side by side,
 * are bound by the shuffle ports rather than by their depth: they take
 * round128's lean form (lin128s; one vector alone waits on the depth).
 * Chosen with llvm-mca's Zen 3 model (scripts/mca-loops) and timed on a
 * Xeon (docs/performance.md). */
#define UL_LEAN(n) ((n) > 1 ? UL_FORM_LEAN : UL_FORM_FULL)
/* ks_fused_y's rounds beside schedules in key setup's frames (7
 * operations a round): on Zen 5 (kuai_cpu_zen5) they wait on the rounds'
 * depth instead, and uBlock-128/256's take the lone chain's deep form
 * (EPYC family 26 model 2, avx2, scripts/bench-ab, TSC cycles: one key's
 * 4 blocks 352 -> 309, four keys' 439 -> 362). uBlock-128/128's keep the
 * lean one: one key's 4 blocks measured 1.01-1.03x the cycles in the deep
 * form, four keys' (their schedules not in the frames) 246 -> 275. On Zen
 * 3 (EPYC family 25 model 1) the deep form is the slower one: one key's
 * 4 blocks 294 -> 374, four keys' 415 -> 451 (docs/performance.md, "Zen
 * 3"). t1: uBlock-128/128. */
/* Four uBlock-128 keys' blocks of one-shot encryption packed
 * (yks_packed4), except on Zen 5, where the forms above were measured and
 * the packed one is not, and where zmm runs them (zks_fused_mk: avx512
 * unless UL_ZAMD). */
#ifdef UL_Z
#define UL_PACKED4 (UL_ZAMD && !kuai_cpu_zen5())
#else
#define UL_PACKED4 (!kuai_cpu_zen5())
#endif
#ifdef UL_Z /* a three-input XOR: every form is lin128x3 (UL_FORM_PAIR) */
#define UL_FRAMED(n, t1) UL_LEAN(n)
#else
#define UL_FRAMED(n, t1) (kuai_cpu_zen5() && !(t1) ? UL_FORM_DEEP : UL_LEAN(n))
#endif

typedef union UL_FN(kcu) {
    v128 v[2 * (UBLOCK_MAX_ROUNDS + 1)];
    UL_H h[2 * (UBLOCK_MAX_ROUNDS + 1)];
} UL_FN(kcu);

/*
 * uBlock-128 round key r from the key register into the kernel's form: one
 * pshufb by row ublock_llk_p[0][r & 7] (the register's natural nibble order
 * to load128's layout, then to round r's; ublock_sched.c), a constant row
 * where composing it per round cost a pshufb more; [1][r & 7] reads a
 * vector held in the schedule's swapped frame. ks_psw[l] is
 * ublock_llk_p[0][l] composed after the schedule's swap(PK1(.)):
 * uBlock-128/128's k1 of round r is swap(PK1(k0 of round r - 1)), so one
 * pshufb of the earlier k0 gives it in round r's layout (ks_ydec_a).
 * Generated from ub128_tab and PK1.
 */
#ifdef UL_Y
static const _Alignas(16) uint8_t
    UL_FN(ks_psw)[8][16] = {{4, 12, 11, 7, 6, 8, 1, 5, 9, 2, 3, 14, 0, 13, 15, 10},
                            {6, 4, 8, 12, 11, 5, 7, 1, 0, 9, 13, 2, 3, 10, 14, 15},
                            {11, 6, 5, 4, 8, 1, 12, 7, 3, 0, 10, 9, 13, 15, 2, 14},
                            {8, 11, 1, 6, 5, 7, 4, 12, 13, 3, 15, 0, 10, 14, 9, 2},
                            {5, 8, 7, 11, 1, 12, 6, 4, 10, 13, 14, 3, 15, 2, 0, 9},
                            {1, 5, 12, 8, 7, 4, 11, 6, 15, 10, 2, 13, 14, 9, 3, 0},
                            {7, 1, 4, 5, 12, 6, 8, 11, 14, 15, 9, 10, 2, 0, 13, 3},
                            {12, 7, 6, 1, 4, 11, 5, 8, 2, 14, 0, 15, 9, 3, 10, 13}};
#endif

UB_KERNEL void UL_FN(ks_ll)(UL_FN(kcu) * kc, kuai_cipher c, const uint8_t *key)
{
    ub_ks ks;
    ub_ks_init(&ks, c, key);
    if (c != KUAI_UBLOCK_256_256) {
        /* key setup's rows (ublock_expand_nib_w.h), the stored form the
         * kernels read, here on the stack */
        uint8_t *const rows[1] = {(uint8_t *)kc->v};
        /* in the frames where a three-input XOR is: drifting made one
         * key's one-shot decryption of 4 blocks slower on avx512 (190 ->
         * 198 TSC cycles) and faster on avx2 (274 -> 260; Xeon, Sapphire
         * Rapids), where kuai_key_init and a decryption gained on both */
        ub_expand_nib_x_rows(rows, &ks, v128_has_xor3);
    } else {
        const v128 qv = v128_load(ublock_llk_p[0][0]);
        const v128 p0 = v128_shuf8(qv, v128_load(ub256_tab[UB256_TO_L]));
        const v128 p1 = v128_shuf8(qv, v128_load(ub256_tab[UB256_TO_L] + 16));
        for (unsigned r = 0; r <= ks.rounds; r++) {
            if (r)
                ub_ks_step(&ks, r, 1);
            kc->h[2 * r] = UL_FN(mk256)(v128_shuf8(ks.k0, p0), v128_shuf8(ks.k1, p1));
            kc->h[2 * r + 1] = UL_FN(mk256)(v128_shuf8(ks.k2, p0), v128_shuf8(ks.k3, p1));
        }
    }
}

/* ks_ll's round keys for key, the forms one-shot decryption stores on its
 * frame (nbytes of them: at most sizeof (UL_FN(kcu))): the same bytes on
 * every backend (one code, one set of rows), which the suite's stack
 * search looks for after one-shot calls (tests/test_oneshot.c; uBlock-256's
 * forms are none of the stored key's). */
void UL_FN(ks_ll_forms)(uint8_t *out, size_t nbytes, kuai_cipher c, const uint8_t *key);
void UL_FN(ks_ll_forms)(uint8_t *out, size_t nbytes, kuai_cipher c, const uint8_t *key)
{
    UL_FN(kcu) kc;
    UL_FN(ks_ll)(&kc, c, key);
    memcpy(out, &kc, nbytes < sizeof kc ? nbytes : sizeof kc);
    kuai_wipe(&kc, sizeof kc);
}

/* nb blocks, block j from src[j] to dst[j], under kc[j] (mk) or kc[0];
 * with UL_Y, 2-4 uBlock-128 blocks under one key run where the stored-key
 * call runs them (UL_YNB3: ymm, or zmm for 3-4 where UL_Z), kc[0]'s xmm
 * round keys loaded into every lane (several keys on ymm decrypt in
 * ks_ydec_a/_b instead), and so do uBlock-256's pairs and, with vpermb,
 * its one block (cblock256). wipe: decryption zeroes each of kc's round
 * keys as it reads them where the kernel can (the kernels' wipe); returns
 * whether it did, else the caller wipes kc. Zen 4 (EPYC family 25 model
 * 17), avx512, TSC cycles, a throwaway program's loop of
 * kuai_ecb_decrypt_oneshot (lowest of 2,000 batches, two runs): 3 blocks
 * of 128/128 342-343 -> 318-326 (3 blocks had run on xmm), of 128/256
 * 476 -> 428-441; one block of 256/256 546-570 -> 456-458 (kuai_key_init
 * and kuai_ecb_decrypt 431-439); avx2 (KUAI_BACKEND), 3 blocks 338-339
 * -> 316-321 and 493-501 -> 456, one 256/256 block 535-573 -> 498-502,
 * two 540-566 -> 506-510 (kuai_key_init and decryption 504-513). */
UB_KERNEL int UL_FN(ks_group)(const UL_FN(kcu) * kc, unsigned rounds, size_t bs,
                              const uint8_t *const *src, uint8_t *const *dst, int nb, int enc,
                              int mk, int wipe)
{
#ifdef UL_Y
    if (bs == 16 && UL_YNB3(nb) && !mk) {
        const v256 *kcp[1] = {(const v256 *)(const void *)kc[0].v};
        return UL_FN(ygroup128)(kcp, rounds, src, dst, nb, enc, 0, wipe);
    }
#endif
    if (bs == 16) {
        v128 a[UL_G128], b[UL_G128];
        const v128 *kcp[UL_G128];
        for (int j = 0; j < nb; j++) {
            kcp[j] = kc[mk ? j : 0].v;
            UL_FN(load128)(src[j], &a[j], &b[j]);
        }
        if (enc)
            UL_FN(enc128)(a, b, NULL, kcp, rounds, nb, mk);
        else
            UL_FN(dec128)(a, b, NULL, kcp, rounds, nb, mk, UL_SHALLOW(nb), wipe);
        for (int j = 0; j < nb; j++)
            v128_storeu(dst[j], UL_FN(merge128)(a[j], b[j]));
        return wipe && !enc;
    } else {
#ifdef UL_Y
        if (nb >= 2) {
            const UL_H *kcp[2] = {kc[0].h, kc[mk ? 1 : 0].h};
#ifdef UL_Z
            const int zw = wipe && !enc && !mk && UL_ZWIPE;
            UL_FN(zgroup256)(NULL, kcp, rounds, src, dst, 2, enc, mk, zw);
            return zw;
#else
            const int yw = wipe && !enc && !mk;
            UL_FN(ygroup256)(NULL, kcp, rounds, src, dst, 2, enc, mk, yw);
            return yw;
#endif
        }
#endif
#ifdef UL_VPERMB256
        if (!mk) { /* one block: the front's cblock256, its keys from kc */
            const int cw = wipe && !enc;
            UL_FN(cblock256)(kc[0].h, 0, rounds, src[0], dst[0], enc, cw);
            return cw;
        }
#endif
        UL_H a[UL_G256], b[UL_G256];
        const UL_H *kcp[UL_G256];
        for (int j = 0; j < nb && j < UL_G256; j++) {
            kcp[j] = kc[mk ? j : 0].h;
            a[j] = UL_FN(load256)(src[j]);
            b[j] = UL_FN(load256)(src[j] + 16);
        }
        if (enc)
            UL_FN(enc256)(a, b, NULL, kcp, rounds, nb < UL_G256 ? nb : UL_G256, mk);
        else
            UL_FN(dec256)(a, b, NULL, kcp, rounds, nb < UL_G256 ? nb : UL_G256, mk, wipe);
        for (int j = 0; j < nb && j < UL_G256; j++) {
            UL_FN(store256)(dst[j], a[j]);
            UL_FN(store256)(dst[j] + 16, b[j]);
        }
        return wipe && !enc;
    }
}

#ifdef UL_Y
/* ks_fused's round key r on ymm, the schedules stepped to it first (r > 0):
 * from ksy[v] (mk; two keys per vector) or from the one key's xmm schedule
 * k1x, broadcast. */
UB_KERNEL void UL_FN(yks_key)(ub_ksy *ksy, ub_ks *k1x, unsigned r, int nv, int mk, v256 *k0,
                              v256 *k1)
{
    if (mk) {
        v256 p = v256_row16(ublock_llk_p[0][r & 7]);
        for (int v = 0; v < nv; v++) {
            if (r)
                ub_ksy_step(&ksy[v], r, 1);
            k0[v] = v256_shuf8(ksy[v].k0, p);
            k1[v] = v256_shuf8(ksy[v].k1, p);
        }
    } else {
        v128 p = v128_load(ublock_llk_p[0][r & 7]);
        if (r)
            ub_ks_step(k1x, r, 1);
        k0[0] = _mm256_broadcastsi128_si256(v128_shuf8(k1x->k0, p));
        k1[0] = _mm256_broadcastsi128_si256(v128_shuf8(k1x->k1, p));
    }
}
#endif

#ifdef UL_Y
/* yks_key for uBlock-128 keys in key setup's two frames (t1: 128/128's,
 * ub_ksy_step128f; else 128/256's, ub_ksy_stepf; sw: round r's first half
 * in the swapped frame, the second in the normal one, or the other way
 * round); a swapped half converts by ublock_llk_p[1]'s row. */
UB_KERNEL void UL_FN(yks_keyf)(ub_ksy *ksy, unsigned r, int t1, int sw, int nv, v256 *k0, v256 *k1)
{
    const v256 p = v256_row16(ublock_llk_p[0][r & 7]), ps = v256_row16(ublock_llk_p[1][r & 7]);
    for (int v = 0; v < nv; v++) {
        if (r)
            ub_ksy_step_any(&ksy[v], r, t1, sw);
        k0[v] = v256_shuf8(ksy[v].k0, sw ? ps : p);
        k1[v] = v256_shuf8(ksy[v].k1, sw ? p : ps);
    }
}
#endif

#ifdef UL_Y
/* ks_fused_y's rounds beside schedules in key setup's frames, two a pass,
 * in round128's form (a constant at each call) */
UB_KERNEL void UL_FN(yks_frames)(ub_ksy *ksy, v256 *a, v256 *b, v256 *k0, v256 *k1, unsigned rounds,
                                 int t1, int nky, int nv, int mk, const int form)
{
    for (unsigned r = 1; r <= rounds; r += 2) {
        UL_FN(yks_keyf)(ksy, r, t1, t1, nky, k0, k1);
        UL_FN(yround128)(a, b, k0, k1, (r - 1) & 7, nv, mk, form);
        UL_FN(yks_keyf)(ksy, r + 1, t1, !t1, nky, k0, k1);
        UL_FN(yround128)(a, b, k0, k1, r & 7, nv, mk, form);
    }
}
#endif

#ifdef UL_Y
/*
 * Four keys' blocks, one each, packed two a byte (round128p): a, b hold
 * blocks 0 and 1 (vector 0) and 2 and 3 (vector 1) after the first round
 * key, as ks_fused_y loads them; block 2 and 3's nibbles go into the high
 * half of each byte, so the state is two ymm, not four, and a round's
 * byte permutations move all four blocks at once. Each round's two key
 * vectors are packed alike before their move to the round's layout (one
 * pshufb each for the four keys, not two). The schedules stay one
 * nibble a byte, two keys a ymm, in key setup's frames. The S-box on
 * packed bytes costs four operations more a vector and the round three
 * operations of depth more (13, lin128's), but the state's and the
 * keys' 8 vectors fit in the registers: unpacked, gcc kept the blocks in
 * memory between the rounds, and the rounds waited on the reloads
 * (docs/performance.md, seventy-first session: Zen 3, four keys' one
 * block each 0.84-0.86x the cycles for 128/256, 0.96-0.97x for 128/128).
 */
UB_KERNEL void UL_FN(yks_packed_round)(ub_ksy *ksy, v256 *pa, v256 *pb, unsigned r, int t1, int sw)
{
    const v256 p = v256_row16(ublock_llk_p[0][r & 7]), ps = v256_row16(ublock_llk_p[1][r & 7]);
    for (int v = 0; v < 2; v++)
        ub_ksy_step_any(&ksy[v], r, t1, sw);
    v256 k0 = v256_shuf8(UL_FN(ypack2)(ksy[0].k0, ksy[1].k0), sw ? ps : p);
    v256 k1 = v256_shuf8(UL_FN(ypack2)(ksy[0].k1, ksy[1].k1), sw ? p : ps);
    UL_FN(yround128p)(pa, pb, &k0, &k1, (r - 1) & 7, 1);
}

UB_KERNEL void UL_FN(yks_packed4)(ub_ksy *ksy, v256 *a, v256 *b, unsigned rounds, int t1)
{
    v256 pa = UL_FN(ypack2)(a[0], a[1]), pb = UL_FN(ypack2)(b[0], b[1]);
    /* two rounds a pass, each frame a constant (yks_frames' order; a
     * round a pass chose the frame by a branch a round: 0.94x, not 0.87x) */
    for (unsigned r = 1; r <= rounds; r += 2) {
        UL_FN(yks_packed_round)(ksy, &pa, &pb, r, t1, t1);
        UL_FN(yks_packed_round)(ksy, &pa, &pb, r + 1, t1, !t1);
    }
    UL_FN(yunpack2)(pa, &a[0], &a[1]);
    UL_FN(yunpack2)(pb, &b[0], &b[1]);
}
#endif

#ifdef UL_Y
/*
 * ks_fused on ymm (uBlock-128 groups of 2 and 4). Several keys: their
 * schedules run in ymm too, two per vector, each in the lanes of the blocks
 * that add its round keys, so no round key moves between lanes. One key:
 * in both lanes of ymm where the core runs 256 bits at once (UL_YFULL: the
 * same cost as xmm, and no broadcast per round key); where it splits them,
 * Zen 1, on xmm with each round key broadcast to both lanes as it is made
 * (half the width for the same result: this is what keeps the path at or
 * below the xmm kernel's cost; docs/performance.md). ky: the schedules run
 * on ymm, a constant at each call (so the compiler sees which of ksy and
 * k1x is set up). pk (a constant at each call; 4 keys' blocks only): the
 * blocks packed (yks_packed4), in kernels of their own (ksfa_p4, ksfb_p4):
 * chosen inside ks_fused's kernels, uBlock-128/128's call took 1.05x the
 * cycles of its own kernel's (Zen 3).
 */
UB_KERNEL void UL_FN(ks_fused_y)(kuai_cipher c, const uint8_t *const *key,
                                 const uint8_t *const *src, uint8_t *const *dst, int nb, int mk,
                                 const int ky, const int pk)
{
    const int nv = UL_YV(nb);
    const int nky = mk ? nv : 1;
    v256 a[UL_YV(UL_G128)], b[UL_YV(UL_G128)], k0[UL_YV(UL_G128)], k1[UL_YV(UL_G128)];
    ub_ksy ksy[UL_YV(UL_G128)];
    ub_ks k1x;
    /* schedules on ymm: two rounds a pass, in key setup's frames, except
     * several uBlock-128/128 keys: Xeon (Sapphire Rapids), avx2, TSC
     * cycles, one-shot of one key's 4 blocks 205 -> 192 in the frames
     * (ub_ksy_step128f: 7 operations a round where ub_ksy_step has 11),
     * four keys' blocks 243 -> 249 (their two schedules, 14 operations
     * more a round beside the rounds' shuffles); llvm-mca's Zen 3 model
     * level either way (12.5 cycles a round). Packed (pk): the frames. */
    const int t1 = c == KUAI_UBLOCK_128_128, f = ky && (pk || !(t1 && mk));
    if (ky) {
        for (int v = 0; v < nky; v++) {
            const int j0 = mk ? 2 * v : 0, j1 = mk && 2 * v + 1 < nb ? 2 * v + 1 : j0;
            ub_ksy_init(&ksy[v], c, key[j0], key[j1], j1 == j0);
            if (f)
                ub_ksy_frames_any(&ksy[v], t1);
        }
    } else {
        ub_ks_init(&k1x, c, key[0]);
    }
    const unsigned yrounds = ky ? ksy[0].rounds : k1x.rounds;
    if (f)
        UL_FN(yks_keyf)(ksy, 0, t1, !t1, nky, k0, k1);
    else
        UL_FN(yks_key)(ksy, &k1x, 0, nky, ky, k0, k1);
    for (int v = 0; v < nv; v++) {
        const int j1 = 2 * v + 1 < nb ? 2 * v + 1 : 2 * v;
        UL_FN(yload128)(src[2 * v], src[j1], j1 == 2 * v, &a[v], &b[v]);
        a[v] = v256_xor(a[v], k0[mk ? v : 0]);
        b[v] = v256_xor(b[v], k1[mk ? v : 0]);
    }
    /* each form its own loop (a constant form in each): with the choice
     * inside, gcc kept it in the loop and one key's uBlock-128/128 rounds
     * took 238 -> 272 TSC cycles in the lean form (Zen 5, KUAI_ZEN=0) */
    if (pk)
        UL_FN(yks_packed4)(ksy, a, b, yrounds, t1);
    else if (f && UL_FRAMED(nv, t1) == UL_FORM_DEEP)
        UL_FN(yks_frames)(ksy, a, b, k0, k1, yrounds, t1, nky, nv, mk, UL_FORM_DEEP);
    else if (f)
        UL_FN(yks_frames)(ksy, a, b, k0, k1, yrounds, t1, nky, nv, mk, UL_LEAN(nv));
    for (unsigned r = 1; !f && r <= yrounds; r++) {
        UL_FN(yks_key)(ksy, &k1x, r, nky, ky, k0, k1);
        UL_FN(yround128)(a, b, k0, k1, (r - 1) & 7, nv, mk, UL_LEAN(nv));
    }
    for (int v = 0; v < nv; v++)
        UL_FN(ystore128)(dst[2 * v], 2 * v + 1 < nb ? dst[2 * v + 1] : NULL, a[v], b[v]);
}
#endif

#ifdef UL_Z
/*
 * ks_fused_y for one key's 4 uBlock-128 blocks on zmm (zgroup128's form):
 * the schedule on xmm in key setup's two frames, each round key moved to
 * the round's layout by one pshufb (ublock_llk_p's row, as yks_key's) and
 * put into every lane by a store and a broadcast load. While zmm code
 * runs, ports 0 and 5 are the only vector ALUs of this core and the call
 * is bound by their operation count: a vpermb (port 5 only) a round key
 * had done the move and the broadcast in one (Xeon, Emerald Rapids, TSC
 * cycles: 227 -> 208-214 for 128/128, 305 -> 299-300 for 128/256, from
 * ub_ks_step's schedule; twentieth session, in one process with that
 * build: the frames (ub_ks_step128f: 7 operations a round where
 * ub_ks_step has 11; ub_ks_stepf 7 where it has 9) 195-236 -> 184-213
 * and 284-353 -> 271-321, the broadcast load instead of vpermb
 * 0.92-0.96x of that). The asm keeps the store and the load, which gcc
 * would otherwise fold back into a register broadcast (a port-5
 * shuffle); the shim build (no AVX-512 hardware) keeps vpermb. Four
 * keys: zks_fused_mk (their round keys into zmm lanes by a vpermt2b from
 * two ymm schedules had measured 279 -> 304 and 386 -> 434 cycles).
 */
UB_KERNEL v512 UL_FN(zks_pick1)(v128 x, const uint8_t *row, uint8_t slot[16])
{
#if defined(__AVX512F__)
    v128 t = v128_shuf8(x, v128_load(row));
    v512 z;
    /* t in xmm0-15 ("x"): the VEX vmovdqu has no encoding for xmm16-31 */
    __asm__("vmovdqu %2, %1\n\tvbroadcasti32x4 %1, %0"
            : "=v"(z), "=m"(*(uint8_t(*)[16])slot)
            : "x"(t));
    return z;
#else
    (void)slot;
    return _mm512_permutexvar_epi8(v512_row16(row), _mm512_castsi128_si512(x));
#endif
}

/* The pick's slot zeroed once the rounds are done: it held round key
 * material (a store no compiler drops; one store, where kuai_wipe's call
 * would cost about a tenth of the call) */
UB_KERNEL void UL_FN(zks_slot_wipe)(uint8_t slot[16])
{
#if defined(__AVX512F__)
    __asm__ volatile("vmovdqu %1, %0" : "=m"(*(uint8_t(*)[16])slot) : "x"(v128_zero()));
#else
    kuai_wipe(slot, 16);
#endif
}

/* Round r's key from the xmm schedule, K0 in frame sw, K1 in the other,
 * through PL^-1 / PR^-1 into zround128n's nibble order, added in round
 * r - 1. */
UB_KERNEL void UL_FN(zks_round1)(v512 *a, v512 *b, const ub_ks *ks, int sw, uint8_t slot[16])
{
    v512 k0 = UL_FN(zks_pick1)(ks->k0, UL_FN(zn_rows)[UB_ZN_KPL + sw], slot);
    v512 k1 = UL_FN(zks_pick1)(ks->k1, UL_FN(zn_rows)[UB_ZN_KPR + !sw], slot);
    UL_FN(zround128n)(a, b, k0, k1);
}

UB_KERNEL void UL_FN(zks_fused)(kuai_cipher c, const uint8_t *key, const uint8_t *const *src,
                                uint8_t *const *dst)
{
    v512 a, b;
    ub_ks ks;
    ub_ks_init(&ks, c, key);
    UL_FN(zload4n)(src, &a, &b);
    /* key setup's two frames (ub_ks_step_any: round r's K0 in the swapped
     * one for odd r under uBlock-128/128, even r under 128/256); two
     * rounds a pass, each frame a constant */
    const int t1 = c == KUAI_UBLOCK_128_128;
    ub_ks_frames_any(&ks, t1);
    _Alignas(16) uint8_t slot[16];
    a = v512_xor(a, UL_FN(zks_pick1)(ks.k0, UL_FN(zn_rows)[UB_ZN_KEY + !t1], slot));
    b = v512_xor(b, UL_FN(zks_pick1)(ks.k1, UL_FN(zn_rows)[UB_ZN_KEY + t1], slot));
    for (unsigned r = 1; r <= ks.rounds; r += 2) {
        ub_ks_step_any(&ks, r, t1, t1);
        UL_FN(zks_round1)(&a, &b, &ks, t1, slot);
        ub_ks_step_any(&ks, r + 1, t1, !t1);
        UL_FN(zks_round1)(&a, &b, &ks, !t1, slot);
    }
    UL_FN(zstore4n)(dst, a, b);
    UL_FN(zks_slot_wipe)(slot);
}
#endif

#ifdef UL_Z
/*
 * ks_fused_y for four keys' blocks, one each, on zmm: the four schedules
 * side by side in one zmm (ub_ksz, key j in lane j), so each round key
 * is made in the lane of the block that adds it (one in-lane pshufb to
 * the round's layout, as yks_key's), and the blocks in zgroup128's form.
 * Both members in key setup's frames (ub_ksz_step_any, t1: uBlock-128/128),
 * two rounds a pass. Xeon (Emerald
 * Rapids), the public call in one process with the build before
 * (ks_fused_y, two ymm schedules), TSC cycles: 283 -> 245 (128/128), 408
 * -> 369 (128/256); 128/128 in the frames (twentieth session) 0.96-0.98x.
 */
/* Round r's key of every lane's schedule through PL^-1 / PR^-1 into
 * zround128n's order (rows UB_ZN_KEY: the key before the first round). */
UB_KERNEL void UL_FN(zks_keyzn)(ub_ksz *z, unsigned r, int t1, int sw, v512 *k0, v512 *k1)
{
    const unsigned r0 = r ? UB_ZN_KPL : UB_ZN_KEY, r1 = r ? UB_ZN_KPR : UB_ZN_KEY;
    if (r)
        ub_ksz_step_any(z, r, t1, sw);
    *k0 = v512_shuf8(z->k0, v512_row16(UL_FN(zn_rows)[r0 + sw]));
    *k1 = v512_shuf8(z->k1, v512_row16(UL_FN(zn_rows)[r1 + !sw]));
}

UB_KERNEL void UL_FN(zks_fused_mk)(kuai_cipher c, const uint8_t *const *key,
                                   const uint8_t *const *src, uint8_t *const *dst)
{
    ub_ksz z;
    v512 a, b, k0, k1;
    ub_ksz_init(&z, c, key);
    /* the frames as zks_fused's */
    const int t1 = c == KUAI_UBLOCK_128_128;
    ub_ksz_frames_any(&z, t1);
    UL_FN(zload4n)(src, &a, &b);
    UL_FN(zks_keyzn)(&z, 0, t1, !t1, &k0, &k1);
    a = v512_xor(a, k0);
    b = v512_xor(b, k1);
    for (unsigned r = 1; r <= z.rounds; r += 2) {
        UL_FN(zks_keyzn)(&z, r, t1, t1, &k0, &k1);
        UL_FN(zround128n)(&a, &b, k0, k1);
        UL_FN(zks_keyzn)(&z, r + 1, t1, !t1, &k0, &k1);
        UL_FN(zround128n)(&a, &b, k0, k1);
    }
    UL_FN(zstore4n)(dst, a, b);
}
#endif

#ifdef UL_Z
/* The vpermt2b index that takes a half's round key of each of two keys
 * from ymm x (key j in lane j) through row p0 and ymm y through p1: byte o
 * of zmm lane l is lane j = l / 2 of x through p0 where l is even, else
 * of y (the second source: + 64) through p1. */
UB_KERNEL v512 UL_FN(zks_pick2)(v128 p0, v128 p1)
{
    const v512 lanes =
        _mm512_setr_epi64(0, 0, 0x4040404040404040, 0x4040404040404040, 0x1010101010101010,
                          0x1010101010101010, 0x5050505050505050, 0x5050505050505050);
    return _mm512_add_epi8(_mm512_broadcast_i64x4(_mm256_set_m128i(p1, p0)), lanes);
}

UB_KERNEL v512 UL_FN(zks_key2)(v256 x, v512 pz, v256 y)
{
    return _mm512_permutex2var_epi8(_mm512_castsi256_si512(x), pz, _mm512_castsi256_si512(y));
}

/*
 * ks_fused's uBlock-256/256 pair (ksy: the two keys' schedules, key j in
 * lane j of each ymm) on zmm, zgroup256's form and round256_next. Round
 * key i of block j is its key's K0, K1 (left half) and K2, K3 (right)
 * through the rows p0 and p1 (ub256_tab's UB256_TO_L in the schedule's
 * nibble order), so one vpermt2b from K0 and K1 (K2 and K3) makes the zmm
 * of a half: lanes 2j and 2j + 1 are lane j of K0 through p0 and of K1
 * through p1. Xeon (Emerald Rapids), kuai_bench --mode paper, one-shot
 * encryption of 2 blocks: 444 -> 387-389 TSC cycles under one key, 454 ->
 * 395-396 one block under each of 2 keys (the ymm pair with yround256
 * before); 361 and 372 with zload2x256's way in and out. The same with a
 * vpermt2q and a vpshufb a half measured level. The schedules in key
 * setup's two frames (ub_ksy_stepf: 7 operations a round where
 * ub_ksy_step has 9; twentieth session, in one process with the build
 * before): 342-367 -> 330-354 (0.96x) under one key and under two; the
 * ymm pair below (avx2) 433-469 -> 376-422 (0.87-0.90x).
 */
UB_KERNEL void UL_FN(zks_fused256)(ub_ksy *ksy, v128 p0, v128 p1, const uint8_t *const *src,
                                   uint8_t *const *dst)
{
    /* the schedules in key setup's two frames (ublock_expand_nib_w.h):
     * round r's K0 and K3 in the swapped one for even r, K1 and K2 in the
     * other; a swapped vector's row has each index's bit 3 flipped. K0
     * (K2) through p0, K1 (K3) through p1: pzs for K0 swapped, pzn for K1 */
    const v128 e8 = v128_set1_8(8);
    const v512 pzs = UL_FN(zks_pick2)(v128_xor(p0, e8), p1);
    const v512 pzn = UL_FN(zks_pick2)(p0, v128_xor(p1, e8));
    v512 a, b;
    UL_FN(zload2x256)(src[0], src[1], &a, &b);
    ub_ksy_frames(ksy);
    a = v512_xor(a, UL_FN(zks_key2)(ksy->k0, pzs, ksy->k1));
    b = v512_xor(b, UL_FN(zks_key2)(ksy->k2, pzn, ksy->k3));
    for (unsigned i = 1; i <= 24; i += 2) {
        ub_ksy_stepf(ksy, i, 0, 0, 0);
        UL_FN(zround256_next)
        (&a, &b, UL_FN(zks_key2)(ksy->k0, pzn, ksy->k1), UL_FN(zks_key2)(ksy->k2, pzs, ksy->k3));
        ub_ksy_stepf(ksy, i + 1, 1, 0, 0);
        UL_FN(zround256_next)
        (&a, &b, UL_FN(zks_key2)(ksy->k0, pzs, ksy->k1), UL_FN(zks_key2)(ksy->k2, pzn, ksy->k3));
    }
    UL_FN(zstore2x256)(dst[0], dst[1], a, b);
}
#endif

/* Round r of ks_fused's uBlock-128 blocks: the nk schedules stepped to it
 * in key setup's frames (ub_ks_step_any: t1 uBlock-128/128, sw round
 * r's K0 in the swapped one), their round keys
 * to the round's layout, the round. */
UB_KERNEL void UL_FN(ks_round128)(ub_ks *ks, int nk, v128 *a, v128 *b, int nb, int mk, int t1,
                                  unsigned r, int sw)
{
    const v128 p0 = v128_load(ublock_llk_p[sw][r & 7]), p1 = v128_load(ublock_llk_p[!sw][r & 7]);
    v128 k0[UL_G128], k1[UL_G128];
    for (int j = 0; j < nk; j++) {
        ub_ks_step_any(&ks[j], r, t1, sw);
        k0[j] = v128_shuf8(ks[j].k0, p0);
        k1[j] = v128_shuf8(ks[j].k1, p1);
    }
    UL_FN(round128)(a, b, k0, k1, (r - 1) & 7, nb, mk, UL_LEAN(nb));
}

/* Step i (0: none) of ks_fused's uBlock-256/256 blocks: the schedules
 * stepped in key setup's frames (sw: K0 and K3 in the swapped one, K1 and
 * K2 in the other; pr: p0, p1, then the two for a swapped quarter), round
 * key i added, then round i + 1's S-box and linear layer (not after round
 * key 24). */
UB_KERNEL void UL_FN(ks_round256)(ub_ks *ks, int nk, UL_H *a, UL_H *b, int nb, int mk,
                                  const v128 *pr, unsigned i, int sw)
{
    UL_H k0[UL_G256], k1[UL_G256];
    for (int j = 0; j < nk && j < UL_G256; j++) {
        if (i)
            ub_ks_stepf(&ks[j], i, sw, 0, 0);
        k0[j] = UL_FN(mk256)(v128_shuf8(ks[j].k0, pr[sw ? 2 : 0]),
                             v128_shuf8(ks[j].k1, pr[sw ? 1 : 3]));
        k1[j] = UL_FN(mk256)(v128_shuf8(ks[j].k2, pr[sw ? 0 : 2]),
                             v128_shuf8(ks[j].k3, pr[sw ? 3 : 1]));
    }
    for (int j = 0; j < nb && j < UL_G256; j++) {
        if (i < 24) {
            UL_FN(round256)(&a[j], &b[j], k0[mk ? j : 0], k1[mk ? j : 0], 0, UL_DEEP256_KS);
        } else {
            a[j] = UL_FN(xor256)(a[j], k0[mk ? j : 0]);
            b[j] = UL_FN(xor256)(b[j], k1[mk ? j : 0]);
        }
    }
}

/*
 * Encryption with the round keys made between the rounds: each key's
 * schedule steps once per round (it depends on the key only, so it runs
 * beside the data's dependency chain) and its round key goes straight into
 * the XOR; nothing is stored. nk keys: one per block (mk) or one for all.
 * yk (a constant per kernel, so each kernel holds one path): one key's
 * group on ymm too (the oneshot entry picks it where UL_YFULL; with the
 * choice made inside, Zen 1's one-key uBlock-256/256 row lost 7%).
 */
UB_KERNEL void UL_FN(ks_fused)(kuai_cipher c, const uint8_t *const *key, size_t bs,
                               const uint8_t *const *src, uint8_t *const *dst, int nb, int mk,
                               int yk)
{
    (void)yk; /* read on ymm only (UL_Y) */
    const v128 qv = v128_load(ublock_llk_p[0][0]);
#ifdef UL_Y
    /* one key's 2 blocks on xmm where ymm is split (yk 0), as groupp's */
    if (bs == 16 && UL_YNB(nb) && (nb == 4 || yk || mk)) {
#ifdef UL_Z
        if (nb == 4 && !UL_ZAMD) {
            if (mk)
                UL_FN(zks_fused_mk)(c, key, src, dst);
            else
                UL_FN(zks_fused)(c, key[0], src, dst);
            return;
        }
#endif
        if (mk || yk)
            UL_FN(ks_fused_y)(c, key, src, dst, nb, mk, 1, 0);
        else
            UL_FN(ks_fused_y)(c, key, src, dst, nb, 0, 0, 0);
        return;
    }
#endif
    const int nk = mk ? nb : 1;
    ub_ks ks[UL_G128];
    for (int j = 0; j < nk; j++)
        ub_ks_init(&ks[j], c, key[j]);
    const unsigned rounds = ks[0].rounds;
    if (bs == 16) {
        /* the schedules in key setup's two frames (zks_fused's) */
        const int t1 = c == KUAI_UBLOCK_128_128;
        v128 a[UL_G128], b[UL_G128];
        for (int j = 0; j < nk; j++)
            ub_ks_frames_any(&ks[j], t1);
        const v128 q0 = v128_load(ublock_llk_p[!t1][0]), q1 = v128_load(ublock_llk_p[t1][0]);
        for (int j = 0; j < nb; j++) {
            UL_FN(load128)(src[j], &a[j], &b[j]);
            a[j] = v128_xor(a[j], v128_shuf8(ks[mk ? j : 0].k0, q0));
            b[j] = v128_xor(b[j], v128_shuf8(ks[mk ? j : 0].k1, q1));
        }
        for (unsigned r = 1; r <= rounds; r += 2) {
            UL_FN(ks_round128)(ks, nk, a, b, nb, mk, t1, r, t1);
            UL_FN(ks_round128)(ks, nk, a, b, nb, mk, t1, r + 1, !t1);
        }
        for (int j = 0; j < nb; j++)
            v128_storeu(dst[j], UL_FN(merge128)(a[j], b[j]));
    } else {
        const v128 p0 = v128_shuf8(qv, v128_load(ub256_tab[UB256_TO_L]));
        const v128 p1 = v128_shuf8(qv, v128_load(ub256_tab[UB256_TO_L] + 16));
#ifdef UL_Y
        if (nb >= 2 && (mk || yk)) {
            /* the two keys' schedules in ymm (one key's in both lanes: on
             * a core that runs 256 bits at once that costs what the xmm
             * schedule does; where it splits them, Zen 1, the key stays on
             * xmm: see ygroup256k); the blocks on zmm (zks_fused256) or
             * ymm, block j in lane j */
            ub_ksy ksy;
            ub_ksy_pair(&ksy, &ks[0], &ks[mk ? 1 : 0]);
#ifdef UL_Z
            if (UL_ZFULL) {
                UL_FN(zks_fused256)(&ksy, p0, p1, src, dst);
                return;
            }
#endif
            /* in key setup's two frames, as zks_fused256 */
            const v256 y0 = _mm256_broadcastsi128_si256(p0), y1 = _mm256_broadcastsi128_si256(p1);
            const v256 y0s = v256_xor(y0, v256_set1_8(8)), y1s = v256_xor(y1, v256_set1_8(8));
            UL_HY a = UL_FN(yload256v)(UL_FN(yload2)(src[0], src[1], 0));
            UL_HY b = UL_FN(yload256v)(UL_FN(yload2)(src[0] + 16, src[1] + 16, 0));
            UL_HY k0, k1;
#define UL_YKEY256(sw)                                                                             \
    do {                                                                                           \
        k0 = UL_FN(ymk256)(v256_shuf8(ksy.k0, (sw) ? y0s : y0),                                    \
                           v256_shuf8(ksy.k1, (sw) ? y1 : y1s));                                   \
        k1 = UL_FN(ymk256)(v256_shuf8(ksy.k2, (sw) ? y0 : y0s),                                    \
                           v256_shuf8(ksy.k3, (sw) ? y1s : y1));                                   \
    } while (0)
            ub_ksy_frames(&ksy);
            UL_YKEY256(1);
            UL_FN(yround256)(&a, &b, k0, k1, 0, UL_DEEP256_KS);
            for (unsigned i = 1; i < 24; i += 2) {
                ub_ksy_stepf(&ksy, i, 0, 0, 0);
                UL_YKEY256(0);
                UL_FN(yround256)(&a, &b, k0, k1, 0, UL_DEEP256_KS);
                ub_ksy_stepf(&ksy, i + 1, 1, 0, 0);
                UL_YKEY256(1);
                if (i + 1 < 24) {
                    UL_FN(yround256)(&a, &b, k0, k1, 0, UL_DEEP256_KS);
                } else {
                    a = UL_FN(yxor256)(a, k0);
                    b = UL_FN(yxor256)(b, k1);
                }
            }
#undef UL_YKEY256
            UL_FN(ystore2)(dst[0], dst[1], UL_FN(ymerge256)(a));
            UL_FN(ystore2)(dst[0] + 16, dst[1] + 16, UL_FN(ymerge256)(b));
            return;
        }
#endif
        /* in key setup's two frames, as zks_fused256 */
        const v128 pr[4] = {p0, p1, v128_xor(p0, v128_set1_8(8)), v128_xor(p1, v128_set1_8(8))};
        UL_H a[UL_G256], b[UL_G256];
        for (int j = 0; j < nb && j < UL_G256; j++) {
            a[j] = UL_FN(load256)(src[j]);
            b[j] = UL_FN(load256)(src[j] + 16);
        }
        for (int j = 0; j < nk && j < UL_G256; j++)
            ub_ks_frames(&ks[j]);
        UL_FN(ks_round256)(ks, nk, a, b, nb, mk, pr, 0, 1);
        for (unsigned i = 1; i <= 24; i += 2) {
            UL_FN(ks_round256)(ks, nk, a, b, nb, mk, pr, i, 0);
            UL_FN(ks_round256)(ks, nk, a, b, nb, mk, pr, i + 1, 1);
        }
        for (int j = 0; j < nb && j < UL_G256; j++) {
            UL_FN(store256)(dst[j], a[j]);
            UL_FN(store256)(dst[j] + 16, b[j]);
        }
    }
}

#ifdef UL_Y
/*
 * Decryption of 2 or 4 keys with one block each, on ymm, two keys per
 * vector as ks_fused. The rounds need the round keys last first, so the
 * schedule runs ahead and keeps them raw (as the key register holds them;
 * the rounds convert them, the same pshufb count as converting ahead),
 * each overwritten through a volatile pointer once its round has read it:
 * the wipe's stores run among the rounds, which are bound by the shuffle
 * units, instead of after them (on Zen 1 a wipe of the 2-3 KiB after the
 * rounds cost ~110-190 cycles of a 650-950-cycle call).
 *
 * uBlock-128/128 (ks_ydec_a) keeps only each round's K0||K1: its K2||K3
 * is swap(PK1(K0||K1 of the round before)), one pshufb of the earlier
 * vector with the conversion composed in (ks_psw), so half the stores.
 */
UB_KERNEL void UL_FN(ks_ydec_a)(const uint8_t *const *key, const uint8_t *const *src,
                                uint8_t *const *dst, int nb)
{
    enum { R = 16 };
    const int nv = UL_YV(nb);
    v256 kr[UL_YV(UL_G128)][R + 1]; /* K0||K1 of rounds 0..R - 1, K2||K3 of round 0 */
    v256 a[UL_YV(UL_G128)], b[UL_YV(UL_G128)], k0[UL_YV(UL_G128)], k1[UL_YV(UL_G128)];
    ub_ksy ks[UL_YV(UL_G128)];
    for (int v = 0; v < nv; v++) {
        ub_ksy_init(&ks[v], KUAI_UBLOCK_128_128, key[2 * v], key[2 * v + 1], 0);
        kr[v][0] = ks[v].k0;
        kr[v][R] = ks[v].k1;
    }
    for (unsigned r = 1; r < R; r++)
        for (int v = 0; v < nv; v++) {
            ub_ksy_step(&ks[v], r, 1);
            kr[v][r] = ks[v].k0;
        }
    const v256 pr = v256_row16(ublock_llk_p[0][R & 7]), zero = v256_zero();
    for (int v = 0; v < nv; v++) {
        ub_ksy_step(&ks[v], R, 1);
        UL_FN(yload128)(src[2 * v], src[2 * v + 1], 0, &a[v], &b[v]);
        a[v] = v256_xor(a[v], v256_shuf8(ks[v].k0, pr));
        b[v] = v256_xor(b[v], v256_shuf8(ks[v].k1, pr));
    }
    for (unsigned i = R; i-- > 0;) { /* public round index */
        const v256 p = v256_row16(ublock_llk_p[0][i & 7]), psw = v256_row16(UL_FN(ks_psw)[i & 7]);
        for (int v = 0; v < nv; v++) {
            volatile v256 *w = kr[v];
            k0[v] = v256_shuf8(kr[v][i], p);
            k1[v] = i ? v256_shuf8(kr[v][i - 1], psw) : v256_shuf8(kr[v][R], p);
            w[i] = zero; /* its last reader: K2||K3 of round i + 1 came before */
            if (!i)
                w[R] = zero;
        }
        UL_FN(yround128_inv)(a, b, k0, k1, i & 7, nv, 1, UL_SHALLOW(nv));
    }
    for (int v = 0; v < nv; v++)
        UL_FN(ystore128)(dst[2 * v], dst[2 * v + 1], a[v], b[v]);
}

/* Round i of ks_ydec_b: its round key from kr (converted by the rows of
 * ub_ksy_stepf's frames, sw as yks_keyf), which is then overwritten. */
UB_KERNEL void UL_FN(ks_ydec_b_round)(v256 *a, v256 *b, v256 (*kr)[48], int nv, unsigned i, int sw)
{
    const v256 p = v256_row16(ublock_llk_p[0][i & 7]), ps = v256_row16(ublock_llk_p[1][i & 7]);
    const v256 zero = v256_zero();
    v256 k0[UL_YV(UL_G128)], k1[UL_YV(UL_G128)];
    for (int v = 0; v < nv; v++) {
        volatile v256 *w = kr[v];
        k0[v] = v256_shuf8(kr[v][2 * i], sw ? ps : p);
        k1[v] = v256_shuf8(kr[v][2 * i + 1], sw ? p : ps);
        w[2 * i] = zero;
        w[2 * i + 1] = zero;
    }
    UL_FN(yround128_inv)(a, b, k0, k1, i & 7, nv, 1, UL_SHALLOW(nv));
}

/* uBlock-128/256 (ks_ydec_b): both halves kept, the schedule in
 * ub_ksy_stepf's frames, two rounds a pass. */
UB_KERNEL void UL_FN(ks_ydec_b)(const uint8_t *const *key, const uint8_t *const *src,
                                uint8_t *const *dst, int nb)
{
    enum { R = 24 };
    const int nv = UL_YV(nb);
    v256 kr[UL_YV(UL_G128)][48]; /* round r's halves at [2r], [2r + 1], r < R */
    v256 a[UL_YV(UL_G128)], b[UL_YV(UL_G128)];
    ub_ksy ks[UL_YV(UL_G128)];
    for (int v = 0; v < nv; v++) {
        ub_ksy_init(&ks[v], KUAI_UBLOCK_128_256, key[2 * v], key[2 * v + 1], 0);
        ub_ksy_frames(&ks[v]);
        kr[v][0] = ks[v].k0;
        kr[v][1] = ks[v].k1;
    }
    for (unsigned r = 1; r < R; r += 2) /* public r */
        for (int v = 0; v < nv; v++) {
            ub_ksy_stepf(&ks[v], r, 0, 0, 0);
            kr[v][2 * r] = ks[v].k0;
            kr[v][2 * r + 1] = ks[v].k1;
            ub_ksy_stepf(&ks[v], r + 1, 1, 0, 0);
            if (r + 1 < R) {
                kr[v][2 * r + 2] = ks[v].k0;
                kr[v][2 * r + 3] = ks[v].k1;
            }
        }
    const v256 pr = v256_row16(ublock_llk_p[0][R & 7]), prs = v256_row16(ublock_llk_p[1][R & 7]);
    for (int v = 0; v < nv; v++) { /* round R's key (R even: K0 swapped) */
        UL_FN(yload128)(src[2 * v], src[2 * v + 1], 0, &a[v], &b[v]);
        a[v] = v256_xor(a[v], v256_shuf8(ks[v].k0, prs));
        b[v] = v256_xor(b[v], v256_shuf8(ks[v].k1, pr));
    }
    for (unsigned i = R; i > 0; i -= 2) { /* rounds i - 1 (odd), i - 2 (even) */
        UL_FN(ks_ydec_b_round)(a, b, kr, nv, i - 1, 0);
        UL_FN(ks_ydec_b_round)(a, b, kr, nv, i - 2, 1);
    }
    for (int v = 0; v < nv; v++)
        UL_FN(ystore128)(dst[2 * v], dst[2 * v + 1], a[v], b[v]);
}

#ifdef UL_Z
/*
 * ks_ydec_a and ks_ydec_b for four keys' blocks, one each, on zmm: the
 * four schedules side by side in one zmm (ub_ksz), the blocks in
 * zgroup128's form, the round keys kept raw and overwritten as the rounds
 * read them, as there. Measured as zks_fused_mk: 388-397 -> 322-332
 * cycles (128/128), 433-436 -> 358-393 (128/256).
 */
UB_KERNEL void UL_FN(ks_zdec_a)(const uint8_t *const *key, const uint8_t *const *src,
                                uint8_t *const *dst)
{
    enum { R = 16 };
    v512 kr[R + 1]; /* K0||K1 of rounds 0..R - 1, K2||K3 of round 0 */
    v512 a, b, k0, k1;
    ub_ksz ks;
    ub_ksz_init(&ks, KUAI_UBLOCK_128_128, key);
    kr[0] = ks.k0;
    kr[R] = ks.k1;
    for (unsigned r = 1; r < R; r++) {
        ub_ksz_step(&ks, r, 1);
        kr[r] = ks.k0;
    }
    ub_ksz_step(&ks, R, 1);
    const v512 pr = v512_row16(ublock_llk_p[0][R & 7]), zero = v512_zero();
    UL_FN(zsplit128)(UL_FN(zload4)(src, UL_FN(zcontig)(src)), &a, &b);
    a = v512_xor(a, v512_shuf8(ks.k0, pr));
    b = v512_xor(b, v512_shuf8(ks.k1, pr));
    volatile v512 *w = kr;
    for (unsigned i = R; i-- > 0;) { /* public round index */
        const v512 p = v512_row16(ublock_llk_p[0][i & 7]), psw = v512_row16(UL_FN(ks_psw)[i & 7]);
        k0 = v512_shuf8(kr[i], p);
        k1 = i ? v512_shuf8(kr[i - 1], psw) : v512_shuf8(kr[R], p);
        w[i] = zero; /* its last reader: K2||K3 of round i + 1 came before */
        if (!i)
            w[R] = zero;
        UL_FN(zround128_inv)(&a, &b, &k0, &k1, i & 7, 1, 0, UL_SHALLOW(1));
    }
    UL_FN(zstore4)(dst, UL_FN(zmerge128)(a, b), UL_FN(zcontig)((const uint8_t *const *)dst));
}

UB_KERNEL void UL_FN(ks_zdec_b_round)(v512 *a, v512 *b, v512 *kr, unsigned i, int sw)
{
    const v512 p = v512_row16(ublock_llk_p[0][i & 7]), ps = v512_row16(ublock_llk_p[1][i & 7]);
    volatile v512 *w = kr;
    v512 k0 = v512_shuf8(kr[2 * i], sw ? ps : p);
    v512 k1 = v512_shuf8(kr[2 * i + 1], sw ? p : ps);
    w[2 * i] = v512_zero();
    w[2 * i + 1] = v512_zero();
    UL_FN(zround128_inv)(a, b, &k0, &k1, i & 7, 1, 0, UL_SHALLOW(1));
}

UB_KERNEL void UL_FN(ks_zdec_b)(const uint8_t *const *key, const uint8_t *const *src,
                                uint8_t *const *dst)
{
    enum { R = 24 };
    v512 kr[48]; /* round r's halves at [2r], [2r + 1], r < R */
    v512 a, b;
    ub_ksz ks;
    ub_ksz_init(&ks, KUAI_UBLOCK_128_256, key);
    ub_ksz_frames(&ks);
    kr[0] = ks.k0;
    kr[1] = ks.k1;
    for (unsigned r = 1; r < R; r += 2) { /* public r */
        ub_ksz_stepf(&ks, r, 0, 0, 0);
        kr[2 * r] = ks.k0;
        kr[2 * r + 1] = ks.k1;
        ub_ksz_stepf(&ks, r + 1, 1, 0, 0);
        if (r + 1 < R) {
            kr[2 * r + 2] = ks.k0;
            kr[2 * r + 3] = ks.k1;
        }
    }
    /* round R's key (R even: K0 swapped) */
    const v512 pr = v512_row16(ublock_llk_p[0][R & 7]), prs = v512_row16(ublock_llk_p[1][R & 7]);
    UL_FN(zsplit128)(UL_FN(zload4)(src, UL_FN(zcontig)(src)), &a, &b);
    a = v512_xor(a, v512_shuf8(ks.k0, prs));
    b = v512_xor(b, v512_shuf8(ks.k1, pr));
    for (unsigned i = R; i > 0; i -= 2) { /* rounds i - 1 (odd), i - 2 (even) */
        UL_FN(ks_zdec_b_round)(&a, &b, kr, i - 1, 0);
        UL_FN(ks_zdec_b_round)(&a, &b, kr, i - 2, 1);
    }
    UL_FN(zstore4)(dst, UL_FN(zmerge128)(a, b), UL_FN(zcontig)((const uint8_t *const *)dst));
}
#endif

/*
 * Decryption of 2 uBlock-256/256 keys with one block each, block j and
 * key j in lane j (ygroup256's form), the two schedules side by side in
 * ymm, as ks_ydec_a: the round keys kept raw and overwritten as the rounds
 * read them. Of a round's K0..K3 only K0 and K1 are kept: K2 is the
 * earlier K1 through PK3's second half, K3 the earlier K0 through its
 * first (ublock_ks_step.h), one pshufb each with the conversion
 * composed in, so half the stores.
 */
UB_KERNEL void UL_FN(ks_ydec_c)(const uint8_t *const *key, const uint8_t *const *src,
                                uint8_t *const *dst)
{
    enum { R = 24 };
    v256 kr[R + 1][2]; /* K0, K1 of rounds 0..R - 1, then K2, K3 of round 0 */
    ub_ksy ks;
    ub_ksy_init(&ks, KUAI_UBLOCK_256_256, key[0], key[1], 0);
    kr[0][0] = ks.k0;
    kr[0][1] = ks.k1;
    kr[R][0] = ks.k2;
    kr[R][1] = ks.k3;
    for (unsigned r = 1; r < R; r++) {
        ub_ksy_step(&ks, r, 1);
        kr[r][0] = ks.k0;
        kr[r][1] = ks.k1;
    }
    ub_ksy_step(&ks, R, 1);
    const v256 qy = v256_row16(ublock_llk_p[0][0]), zero = v256_zero();
    const v256 y0 = v256_shuf8(qy, v256_row16(ub256_tab[UB256_TO_L]));
    const v256 y1 = v256_shuf8(qy, v256_row16(ub256_tab[UB256_TO_L] + 16));
    /* K2 = PK3's K1 half of the earlier K1, K3 = PK3's K0 half of the
     * earlier K0, each then converted */
    const v256 z2 = v256_shuf8(ks.pk1, y0), z3 = v256_shuf8(ks.pk0, y1);
#ifdef UL_Z
    /* the pair on zmm (zgroup256's form and round256_prev), each round
     * key into it by one vpermt2b (zks_fused256's): Xeon (Emerald
     * Rapids), one-shot decryption of one block under each of 2 keys
     * 469 -> 452 TSC cycles */
    const v512 py = UL_FN(zks_pick2)(_mm256_castsi256_si128(y0), _mm256_castsi256_si128(y1));
    const v512 pz = UL_FN(zks_pick2)(_mm256_castsi256_si128(z2), _mm256_castsi256_si128(z3));
    v512 za, zb;
    UL_FN(zload2x256)(src[0], src[1], &za, &zb);
    za = v512_xor(za, UL_FN(zks_key2)(ks.k0, py, ks.k1));
    zb = v512_xor(zb, UL_FN(zks_key2)(ks.k2, py, ks.k3));
    volatile v256 *wz = kr[0];
    for (unsigned i = R; i-- > 0;) {
        const unsigned j = i ? i - 1 : R;
        const v512 k0 = UL_FN(zks_key2)(kr[i][0], py, kr[i][1]);
        const v512 k1 =
            i ? UL_FN(zks_key2)(kr[j][1], pz, kr[j][0]) : UL_FN(zks_key2)(kr[j][0], py, kr[j][1]);
        wz[2 * i] = zero;
        wz[2 * i + 1] = zero;
        if (!i) {
            wz[2 * R] = zero;
            wz[2 * R + 1] = zero;
        }
        UL_FN(zround256_prev)(&za, &zb, k0, k1);
    }
    UL_FN(zstore2x256)(dst[0], dst[1], za, zb);
#else
    UL_HY a = UL_FN(yload256v)(UL_FN(yload2)(src[0], src[1], 0));
    UL_HY b = UL_FN(yload256v)(UL_FN(yload2)(src[0] + 16, src[1] + 16, 0));
    a = UL_FN(yxor256)(a, UL_FN(ymk256)(v256_shuf8(ks.k0, y0), v256_shuf8(ks.k1, y1)));
    b = UL_FN(yxor256)(b, UL_FN(ymk256)(v256_shuf8(ks.k2, y0), v256_shuf8(ks.k3, y1)));
    volatile v256 *w = kr[0];
    for (unsigned i = R; i-- > 0;) {      /* public round index */
        const unsigned j = i ? i - 1 : R; /* K2, K3's source */
        UL_HY k0 = UL_FN(ymk256)(v256_shuf8(kr[i][0], y0), v256_shuf8(kr[i][1], y1));
        UL_HY k1 = i ? UL_FN(ymk256)(v256_shuf8(kr[j][1], z2), v256_shuf8(kr[j][0], z3))
                     : UL_FN(ymk256)(v256_shuf8(kr[j][0], y0), v256_shuf8(kr[j][1], y1));
        w[2 * i] = zero; /* round i is kr[i]'s last reader */
        w[2 * i + 1] = zero;
        if (!i) {
            w[2 * R] = zero;
            w[2 * R + 1] = zero;
        }
        UL_FN(yround256_inv)(&a, &b, k0, k1, 0);
    }
    UL_FN(ystore2)(dst[0], dst[1], UL_FN(ymerge256)(a));
    UL_FN(ystore2)(dst[0] + 16, dst[1] + 16, UL_FN(ymerge256)(b));
#endif
}

typedef void (*UL_FN(ksyd_fn))(const uint8_t *const *, const uint8_t *const *, uint8_t *const *);
static KUAI_HOT_ALIGN void UL_FN(ksyd_a2)(const uint8_t *const *key, const uint8_t *const *src,
                                          uint8_t *const *dst)
{
    UL_FN(ks_ydec_a)(key, src, dst, 2);
}
static KUAI_HOT_ALIGN void UL_FN(ksyd_a4)(const uint8_t *const *key, const uint8_t *const *src,
                                          uint8_t *const *dst)
{
#ifdef UL_Z
    UL_FN(ks_zdec_a)(key, src, dst);
#else
    UL_FN(ks_ydec_a)(key, src, dst, 4);
#endif
}
static KUAI_HOT_ALIGN void UL_FN(ksyd_b2)(const uint8_t *const *key, const uint8_t *const *src,
                                          uint8_t *const *dst)
{
    UL_FN(ks_ydec_b)(key, src, dst, 2);
}
static KUAI_HOT_ALIGN void UL_FN(ksyd_b4)(const uint8_t *const *key, const uint8_t *const *src,
                                          uint8_t *const *dst)
{
#ifdef UL_Z
    UL_FN(ks_zdec_b)(key, src, dst);
#else
    UL_FN(ks_ydec_b)(key, src, dst, 4);
#endif
}
static KUAI_HOT_ALIGN void UL_FN(ksyd_c2)(const uint8_t *const *key, const uint8_t *const *src,
                                          uint8_t *const *dst)
{
    UL_FN(ks_ydec_c)(key, src, dst);
}
#endif

/* One function per (member, group size, direction, key form): every
 * branch above folds away, the state stays in registers. wipe: kc is read
 * by this call only, and its decryption may zero each round key as it
 * reads it (ydec128's and dec128's wipe); returns whether it did, so that the caller's
 * kuai_wipe of kc can be left out. */
typedef int (*UL_FN(ks_fn))(const UL_FN(kcu) *, const uint8_t *const *, uint8_t *const *, int);
#define UL_KS_KERNEL(name, rounds, bs, nb, enc, mk)                                                \
    static KUAI_HOT_ALIGN int UL_FN(name)(const UL_FN(kcu) * kc, const uint8_t *const *src,        \
                                          uint8_t *const *dst, int wipe)                           \
    {                                                                                              \
        return UL_FN(ks_group)(kc, rounds, bs, src, dst, nb, enc, mk, wipe);                       \
    }
/* Several keys' blocks are decrypted here only: their encryption of one
 * block each takes ks_fused's kernels (oneshot's fused table), which
 * store no schedule, so there is no multi-key encryption kernel here. */
#define UL_KS_KERNELS(m, rounds, bs)                                                               \
    UL_KS_KERNEL(ks##m##_d1, rounds, bs, 1, 0, 0)                                                  \
    UL_KS_KERNEL(ks##m##_e1, rounds, bs, 1, 1, 0)                                                  \
    UL_KS_KERNEL(ks##m##_d2, rounds, bs, 2, 0, 0)                                                  \
    UL_KS_KERNEL(ks##m##_e2, rounds, bs, 2, 1, 0)                                                  \
    UL_KS_KERNEL(ks##m##_md2, rounds, bs, 2, 0, 1)
#define UL_KS_KERNELS4(m, rounds)                                                                  \
    UL_KS_KERNELS(m, rounds, 16)                                                                   \
    UL_KS_KERNEL(ks##m##_d3, rounds, 16, 3, 0, 0)                                                  \
    UL_KS_KERNEL(ks##m##_e3, rounds, 16, 3, 1, 0)                                                  \
    UL_KS_KERNEL(ks##m##_md3, rounds, 16, 3, 0, 1)                                                 \
    UL_KS_KERNEL(ks##m##_d4, rounds, 16, 4, 0, 0)                                                  \
    UL_KS_KERNEL(ks##m##_e4, rounds, 16, 4, 1, 0)                                                  \
    UL_KS_KERNEL(ks##m##_md4, rounds, 16, 4, 0, 1)
UL_KS_KERNELS4(a, 16)
UL_KS_KERNELS4(b, 24)
UL_KS_KERNELS(c, 24, 32)
#undef UL_KS_KERNEL
#undef UL_KS_KERNELS
#undef UL_KS_KERNELS4

typedef void (*UL_FN(ksf_fn))(const uint8_t *const *, const uint8_t *const *, uint8_t *const *);
#define UL_KSF_KERNEL(name, c, bs, nb, mk, yk)                                                     \
    static KUAI_HOT_ALIGN void UL_FN(name)(const uint8_t *const *key, const uint8_t *const *src,   \
                                           uint8_t *const *dst)                                    \
    {                                                                                              \
        UL_FN(ks_fused)(c, key, bs, src, dst, nb, mk, yk);                                         \
    }
/* The one-key kernels on ymm (yk) exist only with UL_Y: without it
 * ks_fused ignores yk, and oneshot's table has no ymm row. */
#ifdef UL_Y
#define UL_KSF_YKERNEL(name, c, bs, nb) UL_KSF_KERNEL(name, c, bs, nb, 0, 1)
#else
#define UL_KSF_YKERNEL(name, c, bs, nb)
#endif
#define UL_KSF_KERNELS4(m, c)                                                                      \
    UL_KSF_KERNEL(ksf##m##_1, c, 16, 1, 0, 0)                                                      \
    UL_KSF_KERNEL(ksf##m##_2, c, 16, 2, 0, 0)                                                      \
    UL_KSF_KERNEL(ksf##m##_3, c, 16, 3, 0, 0)                                                      \
    UL_KSF_KERNEL(ksf##m##_4, c, 16, 4, 0, 0)                                                      \
    UL_KSF_YKERNEL(ksf##m##_y2, c, 16, 2)                                                          \
    UL_KSF_YKERNEL(ksf##m##_y4, c, 16, 4)                                                          \
    UL_KSF_KERNEL(ksf##m##_m2, c, 16, 2, 1, 0)                                                     \
    UL_KSF_KERNEL(ksf##m##_m3, c, 16, 3, 1, 0)                                                     \
    UL_KSF_KERNEL(ksf##m##_m4, c, 16, 4, 1, 0)
UL_KSF_KERNELS4(a, KUAI_UBLOCK_128_128)
UL_KSF_KERNELS4(b, KUAI_UBLOCK_128_256)
UL_KSF_KERNEL(ksfc_1, KUAI_UBLOCK_256_256, 32, 1, 0, 0)
UL_KSF_KERNEL(ksfc_2, KUAI_UBLOCK_256_256, 32, 2, 0, 0)
UL_KSF_YKERNEL(ksfc_y2, KUAI_UBLOCK_256_256, 32, 2)
UL_KSF_KERNEL(ksfc_m2, KUAI_UBLOCK_256_256, 32, 2, 1, 0)
#ifdef UL_Y
#define UL_KSF_PKERNEL(name, c)                                                                    \
    static KUAI_HOT_ALIGN void UL_FN(name)(const uint8_t *const *key, const uint8_t *const *src,   \
                                           uint8_t *const *dst)                                    \
    {                                                                                              \
        UL_FN(ks_fused_y)(c, key, src, dst, 4, 1, 1, 1);                                           \
    }
UL_KSF_PKERNEL(ksfa_p4, KUAI_UBLOCK_128_128)
UL_KSF_PKERNEL(ksfb_p4, KUAI_UBLOCK_128_256)
#undef UL_KSF_PKERNEL
#endif
#undef UL_KSF_KERNEL
#undef UL_KSF_YKERNEL
#undef UL_KSF_KERNELS4

/* The schedule per member, each with its constant member. */
static KUAI_HOT_ALIGN void UL_FN(ks_ll_a)(UL_FN(kcu) * kc, const uint8_t *key)
{
    UL_FN(ks_ll)(kc, KUAI_UBLOCK_128_128, key);
}
static KUAI_HOT_ALIGN void UL_FN(ks_ll_b)(UL_FN(kcu) * kc, const uint8_t *key)
{
    UL_FN(ks_ll)(kc, KUAI_UBLOCK_128_256, key);
}
static KUAI_HOT_ALIGN void UL_FN(ks_ll_c)(UL_FN(kcu) * kc, const uint8_t *key)
{
    UL_FN(ks_ll)(kc, KUAI_UBLOCK_256_256, key);
}
/*
 * The stack the kernels below oneshot's frame used, overwritten once they
 * have returned (kuai_wipe_stack, src/wipe.h): their spills are copies of
 * round keys no C code can reach. tests/test_oneshot.c searched the stack
 * after every path (1-1,000 blocks; 1-4 keys): ssse3's kernels had
 * left up to 30 pieces of the schedule (the deepest 15 KiB below the
 * caller, in the kernels' frames under this one's 6.6 KiB) and needed 512
 * bytes overwritten; avx2's one (3 blocks, 128/128) needed 128. The
 * including file may set its own size (UL_ONESHOT_WIPE: avx512's 128,
 * ublock_avx512.c); the others take 512 (NEON's, LSX's, LASX's: make
 * test-cross runs the search there). Cost: one-shot calls 0.99-1.04x the
 * TSC cycles on avx2 with 128, 0.99-1.09x on ssse3 with 512 (Zen 3; avx2
 * with 256 took 1.05-1.19x, so the size is the least the search needs).
 * In the ISA shim's test build, whose stand-ins for the wide instructions
 * spill far more (pieces were found 22 KiB below the caller), all that
 * kuai_wipe_stack reaches there (32 KiB).
 */
#if defined(KUAI_ISA_SHIM_H)
#undef UL_ONESHOT_WIPE
#define UL_ONESHOT_WIPE KUAI_WIPE_STACK_MAX
#undef UL_ONESHOT_WIPE_DEEP
#elif !defined(UL_ONESHOT_WIPE)
#define UL_ONESHOT_WIPE 512
#endif
/* The larger overwrite some paths need (the including file's
 * UL_ONESHOT_WIPE_DEEP): after one key's blocks in more than one group
 * (the group kernels side by side), and after every call where ymm is
 * split (the xmm forms' frames) */
#ifndef UL_ONESHOT_WIPE_DEEP
#define UL_ONESHOT_WIPE_DEEP UL_ONESHOT_WIPE
#endif
#ifdef UL_Y
#define UL_WIPE_DEEP(groups) ((groups) || !UL_YFULL)
#else
#define UL_WIPE_DEEP(groups) (groups)
#endif
/* The overwrite in 32-byte stores where the vocabulary has them (UL_Y):
 * kuai_wipe_stack's 16-byte ones, after a decryption whose rounds are
 * still running, had cost more (Zen 4: EPYC family 25 model 17, avx512,
 * scripts/bench-ab, TSC cycles, both link orders: one-shot calls
 * 0.93-1.00x, 128/128's one key's 4 blocks 217 -> 210 and 218 -> 211
 * encryption, 256/256's 2 blocks 552 -> 546 and 566 -> 544 decryption;
 * 64-byte stores measured no better; avx2, whose overwrite is 128 bytes,
 * level). The area unaligned, so that no realignment of the frame leaves
 * bytes below the caller unwritten. */
#if defined(UL_Y) && !defined(KUAI_ISA_SHIM_H)
static __attribute__((noinline)) void UL_FN(wipe_kernels)(void)
{
    unsigned char area[UL_ONESHOT_WIPE];
    for (size_t o = 0; o < sizeof area; o += 32) {
        v256_storeu(area + o, v256_zero());
        __asm__ volatile("" : : "r"(area) : "memory");
    }
}
#define UL_WIPE_SHORT() UL_FN(wipe_kernels)()
#else
#define UL_WIPE_SHORT() kuai_wipe_stack(UL_ONESHOT_WIPE)
#endif
#define UL_WIPE_KERNELS(groups)                                                                    \
    do {                                                                                           \
        if (UL_ONESHOT_WIPE_DEEP > UL_ONESHOT_WIPE && UL_WIPE_DEEP(groups))                        \
            kuai_wipe_stack(UL_ONESHOT_WIPE_DEEP);                                                 \
        else                                                                                       \
            UL_WIPE_SHORT();                                                                       \
    } while (0)
#ifdef UL_Y
/* Three uBlock-128 keys' blocks (m: 0 for 128/128, 1 for 128/256) as
 * four, the fourth lane a copy of the first key and block, its output to
 * spare (a block of the caller's output, zeroed after): the four-lane
 * kernels took less time than the three-lane ones, and left no copy of a
 * round key on the stack where the three-lane ones needed 256 bytes
 * overwritten (Zen 4, avx2 and avx512; docs/performance.md). A function
 * of its own, so that oneshot's frame stays as it was. */
static __attribute__((noinline)) void UL_FN(oneshot3)(int m, int enc, const uint8_t *const *keys,
                                                      const uint8_t *const *in, uint8_t *const *out)
{
    uint8_t spare[16];
    const uint8_t *const k4[4] = {keys[0], keys[1], keys[2], keys[0]};
    const uint8_t *const i4[4] = {in[0], in[1], in[2], in[0]};
    uint8_t *const o4[4] = {out[0], out[1], out[2], spare};
    if (!enc)
        (m ? UL_FN(ksyd_b4) : UL_FN(ksyd_a4))(k4, i4, o4);
    else if (UL_PACKED4)
        (m ? UL_FN(ksfb_p4) : UL_FN(ksfa_p4))(k4, i4, o4);
    else
        (m ? UL_FN(ksfb_m4) : UL_FN(ksfa_m4))(k4, i4, o4);
    kuai_wipe(spare, sizeof spare);
}
#endif
static void UL_FN(oneshot)(kuai_cipher c, const uint8_t *const *keys, const uint8_t *const *in,
                           uint8_t *const *out, size_t n, size_t nblocks, int enc)
{
    /* one key's groups [member][enc][group size], several keys' groups of
     * one block each [member][group size] (decryption only: see
     * UL_KS_KERNELS); uBlock-256/256 groups hold 2 blocks */
#define UL_KS_ROW(m)                                                                               \
    {0, UL_FN(ks##m##_d1), UL_FN(ks##m##_d2), UL_FN(ks##m##_d3), UL_FN(ks##m##_d4)},               \
    {                                                                                              \
        0, UL_FN(ks##m##_e1), UL_FN(ks##m##_e2), UL_FN(ks##m##_e3), UL_FN(ks##m##_e4)              \
    }
    static const UL_FN(ks_fn) fns[3][2][5] = {
        {UL_KS_ROW(a)},
        {UL_KS_ROW(b)},
        {{0, UL_FN(ksc_d1), UL_FN(ksc_d2), 0, 0}, {0, UL_FN(ksc_e1), UL_FN(ksc_e2), 0, 0}}};
#undef UL_KS_ROW
    static const UL_FN(ks_fn)
        mkd[3][5] = {{0, UL_FN(ksa_d1), UL_FN(ksa_md2), UL_FN(ksa_md3), UL_FN(ksa_md4)},
                     {0, UL_FN(ksb_d1), UL_FN(ksb_md2), UL_FN(ksb_md3), UL_FN(ksb_md4)},
                     {0, UL_FN(ksc_d1), UL_FN(ksc_md2), 0, 0}};
    static void (*const ks[3])(UL_FN(kcu) *, const uint8_t *) = {UL_FN(ks_ll_a), UL_FN(ks_ll_b),
                                                                 UL_FN(ks_ll_c)};
    const uint8_t *src[UL_G128];
    uint8_t *dst[UL_G128];
    /* [member][one key (xmm where UL_YFULL is 0), several keys, one key
     * (ymm: UL_Y only; without it the row is never read and names the xmm
     * kernels)][group size] */
#ifdef UL_Y
#define UL_KSF_Y(m, nb) UL_FN(ksf##m##_y##nb)
#else
#define UL_KSF_Y(m, nb) UL_FN(ksf##m##_##nb)
#endif
    static const UL_FN(ksf_fn)
        fused[3][3][5] = {{{0, UL_FN(ksfa_1), UL_FN(ksfa_2), UL_FN(ksfa_3), UL_FN(ksfa_4)},
                           {0, UL_FN(ksfa_1), UL_FN(ksfa_m2), UL_FN(ksfa_m3), UL_FN(ksfa_m4)},
                           {0, UL_FN(ksfa_1), UL_KSF_Y(a, 2), UL_FN(ksfa_3), UL_KSF_Y(a, 4)}},
                          {{0, UL_FN(ksfb_1), UL_FN(ksfb_2), UL_FN(ksfb_3), UL_FN(ksfb_4)},
                           {0, UL_FN(ksfb_1), UL_FN(ksfb_m2), UL_FN(ksfb_m3), UL_FN(ksfb_m4)},
                           {0, UL_FN(ksfb_1), UL_KSF_Y(b, 2), UL_FN(ksfb_3), UL_KSF_Y(b, 4)}},
                          {{0, UL_FN(ksfc_1), UL_FN(ksfc_2), 0, 0},
                           {0, UL_FN(ksfc_1), UL_FN(ksfc_m2), 0, 0},
                           {0, UL_FN(ksfc_1), UL_KSF_Y(c, 2), 0, 0}}};
#undef UL_KSF_Y
    const int m = c == KUAI_UBLOCK_128_128 ? 0 : c == KUAI_UBLOCK_128_256 ? 1 : 2;
    const size_t bs = m == 2 ? 32 : 16, g = bs == 16 ? UL_G128 : UL_G256;
    if (enc && nblocks && nblocks <= g) {
        /* round keys made between the rounds: a group of keys with one
         * block each (the callers' arrays, a group at a time), or one key
         * with its blocks */
        if (nblocks == 1) {
            for (size_t i = 0, w; i < n; i += w) {
                w = n - i < g ? n - i : g;
#ifdef UL_Y
                if (w == 3 && m < 2) {
                    UL_FN(oneshot3)(m, 1, keys + i, in + i, out + i);
                    continue;
                }
                if (w == 4 && m < 2 && UL_PACKED4) {
                    (m ? UL_FN(ksfb_p4) : UL_FN(ksfa_p4))(keys + i, in + i, out + i);
                    continue;
                }
#endif
                fused[m][1][w](keys + i, in + i, out + i);
            }
            UL_WIPE_KERNELS(0);
            return;
        }
#ifdef UL_Y
        const int yrow = UL_YFULL ? 2 : 0;
#else
        const int yrow = 0;
#endif
        for (size_t i = 0; i < n; i++) {
            for (size_t j = 0; j < nblocks; j++) {
                src[j] = in[i] + j * bs;
                dst[j] = out[i] + j * bs;
            }
            fused[m][yrow][nblocks](keys + i, src, dst);
        }
        UL_WIPE_KERNELS(0);
        return;
    }
    const size_t kbytes = (size_t)(m ? 25 : 17) * 2 * bs; /* ks_ll's round keys of one key */
    UL_FN(kcu) kc[UL_G128];
    size_t used = 0;
    /* a group of keys, one block each, per pass (decryption: encryption
     * returned above) */
    if (nblocks == 1) {
        for (size_t i = 0; i < n;) {
            size_t w = n - i < g ? n - i : g;
#ifdef UL_Y
            if (w == 3 && m < 2) {
                UL_FN(oneshot3)(m, 0, keys + i, in + i, out + i);
                i += w;
                continue;
            }
            if (UL_YNB(w)) { /* two keys per ymm: ks_ydec_a, _b, _c */
                static const UL_FN(ksyd_fn) yd[3][2] = {{UL_FN(ksyd_a2), UL_FN(ksyd_a4)},
                                                        {UL_FN(ksyd_b2), UL_FN(ksyd_b4)},
                                                        {UL_FN(ksyd_c2), 0}};
                yd[m][w == 4](keys + i, in + i, out + i);
                i += w;
                continue;
            }
#endif
            for (size_t j = 0; j < w; j++)
                ks[m](&kc[j], keys[i + j]);
            if (!mkd[m][w](kc, in + i, out + i, 1)) /* else zeroed as read */
                used = w > used ? w : used;
            i += w;
        }
    } else { /* one key at a time, its blocks in groups */
        /* one group: the kernel may zero each round key as it reads it, the
         * wipe's stores among the rounds instead of kuai_wipe's after them:
         * with ks_ll in key setup's frames, decryption of one key's 4 blocks
         * on avx2 276 -> 258 and 380 -> 361 TSC cycles (uBlock-128/128 and
         * 128/256; without any wipe 244 and 338, kuai_key_init and
         * kuai_ecb_decrypt 234 and 336; Xeon, Sapphire Rapids, scripts/bench-ab) */
        const int once = nblocks <= g;
        int wiped = 1;
        for (size_t i = 0; i < n; i++) {
            ks[m](&kc[0], keys[i]);
            size_t b = 0;
#ifdef UL_Y
            if (!once) { /* the groups side by side first, as crypt1's */
                const UL_FN(gkey) k = {m < 2 ? (const void *)kc[0].v : NULL, m < 2 ? NULL : kc[0].h,
                                       m ? 24u : 16u};
                const uint8_t *ip = in[i];
                uint8_t *op = out[i];
                size_t r = nblocks;
                while (r > g && UL_FN(g2)(&k, bs, &ip, &op, &r, enc))
                    ;
                b = nblocks - r;
                wiped &= b == 0;
            }
#endif
            while (b < nblocks) {
                size_t w = nblocks - b < g ? nblocks - b : g;
                for (size_t j = 0; j < w; j++) {
                    src[j] = in[i] + (b + j) * bs;
                    dst[j] = out[i] + (b + j) * bs;
                }
                wiped &= fns[m][enc][w](kc, src, dst, once);
                b += w;
            }
        }
        used = !wiped;
    }
    for (size_t j = 0; j < used; j++)
        kuai_wipe(&kc[j], kbytes);
    UL_WIPE_KERNELS(nblocks > g);
}
