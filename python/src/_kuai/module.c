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
 *   CMAC    kuai.cmac.CMAC, a CMAC context (kuai_cmac_ctx), in the shape of
 *           cryptography's cmac.CMAC.
 * Functions: key_wrap/key_unwrap (keywrap.c; kuai.keywrap), one call on a
 * Key each, as stream() and gcm_stream() make a context from one.
 * The GIL is released around every cipher call on KUAI_GIL_BYTES or more.
 *
 * This file is the module itself: its init, the exceptions and the
 * functions over the library's tables (ciphers, backends); kuai_py.h names
 * the files that hold the rest.
 */
#include "kuai_py.h" /* first: Python.h before any system header */

#include <time.h>

PyObject *kpy_InvalidTag;
PyObject *kpy_AlreadyFinalized;
PyObject *kpy_NotYetFinalized;
PyObject *kpy_InvalidSignature;
PyObject *kpy_InvalidUnwrap;
PyObject *kpy_KeyType;
PyObject *kpy_StreamType;
PyObject *kpy_GcmType;
PyObject *kpy_CmacType;

PyObject *kpy_raise(int err, const char *what)
{
    PyObject *exc = PyExc_ValueError;
    if (err == KUAI_ERR_AUTH) {
        exc = kpy_InvalidTag;
    } else if (err == KUAI_ERR_UNSUPPORTED) {
        exc = PyExc_NotImplementedError;
    }
    PyErr_Format(exc, "%s: %s", what, kuai_strerror(err));
    return NULL;
}

/* The arguments of a METH_FASTCALL | METH_KEYWORDS method into out[0..n-1]:
 * by position or by the name names[i] (cryptography's parameter names, so
 * that encrypt(nonce, data, associated_data=None) or update_into(data=...,
 * buf=...) work as there); the first nreq are required, the others left
 * NULL when not given. 0, or -1 with TypeError raised. */
int kpy_args(const char *fn, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
             const char *const *names, int n, int nreq, PyObject **out)
{
    if (nargs > n) {
        PyErr_Format(PyExc_TypeError, "%s() takes at most %d arguments (%zd given)", fn, n, nargs);
        return -1;
    }
    for (int i = 0; i < n; i++) {
        out[i] = i < nargs ? args[i] : NULL;
    }
    Py_ssize_t nkw = kwnames != NULL ? PyTuple_Size(kwnames) : 0;
    for (Py_ssize_t j = 0; j < nkw; j++) {
        PyObject *kw = PyTuple_GetItem(kwnames, j);
        int i = 0;
        while (i < n && PyUnicode_CompareWithASCIIString(kw, names[i]) != 0) {
            i++;
        }
        if (i == n) {
            PyErr_Format(PyExc_TypeError, "%s() got an unexpected keyword argument '%U'", fn, kw);
            return -1;
        }
        if (out[i] != NULL) {
            PyErr_Format(PyExc_TypeError, "%s() got multiple values for argument '%s'", fn,
                         names[i]);
            return -1;
        }
        out[i] = args[nargs + j];
    }
    for (int i = 0; i < nreq; i++) {
        if (out[i] == NULL) {
            PyErr_Format(PyExc_TypeError, "%s() missing required argument '%s'", fn, names[i]);
            return -1;
        }
    }
    return 0;
}

int kpy_arg_buffer(const char *fn, const char *name, PyObject *const *args, Py_ssize_t nargs,
                   PyObject *kwnames, Py_buffer *b)
{
    const char *const names[] = {name};
    PyObject *o;
    if (kpy_args(fn, args, nargs, kwnames, names, 1, 1, &o) < 0) {
        return -1;
    }
    return get_ro(o, b, name);
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

/* holds_objects(o) -> bool: whether o exports a buffer of Python objects
 * (format 'O'; kpy_holds_objects), which the binding never reads as bytes.
 * For the package's Python code (kuai.modes, kuai.file, the gmssl compat),
 * so that it refuses them by the one rule the extension applies. */
static PyObject *mod_holds_objects(PyObject *mod, PyObject *o)
{
    (void)mod;
    return PyBool_FromLong(kpy_holds_objects(o));
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
    if (!kpy_is_key(keyobj) || size < 0 || iters < 1) {
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
        return kpy_raise(rc, "_c_speed");
    }
    return PyLong_FromLongLong((long long)(t1.tv_sec - t0.tv_sec) * 1000000000LL +
                               (t1.tv_nsec - t0.tv_nsec));
}

static PyMethodDef mod_methods[] = {
    {"stream", kpy_stream, METH_VARARGS, "stream(key, op, iv) -> Stream"},
    {"gcm_stream", kpy_gcm_stream, METH_VARARGS,
     "gcm_stream(key, encrypt, nonce, tag, min_tag_length=16) -> GcmStream"},
    {"key_wrap", (PyCFunction)(void (*)(void))kpy_key_wrap, METH_FASTCALL | METH_KEYWORDS,
     "key_wrap(key, key_to_wrap, padding=False) -> bytes: SP 800-38F KW (RFC 3394), with "
     "padding KWP (RFC 5649)"},
    {"key_unwrap", (PyCFunction)(void (*)(void))kpy_key_unwrap, METH_FASTCALL | METH_KEYWORDS,
     "key_unwrap(key, wrapped_key, padding=False) -> bytes; raises kuai.keywrap.InvalidUnwrap"},
    {"cbc_multi", kpy_cbc_multi, METH_VARARGS, "cbc_multi(encrypt, keys, ivs, datas) -> list"},
    {"backends", mod_backends, METH_O, "backends(cipher_id) -> list[str], best first"},
    {"holds_objects", mod_holds_objects, METH_O,
     "holds_objects(o) -> bool: o is a buffer of Python objects (format 'O')"},
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
    kpy_InvalidTag =
        PyErr_NewExceptionWithDoc("kuai.InvalidTag",
                                  "Authentication failed: wrong key, nonce, associated "
                                  "data or a damaged message.",
                                  NULL, NULL);
    kpy_AlreadyFinalized = PyErr_NewExceptionWithDoc(
        "kuai.AlreadyFinalized", "The context was already finalized.", NULL, NULL);
    kpy_NotYetFinalized = PyErr_NewExceptionWithDoc(
        "kuai.NotYetFinalized", "The tag was asked for before finalize().", NULL, NULL);
    kpy_InvalidSignature = PyErr_NewExceptionWithDoc(
        "kuai.InvalidSignature", "A MAC did not match (kuai.cmac.CMAC.verify).", NULL, NULL);
    kpy_InvalidUnwrap = PyErr_NewExceptionWithDoc(
        "kuai.keywrap.InvalidUnwrap",
        "A wrapped key did not unwrap: wrong wrapping key, a damaged or forged wrapped key, "
        "or a length no key wrap gives.",
        NULL, NULL);
    kpy_KeyType = PyType_FromSpec(&kpy_key_spec);
    kpy_StreamType = PyType_FromSpec(&kpy_stream_spec);
    kpy_GcmType = PyType_FromSpec(&kpy_gcm_spec);
    kpy_CmacType = PyType_FromSpec(&kpy_cmac_spec);
    if (kpy_InvalidTag == NULL || kpy_AlreadyFinalized == NULL || kpy_NotYetFinalized == NULL ||
        kpy_InvalidSignature == NULL || kpy_InvalidUnwrap == NULL || kpy_KeyType == NULL ||
        kpy_StreamType == NULL || kpy_GcmType == NULL || kpy_CmacType == NULL) {
        Py_DECREF(m);
        return NULL;
    }
    Py_INCREF(kpy_InvalidTag);
    Py_INCREF(kpy_AlreadyFinalized);
    Py_INCREF(kpy_NotYetFinalized);
    Py_INCREF(kpy_KeyType);
    Py_INCREF(kpy_StreamType);
    Py_INCREF(kpy_GcmType);
    Py_INCREF(kpy_InvalidSignature);
    Py_INCREF(kpy_CmacType);
    Py_INCREF(kpy_InvalidUnwrap);
    if (PyModule_AddObject(m, "InvalidTag", kpy_InvalidTag) < 0 ||
        PyModule_AddObject(m, "AlreadyFinalized", kpy_AlreadyFinalized) < 0 ||
        PyModule_AddObject(m, "NotYetFinalized", kpy_NotYetFinalized) < 0 ||
        PyModule_AddObject(m, "InvalidSignature", kpy_InvalidSignature) < 0 ||
        PyModule_AddObject(m, "InvalidUnwrap", kpy_InvalidUnwrap) < 0 ||
        PyModule_AddObject(m, "GcmStream", kpy_GcmType) < 0 ||
        PyModule_AddObject(m, "CMAC", kpy_CmacType) < 0 ||
        PyModule_AddObject(m, "Key", kpy_KeyType) < 0 ||
        PyModule_AddObject(m, "Stream", kpy_StreamType) < 0 ||
        PyModule_AddStringConstant(m, "VERSION", KUAI_VERSION) < 0 ||
        PyModule_AddIntConstant(m, "GIL_BYTES", KUAI_GIL_BYTES) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
