/* SPDX-License-Identifier: Apache-2.0 */
/*
 * kuai._kuai: the C extension under the Python package, over the public API
 * (include/kuai.h) only. Built for CPython's Limited API 3.11 (abi3) where the
 * buffer protocol is part of it; older Pythons build it against the full API.
 *
 * Objects:
 *   Key     a key schedule (kuai_key), read-only after __new__, so any number
 *           of threads may use one; wiped with kuai_key_wipe when it dies.
 *           Python subclasses it (kuai.Cipher, kuai.aead.*GCM), and the GCM
 *           methods are its own, so that a 16-byte call costs one C call.
 *   Stream  an ECB/CBC/CTR encryptor or decryptor: the chaining value, a
 *           partial block, and a lock so that concurrent use of one stream
 *           cannot corrupt it (the order of concurrent updates is the
 *           caller's business, as in `cryptography`).
 *   GcmStream  a streaming GCM encryptor or decryptor (kuai_gcm_ctx), in
 *           the shape of cryptography's GCM contexts.
 * The GIL is released around every cipher call on KUAI_GIL_BYTES or more.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "kuai.h"

/* Below this the GIL round trip (~100 ns) costs more than it frees. */
#define KUAI_GIL_BYTES 2048
#define GCM_TAG 16

static PyObject *InvalidTag;
static PyObject *AlreadyFinalized;
static PyObject *KeyType;
static PyObject *StreamType;
static PyObject *GcmType;
static PyObject *NotYetFinalized;

/* ---------------------------------------------------------------- helpers */

static PyObject *raise_kuai(int err, const char *what)
{
    PyObject *exc = PyExc_ValueError;
    if (err == KUAI_ERR_AUTH) {
        exc = InvalidTag;
    } else if (err == KUAI_ERR_UNSUPPORTED) {
        exc = PyExc_NotImplementedError;
    }
    PyErr_Format(exc, "%s: %s", what, kuai_strerror(err));
    return NULL;
}

static int get_ro(PyObject *o, Py_buffer *b, const char *name)
{
    if (PyObject_GetBuffer(o, b, PyBUF_SIMPLE) < 0) {
        if (PyErr_ExceptionMatches(PyExc_TypeError)) {
            PyErr_Format(PyExc_TypeError,
                         "%s must be a bytes-like object (bytes, bytearray, memoryview, "
                         "C-contiguous array)",
                         name);
        }
        return -1;
    }
    return 0;
}

/* An optional buffer: None gives an empty view with buf == NULL. */
static int get_ro_opt(PyObject *o, Py_buffer *b, const char *name)
{
    if (o == NULL || o == Py_None) {
        memset(b, 0, sizeof *b);
        return 0;
    }
    return get_ro(o, b, name);
}

static void release(Py_buffer *b)
{
    if (b->obj != NULL) {
        PyBuffer_Release(b);
    }
}

static PyObject *new_bytes(Py_ssize_t n, uint8_t **p)
{
    PyObject *r = PyBytes_FromStringAndSize(NULL, n);
    if (r != NULL) {
        *p = (uint8_t *)PyBytes_AsString(r);
    }
    return r;
}

static int overlaps(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen)
{
    return alen != 0 && blen != 0 && a < b + blen && b < a + alen;
}

/* -------------------------------------------------------------------- Key */

typedef struct {
    PyObject_HEAD kuai_key *key; /* PyMem_Malloc'd, wiped and freed in dealloc */
    int cipher;
    size_t block;
} KeyObject;

static int is_key(PyObject *o)
{
    return PyObject_TypeCheck(o, (PyTypeObject *)KeyType);
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
        be = PyUnicode_AsUTF8AndSize(backend, NULL);
        if (be == NULL) {
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
            raise_kuai(rc, "key setup");
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

static int check_gcm_key(KeyObject *k)
{
    if (k->block != 16) {
        PyErr_Format(PyExc_ValueError, "GCM needs a 128-bit-block cipher, not %s",
                     kuai_cipher_name((kuai_cipher)k->cipher));
        return -1;
    }
    return 0;
}

static int check_nonce(Py_ssize_t n)
{
    /* cryptography's AESGCM bounds */
    if (n < 8 || n > 128) {
        PyErr_SetString(PyExc_ValueError, "Nonce must be between 8 and 128 bytes");
        return -1;
    }
    return 0;
}

/* encrypt(nonce, data, associated_data) -> ciphertext || tag(16) */
static PyObject *key_gcm_encrypt(PyObject *o, PyObject *const *args, Py_ssize_t nargs)
{
    KeyObject *k = (KeyObject *)o;
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "encrypt(nonce, data, associated_data) takes 3 arguments");
        return NULL;
    }
    if (check_gcm_key(k) < 0) {
        return NULL;
    }
    Py_buffer nb, db, ab;
    if (get_ro(args[0], &nb, "nonce") < 0) {
        return NULL;
    }
    if (get_ro(args[1], &db, "data") < 0) {
        PyBuffer_Release(&nb);
        return NULL;
    }
    if (get_ro_opt(args[2], &ab, "associated_data") < 0) {
        PyBuffer_Release(&nb);
        PyBuffer_Release(&db);
        return NULL;
    }
    PyObject *r = NULL;
    uint8_t *out;
    if (check_nonce(nb.len) == 0 && (r = new_bytes(db.len + GCM_TAG, &out)) != NULL) {
        int rc;
        if (db.len + ab.len >= KUAI_GIL_BYTES) {
            Py_BEGIN_ALLOW_THREADS rc =
                kuai_gcm_encrypt(k->key, nb.buf, (size_t)nb.len, ab.buf, (size_t)ab.len, db.buf,
                                 out, (size_t)db.len, out + db.len, GCM_TAG);
            Py_END_ALLOW_THREADS
        } else {
            rc = kuai_gcm_encrypt(k->key, nb.buf, (size_t)nb.len, ab.buf, (size_t)ab.len, db.buf,
                                  out, (size_t)db.len, out + db.len, GCM_TAG);
        }
        if (rc != KUAI_OK) {
            Py_CLEAR(r);
            raise_kuai(rc, "GCM encryption");
        }
    }
    PyBuffer_Release(&nb);
    PyBuffer_Release(&db);
    release(&ab);
    return r;
}

/* decrypt(nonce, data, associated_data) -> plaintext; InvalidTag */
static PyObject *key_gcm_decrypt(PyObject *o, PyObject *const *args, Py_ssize_t nargs)
{
    KeyObject *k = (KeyObject *)o;
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "decrypt(nonce, data, associated_data) takes 3 arguments");
        return NULL;
    }
    if (check_gcm_key(k) < 0) {
        return NULL;
    }
    Py_buffer nb, db, ab;
    if (get_ro(args[0], &nb, "nonce") < 0) {
        return NULL;
    }
    if (get_ro(args[1], &db, "data") < 0) {
        PyBuffer_Release(&nb);
        return NULL;
    }
    if (get_ro_opt(args[2], &ab, "associated_data") < 0) {
        PyBuffer_Release(&nb);
        PyBuffer_Release(&db);
        return NULL;
    }
    PyObject *r = NULL;
    uint8_t *out;
    if (check_nonce(nb.len) < 0) {
        /* raised */
    } else if (db.len < GCM_TAG) {
        PyErr_SetNone(InvalidTag);
    } else if ((r = new_bytes(db.len - GCM_TAG, &out)) != NULL) {
        size_t n = (size_t)db.len - GCM_TAG;
        const uint8_t *in = db.buf;
        int rc;
        if (db.len + ab.len >= KUAI_GIL_BYTES) {
            Py_BEGIN_ALLOW_THREADS rc =
                kuai_gcm_decrypt(k->key, nb.buf, (size_t)nb.len, ab.buf, (size_t)ab.len, in, out, n,
                                 in + n, GCM_TAG);
            Py_END_ALLOW_THREADS
        } else {
            rc = kuai_gcm_decrypt(k->key, nb.buf, (size_t)nb.len, ab.buf, (size_t)ab.len, in, out,
                                  n, in + n, GCM_TAG);
        }
        if (rc != KUAI_OK) {
            Py_CLEAR(r);
            if (rc == KUAI_ERR_AUTH) {
                PyErr_SetNone(InvalidTag);
            } else {
                raise_kuai(rc, "GCM decryption");
            }
        }
    }
    PyBuffer_Release(&nb);
    PyBuffer_Release(&db);
    release(&ab);
    return r;
}

/* ------------------------------------------------------------ GCM batches */

/* Views on a list of n bytes-like objects (or one buffer of n * each bytes
 * cut into n pieces when each > 0). */
typedef struct {
    Py_ssize_t n;
    Py_buffer *views; /* n views, or one when cut */
    int cut;
    Py_ssize_t each;
} BufList;

static void buflist_free(BufList *l)
{
    if (l->views != NULL) {
        Py_ssize_t m = l->cut ? 1 : l->n;
        for (Py_ssize_t i = 0; i < m; i++) {
            release(&l->views[i]);
        }
        PyMem_Free(l->views);
        l->views = NULL;
    }
}

static const uint8_t *buflist_ptr(const BufList *l, Py_ssize_t i, size_t *len)
{
    if (l->cut) {
        *len = (size_t)l->each;
        return (const uint8_t *)l->views[0].buf + i * l->each;
    }
    *len = (size_t)l->views[i].len;
    return l->views[i].buf;
}

/* A sequence of buffers; or, when cut_each > 0 and o is itself one buffer,
 * that buffer cut into pieces of cut_each bytes. n < 0: take the length. */
static int buflist_get(PyObject *o, BufList *l, Py_ssize_t n, Py_ssize_t cut_each, const char *name)
{
    memset(l, 0, sizeof *l);
    if (cut_each > 0 && PyObject_CheckBuffer(o)) {
        l->views = PyMem_Calloc(1, sizeof(Py_buffer));
        if (l->views == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        l->cut = 1;
        l->each = cut_each;
        if (get_ro(o, &l->views[0], name) < 0) {
            buflist_free(l);
            return -1;
        }
        if (n < 0 || l->views[0].len != n * cut_each) {
            PyErr_Format(PyExc_ValueError, "%s: one buffer of %zd bytes for %zd messages of %zd",
                         name, l->views[0].len, n, cut_each);
            buflist_free(l);
            return -1;
        }
        l->n = n;
        return 0;
    }
    PyObject *list = PySequence_List(o);
    if (list == NULL) {
        return -1;
    }
    Py_ssize_t m = PyList_Size(list);
    if (n >= 0 && m != n) {
        PyErr_Format(PyExc_ValueError, "%s: %zd items for %zd messages", name, m, n);
        Py_DECREF(list);
        return -1;
    }
    l->n = m;
    l->views = PyMem_Calloc(m > 0 ? (size_t)m : 1, sizeof(Py_buffer));
    if (l->views == NULL) {
        Py_DECREF(list);
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < m; i++) {
        if (get_ro(PyList_GetItem(list, i), &l->views[i], name) < 0) {
            Py_DECREF(list);
            buflist_free(l);
            return -1;
        }
    }
    Py_DECREF(list);
    return 0;
}

/* AAD for a batch: None, one buffer for every message, or a sequence. */
typedef struct {
    Py_buffer one;
    BufList many;
    int is_many;
} BatchAad;

static int aad_get(PyObject *o, BatchAad *a, Py_ssize_t n)
{
    memset(a, 0, sizeof *a);
    if (o == NULL || o == Py_None) {
        return 0;
    }
    if (PyObject_CheckBuffer(o)) {
        return get_ro(o, &a->one, "aad");
    }
    a->is_many = 1;
    return buflist_get(o, &a->many, n, 0, "aad");
}

static const uint8_t *aad_ptr(const BatchAad *a, Py_ssize_t i, size_t *len)
{
    if (a->is_many) {
        return buflist_ptr(&a->many, i, len);
    }
    *len = (size_t)a->one.len;
    return a->one.buf;
}

static void aad_free(BatchAad *a)
{
    release(&a->one);
    buflist_free(&a->many);
}

static int parse_errors(const char *errors, int *raise)
{
    if (strcmp(errors, "raise") == 0) {
        *raise = 1;
    } else if (strcmp(errors, "none") == 0) {
        *raise = 0;
    } else {
        PyErr_SetString(PyExc_ValueError, "errors must be 'raise' or 'none'");
        return -1;
    }
    return 0;
}

/* gcm_encrypt_batch(nonces, datas, aad=None) -> list[bytes] (ct || tag);
 * gcm_decrypt_batch(nonces, datas, aad=None, errors="raise") -> list[bytes | None].
 * nonces: a sequence of buffers, or one buffer of n * nonce_len bytes. */
static PyObject *gcm_batch(PyObject *o, PyObject *args, PyObject *kwds, int enc)
{
    static char *kwlist[] = {"nonces", "datas", "aad", "errors", "nonce_len", NULL};
    KeyObject *k = (KeyObject *)o;
    PyObject *nonces, *datas, *aadobj = Py_None;
    const char *errors = "raise";
    Py_ssize_t nonce_len = 12;
    int raise = 1;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OO|Osn", kwlist, &nonces, &datas, &aadobj,
                                     &errors, &nonce_len) ||
        parse_errors(errors, &raise) < 0 || check_gcm_key(k) < 0) {
        return NULL;
    }
    BufList dl, nl;
    BatchAad aad;
    if (buflist_get(datas, &dl, -1, 0, "datas") < 0) {
        return NULL;
    }
    Py_ssize_t n = dl.n;
    if (buflist_get(nonces, &nl, n, nonce_len, "nonces") < 0) {
        buflist_free(&dl);
        return NULL;
    }
    if (aad_get(aadobj, &aad, n) < 0) {
        buflist_free(&dl);
        buflist_free(&nl);
        return NULL;
    }
    PyObject *result = PyList_New(n);
    uint8_t **outs = PyMem_Calloc(n > 0 ? (size_t)n : 1, sizeof(uint8_t *));
    int *rcs = PyMem_Calloc(n > 0 ? (size_t)n : 1, sizeof(int));
    if (result == NULL || outs == NULL || rcs == NULL) {
        if (result != NULL) {
            PyErr_NoMemory();
        }
        goto fail;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        size_t len, nlen;
        buflist_ptr(&dl, i, &len);
        buflist_ptr(&nl, i, &nlen);
        if (check_nonce((Py_ssize_t)nlen) < 0) {
            goto fail;
        }
        Py_ssize_t olen = enc ? (Py_ssize_t)len + GCM_TAG : (Py_ssize_t)len - GCM_TAG;
        if (olen < 0) {
            olen = 0; /* too short to hold a tag: fails below */
        }
        PyObject *b = new_bytes(olen, &outs[i]);
        if (b == NULL) {
            goto fail;
        }
        PyList_SetItem(result, i, b);
    }
    Py_BEGIN_ALLOW_THREADS for (Py_ssize_t i = 0; i < n; i++)
    {
        size_t len, nlen, alen;
        const uint8_t *in = buflist_ptr(&dl, i, &len);
        const uint8_t *nonce = buflist_ptr(&nl, i, &nlen);
        const uint8_t *a = aad_ptr(&aad, i, &alen);
        if (enc) {
            rcs[i] = kuai_gcm_encrypt(k->key, nonce, nlen, a, alen, in, outs[i], len, outs[i] + len,
                                      GCM_TAG);
        } else if (len < GCM_TAG) {
            rcs[i] = KUAI_ERR_AUTH;
        } else {
            rcs[i] = kuai_gcm_decrypt(k->key, nonce, nlen, a, alen, in, outs[i], len - GCM_TAG,
                                      in + len - GCM_TAG, GCM_TAG);
        }
    }
    Py_END_ALLOW_THREADS for (Py_ssize_t i = 0; i < n; i++)
    {
        if (rcs[i] == KUAI_OK) {
            continue;
        }
        if (rcs[i] == KUAI_ERR_AUTH && !raise) {
            Py_INCREF(Py_None);
            PyList_SetItem(result, i, Py_None);
            continue;
        }
        if (rcs[i] == KUAI_ERR_AUTH) {
            PyErr_Format(InvalidTag, "message %zd of %zd failed authentication", i, n);
        } else {
            raise_kuai(rcs[i], enc ? "GCM encryption" : "GCM decryption");
        }
        goto fail;
    }
    PyMem_Free(outs);
    PyMem_Free(rcs);
    buflist_free(&dl);
    buflist_free(&nl);
    aad_free(&aad);
    return result;
fail:
    Py_XDECREF(result);
    PyMem_Free(outs);
    PyMem_Free(rcs);
    buflist_free(&dl);
    buflist_free(&nl);
    aad_free(&aad);
    return NULL;
}

static PyObject *key_gcm_encrypt_batch(PyObject *o, PyObject *args, PyObject *kwds)
{
    return gcm_batch(o, args, kwds, 1);
}

static PyObject *key_gcm_decrypt_batch(PyObject *o, PyObject *args, PyObject *kwds)
{
    return gcm_batch(o, args, kwds, 0);
}

/* Arrow-style offsets: n + 1 non-decreasing int32 or int64 values. */
typedef struct {
    Py_buffer v;
    int wide;
    Py_ssize_t n;
} Offsets;

static int offsets_get(PyObject *o, Offsets *off)
{
    memset(off, 0, sizeof *off);
    if (PyObject_GetBuffer(o, &off->v, PyBUF_FORMAT | PyBUF_C_CONTIGUOUS) < 0) {
        return -1;
    }
    const char *f = off->v.format ? off->v.format : "B";
    if (*f == '<' || *f == '=' || *f == '@') {
        f++;
    }
    if (off->v.itemsize == 8 && strchr("qlQL", *f) && f[1] == 0) {
        off->wide = 1;
    } else if (off->v.itemsize == 4 && strchr("iIlL", *f) && f[1] == 0) {
        off->wide = 0;
    } else {
        PyErr_SetString(PyExc_TypeError, "offsets must be an array of int32 or int64 "
                                         "(e.g. array('q'), numpy int64, Arrow's offsets)");
        PyBuffer_Release(&off->v);
        return -1;
    }
    off->n = off->v.len / off->v.itemsize - 1;
    if (off->n < 0) {
        PyErr_SetString(PyExc_ValueError, "offsets: at least one entry needed");
        PyBuffer_Release(&off->v);
        return -1;
    }
    return 0;
}

static int64_t offsets_at(const Offsets *off, Py_ssize_t i)
{
    if (off->wide) {
        int64_t x;
        memcpy(&x, (const char *)off->v.buf + 8 * i, 8);
        return x;
    }
    int32_t x;
    memcpy(&x, (const char *)off->v.buf + 4 * i, 4);
    return x;
}

/* gcm_encrypt_packed(nonces, data, offsets, aad=None, prefix_nonce=False,
 *                    nonce_len=12) -> (out: bytes, out_offsets: bytes of int64)
 * gcm_decrypt_packed(nonces, data, offsets, aad=None, prefix_nonce=False,
 *                    nonce_len=12, errors="raise") -> (out, out_offsets, ok: bytes)
 * Message i is data[offsets[i]:offsets[i+1]]. Encryption writes
 * [nonce_i ||] ct_i || tag_i; decryption reads that form (the nonce from the
 * row itself when prefix_nonce; nonces is then None). One C call for all,
 * the GIL released: what Arrow batches (kuai.spark) hand over. */
static PyObject *gcm_packed(PyObject *o, PyObject *args, PyObject *kwds, int enc)
{
    static char *kwlist[] = {"nonces",       "data",      "offsets", "aad",
                             "prefix_nonce", "nonce_len", "errors",  NULL};
    KeyObject *k = (KeyObject *)o;
    PyObject *nonces, *dataobj, *offobj, *aadobj = Py_None;
    int prefix = 0, raise = 1;
    Py_ssize_t nonce_len = 12;
    const char *errors = "raise";
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OOO|Opns", kwlist, &nonces, &dataobj, &offobj,
                                     &aadobj, &prefix, &nonce_len, &errors) ||
        parse_errors(errors, &raise) < 0 || check_gcm_key(k) < 0 || check_nonce(nonce_len) < 0) {
        return NULL;
    }
    Offsets off;
    Py_buffer db, nb, ab;
    memset(&nb, 0, sizeof nb);
    memset(&ab, 0, sizeof ab);
    if (offsets_get(offobj, &off) < 0) {
        return NULL;
    }
    if (get_ro(dataobj, &db, "data") < 0) {
        PyBuffer_Release(&off.v);
        return NULL;
    }
    PyObject *out = NULL, *outoff = NULL, *ok = NULL, *result = NULL;
    Py_ssize_t n = off.n;
    const int64_t extra = GCM_TAG + (prefix ? nonce_len : 0);
    int use_nonce_buf = enc || !prefix;
    if (get_ro_opt(aadobj, &ab, "aad") < 0) {
        goto done;
    }
    if (use_nonce_buf) {
        if (get_ro_opt(nonces, &nb, "nonces") < 0) {
            goto done;
        }
        if (nb.len != n * nonce_len) {
            PyErr_Format(PyExc_ValueError, "nonces: %zd bytes for %zd messages of %zd-byte nonces",
                         nb.len, n, nonce_len);
            goto done;
        }
    } else if (nonces != Py_None) {
        PyErr_SetString(PyExc_ValueError, "nonces must be None with prefix_nonce=True (each "
                                          "row starts with its nonce)");
        goto done;
    }
    /* Check the offsets and size the output before anything is written. */
    int64_t first = offsets_at(&off, 0), prev = first, total = 0;
    for (Py_ssize_t i = 1; i <= n; i++) {
        int64_t x = offsets_at(&off, i);
        if (x < prev || x > db.len) {
            PyErr_Format(PyExc_ValueError,
                         "offsets[%zd] = %lld out of order or past the data (%zd bytes)", i,
                         (long long)x, db.len);
            goto done;
        }
        int64_t len = x - prev;
        total += enc ? len + extra : (len >= extra ? len - extra : 0);
        prev = x;
    }
    if (first < 0 || first > db.len) {
        PyErr_SetString(PyExc_ValueError, "offsets[0] out of range");
        goto done;
    }
    uint8_t *o8, *oo8, *ok8;
    out = new_bytes((Py_ssize_t)total, &o8);
    outoff = out ? new_bytes((n + 1) * 8, &oo8) : NULL;
    ok = outoff ? new_bytes(n, &ok8) : NULL;
    if (ok == NULL) {
        goto done;
    }
    {
        const uint8_t *data = db.buf, *nbuf = nb.buf;
        const uint8_t *aad = ab.buf;
        size_t alen = (size_t)ab.len;
        int bad = 0;
        Py_BEGIN_ALLOW_THREADS int64_t pos = 0;
        for (Py_ssize_t i = 0; i < n; i++) {
            int64_t a = offsets_at(&off, i), b = offsets_at(&off, i + 1);
            const uint8_t *in = data + a;
            size_t len = (size_t)(b - a);
            uint8_t *dst = o8 + pos;
            int rc;
            memcpy(oo8 + 8 * i, &pos, 8);
            if (enc) {
                const uint8_t *nonce = nbuf + i * nonce_len;
                if (prefix) {
                    memcpy(dst, nonce, (size_t)nonce_len);
                    dst += nonce_len;
                }
                rc = kuai_gcm_encrypt(k->key, nonce, (size_t)nonce_len, aad, alen, in, dst, len,
                                      dst + len, GCM_TAG);
                pos += (int64_t)len + extra;
            } else if ((int64_t)len < extra) {
                rc = KUAI_ERR_AUTH;
            } else {
                const uint8_t *nonce = prefix ? in : nbuf + i * nonce_len;
                const uint8_t *ct = prefix ? in + nonce_len : in;
                size_t ctlen = len - (size_t)extra;
                rc = kuai_gcm_decrypt(k->key, nonce, (size_t)nonce_len, aad, alen, ct, dst, ctlen,
                                      ct + ctlen, GCM_TAG);
                /* A failed row stays in the output as zeros (what the
                 * library leaves); its ok byte says to drop it. */
                pos += (int64_t)ctlen;
            }
            ok8[i] = rc == KUAI_OK;
            bad |= rc != KUAI_OK;
            if (rc != KUAI_OK && rc != KUAI_ERR_AUTH) {
                bad = 2;
            }
        }
        memcpy(oo8 + 8 * n, &pos, 8);
        Py_END_ALLOW_THREADS if (bad == 2)
        {
            PyErr_SetString(PyExc_ValueError, "GCM: a message is longer than GCM allows");
            goto done;
        }
        if (bad && raise) {
            Py_ssize_t i = 0;
            while (ok8[i]) {
                i++;
            }
            PyErr_Format(InvalidTag, "message %zd of %zd failed authentication", i, n);
            goto done;
        }
    }
    {
        /* The offsets as int64 items (format "q"), so that they index, go to
         * numpy/Arrow and come back to decrypt_packed as they are. */
        PyObject *mv = PyMemoryView_FromObject(outoff);
        PyObject *q = mv ? PyObject_CallMethod(mv, "cast", "s", "q") : NULL;
        Py_XDECREF(mv);
        if (q == NULL) {
            goto done;
        }
        result = enc ? PyTuple_Pack(2, out, q) : PyTuple_Pack(3, out, q, ok);
        Py_DECREF(q);
    }
done:
    Py_XDECREF(out);
    Py_XDECREF(outoff);
    Py_XDECREF(ok);
    PyBuffer_Release(&off.v);
    PyBuffer_Release(&db);
    release(&nb);
    release(&ab);
    return result;
}

static PyObject *key_gcm_encrypt_packed(PyObject *o, PyObject *args, PyObject *kwds)
{
    return gcm_packed(o, args, kwds, 1);
}

static PyObject *key_gcm_decrypt_packed(PyObject *o, PyObject *args, PyObject *kwds)
{
    return gcm_packed(o, args, kwds, 0);
}

/* cbc_encrypt_packed(ivs, data, offsets) -> (out, out_offsets)
 * cbc_decrypt_packed(data, offsets) -> (out, out_offsets, ok)
 * Row i is written as IV_i || CBC(PKCS#7(data_i)) (the layout of Spark's
 * aes_encrypt in CBC mode) and read back from that form; ivs is n blocks in
 * one buffer. A row that is not IV + whole blocks, or whose padding is not
 * PKCS#7, gets ok[i] = 0 and no bytes (its decrypted bytes are erased).
 * One C call for all rows, the GIL released (kuai.spark). */
static PyObject *cbc_packed(PyObject *o, PyObject *args, int enc)
{
    KeyObject *k = (KeyObject *)o;
    PyObject *ivobj = NULL, *dataobj, *offobj;
    if (enc ? !PyArg_ParseTuple(args, "OOO", &ivobj, &dataobj, &offobj)
            : !PyArg_ParseTuple(args, "OO", &dataobj, &offobj)) {
        return NULL;
    }
    if (k->block != 16) {
        PyErr_Format(PyExc_ValueError, "packed CBC needs a 128-bit-block cipher, not %s",
                     kuai_cipher_name((kuai_cipher)k->cipher));
        return NULL;
    }
    const int64_t bs = 16;
    Offsets off;
    Py_buffer db, ib;
    memset(&ib, 0, sizeof ib);
    if (offsets_get(offobj, &off) < 0) {
        return NULL;
    }
    if (get_ro(dataobj, &db, "data") < 0) {
        PyBuffer_Release(&off.v);
        return NULL;
    }
    PyObject *out = NULL, *outoff = NULL, *ok = NULL, *result = NULL;
    Py_ssize_t n = off.n;
    if (enc) {
        if (get_ro(ivobj, &ib, "ivs") < 0) {
            goto done;
        }
        if (ib.len != n * bs) {
            PyErr_Format(PyExc_ValueError, "ivs: %zd bytes for %zd messages of 16-byte IVs", ib.len,
                         n);
            goto done;
        }
    }
    int64_t first = offsets_at(&off, 0), prev = first, total = 0;
    if (first < 0 || first > db.len) {
        PyErr_SetString(PyExc_ValueError, "offsets[0] out of range");
        goto done;
    }
    for (Py_ssize_t i = 1; i <= n; i++) {
        int64_t x = offsets_at(&off, i);
        if (x < prev || x > db.len) {
            PyErr_Format(PyExc_ValueError,
                         "offsets[%zd] = %lld out of order or past the data (%zd bytes)", i,
                         (long long)x, db.len);
            goto done;
        }
        int64_t len = x - prev;
        total += enc ? bs + (len / bs + 1) * bs : (len > bs ? len - bs : 0);
        prev = x;
    }
    uint8_t *o8, *oo8, *ok8;
    out = new_bytes((Py_ssize_t)total, &o8);
    outoff = out ? new_bytes((n + 1) * 8, &oo8) : NULL;
    ok = outoff ? new_bytes(n, &ok8) : NULL;
    if (ok == NULL) {
        goto done;
    }
    {
        const uint8_t *data = db.buf, *ivs = ib.buf;
        int bad = 0;
        Py_BEGIN_ALLOW_THREADS int64_t pos = 0;
        for (Py_ssize_t i = 0; i < n; i++) {
            int64_t a = offsets_at(&off, i), b = offsets_at(&off, i + 1);
            const uint8_t *in = data + a;
            size_t len = (size_t)(b - a);
            uint8_t *dst = o8 + pos;
            uint8_t iv[16];
            int rc = KUAI_OK;
            memcpy(oo8 + 8 * i, &pos, 8);
            if (enc) {
                size_t padded = (len / 16 + 1) * 16;
                uint8_t pad = (uint8_t)(padded - len);
                memcpy(iv, ivs + 16 * i, 16);
                memcpy(dst, iv, 16);
                memcpy(dst + 16, in, len);
                memset(dst + 16 + len, pad, pad);
                rc = kuai_cbc_encrypt(k->key, iv, dst + 16, dst + 16, padded);
                pos += 16 + (int64_t)padded;
                ok8[i] = rc == KUAI_OK;
            } else if (len < 32 || len % 16 != 0) {
                ok8[i] = 0;
            } else {
                size_t ctlen = len - 16;
                memcpy(iv, in, 16);
                rc = kuai_cbc_decrypt(k->key, iv, in + 16, dst, ctlen);
                /* PKCS#7 checked over the whole last block without a branch
                 * on its bytes: 1 <= p <= 16 and the last p bytes equal p. */
                const uint8_t *last = dst + ctlen - 16;
                unsigned p = last[15], diff = 0;
                for (unsigned j = 0; j < 16; j++) {
                    unsigned in_pad = (unsigned)(((int)(15 - j) - (int)p) >> 8) & 1; /* 15-j < p */
                    diff |= (last[j] ^ p) & (0u - in_pad);
                }
                diff |= (unsigned)((int)(p - 1) >> 8) & 1;  /* p == 0 */
                diff |= (unsigned)((int)(16 - p) >> 8) & 1; /* p > 16 */
                int good = rc == KUAI_OK && diff == 0;
                ok8[i] = (uint8_t)good;
                if (good) {
                    pos += (int64_t)(ctlen - p);
                } else {
                    memset(dst, 0, ctlen);
                }
            }
            bad |= rc != KUAI_OK;
        }
        memcpy(oo8 + 8 * n, &pos, 8);
        Py_END_ALLOW_THREADS if (bad)
        {
            PyErr_SetString(PyExc_ValueError, "CBC: the cipher call failed");
            goto done;
        }
    }
    {
        PyObject *mv = PyMemoryView_FromObject(outoff);
        PyObject *q = mv ? PyObject_CallMethod(mv, "cast", "s", "q") : NULL;
        Py_XDECREF(mv);
        if (q == NULL) {
            goto done;
        }
        result = enc ? PyTuple_Pack(2, out, q) : PyTuple_Pack(3, out, q, ok);
        Py_DECREF(q);
    }
done:
    Py_XDECREF(out);
    Py_XDECREF(outoff);
    Py_XDECREF(ok);
    PyBuffer_Release(&off.v);
    PyBuffer_Release(&db);
    release(&ib);
    return result;
}

static PyObject *key_cbc_encrypt_packed(PyObject *o, PyObject *args)
{
    return cbc_packed(o, args, 1);
}

static PyObject *key_cbc_decrypt_packed(PyObject *o, PyObject *args)
{
    return cbc_packed(o, args, 0);
}

static PyMethodDef key_methods[] = {
    {"gcm_encrypt", (PyCFunction)(void (*)(void))key_gcm_encrypt, METH_FASTCALL,
     "gcm_encrypt(nonce, data, associated_data) -> ciphertext || tag"},
    {"gcm_decrypt", (PyCFunction)(void (*)(void))key_gcm_decrypt, METH_FASTCALL,
     "gcm_decrypt(nonce, ciphertext || tag, associated_data) -> plaintext (InvalidTag)"},
    {"gcm_encrypt_batch", (PyCFunction)(void (*)(void))key_gcm_encrypt_batch,
     METH_VARARGS | METH_KEYWORDS, "gcm_encrypt_batch(nonces, datas, aad=None) -> list[bytes]"},
    {"gcm_decrypt_batch", (PyCFunction)(void (*)(void))key_gcm_decrypt_batch,
     METH_VARARGS | METH_KEYWORDS,
     "gcm_decrypt_batch(nonces, datas, aad=None, errors='raise') -> list[bytes | None]"},
    {"gcm_encrypt_packed", (PyCFunction)(void (*)(void))key_gcm_encrypt_packed,
     METH_VARARGS | METH_KEYWORDS,
     "gcm_encrypt_packed(nonces, data, offsets, aad=None, prefix_nonce=False, nonce_len=12)"},
    {"gcm_decrypt_packed", (PyCFunction)(void (*)(void))key_gcm_decrypt_packed,
     METH_VARARGS | METH_KEYWORDS,
     "gcm_decrypt_packed(nonces, data, offsets, aad=None, prefix_nonce=False, nonce_len=12, "
     "errors='raise')"},
    {"cbc_encrypt_packed", key_cbc_encrypt_packed, METH_VARARGS,
     "cbc_encrypt_packed(ivs, data, offsets) -> (out, out_offsets): rows IV || CBC(PKCS#7(row))"},
    {"cbc_decrypt_packed", key_cbc_decrypt_packed, METH_VARARGS,
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

static PyType_Spec key_spec = {"kuai._kuai.Key", sizeof(KeyObject), 0,
                               Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE, key_slots};

/* ----------------------------------------------------------------- Stream */

enum { OP_ECB_ENC, OP_ECB_DEC, OP_CBC_ENC, OP_CBC_DEC, OP_CTR };

typedef struct {
    PyObject_HEAD PyObject *keyobj; /* NULL once finalized */
    const kuai_key *key;
    PyThread_type_lock lock;
    int op;
    size_t block;
    size_t pending;               /* ECB/CBC: bytes in part[] */
    size_t ks_used;               /* CTR: keystream bytes of part[] already used */
    uint8_t iv[KUAI_MAX_BLOCK];   /* CBC chaining value or CTR counter */
    uint8_t part[KUAI_MAX_BLOCK]; /* ECB/CBC partial block, or CTR keystream */
} StreamObject;

static int run_blocks(StreamObject *s, const uint8_t *in, uint8_t *out, size_t len)
{
    switch (s->op) {
    case OP_ECB_ENC:
        return kuai_ecb_encrypt(s->key, in, out, len);
    case OP_ECB_DEC:
        return kuai_ecb_decrypt(s->key, in, out, len);
    case OP_CBC_ENC:
        return kuai_cbc_encrypt(s->key, s->iv, in, out, len);
    case OP_CBC_DEC:
        return kuai_cbc_decrypt(s->key, s->iv, in, out, len);
    default:
        return kuai_ctr_crypt(s->key, s->iv, in, out, len);
    }
}

/* How many bytes an update of len bytes writes. */
static size_t stream_out_len(const StreamObject *s, size_t len)
{
    if (s->op == OP_CTR) {
        return len;
    }
    size_t t = s->pending + len;
    return t - t % s->block;
}

/* The whole update; in and out do not overlap, or in == out with nothing
 * pending (the caller copies otherwise). */
static int stream_run(StreamObject *s, const uint8_t *in, uint8_t *out, size_t len)
{
    size_t bs = s->block;
    int rc = KUAI_OK;
    if (s->op == OP_CTR) {
        while (len > 0 && s->ks_used < bs) {
            *out++ = *in++ ^ s->part[s->ks_used++];
            len--;
        }
        size_t body = len - len % bs;
        if (body > 0 && (rc = kuai_ctr_crypt(s->key, s->iv, in, out, body)) != KUAI_OK) {
            return rc;
        }
        size_t tail = len - body;
        if (tail > 0) {
            memset(s->part, 0, bs);
            if ((rc = kuai_ctr_crypt(s->key, s->iv, s->part, s->part, bs)) != KUAI_OK) {
                return rc;
            }
            for (size_t i = 0; i < tail; i++) {
                out[body + i] = in[body + i] ^ s->part[i];
            }
            s->ks_used = tail;
        }
        return KUAI_OK;
    }
    if (s->pending > 0) {
        size_t fill = bs - s->pending < len ? bs - s->pending : len;
        memcpy(s->part + s->pending, in, fill);
        s->pending += fill;
        in += fill;
        len -= fill;
        if (s->pending < bs) {
            return KUAI_OK;
        }
        if ((rc = run_blocks(s, s->part, out, bs)) != KUAI_OK) {
            return rc;
        }
        out += bs;
        s->pending = 0;
    }
    size_t body = len - len % bs;
    if (body > 0 && (rc = run_blocks(s, in, out, body)) != KUAI_OK) {
        return rc;
    }
    memcpy(s->part, in + body, len - body);
    s->pending = len - body;
    return KUAI_OK;
}

static void stream_lock(StreamObject *s)
{
    if (!PyThread_acquire_lock(s->lock, NOWAIT_LOCK)) {
        Py_BEGIN_ALLOW_THREADS PyThread_acquire_lock(s->lock, WAIT_LOCK);
        Py_END_ALLOW_THREADS
    }
}

static int stream_check(StreamObject *s)
{
    if (s->keyobj == NULL) {
        PyErr_SetString(AlreadyFinalized, "Context was already finalized.");
        return -1;
    }
    return 0;
}

/* The update into out (outlen bytes of room). Returns bytes written or -1. */
static Py_ssize_t stream_update(StreamObject *s, const uint8_t *in, size_t len, uint8_t *out,
                                size_t room)
{
    size_t n = stream_out_len(s, len);
    if (room < n) {
        PyErr_Format(PyExc_ValueError, "buffer must be at least %zu bytes for this call", n);
        return -1;
    }
    uint8_t *tmp = NULL;
    if (overlaps(in, len, out, n) && (in != out || s->pending > 0)) {
        tmp = PyMem_Malloc(len);
        if (tmp == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        memcpy(tmp, in, len);
        in = tmp;
    }
    int rc;
    if (len >= KUAI_GIL_BYTES) {
        Py_BEGIN_ALLOW_THREADS rc = stream_run(s, in, out, len);
        Py_END_ALLOW_THREADS
    } else {
        rc = stream_run(s, in, out, len);
    }
    PyMem_Free(tmp);
    if (rc != KUAI_OK) {
        raise_kuai(rc, "update");
        return -1;
    }
    return (Py_ssize_t)n;
}

static PyObject *stream_py_update(PyObject *o, PyObject *data)
{
    StreamObject *s = (StreamObject *)o;
    Py_buffer db;
    if (get_ro(data, &db, "data") < 0) {
        return NULL;
    }
    PyObject *r = NULL;
    stream_lock(s);
    if (stream_check(s) == 0) {
        uint8_t *out;
        size_t n = stream_out_len(s, (size_t)db.len);
        if ((r = new_bytes((Py_ssize_t)n, &out)) != NULL &&
            stream_update(s, db.buf, (size_t)db.len, out, n) < 0) {
            Py_CLEAR(r);
        }
    }
    PyThread_release_lock(s->lock);
    PyBuffer_Release(&db);
    return r;
}

static PyObject *stream_py_update_into(PyObject *o, PyObject *const *args, Py_ssize_t nargs)
{
    StreamObject *s = (StreamObject *)o;
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "update_into(data, buf) takes 2 arguments");
        return NULL;
    }
    Py_buffer db, ob;
    if (get_ro(args[0], &db, "data") < 0) {
        return NULL;
    }
    if (PyObject_GetBuffer(args[1], &ob, PyBUF_WRITABLE) < 0) {
        if (PyErr_ExceptionMatches(PyExc_TypeError) || PyErr_ExceptionMatches(PyExc_BufferError)) {
            PyErr_SetString(PyExc_TypeError,
                            "buf must be a writable, C-contiguous bytes-like object (bytearray, "
                            "memoryview of one, numpy array)");
        }
        PyBuffer_Release(&db);
        return NULL;
    }
    PyObject *r = NULL;
    stream_lock(s);
    if (stream_check(s) == 0) {
        Py_ssize_t n = stream_update(s, db.buf, (size_t)db.len, ob.buf, (size_t)ob.len);
        if (n >= 0) {
            r = PyLong_FromSsize_t(n);
        }
    }
    PyThread_release_lock(s->lock);
    PyBuffer_Release(&db);
    PyBuffer_Release(&ob);
    return r;
}

static void stream_clear(StreamObject *s)
{
    /* The counter/IV and any partial block are secret-adjacent: erase. */
    volatile uint8_t *p = s->iv;
    for (size_t i = 0; i < sizeof s->iv; i++) {
        p[i] = 0;
    }
    p = s->part;
    for (size_t i = 0; i < sizeof s->part; i++) {
        p[i] = 0;
    }
    Py_CLEAR(s->keyobj);
    s->key = NULL;
}

static PyObject *stream_py_finalize(PyObject *o, PyObject *unused)
{
    (void)unused;
    StreamObject *s = (StreamObject *)o;
    PyObject *r = NULL;
    stream_lock(s);
    if (stream_check(s) == 0) {
        if (s->op != OP_CTR && s->pending != 0) {
            PyErr_SetString(
                PyExc_ValueError,
                "The length of the provided data is not a multiple of the block length.");
        } else {
            r = PyBytes_FromStringAndSize(NULL, 0);
        }
        stream_clear(s);
    }
    PyThread_release_lock(s->lock);
    return r;
}

static void stream_dealloc(PyObject *o)
{
    StreamObject *s = (StreamObject *)o;
    PyTypeObject *tp = Py_TYPE(o);
    stream_clear(s);
    if (s->lock != NULL) {
        PyThread_free_lock(s->lock);
    }
    freefunc f = (freefunc)PyType_GetSlot(tp, Py_tp_free);
    f(o);
    Py_DECREF(tp);
}

static PyMethodDef stream_methods[] = {
    {"update", stream_py_update, METH_O, "update(data) -> bytes"},
    {"update_into", (PyCFunction)(void (*)(void))stream_py_update_into, METH_FASTCALL,
     "update_into(data, buf) -> int: the output written into buf (zero copies; buf may be data)"},
    {"finalize", stream_py_finalize, METH_NOARGS, "finalize() -> b''"},
    {NULL, NULL, 0, NULL}};

static PyType_Slot stream_slots[] = {{Py_tp_dealloc, stream_dealloc},
                                     {Py_tp_methods, stream_methods},
                                     {Py_tp_doc, "An ECB/CBC/CTR encryptor or decryptor."},
                                     {0, NULL}};

static PyType_Spec stream_spec = {"kuai._kuai.Stream", sizeof(StreamObject), 0, Py_TPFLAGS_DEFAULT,
                                  stream_slots};

/* stream(key, op, iv_or_None) -> Stream */
static PyObject *mod_stream(PyObject *mod, PyObject *args)
{
    (void)mod;
    PyObject *keyobj, *ivobj;
    int op;
    if (!PyArg_ParseTuple(args, "OiO:stream", &keyobj, &op, &ivobj)) {
        return NULL;
    }
    if (!is_key(keyobj)) {
        PyErr_SetString(PyExc_TypeError, "stream: key must be a kuai key");
        return NULL;
    }
    if (op < OP_ECB_ENC || op > OP_CTR) {
        PyErr_SetString(PyExc_ValueError, "stream: unknown operation");
        return NULL;
    }
    KeyObject *k = (KeyObject *)keyobj;
    Py_buffer ivb;
    if (get_ro_opt(ivobj, &ivb, "iv") < 0) {
        return NULL;
    }
    int need_iv = op >= OP_CBC_ENC;
    if (need_iv ? (size_t)ivb.len != k->block : ivb.obj != NULL) {
        PyErr_Format(PyExc_ValueError, "Invalid IV size (%zd) for %s: %zu bytes needed", ivb.len,
                     op == OP_CTR ? "CTR" : "CBC", k->block);
        release(&ivb);
        return NULL;
    }
    PyTypeObject *tp = (PyTypeObject *)StreamType;
    allocfunc alloc = (allocfunc)PyType_GetSlot(tp, Py_tp_alloc);
    StreamObject *s = (StreamObject *)alloc(tp, 0);
    if (s == NULL) {
        release(&ivb);
        return NULL;
    }
    s->lock = PyThread_allocate_lock();
    if (s->lock == NULL) {
        release(&ivb);
        Py_DECREF(s);
        return PyErr_NoMemory();
    }
    Py_INCREF(keyobj);
    s->keyobj = keyobj;
    s->key = k->key;
    s->op = op;
    s->block = k->block;
    s->ks_used = k->block;
    if (need_iv) {
        memcpy(s->iv, ivb.buf, k->block);
    }
    release(&ivb);
    return (PyObject *)s;
}

/* ------------------------------------------------------------- GcmStream */

/* Streaming GCM over kuai_gcm_init, _aad, _{en,de}crypt_update and _final, in the shape of
 * cryptography's GCM contexts: authenticate_additional_data, update,
 * update_into, finalize, .tag (encryptor), finalize_with_tag (decryptor).
 * The library keeps the order (AAD before data) and wipes the context at
 * final; a lock serialises concurrent calls on one context. */
typedef struct {
    PyObject_HEAD PyObject *keyobj; /* NULL once finalized */
    PyThread_type_lock lock;
    int enc;
    int started;    /* update called: no more AAD */
    size_t tag_len; /* decryptor: the tag given up front (0: none) */
    uint8_t tag[GCM_TAG];
    int have_tag; /* encryptor: finalized, tag[] is the tag */
    kuai_gcm_ctx ctx;
} GcmObject;

static int gcm_check(GcmObject *g)
{
    if (g->keyobj == NULL) {
        PyErr_SetString(AlreadyFinalized, "Context was already finalized.");
        return -1;
    }
    return 0;
}

static void gcm_lock(GcmObject *g)
{
    if (!PyThread_acquire_lock(g->lock, NOWAIT_LOCK)) {
        Py_BEGIN_ALLOW_THREADS PyThread_acquire_lock(g->lock, WAIT_LOCK);
        Py_END_ALLOW_THREADS
    }
}

static void gcm_done(GcmObject *g)
{
    kuai_gcm_wipe(&g->ctx);
    Py_CLEAR(g->keyobj);
}

static PyObject *gcm_py_aad(PyObject *o, PyObject *data)
{
    GcmObject *g = (GcmObject *)o;
    Py_buffer db;
    if (get_ro(data, &db, "data") < 0) {
        return NULL;
    }
    PyObject *r = NULL;
    gcm_lock(g);
    if (gcm_check(g) == 0) {
        if (g->started) {
            PyErr_SetString(PyExc_ValueError,
                            "authenticate_additional_data must come before update");
        } else {
            int rc;
            if (db.len >= KUAI_GIL_BYTES) {
                Py_BEGIN_ALLOW_THREADS rc = kuai_gcm_aad(&g->ctx, db.buf, (size_t)db.len);
                Py_END_ALLOW_THREADS
            } else {
                rc = kuai_gcm_aad(&g->ctx, db.buf, (size_t)db.len);
            }
            if (rc != KUAI_OK) {
                raise_kuai(rc, "authenticate_additional_data");
            } else {
                r = Py_None;
                Py_INCREF(r);
            }
        }
    }
    PyThread_release_lock(g->lock);
    PyBuffer_Release(&db);
    return r;
}

/* len bytes from in to out (room checked by the caller); -1 on error. */
static int gcm_run(GcmObject *g, const uint8_t *in, uint8_t *out, size_t len)
{
    uint8_t *tmp = NULL;
    if (overlaps(in, len, out, len) && in != out) {
        tmp = PyMem_Malloc(len);
        if (tmp == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        memcpy(tmp, in, len);
        in = tmp;
    }
    int rc;
    g->started = 1;
    if (len >= KUAI_GIL_BYTES) {
        Py_BEGIN_ALLOW_THREADS rc = g->enc ? kuai_gcm_encrypt_update(&g->ctx, in, out, len)
                                           : kuai_gcm_decrypt_update(&g->ctx, in, out, len);
        Py_END_ALLOW_THREADS
    } else {
        rc = g->enc ? kuai_gcm_encrypt_update(&g->ctx, in, out, len)
                    : kuai_gcm_decrypt_update(&g->ctx, in, out, len);
    }
    PyMem_Free(tmp);
    if (rc != KUAI_OK) {
        raise_kuai(rc, "update");
        return -1;
    }
    return 0;
}

static PyObject *gcm_py_update(PyObject *o, PyObject *data)
{
    GcmObject *g = (GcmObject *)o;
    Py_buffer db;
    if (get_ro(data, &db, "data") < 0) {
        return NULL;
    }
    PyObject *r = NULL;
    gcm_lock(g);
    if (gcm_check(g) == 0) {
        uint8_t *out;
        if ((r = new_bytes(db.len, &out)) != NULL && gcm_run(g, db.buf, out, (size_t)db.len) < 0) {
            Py_CLEAR(r);
        }
    }
    PyThread_release_lock(g->lock);
    PyBuffer_Release(&db);
    return r;
}

static PyObject *gcm_py_update_into(PyObject *o, PyObject *const *args, Py_ssize_t nargs)
{
    GcmObject *g = (GcmObject *)o;
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "update_into(data, buf) takes 2 arguments");
        return NULL;
    }
    Py_buffer db, ob;
    if (get_ro(args[0], &db, "data") < 0) {
        return NULL;
    }
    if (PyObject_GetBuffer(args[1], &ob, PyBUF_WRITABLE) < 0) {
        if (PyErr_ExceptionMatches(PyExc_TypeError) || PyErr_ExceptionMatches(PyExc_BufferError)) {
            PyErr_SetString(PyExc_TypeError,
                            "buf must be a writable, C-contiguous bytes-like object (bytearray, "
                            "memoryview of one, numpy array)");
        }
        PyBuffer_Release(&db);
        return NULL;
    }
    PyObject *r = NULL;
    gcm_lock(g);
    if (gcm_check(g) == 0) {
        if (ob.len < db.len) {
            PyErr_Format(PyExc_ValueError, "buffer must be at least %zd bytes for this call",
                         db.len);
        } else if (gcm_run(g, db.buf, ob.buf, (size_t)db.len) == 0) {
            r = PyLong_FromSsize_t(db.len);
        }
    }
    PyThread_release_lock(g->lock);
    PyBuffer_Release(&db);
    PyBuffer_Release(&ob);
    return r;
}

/* Decryptor: checks tag (tag_len bytes); encryptor: tag is NULL. */
static PyObject *gcm_final(GcmObject *g, const uint8_t *tag, size_t tag_len)
{
    PyObject *r = NULL;
    gcm_lock(g);
    if (gcm_check(g) == 0) {
        int rc;
        if (g->enc) {
            rc = kuai_gcm_encrypt_final(&g->ctx, g->tag, GCM_TAG);
            g->have_tag = rc == KUAI_OK;
        } else {
            rc = kuai_gcm_decrypt_final(&g->ctx, tag, tag_len);
        }
        gcm_done(g);
        if (rc == KUAI_ERR_AUTH) {
            PyErr_SetNone(InvalidTag);
        } else if (rc != KUAI_OK) {
            raise_kuai(rc, "finalize");
        } else {
            r = PyBytes_FromStringAndSize(NULL, 0);
        }
    }
    PyThread_release_lock(g->lock);
    return r;
}

static PyObject *gcm_py_finalize(PyObject *o, PyObject *unused)
{
    (void)unused;
    GcmObject *g = (GcmObject *)o;
    if (!g->enc && g->tag_len == 0 && g->keyobj != NULL) {
        PyErr_SetString(PyExc_ValueError, "Authentication tag must be provided when decrypting "
                                          "(GCM(nonce, tag) or finalize_with_tag(tag)).");
        return NULL;
    }
    return gcm_final(g, g->tag, g->tag_len);
}

static PyObject *gcm_py_finalize_with_tag(PyObject *o, PyObject *tagobj)
{
    GcmObject *g = (GcmObject *)o;
    if (g->enc) {
        PyErr_SetString(PyExc_ValueError, "finalize_with_tag is for decryption (encryptors: "
                                          "finalize(), then .tag)");
        return NULL;
    }
    if (g->tag_len != 0) {
        PyErr_SetString(PyExc_ValueError,
                        "the tag was already given to GCM(nonce, tag): call finalize()");
        return NULL;
    }
    Py_buffer tb;
    if (get_ro(tagobj, &tb, "tag") < 0) {
        return NULL;
    }
    PyObject *r = NULL;
    if (tb.len < 4 || tb.len > GCM_TAG) {
        PyErr_Format(PyExc_ValueError, "Authentication tag must be 4 to 16 bytes, not %zd", tb.len);
    } else {
        r = gcm_final(g, tb.buf, (size_t)tb.len);
    }
    PyBuffer_Release(&tb);
    return r;
}

static PyObject *gcm_get_tag(PyObject *o, void *unused)
{
    (void)unused;
    GcmObject *g = (GcmObject *)o;
    if (!g->enc) {
        PyErr_SetString(PyExc_AttributeError, "a GCM decryptor has no tag (it checks one)");
        return NULL;
    }
    if (!g->have_tag) {
        PyErr_SetString(NotYetFinalized, "You must finalize encryption before getting the tag.");
        return NULL;
    }
    return PyBytes_FromStringAndSize((const char *)g->tag, GCM_TAG);
}

static void gcm_dealloc(PyObject *o)
{
    GcmObject *g = (GcmObject *)o;
    PyTypeObject *tp = Py_TYPE(o);
    gcm_done(g);
    volatile uint8_t *p = g->tag;
    for (size_t i = 0; i < sizeof g->tag; i++) {
        p[i] = 0;
    }
    if (g->lock != NULL) {
        PyThread_free_lock(g->lock);
    }
    freefunc f = (freefunc)PyType_GetSlot(tp, Py_tp_free);
    f(o);
    Py_DECREF(tp);
}

static PyMethodDef gcm_methods[] = {
    {"authenticate_additional_data", gcm_py_aad, METH_O,
     "authenticate_additional_data(data): AAD, before any update"},
    {"update", gcm_py_update, METH_O, "update(data) -> bytes"},
    {"update_into", (PyCFunction)(void (*)(void))gcm_py_update_into, METH_FASTCALL,
     "update_into(data, buf) -> int (buf may be data: in place)"},
    {"finalize", gcm_py_finalize, METH_NOARGS,
     "finalize() -> b''; a decryptor checks the tag of GCM(nonce, tag): InvalidTag"},
    {"finalize_with_tag", gcm_py_finalize_with_tag, METH_O,
     "finalize_with_tag(tag) -> b'' (decryptor); InvalidTag"},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef gcm_getset[] = {
    {"tag", gcm_get_tag, NULL, "the 16-byte tag, after finalize() (encryptor)", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyType_Slot gcm_slots[] = {{Py_tp_dealloc, gcm_dealloc},
                                  {Py_tp_methods, gcm_methods},
                                  {Py_tp_getset, gcm_getset},
                                  {Py_tp_doc, "A streaming GCM encryptor or decryptor."},
                                  {0, NULL}};

static PyType_Spec gcm_spec = {"kuai._kuai.GcmStream", sizeof(GcmObject), 0, Py_TPFLAGS_DEFAULT,
                               gcm_slots};

/* gcm_stream(key, encrypt, nonce, tag_or_None) -> GcmStream */
static PyObject *mod_gcm_stream(PyObject *mod, PyObject *args)
{
    (void)mod;
    PyObject *keyobj, *nonceobj, *tagobj;
    int enc;
    if (!PyArg_ParseTuple(args, "OpOO:gcm_stream", &keyobj, &enc, &nonceobj, &tagobj)) {
        return NULL;
    }
    if (!is_key(keyobj)) {
        PyErr_SetString(PyExc_TypeError, "gcm_stream: key must be a kuai key");
        return NULL;
    }
    KeyObject *k = (KeyObject *)keyobj;
    if (check_gcm_key(k) < 0) {
        return NULL;
    }
    Py_buffer nb, tb;
    if (get_ro(nonceobj, &nb, "nonce") < 0) {
        return NULL;
    }
    if (get_ro_opt(tagobj, &tb, "tag") < 0) {
        PyBuffer_Release(&nb);
        return NULL;
    }
    GcmObject *g = NULL;
    if (check_nonce(nb.len) < 0) {
        goto out;
    }
    if (tb.obj != NULL && (enc || tb.len < 4 || tb.len > GCM_TAG)) {
        PyErr_SetString(PyExc_ValueError, enc ? "Authentication tag must be None when encrypting."
                                              : "Authentication tag must be 4 to 16 bytes");
        goto out;
    }
    PyTypeObject *tp = (PyTypeObject *)GcmType;
    allocfunc alloc = (allocfunc)PyType_GetSlot(tp, Py_tp_alloc);
    g = (GcmObject *)alloc(tp, 0);
    if (g == NULL) {
        goto out;
    }
    g->lock = PyThread_allocate_lock();
    if (g->lock == NULL) {
        Py_CLEAR(g);
        PyErr_NoMemory();
        goto out;
    }
    int rc = kuai_gcm_init(&g->ctx, k->key, nb.buf, (size_t)nb.len);
    if (rc != KUAI_OK) {
        Py_CLEAR(g);
        raise_kuai(rc, "GCM");
        goto out;
    }
    Py_INCREF(keyobj);
    g->keyobj = keyobj;
    g->enc = enc;
    if (tb.obj != NULL) {
        memcpy(g->tag, tb.buf, (size_t)tb.len);
        g->tag_len = (size_t)tb.len;
    }
out:
    PyBuffer_Release(&nb);
    release(&tb);
    return (PyObject *)g;
}

/* ------------------------------------------------------- multi-key (CBC) */

/* cbc_multi(encrypt, keys, ivs, datas) -> list[bytes] */
static PyObject *mod_cbc_multi(PyObject *mod, PyObject *args)
{
    (void)mod;
    int enc;
    PyObject *keys, *ivs, *datas;
    if (!PyArg_ParseTuple(args, "pOOO:cbc_multi", &enc, &keys, &ivs, &datas)) {
        return NULL;
    }
    PyObject *klist = PySequence_List(keys);
    if (klist == NULL) {
        return NULL;
    }
    Py_ssize_t n = PyList_Size(klist);
    BufList il, dl;
    PyObject *result = NULL;
    const kuai_key **kp = NULL;
    uint8_t **ivp = NULL, **outp = NULL;
    const uint8_t **inp = NULL;
    if (n == 0) {
        Py_DECREF(klist);
        return PyList_New(0);
    }
    if (buflist_get(ivs, &il, n, 0, "ivs") < 0) {
        Py_DECREF(klist);
        return NULL;
    }
    if (buflist_get(datas, &dl, n, 0, "datas") < 0) {
        buflist_free(&il);
        Py_DECREF(klist);
        return NULL;
    }
    kp = PyMem_Calloc((size_t)n, sizeof *kp);
    ivp = PyMem_Calloc((size_t)n, sizeof *ivp);
    outp = PyMem_Calloc((size_t)n, sizeof *outp);
    inp = PyMem_Calloc((size_t)n, sizeof *inp);
    uint8_t *ivcopy = PyMem_Calloc((size_t)n, KUAI_MAX_BLOCK);
    if (!kp || !ivp || !outp || !inp || !ivcopy) {
        PyErr_NoMemory();
        goto done;
    }
    size_t len = (size_t)dl.views[0].len, bs = 0;
    int cipher = -1;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *ko = PyList_GetItem(klist, i);
        if (!is_key(ko)) {
            PyErr_SetString(PyExc_TypeError, "keys must be kuai.Cipher objects");
            goto done;
        }
        KeyObject *k = (KeyObject *)ko;
        if (cipher >= 0 && k->cipher != cipher) {
            PyErr_SetString(PyExc_ValueError, "keys must all be the same cipher");
            goto done;
        }
        cipher = k->cipher;
        bs = k->block;
        kp[i] = k->key;
        if ((size_t)il.views[i].len != bs) {
            PyErr_Format(PyExc_ValueError, "ivs[%zd]: %zd bytes, %zu needed", i, il.views[i].len,
                         bs);
            goto done;
        }
        if ((size_t)dl.views[i].len != len) {
            PyErr_SetString(PyExc_ValueError, "datas must all have the same length");
            goto done;
        }
        memcpy(ivcopy + i * KUAI_MAX_BLOCK, il.views[i].buf, bs);
        ivp[i] = ivcopy + i * KUAI_MAX_BLOCK;
        inp[i] = dl.views[i].buf;
    }
    if (len % bs != 0) {
        PyErr_Format(
            PyExc_ValueError,
            "The length of the provided data (%zu) is not a multiple of the block length (%zu).",
            len, bs);
        goto done;
    }
    result = PyList_New(n);
    if (result == NULL) {
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *b = new_bytes((Py_ssize_t)len, &outp[i]);
        if (b == NULL) {
            Py_CLEAR(result);
            goto done;
        }
        PyList_SetItem(result, i, b);
    }
    int rc;
    Py_BEGIN_ALLOW_THREADS rc = enc ? kuai_cbc_encrypt_multi(kp, ivp, inp, outp, (size_t)n, len)
                                    : kuai_cbc_decrypt_multi(kp, ivp, inp, outp, (size_t)n, len);
    Py_END_ALLOW_THREADS if (rc != KUAI_OK)
    {
        Py_CLEAR(result);
        raise_kuai(rc, "multi-key CBC");
    }
done:
    PyMem_Free(kp);
    PyMem_Free(ivp);
    PyMem_Free(outp);
    PyMem_Free(inp);
    PyMem_Free(ivcopy);
    buflist_free(&il);
    buflist_free(&dl);
    Py_DECREF(klist);
    return result;
}

/* ------------------------------------------------------- module functions */

static PyObject *mod_backends(PyObject *mod, PyObject *arg)
{
    (void)mod;
    long c = PyLong_AsLong(arg);
    if (c == -1 && PyErr_Occurred()) {
        return NULL;
    }
    const char *names[64];
    size_t n = kuai_backends((kuai_cipher)c, names, 64);
    if (n > 64) {
        n = 64;
    }
    PyObject *r = PyList_New((Py_ssize_t)n);
    for (size_t i = 0; r != NULL && i < n; i++) {
        PyObject *s = PyUnicode_FromString(names[i]);
        if (s == NULL) {
            Py_CLEAR(r);
            break;
        }
        PyList_SetItem(r, (Py_ssize_t)i, s);
    }
    return r;
}

/* ciphers() -> list of (id, name, key_size, block_size): kuai_ciphers()'s,
 * in enum order. */
static PyObject *mod_ciphers(PyObject *mod, PyObject *unused)
{
    (void)mod;
    (void)unused;
    size_t n = kuai_ciphers(NULL, 0);
    kuai_cipher *list = PyMem_New(kuai_cipher, n > 0 ? n : 1);
    if (list == NULL)
        return PyErr_NoMemory();
    n = kuai_ciphers(list, n);
    PyObject *r = PyList_New(0);
    for (size_t i = 0; r != NULL && i < n; i++) {
        kuai_cipher c = list[i];
        PyObject *t = Py_BuildValue("(isnn)", (int)c, kuai_cipher_name(c),
                                    (Py_ssize_t)kuai_key_size(c), (Py_ssize_t)kuai_block_size(c));
        if (t == NULL || PyList_Append(r, t) < 0) {
            Py_XDECREF(t);
            Py_CLEAR(r);
            break;
        }
        Py_DECREF(t);
    }
    PyMem_Free(list);
    return r;
}

/* cipher_by_name(name) -> id: kuai_cipher_by_name (canonical names in any
 * ASCII case; 0 for none). The binding's own aliases are resolved before,
 * in kuai._names. */
static PyObject *mod_cipher_by_name(PyObject *mod, PyObject *args)
{
    (void)mod;
    const char *name;
    if (!PyArg_ParseTuple(args, "s:cipher_by_name", &name))
        return NULL;
    return PyLong_FromLong((long)kuai_cipher_by_name(name));
}

/* _c_speed(key, op, size, iters) -> ns: the C library's own time for iters
 * calls on size bytes (op: "cbc", "ctr", "gcm"), in this process and on
 * the same key, with no Python in the loop. kuai.bench's yardstick for the
 * binding's overhead. */
static PyObject *mod_c_speed(PyObject *mod, PyObject *args)
{
    (void)mod;
    PyObject *keyobj;
    const char *op;
    Py_ssize_t size, iters;
    if (!PyArg_ParseTuple(args, "Osnn:_c_speed", &keyobj, &op, &size, &iters)) {
        return NULL;
    }
    if (!is_key(keyobj) || size < 0 || iters < 1) {
        PyErr_SetString(PyExc_ValueError, "_c_speed: bad arguments");
        return NULL;
    }
    const kuai_key *k = ((KeyObject *)keyobj)->key;
    uint8_t *buf = PyMem_Calloc((size_t)size + 16, 1);
    if (buf == NULL) {
        return PyErr_NoMemory();
    }
    uint8_t iv[KUAI_MAX_BLOCK] = {0};
    int which = strcmp(op, "cbc") == 0 ? 0 : strcmp(op, "ctr") == 0 ? 1 : 2;
    struct timespec t0, t1;
    int rc = KUAI_OK;
    Py_BEGIN_ALLOW_THREADS clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
    for (Py_ssize_t i = 0; i < iters && rc == KUAI_OK; i++) {
        if (which == 0) {
            rc = kuai_cbc_encrypt(k, iv, buf, buf, (size_t)size);
        } else if (which == 1) {
            rc = kuai_ctr_crypt(k, iv, buf, buf, (size_t)size);
        } else {
            rc = kuai_gcm_encrypt(k, iv, 12, NULL, 0, buf, buf, (size_t)size, buf + size, GCM_TAG);
        }
    }
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t1);
    Py_END_ALLOW_THREADS PyMem_Free(buf);
    if (rc != KUAI_OK) {
        return raise_kuai(rc, "_c_speed");
    }
    return PyLong_FromLongLong((long long)(t1.tv_sec - t0.tv_sec) * 1000000000LL +
                               (t1.tv_nsec - t0.tv_nsec));
}

static PyMethodDef mod_methods[] = {
    {"stream", mod_stream, METH_VARARGS, "stream(key, op, iv) -> Stream"},
    {"gcm_stream", mod_gcm_stream, METH_VARARGS,
     "gcm_stream(key, encrypt, nonce, tag) -> GcmStream"},
    {"cbc_multi", mod_cbc_multi, METH_VARARGS, "cbc_multi(encrypt, keys, ivs, datas) -> list"},
    {"backends", mod_backends, METH_O, "backends(cipher_id) -> list[str], best first"},
    {"_c_speed", mod_c_speed, METH_VARARGS, "_c_speed(key, op, size, iters) -> ns (kuai.bench)"},
    {"ciphers", mod_ciphers, METH_NOARGS, "ciphers() -> [(id, name, key_size, block_size)]"},
    {"cipher_by_name", mod_cipher_by_name, METH_VARARGS,
     "cipher_by_name(name) -> id (0: no such cipher; canonical names only)"},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef moddef = {
    PyModuleDef_HEAD_INIT, "_kuai", "kuai's C extension", -1, mod_methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__kuai(void)
{
    PyObject *m = PyModule_Create(&moddef);
    if (m == NULL) {
        return NULL;
    }
    InvalidTag = PyErr_NewExceptionWithDoc("kuai.InvalidTag",
                                           "Authentication failed: wrong key, nonce, associated "
                                           "data or a damaged message.",
                                           NULL, NULL);
    AlreadyFinalized = PyErr_NewExceptionWithDoc("kuai.AlreadyFinalized",
                                                 "The context was already finalized.", NULL, NULL);
    NotYetFinalized = PyErr_NewExceptionWithDoc(
        "kuai.NotYetFinalized", "The tag was asked for before finalize().", NULL, NULL);
    KeyType = PyType_FromSpec(&key_spec);
    StreamType = PyType_FromSpec(&stream_spec);
    GcmType = PyType_FromSpec(&gcm_spec);
    if (InvalidTag == NULL || AlreadyFinalized == NULL || NotYetFinalized == NULL ||
        KeyType == NULL || StreamType == NULL || GcmType == NULL) {
        Py_DECREF(m);
        return NULL;
    }
    Py_INCREF(InvalidTag);
    Py_INCREF(AlreadyFinalized);
    Py_INCREF(NotYetFinalized);
    Py_INCREF(KeyType);
    Py_INCREF(StreamType);
    Py_INCREF(GcmType);
    if (PyModule_AddObject(m, "InvalidTag", InvalidTag) < 0 ||
        PyModule_AddObject(m, "AlreadyFinalized", AlreadyFinalized) < 0 ||
        PyModule_AddObject(m, "NotYetFinalized", NotYetFinalized) < 0 ||
        PyModule_AddObject(m, "GcmStream", GcmType) < 0 ||
        PyModule_AddObject(m, "Key", KeyType) < 0 ||
        PyModule_AddObject(m, "Stream", StreamType) < 0 ||
        PyModule_AddStringConstant(m, "VERSION", KUAI_VERSION) < 0 ||
        PyModule_AddIntConstant(m, "GIL_BYTES", KUAI_GIL_BYTES) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
