/* SPDX-License-Identifier: Apache-2.0 */
/*
 * kuai._kuai.Key: a key schedule (kuai_key), read-only after __new__, and
 * its one-shot GCM methods; the batch and packed methods it also carries
 * are batch.c's and packed.c's.
 */
#include "kuai_py.h"

int kpy_is_key(PyObject *o)
{
    return PyObject_TypeCheck(o, (PyTypeObject *)kpy_KeyType);
}

/* Key(cipher: int, key: bytes-like, backend: str | None = None) */
static PyObject *key_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"cipher", "key", "backend", NULL};
    int cipher;
    PyObject *keyobj, *backend = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "iO|O:Key", kwlist, &cipher, &keyobj, &backend)) {
        return NULL;
    }
    if (kuai_cipher_name((kuai_cipher)cipher) == NULL) {
        PyErr_Format(PyExc_ValueError, "unknown cipher id %d", cipher);
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
    if ((size_t)kb.len != want) {
        PyErr_Format(PyExc_ValueError, "Invalid key size (%zd bits) for %s: %zu bits needed",
                     kb.len * 8, kuai_cipher_name((kuai_cipher)cipher), want * 8);
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
    self->key = PyMem_Malloc(sizeof(kuai_key));
    if (self->key == NULL) {
        PyBuffer_Release(&kb);
        Py_DECREF(self);
        return PyErr_NoMemory();
    }
    int rc = be ? kuai_key_init_backend(self->key, (kuai_cipher)cipher, kb.buf, (size_t)kb.len, be)
                : kuai_key_init(self->key, (kuai_cipher)cipher, kb.buf, (size_t)kb.len);
    PyBuffer_Release(&kb);
    if (rc != KUAI_OK) {
        if (rc == KUAI_ERR_BACKEND) {
            PyErr_Format(PyExc_ValueError,
                         "backend %s is not available for %s on this CPU "
                         "(see kuai.backends())",
                         be ? be : "(from KUAI_BACKEND)", kuai_cipher_name((kuai_cipher)cipher));
        } else {
            kpy_raise(rc, "key setup");
        }
        Py_DECREF(self);
        return NULL;
    }
    return (PyObject *)self;
}

static void key_dealloc(PyObject *o)
{
    KeyObject *self = (KeyObject *)o;
    PyTypeObject *tp = Py_TYPE(o);
    if (self->key != NULL) {
        kuai_key_wipe(self->key);
        PyMem_Free(self->key);
        self->key = NULL;
    }
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

int kpy_check_gcm_key(const KeyObject *k)
{
    if (k->block != 16) {
        PyErr_Format(PyExc_ValueError, "GCM needs a 128-bit-block cipher, not %s",
                     kuai_cipher_name((kuai_cipher)k->cipher));
        return -1;
    }
    return 0;
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

static void gcm_args_release(Py_buffer *nb, Py_buffer *db, Py_buffer *ab)
{
    PyBuffer_Release(nb);
    PyBuffer_Release(db);
    release(ab);
}

/* The arguments of gcm_encrypt and gcm_decrypt, (nonce, data,
 * associated_data or None), all three required as in cryptography's AEAD
 * classes, by position or by name; as views; 0, or -1 with nothing held. */
static int gcm_args(const KeyObject *k, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                    const char *what, Py_buffer *nb, Py_buffer *db, Py_buffer *ab)
{
    static const char *const names[] = {"nonce", "data", "associated_data"};
    PyObject *a[3];
    if (kpy_args(what, args, nargs, kwnames, names, 3, 3, a) < 0) {
        return -1;
    }
    if (kpy_check_gcm_key(k) < 0) {
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
    if (kpy_check_nonce(nb->len) < 0) {
        gcm_args_release(nb, db, ab);
        return -1;
    }
    return 0;
}

/* encrypt(nonce, data, associated_data) -> ciphertext || tag(16) */
static PyObject *key_gcm_encrypt(PyObject *o, PyObject *const *args, Py_ssize_t nargs,
                                 PyObject *kwnames)
{
    KeyObject *k = (KeyObject *)o;
    Py_buffer nb, db, ab;
    if (gcm_args(k, args, nargs, kwnames, "encrypt", &nb, &db, &ab) < 0) {
        return NULL;
    }
    PyObject *r = NULL;
    uint8_t *out;
    if ((r = new_bytes(db.len + GCM_TAG, &out)) != NULL) {
        int rc;
        KPY_GIL_CALL(db.len + ab.len, rc,
                     kuai_gcm_encrypt(k->key, nb.buf, (size_t)nb.len, ab.buf, (size_t)ab.len,
                                      db.buf, out, (size_t)db.len, out + db.len, GCM_TAG));
        if (rc != KUAI_OK) {
            Py_CLEAR(r);
            kpy_raise(rc, "GCM encryption");
        }
    }
    gcm_args_release(&nb, &db, &ab);
    return r;
}

/* decrypt(nonce, data, associated_data) -> plaintext; InvalidTag */
static PyObject *key_gcm_decrypt(PyObject *o, PyObject *const *args, Py_ssize_t nargs,
                                 PyObject *kwnames)
{
    KeyObject *k = (KeyObject *)o;
    Py_buffer nb, db, ab;
    if (gcm_args(k, args, nargs, kwnames, "decrypt", &nb, &db, &ab) < 0) {
        return NULL;
    }
    PyObject *r = NULL;
    uint8_t *out;
    if (db.len < GCM_TAG) {
        PyErr_SetNone(kpy_InvalidTag);
    } else if ((r = new_bytes(db.len - GCM_TAG, &out)) != NULL) {
        size_t n = (size_t)db.len - GCM_TAG;
        const uint8_t *in = db.buf;
        int rc;
        KPY_GIL_CALL(db.len + ab.len, rc,
                     kuai_gcm_decrypt(k->key, nb.buf, (size_t)nb.len, ab.buf, (size_t)ab.len, in,
                                      out, n, in + n, GCM_TAG));
        if (rc != KUAI_OK) {
            Py_CLEAR(r);
            if (rc == KUAI_ERR_AUTH) {
                PyErr_SetNone(kpy_InvalidTag);
            } else {
                kpy_raise(rc, "GCM decryption");
            }
        }
    }
    gcm_args_release(&nb, &db, &ab);
    return r;
}

static PyMethodDef key_methods[] = {
    {"gcm_encrypt", (PyCFunction)(void (*)(void))key_gcm_encrypt, METH_FASTCALL | METH_KEYWORDS,
     "gcm_encrypt(nonce, data, associated_data) -> ciphertext || tag"},
    {"gcm_decrypt", (PyCFunction)(void (*)(void))key_gcm_decrypt, METH_FASTCALL | METH_KEYWORDS,
     "gcm_decrypt(nonce, ciphertext || tag, associated_data) -> plaintext (InvalidTag)"},
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
