# SPDX-License-Identifier: Apache-2.0
"""Column encryption for Apache Spark (PySpark), in the layout of Spark's own
``aes_encrypt``: GCM rows are nonce(12) || ciphertext || tag(16), CBC rows
IV(16) || PKCS#7-padded ciphertext. SM4 and uBlock-128 use the same layout,
so for AES kuai's output decrypts with Spark's ``aes_decrypt`` and the other
way round.

Each Arrow batch Spark hands to Python goes to ONE C call (the packed batch
calls of the extension, GIL released) on the batch's buffers as they are: no
Python object per row. Nonces and IVs: ``os.urandom`` (getrandom(2)), one
call per batch.

    from kuai.spark import encrypt, decrypt, try_decrypt, register

Keys: ``bytes`` (16 bytes; 16/24/32 for AES; 16/32 for uBlock-128), a hex
string, or ``"conf:NAME"``, read from the Spark conf entry
``spark.kuai.key.NAME`` (hex) on the driver. The key is captured in the UDF
(pickled into the task), not put into the plan: ``explain()`` does not show
it. See docs/spark.md."""
from __future__ import annotations

import os
import re
from typing import Any, Dict, List, Optional, Tuple, Union

import numpy as np
import pyarrow as pa

from . import _kuai
from ._names import CIPHERS, cipher_id, shown

__all__ = ["encrypt", "decrypt", "try_decrypt", "register", "encrypt_arrow", "decrypt_arrow",
           "KEY_CONF_PREFIX"]

KEY_CONF_PREFIX = "spark.kuai.key."
_MODES = ("gcm", "cbc")
_GCM_NONCE, _TAG, _IV = 12, 16, 16


# ---------------------------------------------------------------------------
# Keys


def _key_bytes(key: Any, conf: Optional[Dict[str, str]] = None) -> bytes:
    """bytes-like, hex str, or 'conf:NAME' (looked up in conf, or the conf of
    SparkSession.active(): the thread's session, else the default one).
    Error messages never contain the key (given as the key)."""
    if isinstance(key, (bytes, bytearray, memoryview)):
        if _kuai.holds_objects(key):  # a memoryview of objects: their addresses
            raise TypeError("key holds Python objects (buffer format 'O'), not bytes")
        return bytes(key)
    if isinstance(key, str):
        if key.startswith("conf:"):
            name = KEY_CONF_PREFIX + key[5:]
            value = None
            if conf is not None:
                value = conf.get(name)
            else:
                from pyspark.sql import SparkSession

                # This thread's session, else the default one (the builder's):
                # getActiveSession() alone is None in a thread other than the
                # one that made the session (a thread pool running jobs), and
                # the Column was refused there though the session exists.
                try:
                    spark = SparkSession.active()
                except Exception:
                    spark = None
                if spark is None:
                    raise ValueError(f"key {key!r}: no active SparkSession to read {name} from")
                value = spark.conf.get(name, None)
            if value is None:
                where = ("when kuai.spark.register(spark) ran (it reads the entries then: "
                         "run it again after setting one)" if conf is not None else "")
                raise ValueError(f"key {key!r}: Spark conf entry {name} is not set {where}".rstrip())
            return _key_bytes(value.strip())
        try:
            return bytes.fromhex(key)
        except ValueError:
            raise ValueError("a str key must be hex (or 'conf:NAME'); for a key of raw "
                             "bytes pass bytes") from None
    raise TypeError("key must be bytes, a hex str or 'conf:NAME'")


def _check(cipher: str, mode: str, key: bytes) -> Tuple[int, str]:
    m = mode.strip().lower() if isinstance(mode, str) else mode
    if m not in _MODES:
        raise ValueError(f"mode must be 'gcm' or 'cbc' (Spark's aes_encrypt modes), not {shown(mode)}")
    cid = cipher_id(cipher, key)
    _kuai.Key(cid, key)  # checks the key size now, on the driver
    name, _, block = CIPHERS[cid]
    if block != 16:  # said here, not when the query runs on the executors
        raise ValueError(f"kuai.spark: {name} has {block * 8}-bit blocks; GCM and CBC rows "
                         "need a 128-bit-block cipher (sm4, aes, ublock-128)")
    return cid, m


# ---------------------------------------------------------------------------
# Arrow arrays -> one C call


def _parts(arr: pa.Array) -> Tuple[Any, np.ndarray]:
    """(data buffer, offsets) of a binary/string array, as they are in memory."""
    t = arr.type
    if pa.types.is_large_binary(t) or pa.types.is_large_string(t):
        dt = np.int64
    elif pa.types.is_binary(t) or pa.types.is_string(t):
        dt = np.int32
    else:
        raise TypeError(f"kuai.spark: a string or binary column is needed, not {t}")
    bufs = arr.buffers()
    # An empty array may come with an empty offsets buffer (Java's Arrow
    # writes one; valid Arrow): its one offset made here, as for none. It
    # was refused ("offsets: at least one entry needed").
    offsets = np.frombuffer(bufs[1], dtype=dt)[arr.offset:arr.offset + len(arr) + 1] \
        if bufs[1] is not None and len(arr) else np.zeros(len(arr) + 1, dtype=dt)
    data = bufs[2] if bufs[2] is not None else b""
    return data, offsets


def _result(out: bytes, out_offsets: Any, valid: Optional[pa.Array]) -> pa.Array:
    n = len(out_offsets) - 1
    vbuf = None
    if valid is not None:
        vbuf = valid.buffers()[1] if valid.offset == 0 else pa.concat_arrays([valid]).buffers()[1]
    return pa.Array.from_buffers(pa.large_binary(), n,
                                 [vbuf, pa.py_buffer(out_offsets), pa.py_buffer(out)])


def _as_array(arr: Union[pa.Array, pa.ChunkedArray]) -> pa.Array:
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks() if arr.num_chunks != 1 else arr.chunk(0)
    return arr


def encrypt_arrow(arr: Union[pa.Array, pa.ChunkedArray], key: Any, cipher: str = "sm4",
                  mode: str = "gcm", aad: Any = None) -> pa.Array:
    """Encrypt a binary or string Arrow array; NULL rows stay NULL. The
    result is large_binary, each row in Spark's aes_encrypt layout."""
    key = _key_bytes(key)
    cid, m = _check(cipher, mode, key)
    return _encrypt(_as_array(arr), _kuai.Key(cid, key), m, aad)


def _all_null(arr: pa.Array, mode: str, aad: Any) -> Optional[pa.Array]:
    """The checks _encrypt and _decrypt share before any work: aad with CBC
    refused; and a column of Spark's NULL type (F.lit(None), SQL NULL),
    which comes as an Arrow array of type null, gives all NULL, as Spark's
    aes_encrypt/aes_decrypt give, instead of a TypeError for a type that
    holds nothing to encrypt (None for any other column)."""
    if mode != "gcm" and aad is not None:
        raise ValueError("aad is for GCM only (as with Spark's aes_encrypt)")
    return pa.nulls(len(arr), pa.large_binary()) if pa.types.is_null(arr.type) else None


def _encrypt(arr: pa.Array, k: Any, mode: str, aad: Any) -> pa.Array:
    nulls = _all_null(arr, mode, aad)
    if nulls is not None:
        return nulls
    data, offsets = _parts(arr)
    n = len(arr)
    if mode == "gcm":
        out, oo = k.gcm_encrypt_packed(os.urandom(_GCM_NONCE * n), data, offsets, aad,
                                       prefix_nonce=True)
    else:
        out, oo = k.cbc_encrypt_packed(os.urandom(_IV * n), data, offsets)
    return _result(out, oo, arr.is_valid() if arr.null_count else None)


def decrypt_arrow(arr: Union[pa.Array, pa.ChunkedArray], key: Any, cipher: str = "sm4",
                  mode: str = "gcm", aad: Any = None, on_error: str = "raise") -> pa.Array:
    """Decrypt rows made by encrypt_arrow or Spark's aes_encrypt. A row that
    fails (wrong key, damaged, too short) raises ValueError with
    on_error="raise" (Spark's aes_decrypt) or becomes NULL with
    on_error="null" (try_aes_decrypt). NULL stays NULL."""
    key = _key_bytes(key)
    cid, m = _check(cipher, mode, key)
    return _decrypt(_as_array(arr), _kuai.Key(cid, key), m, aad, _on_error(on_error))


def _on_error(on_error: str) -> bool:
    if on_error not in ("raise", "null"):
        raise ValueError("on_error must be 'raise' or 'null'")
    return on_error == "raise"


def _decrypt(arr: pa.Array, k: Any, mode: str, aad: Any, raise_: bool,
             rows: Optional[List[int]] = None) -> pa.Array:
    """rows: where each of arr's rows is in the batch (the SQL functions'
    per-row keys decrypt a subset of it), for the row an error names."""
    nulls = _all_null(arr, mode, aad)
    if nulls is not None:
        return nulls
    data, offsets = _parts(arr)
    if mode == "gcm":
        out, oo, ok = k.gcm_decrypt_packed(None, data, offsets, aad, prefix_nonce=True,
                                           errors="none")
    else:
        out, oo, ok = k.cbc_decrypt_packed(data, offsets)
    okv = np.frombuffer(ok, dtype=np.bool_)
    if arr.null_count:
        valid = arr.is_valid().to_numpy(zero_copy_only=False)
        failed = valid & ~okv
        okv = okv & valid
    else:
        failed = ~okv
    if failed.any():
        if raise_:
            i = int(np.argmax(failed))
            i = i if rows is None else rows[i]
            raise ValueError(f"kuai.spark: decryption of row {i} of the batch failed "
                             f"({mode.upper()}: wrong key, damaged value or not an "
                             "encrypted value); try_decrypt/on_error='null' gives NULL")
    # NULL where the input is NULL or the row failed.
    return _result(out, oo, None if okv.all() else pa.array(okv))


# ---------------------------------------------------------------------------
# Spark Columns


def _arrow_udf(fn, name: str):
    """An Arrow-native UDF (pyspark >= 4.1: pyarrow arrays in and out, no
    pandas), else a pandas UDF converting each batch to Arrow once."""
    from pyspark.sql import functions as F

    def call(*cols):
        return fn(*cols)

    call.__name__ = call.__qualname__ = name  # what plans show
    if hasattr(F, "arrow_udf"):
        udf = F.arrow_udf(call, "binary")
    else:  # pragma: no cover - older pyspark
        import pandas as pd

        def pd_fn(*cols):
            arrs = [pa.array(c, from_pandas=True) for c in cols]
            return pd.Series(fn(*arrs).to_pylist(), dtype=object)

        pd_fn.__name__ = pd_fn.__qualname__ = name
        udf = F.pandas_udf(pd_fn, "binary")
    return udf.asNondeterministic() if name.startswith("kuai_encrypt") else udf


def _col(col: Any):
    from pyspark.sql import functions as F

    return F.col(col) if isinstance(col, str) else col


def _named(udf, name: str):
    try:
        udf.__name__ = name
    except (AttributeError, TypeError):  # pragma: no cover
        pass
    return udf


def _check_aad(mode: str, aad: Any) -> Optional[bytes]:
    """aad is bytes, for GCM: refused for CBC or as anything but a bytes-like
    object when the call is made (for a Column, on the driver), not when the
    rows run; copied then, so that a bytearray changed afterwards does not
    change what the query uses."""
    if aad is None:
        return None
    if mode != "gcm":
        raise ValueError("aad is for GCM only (as with Spark's aes_encrypt)")
    if _kuai.holds_objects(aad):  # bytes() would give the objects' addresses
        raise TypeError("aad holds Python objects (buffer format 'O'), not bytes")
    try:
        return bytes(memoryview(aad))
    except TypeError:
        raise TypeError(f"aad must be bytes (a bytes-like object), not {type(aad).__name__}; "
                        "for text pass its UTF-8 bytes, aad.encode()") from None


def _column_name(fn: str, col: Any, cipher: str, mode: str) -> str:
    """The result column's default name, with the input column's, as Spark
    names aes_encrypt(phone, ...): two columns encrypted in one select had
    the same name (kuai_encrypt(sm4-gcm)), ambiguous there and refused when
    written."""
    what = col if isinstance(col, str) else str(col)
    m = re.fullmatch(r"Column<'(.*)'>", what, re.S)  # str(Column): Column<'expr'>
    return f"{fn}({m.group(1) if m else what}, {cipher}-{mode})"


def encrypt(col: Any, key: Any, cipher: str = "sm4", mode: str = "gcm", aad: Any = None):
    """A Column: col (string or binary) encrypted, as binary. NULL -> NULL."""
    key = _key_bytes(key)
    cid, m = _check(cipher, mode, key)
    aad = _check_aad(m, aad)

    def run(arr):
        return _encrypt(_as_array(arr), _kuai.Key(cid, key), m, aad)

    f = _arrow_udf(run, "kuai_encrypt")
    return f(_col(col)).alias(_column_name("kuai_encrypt", col, cipher, m))


def decrypt(col: Any, key: Any, cipher: str = "sm4", mode: str = "gcm", aad: Any = None,
            on_error: str = "raise"):
    """A Column: col decrypted, as binary (like Spark's aes_decrypt; cast to
    string for text). on_error="raise": a failed row fails the query, as
    aes_decrypt; "null": it becomes NULL, as try_aes_decrypt."""
    key = _key_bytes(key)
    cid, m = _check(cipher, mode, key)
    aad = _check_aad(m, aad)
    raise_ = _on_error(on_error)

    def run(arr):
        return _decrypt(_as_array(arr), _kuai.Key(cid, key), m, aad, raise_)

    name = "kuai_decrypt" if raise_ else "kuai_try_decrypt"
    f = _arrow_udf(run, name)
    return f(_col(col)).alias(_column_name(name, col, cipher, m))


def try_decrypt(col: Any, key: Any, cipher: str = "sm4", mode: str = "gcm", aad: Any = None):
    """decrypt(..., on_error="null"): Spark's try_aes_decrypt semantics."""
    return decrypt(col, key, cipher, mode, aad, on_error="null")


# ---------------------------------------------------------------------------
# SQL


def _values(arr: Any) -> List[Any]:
    """The distinct values of a per-row argument (SQL passes literals as
    columns: one value); NULL among them as None."""
    return _as_array(arr).unique().to_pylist()


# Key schedules a SQL function keeps between batches (per-row keys: the
# most recent ones).
_SQL_CACHE = 64


def _sql(conf_keys: Dict[str, str], op: str, raise_: bool):
    cache: Dict[Tuple[Any, str, str], Tuple[Any, str]] = {}

    def key_of(key: Any, cipher: str, mode: str):
        kk = (key, cipher, mode)
        if kk not in cache:
            kb = _key_bytes(key, conf_keys)
            cid, m = _check(cipher, mode, kb)
            if len(cache) >= _SQL_CACHE:
                cache.clear()
            cache[kk] = (_kuai.Key(cid, kb), m)
        return cache[kk]

    def one(col: pa.Array, key: Any, cipher: str, mode: str,
            rows: Optional[List[int]] = None) -> pa.Array:
        if key is None or cipher is None or mode is None:
            # A NULL key, cipher or mode gives NULL rows, in all three
            # functions, as Spark's aes_encrypt and aes_decrypt give NULL
            # when any argument is NULL; kuai_encrypt and kuai_decrypt
            # failed the query.
            return pa.nulls(len(col), pa.large_binary())
        try:
            k, m = key_of(key, cipher, mode)
        except (TypeError, ValueError):
            if raise_ and col.null_count < len(col):
                raise
            # A NULL value gives NULL whatever the key is, as Spark's
            # aes_encrypt(NULL, X'') does; only a value to encrypt or
            # decrypt fails on a refused key (a NULL row with a refused
            # key failed the query).
            # kuai_try_decrypt: a key, cipher or mode that is refused (wrong
            # key size, not hex, unknown conf entry or cipher) is a failed
            # row, NULL, as try_aes_decrypt gives; it failed the query.
            return pa.nulls(len(col), pa.large_binary())
        if op == "enc":
            return _encrypt(col, k, m, None)
        return _decrypt(col, k, m, None, raise_, rows)

    def run(col, key, cipher=None, mode=None):
        col = _as_array(col)
        args = [(key, None), (cipher, "sm4"), (mode, "gcm")]
        distinct = [[d] if a is None else _values(a) for a, d in args]
        if all(len(v) == 1 for v in distinct):  # literals, 'conf:NAME': one call
            return one(col, *(v[0] for v in distinct))
        # Values that change from row to row (a key column, as Spark's
        # aes_encrypt takes): the rows of each (key, cipher, mode) in one
        # call, put back in order. Before, such a batch was refused, and the
        # same query passed or failed with how Spark cut the rows into batches.
        n = len(col)
        if n == 0:
            return pa.array([], pa.large_binary())
        per_row = [[d] * n if a is None else _as_array(a).to_pylist() for a, d in args]
        groups: Dict[Tuple[Any, Any, Any], List[int]] = {}
        for i, t in enumerate(zip(*per_row)):
            groups.setdefault(t, []).append(i)
        parts, order = [], []
        for t, rows in groups.items():
            # rows: the error of a failed row names its row in the batch, not
            # in this subset (it named row 1 for the batch's row 3).
            parts.append(one(col.take(pa.array(rows, pa.int64())), *t, rows=rows))
            order.extend(rows)
        back = np.empty(n, dtype=np.int64)
        back[np.asarray(order, dtype=np.int64)] = np.arange(n, dtype=np.int64)
        return pa.concat_arrays(parts).take(pa.array(back))

    return run


def register(spark: Any) -> None:
    """Make kuai_encrypt(col, key, cipher, mode), kuai_decrypt(...) and
    kuai_try_decrypt(...) usable in spark.sql(). key: BINARY (X'..',
    unhex('..')), a hex string, or 'conf:NAME' for spark.kuai.key.NAME —
    those entries are read now, on the driver, and go to the executors inside
    the function, not in the query text or plan. cipher and mode are
    usually literals ('sm4', 'gcm'). A NULL key, cipher or mode gives a
    NULL row, as Spark's aes_encrypt/aes_decrypt do for a NULL argument; a
    refused one (a wrong key size, not hex, an unset conf:NAME, an unknown
    cipher) fails the query, except in kuai_try_decrypt, where the row is
    NULL."""
    conf_keys = _conf_keys(spark)
    from pyspark.sql import functions as F

    for name, op, raise_ in (("kuai_encrypt", "enc", True), ("kuai_decrypt", "dec", True),
                             ("kuai_try_decrypt", "dec", False)):
        fn = _sql(conf_keys, op, raise_)
        if hasattr(F, "arrow_udf"):
            call = _sql_call(fn, name)

            call.__name__ = call.__qualname__ = name
            u = F.arrow_udf(call, "binary")
            if op == "enc":
                u = u.asNondeterministic()
        else:  # pragma: no cover
            u = _arrow_udf(fn, name)
        spark.udf.register(name, u)


def _sql_call(fn, name: str):
    """The SQL function of fn, taking exactly (col, key, cipher, mode). Spark
    does not check a Python function's argument count when it analyses the
    query: with three arguments the worker failed with "missing 2 required
    positional arguments: 'ci' and 'mo'", and a fifth one replaced the
    wrapper's own default (" 'StringArray' object is not callable")."""

    def call(*cols):
        if len(cols) != 4:
            raise TypeError(f"{name}() takes 4 arguments (col, key, cipher, mode), "
                            f"{len(cols)} given")
        return fn(*cols)

    return call


def _conf_keys(spark: Any) -> Dict[str, str]:
    out: Dict[str, str] = {}
    try:
        for k, v in spark.sparkContext.getConf().getAll():
            if k.startswith(KEY_CONF_PREFIX):
                out[k] = v
    except Exception:  # Spark Connect has no SparkContext
        pass
    try:
        all_ = spark.conf.getAll
        for k, v in (all_() if callable(all_) else all_).items():
            if k.startswith(KEY_CONF_PREFIX):
                out[k] = v
    except Exception:
        pass
    return out
