/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The padding and MAC of a decrypted TLS 1.0-1.2 or DTLS CBC record
 * (kuai_provider.c's kp_cbc_tls_record), without a branch or a memory index
 * on any byte of the record: the record's length is public, its padding's
 * is not, and a decryption that took longer for a good padding than for a
 * bad one would tell an attacker which (Lucky 13). The padding is its
 * length byte p and p bytes of value p before it (RFC 5246, 6.2.3.2); every
 * byte that could be padding is read, whatever p is.
 */
#include "kuai_prov_tls.h"

/* Masks over size_t (all ones or zero). The empty asm keeps the compiler
 * from making a mask back into a branch; on an index, it keeps the index
 * public: gcc had folded the secret padding length into the loops' pointers
 * (rec + len - pad, advanced by pad - i), a sum still public but that
 * valgrind's check (make test-ct) cannot see through, and a compiler is free
 * to make into something less clean. */
static size_t ct_barrier(size_t x)
{
    __asm__("" : "+r"(x));
    return x;
}

/* a < b: the borrow of a - b, read from the top bit */
static size_t ct_lt(size_t a, size_t b)
{
    return ct_barrier(0 - ((a ^ ((a ^ b) | ((a - b) ^ b))) >> (sizeof(size_t) * 8 - 1)));
}

static size_t ct_eq(size_t a, size_t b)
{
    const size_t x = a ^ b;
    return ct_barrier(0 - ((~x & (x - 1)) >> (sizeof(size_t) * 8 - 1)));
}

size_t kp_tls_cbc_unpad(const uint8_t *rec, size_t len, size_t mac_size, const uint8_t *rnd,
                        size_t *data_len, uint8_t *mac)
{
    const size_t pad = rec[len - 1];
    size_t good = ~ct_lt(len, 1 + mac_size + pad);
    const size_t to_check = len < 256 ? len : 256;
    for (size_t i = 0; i < to_check; i++) {
        const size_t in_pad = ~ct_lt(pad, i); /* i <= pad */
        good &= ~(in_pad & (size_t)(rec[ct_barrier(len - 1 - i)] ^ pad));
    }
    good = ct_eq(good & 0xff, 0xff);
    const size_t reclen = len - (good & (pad + 1));
    *data_len = reclen - mac_size;
    if (mac_size == 0)
        return good;

    /* The MAC ends at reclen, somewhere in the last mac_size + 256 bytes
     * (a padding is at most 256 bytes). Each of those bytes goes to rot[]
     * at its position mod mac_size, where only the MAC's count: rot is the
     * MAC turned by off, which is found the same way. Then each byte of the
     * MAC is picked out of all of rot. */
    uint8_t rot[KP_TLS_MAC_MAX] = {0};
    const size_t mac_start = reclen - mac_size;
    const size_t scan = len > mac_size + 256 ? len - (mac_size + 256) : 0;
    size_t in_mac = 0, off = 0, j = 0;
    for (size_t i = scan; i < len; i++) {
        const size_t start = ct_eq(i, mac_start);
        in_mac = (in_mac | start) & ct_lt(i, reclen);
        off |= j & start;
        rot[ct_barrier(j)] |= rec[ct_barrier(i)] & (uint8_t)in_mac;
        j = (j + 1) & ct_lt(j + 1, mac_size);
    }
    size_t at = off; /* the MAC's byte i is rot[(off + i) mod mac_size] */
    for (size_t i = 0; i < mac_size; i++) {
        uint8_t b = 0;
        for (size_t k = 0; k < mac_size; k++)
            b |= rot[ct_barrier(k)] & (uint8_t)ct_eq(k, at);
        /* a bad padding: a random MAC, so that libssl's check fails */
        const size_t ii = ct_barrier(i);
        mac[ii] = (uint8_t)((b & good) | (rnd[ii] & ~good));
        at += 1;
        at -= mac_size & ~ct_lt(at, mac_size);
    }
    /* not OPENSSL_cleanse: no OpenSSL here; volatile, so the stores stay */
    for (size_t k = 0; k < sizeof rot; k++)
        ((volatile uint8_t *)rot)[k] = 0;
    return good;
}
