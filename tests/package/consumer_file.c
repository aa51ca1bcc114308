/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A program that uses an installed kuai_file (include/kuai_file.h) as any
 * project would, found by pkg-config (kuai-file) or find_package(kuai
 * COMPONENTS file): seals a small buffer into a .kuai container with a raw
 * SM4 key, opens it again, and checks that a flipped byte is refused.
 * Exit 0 and one "ok" line, or 1 and what failed.
 */
#include <kuai_file.h>
#include <stdio.h>
#include <string.h>

static int fail(const char *what, int rc)
{
    printf("FAIL: %s: %s\n", what, kuai_strerror(rc));
    return 1;
}

int main(void)
{
    static const uint8_t key[16] = {0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef,
                                    0xfe, 0xdc, 0xba, 0x98, 0x76, 0x54, 0x32, 0x10};
    static const char msg[] = "kuai_file, sealed and opened by an installed library";
    const size_t len = sizeof msg;
    uint8_t header[KUAI_FILE_HEADER_SIZE], sealed[sizeof msg + KUAI_FILE_TAG_SIZE],
        opened[sizeof msg];
    kuai_file_params p, q;
    kuai_file_keys w, r;
    kuai_file_header_error why;

    int rc = kuai_file_params_new(&p, KUAI_SM4, KUAI_FILE_KDF_KEY, 0);
    if (rc)
        return fail("kuai_file_params_new", rc);
    if ((rc = kuai_file_seal_begin(&w, &p, key, sizeof key, header)) != 0)
        return fail("kuai_file_seal_begin", rc);
    rc = kuai_file_seal_chunk(&w, 0, 1, (const uint8_t *)msg, len, sealed);
    kuai_file_keys_wipe(&w);
    if (rc)
        return fail("kuai_file_seal_chunk", rc);

    if ((rc = kuai_file_header_parse(header, sizeof header, &q, &why)) != 0)
        return fail("kuai_file_header_parse", rc);
    if ((rc = kuai_file_open_begin(&r, header, &q, key, sizeof key)) != 0)
        return fail("kuai_file_open_begin", rc);
    rc = kuai_file_open_chunk(&r, 0, 1, sealed, sizeof sealed, opened);
    if (rc)
        return fail("kuai_file_open_chunk", rc);
    if (memcmp(opened, msg, len) != 0) {
        printf("FAIL: the opened chunk differs from what was sealed\n");
        return 1;
    }
    sealed[3] ^= 1;
    rc = kuai_file_open_chunk(&r, 0, 1, sealed, sizeof sealed, opened);
    kuai_file_keys_wipe(&r);
    if (rc != KUAI_ERR_AUTH) {
        printf("FAIL: a modified chunk gave %s, not KUAI_ERR_AUTH\n", kuai_strerror(rc));
        return 1;
    }
    printf(
        "kuai_file (kuai %s): %zu bytes sealed with SM4 and opened, a flipped byte refused: ok\n",
        kuai_version(), len);
    return 0;
}
