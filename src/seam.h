/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The seam between the mode code (written once) and the cipher backends:
 * struct kuai_impl, its families, registration and the registry's calls.
 */
#ifndef KUAI_SEAM_H
#define KUAI_SEAM_H

#include "kuai.h"

#include <stddef.h>
#include <stdint.h>

#define KUAI_ALIGN64 _Alignas(64)
/* A hot function of the short-message path starts on a cache line: on Zen 1
 * the same code moved by unrelated changes elsewhere in the library ran up to
 * 10% slower or faster (key setup + 64 bytes); aligned, its speed no longer
 * depends on what is linked before it. */
#define KUAI_HOT_ALIGN __attribute__((aligned(64)))

/* Scratch a backend's multi-key setup may fill: round keys of up to
 * KUAI_MK_MAX_LANES different keys, in the backend's lane format. */
#define KUAI_MK_BYTES 32768
#define KUAI_MK_MAX_LANES 32
typedef struct kuai_mk {
    KUAI_ALIGN64 unsigned char b[KUAI_MK_BYTES];
} kuai_mk;

/*
 * One backend of one cipher. The mode code calls only these; the backends
 * know nothing of modes, tails, argument checks or threads.
 *
 * Every backend of a cipher stores that cipher's schedule in a form every
 * backend of it reads, at the start of kuai_key.priv_sched (for uBlock:
 * struct ublock_sched, whose raw round keys the nibble key setup leaves
 * to be derived from the low-latency kernel's form that every uBlock key
 * stores), then anything of its own after it. So a key set up with one
 * backend can join a multi-key call run by another.
 */
struct ghash_impl; /* src/ghash/ghash.h */

/*
 * The ciphers one backend table serves: the members of a family differ only
 * in key size, which each hook takes from the key (kuai_key.priv_cipher) or
 * its argument. uBlock's two block sizes are two families: their kernels
 * differ in width, not only in the length of the schedule.
 */
typedef enum kuai_family {
    KUAI_FAMILY_UBLOCK128, /* uBlock-128/128, uBlock-128/256 */
    KUAI_FAMILY_UBLOCK256, /* uBlock-256/256 */
    KUAI_FAMILY_SM4,
    KUAI_FAMILY_AES, /* AES-128, AES-192, AES-256 */
    KUAI_FAMILY_COUNT
} kuai_family;

/* kuai_impl.gcm's entries: a cipher backend's fused GCM kernels, one per
 * GHASH backend it pairs with */
#define KUAI_GCM_FUSED_MAX 2

typedef struct kuai_impl {
    const char *name;
    kuai_family family;
    /* The registry offers a family's usable backends highest first, and
     * kuai_key_init takes the first (src/registry.c). Only the order
     * within a family matters: see the scale in docs/design.md. */
    int priority;
    /* Memory addresses depend on key and data (table lookups): never
     * chosen automatically, from KUAI_BACKEND only with the opt-in. */
    int leaky;
    int (*available)(void);
    /* key length has been checked; k->priv_cipher is set */
    void (*expand)(kuai_key *k, const uint8_t *key);
    /* Optional: two keys of one cipher set up in one pass (k0 != k1,
     * both with priv_cipher set), as expand on each; kuai_key_init_multi
     * pairs its keys for it. NULL: expand one by one. */
    void (*expand2)(kuai_key *k0, kuai_key *k1, const uint8_t *key0, const uint8_t *key1);
    /* Optional: four keys in one pass (k[0..3] distinct), as expand on
     * each; kuai_key_init_multi takes it for each four keys in a row whose
     * structs differ, before pairs. NULL: pairs, or one by one. */
    void (*expand4)(kuai_key *const k[4], const uint8_t *const key[4]);
    /* The bytes of kuai_key.priv_sched (from the start) that expand and
     * every later call with the key may write: what a one-shot call wipes
     * (src/modes/oneshot.c). A whole 8 KiB wipe cost more than key setup
     * and a short message together on AES-NI. 0: all of it (a backend that
     * builds anything lazily, as uBlock's masks). tests/test_oneshot.c
     * checks with a canary that every backend stays inside. */
    size_t sched_bytes;
    /* The stack below a call with the key that the backend's kernels may
     * use (their frames, and the register spills in them that no C code
     * can reach): what a one-shot call on the generic path overwrites once
     * they have returned (src/modes/oneshot.c, src/wipe.h). 0: 4 KiB
     * (KUAI_WIPE_STACK_DEFAULT). tests/test_oneshot.c checks that the
     * overwrite reaches the deepest byte the kernels wrote. */
    size_t stack_bytes;
    void (*enc_blocks)(const kuai_key *k, const uint8_t *in, uint8_t *out, size_t nblocks);
    void (*dec_blocks)(const kuai_key *k, const uint8_t *in, uint8_t *out, size_t nblocks);
    /* Optional fused CTR (NULL: the mode code builds counter blocks and
     * calls enc_blocks). ctr is one block, big-endian, advanced by nblocks. */
    void (*ctr_blocks)(const kuai_key *k, uint8_t *ctr, const uint8_t *in, uint8_t *out,
                       size_t nblocks);
    /* Optional fused CBC encryption (NULL: the mode code chains one
     * enc_blocks call per block). iv is one block, replaced by the last
     * ciphertext block. CBC encryption is bound by the latency of one block,
     * so a backend that keeps the chain in a register and skips a call and
     * two memory round trips per block gets closer to that bound. */
    void (*cbc_enc_blocks)(const kuai_key *k, uint8_t *iv, const uint8_t *in, uint8_t *out,
                           size_t nblocks);
    /* Optional fused CBC decryption (NULL: dec_blocks, then the mode code
     * XORs each chunk with the ciphertext shifted by a block). in == out
     * allowed; iv as for cbc_enc_blocks. A fast kernel that XORs while
     * the blocks are still in registers saves a pass over the data. */
    void (*cbc_dec_blocks)(const kuai_key *k, uint8_t *iv, const uint8_t *in, uint8_t *out,
                           size_t nblocks);
    /* Multi-key: block i of a batch of n <= mk_lanes blocks goes under
     * keys[i]. mk_setup runs once per set of keys, mk_enc/mk_dec once per
     * batch; in and out hold n contiguous blocks (in == out allowed). */
    size_t mk_lanes;
    void (*mk_setup)(kuai_mk *m, const kuai_key *const *keys, size_t n);
    /* The bytes of kuai_mk (from the start) that mk_setup may write: what
     * the mode code wipes afterwards. The whole 32 KiB cost more than the
     * cipher in short multi-key calls. 0 would mean all of it; every
     * backend sets it, and tests/test_modes.c checks that mk_setup stays
     * inside. */
    size_t mk_bytes;
    void (*mk_enc)(const kuai_mk *m, const uint8_t *in, uint8_t *out, size_t n);
    /* Multi-key ECB and CBC decryption: streams of fewer blocks than this
     * (and not taken by mk_short) fill the lanes, a batch of blocks of
     * several streams at a time, each batch paying mk_setup's lane-key
     * forms; longer streams go one by one through the single-key calls.
     * 0: mk_lanes. 1: every stream alone, for a backend whose single-key
     * calls beat the lanes however short the streams: AES-NI, whose one
     * block costs its latency alone (4 keys with one block each cost
     * ~1,000 cycles of lane-key copies and wipe beyond the four key
     * setups), the bitsliced AES and uBlock kernels, whose per-lane masks
     * cost more than the single-key calls' whole work (measured per
     * backend, docs/performance.md). */
    size_t mk_slots_blocks;
    void (*mk_dec)(const kuai_mk *m, const uint8_t *in, uint8_t *out, size_t n);
    /* Optional: a narrower multi-key kernel of the same ISA family (e.g. the
     * 128-bit one under AVX2) for batches of at most its mk_lanes blocks:
     * a wide bitsliced kernel costs the same for 4 blocks as for 32. */
    const struct kuai_impl *mk_narrow;
    /* CBC encryption of several streams (kuai_cbc_encrypt_multi): the
     * streams left after whole wide passes go to mk_narrow when at most
     * this many (0: mk_narrow's mk_lanes), measured per backend (the
     * narrow kernel runs them in groups, the wide one costs its full
     * pass per block whatever it holds). */
    size_t mk_cbc_narrow;
    /* CBC encryption of several streams: streams of fewer blocks than this
     * go to mk_narrow's batches where the backend has one, else one at a
     * time through the single-key calls, since the wide kernel's mk_setup
     * (and the wipe of what it wrote) costs more than its lanes save on
     * them (0: no limit). Measured per backend (docs/performance.md). */
    size_t mk_cbc_wide_blocks;
    /* CBC encryption of several streams: a batch (up to mk_lanes streams)
     * of fewer blocks than this in all (streams x blocks each) goes one
     * stream at a time, narrow kernel or not: the lanes' setup and passes
     * cost more than few blocks save (0: no limit). */
    size_t mk_cbc_wide_total;
    /* Optional fused multi-key CBC encryption (the cipher's blocks): n <=
     * mk_lanes streams of nblocks blocks each after mk_setup; stream i
     * reads in[i] and writes out[i] (in[i] == out[i] allowed), its chain
     * is ivs + bs i (bs: block size) and is left as its last ciphertext block. A kernel
     * that keeps the n chains in registers skips the per-block trip
     * through a buffer that would cost as much as a fast cipher. */
    void (*mk_cbc_enc)(const kuai_mk *m, uint8_t *ivs, const uint8_t *const *in,
                       uint8_t *const *out, size_t n, size_t nblocks);
    /* Optional multi-key short path (src/modes/multi.c: ECB, CBC
     * decryption), used after every check when each stream has fewer than
     * mk_short_blocks blocks (at most the backend's measured crossover to
     * its wide kernel): n streams of nblocks blocks each, stream i from in[i] to
     * out[i] (in[i] == out[i] allowed) under keys[i], encrypted (enc) or
     * decrypted. ivs NULL: ECB; else CBC decryption (enc 0), ivs[i] one
     * block, left as stream i's last ciphertext block. keys[i] may have
     * been set up by another backend of the family: read only the raw
     * schedule every backend stores first (and what a schedule marks as
     * stored beside it, e.g. uBlock's UBLOCK_LLK_*). It runs on the callers' buffers
     * from the stored schedules: no kuai_mk, no slot copies and nothing to
     * wipe, which for a few short streams cost more than the cipher. */
    size_t mk_short_blocks;
    /* ... and at most this many streams (0: any number), where the lanes
     * win beyond (measured per backend). */
    size_t mk_short_streams;
    void (*mk_short)(const kuai_key *const *keys, uint8_t *const *ivs, const uint8_t *const *in,
                     uint8_t *const *out, size_t n, size_t nblocks, int enc);
    /* Optional one-shot ECB (src/modes/oneshot.c; NULL: key setup into a
     * kuai_key, then ECB): n streams, stream i nblocks blocks from in[i] to
     * out[i] (in[i] == out[i] allowed) under the raw key keys[i] of
     * kuai_key_size(c) bytes. Everything is checked; nothing may be kept.
     * A backend whose short path reads only a small schedule skips the 8 KiB
     * key and its wipe, and runs one block of several keys as one pass. */
    void (*oneshot)(kuai_cipher c, const uint8_t *const *keys, const uint8_t *const *in,
                    uint8_t *const *out, size_t n, size_t nblocks, int enc);
    /* The most blocks a stream oneshot takes (0: src/modes/oneshot.c's
     * 32); longer calls take key setup and the backend's ECB kernels. */
    size_t oneshot_blocks;
    /* Optional fused GCM over whole blocks, per GHASH backend (blocks NULL
     * or no entry for the context's GHASH backend: the mode code runs CTR,
     * then GHASH, a chunk at a time): CTR with the low 32 bits of ctr
     * counting (the caller keeps them from wrapping and never passes a
     * key-derived counter) and GHASH of the ciphertext into y, in one pass,
     * so the AES and carry-less multiply units can work side by side. hkey
     * is the key material of the entry's GHASH backend, the only one its
     * kernel reads (one entry per register width: a context's GHASH
     * backend is the best usable one, which differs by CPU); y as in
     * src/ghash/ghash.h. in == out allowed. */
    struct kuai_gcm_fused {
        const struct ghash_impl *ghash;
        void (*blocks)(const kuai_key *k, const unsigned char *hkey, uint8_t y[16], uint8_t *ctr,
                       const uint8_t *in, uint8_t *out, size_t nblocks, int enc);
    } gcm[KUAI_GCM_FUSED_MAX];
} kuai_impl;

/*
 * Registration: a backend file names each table it defines with a line of
 * its own, `KUAI_REGISTER(symbol);` at the start of a line. CMakeLists.txt
 * collects those lines from the sources it builds into the one list the
 * registry reads (kuai_backends.inc in the build tree), so a new backend is
 * its own file plus its entry among the sources.
 */
#define KUAI_REGISTER(sym) extern const kuai_impl sym

/*
 * The cipher list (src/ciphers.def) as a table indexed by kuai_cipher
 * (src/core.c): every call checks its cipher's facts, and a short call
 * (key setup + 4 blocks) is short enough that a scan of the list per fact
 * showed in its time. An id outside the list has a NULL name.
 */
typedef struct kuai_cipher_row {
    const char *name;
    size_t block, key;
    kuai_family family;
} kuai_cipher_row;
/* One past the largest id: the size of a union of char[id + 1] per cipher. */
union kuai_cipher_ids {
#define KUAI_CIPHER(id, name, block, key, family) char id##_row[(id) + 1];
#include "ciphers.def"
};
#define KUAI_CIPHER_ROWS sizeof(union kuai_cipher_ids)
extern const kuai_cipher_row kuai_cipher_rows[KUAI_CIPHER_ROWS];

static inline const kuai_cipher_row *kuai_cipher_row_of(kuai_cipher c)
{
    size_t i = (size_t)c;
    return i < KUAI_CIPHER_ROWS && kuai_cipher_rows[i].name ? &kuai_cipher_rows[i] : NULL;
}

/* kuai_block_size and kuai_key_size without a call (0 outside the list) */
static inline size_t kuai_cipher_block(kuai_cipher c)
{
    const kuai_cipher_row *r = kuai_cipher_row_of(c);
    return r ? r->block : 0;
}

/* Every block size is a power of two, so whole blocks in len bytes and the
 * bytes after them are a shift and a mask (bs: a block size of the list).
 * A 64-bit division takes ~15-40 cycles on x86-64 cores, a sizeable part
 * of a short call that costs ~120-200. */
#define KUAI_CIPHER(id, name, block, key, family)                                                  \
    _Static_assert((block) > 0 && ((block) & ((block)-1)) == 0, name ": block not a power of 2");
#include "ciphers.def"

static inline size_t kuai_blocks_in(size_t len, size_t bs)
{
    return len >> __builtin_ctzll((unsigned long long)bs);
}

static inline size_t kuai_tail_of(size_t len, size_t bs)
{
    return len & (bs - 1);
}

static inline size_t kuai_cipher_key(kuai_cipher c)
{
    const kuai_cipher_row *r = kuai_cipher_row_of(c);
    return r ? r->key : 0;
}

/* KUAI_FAMILY_COUNT for an id outside the list */
static inline kuai_family kuai_cipher_family(kuai_cipher c)
{
    const kuai_cipher_row *r = kuai_cipher_row_of(c);
    return r ? r->family : KUAI_FAMILY_COUNT;
}

/* The backend registry (src/registry.c). Sorted and, for kuai_key_init's
 * choice, read from the environment once per process, on first use. */
/* c's family's backends, highest priority first, usable here or not,
 * NULL-terminated (empty for an unknown cipher). */
const kuai_impl *const *kuai_impls(kuai_cipher c);
/* The backend kuai_key_init takes for c: the best usable one, or the one
 * KUAI_BACKEND names (NULL when it names none of c's, an unusable one, or a
 * leaky one without KUAI_ALLOW_LEAKY_BACKENDS=1). */
const kuai_impl *kuai_impl_default(kuai_cipher c);
/* c's backend called name, if usable here; else NULL. */
const kuai_impl *kuai_impl_named(kuai_cipher c, const char *name);
/* Tests only: read the environment again at the next key setup. Not safe
 * while another thread sets up a key. */
void kuai_registry_reload(void);

static inline const kuai_impl *kuai_key_impl(const kuai_key *k)
{
    return (const kuai_impl *)k->priv_impl;
}

#endif
