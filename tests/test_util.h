/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Shared pieces of the kuai test runner: check counters, failure reports,
 * a seeded PRNG, guarded buffers and the backend filter.
 *
 * Every test file includes this header first, because it sets the POSIX
 * feature macro (setenv, clock_gettime) before any system header.
 */
#ifndef KUAI_TEST_UTIL_H
#define KUAI_TEST_UTIL_H

#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "kuai.h"

/* 0 in cross builds (CMake: no OpenSSL/libgcrypt for the target): the
 * comparisons with those libraries are reported SKIPPED; every vector set
 * still runs. */
#ifndef KUAI_TEST_THIRD_PARTY
#define KUAI_TEST_THIRD_PARTY 1
#endif

#include <stddef.h>
#include <stdint.h>

/* ---- counting and reporting -------------------------------------------- */

extern unsigned long long t_passed, t_failed;
extern int t_quiet;
/* Set by KUAI_TEST_SHORT=1 (make test-cross: emulated runs): the random and
 * long-buffer loops run fewer, shorter cases. Never fewer vectors. */
extern int t_short;

/* Prints "FAIL file:line [group] message"; counts the failure. */
void t_fail(const char *file, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Informational line (suppressed by -q). */
void t_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* CHECK(cond, fmt, ...): counts one check; on failure reports the message.
 * Evaluates to 1 when the check passed, so callers can stop a loop early. */
#define CHECK(cond, ...) t_check(!!(cond), __FILE__, __LINE__, __VA_ARGS__)
int t_check(int ok, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* A return code check that prints both codes with their names. */
int t_check_rc(const char *file, int line, int got, int want, const char *what);
#define CHECK_RC(got, want, what) t_check_rc(__FILE__, __LINE__, (got), (want), (what))

/* Byte comparison that reports the first differing offset and both sides
 * around it (what is the context: cipher, backend, mode, length). */
int t_check_mem(const char *file, int line, const void *got, const void *want, size_t n,
                const char *what);
#define CHECK_MEM(got, want, n, what) t_check_mem(__FILE__, __LINE__, (got), (want), (n), (what))

/* Groups: a name for failure lines and a per-group summary line. */
void group_begin(const char *name);
void group_end(void);

/* ---- PRNG ------------------------------------------------------------- */

/* splitmix64: tiny, seedable, good enough to make test data. */
extern uint64_t t_rng_state;
uint64_t rng_u64(void);
size_t rng_below(size_t n); /* uniform-ish in [0, n), n > 0 */
void rng_fill(void *p, size_t n);

/* ---- buffers ------------------------------------------------------------ */

#define GUARD_BYTES 64
#define GUARD_FILL 0xA5

/* A heap buffer whose data area p (len bytes, at misalignment off from a
 * 64-byte boundary) is surrounded by guard bytes that the code under test
 * must not touch. */
typedef struct gbuf {
    uint8_t *base;
    uint8_t *p;
    size_t len, total;
} gbuf;

gbuf gbuf_new(size_t len, size_t off); /* data area filled with GUARD_FILL */
void gbuf_free(gbuf *g);
/* 1 if the guards are intact; otherwise reports a failure naming what. */
#define GBUF_CHECK(g, what) gbuf_check_at(__FILE__, __LINE__, (g), (what))
int gbuf_check_at(const char *file, int line, const gbuf *g, const char *what);

void *xmalloc(size_t n);

/* What a call left on the stack below its caller (test_main.c): npat
 * 16-byte patterns searched for in the 64 KiB under the caller's frame, as
 * the call left them (stack_holds: how many places hold one, and the
 * deepest one's distance below the caller, into *depth if not NULL);
 * stack_clear zeroes that area first, so that what is found was left by
 * the call in between. */
size_t stack_holds(const uint8_t *pat, size_t npat, size_t *depth);
void stack_clear(void);
/* Whether a call overwrote all the stack it used: stack_fill(v) sets the
 * area to v, and after the call stack_unwiped(v) finds the deepest byte
 * that is not v and returns 0 if it begins 64 zero bytes (the bottom of an
 * overwrite such as kuai_wipe_stack's), else its distance below the
 * caller (a frame the overwrite did not reach). */
void stack_fill(uint8_t v);
size_t stack_unwiped(uint8_t v);
/* n keys on the heap, aligned as the type demands (64): malloc promises
 * only 16, and a kuai_key at a lesser alignment is undefined behaviour. */
kuai_key *key_alloc(size_t n);

/* ---- ciphers and backends ---------------------------------------------- */

/* The library's cipher list (src/ciphers.def); tests/test_api.c checks
 * that kuai_ciphers() reports the same, in the same order. */
enum {
    ALL_CIPHERS_N = 0
#define KUAI_CIPHER(id, name, block, key, family) +1
#include "ciphers.def"
};
extern const kuai_cipher all_ciphers[ALL_CIPHERS_N];
/* One of the three uBlock members. */
int is_ublock(kuai_cipher c);

/* --backend NAME, or NULL for all. */
extern const char *t_only_backend;

/* Backends of c that this run tests (usable on this CPU, filtered by
 * --backend). Returns the count, writes at most max names. */
size_t test_backends(kuai_cipher c, const char **names, size_t max);
/* All usable backends of c, unfiltered (for mixing keys and the oracle). */
size_t usable_backends(kuai_cipher c, const char **names, size_t max);

#define MAX_BACKENDS 16

/* Key setup that must succeed; reports and returns 0 when it does not. */
int key_init_ok(kuai_key *k, kuai_cipher c, const uint8_t *key, const char *backend);

/* Seconds on a monotonic clock. */
double now_seconds(void);

/* hex helpers: to_hex writes 2n chars + NUL into out. */
void to_hex(char *out, const uint8_t *p, size_t n);

/* ---- the oracle ---------------------------------------------------------
 * Modes rebuilt in the test from one-block ECB calls on a "ref" key (ECB on
 * one block is what the vector files pin down), so the library's mode code
 * is checked against an independent implementation, not against itself.
 * Out of place only. Each returns the first non-zero library return code. */
int model_ecb(const kuai_key *ref, size_t bs, int enc, const uint8_t *in, uint8_t *out, size_t len);
int model_cbc(const kuai_key *ref, size_t bs, int enc, uint8_t *iv, const uint8_t *in, uint8_t *out,
              size_t len);
int model_ctr(const kuai_key *ref, size_t bs, uint8_t *ctr, const uint8_t *in, uint8_t *out,
              size_t len);
/* ctr += 1 as a big-endian integer of n bytes, wrapping to zero. */
void ctr_inc(uint8_t *ctr, size_t n);

/* ---- one message through ECB/CBC/CTR (mode_ops.c) ----------------------- */

typedef enum mode_op { OP_ECB_ENC, OP_ECB_DEC, OP_CBC_ENC, OP_CBC_DEC, OP_CTR, OP_N } mode_op;
extern const char *const mode_op_names[OP_N];
/* The library call for o; iv is the IV/counter (unused by ECB), updated. */
int mode_op_run(mode_op o, const kuai_key *k, uint8_t *iv, const uint8_t *in, uint8_t *out,
                size_t len);
/* The IV/counter a whole message of len bytes leaves behind. */
void mode_op_iv_after(mode_op o, const uint8_t iv0[16], const uint8_t *in, const uint8_t *out,
                      size_t len, uint8_t iv[16]);
/* What one call should do: in -> want, iv/ctr iv0 -> iv_want (NULL for ECB). */
typedef struct tcase {
    mode_op o;
    size_t len, bs;
    const uint8_t *in, *want, *iv0, *iv_want;
} tcase;

enum { V_WHOLE = 1, V_INPLACE = 2, V_SPLIT = 4, V_SPLIT_INPLACE = 8, V_ALL = 15 };

/* Runs t with key k in the variants asked for; off_in/off_out are the
 * misalignments of the buffers (and of the IV: off_in). */
void check_case(const kuai_key *k, const char *ctx, const tcase *t, size_t off_in, size_t off_out,
                unsigned variants);
/* A 16-byte-block cipher c on backend must turn in (IV iv0) into want, as
 * the oracle said: check_case with every variant at random misalignments. */
void check_vs_want(kuai_cipher c, const char *backend, const uint8_t *key, mode_op o,
                   const uint8_t iv0[16], const uint8_t *in, const uint8_t *want, size_t len,
                   const char *what);
#if KUAI_TEST_THIRD_PARTY
/* OpenSSL's answer for one whole message, no padding; 0 if it failed. */
typedef struct evp_cipher_st EVP_CIPHER;
int ossl_mode_crypt(const EVP_CIPHER *ci, mode_op o, const uint8_t *key, const uint8_t iv[16],
                    const uint8_t *in, uint8_t *out, size_t len);
#endif

/* ---- test groups (each in its own file) -------------------------------- */

void test_api_helpers(void);              /* test_api.c */
void test_api_errors(void);               /* test_api.c */
void test_api_env(void);                  /* test_api.c */
void test_vector_files(void);             /* vectors.c */
void test_ublock_spec(void);              /* test_ublock.c */
void test_ublock_backend_internals(void); /* test_ublock.c */
void test_modes_diff(void);               /* test_modes.c */
void test_modes_unaligned(void);          /* test_modes.c */
void test_modes_multi(void);              /* test_modes.c */
void test_modes_threads(void);            /* test_modes.c */
void test_modes_key_placement(void);      /* test_modes.c */
void test_gcm(void);                      /* test_gcm.c */
void test_parallel(void);                 /* test_parallel.c */
void test_oneshot(void);                  /* test_oneshot.c */
void test_guard_pages(void);              /* test_guard.c */
void test_sm4_backend_internals(void);    /* test_sm4.c */
void test_sm4_openssl(void);              /* test_sm4.c */
void test_sm4_cryptography_vectors(void); /* test_sm4.c */
void test_aes_backend_internals(void);    /* test_aes.c */
void test_aes_fips197(void);              /* test_aes.c */
void test_aes_cryptography_vectors(void); /* test_aes.c */
void test_aes_openssl(void);              /* test_aes.c */
void test_aes_monte_carlo(void);          /* test_aes.c */
void test_aes_sw(void);                   /* test_aes_sw.c */
void test_modes_ext(void);                /* test_modes_ext.c */
void test_misuse(void);                   /* test_misuse.c */
void test_wycheproof(void);               /* test_wycheproof.c */
void test_kw(void);                       /* test_kw.c */

#endif
