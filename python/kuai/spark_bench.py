# SPDX-License-Identifier: Apache-2.0
"""python -m kuai.spark_bench (make bench-spark): rows/s encrypting and
decrypting N rows x 64 B on local[2] with kuai's SM4-GCM and AES-GCM UDFs,
Spark's built-in aes_encrypt/aes_decrypt (GCM), a UDF around gmssl's SM4-CBC
(pure Python: timed on fewer rows, rows/s is what it would do), and an
identity Arrow UDF (the JVM <-> Python Arrow round trip alone). Also the
cipher alone: kuai.spark.encrypt_arrow on the same rows in this process, one
thread. Each figure is the best of --repeat runs of a query that forces
every row through the function (sum of output lengths)."""
import argparse
import os
import sys
import time

import pyarrow as pa


def cpu_name() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown CPU"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--gmssl-rows", type=int, default=10_000)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args(argv)

    os.environ["PYSPARK_PYTHON"] = sys.executable
    from pyspark.sql import SparkSession
    from pyspark.sql import functions as F

    import kuai
    from kuai import spark as ks

    spark = (SparkSession.builder.master("local[2]").appName("kuai-bench")
             .config("spark.ui.enabled", "false").config("spark.driver.memory", "2g")
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    key = os.urandom(16)
    klit = f"X'{key.hex()}'"
    n = a.rows

    def rows_of(count):
        df = spark.range(count, numPartitions=2).selectExpr(
            "unhex(sha2(cast(id AS string), 512)) AS b")  # 64 bytes each
        return df.cache()

    def timed(df, col, count):
        best = float("inf")
        for _ in range(a.repeat):
            t = time.perf_counter()
            df.select(F.sum(F.length(col))).collect()
            best = min(best, time.perf_counter() - t)
        return count / best

    plain = rows_of(n)
    plain.count()
    small = rows_of(a.gmssl_rows)
    small.count()

    identity = F.arrow_udf(lambda c: c, "binary") if hasattr(F, "arrow_udf") else None
    from gmssl.sm4 import CryptSM4, SM4_DECRYPT, SM4_ENCRYPT
    import pandas as pd

    @F.pandas_udf("binary")
    def gmssl_enc(s: pd.Series) -> pd.Series:
        c = CryptSM4()
        c.set_key(key, SM4_ENCRYPT)
        out = []
        for v in s:
            iv = os.urandom(16)
            out.append(iv + c.crypt_cbc(iv, v))
        return pd.Series(out)

    @F.pandas_udf("binary")
    def gmssl_dec(s: pd.Series) -> pd.Series:
        c = CryptSM4()
        c.set_key(key, SM4_DECRYPT)
        return pd.Series([c.crypt_cbc(v[:16], v[16:]) for v in s])

    enc = {
        "kuai SM4-GCM UDF": (lambda c: ks.encrypt(c, key, "sm4", "gcm"),
                             lambda c: ks.decrypt(c, key, "sm4", "gcm"), plain, n),
        "kuai AES-128-GCM UDF": (lambda c: ks.encrypt(c, key, "aes", "gcm"),
                                 lambda c: ks.decrypt(c, key, "aes", "gcm"), plain, n),
        "Spark aes_encrypt/aes_decrypt (AES-128-GCM, JVM)":
            (lambda c: F.expr(f"aes_encrypt({c}, {klit})"),
             lambda c: F.expr(f"aes_decrypt({c}, {klit})"), plain, n),
        "gmssl SM4-CBC UDF (pandas)": (lambda c: gmssl_enc(c), lambda c: gmssl_dec(c),
                                       small, a.gmssl_rows),
    }
    results = []
    # Warm-up: start the Python workers and the JIT before anything is timed.
    timed(plain.select(ks.encrypt("b", key, "sm4", "gcm").alias("x")), "x", n)
    if identity is not None:
        results.append(("identity Arrow UDF (transfer only)", timed(plain.select(identity("b").alias("x")), "x", n), None))
    for name, (e, d, df, count) in enc.items():
        erate = timed(df.select(e("b").alias("x")), "x", count)
        ct = df.select(e("b").alias("c")).cache()
        ct.count()
        drate = timed(ct.select(d("c").alias("x")), "x", count)
        ct.unpersist()
        results.append((name, erate, drate))

    # The cipher alone, in this process, one thread.
    arr = pa.array([os.urandom(64) for _ in range(min(n, 200_000))], pa.binary())
    for cname in ("sm4", "aes"):
        best = dt = float("inf")
        for _ in range(a.repeat):
            t = time.perf_counter()
            c = ks.encrypt_arrow(arr, key, cname, "gcm")
            best = min(best, time.perf_counter() - t)
        for _ in range(a.repeat):  # decryption the best of as many, as encryption
            t = time.perf_counter()
            ks.decrypt_arrow(c, key, cname, "gcm")
            dt = min(dt, time.perf_counter() - t)
        results.append((f"kuai {cname.upper()}-GCM cipher alone (encrypt_arrow, 1 thread, no Spark)",
                        len(arr) / best, len(arr) / dt))

    print(f"# kuai.spark_bench: {n:,} rows x 64 B on local[2]; gmssl on {a.gmssl_rows:,} rows; "
          f"best of {a.repeat}")
    print(f"# CPU: {cpu_name()}, {os.cpu_count()} logical; kuai {kuai.__version__} "
          f"(SM4 backend {kuai.backends('sm4')[0]}); pyspark {spark.version}; "
          f"load average {os.getloadavg()[0]:.1f}")
    print("| function | encrypt rows/s | decrypt rows/s |")
    print("|---|---:|---:|")
    for name, e, d in results:
        print(f"| {name} | {e:,.0f} | {'' if d is None else f'{d:,.0f}'} |")
    by = {name: (e, d) for name, e, d in results}
    sm4 = by["kuai SM4-GCM UDF"]
    spk = by["Spark aes_encrypt/aes_decrypt (AES-128-GCM, JVM)"]
    gm = by["gmssl SM4-CBC UDF (pandas)"]
    print(f"# kuai SM4-GCM / Spark AES-GCM: encrypt {sm4[0] / spk[0]:.2f}x, "
          f"decrypt {sm4[1] / spk[1]:.2f}x (target >= 1)")
    print(f"# kuai SM4-GCM / gmssl UDF: encrypt {sm4[0] / gm[0]:.0f}x, "
          f"decrypt {sm4[1] / gm[1]:.0f}x (target >= 50)")
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
