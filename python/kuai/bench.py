# SPDX-License-Identifier: Apache-2.0
"""python -m kuai.bench [--quick] [--json FILE]

MB/s and ns per call at 16 B, 64 B, 1 KiB and 1 MiB for SM4-CBC/CTR/GCM and
AES-128-GCM, kuai against cryptography (OpenSSL) and gmssl (pure Python:
small sizes only), plus uBlock-128/128 alone, in one process: every
implementation of a row runs in turn, round after round (7; 3 with
--quick), and keeps its best round (the machines are shared). "C" is the
library itself timed by a loop in C on the same key and buffer size
(kuai._kuai._c_speed), so kuai/C is what the binding costs.

Times are the measuring thread's CPU time (CLOCK_THREAD_CPUTIME_ID, in
Python and in C alike): on a shared machine wall-clock time would also count
other processes' time slices.

Calls measured: CBC/CTR, update() on a running context (kuai, cryptography);
GCM, one whole message per call (AESGCM.encrypt; for cryptography's SM4,
which has no AEAD class, Cipher(SM4, GCM).encryptor() + update + finalize);
gmssl, CryptSM4.crypt_cbc (it pads each message: one block more).
"""
from __future__ import annotations

import argparse
import array
import json
import os
import platform
import sys
import time
from itertools import repeat
from typing import Any, Callable, Dict, List, Optional

from . import Cipher, _kuai, aead, modes

SIZES = [16, 64, 1024, 1 << 20]
GMSSL_MAX = 1024


def cpu_name() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def loop(fn: Callable[..., Any], args: Any, n: int) -> int:
    t0 = time.thread_time_ns()
    for _ in repeat(None, n):
        fn(*args)
    return time.thread_time_ns() - t0


class Impl:
    """One way to do a row's operation at one size: run(n) -> ns for n calls."""

    def __init__(self, name: str, run: Callable[[int], int]) -> None:
        self.name, self.run, self.n = name, run, 1
        self.samples: List[float] = []

    def calibrate(self, seconds: float) -> None:
        n = 1
        while True:
            t = self.run(n)
            if t >= seconds * 1e9 * 0.5 or n >= 1 << 24:
                self.n = max(1, int(n * seconds * 1e9 / max(t, 1)))
                return
            n *= 4 if t < seconds * 1e9 / 20 else 2

    def sample(self) -> None:
        self.samples.append(self.run(self.n) / self.n)


def impls_for(row: str, size: int) -> List[Impl]:
    key16, iv16 = os.urandom(16), os.urandom(16)
    nonce = os.urandom(12)
    data = os.urandom(size)
    out: List[Impl] = []

    def py(name: str, fn: Callable[..., Any], *args: Any) -> None:
        out.append(Impl(name, lambda n: loop(fn, args, n)))

    def c(k: Any, op: str) -> None:
        out.append(Impl("C", lambda n: _kuai._c_speed(k, op, size, n)))

    CC: Any = None
    try:
        from cryptography.hazmat.primitives.ciphers import Cipher as CC, algorithms, modes as cm
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM as CAESGCM
    except ImportError:
        pass
    try:
        from gmssl import sm4 as gm  # type: ignore[import-untyped]
    except ImportError:
        gm = None

    if row in ("SM4-CBC", "SM4-CTR", "uBlock-128/128-CTR"):
        name = "ublock-128-128" if row.startswith("uBlock") else "sm4"
        k: Any = Cipher(name, key16)
        mode: modes.Mode = modes.CBC(iv16) if row.endswith("CBC") else modes.CTR(iv16)
        py("kuai", k.encryptor(mode).update, data)
        if CC is not None and name == "sm4":
            cmode = cm.CBC(iv16) if row.endswith("CBC") else cm.CTR(iv16)
            py("cryptography", CC(algorithms.SM4(key16), cmode).encryptor().update, data)
        if gm is not None and row == "SM4-CBC" and size <= GMSSL_MAX:
            g = gm.CryptSM4()
            g.set_key(key16, gm.SM4_ENCRYPT)
            py("gmssl", g.crypt_cbc, iv16, data)
        c(k, "cbc" if row.endswith("CBC") else "ctr")
    elif row in ("SM4-GCM", "AES-128-GCM", "uBlock-128/128-GCM"):
        cls: Any = {"SM4-GCM": aead.SM4GCM, "AES-128-GCM": aead.AESGCM, "uBlock-128/128-GCM": aead.UBlockGCM}[row]
        k = cls(key16)  # noqa
        py("kuai", k.encrypt, nonce, data, None)
        if CC is not None and row == "AES-128-GCM":
            py("cryptography", CAESGCM(key16).encrypt, nonce, data, None)
        if CC is not None and row == "SM4-GCM":
            def sm4gcm(nonce: bytes = nonce, data: bytes = data, key: bytes = key16) -> bytes:
                e = CC(algorithms.SM4(key), cm.GCM(nonce)).encryptor()
                return bytes(e.update(data) + e.finalize() + e.tag)
            py("cryptography", sm4gcm)
        c(k, "gcm")
    return out


ROWS = ["SM4-CBC", "SM4-CTR", "SM4-GCM", "AES-128-GCM", "uBlock-128/128-CTR", "uBlock-128/128-GCM"]


def batch_row(seconds: float, rounds: int) -> Dict[str, float]:
    """SM4-GCM on 1,000 messages of 64 B: one batch call vs a loop of calls."""
    k = aead.SM4GCM(os.urandom(16))
    datas = [os.urandom(64) for _ in range(1000)]
    nonces = os.urandom(12 * 1000)
    nlist = [nonces[i * 12:(i + 1) * 12] for i in range(1000)]
    blob = b"".join(datas)
    offs = array.array("q", range(0, 64 * 1001, 64))

    def each() -> List[bytes]:
        enc = k.encrypt
        return [enc(n, d, None) for n, d in zip(nlist, datas)]

    impls = [Impl("loop of encrypt()", lambda n: loop(each, (), n)),
             Impl("encrypt_batch()", lambda n: loop(k.encrypt_batch, (nonces, datas), n)),
             Impl("encrypt_packed()", lambda n: loop(k.encrypt_packed, (nonces, blob, offs), n))]
    for im in impls:
        im.calibrate(seconds)
    for _ in range(rounds):
        for im in impls:
            im.sample()
    return {im.name: min(im.samples) / 1000 for im in impls}


def summary(results: List[Dict[str, Any]]) -> None:
    """The issue's targets, from the rows above."""
    t = {(r["op"], r["size"], r["impl"]): r["ns_per_call"] for r in results}
    print("\n| target | row | measured |")
    print("|---|---|---:|")
    for row in ROWS:
        if (row, 1 << 20, "C") in t:
            print(f"| 1 MiB: kuai ≥ 90% of C | {row} | {100 * t[(row, 1 << 20, 'C')] / t[(row, 1 << 20, 'kuai')]:.0f}% |")
    for row in ROWS:
        if (row, 16, "C") in t:
            print(f"| 16 B: overhead ≤ 300 ns per call | {row} | {t[(row, 16, 'kuai')] - t[(row, 16, 'C')]:.0f} ns |")
    for row in ("SM4-CTR", "SM4-GCM"):
        for size in SIZES:
            if (row, size, "cryptography") in t:
                ratio = t[(row, size, "cryptography")] / t[(row, size, "kuai")]
                print(f"| ≥ 5× cryptography's SM4 | {row} {size} B | {ratio:.1f}× |")
    gm = [(size, t[("SM4-CBC", size, "gmssl")]) for size in SIZES if ("SM4-CBC", size, "gmssl") in t]
    if gm:
        size, ns = gm[-1]  # gmssl's best throughput: its largest size
        gmssl_mbs = size / ns * 1e3
        for row in ("SM4-CBC", "SM4-CTR", "SM4-GCM"):
            for size in (1024, 1 << 20):
                kuai_mbs = size / t[(row, size, "kuai")] * 1e3
                print(f"| ≥ 1,000× gmssl (its SM4-CBC at {gm[-1][0]} B: {gmssl_mbs:.3f} MB/s) "
                      f"| {row} {size} B | {kuai_mbs / gmssl_mbs:,.0f}× |")


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m kuai.bench", description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="shorter runs (noisier)")
    ap.add_argument("--json", metavar="FILE", help="write the results as JSON")
    a = ap.parse_args(argv)
    seconds, rounds = (0.02, 3) if a.quick else (0.1, 7)
    info = {"cpu": cpu_name(), "python": sys.version.split()[0], "kuai": _kuai.VERSION,
            "backends": {n: Cipher(n, bytes(16)).backend for n in ("sm4", "aes", "ublock-128-128")}}
    try:
        import cryptography
        info["cryptography"] = cryptography.__version__
    except ImportError:
        pass
    print(f"# kuai.bench — {info['cpu']}, Python {info['python']}, kuai {info['kuai']} "
          f"(backends {info['backends']}), cryptography {info.get('cryptography', '-')}")
    print("| operation | size | implementation | MB/s | ns/call | kuai is × faster |")
    print("|---|---:|---|---:|---:|---:|")
    results = []
    for row in ROWS:
        for size in SIZES:
            impls = impls_for(row, size)
            for im in impls:
                im.calibrate(seconds)
            for _ in range(rounds):
                for im in impls:  # alternating: every implementation each round
                    im.sample()
            ns = {im.name: min(im.samples) for im in impls}
            for name, t in ns.items():
                ratio = "" if name == "kuai" else f"{t / ns['kuai']:.2f}" if name != "C" else \
                    f"kuai at {100 * t / ns['kuai']:.0f}% of C"
                mbs = size / t * 1e3
                print(f"| {row} | {size} | {name} | {mbs:,.1f} | {t:,.0f} | {ratio} |")
                results.append({"op": row, "size": size, "impl": name, "ns_per_call": t, "mb_per_s": mbs})
            sys.stdout.flush()
    summary(results)
    b = batch_row(seconds, rounds)
    base = b["loop of encrypt()"]
    print("\n| SM4-GCM, 1,000 × 64 B | µs per 1,000 | messages/s | × the loop |")
    print("|---|---:|---:|---:|")
    for name, us in b.items():
        print(f"| {name} | {us:,.0f} | {1e9 / us:,.0f} | {base / us:.2f} |")
        results.append({"op": "SM4-GCM batch 1000x64", "impl": name, "us_per_1000": us})
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"info": info, "results": results}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
