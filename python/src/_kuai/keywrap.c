/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Key wrap (NIST SP 800-38F) over kuai_kw_* and kuai_kwp_*: the module
 * functions key_wrap(key, key_to_wrap, padding=False) and key_unwrap(key,
 * wrapped_key, padding=False), with a Key of a 128-bit-block cipher; KW
 * (RFC 3394) or, with padding, KWP (RFC 5649). kuai.keywrap builds
 * cryptography's aes_key_wrap & co. and its generic forms on them, and
 * checks the arguments first in cryptography's order and words; what
 * reaches the library and is refused here is kept to the same kinds: a
 * length refused when wrapping is a ValueError, when unwrapping
 * InvalidUnwrap (no key wraps to such a length), as is a failed integrity
 * check (InvalidUnwrap with no message, as cryptography's).
 *
 * Module functions taking a Key, as stream() and gcm_stream() are, not
 * Key methods: cryptography's functions take the wrapping key's bytes, so
 * kuai.keywrap makes the Key for the call; as methods they would be on
 * every kuai.Cipher and the AEAD classes would have to hide them too
 * (kuai.aead._KEY_NAMES). The GIL is released on KUAI_GIL_BYTES or more of
 * input, as for every other call.
 */
#include "kuai_py.h"

/* An unwrapped key the integrity check refused is never returned: the
 * library leaves zeros in out, which is freed. */
static PyObject *unwrap_refused(int rc)
{
    if (rc == KUAI_ERR_AUTH) {
        PyErr_SetNone(kpy_InvalidUnwrap);
    } else if (rc == KUAI_ERR_LENGTH) {
        PyErr_Format(kpy_InvalidUnwrap, "key unwrap: %s", kuai_strerror(rc));
    } else {
        kpy_raise(rc, "key unwrap");
    }
    return NULL;
}

/* The arguments of both: the key (a single key of a 128-bit-block cipher,
 * not an AEAD class's), a read-only view of the data and padding's truth;
 * 0, or -1 with the error raised and nothing held. */
static int kw_args(const char *fn, const char *data_name, PyObject *const *args, Py_ssize_t nargs,
                   PyObject *kwnames, KeyObject **key, Py_buffer *db, int *padding)
{
    const char *const names[] = {"key", data_name, "padding"};
    PyObject *a[3];
    if (kpy_args(fn, args, nargs, kwnames, names, 3, 2, a) < 0) {
        return -1;
    }
    if (!kpy_is_key(a[0])) {
        PyErr_SetString(PyExc_TypeError,
                        "key must be a kuai.Cipher (a 128-bit-block cipher's key)");
        return -1;
    }
    *key = (KeyObject *)a[0];
    if (kpy_check_block16(*key, "key wrap", 0) < 0) {
        return -1;
    }
    *padding = a[2] != NULL ? PyObject_IsTrue(a[2]) : 0;
    if (*padding < 0) {
        return -1;
    }
    return get_ro(a[1], db, data_name);
}

/* key_wrap(key, key_to_wrap, padding=False) -> bytes: KW, key_to_wrap a
 * multiple of 8 bytes, at least 16, gives len + 8 bytes; KWP, 1 to
 * 2^32 - 1 bytes, gives kuai_kwp_wrapped_len(len). */
PyObject *kpy_key_wrap(PyObject *mod, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    (void)mod;
    KeyObject *k;
    Py_buffer db;
    int padding;
    if (kw_args("key_wrap", "key_to_wrap", args, nargs, kwnames, &k, &db, &padding) < 0) {
        return NULL;
    }
    const size_t len = (size_t)db.len;
    /* The output's size: the library judges the length (a KWP length it
     * cannot wrap gives 0 here and KUAI_ERR_LENGTH there). */
    size_t n = padding ? kuai_kwp_wrapped_len(len) : len + 8;
    if (n > (size_t)PY_SSIZE_T_MAX) {
        PyBuffer_Release(&db);
        return kpy_raise(KUAI_ERR_LENGTH, "key wrap");
    }
    uint8_t *out;
    PyObject *r = new_bytes((Py_ssize_t)n, &out);
    if (r != NULL) {
        int rc;
        KPY_GIL_CALL(db.len, rc,
                     padding ? kuai_kwp_wrap(k->key, db.buf, len, out)
                             : kuai_kw_wrap(k->key, db.buf, len, out));
        if (rc != KUAI_OK) {
            Py_CLEAR(r);
            kpy_raise(rc, "key wrap");
        }
    }
    PyBuffer_Release(&db);
    return r;
}

/* key_unwrap(key, wrapped_key, padding=False) -> bytes: the key, or
 * InvalidUnwrap (a wrong key, a damaged or forged wrapped key, a length
 * no wrap gives). */
PyObject *kpy_key_unwrap(PyObject *mod, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    (void)mod;
    KeyObject *k;
    Py_buffer db;
    int padding;
    if (kw_args("key_unwrap", "wrapped_key", args, nargs, kwnames, &k, &db, &padding) < 0) {
        return NULL;
    }
    const size_t len = (size_t)db.len;
    PyObject *r = NULL;
    if (len < 8) { /* no room to size; the library refuses every length under 16 */
        unwrap_refused(KUAI_ERR_LENGTH);
    } else if (!padding) {
        uint8_t *out;
        if ((r = new_bytes((Py_ssize_t)(len - 8), &out)) != NULL) {
            int rc;
            KPY_GIL_CALL(db.len, rc, kuai_kw_unwrap(k->key, db.buf, len, out));
            if (rc != KUAI_OK) {
                Py_CLEAR(r); /* zeros: the library wiped them */
                unwrap_refused(rc);
            }
        }
    } else {
        /* The key's length is known only once verified: unwrapped into a
         * buffer of len - 8 bytes, copied out, and erased before it is
         * freed. */
        uint8_t *tmp = PyMem_Malloc(len - 8);
        if (tmp == NULL) {
            PyErr_NoMemory();
        } else {
            size_t out_len = 0;
            int rc;
            KPY_GIL_CALL(db.len, rc, kuai_kwp_unwrap(k->key, db.buf, len, tmp, &out_len));
            if (rc != KUAI_OK) {
                unwrap_refused(rc);
            } else {
                r = PyBytes_FromStringAndSize((const char *)tmp, (Py_ssize_t)out_len);
            }
            free_input_copy(tmp, len - 8);
        }
    }
    PyBuffer_Release(&db);
    return r;
}
