/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target: the kuai container (cli/container.c, docs/format.md),
 * read and written by the tool's own code.
 *
 * Every call uses KDF 0 with the fixed key FUZZ_KEY (bytes 00 01 02 ... 1f;
 * a cipher with a shorter key takes the first bytes), one worker thread,
 * and memfds as input and output. The seeds in fuzz/corpus/fuzz_container
 * are `kuai encrypt -k 000102...` files under that key.
 *
 * 1. The input as a file to container_decrypt. Whatever it holds, nothing
 *    may crash, leak or hit undefined behaviour. A rejection (non-zero
 *    return) must release no unauthenticated plaintext: the output ends
 *    after whole verified chunks, so for any input of at most one chunk
 *    (all inputs of -max_len 8192) it is empty. An acceptance must give a
 *    plaintext of the input's length less the header and a tag per chunk.
 *    (The fuzzer cannot forge a tag: what it gets accepted is a seed.)
 * 2. The input as plaintext: container_encrypt under a cipher the input
 *    picks (all seven), then container_decrypt must give the input back
 *    byte for byte; that container with one byte flipped, and cut short or
 *    lengthened (where and by what chosen by the input), must be rejected
 *    as in 1. Now and then the plaintext is the input repeated to about one
 *    chunk (1 MiB), for the framing of several chunks: a full final chunk,
 *    the last-chunk flag, a cut at a chunk boundary.
 *
 * Any violation aborts. The CLI reports each rejection on standard error:
 * run with -close_fd_mask=2 (make fuzz does) to keep the log short.
 */
#define _GNU_SOURCE
#include "cli.h"
#include "fuzz_input.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* The fixed key of the target and of its seed corpus. */
static uint8_t FUZZ_KEY[1][32] = {{0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a,
                                   0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x10, 0x11, 0x12, 0x13, 0x14, 0x15,
                                   0x16, 0x17, 0x18, 0x19, 0x1a, 0x1b, 0x1c, 0x1d, 0x1e, 0x1f}};

#define ROUNDTRIP_MAX 65536 /* plaintexts the round trip takes as they are */
#define SEALED (CHUNK_SIZE + TAG_SIZE)
#define PT_MAX (CHUNK_SIZE + 1 + ROUNDTRIP_MAX) /* the longest plaintext made below */
#define CT_MAX (HEADER_SIZE + PT_MAX + 2 * TAG_SIZE + 64)

static int fd_in, fd_out; /* memfds, reused */

static void put(int fd, const uint8_t *p, size_t n)
{
    must(ftruncate(fd, 0) == 0);
    must(lseek(fd, 0, SEEK_SET) == 0);
    must(write_full(fd, p, n) == 0);
    must(lseek(fd, 0, SEEK_SET) == 0);
}

/* The whole content of fd into buf (at most max bytes); returns its length. */
static size_t get(int fd, uint8_t *buf, size_t max)
{
    struct stat st;
    must(fstat(fd, &st) == 0 && (size_t)st.st_size <= max);
    must(lseek(fd, 0, SEEK_SET) == 0);
    must(read_full(fd, buf, (size_t)st.st_size) == st.st_size);
    return (size_t)st.st_size;
}

/* container_decrypt of the n bytes at c (cipher 0: not given, as without
 * -c) into fd_out; returns its result, the plaintext in out, its length in
 * *out_len. */
static int decrypt(const uint8_t *c, size_t n, kuai_cipher cipher, uint8_t *out, size_t *out_len)
{
    /* The key length the header's cipher needs (16 when it names none). */
    size_t ks = n > 9 && c[9] >= KUAI_UBLOCK_128_128 && c[9] <= KUAI_AES_256
                    ? kuai_key_size((kuai_cipher)c[9])
                    : 16;
    key_material km = {.keys = FUZZ_KEY, .nkeys = 1, .key_len = ks};
    cli_opts o = {.decrypt = 1, .cipher = cipher, .quiet = 1, .threads = 1};
    output out_file = {.fd = fd_out, .path = NULL};
    progress pg;
    put(fd_in, c, n);
    put(fd_out, NULL, 0);
    int rc = container_decrypt(&o, &km, fd_in, &out_file, &pg, "fuzz");
    *out_len = get(fd_out, out, PT_MAX);
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
    static const kuai_cipher ciphers[] = {
        KUAI_UBLOCK_128_128, KUAI_UBLOCK_128_256, KUAI_UBLOCK_256_256, KUAI_SM4,
        KUAI_AES_128,        KUAI_AES_192,        KUAI_AES_256};
    static uint8_t pt[PT_MAX], ct[CT_MAX], out[PT_MAX];
    if (size > PT_MAX)
        return 0; /* beyond the buffers (make fuzz runs -max_len 8192) */
    if (!fd_in) {
        fd_in = memfd_create("fuzz_container_in", MFD_CLOEXEC);
        fd_out = memfd_create("fuzz_container_out", MFD_CLOEXEC);
        must(fd_in >= 0 && fd_out >= 0);
    }

    /* 1. The input as a container. */
    size_t out_len;
    int rc = decrypt(data, size, 0, out, &out_len);
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
    kuai_cipher cipher = ciphers[TAIL(0) % 7];
    size_t pt_len = size;
    memcpy(pt, data, size);
    if ((TAIL(8) & 0x1f) == 0x1f) {
        /* About one chunk: a byte under, exactly, a byte over, the input over. */
        size_t v = TAIL(9) % 4;
        pt_len = CHUNK_SIZE - 1 + (v < 3 ? v : 2 + size);
        for (size_t i = size; i < pt_len; i++)
            pt[i] = size ? pt[i - size] : (uint8_t)i;
    }

    key_material km = {.keys = FUZZ_KEY, .nkeys = 1, .key_len = kuai_key_size(cipher)};
    cli_opts o = {.cipher = cipher, .quiet = 1, .threads = 1};
    output out_file = {.fd = fd_out, .path = NULL};
    progress pg;
    put(fd_in, pt, pt_len);
    put(fd_out, NULL, 0);
    must(container_encrypt(&o, &km, fd_in, &out_file, &pg, "fuzz") == 0);
    size_t ct_len = get(fd_out, ct, CT_MAX);
    size_t nchunks = pt_len == 0 ? 1 : (pt_len + CHUNK_SIZE - 1) / CHUNK_SIZE;
    must(ct_len == HEADER_SIZE + pt_len + nchunks * TAG_SIZE);

    /* Back, with or without the cipher named (-c). */
    must(decrypt(ct, ct_len, TAIL(5) & 4 ? cipher : 0, out, &out_len) == 0);
    must(out_len == pt_len && memcmp(out, pt, pt_len) == 0);

    /* One byte flipped anywhere. */
    size_t pos = (TAIL(1) | TAIL(2) << 8 | TAIL(3) << 16) % ct_len;
    uint8_t mask = TAIL(4) ? (uint8_t)TAIL(4) : 0x80;
    ct[pos] ^= mask;
    must(decrypt(ct, ct_len, 0, out, &out_len) != 0);
    check_rejected(out, out_len, pt, pt_len);
    ct[pos] ^= mask;

    if (TAIL(5) & 1) {
        /* Cut short: at the first chunk boundary when there is one after
         * it (a file cut there ends with a chunk sealed as non-final). */
        size_t cut = TAIL(5) & 2 && ct_len > HEADER_SIZE + SEALED
                         ? HEADER_SIZE + SEALED
                         : (TAIL(6) | TAIL(7) << 8) % ct_len;
        must(decrypt(ct, cut, 0, out, &out_len) != 0);
        check_rejected(out, out_len, pt, pt_len);
    } else {
        /* Lengthened by 1..32 bytes: the last chunk is not last any more. */
        size_t add = 1 + TAIL(6) % 32;
        for (size_t i = 0; i < add; i++)
            ct[ct_len + i] = ct[i % ct_len] ^ (uint8_t)TAIL(7);
        must(decrypt(ct, ct_len + add, 0, out, &out_len) != 0);
        check_rejected(out, out_len, pt, pt_len);
    }
#undef TAIL
    return 0;
}
