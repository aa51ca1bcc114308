/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Known-answer vector files (tests/vectors/<cipher name>.txt).
 *
 * Format: "# comment" lines; sections "[ECB n]", "[CBC n]", "[MC n]", each
 * followed by "key = hex", "pt = hex", "ct = hex". CBC uses an all-zero IV.
 * MC n: the one-block pt encrypted n times in a row (output fed back) is ct.
 */
#ifndef KUAI_TEST_VECTORS_H
#define KUAI_TEST_VECTORS_H

#include "kuai.h"

#include <stddef.h>
#include <stdint.h>

typedef enum kat_mode { KAT_ECB, KAT_CBC, KAT_MC } kat_mode;

typedef struct kat {
    kat_mode mode;
    unsigned long n;  /* section number; for MC the number of encryptions */
    const char *file; /* for messages: base name of the vector file */
    int line;         /* line of the section header */
    uint8_t *key, *pt, *ct;
    size_t key_len, pt_len, ct_len;
} kat;

typedef struct kat_file {
    char name[128]; /* base name, for messages */
    kat *v;
    size_t n;
} kat_file;

/* Decodes a whole hex string into a fresh malloc'd buffer; 0 if malformed. */
int hex_decode(const char *s, uint8_t **out, size_t *len);

/* One record of a NIST CAVP-style file (the cryptography-vectors sets):
 * "COUNT = n" starts it, then "NAME = hex" fields; "FAIL" marks a record
 * whose tag must be rejected; "[ENCRYPT]" / "[DECRYPT]" set the direction. */
typedef struct nist_rec {
    int line, decrypt, fail;
    uint8_t *key, *iv, *pt, *ct, *aad, *tag;
    size_t key_len, iv_len, pt_len, ct_len, aad_len, tag_len;
} nist_rec;

/* Reads the file at path (name: for messages) and calls run on every
 * record; decrypt0 is the direction before any section header. Fields:
 * KEY, IV, PLAINTEXT/PT, CIPHERTEXT/CT, AAD, TAG (any case); anything else
 * is reported as a failure. Returns the number of records, -1 if the file
 * cannot be opened. */
long nist_file_read(const char *path, const char *name, int decrypt0,
                    void (*run)(const nist_rec *r, void *arg), void *arg);

/* Directory of the vector files: $KUAI_VECTORS_DIR or the source tree. */
const char *vectors_dir(void);

/* Parses path. Returns 0 on success; -1 when the file cannot be opened
 * (nothing reported); -2 when it is malformed (each problem reported as a
 * failure). f is valid (possibly partial) after any return; kat_free it. */
int kat_load(kat_file *f, const char *path);
void kat_free(kat_file *f);

/* Runs one vector through the public API with a key set up by backend:
 * ECB/CBC both directions (CBC also checks the advanced IV, ECB also in
 * place), MC forward n times and back n times. */
void kat_run(const kat *v, kuai_cipher c, const char *backend);

#endif
