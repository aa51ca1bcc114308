/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Arrow-packed rows: n messages in one data buffer, row i being
 * data[offsets[i]:offsets[i+1]], encrypted or decrypted in one C call with
 * the GIL released (Key.gcm_*_packed, Key.cbc_*_packed; what kuai.spark
 * hands over from an Arrow batch). The output comes back packed the same
 * way: (out, out_offsets[, ok]).
 */
#include "kuai_py.h"

/* Arrow-style offsets: n + 1 non-decreasing int32 or int64 values, copied
 * out of the caller's buffer (as int64) before they are checked. The rows
 * are cut with the GIL released, and a buffer that is writable (a numpy
 * array, array('q')) may be changed by another thread meanwhile: read
 * again there, an offset checked before could then lie past the data and
 * the output sized from it (a crash, found by a thread flipping one
 * offset during gcm_encrypt_packed). The copy is what was checked. */
typedef struct {
    int64_t *vals; /* n + 1 values, PyMem_Malloc'd */
    Py_ssize_t n;
} Offsets;

static void offsets_free(Offsets *off)
{
    PyMem_Free(off->vals);
    off->vals = NULL;
}

static int offsets_get(PyObject *o, Offsets *off)
{
    memset(off, 0, sizeof *off);
    Py_buffer v;
    if (PyObject_GetBuffer(o, &v, PyBUF_FORMAT | PyBUF_STRIDES) < 0 ||
        kpy_contiguous(&v, "offsets") < 0) {
        return -1;
    }
    const char *f = v.format ? v.format : "B";
    if (*f == '<' || *f == '=' || *f == '@') {
        f++;
    }
    /* Exactly one type character after the byte-order prefix. Checked
     * before strchr (which finds the terminator too) and before f[1] is
     * read: a format of "" or a bare "<" from an exporter was taken as
     * int64, f[1] then being the byte past the format's terminator. */
    int one = *f != 0 && f[1] == 0;
    int wide;
    if (one && v.itemsize == 8 && strchr("qlQL", *f)) {
        wide = 1;
    } else if (one && v.itemsize == 4 && strchr("iIlL", *f)) {
        wide = 0;
    } else {
        PyErr_SetString(PyExc_TypeError, "offsets must be an array of int32 or int64 "
                                         "(e.g. array('q'), numpy int64, Arrow's offsets)");
        PyBuffer_Release(&v);
        return -1;
    }
    /* Unsigned items are read as such: a uint32 offset of 2^31 or more was
     * sign-extended (refused as a negative offset, -1294967296 for
     * 3000000000, where data of over 2 GiB holds it); a uint64 one of 2^63
     * or more, which no int64 holds, is refused here by its value. */
    const int is_unsigned = strchr("QLI", *f) != NULL;
    off->n = v.len / v.itemsize - 1;
    if (off->n < 0) {
        PyErr_SetString(PyExc_ValueError, "offsets: at least one entry needed");
        PyBuffer_Release(&v);
        return -1;
    }
    off->vals = PyMem_Malloc(((size_t)off->n + 1) * sizeof(int64_t));
    if (off->vals == NULL) {
        PyErr_NoMemory();
        PyBuffer_Release(&v);
        return -1;
    }
    for (Py_ssize_t i = 0; i <= off->n; i++) {
        if (wide && is_unsigned) {
            uint64_t u;
            memcpy(&u, (const char *)v.buf + 8 * i, 8);
            if (u > (uint64_t)INT64_MAX) {
                PyErr_Format(PyExc_ValueError, "offsets[%zd] = %llu past the data", i,
                             (unsigned long long)u);
                offsets_free(off);
                PyBuffer_Release(&v);
                return -1;
            }
            off->vals[i] = (int64_t)u;
        } else if (wide) {
            memcpy(&off->vals[i], (const char *)v.buf + 8 * i, 8);
        } else if (is_unsigned) {
            uint32_t u;
            memcpy(&u, (const char *)v.buf + 4 * i, 4);
            off->vals[i] = u;
        } else {
            int32_t x;
            memcpy(&x, (const char *)v.buf + 4 * i, 4);
            off->vals[i] = x;
        }
    }
    PyBuffer_Release(&v);
    return 0;
}

static int64_t offsets_at(const Offsets *off, Py_ssize_t i)
{
    return off->vals[i];
}

/* offsets[0] within the data (len bytes); -1 (raised) if not. */
static int offsets_first_ok(const Offsets *off, Py_ssize_t len)
{
    int64_t first = offsets_at(off, 0);
    if (first < 0 || first > len) {
        PyErr_SetString(PyExc_ValueError, "offsets[0] out of range");
        return -1;
    }
    return 0;
}

/* Every offset within the data (len bytes) and none before the one before
 * it; -1 (raised) if not. offsets[0] is checked last: a list bad in two
 * places names the later offset (offsets_first_ok first names offsets[0]). */
static int offsets_check(const Offsets *off, Py_ssize_t len)
{
    int64_t prev = offsets_at(off, 0);
    for (Py_ssize_t i = 1; i <= off->n; i++) {
        int64_t x = offsets_at(off, i);
        if (x < prev || x > len) {
            PyErr_Format(PyExc_ValueError,
                         "offsets[%zd] = %lld out of order or past the data (%zd bytes)", i,
                         (long long)x, len);
            return -1;
        }
        prev = x;
    }
    return offsets_first_ok(off, len);
}

static int64_t row_len(const Offsets *off, Py_ssize_t i)
{
    return offsets_at(off, i + 1) - offsets_at(off, i);
}

/* One packed call: its input (offsets, data) and its output (out, the
 * int64 offsets into it, one ok byte a row), sized before anything is
 * written. */
typedef struct {
    Offsets off;
    Py_buffer data;
    PyObject *out, *outoff, *ok;
    uint8_t *o8, *oo8, *ok8;
} Packed;

/* -1 (raised) with nothing held. */
static int packed_open(Packed *p, PyObject *offobj, PyObject *dataobj)
{
    memset(p, 0, sizeof *p);
    if (offsets_get(offobj, &p->off) < 0) {
        return -1;
    }
    if (get_ro(dataobj, &p->data, "data") < 0) {
        offsets_free(&p->off);
        return -1;
    }
    return 0;
}

static int packed_alloc(Packed *p, int64_t total)
{
    p->out = new_bytes((Py_ssize_t)total, &p->o8);
    p->outoff = p->out ? new_bytes((p->off.n + 1) * 8, &p->oo8) : NULL;
    p->ok = p->outoff ? new_bytes(p->off.n, &p->ok8) : NULL;
    return p->ok == NULL ? -1 : 0;
}

/* Row i's input, *len bytes; its output starts at pos (recorded as its
 * out_offset). Runs with the GIL released. */
static const uint8_t *packed_row(const Packed *p, Py_ssize_t i, int64_t pos, size_t *len)
{
    memcpy(p->oo8 + 8 * i, &pos, 8);
    *len = (size_t)row_len(&p->off, i);
    return (const uint8_t *)p->data.buf + offsets_at(&p->off, i);
}

/* (out, out_offsets) for encryption, (out, out_offsets, ok) for decryption;
 * the offsets as int64 items (format "q"), so that they index, go to
 * numpy/Arrow and come back to *_decrypt_packed as they are. */
static PyObject *packed_result(const Packed *p, int enc)
{
    PyObject *mv = PyMemoryView_FromObject(p->outoff);
    PyObject *q = mv ? PyObject_CallMethod(mv, "cast", "s", "q") : NULL;
    Py_XDECREF(mv);
    if (q == NULL) {
        return NULL;
    }
    PyObject *result = enc ? PyTuple_Pack(2, p->out, q) : PyTuple_Pack(3, p->out, q, p->ok);
    Py_DECREF(q);
    return result;
}

/* failed: the call raises, and out, which only p holds then, is wiped
 * before it is freed: a decryption that raises InvalidTag for one row has
 * written the other rows' plaintext there. */
static void packed_close(Packed *p, int failed)
{
    if (failed && p->out != NULL) {
        kpy_wipe(p->o8, (size_t)PyBytes_Size(p->out));
    }
    Py_XDECREF(p->out);
    Py_XDECREF(p->outoff);
    Py_XDECREF(p->ok);
    offsets_free(&p->off);
    PyBuffer_Release(&p->data);
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
    /* errors= for decryption only, as in gcm_batch (batch.c). */
    static char *dec_kw[] = {"nonces",       "data",      "offsets", "aad",
                             "prefix_nonce", "nonce_len", "errors",  NULL};
    static char *enc_kw[] = {"nonces", "data", "offsets", "aad", "prefix_nonce", "nonce_len", NULL};
    KeyObject *k = (KeyObject *)o;
    PyObject *nonces, *dataobj, *offobj, *aadobj = Py_None;
    int prefix = 0, raise = 1;
    Py_ssize_t nonce_len = 12;
    const char *errors = "raise";
    if (!(enc ? PyArg_ParseTupleAndKeywords(args, kwds, "OOO|Opn:gcm_encrypt_packed", enc_kw,
                                            &nonces, &dataobj, &offobj, &aadobj, &prefix,
                                            &nonce_len)
              : PyArg_ParseTupleAndKeywords(args, kwds, "OOO|Opns:gcm_decrypt_packed", dec_kw,
                                            &nonces, &dataobj, &offobj, &aadobj, &prefix,
                                            &nonce_len, &errors)) ||
        kpy_parse_errors(errors, &raise) < 0 || kpy_check_gcm_key(k) < 0 ||
        kpy_check_nonce(nonce_len) < 0) {
        return NULL;
    }
    Packed pk;
    Py_buffer nb, ab;
    memset(&nb, 0, sizeof nb);
    memset(&ab, 0, sizeof ab);
    if (packed_open(&pk, offobj, dataobj) < 0) {
        return NULL;
    }
    PyObject *result = NULL;
    Py_ssize_t n = pk.off.n;
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
    if (offsets_check(&pk.off, pk.data.len) < 0) {
        goto done;
    }
    int64_t total = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        int64_t len = row_len(&pk.off, i);
        total += enc ? len + extra : (len >= extra ? len - extra : 0);
    }
    if (packed_alloc(&pk, total) < 0) {
        goto done;
    }
    {
        const uint8_t *nbuf = nb.buf;
        const uint8_t *aad = ab.buf;
        size_t alen = (size_t)ab.len;
        int bad = 0;
        Py_BEGIN_ALLOW_THREADS int64_t pos = 0;
        KpyGcmMany many = {.ready = 0};
        KpyGcmMany *m = n > 1 ? &many : NULL;
        for (Py_ssize_t i = 0; i < n; i++) {
            size_t len;
            const uint8_t *in = packed_row(&pk, i, pos, &len);
            uint8_t *dst = pk.o8 + pos;
            int rc;
            if (enc) {
                const uint8_t *nonce = nbuf + i * nonce_len;
                if (prefix) {
                    memcpy(dst, nonce, (size_t)nonce_len);
                    dst += nonce_len;
                }
                rc = kpy_gcm_one(m, k->key, nonce, (size_t)nonce_len, aad, alen, in, dst, len,
                                 dst + len, NULL);
                pos += (int64_t)len + extra;
            } else if ((int64_t)len < extra) {
                rc = KUAI_ERR_AUTH;
            } else {
                const uint8_t *nonce = prefix ? in : nbuf + i * nonce_len;
                const uint8_t *ct = prefix ? in + nonce_len : in;
                size_t ctlen = len - (size_t)extra;
                rc = kpy_gcm_one(m, k->key, nonce, (size_t)nonce_len, aad, alen, ct, dst, ctlen,
                                 NULL, ct + ctlen);
                if (rc == KUAI_ERR_LENGTH) {
                    /* longer than GCM allows: no encryption made it, a
                     * forgery like any other (InvalidTag, the row zeros) */
                    memset(dst, 0, ctlen);
                    rc = KUAI_ERR_AUTH;
                }
                /* A failed row stays in the output as zeros (what the
                 * library leaves); its ok byte says to drop it. */
                pos += (int64_t)ctlen;
            }
            pk.ok8[i] = rc == KUAI_OK;
            bad |= rc != KUAI_OK;
            if (rc != KUAI_OK && rc != KUAI_ERR_AUTH) {
                bad = 2;
            }
        }
        kpy_gcm_many_wipe(&many);
        memcpy(pk.oo8 + 8 * n, &pos, 8);
        Py_END_ALLOW_THREADS if (bad == 2)
        {
            PyErr_SetString(PyExc_ValueError, "GCM: a message is longer than GCM allows");
            goto done;
        }
        if (bad && raise) {
            Py_ssize_t i = 0;
            while (pk.ok8[i]) {
                i++;
            }
            PyErr_Format(kpy_InvalidTag, "message %zd of %zd failed authentication", i, n);
            goto done;
        }
    }
    result = packed_result(&pk, enc);
done:
    packed_close(&pk, result == NULL);
    release(&nb);
    release(&ab);
    return result;
}

PyObject *kpy_gcm_encrypt_packed(PyObject *o, PyObject *args, PyObject *kwds)
{
    return gcm_packed(o, args, kwds, 1);
}

PyObject *kpy_gcm_decrypt_packed(PyObject *o, PyObject *args, PyObject *kwds)
{
    return gcm_packed(o, args, kwds, 0);
}

/* cbc_encrypt_packed(ivs, data, offsets) -> (out, out_offsets)
 * cbc_decrypt_packed(data, offsets) -> (out, out_offsets, ok)
 * Row i is written as IV_i || CBC(PKCS#7(data_i)) (the layout of Spark's
 * aes_encrypt in CBC mode) and read back from that form; ivs is n blocks in
 * one buffer. A row that is not IV + whole blocks, or whose padding is not
 * PKCS#7, gets ok[i] = 0 and no bytes (its decrypted bytes are erased);
 * out may be longer than out_offsets[n], by zero bytes.
 * One C call for all rows, the GIL released (kuai.spark). */
static PyObject *cbc_packed(PyObject *o, PyObject *args, int enc)
{
    KeyObject *k = (KeyObject *)o;
    PyObject *ivobj = NULL, *dataobj, *offobj;
    if (enc ? !PyArg_ParseTuple(args, "OOO", &ivobj, &dataobj, &offobj)
            : !PyArg_ParseTuple(args, "OO", &dataobj, &offobj)) {
        return NULL;
    }
    if (kpy_check_single(k, 0) < 0) {
        return NULL;
    }
    if (k->block != 16) {
        PyErr_Format(PyExc_ValueError, "packed CBC needs a 128-bit-block cipher, not %s",
                     kuai_cipher_name((kuai_cipher)k->cipher));
        return NULL;
    }
    const int64_t bs = 16;
    Packed pk;
    Py_buffer ib;
    memset(&ib, 0, sizeof ib);
    if (packed_open(&pk, offobj, dataobj) < 0) {
        return NULL;
    }
    PyObject *result = NULL;
    Py_ssize_t n = pk.off.n;
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
    if (offsets_first_ok(&pk.off, pk.data.len) < 0 || offsets_check(&pk.off, pk.data.len) < 0) {
        goto done;
    }
    int64_t total = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        int64_t len = row_len(&pk.off, i);
        total += enc ? bs + (len / bs + 1) * bs : (len > bs ? len - bs : 0);
    }
    if (packed_alloc(&pk, total) < 0) {
        goto done;
    }
    {
        const uint8_t *ivs = ib.buf;
        int bad = 0;
        Py_BEGIN_ALLOW_THREADS int64_t pos = 0;
        for (Py_ssize_t i = 0; i < n; i++) {
            size_t len;
            const uint8_t *in = packed_row(&pk, i, pos, &len);
            uint8_t *dst = pk.o8 + pos;
            uint8_t iv[16];
            int rc = KUAI_OK;
            if (enc) {
                size_t padded = (len / 16 + 1) * 16;
                uint8_t pad = (uint8_t)(padded - len);
                memcpy(iv, ivs + 16 * i, 16);
                memcpy(dst, iv, 16);
                memcpy(dst + 16, in, len);
                memset(dst + 16 + len, pad, pad);
                rc = kuai_cbc_encrypt(k->key, iv, dst + 16, dst + 16, padded);
                pos += 16 + (int64_t)padded;
                pk.ok8[i] = rc == KUAI_OK;
            } else if (len < 32 || len % 16 != 0) {
                pk.ok8[i] = 0;
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
                pk.ok8[i] = (uint8_t)good;
                if (good) {
                    pos += (int64_t)(ctlen - p);
                } else {
                    memset(dst, 0, ctlen);
                }
            }
            bad |= rc != KUAI_OK;
        }
        /* The output was sized before the padding was known: what lies
         * past the last row (the room of rows that failed or were not IV +
         * whole blocks, never written; the last row's padding) is zeroed,
         * so that no uninitialised memory reaches the caller. */
        memset(pk.o8 + pos, 0, (size_t)(total - pos));
        memcpy(pk.oo8 + 8 * n, &pos, 8);
        Py_END_ALLOW_THREADS if (bad)
        {
            PyErr_SetString(PyExc_ValueError, "CBC: the cipher call failed");
            goto done;
        }
    }
    result = packed_result(&pk, enc);
done:
    packed_close(&pk, result == NULL);
    release(&ib);
    return result;
}

PyObject *kpy_cbc_encrypt_packed(PyObject *o, PyObject *args)
{
    return cbc_packed(o, args, 1);
}

PyObject *kpy_cbc_decrypt_packed(PyObject *o, PyObject *args)
{
    return cbc_packed(o, args, 0);
}
