/* SPDX-License-Identifier: Apache-2.0 */
/*
 * XTS (IEEE Std 1619, NIST SP 800-38E; and GB/T 17964-2021) with ciphertext
 * stealing, for the 128-bit-block ciphers.
 *
 * The two standards differ only in how the tweak is multiplied by x from one
 * block to the next. IEEE 1619 reads the tweak as a little-endian 128-bit
 * number: T <- T << 1, reduced by 0x87 into the low byte. GB/T 17964 reads
 * it as big-endian with the bits reflected, GCM's convention: T <- T >> 1,
 * reduced by 0xE1 into the top byte (OpenSSL's crypto/modes/xts128gb.c).
 * Ciphertext stealing is the same in both.
 *
 * Speed: a chunk (KUAI_CHUNK_BLOCKS blocks) at a time, the tweaks are made
 * with the tweak held in two 64-bit words and the reduction taken by mask,
 * never by branch (the tweak is secret), and XORed into the input in the
 * same pass; then the backend's enc_blocks/dec_blocks run over the whole
 * chunk (so the wide kernels run at full width), and a second pass XORs
 * the tweaks again.
 */
#include "modes.h"

/* IEEE Std 1619-2018: at most 2^20 blocks per data unit (OpenSSL enforces
 * the same for both standards). */
#define XTS_MAX_LEN ((size_t)16 << 20)

/* 64-bit words in either byte order through memcpy and a byte swap: one
 * load or store each (byte-at-a-time stores would cost 16 store-port slots
 * per tweak, more than AES-NI spends on the block). */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define HOST_BE 1
#else
#define HOST_BE 0
#endif

static inline uint64_t load64(const uint8_t *p, int be)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return be != HOST_BE ? __builtin_bswap64(v) : v;
}

/* The current tweak as two words: IEEE holds (lo, hi) of the little-endian
 * number, GB holds (hi, lo) of the big-endian one, in w[0], w[1]. */
typedef struct xts_tweak {
    uint64_t w[2];
    int gb;
} xts_tweak;

static void tweak_load(xts_tweak *t, const uint8_t b[16], int gb)
{
    t->gb = gb;
    t->w[0] = load64(b, gb);
    t->w[1] = load64(b + 8, gb);
}

/* n successive tweaks into tw (16 n bytes) and in ^ tweak into out (in ==
 * out allowed), in one pass; t then holds the next tweak. The loop of each
 * standard is branch-free inside. */
static void tweaks_xor(xts_tweak *t, uint8_t *tw, const uint8_t *in, uint8_t *out, size_t n)
{
    uint64_t a = t->w[0], b = t->w[1];
    const int be = t->gb;
    for (size_t i = 0; i < n; i++) {
        /* the tweak's 16 bytes as one vector: two 16-byte stores a block */
        kuai_u64x2 tv = {be != HOST_BE ? __builtin_bswap64(a) : a,
                         be != HOST_BE ? __builtin_bswap64(b) : b},
                   x;
        memcpy(tw + 16 * i, &tv, 16);
        memcpy(&x, in + 16 * i, 16);
        x ^= tv;
        memcpy(out + 16 * i, &x, 16);
        if (be) {
            uint64_t red = (0 - (b & 1)) & UINT64_C(0xe100000000000000);
            b = b >> 1 | a << 63;
            a = a >> 1 ^ red;
        } else {
            uint64_t red = (0 - (b >> 63)) & 0x87;
            b = b << 1 | a >> 63;
            a = a << 1 ^ red;
        }
    }
    t->w[0] = a;
    t->w[1] = b;
}

typedef void (*blocks_fn)(const kuai_key *k, const uint8_t *in, uint8_t *out, size_t nblocks);

/* One block under tweak tw: out = F(in ^ tw) ^ tw. */
static void xts_block(const kuai_key *k, blocks_fn f, const uint8_t tw[16], const uint8_t *in,
                      uint8_t *out)
{
    uint8_t x[16];
    xor_bytes(x, in, tw, 16);
    f(k, x, x, 1);
    xor_bytes(out, x, tw, 16);
    kuai_wipe(x, sizeof x);
}

static int xts_check(const kuai_key *k1, const kuai_key *k2, const uint8_t *tweak,
                     const uint8_t *in, const uint8_t *out, size_t len, kuai_xts_standard std)
{
    int r = kuai_key_check(k1);
    if (r)
        return r;
    if ((r = kuai_key_check(k2)))
        return r;
    if (kuai_cipher_block((kuai_cipher)k1->priv_cipher) != 16)
        return KUAI_ERR_UNSUPPORTED;
    if (k1->priv_cipher != k2->priv_cipher)
        return KUAI_ERR_MISMATCH;
    if (!tweak || (std != KUAI_XTS_IEEE1619 && std != KUAI_XTS_GB17964))
        return KUAI_ERR_ARG;
    if (len < 16 || len > XTS_MAX_LEN)
        return KUAI_ERR_LENGTH;
    if (!buffers_ok(in, out, len))
        return KUAI_ERR_ARG;
    return KUAI_OK;
}

static int xts_crypt(const kuai_key *k1, const kuai_key *k2, const uint8_t *tweak,
                     const uint8_t *in, uint8_t *out, size_t len, kuai_xts_standard std, int enc)
{
    int r = xts_check(k1, k2, tweak, in, out, len, std);
    if (r)
        return r;
    /* One key for data and tweak makes XTS insecure (Rogaway's attack):
     * not encrypted under, as OpenSSL's equal halves; decryption of data
     * made so elsewhere is allowed, as there. */
    if (enc && k1 == k2)
        return KUAI_ERR_ARG;
    const kuai_impl *impl = kuai_key_impl(k1);
    blocks_fn f = enc ? impl->enc_blocks : impl->dec_blocks;
    uint8_t tw[KUAI_CHUNK_BLOCKS * 16];
    xts_tweak t;
    kuai_key_impl(k2)->enc_blocks(k2, tweak, tw, 1);
    tweak_load(&t, tw, std == KUAI_XTS_GB17964);

    /* With a partial last block, the last whole block takes part in the
     * stealing and is left out of the bulk pass. */
    size_t rest = len % 16, bulk = len / 16 - (rest ? 1 : 0);
    for (size_t done = 0; done < bulk;) {
        size_t n = bulk - done < KUAI_CHUNK_BLOCKS ? bulk - done : KUAI_CHUNK_BLOCKS;
        tweaks_xor(&t, tw, in + 16 * done, out + 16 * done, n);
        f(k1, out + 16 * done, out + 16 * done, n);
        xor_bytes(out + 16 * done, out + 16 * done, tw, 16 * n);
        done += n;
    }
    if (rest) {
        /* Blocks m-1 (whole, at p) and m (rest bytes, at p + 16), tweaks
         * T_{m-1} in tw and T_m in tw + 16. Encryption: CC = E(P_{m-1}) under
         * T_{m-1}; C_m = the first rest bytes of CC; C_{m-1} = E(P_m || the
         * rest of CC) under T_m. Decryption swaps the two tweaks. */
        size_t p = 16 * bulk;
        uint8_t last[16], cc[16];
        uint8_t two[32] = {0};
        tweaks_xor(&t, tw, two, two, 2);
        memcpy(last, in + p + 16, rest);
        xts_block(k1, f, enc ? tw : tw + 16, in + p, cc);
        memcpy(last + rest, cc + rest, 16 - rest);
        memcpy(out + p + 16, cc, rest);
        xts_block(k1, f, enc ? tw + 16 : tw, last, out + p);
        kuai_wipe(last, sizeof last);
        kuai_wipe(cc, sizeof cc);
        /* tweaks_xor left T_{m-1} and T_m here too (zeros XOR tweak):
         * secret as tw's copies; at -O2 gcc drops the stores as dead,
         * at -O0/-O1/-Os they stayed on the stack */
        kuai_wipe(two, sizeof two);
    }
    kuai_wipe(tw, sizeof tw);
    kuai_wipe(&t, sizeof t);
    return KUAI_OK;
}

int kuai_xts_encrypt(const kuai_key *data_key, const kuai_key *tweak_key, const uint8_t tweak[16],
                     const uint8_t *in, uint8_t *out, size_t len, kuai_xts_standard std)
{
    return xts_crypt(data_key, tweak_key, tweak, in, out, len, std, 1);
}

int kuai_xts_decrypt(const kuai_key *data_key, const kuai_key *tweak_key, const uint8_t tweak[16],
                     const uint8_t *in, uint8_t *out, size_t len, kuai_xts_standard std)
{
    return xts_crypt(data_key, tweak_key, tweak, in, out, len, std, 0);
}
