/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libssl over kuai, non-blocking: TLS 1.2 (CBC with and without
 * encrypt-then-MAC, GCM, CCM and CCM_8), TLS 1.3 (GCM and CCM, a key
 * update) and DTLS 1.2 (a
 * changed record met as the default provider meets it) between two SSL
 * objects in one process, their records moved by hand through memory BIOs,
 * in a library context where kuai is preferred for every fetch (as
 * docs/openssl-provider.md configures it). Besides the data arriving, it
 * checks what a non-blocking application relies on: no call that succeeds
 * or merely waits leaves an error on the thread's queue, since
 * SSL_get_error reads the queue first and would turn a WANT_READ into
 * SSL_ERROR_SSL. A record changed in transit must fail, with an error
 * queued.
 */
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/provider.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <string.h>

#include "provider_test.h"

typedef struct {
    SSL *ssl;
    BIO *rd, *wr; /* memory BIOs: what the peer sent, what this side sends */
} tls_end;

/* Everything one side wrote, to the other side's input; tamper: the last
 * byte of it changed (the last record's MAC or tag). */
static void tls_move(tls_end *from, tls_end *to, int tamper)
{
    char buf[32768];
    int n;
    while ((n = BIO_read(from->wr, buf, sizeof buf)) > 0) {
        if (tamper && BIO_pending(from->wr) == 0)
            buf[n - 1] ^= 1;
        BIO_write(to->rd, buf, n);
    }
}

/* No error queued: a call that returned, or waits for the peer, raised
 * nothing. */
static void tls_queue_empty(const char *what, const char *step)
{
    unsigned long e = ERR_peek_error();
    char text[256] = "";
    if (e != 0)
        ERR_error_string_n(e, text, sizeof text);
    CHECK(e == 0, "libssl %s, %s: an error left on the queue: %s", what, step, text);
    ERR_clear_error();
}

static int tls_waits(SSL *ssl, int r)
{
    int e = SSL_get_error(ssl, r);
    return e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE;
}

/* A server and a client in lib, their records through memory BIOs. */
typedef struct {
    SSL_CTX *sc, *cc;
    tls_end s, c;
} tls_pair;

static void tls_pair_close(tls_pair *p)
{
    SSL_free(p->s.ssl);
    SSL_free(p->c.ssl);
    SSL_CTX_free(p->sc);
    SSL_CTX_free(p->cc);
}

/* Both ends at version (DTLS1_2_VERSION: DTLS, each BIO_write a datagram's
 * worth, a fixed MTU as a memory BIO has no path to ask), the suite (TLS
 * 1.3's by its own list), encrypt-then-MAC or not, then the handshake, no
 * call of which may leave an error queued. 1: done. */
static int tls_pair_open(tls_pair *p, OSSL_LIB_CTX *lib, EVP_PKEY *pkey, X509 *cert,
                         const char *what, int version, const char *suite, int etm)
{
    const int dtls = version == DTLS1_2_VERSION;
    memset(p, 0, sizeof *p);
    p->sc = SSL_CTX_new_ex(lib, NULL, dtls ? DTLS_server_method() : TLS_server_method());
    p->cc = SSL_CTX_new_ex(lib, NULL, dtls ? DTLS_client_method() : TLS_client_method());
    CHECK(p->sc != NULL && p->cc != NULL, "libssl %s: SSL_CTX_new_ex", what);
    if (p->sc == NULL || p->cc == NULL)
        return 0;
    SSL_CTX_use_certificate(p->sc, cert);
    SSL_CTX_use_PrivateKey(p->sc, pkey);
    for (SSL_CTX *x = p->sc; x != NULL; x = x == p->sc ? p->cc : NULL) {
        SSL_CTX_set_min_proto_version(x, version);
        SSL_CTX_set_max_proto_version(x, version);
        if (version == TLS1_3_VERSION)
            SSL_CTX_set_ciphersuites(x, suite);
        else
            SSL_CTX_set_cipher_list(x, suite);
        SSL_CTX_set_options(x, (etm ? 0 : SSL_OP_NO_ENCRYPT_THEN_MAC) |
                                   (dtls ? SSL_OP_NO_QUERY_MTU : 0));
    }
    p->s = (tls_end){SSL_new(p->sc), BIO_new(BIO_s_mem()), BIO_new(BIO_s_mem())};
    p->c = (tls_end){SSL_new(p->cc), BIO_new(BIO_s_mem()), BIO_new(BIO_s_mem())};
    SSL_set_bio(p->s.ssl, p->s.rd, p->s.wr);
    SSL_set_bio(p->c.ssl, p->c.rd, p->c.wr);
    if (dtls) {
        DTLS_set_link_mtu(p->s.ssl, 1400);
        DTLS_set_link_mtu(p->c.ssl, 1400);
    }
    SSL_set_accept_state(p->s.ssl);
    SSL_set_connect_state(p->c.ssl);
    ERR_clear_error();

    int done = 0, broken = 0;
    for (int i = 0; i < 20 && done != 3 && !broken; i++) {
        int r = SSL_do_handshake(p->c.ssl);
        if (r == 1)
            done |= 1;
        else if (!tls_waits(p->c.ssl, r))
            broken = 1;
        tls_move(&p->c, &p->s, 0);
        r = SSL_do_handshake(p->s.ssl);
        if (r == 1)
            done |= 2;
        else if (!tls_waits(p->s.ssl, r))
            broken = 1;
        tls_move(&p->s, &p->c, 0);
        if (!broken)
            tls_queue_empty(what, "handshake");
    }
    CHECK(done == 3, "libssl %s: no handshake", what);
    if (done != 3)
        ERR_print_errors_fp(stdout);
    ERR_clear_error();
    return done == 3;
}

/* Records of each length both ways: read whole, then an empty input reads
 * as WANT_READ, nothing queued. */
static unsigned char tls_msg[20000];
static void tls_exchange(tls_pair *p, const char *what, const int *lens, size_t nlens)
{
    static unsigned char in[20000];
    for (size_t i = 0; i < sizeof tls_msg; i++)
        tls_msg[i] = (unsigned char)(i * 7 + 3);
    for (size_t k = 0; k < nlens; k++) {
        int n = lens[k];
        for (int dir = 0; dir < 2; dir++) {
            tls_end *a = dir ? &p->s : &p->c, *b = dir ? &p->c : &p->s;
            CHECK(SSL_write(a->ssl, tls_msg, n) == n, "libssl %s: write %d", what, n);
            tls_move(a, b, 0);
            int got = 0, r;
            while (got < n && (r = SSL_read(b->ssl, in + got, (int)sizeof in - got)) > 0)
                got += r;
            CHECK(got == n && memcmp(in, tls_msg, (size_t)n) == 0, "libssl %s: %d bytes read as %d",
                  what, n, got);
            r = SSL_read(b->ssl, in, sizeof in);
            CHECK(SSL_get_error(b->ssl, r) == SSL_ERROR_WANT_READ,
                  "libssl %s: an empty input reads as %d, not WANT_READ", what,
                  SSL_get_error(b->ssl, r));
            tls_queue_empty(what, "data");
        }
    }
}

static void tls_session(OSSL_LIB_CTX *lib, EVP_PKEY *pkey, X509 *cert, const char *what,
                        int version, const char *suite, int etm)
{
    tls_pair p;
    unsigned char in[200];
    if (!tls_pair_open(&p, lib, pkey, cert, what, version, suite, etm))
        goto out;
    /* lengths around a block and a record's edges */
    static const int lens[] = {1, 15, 16, 17, 255, 1000, 16384, 20000};
    tls_exchange(&p, what, lens, sizeof lens / sizeof lens[0]);
    if (version == TLS1_3_VERSION) {
        /* new traffic keys on both sides, the next records under them */
        CHECK(SSL_key_update(p.c.ssl, SSL_KEY_UPDATE_REQUESTED) == 1, "libssl %s: key update",
              what);
        for (int round = 0; round < 2; round++) {
            CHECK(SSL_write(p.c.ssl, tls_msg, 100) == 100, "libssl %s: write after key update",
                  what);
            tls_move(&p.c, &p.s, 0);
            CHECK(SSL_read(p.s.ssl, in, sizeof in) == 100 && memcmp(in, tls_msg, 100) == 0,
                  "libssl %s: read after key update", what);
            CHECK(SSL_write(p.s.ssl, tls_msg, 100) == 100, "libssl %s: answer after key update",
                  what);
            tls_move(&p.s, &p.c, 0);
            CHECK(SSL_read(p.c.ssl, in, sizeof in) == 100 && memcmp(in, tls_msg, 100) == 0,
                  "libssl %s: read of the answer after key update", what);
            tls_queue_empty(what, "key update");
        }
    }
    /* A record changed in transit: the read fails, and says why. */
    CHECK(SSL_write(p.c.ssl, tls_msg, 64) == 64, "libssl %s: write", what);
    tls_move(&p.c, &p.s, 1);
    int r = SSL_read(p.s.ssl, in, sizeof in);
    CHECK(r <= 0 && SSL_get_error(p.s.ssl, r) == SSL_ERROR_SSL && ERR_peek_error() != 0,
          "libssl %s: a changed record read as %d (error %d)", what, r, SSL_get_error(p.s.ssl, r));
    ERR_clear_error();
out:
    tls_pair_close(&p);
}

/*
 * DTLS 1.2, kuai or the default provider answering libssl's fetches as lib
 * prefers: a handshake, a few records each way, then a record changed in
 * transit and one after it. DTLS drops a record that fails (GCM, or CBC's
 * padding and MAC without encrypt-then-MAC) and reads on, and stops at a
 * bad encrypt-then-MAC MAC: out[] gets what the changed record's SSL_read
 * returned, SSL_get_error said, whether an error was queued, and what the
 * next record's read returned, for the caller to compare between the
 * providers. 0: no handshake.
 */
static int dtls_session(OSSL_LIB_CTX *lib, EVP_PKEY *pkey, X509 *cert, const char *what,
                        const char *suite, int etm, int out[4])
{
    tls_pair p;
    unsigned char in[200];
    int done = tls_pair_open(&p, lib, pkey, cert, what, DTLS1_2_VERSION, suite, etm);
    if (done) {
        static const int lens[] = {1, 16, 17, 255, 1000};
        tls_exchange(&p, what, lens, sizeof lens / sizeof lens[0]);
        CHECK(SSL_write(p.c.ssl, tls_msg, 64) == 64, "libssl %s: write", what);
        tls_move(&p.c, &p.s, 1);
        out[0] = SSL_read(p.s.ssl, in, sizeof in);
        out[1] = SSL_get_error(p.s.ssl, out[0]);
        out[2] = ERR_peek_error() != 0;
        ERR_clear_error();
        SSL_write(p.c.ssl, tls_msg, 64);
        tls_move(&p.c, &p.s, 0);
        out[3] = SSL_read(p.s.ssl, in, sizeof in);
        ERR_clear_error();
    }
    tls_pair_close(&p);
    return done;
}

void test_libssl(const char *dir)
{
    OSSL_LIB_CTX *lib = OSSL_LIB_CTX_new(), *ref = NULL;
    OSSL_PROVIDER *kuai = NULL, *dflt = NULL, *ref_dflt = NULL;
    EVP_PKEY *pkey = NULL;
    X509 *cert = X509_new_ex(lib, NULL);
    if (lib == NULL || !OSSL_PROVIDER_set_default_search_path(lib, dir) ||
        (kuai = OSSL_PROVIDER_load(lib, "kuai")) == NULL ||
        (dflt = OSSL_PROVIDER_load(lib, "default")) == NULL ||
        !EVP_set_default_properties(lib, "?provider=kuai") ||
        (pkey = EVP_PKEY_Q_keygen(lib, NULL, "EC", "P-256")) == NULL || cert == NULL) {
        CHECK(0, "libssl: set-up of the library context, provider or key");
        goto out;
    }
    EVP_CIPHER *aes = EVP_CIPHER_fetch(lib, "AES-128-GCM", "provider=kuai");
    EVP_CIPHER_free(aes);
    if (aes == NULL) {
        printf("SKIP libssl: the kuai provider offers no AES (no AES in this kuai build)\n");
        goto out;
    }
    /* kuai answers the fetches libssl makes for these records */
    static const char *const fetched[] = {"AES-128-CBC", "AES-256-CBC", "AES-128-GCM",
                                          "AES-256-GCM"};
    for (size_t i = 0; i < sizeof fetched / sizeof fetched[0]; i++) {
        EVP_CIPHER *ciph = EVP_CIPHER_fetch(lib, fetched[i], NULL);
        CHECK(ciph != NULL &&
                  strcmp(OSSL_PROVIDER_get0_name(EVP_CIPHER_get0_provider(ciph)), "kuai") == 0,
              "libssl: %s not fetched from kuai", fetched[i]);
        EVP_CIPHER_free(ciph);
    }
    X509_set_version(cert, X509_VERSION_3);
    ASN1_INTEGER_set(X509_get_serialNumber(cert), 1);
    X509_gmtime_adj(X509_getm_notBefore(cert), 0);
    X509_gmtime_adj(X509_getm_notAfter(cert), 3600);
    X509_set_pubkey(cert, pkey);
    X509_NAME_add_entry_by_txt(X509_get_subject_name(cert), "CN", MBSTRING_ASC,
                               (const unsigned char *)"localhost", -1, -1, 0);
    X509_set_issuer_name(cert, X509_get_subject_name(cert));
    CHECK(X509_sign(cert, pkey, EVP_sha256()) > 0, "libssl: certificate");

    tls_session(lib, pkey, cert, "TLS 1.2 AES128-SHA, encrypt-then-MAC", TLS1_2_VERSION,
                "ECDHE-ECDSA-AES128-SHA", 1);
    tls_session(lib, pkey, cert, "TLS 1.2 AES256-SHA384, encrypt-then-MAC", TLS1_2_VERSION,
                "ECDHE-ECDSA-AES256-SHA384", 1);
    tls_session(lib, pkey, cert, "TLS 1.2 AES256-SHA384, MAC-then-encrypt", TLS1_2_VERSION,
                "ECDHE-ECDSA-AES256-SHA384", 0);
    tls_session(lib, pkey, cert, "TLS 1.2 AES128-GCM", TLS1_2_VERSION,
                "ECDHE-ECDSA-AES128-GCM-SHA256", 1);
    /* CCM records: each sealed one spends its nonce (fixed IV || sequence
     * number), which libssl's counting must meet */
    tls_session(lib, pkey, cert, "TLS 1.2 AES128-CCM", TLS1_2_VERSION, "ECDHE-ECDSA-AES128-CCM", 1);
    tls_session(lib, pkey, cert, "TLS 1.2 AES256-CCM8", TLS1_2_VERSION, "ECDHE-ECDSA-AES256-CCM8",
                1);
    tls_session(lib, pkey, cert, "TLS 1.3 AES_128_CCM", TLS1_3_VERSION, "TLS_AES_128_CCM_SHA256",
                1);
    tls_session(lib, pkey, cert, "TLS 1.3 AES_128_GCM", TLS1_3_VERSION, "TLS_AES_128_GCM_SHA256",
                1);
    tls_session(lib, pkey, cert, "TLS 1.3 AES_256_GCM", TLS1_3_VERSION, "TLS_AES_256_GCM_SHA384",
                1);

    /* DTLS 1.2: kuai and, in a second library context, the default
     * provider, which must meet a changed record alike */
    ref = OSSL_LIB_CTX_new();
    if (ref == NULL || !OSSL_PROVIDER_set_default_search_path(ref, dir) ||
        (ref_dflt = OSSL_PROVIDER_load(ref, "default")) == NULL) {
        CHECK(0, "libssl: set-up of the default provider's library context");
        goto out;
    }
    static const struct {
        const char *what, *suite;
        int etm;
    } dtls[] = {
        {"DTLS 1.2 AES128-GCM", "ECDHE-ECDSA-AES128-GCM-SHA256", 1},
        {"DTLS 1.2 AES256-SHA384, encrypt-then-MAC", "ECDHE-ECDSA-AES256-SHA384", 1},
        {"DTLS 1.2 AES256-SHA384, MAC-then-encrypt", "ECDHE-ECDSA-AES256-SHA384", 0},
    };
    for (size_t i = 0; i < sizeof dtls / sizeof dtls[0]; i++) {
        int k[4] = {0, 0, 0, 0}, d[4] = {0, 0, 0, 0};
        CHECK(dtls_session(lib, pkey, cert, dtls[i].what, dtls[i].suite, dtls[i].etm, k),
              "libssl %s: no handshake on kuai", dtls[i].what);
        CHECK(dtls_session(ref, pkey, cert, dtls[i].what, dtls[i].suite, dtls[i].etm, d),
              "libssl %s: no handshake on the default provider", dtls[i].what);
        CHECK(memcmp(k, d, sizeof k) == 0,
              "libssl %s: a changed record read %d, error %d, queued %d, next read %d on kuai; "
              "%d, %d, %d, %d on the default provider",
              dtls[i].what, k[0], k[1], k[2], k[3], d[0], d[1], d[2], d[3]);
    }
out:
    ERR_clear_error();
    X509_free(cert);
    EVP_PKEY_free(pkey);
    OSSL_PROVIDER_unload(kuai);
    OSSL_PROVIDER_unload(dflt);
    OSSL_PROVIDER_unload(ref_dflt);
    OSSL_LIB_CTX_free(lib);
    OSSL_LIB_CTX_free(ref);
}
