/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target: the kuai container (docs/format.md) through its
 * library component, kuai_file (include/kuai_file.h, src/container/), the
 * code the kuai tool and the bindings read and write .kuai files with.
 *
 * Every call uses KDF 0 with the fixed key FUZZ_KEY (bytes 00 01 02 ... 1f;
 * a cipher with a shorter key takes the first bytes) and memory streams
 * through the read/write callbacks. The seeds in fuzz/corpus/fuzz_container
 * are `kuai encrypt -k 000102...` files under that key.
 *
 * 1. The input as a file to kuai_file_decrypt_stream (header parse, header
 *    tag, then every chunk through kuai_file_open_chunk, in place). Whatever
 *    it holds, nothing may crash, leak or hit undefined behaviour. A
 *    rejection (non-zero return) must release no unauthenticated
 *    plaintext: the output ends after whole verified chunks, so for any
 *    input of at most one chunk (all inputs of -max_len 8192) it is empty.
 *    An acceptance must give a plaintext of the input's length less the
 *    header and a tag per chunk. (The fuzzer cannot forge a tag: what it
 *    gets accepted is a seed.)
 * 2. The input as plaintext: kuai_file_encrypt_stream under a cipher and a
 *    nonce the input picks (every cipher), then decryption must give
 *    the input back byte for byte; that container with one byte flipped,
 *    and cut short or lengthened (where and by what chosen by the input),
 *    must be rejected as in 1. Now and then the plaintext is the input
 *    repeated to about one chunk (1 MiB), for the framing of several
 *    chunks: a full final chunk, the last-chunk flag, a cut at a chunk
 *    boundary (which must give KUAI_ERR_TRUNCATED).
 *
 * Any violation aborts.
 */
#include "fuzz_input.h"
#include "kuai_file.h"

#include <string.h>

#define CHUNK_SIZE KUAI_FILE_CHUNK_SIZE
#define TAG_SIZE KUAI_FILE_TAG_SIZE
#define HEADER_SIZE KUAI_FILE_HEADER_SIZE

/* The fixed key of the target and of its seed corpus. */
static const uint8_t FUZZ_KEY[32] = {
    0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f,
    0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18, 0x19, 0x1a, 0x1b, 0x1c, 0x1d, 0x1e, 0x1f};

#define ROUNDTRIP_MAX 65536 /* plaintexts the round trip takes as they are */
#define SEALED (CHUNK_SIZE + TAG_SIZE)
#define PT_MAX (CHUNK_SIZE + 1 + ROUNDTRIP_MAX) /* the longest plaintext made below */
#define CT_MAX (HEADER_SIZE + PT_MAX + 2 * TAG_SIZE + 64)

/* Memory streams for the callbacks; reads in pieces of at most step bytes
 * (chosen by the input) so that the component's refilling is fuzzed too. */
typedef struct mem {
    const uint8_t *in;
    uint8_t *out;
    size_t len, pos, cap, step;
} mem;

static long mem_read(void *ctx, uint8_t *buf, size_t n)
{
    mem *m = ctx;
    size_t k = m->len - m->pos < n ? m->len - m->pos : n;
    if (m->step && k > m->step)
        k = m->step;
    memcpy(buf, m->in + m->pos, k);
    m->pos += k;
    return (long)k;
}

static int mem_write(void *ctx, const uint8_t *buf, size_t n)
{
    mem *m = ctx;
    must(m->len + n <= m->cap);
    memcpy(m->out + m->len, buf, n);
    m->len += n;
    return 0;
}

/* Decryption of the n bytes at c under FUZZ_KEY (the key length the
 * header's cipher needs, 16 when it names none); the plaintext in out,
 * its length in *out_len. */
static int decrypt(const uint8_t *c, size_t n, size_t step, uint8_t *out, size_t *out_len)
{
    size_t ks = n > 9 && kuai_key_size((kuai_cipher)c[9]) ? kuai_key_size((kuai_cipher)c[9]) : 16;
    mem in = {.in = c, .len = n, .step = step}, o = {.out = out, .cap = PT_MAX};
    int rc = kuai_file_decrypt_stream(KUAI_FILE_KDF_KEY, FUZZ_KEY, ks, mem_read, &in, mem_write, &o,
                                      NULL);
    *out_len = o.len;
    must(rc <= 0);
    return rc;
}

/* A rejected container: what reached the output is whole chunks, and when
 * the plaintext is known (pt non-NULL), the leading chunks of it. */
static void check_rejected(const uint8_t *out, size_t out_len, const uint8_t *pt, size_t pt_len)
{
    must(out_len % CHUNK_SIZE == 0);
    if (pt)
        must((out_len == 0 || out_len < pt_len) && memcmp(out, pt, out_len) == 0);
}

/* Chunks of a container body of n bytes (the reader's framing). */
static size_t chunks(size_t n)
{
    return n == 0 ? 0 : (n + SEALED - 1) / SEALED;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static uint8_t pt[PT_MAX], ct[CT_MAX], out[PT_MAX];
    if (size > PT_MAX)
        return 0; /* beyond the buffers (make fuzz runs -max_len 8192) */

    /* 1. The input as a container. */
    size_t out_len;
    size_t step = size > 10 ? data[size / 2] * 97u : 0; /* 0: whole reads */
    int rc = decrypt(data, size, step, out, &out_len);
    if (rc != 0) {
        check_rejected(out, out_len, NULL, 0);
    } else {
        must(size > HEADER_SIZE);
        size_t body = size - HEADER_SIZE;
        must(out_len == body - chunks(body) * TAG_SIZE);
    }

    /* 2. The input as a plaintext. Choices come from its end, which the
     * container seeds have random (the tags). */
    if (size > ROUNDTRIP_MAX)
        return 0;
#define TAIL(i) ((size_t)(size > (i) ? data[size - 1 - (i)] : 0))
    kuai_cipher cipher = fuzz_pick_cipher((uint8_t)TAIL(0), 0);
    size_t pt_len = size;
    memcpy(pt, data, size);
    if ((TAIL(8) & 0x1f) == 0x1f) {
        /* About one chunk: a byte under, exactly, a byte over, the input over. */
        size_t v = TAIL(9) % 4;
        pt_len = CHUNK_SIZE - 1 + (v < 3 ? v : 2 + size);
        for (size_t i = size; i < pt_len; i++)
            pt[i] = size ? pt[i - size] : (uint8_t)i;
    }

    /* A header of the input's choosing: its cipher, a nonce from its
     * bytes (the seeds' tags), KDF 0. */
    kuai_file_params fp;
    memset(&fp, 0, sizeof fp);
    fp.cipher = cipher;
    fp.kdf = KUAI_FILE_KDF_KEY;
    for (size_t i = 0; i < 16; i++)
        fp.nonce[i] = (uint8_t)TAIL(10 + i);
    mem src = {.in = pt, .len = pt_len, .step = step}, dst = {.out = ct, .cap = CT_MAX};
    must(kuai_file_encrypt_stream(&fp, FUZZ_KEY, kuai_key_size(cipher), mem_read, &src, mem_write,
                                  &dst) == 0);
    size_t ct_len = dst.len;
    size_t nchunks = pt_len == 0 ? 1 : (pt_len + CHUNK_SIZE - 1) / CHUNK_SIZE;
    must(ct_len == HEADER_SIZE + pt_len + nchunks * TAG_SIZE);

    /* Back, with whole or piecewise reads. */
    must(decrypt(ct, ct_len, TAIL(5) & 4 ? step : 0, out, &out_len) == 0);
    must(out_len == pt_len && memcmp(out, pt, pt_len) == 0);

    /* One byte flipped anywhere. */
    size_t pos = (TAIL(1) | TAIL(2) << 8 | TAIL(3) << 16) % ct_len;
    uint8_t mask = TAIL(4) ? (uint8_t)TAIL(4) : 0x80;
    ct[pos] ^= mask;
    must(decrypt(ct, ct_len, step, out, &out_len) != 0);
    check_rejected(out, out_len, pt, pt_len);
    ct[pos] ^= mask;

    if (TAIL(5) & 1) {
        /* Cut short: at the first chunk boundary when there is one after
         * it (a file cut there ends with a chunk sealed as non-final). */
        size_t cut = TAIL(5) & 2 && ct_len > HEADER_SIZE + SEALED
                         ? HEADER_SIZE + SEALED
                         : (TAIL(6) | TAIL(7) << 8) % ct_len;
        rc = decrypt(ct, cut, step, out, &out_len);
        must(rc != 0);
        if (cut == HEADER_SIZE + SEALED)
            must(rc == KUAI_ERR_TRUNCATED);
        check_rejected(out, out_len, pt, pt_len);
    } else {
        /* Lengthened by 1..32 bytes: the last chunk is not last any more. */
        size_t add = 1 + TAIL(6) % 32;
        for (size_t i = 0; i < add; i++)
            ct[ct_len + i] = ct[i % ct_len] ^ (uint8_t)TAIL(7);
        must(decrypt(ct, ct_len + add, step, out, &out_len) != 0);
        check_rejected(out, out_len, pt, pt_len);
    }
#undef TAIL
    return 0;
}
