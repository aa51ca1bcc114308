/* SPDX-License-Identifier: Apache-2.0 */
/*
 * kuai_file: the .kuai container format (docs/format.md) as a library
 * component, for the `kuai` tool and for bindings. Library kuai_file
 * (libkuai_file.a / libkuai_file.so), built beside libkuai when OpenSSL 3
 * is found: its SHA-256, HMAC, HKDF, scrypt and random bytes come from
 * libcrypto (docs/design.md says why); the cipher library itself needs
 * none of it.
 *
 * No file descriptors here: a caller moves the bytes. Two ways:
 *
 *  1. Chunk by chunk (what `kuai` does, with a thread per core): set up a
 *     kuai_file_keys with kuai_file_seal_begin (writes the 64-byte header)
 *     or kuai_file_header_parse + kuai_file_open_begin (checks it), then
 *     seal or open each chunk i with kuai_file_seal_chunk /
 *     kuai_file_open_chunk. The keys are read-only during those calls, so
 *     any number of threads may seal or open chunks of one file at once.
 *     The caller decides which chunk is the last: when sealing, the one
 *     after which the plaintext ends; when opening, the one after which
 *     the input ends (read one byte ahead).
 *
 *  2. Whole streams through callbacks (a binding: Python file objects,
 *     buffers): kuai_file_encrypt_stream / kuai_file_decrypt_stream read
 *     through a read callback and write through a write callback, one
 *     chunk (1 MiB) at a time. Decryption writes a chunk only once its tag
 *     has verified; a failure can end the output after whole verified
 *     chunks, so a caller writing to a file writes a temporary one and
 *     keeps it only when the call returns 0.
 *
 * Errors: 0 or a negative KUAI_ERR_* (kuai.h). The ones this component
 * adds: KUAI_ERR_FORMAT (not a kuai file, or a header this version does
 * not read; kuai_file_header_parse says which), KUAI_ERR_TRUNCATED (the
 * input ends before its last chunk), KUAI_ERR_EXTERNAL (libcrypto failed:
 * out of memory, or no random bytes), KUAI_ERR_IO (a callback failed).
 * A wrong key or password, and any modified chunk, give KUAI_ERR_AUTH.
 * Every key, derived key and plaintext buffer of the component is wiped
 * before it is released.
 */
#ifndef KUAI_FILE_H
#define KUAI_FILE_H

#include "kuai.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define KUAI_FILE_VERSION 1
#define KUAI_FILE_HEADER_SIZE 64
#define KUAI_FILE_TAG_SIZE 16
#define KUAI_FILE_CHUNK_LOG2 20
#define KUAI_FILE_CHUNK_SIZE ((size_t)1 << KUAI_FILE_CHUNK_LOG2) /* plaintext per chunk */
#define KUAI_FILE_SEALED_SIZE (KUAI_FILE_CHUNK_SIZE + KUAI_FILE_TAG_SIZE)
/* scrypt cost: kuai writes 2^17 by default and accepts 2^10..2^20; a
 * header asking for N*r*p above 2^23 is refused before scrypt runs. */
#define KUAI_FILE_SCRYPT_LOG2N_DEFAULT 17
#define KUAI_FILE_SCRYPT_LOG2N_MIN 10
#define KUAI_FILE_SCRYPT_LOG2N_MAX 20
#define KUAI_FILE_SCRYPT_COST_LOG2_MAX 23

typedef enum kuai_file_kdf {
    KUAI_FILE_KDF_KEY = 0,   /* the master key is the raw key, the cipher's key length */
    KUAI_FILE_KDF_SCRYPT = 1 /* the master key is scrypt(password, salt) */
} kuai_file_kdf;

/* The header's fields (bytes 0..47; the tag at 48..63 is checked by
 * kuai_file_open_begin). */
typedef struct kuai_file_params {
    kuai_cipher cipher;
    kuai_file_kdf kdf;
    unsigned scrypt_log2n, scrypt_r, scrypt_p; /* 0 with KUAI_FILE_KDF_KEY */
    uint8_t salt[16];                          /* all zero with KUAI_FILE_KDF_KEY */
    uint8_t nonce[16];
} kuai_file_params;

/* Why kuai_file_header_parse refused a header (its *why). */
typedef enum kuai_file_header_error {
    KUAI_FILE_HDR_OK = 0,
    KUAI_FILE_HDR_MAGIC,   /* no kuai magic (nor a prefix of it): not a kuai file */
    KUAI_FILE_HDR_SHORT,   /* fewer than 64 bytes that begin as a header does: the magic or
                            * a prefix of it (an empty input too): a file cut short */
    KUAI_FILE_HDR_VERSION, /* a format version other than 1 */
    KUAI_FILE_HDR_FIELD,   /* unknown cipher, chunk size, KDF, reserved or KDF bytes */
    KUAI_FILE_HDR_COST,    /* scrypt N*r*p above 2^23 */
    KUAI_FILE_HDR_ARG      /* p NULL, or buf NULL with len > 0 (KUAI_ERR_ARG): no bytes judged */
} kuai_file_header_error;

/* Parses the first len bytes of a file (all 64 header bytes when len >=
 * 64). 0, or KUAI_ERR_FORMAT with the reason in *why (why may be NULL;
 * with KUAI_FILE_HDR_VERSION the version is buf[8]), or KUAI_ERR_ARG with
 * KUAI_FILE_HDR_ARG. *why is set on every return. */
KUAI_API int kuai_file_header_parse(const uint8_t *buf, size_t len, kuai_file_params *p,
                                    kuai_file_header_error *why);

/* Fresh parameters for a new file: the cipher, the KDF (scrypt with
 * N = 2^scrypt_log2n, r = 8, p = 1; scrypt_log2n 0 means the default),
 * a random salt (scrypt) and nonce. KUAI_ERR_ARG for a cipher or (with
 * scrypt) a cost outside the format; KUAI_FILE_KDF_KEY ignores
 * scrypt_log2n, whatever it is. KUAI_ERR_EXTERNAL when no random bytes. */
KUAI_API int kuai_file_params_new(kuai_file_params *p, kuai_cipher cipher, kuai_file_kdf kdf,
                                  unsigned scrypt_log2n);

/*
 * The per-file keys and the header: complete (no allocation besides
 * libcrypto's own inside the calls), about 8.1 KiB; fields private. Set
 * up by kuai_file_seal_begin or kuai_file_open_begin, wiped by
 * kuai_file_keys_wipe (safe on a zeroed or wiped struct). Either begin
 * call wipes k first, so one that fails (argument error included) leaves
 * k holding no keys, even when it held another file's: chunk calls on it
 * are then KUAI_ERR_ARG.
 */
typedef struct kuai_file_keys {
    uint32_t priv_magic;
    uint32_t priv_etm; /* uBlock-256/256: CTR + HMAC-SHA-256 instead of GCM */
    kuai_key priv_key;
    uint8_t priv_mac_key[32];
    uint8_t priv_header[KUAI_FILE_HEADER_SIZE];
} kuai_file_keys;

/* secret: the raw key (KUAI_FILE_KDF_KEY; exactly the cipher's key
 * length, else KUAI_ERR_KEY_LEN) or the password's bytes (scrypt). */

/* Writer: derives the keys for p and writes the 64-byte header (tag
 * included) to header. p must be new from kuai_file_params_new for each
 * file (here and in kuai_file_encrypt_stream): the keys and every chunk's
 * nonce follow from p's nonce and the secret alone, so two files sealed
 * from one p (or hand-made fields with a fixed nonce) under one secret
 * reuse every chunk's nonce: the XOR of their plaintexts is given away,
 * and under GCM chunks can be forged. Only re-making a known file takes
 * a header's fields again. */
KUAI_API int kuai_file_seal_begin(kuai_file_keys *k, const kuai_file_params *p,
                                  const uint8_t *secret, size_t secret_len,
                                  uint8_t header[KUAI_FILE_HEADER_SIZE]);
/* Reader: header as read, p as kuai_file_header_parse gave it (a header
 * that does not parse, or p with any field other than the header's, is
 * KUAI_ERR_ARG: the keys come from p, the tag covers the header). Checks
 * the header tag in constant time: KUAI_ERR_AUTH for a wrong key or
 * password (or a damaged header). The header, not the caller, says what
 * secret is: compare p->kdf with what you hold first (as
 * kuai_file_decrypt_stream does), or a file naming KDF 0 takes a password
 * of the key's length as a raw key, and tests it with no scrypt run. */
KUAI_API int kuai_file_open_begin(kuai_file_keys *k, const uint8_t header[KUAI_FILE_HEADER_SIZE],
                                  const kuai_file_params *p, const uint8_t *secret,
                                  size_t secret_len);
KUAI_API void kuai_file_keys_wipe(kuai_file_keys *k);

/* Chunk idx (from 0), last non-zero for the final chunk. The chunk calls
 * keep no state (any thread, any order): nothing stops a second seal of
 * one (idx, last) in a file, and that is the caller's to avoid. It reuses
 * the chunk's nonce, giving away the XOR of the two plaintexts (and under
 * GCM, forgeries); seal each chunk once, and a changed file as a new one
 * (kuai_file_params_new). Seal: len <=
 * KUAI_FILE_CHUNK_SIZE plaintext bytes (exactly that unless last), out
 * gets len + 16 bytes; in == out allowed. Open: in is sealed_len bytes
 * (ciphertext then tag, 16 <= sealed_len <= KUAI_FILE_SEALED_SIZE,
 * exactly the latter unless last), out gets sealed_len - 16 bytes only
 * when the tag verifies (else zeros); in == out allowed, any other
 * overlap of out with the ciphertext is KUAI_ERR_ARG with nothing
 * written. KUAI_ERR_AUTH on a mismatch; KUAI_ERR_TRUNCATED when a last
 * chunk verifies as a non-final one (the file was cut at a chunk
 * boundary). */
KUAI_API int kuai_file_seal_chunk(const kuai_file_keys *k, uint64_t idx, int last,
                                  const uint8_t *in, size_t len, uint8_t *out);
KUAI_API int kuai_file_open_chunk(const kuai_file_keys *k, uint64_t idx, int last,
                                  const uint8_t *in, size_t sealed_len, uint8_t *out);

/* Callbacks of the stream calls. read: up to n bytes into buf; the count
 * (short counts are fine: it is called again; 0 means the end of input),
 * or -1 on error. write: all n bytes; 0, or -1 on error. A -1 ends the
 * call with KUAI_ERR_IO. A binding wraps its file objects in these; or
 * it drives the chunk calls above with its own buffers. */
typedef long (*kuai_file_read_fn)(void *ctx, uint8_t *buf, size_t n);
typedef int (*kuai_file_write_fn)(void *ctx, const uint8_t *buf, size_t n);

/* A whole file: header, then every chunk, single-threaded; p new for
 * each file (kuai_file_seal_begin). Each call allocates one chunk buffer
 * (wiped and freed before it returns). */
KUAI_API int kuai_file_encrypt_stream(const kuai_file_params *p, const uint8_t *secret,
                                      size_t secret_len, kuai_file_read_fn rd, void *rctx,
                                      kuai_file_write_fn wr, void *wctx);
/* secret_kdf: what secret is (a raw key or a password): a file whose
 * header names the other gives KUAI_ERR_ARG. params, when non-NULL, gets
 * the header's fields. */
KUAI_API int kuai_file_decrypt_stream(kuai_file_kdf secret_kdf, const uint8_t *secret,
                                      size_t secret_len, kuai_file_read_fn rd, void *rctx,
                                      kuai_file_write_fn wr, void *wctx, kuai_file_params *params);

#ifdef __cplusplus
}
#endif
#endif
