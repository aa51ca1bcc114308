/* SPDX-License-Identifier: Apache-2.0 */
/* A TLS/DTLS CBC record's padding and MAC, taken off in constant time
 * (kuai_prov_tls.c): no OpenSSL in it, so make test-ct checks it alone. */
#ifndef KUAI_PROV_TLS_H
#define KUAI_PROV_TLS_H

#include <stddef.h>
#include <stdint.h>

/* The longest MAC a record can carry (OpenSSL's EVP_MAX_MD_SIZE). */
#define KP_TLS_MAC_MAX 64

/* rec: a decrypted record after its explicit IV, len bytes, at least
 * mac_size + 1 (the caller checks those public lengths; mac_size <=
 * KP_TLS_MAC_MAX). Returns an all-ones mask where the padding is good,
 * else 0; *data_len is the length of the data before the MAC (the padding
 * taken off where good, none where not) and mac[0..mac_size) the MAC that
 * follows it, or rnd's bytes where the padding is bad. No branch and no
 * memory index depend on a byte of rec. */
size_t kp_tls_cbc_unpad(const uint8_t *rec, size_t len, size_t mac_size, const uint8_t *rnd,
                        size_t *data_len, uint8_t *mac);

#endif
