/* SPDX-License-Identifier: Apache-2.0 */
/*
 * kuai._kuai.Key: a key schedule (kuai_key), or two for XTS, read-only
 * after __new__, and its one-shot GCM and CCM methods; the batch and
 * packed methods it also carries are batch.c's and packed.c's.
 */
#include "kuai_py.h"

int kpy_is_key(PyObject *o)
{
    return PyObject_TypeCheck(o, (PyTypeObject *)kpy_KeyType);
}

/* The characters of a UTF-8 string (its bytes that start one). */
static size_t utf8_chars(const char *s)
{
    size_t n = 0;
    for (; *s != 0; s++) {
        n += ((unsigned char)*s & 0xc0) != 0x80;
    }
    return n;
}

/* Whether an unknown backend name may be repeated in the error: shorter
 * than 16 characters and printable ASCII, kuai._names.shown's rule for
 * cipher names. A key passed by mistake as backend= (Key(c, key, key_hex),
 * or a 16-character string key) reached the message, and so the logs;
 * every backend name is shorter. */
static int name_shown(const char *s)
{
    size_t n = 0;
    for (; s[n] != 0; n++) {
        if ((unsigned char)s[n] < 0x20 || (unsigned char)s[n] > 0x7e) {
            return 0;
        }
    }
    return n < 16;
}

/* The error of a key set up with no backend named: only KUAI_BACKEND makes
 * that fail. The library says why when it knows: a backend that leaks
 * through the cache needs the opt-in too, which kuai.backends() cannot
 * show (it lists ttable). */
static void backend_env_error(kuai_cipher c)
{
    const char *leaky = kuai_backend_env_refused(c);
    if (leaky)
        PyErr_Format(PyExc_ValueError,
                     "KUAI_BACKEND chose %s for %s, which leaks through the cache and is taken "
                     "only with KUAI_ALLOW_LEAKY_BACKENDS=1",
                     leaky, kuai_cipher_name(c));
    else
        PyErr_Format(PyExc_ValueError,
                     "KUAI_BACKEND chooses no backend usable for %s on this CPU "
                     "(see kuai.backends())",
                     kuai_cipher_name(c));
}

/* Sets up *dst (PyMem_Malloc'd into *dst) for cipher from key[0..len),
 * with backend be (NULL: the default); 0, or -1 with the error raised. */
static int key_setup(kuai_key **dst, int cipher, const uint8_t *key, size_t len, const char *be)
{
    *dst = PyMem_Malloc(sizeof(kuai_key));
    if (*dst == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    int rc = be ? kuai_key_init_backend(*dst, (kuai_cipher)cipher, key, len, be)
                : kuai_key_init(*dst, (kuai_cipher)cipher, key, len);
    if (rc != KUAI_OK) {
        if (rc == KUAI_ERR_BACKEND && be != NULL && !name_shown(be)) {
            PyErr_Format(PyExc_ValueError,
                         "backend name of %zu characters (not shown: it may be a key) is not "
                         "available for %s on this CPU (see kuai.backends())",
                         utf8_chars(be), kuai_cipher_name((kuai_cipher)cipher));
        } else if (rc == KUAI_ERR_BACKEND && be != NULL) {
            PyErr_Format(PyExc_ValueError,
                         "backend '%s' is not available for %s on this CPU "
                         "(see kuai.backends())",
                         be, kuai_cipher_name((kuai_cipher)cipher));
        } else if (rc == KUAI_ERR_BACKEND) {
            backend_env_error((kuai_cipher)cipher);
        } else {
            kpy_raise(rc, "key setup");
        }
        return -1;
    }
    return 0;
}

/* Key(cipher: int, key: bytes-like, backend: str | None = None, xts=False,
 * tag_length=16, aead=None). xts: key is two keys of the cipher, data key
 * || tweak key (a 128-bit-block cipher only), for XTS streams only.
 * tag_length: the tag of ccm_encrypt/ccm_decrypt (4, 6, ..., 16). aead:
 * "gcm" or "ccm", a kuai.aead class's key, for that mode only. */
static PyObject *key_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"cipher", "key", "backend", "xts", "tag_length", "aead", NULL};
    int cipher, xts = 0, aead = 0;
    Py_ssize_t tag_len = GCM_TAG;
    PyObject *keyobj, *backend = Py_None, *aeadobj = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "iO|OpnO:Key", kwlist, &cipher, &keyobj, &backend,
                                     &xts, &tag_len, &aeadobj)) {
        return NULL;
    }
    if (aeadobj != Py_None) {
        const char *a = PyUnicode_Check(aeadobj) ? PyUnicode_AsUTF8AndSize(aeadobj, NULL) : NULL;
        if (a == NULL) {
            PyErr_Clear();
        }
        aead = a == NULL               ? -1
               : strcmp(a, "gcm") == 0 ? KPY_AEAD_GCM
               : strcmp(a, "ccm") == 0 ? KPY_AEAD_CCM
                                       : -1;
        if (aead < 0 || xts) {
            PyErr_SetString(PyExc_ValueError, "aead must be None, 'gcm' or 'ccm' (not with xts)");
            return NULL;
        }
    }
    if (kuai_cipher_name((kuai_cipher)cipher) == NULL) {
        PyErr_Format(PyExc_ValueError, "unknown cipher id %d", cipher);
        return NULL;
    }
    if (tag_len < 4 || tag_len > 16 || tag_len % 2 != 0) {
        PyErr_SetString(PyExc_ValueError, "Invalid tag_length");
        return NULL;
    }
    if (xts && kuai_block_size((kuai_cipher)cipher) != 16) {
        PyErr_Format(PyExc_ValueError, "XTS needs a 128-bit-block cipher, not %s",
                     kuai_cipher_name((kuai_cipher)cipher));
        return NULL;
    }
    const char *be = NULL;
    if (backend != Py_None) {
        if (!PyUnicode_Check(backend)) {
            PyErr_SetString(PyExc_TypeError, "backend must be a str or None");
            return NULL;
        }
        Py_ssize_t be_len;
        be = PyUnicode_AsUTF8AndSize(backend, &be_len);
        if (be == NULL) {
            return NULL;
        }
        if (strlen(be) != (size_t)be_len) {
            /* the C name would end at the NUL: another backend's name */
            PyErr_SetString(PyExc_ValueError, "backend name contains a NUL character");
            return NULL;
        }
    }
    Py_buffer kb;
    if (get_ro(keyobj, &kb, "key") < 0) {
        return NULL;
    }
    size_t want = kuai_key_size((kuai_cipher)cipher);
    if ((size_t)kb.len != (xts ? 2 * want : want)) {
        PyErr_Format(PyExc_ValueError, "Invalid key size (%zd bits) for %s%s: %zu bits needed",
                     kb.len * 8, kuai_cipher_name((kuai_cipher)cipher), xts ? "-xts" : "",
                     (xts ? 2 * want : want) * 8);
        PyBuffer_Release(&kb);
        return NULL;
    }
    allocfunc alloc = (allocfunc)PyType_GetSlot(type, Py_tp_alloc);
    KeyObject *self = (KeyObject *)alloc(type, 0);
    if (self == NULL) {
        PyBuffer_Release(&kb);
        return NULL;
    }
    self->cipher = cipher;
    self->block = kuai_block_size((kuai_cipher)cipher);
    self->tag_len = (size_t)tag_len;
    self->aead = aead;
    const uint8_t *kp = kb.buf;
    int ok = key_setup(&self->key, cipher, kp, want, be) == 0;
    if (ok && xts) {
        ok = key_setup(&self->key2, cipher, kp + want, want, be) == 0;
        /* Whether the halves are equal (encryption refuses them), without
         * an early exit on the first differing byte. */
        uint8_t diff = 0;
        for (size_t i = 0; i < want; i++) {
            diff |= (uint8_t)(kp[i] ^ kp[want + i]);
        }
        self->halves_equal = diff == 0;
    }
    PyBuffer_Release(&kb);
    if (!ok) {
        Py_DECREF(self);
        return NULL;
    }
    return (PyObject *)self;
}

static void key_free_one(kuai_key **k)
{
    if (*k != NULL) {
        kuai_key_wipe(*k);
        PyMem_Free(*k);
        *k = NULL;
    }
}

static void key_dealloc(PyObject *o)
{
    KeyObject *self = (KeyObject *)o;
    PyTypeObject *tp = Py_TYPE(o);
    key_free_one(&self->key);
    key_free_one(&self->key2);
    freefunc f = (freefunc)PyType_GetSlot(tp, Py_tp_free);
    f(o);
    Py_DECREF(tp);
}

static PyObject *key_get_backend(PyObject *o, void *unused)
{
    (void)unused;
    return PyUnicode_FromString(kuai_key_backend(((KeyObject *)o)->key));
}

static PyObject *key_get_cipher_id(PyObject *o, void *unused)
{
    (void)unused;
    return PyLong_FromLong(((KeyObject *)o)->cipher);
}

static PyObject *key_get_block_size(PyObject *o, void *unused)
{
    (void)unused;
    return PyLong_FromSize_t(((KeyObject *)o)->block);
}

static PyObject *key_get_xts(PyObject *o, void *unused)
{
    (void)unused;
    return PyBool_FromLong(((KeyObject *)o)->key2 != NULL);
}

static PyObject *key_get_tag_length(PyObject *o, void *unused)
{
    (void)unused;
    return PyLong_FromSize_t(((KeyObject *)o)->tag_len);
}

int kpy_check_single(const KeyObject *k, int aead)
{
    if (k->aead != 0 && k->aead != aead) {
        PyErr_Format(PyExc_TypeError,
                     "a kuai.aead key is for %s only, not for %s; use kuai.Cipher(\"%s\", key) "
                     "for other modes (and another key: one key, one mode)",
                     k->aead == KPY_AEAD_GCM ? "GCM" : "CCM",
                     aead == KPY_AEAD_GCM   ? "GCM"
                     : aead == KPY_AEAD_CCM ? "CCM"
                                            : "this mode",
                     kuai_cipher_name((kuai_cipher)k->cipher));
        return -1;
    }
    if (k->key2 != NULL) {
        PyErr_Format(PyExc_ValueError,
                     "an XTS key (%s-xts, two keys in one) is for modes.XTS only; "
                     "use kuai.Cipher(%s, key) for the other modes",
                     kuai_cipher_name((kuai_cipher)k->cipher),
                     kuai_cipher_name((kuai_cipher)k->cipher));
        return -1;
    }
    return 0;
}

int kpy_check_block16(const KeyObject *k, const char *mode, int aead)
{
    if (kpy_check_single(k, aead) < 0) {
        return -1;
    }
    if (k->block != 16) {
        PyErr_Format(PyExc_ValueError, "%s needs a 128-bit-block cipher, not %s", mode,
                     kuai_cipher_name((kuai_cipher)k->cipher));
        return -1;
    }
    return 0;
}

int kpy_check_gcm_key(const KeyObject *k)
{
    return kpy_check_block16(k, "GCM", KPY_AEAD_GCM);
}

int kpy_check_nonce(Py_ssize_t n)
{
    /* cryptography's AESGCM bounds */
    if (n < 8 || n > 128) {
        PyErr_SetString(PyExc_ValueError, "Nonce must be between 8 and 128 bytes");
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------ GCM, CCM */

/* The one-shot AEAD calls: kuai_{gcm,ccm}_{encrypt,decrypt} have one shape,
 * and cryptography's AESGCM and AESCCM one signature, (nonce, data,
 * associated_data or None), all three required, by position or by name; a
 * mode differs in its nonce lengths, its tag length and CCM's length field. */
typedef struct {
    const char *mode; /* "GCM", "CCM" */
    int (*seal)(const kuai_key *, const uint8_t *, size_t, const uint8_t *, size_t, const uint8_t *,
                uint8_t *, size_t, uint8_t *, size_t);
    int (*open)(const kuai_key *, const uint8_t *, size_t, const uint8_t *, size_t, const uint8_t *,
                uint8_t *, size_t, const uint8_t *, size_t);
    int ccm; /* nonce of 7 to 13 bytes (cryptography's AESCCM), the
              * message bounded by its length field; tag_len from the key.
              * Else GCM's: nonce of 8 to 128 bytes, 16-byte tag. */
} aead_mode;

static const aead_mode aead_gcm = {"GCM", kuai_gcm_encrypt, kuai_gcm_decrypt, 0};
static const aead_mode aead_ccm = {"CCM", kuai_ccm_encrypt, kuai_ccm_decrypt, 1};

static void aead_args_release(Py_buffer *nb, Py_buffer *db, Py_buffer *ab)
{
    PyBuffer_Release(nb);
    PyBuffer_Release(db);
    release(ab);
}

/* The arguments as views; 0, or -1 with nothing held. With into set, a
 * fourth argument, buf (the *_into calls), whose object *into gets. */
static int aead_args(const aead_mode *m, const KeyObject *k, PyObject *const *args,
                     Py_ssize_t nargs, PyObject *kwnames, const char *what, Py_buffer *nb,
                     Py_buffer *db, Py_buffer *ab, PyObject **into)
{
    static const char *const names[] = {"nonce", "data", "associated_data", "buf"};
    const Py_ssize_t na = into ? 4 : 3;
    PyObject *a[4];
    if (kpy_args(what, args, nargs, kwnames, names, na, na, a) < 0) {
        return -1;
    }
    if (into) {
        *into = a[3];
    }
    if (kpy_check_block16(k, m->mode, m->ccm ? KPY_AEAD_CCM : KPY_AEAD_GCM) < 0) {
        return -1;
    }
    if (get_ro(a[0], nb, "nonce") < 0) {
        return -1;
    }
    if (get_ro(a[1], db, "data") < 0) {
        PyBuffer_Release(nb);
        return -1;
    }
    if (get_ro_opt(a[2], ab, "associated_data") < 0) {
        PyBuffer_Release(nb);
        PyBuffer_Release(db);
        return -1;
    }
    if (m->ccm && (nb->len < 7 || nb->len > 13)) {
        PyErr_SetString(PyExc_ValueError, "Nonce must be between 7 and 13 bytes");
        aead_args_release(nb, db, ab);
        return -1;
    }
    if (!m->ccm && kpy_check_nonce(nb->len) < 0) {
        aead_args_release(nb, db, ab);
        return -1;
    }
    return 0;
}

/* Whether a message of len bytes fits CCM's length field of 15 - nonce_len
 * bytes (1 if so). */
static int ccm_len_fits(Py_ssize_t nonce_len, size_t len)
{
    size_t lbytes = 15 - (size_t)nonce_len; /* 2..8 */
    return lbytes >= sizeof(size_t) || (len >> (8 * lbytes)) == 0;
}

/* As ccm_len_fits, with ValueError raised (encryption) if not; 0 or -1. */
static int ccm_check_len(Py_ssize_t nonce_len, size_t len)
{
    if (!ccm_len_fits(nonce_len, len)) {
        PyErr_SetString(PyExc_ValueError, "Data too long for nonce");
        return -1;
    }
    return 0;
}

/* A writable view of buf of exactly need bytes, as cryptography's
 * encrypt_into/decrypt_into ask; 0, or -1 with nothing held. */
static int aead_buf(PyObject *o, Py_buffer *ob, Py_ssize_t need)
{
    if (get_writable(o, ob) < 0) {
        return -1;
    }
    if (ob->len != need) {
        PyBuffer_Release(ob);
        PyErr_Format(PyExc_ValueError, "buffer must be %zd bytes", need);
        return -1;
    }
    return 0;
}

/* The *_into calls' inputs that buf overlaps, copied. A buf at data's own
 * start is in place (the library's in == out); any other overlap with data
 * (ciphertext written back over the plaintext at another offset: nonce ||
 * ciphertext into the plaintext's buffer), or with the nonce or the AAD,
 * would overwrite an input before the library reads it, and was refused
 * with ValueError. The copies are read instead, and wiped when freed: the
 * data copy is the plaintext when encrypting. */
typedef struct {
    uint8_t *nonce, *aad, *data;
    size_t nonce_len, aad_len, data_len;
} AeadCopies;

static void aead_copies_free(AeadCopies *c)
{
    free_input_copy(c->nonce, c->nonce_len);
    free_input_copy(c->aad, c->aad_len);
    free_input_copy(c->data, c->data_len);
    memset(c, 0, sizeof *c);
}

/* *p (len bytes) replaced by a copy held in *copy when out (out_len bytes)
 * overlaps it other than at in_place's start (NULL: no in-place start); 0,
 * or -1 (raised). */
static int aead_unalias_one(const uint8_t **p, size_t len, const uint8_t *out, size_t out_len,
                            const uint8_t *in_place, uint8_t **copy, size_t *copy_len)
{
    if (!overlaps(*p, len, out, out_len) || (in_place != NULL && out == in_place)) {
        return 0;
    }
    if ((*copy = copy_input(*p, len)) == NULL) {
        return -1;
    }
    *copy_len = len;
    *p = *copy;
    return 0;
}

static int aead_unalias(const uint8_t *out, size_t out_len, const uint8_t **nonce, size_t nonce_len,
                        const uint8_t **aad, size_t aad_len, const uint8_t **data, size_t data_len,
                        AeadCopies *c)
{
    memset(c, 0, sizeof *c);
    if (aead_unalias_one(nonce, nonce_len, out, out_len, NULL, &c->nonce, &c->nonce_len) < 0 ||
        aead_unalias_one(aad, aad_len, out, out_len, NULL, &c->aad, &c->aad_len) < 0 ||
        aead_unalias_one(data, data_len, out, out_len, *data, &c->data, &c->data_len) < 0) {
        aead_copies_free(c);
        return -1;
    }
    return 0;
}

/* encrypt(nonce, data, associated_data) -> ciphertext || tag, or with into
 * encrypt_into(nonce, data, associated_data, buf) -> len(buf), buf being
 * exactly len(data) + the tag's length (buf may be data's start: in place;
 * an input it overlaps elsewhere is copied first, aead_unalias) */
static PyObject *aead_encrypt(const aead_mode *m, PyObject *o, PyObject *const *args,
                              Py_ssize_t nargs, PyObject *kwnames, int into)
{
    KeyObject *k = (KeyObject *)o;
    Py_buffer nb, db, ab, ob = {0};
    PyObject *bo = NULL;
    if (aead_args(m, k, args, nargs, kwnames, into ? "encrypt_into" : "encrypt", &nb, &db, &ab,
                  into ? &bo : NULL) < 0) {
        return NULL;
    }
    PyObject *r = NULL;
    uint8_t *out = NULL;
    const size_t t = m->ccm ? k->tag_len : GCM_TAG;
    const Py_ssize_t n = db.len + (Py_ssize_t)t;
    if (m->ccm && ccm_check_len(nb.len, (size_t)db.len) < 0) {
        /* raised */
    } else if (!m->ccm && (uint64_t)db.len > KPY_GCM_MAX_DATA) {
        /* before the output is allocated: the library refuses it anyway */
        PyErr_SetString(PyExc_ValueError, "Data too long for GCM (2^36 - 32 bytes at most)");
    } else if (into) {
        if (aead_buf(bo, &ob, n) == 0) {
            out = ob.buf;
        }
    } else if ((r = new_bytes(n, &out)) == NULL) {
        out = NULL;
    }
    const uint8_t *nonce = nb.buf, *aad = ab.buf, *in = db.buf;
    AeadCopies copies = {0};
    if (out && into &&
        aead_unalias(out, (size_t)n, &nonce, (size_t)nb.len, &aad, (size_t)ab.len, &in,
                     (size_t)db.len, &copies) < 0) {
        out = NULL;
    }
    if (out) {
        int rc;
        KPY_GIL_CALL(db.len + ab.len, rc,
                     m->seal(k->key, nonce, (size_t)nb.len, aad, (size_t)ab.len, in, out,
                             (size_t)db.len, out + db.len, t));
        aead_copies_free(&copies);
        if (rc != KUAI_OK) {
            Py_CLEAR(r);
            kpy_raise(rc, m->ccm ? "CCM encryption" : "GCM encryption");
        } else if (into) {
            r = PyLong_FromSsize_t(n);
        }
    }
    if (ob.obj) {
        PyBuffer_Release(&ob);
    }
    aead_args_release(&nb, &db, &ab);
    return r;
}

/* decrypt(nonce, ciphertext || tag, associated_data) -> plaintext, or with
 * into decrypt_into(..., buf) -> len(buf), buf being exactly the plaintext's
 * length; InvalidTag, and then buf holds zeros (the library's promise; where
 * cryptography 50 leaves the unauthenticated plaintext in it). */
static PyObject *aead_decrypt(const aead_mode *m, PyObject *o, PyObject *const *args,
                              Py_ssize_t nargs, PyObject *kwnames, int into)
{
    KeyObject *k = (KeyObject *)o;
    Py_buffer nb, db, ab, ob = {0};
    PyObject *bo = NULL;
    if (aead_args(m, k, args, nargs, kwnames, into ? "decrypt_into" : "decrypt", &nb, &db, &ab,
                  into ? &bo : NULL) < 0) {
        return NULL;
    }
    PyObject *r = NULL;
    uint8_t *out = NULL;
    const size_t t = m->ccm ? k->tag_len : GCM_TAG;
    /* A ciphertext too short to hold a tag, or (CCM) too long for the
     * nonce's length field or (GCM) than GCM's limit, is one no
     * encryption made (checked before buf or the output is sized): InvalidTag, as
     * cryptography's AESCCM gives for both, so that a caller catching
     * InvalidTag on untrusted input sees every forgery as one. */
    if ((size_t)db.len < t || (m->ccm && !ccm_len_fits(nb.len, (size_t)db.len - t)) ||
        (!m->ccm && (uint64_t)db.len - t > KPY_GCM_MAX_DATA)) {
        PyErr_SetNone(kpy_InvalidTag);
    } else if (into) {
        if (aead_buf(bo, &ob, db.len - (Py_ssize_t)t) == 0) {
            out = ob.buf;
        }
    } else if ((r = new_bytes(db.len - (Py_ssize_t)t, &out)) == NULL) {
        out = NULL;
    }
    const size_t n = (size_t)db.len - (db.len >= (Py_ssize_t)t ? t : 0);
    const uint8_t *nonce = nb.buf, *aad = ab.buf, *in = db.buf;
    AeadCopies copies = {0};
    /* in place (buf at data's start) leaves the tag after buf's n bytes */
    if (out && into &&
        aead_unalias(out, n, &nonce, (size_t)nb.len, &aad, (size_t)ab.len, &in, (size_t)db.len,
                     &copies) < 0) {
        out = NULL;
    }
    if (out) {
        int rc;
        KPY_GIL_CALL(
            db.len + ab.len, rc,
            m->open(k->key, nonce, (size_t)nb.len, aad, (size_t)ab.len, in, out, n, in + n, t));
        aead_copies_free(&copies);
        if (rc != KUAI_OK) {
            Py_CLEAR(r);
            if (rc == KUAI_ERR_AUTH) {
                PyErr_SetNone(kpy_InvalidTag);
            } else {
                kpy_raise(rc, m->ccm ? "CCM decryption" : "GCM decryption");
            }
        } else if (into) {
            r = PyLong_FromSsize_t((Py_ssize_t)n);
        }
    }
    if (ob.obj) {
        PyBuffer_Release(&ob);
    }
    aead_args_release(&nb, &db, &ab);
    return r;
}

#define AEAD_METHOD(name, fn, m, into)                                                             \
    static PyObject *name(PyObject *o, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) \
    {                                                                                              \
        return fn(&m, o, args, nargs, kwnames, into);                                              \
    }
AEAD_METHOD(key_gcm_encrypt, aead_encrypt, aead_gcm, 0)
AEAD_METHOD(key_gcm_decrypt, aead_decrypt, aead_gcm, 0)
AEAD_METHOD(key_gcm_encrypt_into, aead_encrypt, aead_gcm, 1)
AEAD_METHOD(key_gcm_decrypt_into, aead_decrypt, aead_gcm, 1)
/* CCM's tag is tag_length bytes (the key's, from aead.AESCCM) */
AEAD_METHOD(key_ccm_encrypt, aead_encrypt, aead_ccm, 0)
AEAD_METHOD(key_ccm_decrypt, aead_decrypt, aead_ccm, 0)
AEAD_METHOD(key_ccm_encrypt_into, aead_encrypt, aead_ccm, 1)
AEAD_METHOD(key_ccm_decrypt_into, aead_decrypt, aead_ccm, 1)

static PyMethodDef key_methods[] = {
    {"gcm_encrypt", (PyCFunction)(void (*)(void))key_gcm_encrypt, METH_FASTCALL | METH_KEYWORDS,
     "gcm_encrypt(nonce, data, associated_data) -> ciphertext || tag"},
    {"gcm_decrypt", (PyCFunction)(void (*)(void))key_gcm_decrypt, METH_FASTCALL | METH_KEYWORDS,
     "gcm_decrypt(nonce, ciphertext || tag, associated_data) -> plaintext (InvalidTag)"},
    {"ccm_encrypt", (PyCFunction)(void (*)(void))key_ccm_encrypt, METH_FASTCALL | METH_KEYWORDS,
     "ccm_encrypt(nonce, data, associated_data) -> ciphertext || tag (tag_length bytes)"},
    {"ccm_decrypt", (PyCFunction)(void (*)(void))key_ccm_decrypt, METH_FASTCALL | METH_KEYWORDS,
     "ccm_decrypt(nonce, ciphertext || tag, associated_data) -> plaintext (InvalidTag)"},
    {"gcm_encrypt_into", (PyCFunction)(void (*)(void))key_gcm_encrypt_into,
     METH_FASTCALL | METH_KEYWORDS,
     "gcm_encrypt_into(nonce, data, associated_data, buf) -> int (buf: len(data) + 16 bytes)"},
    {"gcm_decrypt_into", (PyCFunction)(void (*)(void))key_gcm_decrypt_into,
     METH_FASTCALL | METH_KEYWORDS,
     "gcm_decrypt_into(nonce, ciphertext || tag, associated_data, buf) -> int (InvalidTag: buf "
     "zeroed)"},
    {"ccm_encrypt_into", (PyCFunction)(void (*)(void))key_ccm_encrypt_into,
     METH_FASTCALL | METH_KEYWORDS,
     "ccm_encrypt_into(nonce, data, associated_data, buf) -> int (buf: len(data) + tag_length)"},
    {"ccm_decrypt_into", (PyCFunction)(void (*)(void))key_ccm_decrypt_into,
     METH_FASTCALL | METH_KEYWORDS,
     "ccm_decrypt_into(nonce, ciphertext || tag, associated_data, buf) -> int (InvalidTag: buf "
     "zeroed)"},
    {"gcm_encrypt_batch", (PyCFunction)(void (*)(void))kpy_gcm_encrypt_batch,
     METH_VARARGS | METH_KEYWORDS, "gcm_encrypt_batch(nonces, datas, aad=None) -> list[bytes]"},
    {"gcm_decrypt_batch", (PyCFunction)(void (*)(void))kpy_gcm_decrypt_batch,
     METH_VARARGS | METH_KEYWORDS,
     "gcm_decrypt_batch(nonces, datas, aad=None, errors='raise') -> list[bytes | None]"},
    {"gcm_encrypt_packed", (PyCFunction)(void (*)(void))kpy_gcm_encrypt_packed,
     METH_VARARGS | METH_KEYWORDS,
     "gcm_encrypt_packed(nonces, data, offsets, aad=None, prefix_nonce=False, nonce_len=12)"},
    {"gcm_decrypt_packed", (PyCFunction)(void (*)(void))kpy_gcm_decrypt_packed,
     METH_VARARGS | METH_KEYWORDS,
     "gcm_decrypt_packed(nonces, data, offsets, aad=None, prefix_nonce=False, nonce_len=12, "
     "errors='raise')"},
    {"cbc_encrypt_packed", kpy_cbc_encrypt_packed, METH_VARARGS,
     "cbc_encrypt_packed(ivs, data, offsets) -> (out, out_offsets): rows IV || CBC(PKCS#7(row))"},
    {"cbc_decrypt_packed", kpy_cbc_decrypt_packed, METH_VARARGS,
     "cbc_decrypt_packed(data, offsets) -> (out, out_offsets, ok)"},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef key_getset[] = {
    {"backend", key_get_backend, NULL, "the backend the key schedule was set up for", NULL},
    {"cipher_id", key_get_cipher_id, NULL, "the kuai_cipher value", NULL},
    {"block_size", key_get_block_size, NULL, "block size in bytes", NULL},
    {"xts", key_get_xts, NULL, "an XTS key: data key and tweak key (modes.XTS only)", NULL},
    {"tag_length", key_get_tag_length, NULL, "the tag length of ccm_encrypt/ccm_decrypt", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyType_Slot key_slots[] = {
    {Py_tp_new, key_new},
    {Py_tp_dealloc, key_dealloc},
    {Py_tp_methods, key_methods},
    {Py_tp_getset, key_getset},
    {Py_tp_doc, "A key schedule (read-only after setup; wiped when freed)."},
    {0, NULL}};

PyType_Spec kpy_key_spec = {"kuai._kuai.Key", sizeof(KeyObject), 0,
                            Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE, key_slots};
