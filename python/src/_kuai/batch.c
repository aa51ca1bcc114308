/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Lists of messages in one C call, the GIL released: GCM batches under one
 * key (Key.gcm_encrypt_batch / gcm_decrypt_batch) and CBC under many keys
 * (cbc_multi, over kuai_cbc_*_multi).
 */
#include "kuai_py.h"

int kpy_gcm_one(KpyGcmMany *m, const kuai_key *k, const uint8_t *nonce, size_t nlen,
                const uint8_t *aad, size_t alen, const uint8_t *in, uint8_t *out, size_t len,
                uint8_t *tag_out, const uint8_t *tag_in)
{
    const int enc = tag_out != NULL;
    if (m == NULL) {
        return enc ? kuai_gcm_encrypt(k, nonce, nlen, aad, alen, in, out, len, tag_out, GCM_TAG)
                   : kuai_gcm_decrypt(k, nonce, nlen, aad, alen, in, out, len, tag_in, GCM_TAG);
    }
    if (!m->ready) {
        int rc = kuai_gcm_init(&m->tmpl, k, nonce, nlen);
        if (rc != KUAI_OK) {
            return rc;
        }
        m->ready = 1;
    }
    return enc ? kuai_gcm_encrypt_with(&m->tmpl, k, nonce, nlen, aad, alen, in, out, len, tag_out,
                                       GCM_TAG)
               : kuai_gcm_decrypt_with(&m->tmpl, k, nonce, nlen, aad, alen, in, out, len, tag_in,
                                       GCM_TAG);
}

void kpy_gcm_many_wipe(KpyGcmMany *m)
{
    if (m->ready) {
        kuai_gcm_wipe(&m->tmpl);
    }
    m->ready = 0;
}

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

/* A sequence of buffers; or, when cut_each > 0 and o is itself one buffer
 * of bytes, that buffer cut into pieces of cut_each bytes. An array of
 * Python objects (numpy dtype=object: a pandas column's .values) is a
 * sequence, its items the buffers. n < 0: take the length. */
static int buflist_get(PyObject *o, BufList *l, Py_ssize_t n, Py_ssize_t cut_each, const char *name)
{
    memset(l, 0, sizeof *l);
    if (cut_each > 0 && PyObject_CheckBuffer(o) && !kpy_holds_objects(o)) {
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
        /* by division: n * cut_each may not fit (a caller's nonce_len) */
        if (n < 0 || l->views[0].len / cut_each != n || l->views[0].len % cut_each != 0) {
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

/* AAD for a batch: None, one buffer for every message, or a sequence (an
 * array of Python objects included, as in buflist_get). */
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
    if (PyObject_CheckBuffer(o) && !kpy_holds_objects(o)) {
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

int kpy_parse_errors(const char *errors, int *raise)
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
    /* errors= is decryption's alone: encryption has no failure it could
     * choose how to report, and took the argument only to ignore it (a
     * caller's errors="none" then promised what it did not do). */
    static char *dec_kw[] = {"nonces", "datas", "aad", "errors", "nonce_len", NULL};
    static char *enc_kw[] = {"nonces", "datas", "aad", "nonce_len", NULL};
    KeyObject *k = (KeyObject *)o;
    PyObject *nonces, *datas, *aadobj = Py_None;
    const char *errors = "raise";
    Py_ssize_t nonce_len = 12;
    int raise = 1;
    if (!(enc ? PyArg_ParseTupleAndKeywords(args, kwds, "OO|On:gcm_encrypt_batch", enc_kw, &nonces,
                                            &datas, &aadobj, &nonce_len)
              : PyArg_ParseTupleAndKeywords(args, kwds, "OO|Osn:gcm_decrypt_batch", dec_kw, &nonces,
                                            &datas, &aadobj, &errors, &nonce_len)) ||
        kpy_parse_errors(errors, &raise) < 0 || kpy_check_gcm_key(k) < 0 ||
        kpy_check_nonce(nonce_len) < 0) {
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
        if (kpy_check_nonce((Py_ssize_t)nlen) < 0) {
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
    Py_BEGIN_ALLOW_THREADS KpyGcmMany many = {.ready = 0};
    KpyGcmMany *m = n > 1 ? &many : NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        size_t len, nlen, alen;
        const uint8_t *in = buflist_ptr(&dl, i, &len);
        const uint8_t *nonce = buflist_ptr(&nl, i, &nlen);
        const uint8_t *a = aad_ptr(&aad, i, &alen);
        if (enc) {
            rcs[i] =
                kpy_gcm_one(m, k->key, nonce, nlen, a, alen, in, outs[i], len, outs[i] + len, NULL);
        } else if (len < GCM_TAG) {
            rcs[i] = KUAI_ERR_AUTH;
        } else {
            rcs[i] = kpy_gcm_one(m, k->key, nonce, nlen, a, alen, in, outs[i], len - GCM_TAG, NULL,
                                 in + len - GCM_TAG);
            /* longer than GCM allows: a forgery like any other */
            rcs[i] = rcs[i] == KUAI_ERR_LENGTH ? KUAI_ERR_AUTH : rcs[i];
        }
    }
    kpy_gcm_many_wipe(&many);
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
            PyErr_Format(kpy_InvalidTag, "message %zd of %zd failed authentication", i, n);
        } else {
            kpy_raise(rcs[i], enc ? "GCM encryption" : "GCM decryption");
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
    /* The other messages' outputs, plaintext when decrypting, erased
     * before they are freed: only result holds them. */
    for (Py_ssize_t i = 0; result != NULL && i < n; i++) {
        PyObject *b = PyList_GetItem(result, i);
        if (b != NULL && PyBytes_Check(b)) {
            kpy_wipe(PyBytes_AsString(b), (size_t)PyBytes_Size(b));
        }
    }
    Py_XDECREF(result);
    PyMem_Free(outs);
    PyMem_Free(rcs);
    buflist_free(&dl);
    buflist_free(&nl);
    aad_free(&aad);
    return NULL;
}

PyObject *kpy_gcm_encrypt_batch(PyObject *o, PyObject *args, PyObject *kwds)
{
    return gcm_batch(o, args, kwds, 1);
}

PyObject *kpy_gcm_decrypt_batch(PyObject *o, PyObject *args, PyObject *kwds)
{
    return gcm_batch(o, args, kwds, 0);
}

/* ------------------------------------------------------- multi-key (CBC) */

/* cbc_multi(encrypt, keys, ivs, datas) -> list[bytes] */
PyObject *kpy_cbc_multi(PyObject *mod, PyObject *args)
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
        if (!kpy_is_key(ko)) {
            PyErr_SetString(PyExc_TypeError, "keys must be kuai.Cipher objects");
            goto done;
        }
        KeyObject *k = (KeyObject *)ko;
        if (kpy_check_single(k, 0) < 0) {
            goto done;
        }
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
        kpy_raise(rc, "multi-key CBC");
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
