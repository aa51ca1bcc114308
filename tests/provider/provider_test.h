/* SPDX-License-Identifier: Apache-2.0 */
/* Shared by the parts of kuai_provider_test (test_evp.c, evp_model.c,
 * openssl_data.c): the check counters and CHECK. */
#ifndef KUAI_PROVIDER_TEST_H
#define KUAI_PROVIDER_TEST_H

#include <openssl/err.h>

#include <stdio.h>

extern int checks, failures;
#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        checks++;                                                                                  \
        if (!(cond)) {                                                                             \
            failures++;                                                                            \
            printf("FAIL %s:%d: ", __FILE__, __LINE__);                                            \
            printf(__VA_ARGS__);                                                                   \
            printf("\n");                                                                          \
            ERR_print_errors_fp(stdout);                                                           \
        }                                                                                          \
    } while (0)

/* EVP model: random EVP call sequences on the default provider and on kuai
 * side by side (evp_model.c). */
void test_evp_model(void);
/* Differential test: random EVP call sequences on both providers, every
 * result and context parameter compared (evp_diff.c). */
void test_evp_diff(void);
/* OpenSSL's own cipher test data through kuai (openssl_data.c). */
void test_openssl_data(const char *dir);
/* XTS, CCM, CFB, OFB and CMAC against OpenSSL's default provider and
 * libgcrypt (test_modes.c). */
void test_modes(void);
/* libssl over kuai, non-blocking: TLS 1.2 and 1.3 sessions, nothing left
 * on the error queue (test_libssl.c). */
void test_libssl(const char *dir);

#endif
