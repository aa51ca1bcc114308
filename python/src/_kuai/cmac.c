/* SPDX-License-Identifier: Apache-2.0 */
/*
 * kuai.cmac.CMAC: a CMAC (NIST SP 800-38B) over kuai_cmac_*, in the shape of
 * cryptography's cmac.CMAC: CMAC(algorithm) with a kuai.Cipher of a
 * 128-bit-block cipher, update(data), finalize() -> 16 bytes,
 * verify(signature) (InvalidSignature), copy(); AlreadyFinalized after
 * finalize() or verify(). The context holds the Key (kuai_cmac_ctx keeps a
 * pointer to its schedule) and the subkeys, which are wiped at finalize()
 * and when it is freed; it cannot be pickled (no state is exported).
 */
#include "kuai_py.h"

typedef struct {
    CtxObject base;
    kuai_cmac_ctx ctx;
} CmacObject;

#define CMAC_TAG 16

/* Wipes the subkeys and chain and lets go of the key: finalized. */
static void cmac_clear(CmacObject *m)
{
    kuai_cmac_wipe(&m->ctx);
    Py_CLEAR(m->base.keyobj);
}

/* CMAC(algorithm, backend=None) */
static PyObject *cmac_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"algorithm", "backend", NULL};
    PyObject *keyobj, *backend = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O|O:CMAC", kwlist, &keyobj, &backend)) {
        return NULL;
    }
    (void)backend; /* cryptography's ignored argument */
    if (!kpy_is_key(keyobj)) {
        PyErr_SetString(PyExc_TypeError,
                        "Expected instance of kuai.Cipher (a 128-bit-block cipher's key).");
        return NULL;
    }
    KeyObject *k = (KeyObject *)keyobj;
    if (kpy_check_block16(k, "CMAC", 0) < 0) {
        return NULL;
    }
    CmacObject *m = (CmacObject *)kpy_ctx_new((PyObject *)type, keyobj);
    if (m == NULL) {
        return NULL;
    }
    int rc = kuai_cmac_init(&m->ctx, k->key);
    if (rc != KUAI_OK) {
        Py_DECREF(m);
        return kpy_raise(rc, "CMAC");
    }
    return (PyObject *)m;
}

/* update(data) -> None */
static PyObject *cmac_update(PyObject *o, PyObject *const *args, Py_ssize_t nargs,
                             PyObject *kwnames)
{
    CmacObject *m = (CmacObject *)o;
    Py_buffer db;
    if (kpy_arg_buffer("update", "data", args, nargs, kwnames, &db) < 0) {
        return NULL;
    }
    PyObject *r = NULL;
    kpy_ctx_lock(&m->base);
    if (kpy_ctx_check(&m->base) == 0) {
        int rc;
        KPY_GIL_CALL(db.len, rc, kuai_cmac_update(&m->ctx, db.buf, (size_t)db.len));
        if (rc != KUAI_OK) {
            kpy_raise(rc, "CMAC update");
        } else {
            r = Py_None;
            Py_INCREF(r);
        }
    }
    PyThread_release_lock(m->base.lock);
    PyBuffer_Release(&db);
    return r;
}

/* The tag into tag[CMAC_TAG], and the context finalized; 0, or -1 (raised). */
static int cmac_final(CmacObject *m, uint8_t *tag)
{
    if (kpy_ctx_check(&m->base) < 0) {
        return -1;
    }
    int rc = kuai_cmac_final(&m->ctx, tag, CMAC_TAG);
    cmac_clear(m);
    if (rc != KUAI_OK) {
        kpy_raise(rc, "CMAC");
        return -1;
    }
    return 0;
}

/* finalize() -> bytes (16) */
static PyObject *cmac_finalize(PyObject *o, PyObject *unused)
{
    (void)unused;
    CmacObject *m = (CmacObject *)o;
    uint8_t tag[CMAC_TAG];
    kpy_ctx_lock(&m->base);
    int rc = cmac_final(m, tag);
    PyThread_release_lock(m->base.lock);
    PyObject *r = rc < 0 ? NULL : PyBytes_FromStringAndSize((const char *)tag, CMAC_TAG);
    /* the caller has its copy; the stack's goes, as verify()'s does */
    kpy_wipe(tag, sizeof tag);
    return r;
}

/* verify(signature) -> None, or InvalidSignature; finalizes as finalize() */
static PyObject *cmac_verify(PyObject *o, PyObject *const *args, Py_ssize_t nargs,
                             PyObject *kwnames)
{
    CmacObject *m = (CmacObject *)o;
    Py_buffer sb;
    if (kpy_arg_buffer("verify", "signature", args, nargs, kwnames, &sb) < 0) {
        return NULL;
    }
    uint8_t tag[CMAC_TAG];
    kpy_ctx_lock(&m->base);
    int rc = cmac_final(m, tag);
    PyThread_release_lock(m->base.lock);
    PyObject *r = NULL;
    if (rc == 0) {
        /* the whole tag, compared without an early exit (as cryptography:
         * a truncated signature does not verify) */
        uint8_t diff = sb.len != CMAC_TAG;
        const uint8_t *s = sb.buf;
        for (Py_ssize_t i = 0; i < CMAC_TAG && i < sb.len; i++) {
            diff |= (uint8_t)(s[i] ^ tag[i]);
        }
        if (diff != 0) {
            PyErr_SetString(kpy_InvalidSignature, "Signature did not match digest.");
        } else {
            r = Py_None;
            Py_INCREF(r);
        }
    }
    /* the valid tag for this message does not stay on the stack: with it a
     * later reader of the process's memory could forge this one message */
    kpy_wipe(tag, sizeof tag);
    PyBuffer_Release(&sb);
    return r;
}

/* copy() -> CMAC: an independent context at the same point */
static PyObject *cmac_copy(PyObject *o, PyObject *unused)
{
    (void)unused;
    CmacObject *m = (CmacObject *)o, *c = NULL;
    kpy_ctx_lock(&m->base);
    if (kpy_ctx_check(&m->base) == 0 &&
        (c = (CmacObject *)kpy_ctx_new((PyObject *)Py_TYPE(o), m->base.keyobj)) != NULL) {
        c->ctx = m->ctx; /* kuai.h: the context may be copied */
    }
    PyThread_release_lock(m->base.lock);
    return (PyObject *)c;
}

static int cmac_tp_clear(PyObject *o)
{
    cmac_clear((CmacObject *)o);
    return 0;
}

static void cmac_dealloc(PyObject *o)
{
    PyObject_GC_UnTrack(o);
    cmac_clear((CmacObject *)o);
    kpy_ctx_free(o);
}

static PyMethodDef cmac_methods[] = {
    {"update", (PyCFunction)(void (*)(void))cmac_update, METH_FASTCALL | METH_KEYWORDS,
     "update(data) -> None"},
    {"finalize", cmac_finalize, METH_NOARGS, "finalize() -> bytes: the 16-byte MAC"},
    {"verify", (PyCFunction)(void (*)(void))cmac_verify, METH_FASTCALL | METH_KEYWORDS,
     "verify(signature) -> None; raises kuai.InvalidSignature if it does not match"},
    {"copy", cmac_copy, METH_NOARGS, "copy() -> CMAC: a copy of the context as it is"},
    {NULL, NULL, 0, NULL}};

static PyType_Slot cmac_slots[] = {
    {Py_tp_new, cmac_new},
    {Py_tp_dealloc, cmac_dealloc},
    {Py_tp_traverse, kpy_ctx_traverse},
    {Py_tp_clear, cmac_tp_clear},
    {Py_tp_methods, cmac_methods},
    {Py_tp_doc, "CMAC(algorithm): a CMAC (SP 800-38B) under a kuai.Cipher of a 128-bit-block "
                "cipher, as cryptography's cmac.CMAC."},
    {0, NULL}};

PyType_Spec kpy_cmac_spec = {"kuai.cmac.CMAC", sizeof(CmacObject), 0,
                             Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC, cmac_slots};
