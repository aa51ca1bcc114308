/* SPDX-License-Identifier: Apache-2.0 */
/* A program that uses an installed kuai as any project would: the header
 * and the library found by pkg-config or find_package(kuai). It checks the
 * library's version against the header's and SM4-GCM against RFC 8998,
 * appendix A.2. Exit 0 and one "ok" line, or 1 and what differed. */
#include <kuai.h>
#include <stdio.h>
#include <string.h>

static size_t unhex(const char *h, unsigned char *out)
{
    size_t n = 0;
    for (; h[0] && h[1]; h += 2)
        sscanf(h, "%2hhx", &out[n++]);
    return n;
}

int main(void)
{
    unsigned char key[16], iv[12], aad[20], pt[64], ct[64], want_ct[64], tag[16], want_tag[16];
    unhex("0123456789abcdeffedcba9876543210", key);
    size_t iv_len = unhex("00001234567800000000abcd", iv);
    size_t aad_len = unhex("feedfacedeadbeeffeedfacedeadbeefabaddad2", aad);
    size_t len = unhex("aaaaaaaaaaaaaaaabbbbbbbbbbbbbbbbccccccccccccccccdddddddddddddddd"
                       "eeeeeeeeeeeeeeeeffffffffffffffffeeeeeeeeeeeeeeeeaaaaaaaaaaaaaaaa",
                       pt);
    unhex("17f399f08c67d5ee19d0dc9969c4bb7d5fd46fd3756489069157b282bb200735"
          "d82710ca5c22f0ccfa7cbf93d496ac15a56834cbcf98c397b4024a2691233b8d",
          want_ct);
    unhex("83de3541e4c2b58177e065a9bf7b62ec", want_tag);

    if (strcmp(kuai_version(), KUAI_VERSION) != 0) {
        printf("FAIL: library %s, header %s\n", kuai_version(), KUAI_VERSION);
        return 1;
    }
    kuai_key k;
    int rc = kuai_key_init(&k, KUAI_SM4, key, sizeof key);
    if (rc == 0)
        rc = kuai_gcm_encrypt(&k, iv, iv_len, aad, aad_len, pt, ct, len, tag, sizeof tag);
    if (rc != 0) {
        printf("FAIL: %s\n", kuai_strerror(rc));
        return 1;
    }
    if (memcmp(ct, want_ct, len) != 0 || memcmp(tag, want_tag, sizeof tag) != 0) {
        printf("FAIL: SM4-GCM differs from RFC 8998 A.2\n");
        return 1;
    }
    rc = kuai_gcm_decrypt(&k, iv, iv_len, aad, aad_len, ct, ct, len, tag, sizeof tag);
    if (rc != 0 || memcmp(ct, pt, len) != 0) {
        printf("FAIL: SM4-GCM decryption (%s)\n", kuai_strerror(rc));
        return 1;
    }
    printf("kuai %s: SM4-GCM (backend %s) matches RFC 8998 A.2: ok\n", kuai_version(),
           kuai_key_backend(&k));
    kuai_key_wipe(&k);
    return 0;
}
