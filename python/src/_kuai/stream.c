/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The streaming contexts of kuai._kuai, in the shape of cryptography's
 * CipherContext: what Stream and GcmStream (gcm_stream.c) share, and
 * Stream, ECB/CBC/CTR/CFB/OFB/XTS over kuai_{ecb,cbc,ctr,cfb,ofb,xts}_*. The order of concurrent
 * updates on one context is the caller's business, as in `cryptography`;
 * the lock only keeps them from corrupting it. update and update_into are
 * one pair of functions for both types, over each type's own output length
 * and update (CtxUpdate).
 */
#include "kuai_py.h"

/* ---------------------------------------------------- what both share */

/* A new context of type tp holding keyobj; NULL (raised) if not. */
CtxObject *kpy_ctx_new(PyObject *tp, PyObject *keyobj)
{
    allocfunc alloc = (allocfunc)PyType_GetSlot((PyTypeObject *)tp, Py_tp_alloc);
    CtxObject *c = (CtxObject *)alloc((PyTypeObject *)tp, 0);
    if (c == NULL) {
        return NULL;
    }
    c->lock = PyThread_allocate_lock();
    if (c->lock == NULL) {
        Py_DECREF(c);
        PyErr_NoMemory();
        return NULL;
    }
    Py_INCREF(keyobj);
    c->keyobj = keyobj;
    return c;
}

/* The tp_new of both context types: a context is made by Cipher.encryptor()
 * / decryptor() (kpy_stream, kpy_gcm_stream) only. Without a tp_new of its
 * own, a type made by PyType_FromSpec inherits object's: type(ctx)() and
 * pickle's protocols 0 and 1 (copyreg._reconstructor) then made a context
 * without key or lock, and its first call crashed the interpreter. With this
 * one, pickle refuses a context at every protocol ("cannot pickle"). */
PyObject *kpy_ctx_no_new(PyTypeObject *tp, PyObject *args, PyObject *kwds)
{
    (void)tp;
    (void)args;
    (void)kwds;
    PyErr_SetString(PyExc_TypeError,
                    "cannot create a kuai context directly: use Cipher.encryptor() or decryptor()");
    return NULL;
}

/* The end of a dealloc, once the type has wiped its own state. */
/* What the cycle collector follows from a context: its type (a heap type)
 * and its key. */
int kpy_ctx_traverse(PyObject *o, visitproc visit, void *arg)
{
    Py_VISIT(Py_TYPE(o));
    Py_VISIT(((CtxObject *)o)->keyobj);
    return 0;
}

void kpy_ctx_free(PyObject *o)
{
    CtxObject *c = (CtxObject *)o;
    PyTypeObject *tp = Py_TYPE(o);
    if (c->lock != NULL) {
        PyThread_free_lock(c->lock);
    }
    freefunc f = (freefunc)PyType_GetSlot(tp, Py_tp_free);
    f(o);
    Py_DECREF(tp);
}

void kpy_ctx_lock(CtxObject *c)
{
    if (!PyThread_acquire_lock(c->lock, NOWAIT_LOCK)) {
        Py_BEGIN_ALLOW_THREADS PyThread_acquire_lock(c->lock, WAIT_LOCK);
        Py_END_ALLOW_THREADS
    }
}

int kpy_ctx_check(const CtxObject *c)
{
    if (c->keyobj == NULL) {
        PyErr_SetString(kpy_AlreadyFinalized, "Context was already finalized.");
        return -1;
    }
    return 0;
}

/* update(data) -> bytes */
PyObject *kpy_ctx_update(PyObject *o, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                         const CtxUpdate *u)
{
    CtxObject *c = (CtxObject *)o;
    Py_buffer db;
    if (kpy_arg_buffer("update", "data", args, nargs, kwnames, &db) < 0) {
        return NULL;
    }
    PyObject *r = NULL;
    kpy_ctx_lock(c);
    if (kpy_ctx_check(c) == 0 && (u->check == NULL || u->check(c, (size_t)db.len) == 0)) {
        uint8_t *out;
        size_t n = u->out_len(c, (size_t)db.len);
        if ((r = new_bytes((Py_ssize_t)n, &out)) != NULL &&
            u->run(c, db.buf, (size_t)db.len, out, n) < 0) {
            Py_CLEAR(r);
        }
    }
    PyThread_release_lock(c->lock);
    PyBuffer_Release(&db);
    return r;
}

/* update_into(data, buf) -> int: the bytes written into buf */
PyObject *kpy_ctx_update_into(PyObject *o, PyObject *const *args, Py_ssize_t nargs,
                              PyObject *kwnames, const CtxUpdate *u)
{
    static const char *const names[] = {"data", "buf"};
    CtxObject *c = (CtxObject *)o;
    PyObject *a[2];
    if (kpy_args("update_into", args, nargs, kwnames, names, 2, 2, a) < 0) {
        return NULL;
    }
    Py_buffer db, ob;
    if (get_ro(a[0], &db, "data") < 0) {
        return NULL;
    }
    if (get_writable(a[1], &ob) < 0) {
        PyBuffer_Release(&db);
        return NULL;
    }
    PyObject *r = NULL;
    kpy_ctx_lock(c);
    if (kpy_ctx_check(c) == 0) {
        Py_ssize_t n = u->run(c, db.buf, (size_t)db.len, ob.buf, (size_t)ob.len);
        if (n >= 0) {
            r = PyLong_FromSsize_t(n);
        }
    }
    PyThread_release_lock(c->lock);
    PyBuffer_Release(&db);
    PyBuffer_Release(&ob);
    return r;
}

/* ----------------------------------------------------------------- Stream */

/* Operations of stream() (kuai/modes.py uses the same numbers). */
enum {
    OP_ECB_ENC,
    OP_ECB_DEC,
    OP_CBC_ENC,
    OP_CBC_DEC,
    OP_CTR,
    OP_CFB_ENC,
    OP_CFB_DEC,
    OP_OFB,
    OP_XTS_ENC,
    OP_XTS_DEC
};

static const char *const op_names[] = {"ECB", "ECB", "CBC", "CBC", "CTR",
                                       "CFB", "CFB", "OFB", "XTS", "XTS"};

typedef struct {
    CtxObject base;
    const kuai_key *key;
    const kuai_key *key2; /* XTS: the tweak key */
    int op;
    int xts_std; /* XTS: kuai_xts_standard */
    size_t block;
    size_t pending; /* ECB/CBC: bytes in part[] */
    /* CTR: keystream bytes of part[] already used; CFB/OFB: bytes of iv[]
     * used (0: at a block boundary, iv[] the next cipher input) */
    size_t ks_used;
    /* CBC chaining value, CTR counter, CFB/OFB register (kuai.h's iv, and
     * after a partial block OpenSSL's ivec with num = ks_used), XTS tweak */
    uint8_t iv[KUAI_MAX_BLOCK];
    uint8_t part[KUAI_MAX_BLOCK]; /* ECB/CBC partial block, or CTR keystream */
} StreamObject;

static int is_xts(int op)
{
    return op == OP_XTS_ENC || op == OP_XTS_DEC;
}

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
static size_t stream_out_len(CtxObject *c, size_t len)
{
    const StreamObject *s = (const StreamObject *)c;
    if (s->op >= OP_CTR) {
        return len; /* CTR, CFB, OFB, XTS */
    }
    size_t t = s->pending + len;
    return t - t % s->block;
}

/* CFB128/OFB over any length: the rest of a block begun by an earlier
 * update, byte by byte on the register, then the library from the block
 * boundary on (it leaves a last partial block of r bytes in iv as OpenSSL's
 * ivec with num = r, which the next update continues here). */
static int cfb_ofb_run(StreamObject *s, const uint8_t *in, uint8_t *out, size_t len)
{
    while (len > 0 && s->ks_used > 0) {
        uint8_t x = *in++, y = (uint8_t)(x ^ s->iv[s->ks_used]);
        *out++ = y;
        if (s->op == OP_CFB_ENC) {
            s->iv[s->ks_used] = y; /* the register takes the ciphertext */
        } else if (s->op == OP_CFB_DEC) {
            s->iv[s->ks_used] = x;
        }
        s->ks_used = (s->ks_used + 1) % 16;
        len--;
    }
    if (len == 0) {
        return KUAI_OK;
    }
    int rc = s->op == OP_CFB_ENC   ? kuai_cfb_encrypt(s->key, s->iv, in, out, len)
             : s->op == OP_CFB_DEC ? kuai_cfb_decrypt(s->key, s->iv, in, out, len)
                                   : kuai_ofb_crypt(s->key, s->iv, in, out, len);
    if (rc == KUAI_OK) {
        s->ks_used = len % 16;
    }
    return rc;
}

/* The whole update; in and out do not overlap, or in == out with nothing
 * pending (the caller copies otherwise). */
static int stream_run(StreamObject *s, const uint8_t *in, uint8_t *out, size_t len)
{
    size_t bs = s->block;
    int rc = KUAI_OK;
    if (is_xts(s->op)) {
        /* one data unit per update, all under the context's tweak */
        if (len == 0) {
            return KUAI_OK;
        }
        return s->op == OP_XTS_ENC ? kuai_xts_encrypt(s->key, s->key2, s->iv, in, out, len,
                                                      (kuai_xts_standard)s->xts_std)
                                   : kuai_xts_decrypt(s->key, s->key2, s->iv, in, out, len,
                                                      (kuai_xts_standard)s->xts_std);
    }
    if (s->op > OP_CTR) {
        return cfb_ofb_run(s, in, out, len);
    }
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

/* XTS: one data unit of 16 bytes to 2^24 (IEEE 1619) an update, or none. */
static int stream_check(CtxObject *c, size_t len)
{
    const StreamObject *s = (const StreamObject *)c;
    if (is_xts(s->op) && len != 0 && (len < 16 || len > ((size_t)1 << 24))) {
        PyErr_Format(PyExc_ValueError,
                     "In XTS mode each update() is one data unit of 16 bytes to 2^24 bytes, "
                     "not %zu bytes",
                     len);
        return -1;
    }
    return 0;
}

/* The update into out (room bytes). Returns bytes written or -1. */
static Py_ssize_t stream_update(CtxObject *c, const uint8_t *in, size_t len, uint8_t *out,
                                size_t room)
{
    StreamObject *s = (StreamObject *)c;
    size_t n = stream_out_len(c, len);
    if (room < n) {
        PyErr_Format(PyExc_ValueError, "buffer must be at least %zu bytes for this call", n);
        return -1;
    }
    if (stream_check(c, len) < 0) {
        return -1;
    }
    uint8_t *tmp = NULL;
    if (overlaps(in, len, out, n) && (in != out || s->pending > 0)) {
        if ((tmp = copy_input(in, len)) == NULL) {
            return -1;
        }
        in = tmp;
    }
    int rc;
    KPY_GIL_CALL(len, rc, stream_run(s, in, out, len));
    free_input_copy(tmp, len);
    if (rc != KUAI_OK) {
        kpy_raise(rc, "update");
        return -1;
    }
    return (Py_ssize_t)n;
}

static const CtxUpdate stream_ops = {stream_out_len, stream_update, stream_check};

static PyObject *stream_py_update(PyObject *o, PyObject *const *args, Py_ssize_t nargs,
                                  PyObject *kwnames)
{
    return kpy_ctx_update(o, args, nargs, kwnames, &stream_ops);
}

static PyObject *stream_py_update_into(PyObject *o, PyObject *const *args, Py_ssize_t nargs,
                                       PyObject *kwnames)
{
    return kpy_ctx_update_into(o, args, nargs, kwnames, &stream_ops);
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
    Py_CLEAR(s->base.keyobj);
    s->key = NULL;
    s->key2 = NULL;
}

static PyObject *stream_py_finalize(PyObject *o, PyObject *unused)
{
    (void)unused;
    StreamObject *s = (StreamObject *)o;
    PyObject *r = NULL;
    kpy_ctx_lock(&s->base);
    if (kpy_ctx_check(&s->base) == 0) {
        /* A partial ECB/CBC block fails finalize() but does not end the
         * context, as in cryptography: the caller may still give the rest
         * of the block and finalize again, and loses no data it gave. */
        if (s->op != OP_CTR && s->pending != 0) {
            PyErr_SetString(
                PyExc_ValueError,
                "The length of the provided data is not a multiple of the block length.");
        } else {
            r = PyBytes_FromStringAndSize(NULL, 0);
            if (r)
                stream_clear(s);
        }
    }
    PyThread_release_lock(s->base.lock);
    return r;
}

static int stream_tp_clear(PyObject *o)
{
    stream_clear((StreamObject *)o);
    return 0;
}

static void stream_dealloc(PyObject *o)
{
    PyObject_GC_UnTrack(o);
    stream_clear((StreamObject *)o);
    kpy_ctx_free(o);
}

static PyMethodDef stream_methods[] = {
    {"update", (PyCFunction)(void (*)(void))stream_py_update, METH_FASTCALL | METH_KEYWORDS,
     "update(data) -> bytes"},
    {"update_into", (PyCFunction)(void (*)(void))stream_py_update_into,
     METH_FASTCALL | METH_KEYWORDS,
     "update_into(data, buf) -> int: the output written into buf (zero copies; buf may be data)"},
    {"finalize", stream_py_finalize, METH_NOARGS, "finalize() -> b''"},
    {NULL, NULL, 0, NULL}};

static PyType_Slot stream_slots[] = {
    {Py_tp_new, kpy_ctx_no_new},
    {Py_tp_dealloc, stream_dealloc},
    {Py_tp_traverse, kpy_ctx_traverse},
    {Py_tp_clear, stream_tp_clear},
    {Py_tp_methods, stream_methods},
    {Py_tp_doc, "An ECB/CBC/CTR/CFB/OFB/XTS encryptor or decryptor."},
    {0, NULL}};

PyType_Spec kpy_stream_spec = {"kuai._kuai.Stream", sizeof(StreamObject), 0,
                               Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC, stream_slots};

/* stream(key, op, iv_or_None, xts_standard=0) -> Stream */
PyObject *kpy_stream(PyObject *mod, PyObject *args)
{
    (void)mod;
    PyObject *keyobj, *ivobj;
    int op, std = KUAI_XTS_IEEE1619;
    if (!PyArg_ParseTuple(args, "OiO|i:stream", &keyobj, &op, &ivobj, &std)) {
        return NULL;
    }
    if (!kpy_is_key(keyobj)) {
        PyErr_SetString(PyExc_TypeError, "stream: key must be a kuai key");
        return NULL;
    }
    if (op < OP_ECB_ENC || op > OP_XTS_DEC) {
        PyErr_SetString(PyExc_ValueError, "stream: unknown operation");
        return NULL;
    }
    KeyObject *k = (KeyObject *)keyobj;
    if (is_xts(op)) {
        if (k->key2 == NULL) {
            PyErr_Format(PyExc_ValueError,
                         "XTS needs an XTS key: kuai.Cipher(\"%s-xts\", data key || tweak key)",
                         kuai_cipher_name((kuai_cipher)k->cipher));
            return NULL;
        }
        if (std != KUAI_XTS_IEEE1619 && std != KUAI_XTS_GB17964) {
            PyErr_SetString(PyExc_ValueError, "stream: unknown XTS standard");
            return NULL;
        }
        if (op == OP_XTS_ENC && k->halves_equal) {
            PyErr_SetString(PyExc_ValueError, "In XTS mode duplicated keys are not allowed");
            return NULL;
        }
    } else if (op > OP_CTR ? kpy_check_block16(k, op_names[op], 0) < 0
                           : kpy_check_single(k, 0) < 0) {
        return NULL;
    }
    Py_buffer ivb;
    if (get_ro_opt(ivobj, &ivb, "iv") < 0) {
        return NULL;
    }
    int need_iv = op >= OP_CBC_ENC;
    if (need_iv ? (size_t)ivb.len != k->block : ivb.obj != NULL) {
        PyErr_Format(PyExc_ValueError, "Invalid %s size (%zd) for %s: %zu bytes needed",
                     is_xts(op) ? "tweak" : "IV", ivb.len, op_names[op], k->block);
        release(&ivb);
        return NULL;
    }
    StreamObject *s = (StreamObject *)kpy_ctx_new(kpy_StreamType, keyobj);
    if (s != NULL) {
        s->key = k->key;
        s->key2 = k->key2;
        s->op = op;
        s->xts_std = std;
        s->block = k->block;
        s->ks_used = op == OP_CTR ? k->block : 0;
        if (need_iv) {
            memcpy(s->iv, ivb.buf, k->block);
        }
    }
    release(&ivb);
    return (PyObject *)s;
}
