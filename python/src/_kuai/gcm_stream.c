/* SPDX-License-Identifier: Apache-2.0 */
/*
 * kuai._kuai.GcmStream: streaming GCM over kuai_gcm_init, _aad,
 * _{en,de}crypt_update and _final, in the shape of cryptography's GCM
 * contexts: authenticate_additional_data, update, update_into, finalize,
 * .tag (encryptor), finalize_with_tag (decryptor); a context of stream.c's
 * kind (CtxObject). The library keeps the order (AAD before data) and wipes
 * the context at final.
 */
#include "kuai_py.h"

typedef struct {
    CtxObject base;
    int enc;
    int started;    /* update called: no more AAD */
    size_t tag_len; /* decryptor: the tag given up front (0: none) */
    size_t min_tag; /* decryptor: the shortest tag finalize_with_tag takes */
    uint8_t tag[GCM_TAG];
    int have_tag; /* encryptor: finalized, tag[] is the tag */
    kuai_gcm_ctx ctx;
} GcmObject;

static void gcm_done(GcmObject *g)
{
    kuai_gcm_wipe(&g->ctx);
    Py_CLEAR(g->base.keyobj);
}

static PyObject *gcm_py_aad(PyObject *o, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    GcmObject *g = (GcmObject *)o;
    Py_buffer db;
    if (kpy_arg_buffer("authenticate_additional_data", "data", args, nargs, kwnames, &db) < 0) {
        return NULL;
    }
    PyObject *r = NULL;
    kpy_ctx_lock(&g->base);
    if (kpy_ctx_check(&g->base) == 0) {
        if (g->started) {
            PyErr_SetString(PyExc_ValueError,
                            "authenticate_additional_data must come before update");
        } else {
            int rc;
            KPY_GIL_CALL(db.len, rc, kuai_gcm_aad(&g->ctx, db.buf, (size_t)db.len));
            if (rc != KUAI_OK) {
                kpy_raise(rc, "authenticate_additional_data");
            } else {
                r = Py_None;
                Py_INCREF(r);
            }
        }
    }
    PyThread_release_lock(g->base.lock);
    PyBuffer_Release(&db);
    return r;
}

/* GCM writes as many bytes as it reads. */
static size_t gcm_out_len(CtxObject *c, size_t len)
{
    (void)c;
    return len;
}

static Py_ssize_t gcm_update(CtxObject *c, const uint8_t *in, size_t len, uint8_t *out, size_t room)
{
    GcmObject *g = (GcmObject *)c;
    if (room < len) {
        PyErr_Format(PyExc_ValueError, "buffer must be at least %zu bytes for this call", len);
        return -1;
    }
    uint8_t *tmp = NULL;
    if (overlaps(in, len, out, len) && in != out) {
        if ((tmp = copy_input(in, len)) == NULL) {
            return -1;
        }
        in = tmp;
    }
    int rc;
    g->started = 1;
    KPY_GIL_CALL(len, rc,
                 g->enc ? kuai_gcm_encrypt_update(&g->ctx, in, out, len)
                        : kuai_gcm_decrypt_update(&g->ctx, in, out, len));
    free_input_copy(tmp, len);
    if (rc == KUAI_ERR_LENGTH) {
        /* GCM has no block-size rule: the only length it refuses is over
         * the 2^36 - 32 bytes one message may have (NIST SP 800-38D). */
        PyErr_SetString(PyExc_ValueError,
                        "update: the GCM message would exceed GCM's limit of 2^36 - 32 bytes");
        return -1;
    }
    if (rc != KUAI_OK) {
        kpy_raise(rc, "update");
        return -1;
    }
    return (Py_ssize_t)len;
}

static const CtxUpdate gcm_ops = {gcm_out_len, gcm_update, NULL};

static PyObject *gcm_py_update(PyObject *o, PyObject *const *args, Py_ssize_t nargs,
                               PyObject *kwnames)
{
    return kpy_ctx_update(o, args, nargs, kwnames, &gcm_ops);
}

static PyObject *gcm_py_update_into(PyObject *o, PyObject *const *args, Py_ssize_t nargs,
                                    PyObject *kwnames)
{
    return kpy_ctx_update_into(o, args, nargs, kwnames, &gcm_ops);
}

/* Decryptor: checks tag (tag_len bytes); encryptor: tag is NULL. */
static PyObject *gcm_final(GcmObject *g, const uint8_t *tag, size_t tag_len)
{
    PyObject *r = NULL;
    kpy_ctx_lock(&g->base);
    if (kpy_ctx_check(&g->base) == 0) {
        int rc;
        if (g->enc) {
            rc = kuai_gcm_encrypt_final(&g->ctx, g->tag, GCM_TAG);
            g->have_tag = rc == KUAI_OK;
        } else {
            rc = kuai_gcm_decrypt_final(&g->ctx, tag, tag_len);
        }
        gcm_done(g);
        if (rc == KUAI_ERR_AUTH) {
            PyErr_SetNone(kpy_InvalidTag);
        } else if (rc != KUAI_OK) {
            kpy_raise(rc, "finalize");
        } else {
            r = PyBytes_FromStringAndSize(NULL, 0);
        }
    }
    PyThread_release_lock(g->base.lock);
    return r;
}

static PyObject *gcm_py_finalize(PyObject *o, PyObject *unused)
{
    (void)unused;
    GcmObject *g = (GcmObject *)o;
    if (!g->enc && g->tag_len == 0 && g->base.keyobj != NULL) {
        PyErr_SetString(PyExc_ValueError, "Authentication tag must be provided when decrypting "
                                          "(GCM(nonce, tag) or finalize_with_tag(tag)).");
        return NULL;
    }
    return gcm_final(g, g->tag, g->tag_len);
}

static PyObject *gcm_py_finalize_with_tag(PyObject *o, PyObject *const *args, Py_ssize_t nargs,
                                          PyObject *kwnames)
{
    static const char *const names[] = {"tag"};
    GcmObject *g = (GcmObject *)o;
    PyObject *tagobj;
    if (kpy_args("finalize_with_tag", args, nargs, kwnames, names, 1, 1, &tagobj) < 0) {
        return NULL;
    }
    /* Finalized first, as every other call (and cryptography): not the
     * ValueError of a tag that would not have been taken anyway. keyobj
     * changes only with the GIL held, as here. */
    if (kpy_ctx_check(&g->base) < 0) {
        return NULL;
    }
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
    } else if ((size_t)tb.len < g->min_tag) {
        /* cryptography's rule: GCM(nonce, min_tag_length=...) admits a
         * shorter tag, here as when given up front */
        PyErr_Format(PyExc_ValueError, "Authentication tag must be %zu bytes or longer.",
                     g->min_tag);
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
        PyErr_SetString(kpy_NotYetFinalized,
                        "You must finalize encryption before getting the tag.");
        return NULL;
    }
    return PyBytes_FromStringAndSize((const char *)g->tag, GCM_TAG);
}

static int gcm_tp_clear(PyObject *o)
{
    gcm_done((GcmObject *)o);
    return 0;
}

static void gcm_dealloc(PyObject *o)
{
    GcmObject *g = (GcmObject *)o;
    PyObject_GC_UnTrack(o);
    gcm_done(g);
    volatile uint8_t *p = g->tag;
    for (size_t i = 0; i < sizeof g->tag; i++) {
        p[i] = 0;
    }
    kpy_ctx_free(o);
}

static PyMethodDef gcm_methods[] = {
    {"authenticate_additional_data", (PyCFunction)(void (*)(void))gcm_py_aad,
     METH_FASTCALL | METH_KEYWORDS, "authenticate_additional_data(data): AAD, before any update"},
    {"update", (PyCFunction)(void (*)(void))gcm_py_update, METH_FASTCALL | METH_KEYWORDS,
     "update(data) -> bytes"},
    {"update_into", (PyCFunction)(void (*)(void))gcm_py_update_into, METH_FASTCALL | METH_KEYWORDS,
     "update_into(data, buf) -> int (buf may be data: in place)"},
    {"finalize", gcm_py_finalize, METH_NOARGS,
     "finalize() -> b''; a decryptor checks the tag of GCM(nonce, tag): InvalidTag"},
    {"finalize_with_tag", (PyCFunction)(void (*)(void))gcm_py_finalize_with_tag,
     METH_FASTCALL | METH_KEYWORDS, "finalize_with_tag(tag) -> b'' (decryptor); InvalidTag"},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef gcm_getset[] = {
    {"tag", gcm_get_tag, NULL, "the 16-byte tag, after finalize() (encryptor)", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyType_Slot gcm_slots[] = {{Py_tp_new, kpy_ctx_no_new},
                                  {Py_tp_dealloc, gcm_dealloc},
                                  {Py_tp_traverse, kpy_ctx_traverse},
                                  {Py_tp_clear, gcm_tp_clear},
                                  {Py_tp_methods, gcm_methods},
                                  {Py_tp_getset, gcm_getset},
                                  {Py_tp_doc, "A streaming GCM encryptor or decryptor."},
                                  {0, NULL}};

PyType_Spec kpy_gcm_spec = {"kuai._kuai.GcmStream", sizeof(GcmObject), 0,
                            Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC, gcm_slots};

/* gcm_stream(key, encrypt, nonce, tag_or_None, min_tag_length=16) -> GcmStream */
PyObject *kpy_gcm_stream(PyObject *mod, PyObject *args)
{
    (void)mod;
    PyObject *keyobj, *nonceobj, *tagobj;
    int enc;
    Py_ssize_t min_tag = GCM_TAG;
    if (!PyArg_ParseTuple(args, "OpOO|n:gcm_stream", &keyobj, &enc, &nonceobj, &tagobj, &min_tag)) {
        return NULL;
    }
    if (min_tag < 4 || min_tag > GCM_TAG) {
        PyErr_SetString(PyExc_ValueError, "min_tag_length must be 4 to 16");
        return NULL;
    }
    if (!kpy_is_key(keyobj)) {
        PyErr_SetString(PyExc_TypeError, "gcm_stream: key must be a kuai key");
        return NULL;
    }
    KeyObject *k = (KeyObject *)keyobj;
    if (kpy_check_gcm_key(k) < 0) {
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
    if (kpy_check_nonce(nb.len) < 0) {
        goto out;
    }
    if (tb.obj != NULL && enc) {
        PyErr_SetString(PyExc_ValueError, "Authentication tag must be None when encrypting.");
        goto out;
    }
    if (tb.obj != NULL && (tb.len < min_tag || tb.len > GCM_TAG)) {
        PyErr_Format(PyExc_ValueError, "Authentication tag must be %zd to 16 bytes", min_tag);
        goto out;
    }
    g = (GcmObject *)kpy_ctx_new(kpy_GcmType, keyobj);
    if (g == NULL) {
        goto out;
    }
    int rc = kuai_gcm_init(&g->ctx, k->key, nb.buf, (size_t)nb.len);
    if (rc != KUAI_OK) {
        Py_CLEAR(g);
        kpy_raise(rc, "GCM");
        goto out;
    }
    g->enc = enc;
    g->min_tag = (size_t)min_tag;
    if (tb.obj != NULL) {
        memcpy(g->tag, tb.buf, (size_t)tb.len);
        g->tag_len = (size_t)tb.len;
    }
out:
    PyBuffer_Release(&nb);
    release(&tb);
    return (PyObject *)g;
}
