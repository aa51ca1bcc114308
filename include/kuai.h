/* SPDX-License-Identifier: Apache-2.0 */
/*
 * kuai (快) — fast, constant-time block ciphers: uBlock, SM4, AES.
 *
 * The whole public API. Every function returns 0 (KUAI_OK) on success or a
 * negative KUAI_ERR_* code; on failure nothing is written to any output
 * buffer, IV or counter.
 *
 * Thread safety: one kuai_key may be used by many threads at once (every
 * call takes it as const). After key setup the library writes to a key only
 * to cache a form of its round keys that some backends build on the key's
 * first long call (uBlock's SIMD backends), and it synchronises
 * those writes itself. What the caller must order: no call may use a key
 * while kuai_key_init* or kuai_key_wipe runs on it, and a key may be copied
 * (memcpy, struct assignment) only while no call with it is running; the
 * copy is then a key of its own. A copy taken during such a call is a data
 * race, like a copy of any object another thread writes; for a second key
 * then, call kuai_key_init again with the key bytes. (Should a program copy
 * anyway, a uBlock copy does not trust a cache it may have taken half-built:
 * it builds its own.) The process-wide state, the CPU features, the backend
 * choice made at the first key setup and the thread pool of the *_parallel
 * calls, is set up once under the library's own synchronisation, and a
 * child of fork() may use the library whatever other threads were doing.
 */
#ifndef KUAI_H
#define KUAI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The version of this header; kuai_version() gives the library's. The three
 * numbers are the one place the version is written (CMake reads them). */
#define KUAI_VERSION_MAJOR 0
#define KUAI_VERSION_MINOR 1
#define KUAI_VERSION_PATCH 0
#define KUAI_VERSION_STR_(x) #x
#define KUAI_VERSION_STR(x) KUAI_VERSION_STR_(x)
#define KUAI_VERSION                                                                               \
    KUAI_VERSION_STR(KUAI_VERSION_MAJOR)                                                           \
    "." KUAI_VERSION_STR(KUAI_VERSION_MINOR) "." KUAI_VERSION_STR(KUAI_VERSION_PATCH)

#if defined(__GNUC__)
#define KUAI_API __attribute__((visibility("default")))
#else
#define KUAI_API
#endif

typedef enum kuai_cipher {
    KUAI_UBLOCK_128_128 = 1,
    KUAI_UBLOCK_128_256,
    KUAI_UBLOCK_256_256,
    KUAI_SM4,
    KUAI_AES_128,
    KUAI_AES_192,
    KUAI_AES_256
} kuai_cipher;

enum {
    KUAI_OK = 0,
    KUAI_ERR_ARG = -1,         /* NULL pointer or otherwise malformed argument */
    KUAI_ERR_KEY_LEN = -2,     /* key length does not match the cipher */
    KUAI_ERR_LENGTH = -3,      /* not whole blocks (ECB/CBC), or over a mode's length limit */
    KUAI_ERR_BACKEND = -4,     /* unknown backend, or not usable on this CPU */
    KUAI_ERR_UNSUPPORTED = -5, /* cipher or operation not implemented (yet) */
    KUAI_ERR_AUTH = -6,        /* authentication failed (AEAD modes) */
    KUAI_ERR_MISMATCH = -7,    /* multi-key call whose keys are not all the same cipher */
    KUAI_ERR_KEY = -8,         /* key not initialised, or already wiped */
    /* The .kuai container (kuai_file.h, library kuai_file) only: */
    KUAI_ERR_FORMAT = -9,     /* not a kuai file, or a header this version does not read */
    KUAI_ERR_TRUNCATED = -10, /* the input ends before its last chunk */
    KUAI_ERR_EXTERNAL = -11,  /* libcrypto failed (out of memory, no random bytes) */
    KUAI_ERR_IO = -12         /* a read or write callback failed */
};

/* Largest block of any cipher, in bytes (uBlock-256/256). */
#define KUAI_MAX_BLOCK 32

/*
 * A key schedule. Complete so it can live on the stack or inside another
 * struct without allocation; the fields are private and their layout may
 * change between versions. Round keys are kept in the form the chosen
 * backend consumes, which is why the area is generous. It may be copied
 * only while no call with it is running (Thread safety, above).
 */
typedef struct kuai_key {
    uint32_t priv_magic;
    uint32_t priv_cipher;
    const void *priv_impl;
    uint64_t priv_sched[1024]; /* 8 KiB; needs only 8-byte alignment (malloc is fine) */
} kuai_key;

/* Key setup with the best backend for this CPU, or the one named by the
 * environment variable KUAI_BACKEND when it is set: a comma-separated list
 * ("avx2,gfni"), of which each cipher takes the first name it has; a cipher
 * with none of them fails with KUAI_ERR_BACKEND. A backend that leaks
 * through the cache (kuai_backend_leaky: "ttable") is taken from
 * KUAI_BACKEND only when KUAI_ALLOW_LEAKY_BACKENDS=1 is set too, else
 * KUAI_ERR_BACKEND; kuai_key_init_backend names it without that. Both
 * variables read as unset in set-user-ID/set-group-ID programs
 * (secure_getenv), and are read once per process, at the first key setup,
 * one-shot call or kuai_backends call (the list and the choice are made
 * together). Does not allocate. */
KUAI_API int kuai_key_init(kuai_key *k, kuai_cipher c, const uint8_t *key, size_t key_len);
/* Key setup with a named backend ("ref", "ssse3", "avx2", ...). */
KUAI_API int kuai_key_init_backend(kuai_key *k, kuai_cipher c, const uint8_t *key, size_t key_len,
                                   const char *backend);
/* n key setups in one call: keys[i] set up from key[i] (key_len bytes
 * each) as kuai_key_init (resp. kuai_key_init_backend) would, all with
 * the same cipher and backend. Everything is checked first: on an error
 * no key struct is written (n == 0 is KUAI_ERR_ARG). Where one struct
 * appears twice it ends up holding the later of its keys. Faster than n
 * kuai_key_init calls where a backend runs two schedules side by side
 * (uBlock's avx2 and avx512: a pair of keys costs 1.1-1.25x one key); the
 * same work as those calls elsewhere. Does not allocate. */
KUAI_API int kuai_key_init_multi(kuai_key *const *keys, kuai_cipher c, const uint8_t *const *key,
                                 size_t key_len, size_t n);
KUAI_API int kuai_key_init_multi_backend(kuai_key *const *keys, kuai_cipher c,
                                         const uint8_t *const *key, size_t key_len, size_t n,
                                         const char *backend);
/* 1 when the named backend's memory addresses depend on key and data (it
 * leaks them through the cache to other code on the same CPU: "ttable"),
 * 0 for the constant-time backends, unknown names and NULL. */
KUAI_API int kuai_backend_leaky(const char *backend);
/* For the message of a KUAI_ERR_BACKEND from kuai_key_init (or a one-shot
 * call) of cipher c: the name KUAI_BACKEND chose for c when that backend
 * leaks through the cache and KUAI_ALLOW_LEAKY_BACKENDS=1 was not set, so
 * that it was refused; NULL otherwise (another reason, the variable unset
 * or not read, an unknown cipher). As the choice, read once per process. */
KUAI_API const char *kuai_backend_env_refused(kuai_cipher c);
/* Erase the key schedule with stores the compiler cannot elide. Key setup
 * does not erase a key the struct held before: it overwrites what the new
 * schedule uses, and a longer old one (another cipher or backend; uBlock's
 * masks, built on the first long call) stays until overwritten or wiped.
 * To re-key a struct with nothing of the old key left, wipe it first. */
KUAI_API void kuai_key_wipe(kuai_key *k);
/* Name of the backend a key was set up with, or NULL for an unset key. */
KUAI_API const char *kuai_key_backend(const kuai_key *k);
/* Block size in bytes (16 or 32), 0 for an unknown cipher. */
KUAI_API size_t kuai_block_size(kuai_cipher c);
/* Key size in bytes, 0 for an unknown cipher. */
KUAI_API size_t kuai_key_size(kuai_cipher c);
/* Canonical lower-case name ("ublock-128-128", "sm4", "aes-128"), or NULL. */
KUAI_API const char *kuai_cipher_name(kuai_cipher c);
/* Every cipher this library knows, in enum order: writes at most max of
 * them to list (NULL: none) and returns how many there are in total. A
 * build may lack the backends of some (kuai_backends() is then 0 and key
 * setup KUAI_ERR_UNSUPPORTED); later versions may add ciphers. */
KUAI_API size_t kuai_ciphers(kuai_cipher *list, size_t max);
/* The cipher whose canonical name (kuai_cipher_name) is name, compared in
 * ASCII case only ("SM4", "sm4" and "Aes-128" match; "aes128", "aes" and
 * names with spaces do not), whatever the locale; 0 (no cipher: the enum
 * starts at 1) for an unknown name or NULL. */
KUAI_API kuai_cipher kuai_cipher_by_name(const char *name);
/* The CPU features kuai's backends use that this CPU and OS offer, in a
 * fixed order: writes at most max names to names (NULL: none) and returns
 * how many there are. Only the current architecture's features appear:
 *   x86-64:      ssse3, avx2, aes-ni, pclmulqdq, vaes, vpclmulqdq,
 *                avx512 (F+BW+VL, with the OS saving ZMM state), avx512vbmi,
 *                gfni (avx2, vaes, vpclmulqdq also need YMM state saved)
 *   ARM64:       neon (ASIMD), aes, pmull, sm4 (Linux AT_HWCAP)
 *   LoongArch64: lsx (Linux AT_HWCAP)
 * 0 elsewhere, or with none of them (only portable backends then). Names
 * are static strings; new ones may be added as backends come. */
KUAI_API size_t kuai_cpu_feature_names(const char **names, size_t max);
/* Backends usable on this CPU for cipher c, best first. Writes at most max
 * names and returns how many there are in total. */
KUAI_API size_t kuai_backends(kuai_cipher c, const char **names, size_t max);
KUAI_API const char *kuai_strerror(int err);
/* The library's version, "MAJOR.MINOR.PATCH": KUAI_VERSION of the build that
 * made the library (which may differ from the header a program was built with). */
KUAI_API const char *kuai_version(void);

/*
 * Modes. len is in bytes; ECB and CBC need a multiple of the block size
 * (the library does no padding). in == out is allowed; other overlaps are not.
 * iv and ctr are one block long and are advanced in place, so a message may
 * be processed in pieces whose lengths are multiples of the block size; they
 * must not overlap in or out (not checked: such a call leaves out and the
 * block undefined, as memcpy does overlapping buffers).
 * The CTR counter is the whole block as a big-endian integer (as OpenSSL);
 * a final partial block consumes one counter value.
 */
KUAI_API int kuai_ecb_encrypt(const kuai_key *k, const uint8_t *in, uint8_t *out, size_t len);
KUAI_API int kuai_ecb_decrypt(const kuai_key *k, const uint8_t *in, uint8_t *out, size_t len);
KUAI_API int kuai_cbc_encrypt(const kuai_key *k, uint8_t *iv, const uint8_t *in, uint8_t *out,
                              size_t len);
KUAI_API int kuai_cbc_decrypt(const kuai_key *k, uint8_t *iv, const uint8_t *in, uint8_t *out,
                              size_t len);
KUAI_API int kuai_ctr_crypt(const kuai_key *k, uint8_t *ctr, const uint8_t *in, uint8_t *out,
                            size_t len);

/*
 * One-shot ECB for short messages: key setup and the cipher in one call,
 * nothing kept (the schedule lives only inside the call and is wiped before
 * it returns, with the stack the kernels' register spills used: checked by
 * the suite for every cipher and backend in optimised builds, 1-1,000
 * blocks; in a build without optimisation copies may stay on the stack:
 * docs/security.md). Same rules as
 * kuai_ecb_encrypt for in, out and len; the key and backend choice as
 * kuai_key_init. Meant for a message or two under a key that is not used
 * again. Encryption is faster than kuai_key_init + ECB on uBlock's ssse3,
 * avx2 and avx512 backends (neon and lsx: 9-22% fewer instructions) and on
 * SM4's and AES's AES-NI backends (most with several keys; their vaes and
 * gfni backends run the same code for it); elsewhere about as fast.
 * Decryption needs the last round key first, so its schedule runs before
 * the rounds. uBlock's: about as fast as key setup + ECB decryption on
 * avx512, up to 1.11x slower on avx2 and ssse3 on an Intel Xeon, the cost
 * of wiping its schedule, which key setup leaves to the caller's
 * kuai_key_wipe. AES's: on a Zen 3, one key's 120 TSC cycles against 77
 * for key setup + ECB decryption (AES-128, vaes), and about 2x with several
 * keys or on the AES-NI backends, most of that overwriting the stack their
 * kernels used (docs/performance.md has the rows); use key setup + ECB
 * where the speed matters more.
 */
KUAI_API int kuai_ecb_encrypt_oneshot(kuai_cipher c, const uint8_t *key, size_t key_len,
                                      const uint8_t *in, uint8_t *out, size_t len);
KUAI_API int kuai_ecb_decrypt_oneshot(kuai_cipher c, const uint8_t *key, size_t key_len,
                                      const uint8_t *in, uint8_t *out, size_t len);
/* n keys (key_len bytes each), one short message each: in[i] (len bytes)
 * under keys[i] into out[i]. Everything is checked before anything is
 * written. */
KUAI_API int kuai_ecb_encrypt_oneshot_multi(kuai_cipher c, const uint8_t *const *keys,
                                            size_t key_len, const uint8_t *const *in,
                                            uint8_t *const *out, size_t n, size_t len);
KUAI_API int kuai_ecb_decrypt_oneshot_multi(kuai_cipher c, const uint8_t *const *keys,
                                            size_t key_len, const uint8_t *const *in,
                                            uint8_t *const *out, size_t n, size_t len);

/*
 * Multi-key: n independent streams of len bytes each, stream i under keys[i]
 * (and ivs[i]), processed in lockstep so that even CBC encryption, serial
 * within one stream, fills the vector lanes. All keys must be the same cipher
 * (they may have been set up with different backends); n >= 1; the arrays
 * hold n entries each, and each stream's buffers follow the single-key rules.
 * Streams are independent: no stream's output or IV may overlap another
 * stream's input, output or IV (inputs may be shared: one message under
 * several keys). That rule is not checked (comparing every pair of streams
 * would cost more than a short call with many keys); a call that breaks it
 * leaves its outputs undefined, as memcpy does overlapping buffers. The
 * one-shot multi-key calls above follow the same rule.
 */
KUAI_API int kuai_ecb_encrypt_multi(const kuai_key *const *keys, const uint8_t *const *in,
                                    uint8_t *const *out, size_t n, size_t len);
KUAI_API int kuai_ecb_decrypt_multi(const kuai_key *const *keys, const uint8_t *const *in,
                                    uint8_t *const *out, size_t n, size_t len);
KUAI_API int kuai_cbc_encrypt_multi(const kuai_key *const *keys, uint8_t *const *ivs,
                                    const uint8_t *const *in, uint8_t *const *out, size_t n,
                                    size_t len);
KUAI_API int kuai_cbc_decrypt_multi(const kuai_key *const *keys, uint8_t *const *ivs,
                                    const uint8_t *const *in, uint8_t *const *out, size_t n,
                                    size_t len);

/*
 * GCM (NIST SP 800-38D) for the 128-bit-block ciphers; a 256-bit-block key
 * gives KUAI_ERR_UNSUPPORTED. IVs of any length >= 1 byte (12 bytes is the
 * fast path and the one to use); tags of 4..16 bytes (the leading bytes of
 * the full tag). Plaintext at most 2^36 - 32 bytes, AAD and IV below 2^61
 * bytes, else KUAI_ERR_LENGTH. in == out is allowed. aad may be NULL when
 * aad_len is 0, in/out when len is 0. An AAD or IV within those limits that
 * would run past the end of the address space (any length up to SIZE_MAX
 * is within them under a 32-bit size_t) is KUAI_ERR_ARG, as CCM's AAD and
 * every in and out; so is kuai_gcm_aad's.
 *
 * kuai_gcm_decrypt returns KUAI_ERR_AUTH when the tag does not match (the
 * comparison takes the same time wherever they differ); out then holds
 * zeros, never unauthenticated plaintext. It decrypts and authenticates in
 * one pass and zeroes out on a mismatch, so out must not be read by anyone
 * before the call returns.
 *
 * Each call sets GCM's key up anew (a message of at most 224 bytes with a
 * 12-byte IV takes one cipher call in all). For many messages under one
 * key, the streaming calls with a template context and kuai_gcm_restart
 * (below) make that set-up once.
 */
KUAI_API int kuai_gcm_encrypt(const kuai_key *k, const uint8_t *iv, size_t iv_len,
                              const uint8_t *aad, size_t aad_len, const uint8_t *in, uint8_t *out,
                              size_t len, uint8_t *tag, size_t tag_len);
KUAI_API int kuai_gcm_decrypt(const kuai_key *k, const uint8_t *iv, size_t iv_len,
                              const uint8_t *aad, size_t aad_len, const uint8_t *in, uint8_t *out,
                              size_t len, const uint8_t *tag, size_t tag_len);

/*
 * Streaming GCM: init, any number of aad calls, any number of update calls
 * of any lengths (one direction per message), then final. The context keeps
 * a pointer to the key, which must stay set up until final; it allocates
 * nothing and may be copied. final wipes the context whatever the tag's
 * verdict; a final refused before the tag is made (a tag length or pointer
 * refused, the wrong direction, a key no longer set up) changes nothing, as
 * any refused call, and kuai_gcm_wipe then abandons the message. A call out
 * of order (aad after data, mixed directions, use after final) gives
 * KUAI_ERR_ARG.
 *
 * WARNING: kuai_gcm_decrypt_update releases plaintext before the tag is
 * checked. Nothing it returns may be used, shown or acted on until
 * kuai_gcm_decrypt_final has returned 0; on KUAI_ERR_AUTH it must all be
 * discarded. Use the one-shot kuai_gcm_decrypt when the message fits.
 */
typedef struct kuai_gcm_ctx {
    const kuai_key *priv_key;
    const void *priv_ghash; /* GHASH backend */
    uint64_t priv_aad_len, priv_data_len;
    uint32_t priv_magic, priv_phase;
    /* GHASH key material (powers of H) in the backend's own format, kept
     * 64-byte aligned inside this area at offset priv_hkey_off; the
     * context itself needs only 8-byte alignment and may be copied. */
    uint32_t priv_hkey_off;
    uint32_t priv_ctr_secret; /* counter from the key (IV not 12 bytes), or still to settle */
    unsigned char priv_hkey[768 + 64];
    unsigned char priv_y[16];    /* GHASH accumulator */
    unsigned char priv_ctr[16];  /* next counter block */
    unsigned char priv_ekj0[16]; /* E_K(J0), masks the tag */
    unsigned char priv_ks[16];   /* keystream of the current partial block */
    unsigned char priv_part[16]; /* partial AAD or ciphertext block for GHASH */
} kuai_gcm_ctx;

KUAI_API int kuai_gcm_init(kuai_gcm_ctx *ctx, const kuai_key *k, const uint8_t *iv, size_t iv_len);
/* As kuai_gcm_init(ctx, k, iv, iv_len), on a context init has set up (in
 * any state before final or kuai_gcm_wipe; else KUAI_ERR_ARG): what ran of
 * its message is abandoned. Where the context's GHASH key material was
 * made under k's key (checked, not assumed), it is kept, and a message
 * costs its cipher blocks and no key-dependent set-up (with a 12-byte IV
 * and up to 16 bytes of AAD, a message of up to 224 bytes takes one cipher
 * call). Since final wipes a context, many messages under one key go: init
 * a context once and keep it; for each message, copy it and restart the
 * copy (streaming), or pass it to kuai_gcm_encrypt_with /
 * kuai_gcm_decrypt_with (whole messages, no copy). */
KUAI_API int kuai_gcm_restart(kuai_gcm_ctx *ctx, const kuai_key *k, const uint8_t *iv,
                              size_t iv_len);
/*
 * One-shot GCM under a template's GHASH set-up: as kuai_gcm_encrypt and
 * kuai_gcm_decrypt (same arguments after tmpl, same results and rules),
 * with the key-dependent set-up taken from tmpl, a context kuai_gcm_init
 * set up (in any state before final or kuai_gcm_wipe; else KUAI_ERR_ARG).
 * tmpl is only read, never written: threads may share one. As with
 * kuai_gcm_restart, its material is used where it was made under k's key
 * (checked, not assumed) and made anew for the call otherwise. With a
 * 12-byte IV, a message of up to 224 bytes takes one cipher call and reads
 * the template where it lies; others run on a copy of it. For many short
 * messages under one key (records, packets): init a template once, then
 * one call a message.
 */
KUAI_API int kuai_gcm_encrypt_with(const kuai_gcm_ctx *tmpl, const kuai_key *k, const uint8_t *iv,
                                   size_t iv_len, const uint8_t *aad, size_t aad_len,
                                   const uint8_t *in, uint8_t *out, size_t len, uint8_t *tag,
                                   size_t tag_len);
KUAI_API int kuai_gcm_decrypt_with(const kuai_gcm_ctx *tmpl, const kuai_key *k, const uint8_t *iv,
                                   size_t iv_len, const uint8_t *aad, size_t aad_len,
                                   const uint8_t *in, uint8_t *out, size_t len, const uint8_t *tag,
                                   size_t tag_len);
KUAI_API int kuai_gcm_aad(kuai_gcm_ctx *ctx, const uint8_t *aad, size_t len);
KUAI_API int kuai_gcm_encrypt_update(kuai_gcm_ctx *ctx, const uint8_t *in, uint8_t *out,
                                     size_t len);
KUAI_API int kuai_gcm_decrypt_update(kuai_gcm_ctx *ctx, const uint8_t *in, uint8_t *out,
                                     size_t len);
/* Writes the leading tag_len (4..16) bytes of the tag. */
KUAI_API int kuai_gcm_encrypt_final(kuai_gcm_ctx *ctx, uint8_t *tag, size_t tag_len);
/* 0 when tag (tag_len bytes, 4..16) matches, KUAI_ERR_AUTH otherwise. */
KUAI_API int kuai_gcm_decrypt_final(kuai_gcm_ctx *ctx, const uint8_t *tag, size_t tag_len);
/* Erase a context (an abandoned message); safe on any context. */
KUAI_API void kuai_gcm_wipe(kuai_gcm_ctx *ctx);

/*
 * More modes for the 128-bit-block ciphers (SM4, AES, uBlock-128/128 and 128/256); a
 * 256-bit-block key gives KUAI_ERR_UNSUPPORTED. The usual rules: 0 or a
 * negative KUAI_ERR_*, nothing written on failure, in == out allowed and
 * other overlaps refused (KUAI_ERR_ARG).
 *
 * XTS (IEEE Std 1619 / NIST SP 800-38E, or GB/T 17964-2021) over one data
 * unit of len bytes, 16 <= len <= 2^24 (IEEE 1619's 2^20 blocks; else
 * KUAI_ERR_LENGTH), with ciphertext stealing when len is not a multiple of
 * 16. data_key encrypts the data, tweak_key (same cipher, else
 * KUAI_ERR_MISMATCH) the 16-byte tweak (IEEE: the data unit number as a
 * little-endian integer). The two keys must be different keys: one
 * kuai_key passed as both is refused for encryption (KUAI_ERR_ARG;
 * decryption takes it, as OpenSSL's XTS decrypts under equal key halves);
 * equal keys in two structs are not detected. The standards differ in the tweak's multiplication by
 * x: IEEE 1619 takes the tweak as a little-endian number, GB/T 17964 as GCM does (big-endian, bits
 * reflected); that is OpenSSL's SM4-XTS xts_standard "IEEE" or "GB".
 */
typedef enum kuai_xts_standard { KUAI_XTS_IEEE1619 = 0, KUAI_XTS_GB17964 = 1 } kuai_xts_standard;
KUAI_API int kuai_xts_encrypt(const kuai_key *data_key, const kuai_key *tweak_key,
                              const uint8_t tweak[16], const uint8_t *in, uint8_t *out, size_t len,
                              kuai_xts_standard std);
KUAI_API int kuai_xts_decrypt(const kuai_key *data_key, const kuai_key *tweak_key,
                              const uint8_t tweak[16], const uint8_t *in, uint8_t *out, size_t len,
                              kuai_xts_standard std);

/*
 * CCM (NIST SP 800-38C, RFC 3610; SM4-CCM of RFC 8998): nonce of 7..13
 * bytes, tag of 4, 6, ..., 16 bytes (else KUAI_ERR_ARG); the message length
 * must fit the 15 - nonce_len byte length field (else KUAI_ERR_LENGTH). aad
 * may be NULL when aad_len is 0, in/out when len is 0; an aad_len no buffer
 * can have (over PTRDIFF_MAX, or past the end of the address space from aad)
 * is KUAI_ERR_ARG, as for in and out. kuai_ccm_decrypt
 * returns KUAI_ERR_AUTH when the tag does not match (compared in constant
 * time); out then holds zeros, never unauthenticated plaintext, so out must
 * not be read by anyone before the call returns.
 */
KUAI_API int kuai_ccm_encrypt(const kuai_key *k, const uint8_t *nonce, size_t nonce_len,
                              const uint8_t *aad, size_t aad_len, const uint8_t *in, uint8_t *out,
                              size_t len, uint8_t *tag, size_t tag_len);
KUAI_API int kuai_ccm_decrypt(const kuai_key *k, const uint8_t *nonce, size_t nonce_len,
                              const uint8_t *aad, size_t aad_len, const uint8_t *in, uint8_t *out,
                              size_t len, const uint8_t *tag, size_t tag_len);

/*
 * CFB128 and OFB (NIST SP 800-38A), any length. iv (16 bytes) is advanced
 * in place as CBC's is, to the last ciphertext block (CFB) or the last
 * keystream block (OFB), so a message may be processed in pieces whose
 * lengths are multiples of 16. A final partial block of r bytes ends the
 * stream; iv then holds, as OpenSSL's ivec does with num = r: for CFB the r
 * ciphertext bytes followed by the 16 - r unused keystream bytes, for OFB
 * the keystream block whose first r bytes were used. OFB encryption and
 * decryption are the same operation.
 */
KUAI_API int kuai_cfb_encrypt(const kuai_key *k, uint8_t *iv, const uint8_t *in, uint8_t *out,
                              size_t len);
KUAI_API int kuai_cfb_decrypt(const kuai_key *k, uint8_t *iv, const uint8_t *in, uint8_t *out,
                              size_t len);
KUAI_API int kuai_ofb_crypt(const kuai_key *k, uint8_t *iv, const uint8_t *in, uint8_t *out,
                            size_t len);

/*
 * CMAC (NIST SP 800-38B, RFC 4493): the leading tag_len (4..16) bytes of the
 * MAC of msg (NULL allowed when len is 0; a len no buffer can have, over
 * PTRDIFF_MAX or past the end of the address space from msg, is
 * KUAI_ERR_ARG, in kuai_cmac_update too). Streaming: init, any number of
 * updates of any lengths, final. The context keeps a pointer to the key,
 * which must stay set up until final; it allocates nothing, may be copied,
 * and holds the subkeys: final wipes it (after a successful call), and
 * kuai_cmac_wipe abandons a message. Use after final gives KUAI_ERR_ARG.
 * To verify a MAC, compare in constant time.
 */
typedef struct kuai_cmac_ctx {
    const kuai_key *priv_key;
    uint32_t priv_magic, priv_buf_len;
    unsigned char priv_mac[16]; /* CBC-MAC chain */
    unsigned char priv_buf[16]; /* the last block seen, held back until final */
    unsigned char priv_k1[16], priv_k2[16];
} kuai_cmac_ctx;

KUAI_API int kuai_cmac(const kuai_key *k, const uint8_t *msg, size_t len, uint8_t *tag,
                       size_t tag_len);
KUAI_API int kuai_cmac_init(kuai_cmac_ctx *ctx, const kuai_key *k);
KUAI_API int kuai_cmac_update(kuai_cmac_ctx *ctx, const uint8_t *msg, size_t len);
KUAI_API int kuai_cmac_final(kuai_cmac_ctx *ctx, uint8_t *tag, size_t tag_len);
KUAI_API void kuai_cmac_wipe(kuai_cmac_ctx *ctx);

/*
 * Key wrap (NIST SP 800-38F) with a 128-bit-block cipher (uBlock-256/256:
 * KUAI_ERR_UNSUPPORTED): KW (RFC 3394, the default IV A6A6A6A6A6A6A6A6) and
 * KWP (RFC 5649, any key length, zero padding). SP 800-38F names AES;
 * with SM4 or uBlock-128 the same functions are used, as libgcrypt's
 * AESWRAP mode does with any 128-bit block cipher.
 *
 *  kuai_kw_wrap:    len a multiple of 8, at least 16; out receives len + 8.
 *  kuai_kw_unwrap:  len a multiple of 8, at least 24; out receives len - 8.
 *  kuai_kwp_wrap:   len 1 .. 2^32 - 1; out receives kuai_kwp_wrapped_len(len)
 *                   bytes (8 + len rounded up to 8; 16 for len <= 8).
 *  kuai_kwp_unwrap: len a multiple of 8, at least 16; out needs len - 8 bytes
 *                   of room and *out_len receives the key's length (the
 *                   bytes after it in out are zeros).
 *
 * Another length is KUAI_ERR_LENGTH (kuai_kwp_wrapped_len returns 0 for
 * one); NULL buffers, or in and out overlapping other than at the same
 * start, KUAI_ERR_ARG; nothing is written then. in == out works (the
 * buffer must hold the larger of the two lengths). Unwrapping checks the
 * integrity value (KWP: also the length and the padding) in constant time;
 * when it fails the result is KUAI_ERR_AUTH and out holds zeros, never an
 * unverified key.
 */
KUAI_API int kuai_kw_wrap(const kuai_key *k, const uint8_t *in, size_t len, uint8_t *out);
KUAI_API int kuai_kw_unwrap(const kuai_key *k, const uint8_t *in, size_t len, uint8_t *out);
KUAI_API size_t kuai_kwp_wrapped_len(size_t len);
KUAI_API int kuai_kwp_wrap(const kuai_key *k, const uint8_t *in, size_t len, uint8_t *out);
KUAI_API int kuai_kwp_unwrap(const kuai_key *k, const uint8_t *in, size_t len, uint8_t *out,
                             size_t *out_len);

/*
 * Threads: one long buffer split into contiguous, block-aligned pieces run on
 * up to `threads` threads (0 = all online CPUs; at most 64), the calling
 * thread included. Results, IV/counter updates and error codes are exactly
 * those of the single-threaded call (everything is checked before any thread
 * writes); in == out is allowed. Inputs under 128 KiB (64 KiB per thread)
 * run on the calling thread alone. The worker threads are started on first
 * use and then sleep between calls; they need no shutdown. Calls from
 * several application threads are safe: they take turns on the pool.
 */
KUAI_API int kuai_ecb_encrypt_parallel(const kuai_key *k, const uint8_t *in, uint8_t *out,
                                       size_t len, unsigned threads);
KUAI_API int kuai_ecb_decrypt_parallel(const kuai_key *k, const uint8_t *in, uint8_t *out,
                                       size_t len, unsigned threads);
KUAI_API int kuai_ctr_crypt_parallel(const kuai_key *k, uint8_t *ctr, const uint8_t *in,
                                     uint8_t *out, size_t len, unsigned threads);
KUAI_API int kuai_cbc_decrypt_parallel(const kuai_key *k, uint8_t *iv, const uint8_t *in,
                                       uint8_t *out, size_t len, unsigned threads);

#ifdef __cplusplus
}
#endif
#endif /* KUAI_H */
