/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the files of the extension kuai._kuai share (an internal header, not
 * installed): the Key object, the exceptions and types made at import, the
 * functions one file gives another, and the buffer helpers every call uses.
 *
 *   module.c  the module: init, exceptions, kpy_raise, cipher list,
 *             backends, _c_speed
 *   key.c     Key: key setup, one-shot GCM and CCM, its method table
 *   batch.c   lists of messages: GCM batches, multi-key CBC
 *   packed.c  Arrow-packed rows (data + offsets): GCM and CBC
 *   stream.c  the streaming contexts: what they share; Stream
 *             (ECB/CBC/CTR, CFB/OFB, XTS)
 *   gcm_stream.c  GcmStream, streaming GCM
 *   cmac.c    Cmac (kuai.cmac.CMAC)
 *   keywrap.c the key wrap functions (kuai.keywrap)
 *
 * All of them are compiled into the one module _kuai, with the Limited API
 * when the build asks for abi3 (python/CMakeLists.txt). Names shared between
 * the files start with kpy_, so that none meets a symbol of libkuai, which
 * is linked into the same module.
 */
#ifndef KUAI_PY_H
#define KUAI_PY_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#include "kuai.h"

/* Below this the GIL round trip (~100 ns) costs more than it frees. */
#define KUAI_GIL_BYTES 2048
#define GCM_TAG 16
/* The most plaintext one GCM message may have (NIST SP 800-38D, 2^39 - 256
 * bits; the library's KUAI_ERR_LENGTH above it). */
#define KPY_GCM_MAX_DATA ((((uint64_t)1) << 36) - 32)

/* rc = call, with the GIL released when it works on n >= KUAI_GIL_BYTES
 * bytes (what Py_BEGIN/END_ALLOW_THREADS do); call must not touch a Python
 * object. */
#define KPY_GIL_CALL(n, rc, call)                                                                  \
    do {                                                                                           \
        if ((n) >= KUAI_GIL_BYTES) {                                                               \
            PyThreadState *kpy_save_ = PyEval_SaveThread();                                        \
            (rc) = (call);                                                                         \
            PyEval_RestoreThread(kpy_save_);                                                       \
        } else {                                                                                   \
            (rc) = (call);                                                                         \
        }                                                                                          \
    } while (0)

/* batch.c: GCM messages under one key, many in a call (batch.c, packed.c).
 * Each message goes through kuai_gcm_encrypt_with / _decrypt_with on tmpl,
 * set up by the first, so the key's GHASH set-up is made once a call, not
 * once a message, and a short message takes one cipher call (AES-128 vaes,
 * 64 bytes with 16 of AAD: 120-150 TSC cycles against 314 through
 * kuai_gcm_encrypt; Xeon, Sapphire Rapids class; README's GCM example).
 * Wiped by kpy_gcm_many_wipe. */
typedef struct {
    _Alignas(64) kuai_gcm_ctx tmpl;
    int ready;
} KpyGcmMany;

typedef struct {
    PyObject_HEAD kuai_key *key; /* PyMem_Malloc'd, wiped and freed in dealloc */
    int cipher;
    size_t block;
    /* An XTS key (Key(..., xts=True)): the second half's schedule, the
     * tweak key (as key, wiped and freed in dealloc); NULL otherwise. Such
     * a key is for XTS streams only: every other use refuses it. */
    kuai_key *key2;
    int halves_equal; /* XTS: the two halves are the same bytes */
    size_t tag_len;   /* CCM tag length (Key(..., tag_length=16)) */
    /* A kuai.aead class's key (Key(..., aead="gcm" or "ccm")): the one
     * AEAD mode it is for, KPY_AEAD_GCM or KPY_AEAD_CCM; 0 for a key of
     * any mode (kuai.Cipher). Every other use refuses it: CBC of a zero
     * block under a zero IV with a GCM key gives GCM's hash key H, and a
     * CMAC or CTR under the AEAD's key is a second use its proof does not
     * cover. */
    int aead;
} KeyObject;

#define KPY_AEAD_GCM 1
#define KPY_AEAD_CCM 2

/* One message with a GCM_TAG-byte tag: as kuai_gcm_encrypt where tag_out
 * is given (the tag written there), else as kuai_gcm_decrypt against
 * tag_in (out zeroed on KUAI_ERR_AUTH); m NULL: those calls themselves.
 * Needs no GIL. */
int kpy_gcm_one(KpyGcmMany *m, const kuai_key *k, const uint8_t *nonce, size_t nlen,
                const uint8_t *aad, size_t alen, const uint8_t *in, uint8_t *out, size_t len,
                uint8_t *tag_out, const uint8_t *tag_in);
void kpy_gcm_many_wipe(KpyGcmMany *m);

/* module.c: made at import. */
extern PyObject *kpy_InvalidTag;
extern PyObject *kpy_AlreadyFinalized;
extern PyObject *kpy_NotYetFinalized;
extern PyObject *kpy_InvalidSignature;
extern PyObject *kpy_InvalidUnwrap; /* kuai.keywrap.InvalidUnwrap */
extern PyObject *kpy_KeyType;
extern PyObject *kpy_StreamType;
extern PyObject *kpy_GcmType;
extern PyObject *kpy_CmacType;
/* Raises the exception for a kuai error code (InvalidTag for
 * KUAI_ERR_AUTH); returns NULL. */
PyObject *kpy_raise(int err, const char *what);
/* The arguments of a METH_FASTCALL | METH_KEYWORDS method into out[0..n-1],
 * by position or by names[i]; the first nreq required, the rest NULL when
 * not given. 0, or -1 (TypeError raised). */
int kpy_args(const char *fn, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
             const char *const *names, int n, int nreq, PyObject **out);
/* A method's one argument, name, by position or by name, as a read-only
 * view (get_ro); 0, or -1 with the error raised and nothing held. */
int kpy_arg_buffer(const char *fn, const char *name, PyObject *const *args, Py_ssize_t nargs,
                   PyObject *kwnames, Py_buffer *b);

/* key.c */
extern PyType_Spec kpy_key_spec;
int kpy_is_key(PyObject *o);
int kpy_check_gcm_key(const KeyObject *k);
/* 0, or -1 with an error raised: k is an XTS key (two halves), which only
 * modes.XTS takes (ValueError), or an AEAD key (k->aead) for another mode
 * than aead, the call's own AEAD mode (KPY_AEAD_*; 0: not an AEAD call;
 * TypeError, as cryptography for a key object of the wrong kind). */
int kpy_check_single(const KeyObject *k, int aead);
/* As kpy_check_single, and ValueError if the cipher's block is not 128
 * bits (mode names the mode in the message). */
int kpy_check_block16(const KeyObject *k, const char *mode, int aead);
int kpy_check_nonce(Py_ssize_t n);

/* batch.c: Key methods, a module function, the errors= argument */
PyObject *kpy_gcm_encrypt_batch(PyObject *o, PyObject *args, PyObject *kwds);
PyObject *kpy_gcm_decrypt_batch(PyObject *o, PyObject *args, PyObject *kwds);
PyObject *kpy_cbc_multi(PyObject *mod, PyObject *args);
int kpy_parse_errors(const char *errors, int *raise);

/* packed.c: Key methods */
PyObject *kpy_gcm_encrypt_packed(PyObject *o, PyObject *args, PyObject *kwds);
PyObject *kpy_gcm_decrypt_packed(PyObject *o, PyObject *args, PyObject *kwds);
PyObject *kpy_cbc_encrypt_packed(PyObject *o, PyObject *args);
PyObject *kpy_cbc_decrypt_packed(PyObject *o, PyObject *args);

/* stream.c and gcm_stream.c: the types and the module functions that make
 * them */
extern PyType_Spec kpy_stream_spec;
extern PyType_Spec kpy_gcm_spec;
extern PyType_Spec kpy_cmac_spec; /* cmac.c */
PyObject *kpy_stream(PyObject *mod, PyObject *args);
PyObject *kpy_gcm_stream(PyObject *mod, PyObject *args);

/* keywrap.c: module functions (METH_FASTCALL | METH_KEYWORDS) */
PyObject *kpy_key_wrap(PyObject *mod, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames);
PyObject *kpy_key_unwrap(PyObject *mod, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames);

/* stream.c: what both streaming contexts are and do alike. Each starts
 * with a CtxObject: the Key it holds (so that the key outlives it) and a
 * lock that serialises concurrent calls on one context. The context types
 * (and CMAC's) take part in the cycle collector: a context that a Key
 * subclass's instance refers to (k.ctx = k.encryptor(...)) is a cycle,
 * which without it was never collected, so the key stayed unwiped for the
 * process's life. Each type's tp_clear is its wipe; its dealloc untracks,
 * wipes and frees. */
typedef struct {
    PyObject_HEAD PyObject *keyobj; /* NULL once finalized */
    PyThread_type_lock lock;
} CtxObject;

/* What a type's update does: how many bytes len bytes in write, and the
 * update itself into out (room bytes), returning the bytes written or -1
 * (raised). Called with the lock held, on a context not finalized. */
typedef struct {
    size_t (*out_len)(CtxObject *c, size_t len);
    Py_ssize_t (*run)(CtxObject *c, const uint8_t *in, size_t len, uint8_t *out, size_t room);
    /* 0, or -1 (raised) for a length the type refuses whatever the output
     * (XTS: over 2^24 bytes), asked before update allocates its output, so
     * that a refused call does not first allocate as much as it was given.
     * NULL: no such length. run checks again (update_into). */
    int (*check)(CtxObject *c, size_t len);
} CtxUpdate;

CtxObject *kpy_ctx_new(PyObject *tp, PyObject *keyobj);
PyObject *kpy_ctx_no_new(PyTypeObject *tp, PyObject *args, PyObject *kwds);
void kpy_ctx_free(PyObject *o);
int kpy_ctx_traverse(PyObject *o, visitproc visit, void *arg);
void kpy_ctx_lock(CtxObject *c);
int kpy_ctx_check(const CtxObject *c);
PyObject *kpy_ctx_update(PyObject *o, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                         const CtxUpdate *u);
PyObject *kpy_ctx_update_into(PyObject *o, PyObject *const *args, Py_ssize_t nargs,
                              PyObject *kwnames, const CtxUpdate *u);

/* ------------------------------------------------------- buffer helpers */

/* 0 if view b (asked for with PyBUF_STRIDES) is C-contiguous; else b is
 * released and -1 returned with BufferError raised. A simple view is not
 * asked for instead: an exporter refuses one for a non-contiguous buffer
 * in its own way (numpy: ValueError "ndarray is not C-contiguous"), where
 * the docs and cryptography say BufferError. */
static inline int kpy_contiguous(Py_buffer *b, const char *name)
{
    if (!PyBuffer_IsContiguous(b, 'C')) {
        PyBuffer_Release(b);
        PyErr_Format(PyExc_BufferError, "%s is not C-contiguous", name);
        return -1;
    }
    return 0;
}

/* Whether a buffer format (struct module syntax, PEP 3118) has an item of
 * type 'O', a Python object: such a buffer's bytes are the objects'
 * addresses (a numpy dtype=object array, a structured dtype with an object
 * field, a ctypes py_object array). Field names, between two colons
 * ("T{<q:a:O:b:}"), are skipped. */
static inline int kpy_format_has_objects(const char *f)
{
    if (f == NULL) {
        return 0;
    }
    for (; *f != 0; f++) {
        if (*f == ':') {
            const char *end = strchr(f + 1, ':');
            if (end == NULL) {
                return 0;
            }
            f = end;
        } else if (*f == 'O') {
            return 1;
        }
    }
    return 0;
}

/* 0 if view b (asked for with PyBUF_FORMAT) holds bytes; else b is
 * released and -1 returned with TypeError raised. Read as bytes, an array
 * of objects is a key or data made of heap addresses, and written as an
 * output it is pointers overwritten: the interpreter crashed freeing it. */
static inline int kpy_no_objects(Py_buffer *b, const char *name)
{
    if (kpy_format_has_objects(b->format)) {
        PyBuffer_Release(b);
        PyErr_Format(PyExc_TypeError,
                     "%s holds Python objects (buffer format 'O'), not bytes; give bytes or "
                     "an array of a numeric type",
                     name);
        return -1;
    }
    return 0;
}

/* 1 if o exports a buffer of Python objects (kpy_format_has_objects), 0
 * otherwise (no buffer at all included); raises nothing. A batch takes
 * such an array of nonces or AADs as a sequence, as it takes a list. */
static inline int kpy_holds_objects(PyObject *o)
{
    Py_buffer b;
    if (!PyObject_CheckBuffer(o)) {
        return 0;
    }
    if (PyObject_GetBuffer(o, &b, PyBUF_STRIDES | PyBUF_FORMAT) < 0) {
        PyErr_Clear();
        return 0;
    }
    int r = kpy_format_has_objects(b.format);
    PyBuffer_Release(&b);
    return r;
}

/* A read-only view of a bytes-like object, with the error a caller of
 * `cryptography` expects when o is not one (TypeError), holds Python
 * objects (TypeError) or is not C-contiguous (BufferError). */
static inline int get_ro(PyObject *o, Py_buffer *b, const char *name)
{
    if (PyObject_GetBuffer(o, b, PyBUF_STRIDES | PyBUF_FORMAT) < 0) {
        if (PyErr_ExceptionMatches(PyExc_TypeError)) {
            PyErr_Format(PyExc_TypeError,
                         "%s must be a bytes-like object (bytes, bytearray, memoryview, "
                         "C-contiguous array)",
                         name);
        }
        return -1;
    }
    if (kpy_no_objects(b, name) < 0) {
        return -1;
    }
    return kpy_contiguous(b, name);
}

/* A writable view of buf for the *_into calls. As cryptography: a buf that
 * is no buffer or is read-only is a TypeError, a writable one that is not
 * C-contiguous a BufferError. Asked for with strides so that the two are
 * told apart: a simple writable view is refused alike for both. 0, or -1
 * with the error raised and nothing held. */
static inline int get_writable(PyObject *o, Py_buffer *b)
{
    if (PyObject_GetBuffer(o, b, PyBUF_WRITABLE | PyBUF_STRIDES | PyBUF_FORMAT) < 0) {
        /* Why, asked again read-only: a buffer that gives a read-only view
         * is read-only, a TypeError whatever its exporter raised for the
         * writable view (numpy: ValueError "buffer source array is
         * read-only"); one that gives none either is no buffer (TypeError)
         * or says why itself (a released memoryview: ValueError). */
        PyErr_Clear();
        int read_only = PyObject_GetBuffer(o, b, PyBUF_STRIDES) == 0;
        if (read_only) {
            PyBuffer_Release(b);
        }
        if (read_only || PyErr_ExceptionMatches(PyExc_TypeError) ||
            PyErr_ExceptionMatches(PyExc_BufferError)) {
            PyErr_SetString(PyExc_TypeError,
                            "buf must be a writable bytes-like object (bytearray, memoryview of "
                            "one, numpy array)");
        }
        return -1;
    }
    if (kpy_no_objects(b, "buf") < 0) {
        return -1;
    }
    return kpy_contiguous(b, "buf");
}

/* An optional buffer: None gives an empty view with buf == NULL. */
static inline int get_ro_opt(PyObject *o, Py_buffer *b, const char *name)
{
    if (o == NULL || o == Py_None) {
        memset(b, 0, sizeof *b);
        return 0;
    }
    return get_ro(o, b, name);
}

/* Releases a view that get_ro_opt may have left empty. */
static inline void release(Py_buffer *b)
{
    if (b->obj != NULL) {
        PyBuffer_Release(b);
    }
}

static inline PyObject *new_bytes(Py_ssize_t n, uint8_t **p)
{
    PyObject *r = PyBytes_FromStringAndSize(NULL, n);
    if (r != NULL) {
        *p = (uint8_t *)PyBytes_AsString(r);
    }
    return r;
}

static inline int overlaps(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen)
{
    return alen != 0 && blen != 0 && a < b + blen && b < a + alen;
}

/* Zeroes n bytes at p through a volatile pointer, so that the compiler
 * cannot drop the stores as dead before a free (the library's kuai_wipe is
 * internal to it: src/wipe.h is not part of include/). */
static inline void kpy_wipe(void *p, size_t n)
{
    volatile uint8_t *v = p;
    for (size_t i = 0; i < n; i++) {
        v[i] = 0;
    }
}

/* A copy of the input, for an output that would overwrite it before it is
 * read; free it with free_input_copy. NULL (raised) if no memory. */
static inline uint8_t *copy_input(const uint8_t *in, size_t len)
{
    uint8_t *tmp = PyMem_Malloc(len);
    if (tmp == NULL) {
        PyErr_NoMemory();
        return NULL;
    }
    memcpy(tmp, in, len);
    return tmp;
}

/* Frees a copy_input copy (NULL: none), erased first: it holds the
 * caller's input, the plaintext when encrypting, which freed memory would
 * otherwise keep until something else is written there. */
static inline void free_input_copy(uint8_t *tmp, size_t len)
{
    if (tmp != NULL) {
        kpy_wipe(tmp, len);
        PyMem_Free(tmp);
    }
}

#endif
