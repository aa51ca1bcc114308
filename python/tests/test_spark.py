# SPDX-License-Identifier: Apache-2.0
"""kuai.spark on a local[2] SparkSession (make test-spark): round trips,
interop both ways with Spark's own aes_encrypt/aes_decrypt (GCM and CBC),
SM4 and uBlock-128, wrong keys and damaged values (aes_decrypt and
try_aes_decrypt semantics), the SQL functions, and what explain() shows.

Run by `make test-spark` (KUAI_SPARK_TESTS=1); skipped in `make test-python`,
which shares the venv, so that the suite does not run twice."""
import os
import sys

import pytest

if os.environ.get("KUAI_SPARK_TESTS") != "1":
    pytest.skip("Spark tests run in `make test-spark` (KUAI_SPARK_TESTS=1)",
                allow_module_level=True)

import pyarrow as pa  # noqa: E402
from pyspark.sql import SparkSession  # noqa: E402
from pyspark.sql import functions as F  # noqa: E402

import kuai  # noqa: E402
from kuai import modes, padding  # noqa: E402
from kuai.aead import SM4GCM, AESGCM, UBlockGCM  # noqa: E402
from kuai import spark as ks  # noqa: E402

KEY16 = bytes(range(16))
KEY32 = bytes(range(100, 132))
ROWS = 100_000


@pytest.fixture(scope="session")
def spark():
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    s = (SparkSession.builder.master("local[2]").appName("kuai-test")
         .config("spark.ui.enabled", "false")
         .config("spark.sql.shuffle.partitions", "2")
         .config("spark.driver.memory", "1g")
         .config("spark.kuai.key.conftest", KEY16.hex())
         .getOrCreate())
    s.sparkContext.setLogLevel("ERROR")
    yield s
    s.stop()


def hexlit(k):
    return f"X'{k.hex()}'"


@pytest.fixture(scope="session")
def data(spark):
    """100,000 rows: NULLs, empty values, 1..300-byte values, and a few big
    ones (up to 1 MiB), as string v and binary b (= v's UTF-8 bytes)."""
    df = spark.range(ROWS).selectExpr(
        "id",
        "CASE WHEN id % 10 = 0 THEN NULL WHEN id % 10 = 1 THEN '' "
        "ELSE substring(repeat(sha2(cast(id AS string), 256), 10), 1, cast(id % 300 AS int)) END AS v")
    big = spark.createDataFrame(
        [(ROWS + 0, "x" * (1 << 20)), (ROWS + 1, "é" * ((1 << 19) - 1)), (ROWS + 2, "y" * 65539)],
        "id long, v string")
    return df.unionByName(big).withColumn("b", F.col("v").cast("binary")).cache()


def mismatches(df, *pairs):
    """For each (a, b): the rows where a and b differ (NULL-safe). One pass."""
    row = df.agg(*[F.count_if(~F.col(a).eqNullSafe(F.col(b))).alias(f"m{i}")
                   for i, (a, b) in enumerate(pairs)]).collect()[0]
    return list(row)


def subset(data):
    """20,000 of the rows (NULLs and empty values among them) + the big ones."""
    return data.limit(20_000).union(data.filter(f"id >= {ROWS}"))


# ---------------------------------------------------------------------------
# Without Spark: the Arrow layer


@pytest.mark.parametrize("mode", ["gcm", "cbc"])
def test_arrow_layer(mode):
    arr = pa.array([b"", None, b"a", b"0123456789abcdef" * 3, None, bytes(1000)], pa.binary())
    for a in (arr, arr.slice(1), arr.slice(2, 3), pa.array([None, "héllo", ""], pa.string()),
              pa.array([b"x", None], pa.large_binary())):
        ct = ks.encrypt_arrow(a, KEY16, "sm4", mode)
        assert ct.is_null().to_pylist() == a.is_null().to_pylist()
        pt = ks.decrypt_arrow(ct, KEY16, "sm4", mode)
        want = [None if x is None else (x.encode() if isinstance(x, str) else x)
                for x in a.to_pylist()]
        assert pt.to_pylist() == want


def test_arrow_layer_empty_offsets_buffer():
    """An empty array whose offsets buffer is empty (what Java's Arrow
    writes for an empty vector, valid Arrow): empty out. It was refused with
    ValueError "offsets: at least one entry needed"."""
    for t in (pa.binary(), pa.string(), pa.large_binary()):
        e = pa.Array.from_buffers(t, 0, [None, pa.py_buffer(b""), pa.py_buffer(b"")])
        e.validate(full=True)
        for mode in ("gcm", "cbc"):
            assert ks.encrypt_arrow(e, KEY16, "sm4", mode).to_pylist() == []
            assert ks.decrypt_arrow(e, KEY16, "sm4", mode).to_pylist() == []


def test_arrow_layer_matches_single_calls():
    """The rows are the layout of Spark's aes_encrypt, checked against
    kuai's one-message calls (not against the packed code itself)."""
    msgs = [b"", b"abc", os.urandom(100)]
    for cls, key, name in ((SM4GCM, KEY16, "sm4"), (AESGCM, KEY32, "aes"),
                           (UBlockGCM, KEY16, "ublock-128")):
        rows = ks.encrypt_arrow(pa.array(msgs), key, name, "gcm").to_pylist()
        for m, r in zip(msgs, rows):
            assert len(r) == 12 + len(m) + 16
            assert cls(key).decrypt(r[:12], r[12:], None) == m
        rows = ks.encrypt_arrow(pa.array(msgs), key, name, "cbc").to_pylist()
        for m, r in zip(msgs, rows):
            assert len(r) == 16 + (len(m) // 16 + 1) * 16
            d = kuai.Cipher(name, key).decryptor(modes.CBC(r[:16]))
            u = padding.PKCS7(128).unpadder()
            assert u.update(d.update(r[16:]) + d.finalize()) + u.finalize() == m


def test_fresh_nonces():
    """Every row its own random nonce / IV: 10,000 empty values, 10,000
    different ciphertexts."""
    for mode in ("gcm", "cbc"):
        rows = ks.encrypt_arrow(pa.array([b""] * 10_000), KEY16, "sm4", mode).to_pylist()
        assert len(set(rows)) == 10_000


def test_arrow_layer_errors():
    ct = ks.encrypt_arrow(pa.array([b"abc", b"def"]), KEY16, "sm4", "gcm")
    with pytest.raises(ValueError, match="row 0"):
        ks.decrypt_arrow(ct, bytes(16), "sm4", "gcm")
    assert ks.decrypt_arrow(ct, bytes(16), "sm4", "gcm", on_error="null").to_pylist() == [None, None]
    with pytest.raises(ValueError, match="mode"):
        ks.encrypt_arrow(ct, KEY16, "sm4", "ecb")
    with pytest.raises(ValueError, match="key size"):
        ks.encrypt_arrow(ct, bytes(15), "sm4", "gcm")
    # a 256-bit-block cipher is refused when the call is made (for a Column,
    # on the driver), not when the rows run
    for m in ("gcm", "cbc"):
        with pytest.raises(ValueError, match="128-bit-block"):
            ks.encrypt_arrow(ct, bytes(32), "ublock-256-256", m)
        with pytest.raises(ValueError, match="128-bit-block"):
            ks.encrypt("c", bytes(32), cipher="ublock-256-256", mode=m)
    # aad with CBC: refused when the Column is made, not when the query runs
    for fn in (ks.encrypt, ks.decrypt, ks.try_decrypt):
        with pytest.raises(ValueError, match="GCM only"):
            fn("c", KEY16, cipher="sm4", mode="cbc", aad=b"x")
        # and aad that is not bytes (a str: Spark's aes_encrypt takes its
        # UTF-8 bytes) likewise: it failed in the Python worker as the query ran
        with pytest.raises(TypeError, match="aad must be bytes"):
            fn("c", KEY16, cipher="sm4", mode="gcm", aad="header")
    with pytest.raises(ValueError, match="hex") as e:
        ks.encrypt_arrow(ct, "0123456789abcdeg", "sm4")
    assert "0123456789abcdeg" not in str(e.value)  # a key never goes into a message


def test_cbc_padding_checked():
    rows = ks.encrypt_arrow(pa.array([b"0123456789abcdef", b"abc"]), KEY16, "sm4", "cbc").to_pylist()
    # Re-encrypt a last block with a bad pad byte (0, 17, and a mismatch).
    c = kuai.Cipher("sm4", KEY16)
    for last in (bytes(16), b"A" * 15 + b"\x11", b"A" * 13 + b"\x01\x02\x03"):
        iv = os.urandom(16)
        row = iv + c.encryptor(modes.CBC(iv)).update(last)
        out = ks.decrypt_arrow(pa.array(rows + [row]), KEY16, "sm4", "cbc", on_error="null")
        assert out.to_pylist() == [b"0123456789abcdef", b"abc", None]
    good = iv + c.encryptor(modes.CBC(iv)).update(b"A" * 13 + b"\x03\x03\x03")
    assert ks.decrypt_arrow(pa.array([good]), KEY16, "sm4", "cbc").to_pylist() == [b"A" * 13]


def test_cbc_damage_outside_padding_passes():
    """What docs/spark.md says CBC gives for a damaged row (it said a
    damaged row usually fails its padding check and may give garbage): a
    changed IV byte changes the same plaintext byte and decrypts without an
    error; the row without its first 16 bytes gives the plaintext's end; a change
    to any of the first 37 bytes of a 37-byte value's 64-byte row decrypts
    (only the padding is checked; a change to bytes 37..47 changes a padding
    byte and fails; the last block's, random, are not checked here). GCM
    refuses every one-byte change."""
    msg = b"pay 100 to alice; memo: hello world!!"
    ct = ks.encrypt_arrow(pa.array([msg]), KEY16, "aes", "cbc").to_pylist()[0]
    assert len(ct) == 64
    iv_flip = bytes([ct[0] ^ 1]) + ct[1:]
    got = ks.decrypt_arrow(pa.array([iv_flip, ct[16:]]), KEY16, "aes", "cbc").to_pylist()
    assert got == [b"qay 100 to alice; memo: hello world!!", msg[16:]]
    flips = [ct[:i] + bytes([ct[i] ^ 1]) + ct[i + 1:] for i in range(64)]
    out = ks.decrypt_arrow(pa.array(flips), KEY16, "aes", "cbc", on_error="null").to_pylist()
    assert all(x is not None for x in out[:37]) and all(x is None for x in out[37:48])
    g = ks.encrypt_arrow(pa.array([msg]), KEY16, "aes", "gcm").to_pylist()[0]
    flips = [g[:i] + bytes([g[i] ^ 1]) + g[i + 1:] for i in range(len(g))]
    assert ks.decrypt_arrow(pa.array(flips), KEY16, "aes", "gcm", on_error="null").null_count == len(g)


# ---------------------------------------------------------------------------
# Spark


def test_round_trip_100k_sm4_gcm(spark, data):
    out = data.select("b", ks.encrypt("v", KEY16, "sm4", "gcm").alias("cv"),
                      ks.encrypt("b", KEY16, "sm4", "gcm").alias("cb"))
    out = out.select("b", "cv", "cb", ks.decrypt("cv", KEY16, "sm4", "gcm").alias("pv"),
                     ks.decrypt("cb", KEY16, "sm4", "gcm").alias("pb"))
    r = out.agg(F.count("*").alias("n"),
                F.count_if(~F.col("b").eqNullSafe(F.col("pv"))).alias("bad_v"),
                F.count_if(~F.col("b").eqNullSafe(F.col("pb"))).alias("bad_b"),
                F.count_if(F.col("cv").isNull()).alias("nulls"),
                F.count_if(F.expr("length(cv) != length(b) + 28 OR length(cb) != length(b) + 28"))
                .alias("bad_len"),
                F.count_if(F.expr("length(b) = 0")).alias("empty"),
                F.max(F.length("pv")).alias("biggest")).collect()[0]
    assert (r.n, r.bad_v, r.bad_b, r.nulls, r.bad_len) == (ROWS + 3, 0, 0, ROWS // 10, 0)
    assert r.empty == ROWS // 10 and r.biggest == 1 << 20


CIPHERS = [("sm4", KEY16, "cbc"), ("ublock-128", KEY16, "gcm"), ("ublock-128", KEY16, "cbc"),
           ("ublock-128", KEY32, "gcm"), ("aes", KEY16, "gcm"), ("aes", KEY32, "cbc")]


def test_round_trip_ciphers(spark, data):
    """SM4-CBC, uBlock-128/128 and 128/256, AES: one query, one column each."""
    out = subset(data).select("b", *[
        ks.decrypt(ks.encrypt("b", key, cipher, mode), key, cipher, mode).alias(f"p{i}")
        for i, (cipher, key, mode) in enumerate(CIPHERS)])
    assert mismatches(out, *[("b", f"p{i}") for i in range(len(CIPHERS))]) == [0] * len(CIPHERS)


def test_aes_gcm_interop(spark, data):
    cols, pairs = [], []
    for i, key in enumerate((KEY16, KEY32)):
        k = hexlit(key)
        # kuai -> Spark's aes_decrypt (its defaults: GCM, DEFAULT; and explicit)
        c = ks.encrypt("v", key, "aes", "gcm")
        cols += [F.expr(f"aes_decrypt(c{i}, {k})").alias(f"a{i}"),
                 F.expr(f"aes_decrypt(c{i}, {k}, 'GCM', 'DEFAULT')").alias(f"b{i}")]
        # Spark's aes_encrypt (defaults, and explicit GCM) -> kuai
        cols += [ks.decrypt(F.expr(f"aes_encrypt(v, {k})"), key, "aes").alias(f"d{i}"),
                 ks.decrypt(F.expr(f"aes_encrypt(b, {k}, 'GCM')"), key, "aes", "gcm").alias(f"e{i}")]
        pairs += [("b", f"{x}{i}") for x in "abde"]
        data_ = subset(data) if i == 0 else data_
        data_ = data_.withColumn(f"c{i}", c)
    out = data_.select("b", *cols)
    assert mismatches(out, *pairs) == [0] * len(pairs)


def test_aes_gcm_aad_interop(spark):
    df = spark.createDataFrame([("abc",), ("",), (None,)], "v string")
    k = hexlit(KEY16)
    out = df.select("v", ks.encrypt("v", KEY16, "aes", "gcm", aad=b"hdr").alias("c")) \
        .select("v", F.expr(f"aes_decrypt(c, {k}, 'GCM', 'DEFAULT', 'hdr')").alias("p"),
                F.expr(f"aes_encrypt(v, {k}, 'GCM', 'DEFAULT', '', 'hdr')").alias("s"))
    out = out.select("v", "p", ks.decrypt("s", KEY16, "aes", "gcm", aad=b"hdr").alias("q"),
                     ks.try_decrypt("s", KEY16, "aes", "gcm", aad=b"other").alias("r"))
    rows = out.collect()
    assert len(rows) == 3
    for r in rows:
        want = None if r.v is None else r.v.encode()
        assert r.p == want and r.q == want and r.r is None


def test_aes_cbc_interop(spark, data):
    cols, pairs = [], []
    for i, key in enumerate((KEY16, KEY32)):
        k = hexlit(key)
        cols += [F.expr(f"aes_decrypt(c{i}, {k}, 'CBC', 'PKCS')").alias(f"a{i}"),
                 F.expr(f"aes_decrypt(c{i}, {k}, 'CBC')").alias(f"b{i}"),
                 ks.decrypt(F.expr(f"aes_encrypt(b, {k}, 'CBC', 'PKCS')"), key, "aes", "cbc")
                 .alias(f"d{i}")]
        pairs += [("b", f"{x}{i}") for x in "abd"]
        data_ = subset(data) if i == 0 else data_
        data_ = data_.withColumn(f"c{i}", ks.encrypt("v", key, "aes", "cbc"))
    out = data_.select("b", *cols)
    assert mismatches(out, *pairs) == [0] * len(pairs)


def tampered(spark, df, col, mode):
    """Every value with one byte flipped where the mode must catch it, every time: the
    tag's last byte for GCM; for CBC the last byte of the block before the last (the IV
    for one block), which flips the padding's last byte to 0xef..0xfe, never valid.
    (Flipping a byte of the last CBC block instead would make a random last block,
    whose padding is valid by chance for about 1 value in 256.)"""
    at = 1 if mode == "gcm" else 17
    out = []
    for r in df.collect():
        b = bytearray(r[col])
        b[-at] ^= 0xFF
        out.append((bytes(b),))
    return spark.createDataFrame(out, f"{col} binary")


def unauthenticated_misses(got, spark_got=None):
    """For a CBC value decrypted under a wrong key: the last block is random, so its
    padding is valid by chance (~1 in 256 per value). Checks what must hold every time:
    where Spark decrypted the same rows, kuai agrees with it row by row; and at most 12
    of 52 wrong-key values came out (binomially ~1e-20 for a correct padding check, all
    52 for a missing one)."""
    if spark_got is not None:
        assert got == spark_got
    assert sum(x is not None for x in got) <= 12


@pytest.mark.parametrize("mode", ["gcm", "cbc"])
def test_wrong_key_and_tampered(spark, mode):
    df = spark.createDataFrame([(f"row {i}",) for i in range(50)] + [(None,), ("",)], "v string")
    enc = df.select(ks.encrypt("v", KEY16, "aes", mode).alias("c")).cache()
    wrong = bytes(16)
    bad = tampered(spark, enc.filter("c IS NOT NULL AND length(c) > 0"), "c", mode).cache()
    # raise: as Spark's aes_decrypt, the query fails
    with pytest.raises(Exception, match="decryption of row"):
        enc.select(ks.decrypt("c", wrong, "aes", mode)).collect()
    with pytest.raises(Exception, match="decryption of row"):
        bad.select(ks.decrypt("c", KEY16, "aes", mode)).collect()
    with pytest.raises(Exception):
        bad.select(F.expr(f"aes_decrypt(c, {hexlit(KEY16)}, '{mode.upper()}')")).collect()
    # null: as Spark's try_aes_decrypt
    r = enc.select(ks.try_decrypt("c", wrong, "aes", mode).alias("p"),
                   F.expr(f"try_aes_decrypt(c, {hexlit(wrong)}, '{mode.upper()}')").alias("s")
                   ).collect()
    if mode == "gcm":
        assert [x.p for x in r] == [None] * 52
    else:
        unauthenticated_misses([x.p for x in r], [x.s for x in r])
    r = bad.select(ks.decrypt("c", KEY16, "aes", mode, on_error="null").alias("p"),
                   F.expr(f"try_aes_decrypt(c, {hexlit(KEY16)}, '{mode.upper()}')").alias("s")
                   ).collect()
    assert [x.p for x in r] == [None] * 51 and [x.s for x in r] == [None] * 51
    # A cipher mix-up fails too (SM4 key on AES rows).
    r = enc.select(ks.try_decrypt("c", KEY16, "sm4", mode).alias("p")).collect()
    if mode == "gcm":
        assert [x.p for x in r] == [None] * 52
    else:
        unauthenticated_misses([x.p for x in r])
    enc.unpersist()
    bad.unpersist()


def test_sql_functions(spark, data):
    ks.register(spark)
    data.limit(5_000).createOrReplaceTempView("t")
    k = hexlit(KEY16)
    z = f"X'{bytes(16).hex()}'"
    r = spark.sql(
        f"""SELECT count(*) AS n,
              count_if(NOT (b <=> kuai_decrypt(c1, {k}, 'sm4', 'gcm'))) AS bad1,
              count_if(NOT (b <=> kuai_decrypt(c2, {k}, 'ublock-128', 'cbc'))) AS bad2,
              count_if(NOT (b <=> aes_decrypt(c3, {k}))) AS bad3,
              count_if(NOT (b <=> kuai_decrypt(c4, 'conf:conftest', 'aes', 'cbc'))) AS bad4,
              count_if(kuai_try_decrypt(c1, {z}, 'sm4', 'gcm') IS NOT NULL) AS bad5
            FROM (SELECT b, kuai_encrypt(v, {k}, 'sm4', 'gcm') AS c1,
                         kuai_encrypt(b, '{KEY16.hex()}', 'ublock-128', 'cbc') AS c2,
                         kuai_encrypt(v, {k}, 'aes', 'gcm') AS c3,
                         aes_encrypt(v, {k}, 'CBC') AS c4 FROM t)""").collect()[0]
    assert (r.n, r.bad1, r.bad2, r.bad3, r.bad4, r.bad5) == (5_000, 0, 0, 0, 0, 0)
    with pytest.raises(Exception, match="decryption of row"):
        spark.sql(f"SELECT kuai_decrypt(kuai_encrypt(v, {k}, 'sm4', 'gcm'), "
                  f"X'{bytes(16).hex()}', 'sm4', 'gcm') FROM t").collect()


def test_null_type_column(spark):
    """A column of Spark's NULL type (F.lit(None), SQL NULL) reaches the
    worker as an Arrow array of type null: NULL out, as aes_encrypt(NULL, k)
    and aes_decrypt(NULL, k). It failed the query with "a string or binary
    column is needed, not null"."""
    for mode in ("gcm", "cbc"):
        assert ks.encrypt_arrow(pa.nulls(3), KEY16, "sm4", mode).to_pylist() == [None] * 3
        assert ks.decrypt_arrow(pa.nulls(2), KEY16, "sm4", mode).to_pylist() == [None] * 2
    with pytest.raises(ValueError, match="GCM only"):
        ks.encrypt_arrow(pa.nulls(1), KEY16, "sm4", "cbc", aad=b"x")
    ks.register(spark)
    df = spark.createDataFrame([("abc",), (None,)], "v string")
    r = df.select(ks.encrypt(F.lit(None), KEY16).alias("e"), ks.decrypt(F.lit(None), KEY16).alias("d"),
                  ks.try_decrypt(F.lit(None), KEY16, mode="cbc").alias("t")).collect()
    assert [tuple(x) for x in r] == [(None, None, None)] * 2
    df.createOrReplaceTempView("nulls")
    r = spark.sql("""SELECT kuai_encrypt(NULL, 'conf:conftest', 'sm4', 'gcm') AS e,
                            kuai_decrypt(NULL, 'conf:conftest', 'sm4', 'gcm') AS d,
                            kuai_try_decrypt(NULL, 'conf:conftest', 'aes', 'cbc') AS t,
                            aes_encrypt(NULL, X'{0}') AS s FROM nulls""".format(KEY16.hex())).collect()
    assert [tuple(x) for x in r] == [(None, None, None, None)] * 2


def test_sql_key_per_row():
    # A key (or cipher, mode) column whose value changes from row to row: the
    # rows of each value in one call each, in order. A batch with two values
    # was refused, so the same query passed or failed with how Spark cut the
    # rows into batches (one row per batch: each under its own key).
    keys = [KEY16, bytes(24), KEY32, KEY16, bytes(24)]
    col = pa.array([b"a", None, b"ccc", b"", b"eeeee"])
    enc = ks._sql({}, "enc", True)
    ct = enc(col, pa.array(keys), pa.array(["aes"] * 5), pa.array(["gcm"] * 5))
    assert ct.type == pa.large_binary() and ct[1].as_py() is None
    for i in (0, 2, 3, 4):
        c = ct[i].as_py()
        assert AESGCM(keys[i]).decrypt(c[:12], c[12:], None) == col[i].as_py()
    hexkeys = pa.array([k.hex() for k in keys])
    dec = ks._sql({}, "dec", True)
    assert dec(ct, hexkeys, pa.array(["aes"] * 5), pa.array(["gcm"] * 5)).to_pylist() == \
        col.to_pylist()
    # cipher and mode per row too; one value for all rows: one call, as before
    ciphers, ms = pa.array(["sm4", "aes", "aes", "ublock-128", "sm4"]), pa.array(["gcm", "cbc"] * 2 + ["gcm"])
    ct = enc(col, pa.array([KEY16] * 5), ciphers, ms)
    assert dec(ct, pa.array([KEY16] * 5), ciphers, ms).to_pylist() == col.to_pylist()
    c = ct[0].as_py()
    assert SM4GCM(KEY16).decrypt(c[:12], c[12:], None) == b"a"
    assert enc(pa.array([], pa.binary()), pa.array([], pa.binary()), pa.array([], pa.string()),
               pa.array([], pa.string())).to_pylist() == []
    # a NULL key in one row: that row NULL (as aes_encrypt), the others encrypted
    ct = enc(col, pa.array([KEY16, KEY16, None, KEY16, KEY16]), pa.array(["sm4"] * 5),
             pa.array(["gcm"] * 5))
    assert ct[2].as_py() is None and ct[1].as_py() is None
    assert dec(ct, pa.array([KEY16] * 5), pa.array(["sm4"] * 5),
               pa.array(["gcm"] * 5)).to_pylist() == [b"a", None, None, b"", b"eeeee"]


def test_sql_key_per_row_error_row():
    """With a key that changes from row to row, a row that fails kuai_decrypt
    is named by its row in the batch. The rows of each key are decrypted as
    one subset, and the error named the row in that subset: row 1 for the
    batch's row 3 (the second row under bytes(16))."""
    keys = pa.array([KEY16, bytes(16), KEY16, bytes(16), KEY16])
    sm4, gcm = pa.array(["sm4"] * 5), pa.array(["gcm"] * 5)
    ct = ks._sql({}, "enc", True)(pa.array([b"a", b"b", b"c", b"d", b"e"]), keys, sm4, gcm)
    for bad in (3, 4, 0):
        rows = ct.to_pylist()
        rows[bad] = rows[bad][:-1] + bytes([rows[bad][-1] ^ 1])  # the tag's last byte
        with pytest.raises(ValueError, match=f"row {bad} of the batch"):
            ks._sql({}, "dec", True)(pa.array(rows), keys, sm4, gcm)


def test_key_in_a_name_slot_not_in_message():
    """A key passed by mistake as the cipher or mode (kuai_encrypt(v, key,
    '<hex key>', 'gcm'), or the arguments swapped) was repeated in the
    error, and so in the executor's log. Names of 16 characters or more are
    not shown (a string key as aes_encrypt takes one has 16, 24 or 32; with
    20 it was shown); a short unknown name still is."""
    secret = KEY16.hex()
    enc = ks._sql({}, "enc", True)
    col = pa.array([b"a"])
    for cipher, mode in ((secret, "gcm"), ("sm4", secret), ("sm4", KEY16),
                         ("0000111122223333", "gcm"), ("sm4", "0000111122223333")):
        with pytest.raises((ValueError, TypeError)) as e:
            enc(col, pa.array([KEY16]), pa.array([cipher]), pa.array([mode]))
        assert secret not in str(e.value) and repr(KEY16) not in str(e.value), str(e.value)
        assert "0000111122223333" not in str(e.value), str(e.value)
    with pytest.raises(ValueError, match="it may be a key"):
        ks.encrypt("v", KEY16, cipher=secret)
    with pytest.raises(ValueError, match="'des'"):
        ks.encrypt("v", KEY16, cipher="des")


def test_sql_try_decrypt_bad_key(spark):
    """kuai_try_decrypt gives NULL for a row whose key, cipher or mode is
    NULL or refused (wrong size, not hex, unknown conf entry or cipher), as
    Spark's try_aes_decrypt does for a bad or NULL key; kuai_decrypt still
    fails the query. Before, kuai_try_decrypt failed the query too."""
    col = pa.array([b"a", b"bb", None, b"", b"eeee"])
    ct = ks._sql({}, "enc", True)(col, pa.array([KEY16] * 5), pa.array(["sm4"] * 5),
                                  pa.array(["gcm"] * 5))
    tryd, dec = ks._sql({}, "dec", False), ks._sql({}, "dec", True)
    sm4, gcm = pa.array(["sm4"] * 5), pa.array(["gcm"] * 5)
    keys = pa.array([KEY16, bytes(15), KEY16, None, KEY16])
    assert tryd(ct, keys, sm4, gcm).to_pylist() == [b"a", None, None, None, b"eeee"]
    assert tryd(ct, pa.array([KEY16.hex(), "zz", None, "conf:nope", KEY16.hex()]), sm4,
                gcm).to_pylist() == [b"a", None, None, None, b"eeee"]
    assert tryd(ct, pa.array([KEY16] * 5), pa.array(["sm4", "des", "sm4", None, "sm4"]),
                pa.array(["gcm", "gcm", "gcm", "gcm", None])).to_pylist() == \
        [b"a", None, None, None, None]
    for k in (pa.array([bytes(15)] * 5), pa.nulls(5, pa.binary())):  # one value: one call
        assert tryd(ct, k, sm4, gcm).to_pylist() == [None] * 5
    with pytest.raises(ValueError, match="key size"):
        dec(ct, pa.array([KEY16, bytes(15)] * 2 + [KEY16]), sm4, gcm)
    assert dec(ct, pa.nulls(5, pa.binary()), sm4, gcm).to_pylist() == [None] * 5
    ks.register(spark)
    spark.createDataFrame([("abc",)], "v string").createOrReplaceTempView("tk")
    r = spark.sql("""SELECT kuai_try_decrypt(c, X'00', 'sm4', 'gcm') AS p,
                            try_aes_decrypt(c, X'00') AS s
                     FROM (SELECT kuai_encrypt(v, 'conf:conftest', 'sm4', 'gcm') AS c FROM tk)""")
    assert [tuple(x) for x in r.collect()] == [(None, None)]
    with pytest.raises(Exception, match="key size"):
        spark.sql("SELECT kuai_decrypt(kuai_encrypt(v, 'conf:conftest', 'sm4', 'gcm'), X'00', "
                  "'sm4', 'gcm') FROM tk").collect()


def test_sql_null_arguments(spark):
    """A NULL key, cipher or mode gives NULL in kuai_encrypt and kuai_decrypt,
    as Spark's aes_encrypt and aes_decrypt give NULL when any argument is
    NULL (even beside another bad argument); a non-NULL key of a wrong size
    still fails the query, as it does theirs. Before, a NULL key, cipher or
    mode failed the whole query ("key is NULL in a row")."""
    ks.register(spark)
    k = hexlit(KEY16)
    spark.createDataFrame([("abc",), (None,)], "v string").createOrReplaceTempView("nv")
    cases = [
        ("kuai_encrypt(v, NULL, 'sm4', 'gcm')", "aes_encrypt(v, NULL)"),
        ("kuai_encrypt(v, CAST(NULL AS BINARY), 'aes', 'gcm')",
         "aes_encrypt(v, CAST(NULL AS BINARY))"),
        (f"kuai_encrypt(v, {k}, NULL, 'gcm')", f"aes_encrypt(v, {k}, 'GCM', NULL)"),
        (f"kuai_encrypt(v, {k}, 'aes', NULL)", f"aes_encrypt(v, {k}, NULL)"),
        ("kuai_encrypt(v, NULL, 'des', 'xts')", "aes_encrypt(v, NULL, 'XTS')"),
        ("kuai_decrypt(X'00', NULL, 'sm4', 'gcm')", "aes_decrypt(X'00', NULL)"),
        (f"kuai_decrypt(X'00', {k}, 'sm4', NULL)", f"aes_decrypt(X'00', {k}, NULL)"),
        (f"kuai_decrypt(X'00', {k}, NULL, 'cbc')", f"aes_decrypt(X'00', {k}, 'CBC', NULL)"),
        ("kuai_try_decrypt(X'00', NULL, 'sm4', 'gcm')", "try_aes_decrypt(X'00', NULL)"),
    ]
    for kq, sq in cases:
        r = spark.sql(f"SELECT {kq} AS k, {sq} AS s FROM nv").collect()
        assert [tuple(x) for x in r] == [(None, None)] * 2, (kq, r)
    # a key column with a NULL row: that row NULL, the other encrypted
    spark.createDataFrame([("a", KEY16), ("b", None)], "v string, k binary") \
        .coalesce(1).createOrReplaceTempView("nk")
    r = spark.sql("""SELECT v, CAST(kuai_decrypt(kuai_encrypt(v, k, 'sm4', 'gcm'), k, 'sm4', 'gcm')
                              AS STRING) AS p, aes_encrypt(v, k) IS NULL AS s FROM nk""").collect()
    assert sorted((x.v, x.p, x.s) for x in r) == [("a", "a", False), ("b", None, True)]
    for q in ("kuai_encrypt(v, X'00', 'sm4', 'gcm')", "kuai_decrypt(X'00', X'0011', 'sm4', 'gcm')",
              "aes_encrypt(v, X'00')"):
        with pytest.raises(Exception, match="(?i)key.(size|length)"):
            spark.sql(f"SELECT {q} FROM nv").collect()


def test_sql_null_value_with_a_refused_key(spark):
    """A NULL value gives NULL whatever its key, as aes_encrypt(NULL, X'')
    and aes_decrypt(NULL, X'00') do; a refused key still fails a row that
    has a value. Before, the NULL row's refused key failed the query."""
    ks.register(spark)
    k = hexlit(KEY16)
    spark.createDataFrame([("abc", KEY16), (None, b"")], "v string, k binary") \
        .coalesce(1).createOrReplaceTempView("nvk")
    for kq, sq in (("kuai_encrypt(v, k, 'aes', 'gcm')", "aes_encrypt(v, k)"),
                   ("kuai_decrypt(kuai_encrypt(v, k, 'aes', 'gcm'), k, 'aes', 'gcm')",
                    "aes_decrypt(aes_encrypt(v, k), k)")):
        r = spark.sql(f"SELECT v, {kq} IS NULL AS kn, {sq} IS NULL AS sn FROM nvk").collect()
        assert sorted((x.v or "", x.kn, x.sn) for x in r) == [("", True, True),
                                                              ("abc", False, False)], kq
    r = spark.sql("SELECT kuai_decrypt(CAST(NULL AS BINARY), X'00', 'aes', 'gcm') AS k, "
                  "aes_decrypt(CAST(NULL AS BINARY), X'00') AS s").collect()
    assert [tuple(x) for x in r] == [(None, None)]
    # the Arrow layer alike: a batch of NULL values under a refused key
    enc = ks._sql({}, "enc", True)
    out = enc(pa.array([None, None], pa.binary()), pa.array([b"", b""]), pa.array(["sm4"] * 2),
              pa.array(["gcm"] * 2))
    assert out.null_count == 2
    with pytest.raises(ValueError, match="(?i)key size"):
        enc(pa.array([None, b"x"]), pa.array([b""] * 2), pa.array(["sm4"] * 2),
            pa.array(["gcm"] * 2))
    with pytest.raises(Exception, match="(?i)key.(size|length)"):
        spark.sql(f"SELECT kuai_encrypt(v, {k}, 'sm4', 'gcm'), "
                  "kuai_encrypt(v, X'00', 'sm4', 'gcm') FROM nvk").collect()


def test_sql_argument_count(spark):
    """Spark does not check a Python function's argument count: kuai's SQL
    functions say what they take. With three arguments the worker failed
    with "missing 2 required positional arguments: 'ci' and 'mo'", with five
    with "'StringArray' object is not callable"."""
    ks.register(spark)
    for args in ("v, 'conf:conftest'", "v, 'conf:conftest', 'sm4'",
                 "v, 'conf:conftest', 'sm4', 'gcm', 'x'"):
        n = args.count(",") + 1
        with pytest.raises(Exception, match=rf"kuai_encrypt\(\) takes 4 arguments .*{n} given"):
            spark.sql(f"SELECT kuai_encrypt({args}) FROM VALUES ('a') AS t(v)").collect()


def test_column_names_name_the_input():
    """encrypt/decrypt name their column after the input, as Spark names
    aes_encrypt(phone, ...): two columns encrypted in one select had the
    same name, kuai_encrypt(sm4-gcm)."""
    assert ks._column_name("kuai_encrypt", "phone", "sm4", "gcm") == "kuai_encrypt(phone, sm4-gcm)"
    assert ks._column_name("kuai_decrypt", F.col("a.b"), "aes", "cbc") == "kuai_decrypt(a.b, aes-cbc)"


def test_column_names_distinct(spark):
    df = spark.createDataFrame([("1", "x@y")], "phone string, email string")
    out = df.select(ks.encrypt("phone", KEY16), ks.encrypt(F.col("email"), KEY16),
                    ks.try_decrypt("phone", KEY16, "aes", "cbc"))
    assert out.columns == ["kuai_encrypt(phone, sm4-gcm)", "kuai_encrypt(email, sm4-gcm)",
                           "kuai_try_decrypt(phone, aes-cbc)"]
    assert out.select("kuai_encrypt(email, sm4-gcm)").count() == 1


def test_conf_key_set_after_register_says_so():
    with pytest.raises(ValueError, match=r"not set when kuai\.spark\.register\(spark\) ran"):
        ks._key_bytes("conf:late", {})


def test_sql_key_column(spark):
    ks.register(spark)
    keys = [KEY16, bytes(16), KEY16, bytes(range(1, 17))]
    df = spark.createDataFrame([(f"v{i}", k) for i, k in enumerate(keys)], "v string, k binary")
    df.coalesce(1).createOrReplaceTempView("keyed")  # one batch, four rows, three keys
    r = spark.sql("""SELECT v, c, CAST(kuai_decrypt(c, k, 'sm4', 'gcm') AS STRING) AS p
                     FROM (SELECT v, k, kuai_encrypt(v, k, 'sm4', 'gcm') AS c FROM keyed)""").collect()
    assert sorted(x.v for x in r) == sorted(x.p for x in r) == [f"v{i}" for i in range(4)]
    for x in r:
        k = keys[int(x.v[1:])]
        assert SM4GCM(k).decrypt(x.c[:12], x.c[12:], None) == x.v.encode()


def test_key_from_conf_and_not_in_plan(spark):
    df = spark.createDataFrame([("abc",)], "v string")
    c = df.select(ks.encrypt("v", "conf:conftest", "sm4").alias("c"))
    assert c.select(ks.decrypt("c", KEY16, "sm4").alias("p")).collect()[0].p == b"abc"
    plan = c._jdf.queryExecution().toString()
    assert "kuai_encrypt" in plan and KEY16.hex() not in plan.lower()
    # What a SQL literal key does: Spark shows it in the plan (documented).
    ks.register(spark)
    df.createOrReplaceTempView("one")
    q = spark.sql(f"SELECT kuai_encrypt(v, X'{KEY32.hex()}', 'aes', 'gcm') FROM one")
    assert KEY32.hex() in q._jdf.queryExecution().toString().lower()
    q = spark.sql("SELECT kuai_encrypt(v, 'conf:conftest', 'sm4', 'gcm') AS c FROM one")
    assert KEY16.hex() not in q._jdf.queryExecution().toString().lower()
    with pytest.raises(ValueError, match="not set"):
        ks.encrypt("v", "conf:nope")


def test_conf_key_in_another_thread(spark):
    """encrypt(col, "conf:NAME") made in a thread other than the session's
    (a thread pool running jobs): the session's conf is read there too.
    getActiveSession() is None in such a thread, and the call raised "no
    active SparkSession" though the session exists."""
    import threading

    out = {}

    def job():
        try:
            out["c"] = ks.encrypt("v", "conf:conftest", "sm4")
        except Exception as e:  # noqa: BLE001 - reported below
            out["c"] = e

    t = threading.Thread(target=job)
    t.start()
    t.join()
    assert not isinstance(out["c"], Exception), out["c"]
    df = spark.createDataFrame([("abc",)], "v string")
    assert df.select(ks.decrypt(out["c"], KEY16, "sm4").alias("p")).collect()[0].p == b"abc"


def test_cluster_section_names_imports():
    """docs/spark.md's "On a cluster" names every package kuai.spark imports,
    which the executors need. It named pyarrow but not numpy, which pyarrow
    (>= 16) does not bring: executors set up as it said failed to unpickle
    the UDFs (ModuleNotFoundError: numpy). And a str key that is all hex
    digits is taken as hex, as the Keys section now says (it said never)."""
    import ast
    import pathlib

    root = pathlib.Path(__file__).resolve().parents[2]
    tree = ast.parse((root / "python" / "kuai" / "spark.py").read_text())
    mods = {a.name.split(".")[0] for n in tree.body if isinstance(n, ast.Import) for a in n.names}
    mods |= {n.module.split(".")[0] for n in tree.body
             if isinstance(n, ast.ImportFrom) and n.module and n.level == 0}
    third = mods - set(sys.stdlib_module_names)
    assert third == {"numpy", "pyarrow"}
    doc = (root / "docs" / "spark.md").read_text()
    section = doc.split("\n## On a cluster\n", 1)[1].split("\n## ", 1)[0]
    for m in sorted(third):
        assert m in section, f"docs/spark.md, On a cluster: {m} not named"
    pw = "0123456789abcdef" * 2
    c = ks.encrypt_arrow(pa.array([b"x"]), pw, "aes").to_pylist()[0]
    assert AESGCM(bytes.fromhex(pw)).decrypt(c[:12], c[12:], None) == b"x"


def test_runtime_conf_key_sent_with_tasks(spark):
    """What docs/spark.md says of a spark.kuai.key.* entry set at run time:
    every task carries it as a local property (what the event log records
    for each job, unredacted) while it is set; once register() has read it,
    unsetting it stops that and the SQL functions still use the key."""
    from pyspark import TaskContext

    @F.udf("string")
    def prop(_):
        return TaskContext.get().getLocalProperty("spark.kuai.key.rt")

    df = spark.createDataFrame([("abc",)], "v string")
    spark.conf.set("spark.kuai.key.rt", KEY32.hex())
    try:
        assert df.select(prop("v")).collect()[0][0] == KEY32.hex()
        ks.register(spark)
    finally:
        spark.conf.unset("spark.kuai.key.rt")
    assert df.select(prop("v")).collect()[0][0] is None
    df.createOrReplaceTempView("rt")
    r = spark.sql("SELECT kuai_encrypt(v, 'conf:rt', 'aes', 'gcm') AS c FROM rt").collect()[0].c
    assert AESGCM(KEY32).decrypt(r[:12], r[12:], None) == b"abc"


def test_doc_examples_run_as_written(spark):
    """README.md's Spark example and docs/spark.md's, as a reader pastes them
    into one session (their getOrCreate() finds this session), then their
    results checked. Last in the file: the examples replace the view t."""
    import pathlib
    import re

    root = pathlib.Path(__file__).resolve().parents[2]
    blocks = [(p.name, b) for p in (root / "README.md", root / "docs" / "spark.md")
              for b in re.findall(r"```python\n(.*?)```", p.read_text(), re.S)
              if "pyspark" in b or p.name == "spark.md"]
    assert len(blocks) >= 3
    ns: dict = {}
    for i, (name, code) in enumerate(blocks):
        exec(compile(code, f"{name} example {i + 1}", "exec"), ns)
    want = ["13800138000", "", None]
    assert [r.phone for r in ns["dec"].collect()] == want
    r = spark.sql("SELECT CAST(kuai_try_decrypt(phone_enc, 'conf:pii', 'sm4', 'gcm') AS STRING)"
                  " AS phone FROM t").collect()
    assert [x.phone for x in r] == want
    # spark.md's SQL example unsets its runtime key after register(): set,
    # it goes with every job (test_runtime_conf_key_sent_with_tasks)
    assert spark.conf.get("spark.kuai.key.pii", None) is None
