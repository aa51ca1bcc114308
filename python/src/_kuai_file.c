/* SPDX-License-Identifier: Apache-2.0 */
/*
 * kuai._kuai_file: the .kuai container (docs/format.md) for kuai.file, over
 * the library component kuai_file (include/kuai_file.h) — the same code
 * the `kuai` command uses, so the bytes are the tool's by construction.
 * A module of its own because kuai_file needs libcrypto: kuai._kuai (the
 * ciphers) stays free of it, and a build without OpenSSL 3 headers simply
 * lacks this module (kuai.file then says so).
 *
 * Paths, temporary files and renames are kuai/file.py's; here the bytes
 * move between a source and a sink that are each a file descriptor (read
 * and written with the GIL released) or a Python object with read(n) /
 * write(b) (called with the GIL taken back, once per 1 MiB chunk); a sink
 * may also be a callable that returns its file descriptor when the first
 * bytes are ready.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <string.h>
#include <unistd.h>

#include "kuai.h"
#include "kuai_file.h"

static PyObject *FormatError;
static PyObject *InvalidTag;      /* kuai._kuai's */
static unsigned long main_thread; /* Python's main thread (signal handlers run there) */

typedef struct {
    int fd;             /* >= 0: a file descriptor */
    PyObject *obj;      /* else: an object with read(n) or write(b) */
    PyObject *opener;   /* or: called at the first write, returns the fd to write */
    PyThreadState **ts; /* the saved thread state of the call */
    int check_signals;  /* the caller is Python's main thread */
    unsigned writes;
    /* the header, read ahead by decrypt and handed out first */
    const uint8_t *pre;
    size_t pre_len;
} io_ctx;

/* After EINTR or a slice of io_wait, in the main thread: run Python's
 * signal handlers (Ctrl-C raises KeyboardInterrupt), with the GIL taken
 * back. -1: stop. */
static int io_signals(io_ctx *c)
{
    if (!c->check_signals)
        return 0;
    PyEval_RestoreThread(*c->ts);
    int r = PyErr_CheckSignals();
    *c->ts = PyEval_SaveThread();
    return r < 0 ? -1 : 0;
}

/*
 * In the main thread, before a read or write of the fd that may block:
 * wait until it is ready in slices of 100 ms, running Python's signal
 * handlers between them. A Ctrl-C that arrives while the call is not
 * blocked (sealing, or in another thread) only sets Python's flag, and a
 * read from a stalled pipe would otherwise never return to see it. Ready,
 * or poll failing otherwise: 0, and the read or write tells. -1: stop.
 */
static int io_wait(io_ctx *c, short events)
{
    if (!c->check_signals)
        return 0;
    for (;;) {
        struct pollfd p = {.fd = c->fd, .events = events};
        int r = poll(&p, 1, 100);
        if (r > 0 || (r < 0 && errno != EINTR))
            return 0;
        if (io_signals(c) < 0)
            return -1;
    }
}

/* Called with the GIL released; takes it back for a Python object. */
static long io_read(void *vctx, uint8_t *buf, size_t n)
{
    io_ctx *c = vctx;
    if (c->pre_len) {
        size_t m = n < c->pre_len ? n : c->pre_len;
        memcpy(buf, c->pre, m);
        c->pre += m;
        c->pre_len -= m;
        return (long)m;
    }
    if (c->fd >= 0) {
        for (;;) {
            if (io_wait(c, POLLIN) < 0)
                return -1;
            ssize_t r = read(c->fd, buf, n);
            if (r >= 0)
                return (long)r;
            int e = errno;
            if (e == EINTR) {
                if (io_signals(c) < 0)
                    return -1;
            } else {
                PyEval_RestoreThread(*c->ts);
                errno = e;
                PyErr_SetFromErrno(PyExc_OSError);
                *c->ts = PyEval_SaveThread();
                return -1;
            }
        }
    }
    long ret = -1;
    PyEval_RestoreThread(*c->ts);
    PyObject *r = PyObject_CallMethod(c->obj, "read", "n", (Py_ssize_t)n);
    if (r == Py_None) {
        /* a raw file opened non-blocking with no data ready (io's rule);
         * without this the error was GetBuffer's TypeError on None */
        PyErr_SetString(PyExc_BlockingIOError,
                        "src.read(n) returned None: a non-blocking file with no data ready "
                        "(kuai.file reads blocking files only)");
    } else if (r) {
        Py_buffer b;
        if (PyObject_GetBuffer(r, &b, PyBUF_SIMPLE) == 0) {
            if ((size_t)b.len > n) {
                PyErr_SetString(PyExc_ValueError, "src.read(n) returned more than n bytes");
            } else {
                memcpy(buf, b.buf, (size_t)b.len);
                ret = (long)b.len;
            }
            PyBuffer_Release(&b);
        }
        Py_DECREF(r);
    }
    *c->ts = PyEval_SaveThread();
    return ret;
}

/* The opener makes the output file (kuai.file's temporary file) only when
 * there is something to write: after the key is derived, so that a process
 * killed during scrypt leaves no file. */
static int io_open_late(io_ctx *c)
{
    PyEval_RestoreThread(*c->ts);
    PyObject *r = PyObject_CallObject(c->opener, NULL);
    long fd = r ? PyLong_AsLong(r) : -1;
    Py_XDECREF(r);
    if (r && (fd < 0 || fd > INT_MAX) && !PyErr_Occurred())
        PyErr_SetString(PyExc_ValueError, "the opener returned no file descriptor");
    *c->ts = PyEval_SaveThread();
    if (!r || fd < 0 || fd > INT_MAX)
        return -1;
    c->fd = (int)fd;
    c->opener = NULL;
    return 0;
}

static int io_write(void *vctx, const uint8_t *buf, size_t n)
{
    io_ctx *c = vctx;
    int ret = 0;
    if (c->opener && io_open_late(c) < 0)
        return -1;
    if (c->fd >= 0) {
        while (n) {
            if (io_wait(c, POLLOUT) < 0)
                return -1;
            ssize_t w = write(c->fd, buf, n);
            if (w < 0 && errno == EINTR) {
                if (io_signals(c) < 0)
                    return -1;
                continue;
            }
            if (w <= 0) {
                int e = w < 0 ? errno : EIO;
                PyEval_RestoreThread(*c->ts);
                errno = e;
                PyErr_SetFromErrno(PyExc_OSError);
                *c->ts = PyEval_SaveThread();
                return -1;
            }
            buf += w;
            n -= (size_t)w;
        }
        /* Let Ctrl-C stop a long file: every 8 chunks (8 MiB), and only in
         * the main thread (the only one Python runs signal handlers in),
         * since taking the GIL back waits for any busy Python thread. */
        if (c->check_signals && ++c->writes % 8 == 0) {
            PyEval_RestoreThread(*c->ts);
            if (PyErr_CheckSignals() < 0)
                ret = -1;
            *c->ts = PyEval_SaveThread();
        }
        return ret;
    }
    PyEval_RestoreThread(*c->ts);
    /* a copy: the object may keep what it is given, and the chunk buffer
     * is wiped and freed by the component */
    PyObject *b = PyBytes_FromStringAndSize((const char *)buf, (Py_ssize_t)n);
    Py_ssize_t off = 0;
    while (b && off < (Py_ssize_t)n) {
        PyObject *rest = off ? PySequence_GetSlice(b, off, (Py_ssize_t)n) : (Py_INCREF(b), b);
        if (!rest)
            break;
        PyObject *r = PyObject_CallMethod(c->obj, "write", "O", rest);
        Py_DECREF(rest);
        if (!r)
            break;
        /* raw files may write less; None (non-blocking, nothing written)
         * is an error here */
        if (r == Py_None) {
            Py_DECREF(r);
            PyErr_SetString(PyExc_BlockingIOError,
                            "dst.write() returned None: a non-blocking file that cannot take "
                            "data now (kuai.file writes blocking files only)");
            break;
        }
        /* any integer, as io's buffered writers take a raw write()'s count
         * (a numpy integer, say), not only an int */
        Py_ssize_t w = PyNumber_AsSsize_t(r, PyExc_ValueError);
        Py_DECREF(r);
        if (w <= 0 || w > (Py_ssize_t)n - off) {
            if (!PyErr_Occurred())
                PyErr_Format(PyExc_OSError, "dst.write() wrote %zd of %zd bytes", w,
                             (Py_ssize_t)n - off);
            break;
        }
        off += w;
    }
    if (!b || off < (Py_ssize_t)n)
        ret = -1;
    Py_XDECREF(b);
    *c->ts = PyEval_SaveThread();
    return ret;
}

static int io_get(PyObject *o, io_ctx *c, PyThreadState **ts)
{
    memset(c, 0, sizeof *c);
    c->ts = ts;
    c->check_signals = PyThread_get_thread_ident() == main_thread;
    c->fd = -1;
    if (PyLong_Check(o)) {
        long fd = PyLong_AsLong(o);
        c->fd = fd < 0 || fd > INT_MAX ? -1 : (int)fd;
        if (c->fd < 0) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_ValueError, "negative file descriptor");
            return -1;
        }
        return 0;
    }
    if (!PyObject_HasAttrString(o, "write") && !PyObject_HasAttrString(o, "read") &&
        PyCallable_Check(o)) {
        c->opener = o;
        return 0;
    }
    c->obj = o;
    return 0;
}

/* A kuai error as a Python exception, unless a callback already set one
 * (KUAI_ERR_IO: its OSError, or Ctrl-C's KeyboardInterrupt). */
static PyObject *file_error(int rc, const char *secret_kind)
{
    if (PyErr_Occurred())
        return NULL;
    switch (rc) {
    case KUAI_ERR_AUTH:
        return PyErr_Format(InvalidTag, "wrong %s, or a damaged file", secret_kind);
    case KUAI_ERR_TRUNCATED:
        return PyErr_Format(FormatError, "truncated: the file ends before its last chunk");
    case KUAI_ERR_FORMAT:
        return PyErr_Format(FormatError, "not a kuai file");
    case KUAI_ERR_EXTERNAL:
        return PyErr_Format(PyExc_MemoryError,
                            "libcrypto failed (out of memory for scrypt, or no random bytes)");
    default:
        return PyErr_Format(PyExc_ValueError, "%s", kuai_strerror(rc));
    }
}

/* len: the bytes parsed. An empty input is a truncated one (kuai_file.h),
 * named as empty, as `kuai decrypt` does. */
static const char *header_why(kuai_file_header_error why, size_t len)
{
    switch (why) {
    case KUAI_FILE_HDR_MAGIC:
        return "not a kuai file";
    case KUAI_FILE_HDR_SHORT:
        return len ? "truncated: the header is cut short"
                   : "truncated: the input is empty (no kuai header)";
    case KUAI_FILE_HDR_VERSION:
        return "a format version this kuai does not read";
    case KUAI_FILE_HDR_COST:
        return "the header asks for an scrypt cost above 2^23 (refused)";
    default:
        return "a damaged header (unknown cipher, chunk size, KDF or reserved bytes)";
    }
}

static PyObject *params_tuple(const kuai_file_params *p)
{
    return Py_BuildValue("(iiIII)", (int)p->cipher, (int)p->kdf, p->scrypt_log2n, p->scrypt_r,
                         p->scrypt_p);
}

/* encrypt(cipher_id, use_password, secret, scrypt_log2n, src, dst) */
static PyObject *mod_encrypt(PyObject *mod, PyObject *args)
{
    int cipher, use_pw;
    unsigned log2n;
    Py_buffer secret;
    PyObject *src, *dst;
    (void)mod;
    if (!PyArg_ParseTuple(args, "iiy*IOO", &cipher, &use_pw, &secret, &log2n, &src, &dst))
        return NULL;
    kuai_file_params p;
    int rc = kuai_file_params_new(&p, (kuai_cipher)cipher,
                                  use_pw ? KUAI_FILE_KDF_SCRYPT : KUAI_FILE_KDF_KEY, log2n);
    if (rc) {
        PyBuffer_Release(&secret);
        if (rc == KUAI_ERR_ARG)
            return PyErr_Format(PyExc_ValueError, "scrypt_log2n must be %d..%d",
                                KUAI_FILE_SCRYPT_LOG2N_MIN, KUAI_FILE_SCRYPT_LOG2N_MAX);
        return file_error(rc, "key");
    }
    PyThreadState *ts = NULL;
    io_ctx in, out;
    if (io_get(src, &in, &ts) < 0 || io_get(dst, &out, &ts) < 0) {
        PyBuffer_Release(&secret);
        return NULL;
    }
    ts = PyEval_SaveThread();
    rc = kuai_file_encrypt_stream(&p, secret.buf, (size_t)secret.len, io_read, &in, io_write, &out);
    PyEval_RestoreThread(ts);
    PyBuffer_Release(&secret);
    if (rc)
        return file_error(rc, use_pw ? "password" : "key");
    Py_RETURN_NONE;
}

/* decrypt(use_password, secret, src, dst) -> the header's fields */
static PyObject *mod_decrypt(PyObject *mod, PyObject *args)
{
    int use_pw;
    Py_buffer secret;
    PyObject *src, *dst;
    (void)mod;
    if (!PyArg_ParseTuple(args, "iy*OO", &use_pw, &secret, &src, &dst))
        return NULL;
    PyThreadState *ts = NULL;
    io_ctx in, out;
    if (io_get(src, &in, &ts) < 0 || io_get(dst, &out, &ts) < 0) {
        PyBuffer_Release(&secret);
        return NULL;
    }
    /* The header first, to say why a file is refused and which secret it
     * wants; then it is handed to the component again through io_read. */
    uint8_t hdr[KUAI_FILE_HEADER_SIZE];
    size_t got = 0;
    long r = 1;
    ts = PyEval_SaveThread();
    while (got < sizeof hdr && (r = io_read(&in, hdr + got, sizeof hdr - got)) > 0)
        got += (size_t)r;
    PyEval_RestoreThread(ts);
    if (r < 0) {
        PyBuffer_Release(&secret);
        return NULL;
    }
    kuai_file_params p;
    kuai_file_header_error why = KUAI_FILE_HDR_OK;
    if (kuai_file_header_parse(hdr, got, &p, &why) != 0) {
        PyBuffer_Release(&secret);
        return PyErr_Format(FormatError, "%s", header_why(why, got));
    }
    if ((p.kdf == KUAI_FILE_KDF_SCRYPT) != !!use_pw) {
        PyBuffer_Release(&secret);
        return PyErr_Format(PyExc_ValueError, "%s",
                            use_pw ? "the file was encrypted with a key, not a password: pass key="
                                   : "the file was encrypted with a password: pass password=");
    }
    in.pre = hdr;
    in.pre_len = got;
    ts = PyEval_SaveThread();
    int rc = kuai_file_decrypt_stream(p.kdf, secret.buf, (size_t)secret.len, io_read, &in, io_write,
                                      &out, NULL);
    PyEval_RestoreThread(ts);
    Py_ssize_t secret_len = secret.len;
    PyBuffer_Release(&secret);
    if (rc == KUAI_ERR_KEY_LEN && !PyErr_Occurred())
        return PyErr_Format(PyExc_ValueError,
                            "Invalid key size (%zd bits): the file's cipher is "
                            "%s, whose key is %zu bytes",
                            secret_len * 8, kuai_cipher_name(p.cipher), kuai_key_size(p.cipher));
    if (rc)
        return file_error(rc, use_pw ? "password" : "key");
    return params_tuple(&p);
}

/* parse_header(buf) -> (cipher_id, kdf, log2n, r, p), or FormatError */
static PyObject *mod_parse_header(PyObject *mod, PyObject *arg)
{
    (void)mod;
    Py_buffer b;
    if (PyObject_GetBuffer(arg, &b, PyBUF_SIMPLE) < 0)
        return NULL;
    kuai_file_params p;
    kuai_file_header_error why = KUAI_FILE_HDR_OK;
    int rc = kuai_file_header_parse(b.buf, (size_t)b.len, &p, &why);
    PyBuffer_Release(&b);
    if (rc)
        return PyErr_Format(FormatError, "%s", header_why(why, (size_t)b.len));
    return params_tuple(&p);
}

static PyMethodDef mod_methods[] = {
    {"encrypt", mod_encrypt, METH_VARARGS,
     "encrypt(cipher_id, use_password, secret, scrypt_log2n, src, dst)"},
    {"decrypt", mod_decrypt, METH_VARARGS,
     "decrypt(use_password, secret, src, dst) -> (cipher_id, kdf, log2n, r, p)"},
    {"parse_header", mod_parse_header, METH_O,
     "parse_header(buf) -> (cipher_id, kdf, log2n, r, p)"},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef moddef = {
    PyModuleDef_HEAD_INIT, "_kuai_file", NULL, -1, mod_methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__kuai_file(void)
{
    PyObject *threading = PyImport_ImportModule("threading");
    PyObject *mt = threading ? PyObject_CallMethod(threading, "main_thread", NULL) : NULL;
    PyObject *ident = mt ? PyObject_GetAttrString(mt, "ident") : NULL;
    Py_XDECREF(threading);
    Py_XDECREF(mt);
    if (!ident)
        return NULL;
    main_thread = PyLong_AsUnsignedLong(ident);
    Py_DECREF(ident);
    if (PyErr_Occurred())
        return NULL;
    PyObject *core = PyImport_ImportModule("kuai._kuai");
    if (!core)
        return NULL;
    InvalidTag = PyObject_GetAttrString(core, "InvalidTag");
    Py_DECREF(core);
    if (!InvalidTag)
        return NULL;
    PyObject *m = PyModule_Create(&moddef);
    if (!m)
        return NULL;
    FormatError = PyErr_NewExceptionWithDoc(
        "kuai.file.FormatError",
        "Not a kuai file, a damaged or unsupported header, or a truncated file.", PyExc_ValueError,
        NULL);
    if (!FormatError || PyModule_AddObject(m, "FormatError", FormatError) < 0) {
        Py_XDECREF(FormatError);
        Py_DECREF(m);
        return NULL;
    }
    Py_INCREF(FormatError);
    if (PyModule_AddIntConstant(m, "HEADER_SIZE", KUAI_FILE_HEADER_SIZE) < 0 ||
        PyModule_AddIntConstant(m, "CHUNK_SIZE", (long)KUAI_FILE_CHUNK_SIZE) < 0 ||
        PyModule_AddIntConstant(m, "SCRYPT_LOG2N_DEFAULT", KUAI_FILE_SCRYPT_LOG2N_DEFAULT) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
