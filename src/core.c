/* SPDX-License-Identifier: Apache-2.0 */
/* Key setup and the small public helpers; the backend choice is src/registry.c. */
#include "internal.h"

#include <string.h>

/* The cipher list (src/ciphers.def), indexed by id (seam.h says why);
 * every per-cipher fact below is read from it. */
const kuai_cipher_row kuai_cipher_rows[KUAI_CIPHER_ROWS] = {
#define KUAI_CIPHER(id, name, block, key, family) [id] = {name, block, key, KUAI_FAMILY_##family},
#include "ciphers.def"
};

/* The ids in the list's order */
static const kuai_cipher cipher_ids[] = {
#define KUAI_CIPHER(id, name, block, key, family) id,
#include "ciphers.def"
};
#define N_CIPHERS (sizeof cipher_ids / sizeof cipher_ids[0])

size_t kuai_block_size(kuai_cipher c)
{
    return kuai_cipher_block(c);
}

size_t kuai_key_size(kuai_cipher c)
{
    return kuai_cipher_key(c);
}

const char *kuai_cipher_name(kuai_cipher c)
{
    const kuai_cipher_row *r = kuai_cipher_row_of(c);
    return r ? r->name : NULL;
}

size_t kuai_ciphers(kuai_cipher *list, size_t max)
{
    for (size_t i = 0; list && i < N_CIPHERS && i < max; i++)
        list[i] = cipher_ids[i];
    return N_CIPHERS;
}

/* ASCII only, whatever the locale: "SM4" and "sm4" are one cipher in every
 * locale (strcasecmp would follow LC_CTYPE, e.g. Turkish dotless i). */
static int ascii_lower(int ch)
{
    return ch >= 'A' && ch <= 'Z' ? ch - 'A' + 'a' : ch;
}

kuai_cipher kuai_cipher_by_name(const char *name)
{
    if (!name)
        return (kuai_cipher)0;
    for (size_t i = 0; i < N_CIPHERS; i++) {
        const char *a = name, *b = kuai_cipher_rows[cipher_ids[i]].name;
        while (*a && ascii_lower((unsigned char)*a) == *b) {
            a++;
            b++;
        }
        if (!*a && !*b)
            return cipher_ids[i];
    }
    return (kuai_cipher)0;
}

const char *kuai_version(void)
{
    return KUAI_VERSION;
}

const char *kuai_strerror(int err)
{
    switch (err) {
    case KUAI_OK:
        return "success";
    case KUAI_ERR_ARG:
        return "invalid argument (NULL pointer or malformed value)";
    case KUAI_ERR_KEY_LEN:
        return "key length does not match the cipher";
    case KUAI_ERR_LENGTH:
        /* also GCM's, CCM's and XTS's length limits, not only whole blocks */
        return "data length not valid for this mode (not a multiple of the block size, or over "
               "the mode's limit)";
    case KUAI_ERR_BACKEND:
        return "unknown backend, or backend not usable on this CPU";
    case KUAI_ERR_UNSUPPORTED:
        return "cipher or operation not supported by this build";
    case KUAI_ERR_AUTH:
        return "authentication failed";
    case KUAI_ERR_MISMATCH:
        return "keys of a multi-key call are not all the same cipher";
    case KUAI_ERR_KEY:
        return "key not initialised or already wiped";
    case KUAI_ERR_FORMAT:
        return "not a kuai file, or a header this version does not read";
    case KUAI_ERR_TRUNCATED:
        return "truncated: the input ends before its last chunk";
    case KUAI_ERR_EXTERNAL:
        return "libcrypto failed (out of memory, or no random bytes)";
    case KUAI_ERR_IO:
        return "read or write failed";
    }
    return "unknown error";
}

size_t kuai_backends(kuai_cipher c, const char **names, size_t max)
{
    size_t n = 0;
    for (const kuai_impl *const *p = kuai_impls(c); *p; p++) {
        if (!(*p)->available())
            continue;
        if (names && n < max)
            names[n] = (*p)->name;
        n++;
    }
    return n;
}

/* A key setup's checks after its pointers', and its backend *impl for
 * cipher c: the named one, else the registry's choice. */
static inline int setup_impl(kuai_cipher c, size_t key_len, const char *backend,
                             const kuai_impl **impl)
{
    const kuai_cipher_row *row = kuai_cipher_row_of(c);
    if (!row)
        return KUAI_ERR_ARG;
    /* The backend first: a key setup that finds one needs no other look
     * at the registry (the errors below keep their order: no backend at
     * all in this build, then the key's length, then the backend). */
    *impl = backend ? kuai_impl_named(c, backend) : kuai_impl_default(c);
    if (!*impl && kuai_impls(c)[0] == NULL)
        return KUAI_ERR_UNSUPPORTED;
    if (key_len != row->key)
        return KUAI_ERR_KEY_LEN;
    if (!*impl)
        return KUAI_ERR_BACKEND;
    return KUAI_OK;
}

static int key_setup(kuai_key *k, kuai_cipher c, const uint8_t *key, size_t key_len,
                     const char *backend)
{
    if (!k || !key)
        return KUAI_ERR_ARG;
    const kuai_impl *impl;
    int r = setup_impl(c, key_len, backend, &impl);
    if (r)
        return r;
    k->priv_magic = 0;
    k->priv_cipher = (uint32_t)c;
    k->priv_impl = impl;
    impl->expand(k, key);
    k->priv_magic = KUAI_KEY_MAGIC;
    return KUAI_OK;
}

/* Every check first (each key's pointers, then key_setup's): on an
 * error no key struct is written. Fours and pairs of keys go through the
 * backend's expand4 and expand2 where it has them. */
static int key_setup_multi(kuai_key *const *keys, kuai_cipher c, const uint8_t *const *key,
                           size_t key_len, size_t n, const char *backend)
{
    if (!keys || !key || n == 0)
        return KUAI_ERR_ARG;
    for (size_t i = 0; i < n; i++)
        if (!keys[i] || !key[i])
            return KUAI_ERR_ARG;
    const kuai_impl *impl;
    int r = setup_impl(c, key_len, backend, &impl);
    if (r)
        return r;
    for (size_t i = 0; i < n; i++) {
        keys[i]->priv_magic = 0;
        keys[i]->priv_cipher = (uint32_t)c;
        keys[i]->priv_impl = impl;
    }
    /* In index order, so that a struct named twice holds the later key
     * (as with kuai_key_init called in order): four distinct structs in
     * a row through expand4, two through expand2, else one by one. */
    for (size_t i = 0; i < n;) {
        kuai_key *const *g = keys + i;
        if (impl->expand4 && n - i >= 4 && g[0] != g[1] && g[0] != g[2] && g[0] != g[3] &&
            g[1] != g[2] && g[1] != g[3] && g[2] != g[3]) {
            impl->expand4(g, key + i);
            i += 4;
        } else if (impl->expand2 && n - i >= 2 && g[0] != g[1]) {
            impl->expand2(g[0], g[1], key[i], key[i + 1]);
            i += 2;
        } else {
            impl->expand(g[0], key[i]);
            i++;
        }
    }
    for (size_t i = 0; i < n; i++)
        keys[i]->priv_magic = KUAI_KEY_MAGIC;
    return KUAI_OK;
}

int kuai_key_init_multi(kuai_key *const *keys, kuai_cipher c, const uint8_t *const *key,
                        size_t key_len, size_t n)
{
    return key_setup_multi(keys, c, key, key_len, n, NULL);
}

int kuai_key_init_multi_backend(kuai_key *const *keys, kuai_cipher c, const uint8_t *const *key,
                                size_t key_len, size_t n, const char *backend)
{
    if (!backend)
        return KUAI_ERR_ARG;
    return key_setup_multi(keys, c, key, key_len, n, backend);
}

/* The backend comes from the registry's per-process choice: KUAI_BACKEND
 * and the leaky opt-in are read there, once (src/registry.c). */
int kuai_key_init(kuai_key *k, kuai_cipher c, const uint8_t *key, size_t key_len)
{
    return key_setup(k, c, key, key_len, NULL);
}

int kuai_key_init_backend(kuai_key *k, kuai_cipher c, const uint8_t *key, size_t key_len,
                          const char *backend)
{
    if (!backend)
        return KUAI_ERR_ARG;
    return key_setup(k, c, key, key_len, backend);
}

void kuai_key_wipe(kuai_key *k)
{
    if (k)
        kuai_wipe(k, sizeof *k);
}

const char *kuai_key_backend(const kuai_key *k)
{
    if (!k || k->priv_magic != KUAI_KEY_MAGIC)
        return NULL;
    return kuai_key_impl(k)->name;
}
