#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Tests of the kuai command-line tool (python3 standard library only).

usage: test_cli.py [path/to/kuai]      (default: build/kuai)

Round trips of every cipher around the chunk boundaries, through files and
pipes; every kind of tampering rejected with no output left; --raw against
`openssl enc` both ways (CFB and OFB too); overwrite refusal; error messages and exit codes;
the progress bar under a pseudo-terminal. AES cases are reported SKIP while
the library reports AES unsupported (`kuai info`).
"""
import json
import os
import pty
import random
import re
import shlex
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ref_decrypt  # noqa: E402  (the independent decryptor of docs/format.md)

KUAI = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build/kuai")
CHUNK = 1 << 20
TAG = 16
HEADER = 64
CIPHERS = {  # name: key bytes
    "ublock-128-128": 16, "ublock-128-256": 32, "ublock-256-256": 32, "sm4": 16,
    "aes-128": 16, "aes-192": 24, "aes-256": 32,
}
EXIT_USAGE, EXIT_IO, EXIT_VERIFY, EXIT_UNAVAIL = 1, 2, 3, 5

passed = failed = skipped = 0
rng = random.Random(20261123)


def report(ok, name, detail=""):
    global passed, failed
    if ok:
        passed += 1
    else:
        failed += 1
        print(f"FAIL {name}: {detail}")


def skip(name, why):
    global skipped
    skipped += 1
    print(f"SKIP {name}: {why}")


def run(args, data=None, env=None):
    """Runs kuai without a controlling terminal (so --password reads
    KUAI_PASSWORD); returns (rc, stdout bytes, stderr text)."""
    e = dict(os.environ)
    e.pop("KUAI_BACKEND", None)
    if env:
        e.update(env)
    p = subprocess.run([KUAI] + args, input=data if data is not None else b"",
                       capture_output=True, env=e, start_new_session=True)
    return p.returncode, p.stdout, p.stderr.decode(errors="replace")


def rbytes(n):
    return rng.randbytes(n)


def key_hex(name):
    return rbytes(CIPHERS[name]).hex()


def probe_supported():
    rc, out, _ = run(["info"])
    sup = set()
    for line in out.decode().splitlines():
        parts = line.split()
        if parts and parts[0] in CIPHERS and len(parts) > 1 and parts[1] != "unsupported":
            sup.add(parts[0])
    return sup


def mem_available_kib():
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


def leftovers(d):
    return [f for f in os.listdir(d) if ".kuai-tmp-" in f]


class Dir:
    def __init__(self):
        self.path = tempfile.mkdtemp(prefix="kuai-cli-test-")

    def file(self, name, data=None):
        p = os.path.join(self.path, name)
        if data is not None:
            with open(p, "wb") as f:
                f.write(data)
        return p

    def subdir(self, name, data):
        """A new directory under this one holding in.pt (data); returns
        (the directory, in.pt's path)."""
        sub = self.file(name)
        os.makedirs(sub, exist_ok=True)
        with open(os.path.join(sub, "in.pt"), "wb") as f:
            f.write(data)
        return sub, os.path.join(sub, "in.pt")

    def read(self, name):
        with open(os.path.join(self.path, name), "rb") as f:
            return f.read()


def test_help():
    for cmd in [[], ["encrypt"], ["decrypt"], ["speed"], ["selftest"], ["info"]]:
        rc, out, err = run(cmd + ["--help"])
        report(rc == 0 and b"usage" in out, f"help {' '.join(cmd) or 'kuai'}", f"rc={rc} {err}")
        if cmd:
            rc2, out2, _ = run(["help"] + cmd)
            report(rc2 == 0 and out2 == out, f"kuai help {cmd[0]}", f"rc={rc2}")
    # kuai --help's line on decrypt: it said "writes nothing unless the input
    # verifies", which standard output (written a verified chunk at a time,
    # test_tampering) does not keep; it must say where that holds
    rc, out, err = run(["--help"])
    line = out[out.find(b"  decrypt "):]
    line = line[:line.find(b"\n  speed")]
    report(rc == 0 and b"writes nothing unless" not in line and b"standard output" in line,
           "kuai --help: decrypt's promise as kept (a file; standard output chunk by chunk)",
           repr(line))
    rc, out, err = run(["--version"])
    report(rc == 0 and out.startswith(b"kuai "), "version", err)
    # an argument more is refused, as by selftest and info (it was ignored,
    # exit 0: `kuai --version --json f`, `kuai help encrypt -o x`)
    for args in (["--version", "x"], ["version", "--help"], ["help", "encrypt", "x"],
                 ["help", "info", "extra"]):
        rc, out, err = run(args)
        report(rc == EXIT_USAGE and out == b"" and "unexpected argument" in err,
               f"kuai {' '.join(args)}: refused (exit 1)", f"rc={rc} {err!r}")
    rc, out, err = run([])
    report(rc == EXIT_USAGE and "usage" in err, "no command: usage", f"rc={rc}")


def test_roundtrips(d, supported):
    sizes = [0, 1, CHUNK - 1, CHUNK, CHUNK + 1, 3 * CHUNK + 12345]
    for name in CIPHERS:
        if name not in supported:
            skip(f"round trips {name}", "not available in this build")
            continue
        k = key_hex(name)
        for n in sizes:
            pt = rbytes(n)
            # files
            src = d.file("pt", pt)
            enc, dec = d.file("ct.kuai"), d.file("pt.out")
            for p in (enc, dec):
                if os.path.exists(p):
                    os.unlink(p)
            rc1, _, e1 = run(["encrypt", "--cipher", name, "--key", k, "-o", enc, src])
            rc2, _, e2 = run(["decrypt", "--key", k, "-o", dec, enc])
            ok = rc1 == 0 and rc2 == 0 and d.read("pt.out") == pt
            nchunks = max(1, -(-n // CHUNK))
            ok = ok and os.path.getsize(enc) == HEADER + n + nchunks * TAG
            report(ok, f"round trip {name} {n} bytes (files)", f"rc={rc1},{rc2} {e1}{e2}")
            # pipes
            rc1, ct, e1 = run(["encrypt", "-c", name, "-k", k], pt)
            rc2, back, e2 = run(["decrypt", "-k", k], ct)
            report(rc1 == 0 and rc2 == 0 and back == pt, f"round trip {name} {n} bytes (pipes)",
                   f"rc={rc1},{rc2} {e1}{e2}")
    # thread counts: the same plaintext whatever -j
    pt = rbytes(5 * CHUNK + 7)
    k = key_hex("sm4")
    for j in ("1", "2", "5"):
        rc1, ct, e1 = run(["encrypt", "-c", "sm4", "-k", k, "-j", j], pt)
        rc2, back, e2 = run(["decrypt", "-k", k, "-j" + j], ct)
        report(rc1 == 0 and rc2 == 0 and back == pt, f"round trip -j {j}", e1 + e2)
    # key file, and '-' for standard input
    kf = d.file("key.hex", (k + "\n").encode())
    rc1, ct, e1 = run(["encrypt", "-c", "sm4", "--key-file", kf, "-"], pt)
    rc2, back, e2 = run(["decrypt", "--key-file", kf], ct)
    report(rc1 == 0 and rc2 == 0 and back == pt, "key file round trip", e1 + e2)
    # --cipher on decryption must match the header
    rc, _, err = run(["decrypt", "-k", k, "--cipher", "ublock-128-128"], ct)
    report(rc == EXIT_VERIFY and "sm4" in err, "decrypt --cipher mismatch", f"rc={rc} {err}")
    rc, back, err = run(["decrypt", "-k", k, "--cipher", "sm4"], ct)
    report(rc == 0 and back == pt, "decrypt --cipher match", err)
    # one input and -o DIR
    od = d.file("one_dir")
    os.makedirs(od, exist_ok=True)
    src = d.file("single.bin", pt)
    rc, _, err = run(["encrypt", "-c", "sm4", "-k", k, "-o", od, src])
    rc2, _, err2 = run(["decrypt", "-k", k, "-o", od, os.path.join(od, "single.bin.kuai")])
    report(rc == 0 and rc2 == 0 and open(os.path.join(od, "single.bin"), "rb").read() == pt,
           "one input with -o DIR", err + err2)
    # two encryptions of the same input differ (random nonce)
    rc1, ct2, _ = run(["encrypt", "-c", "sm4", "-k", k], pt)
    report(ct2 != ct, "fresh nonce per file", "identical ciphertexts")


def test_password(d):
    pw = {"KUAI_PASSWORD": "correct horse battery staple"}
    pt = rbytes(CHUNK + 99)
    rc1, ct, e1 = run(["encrypt", "-c", "ublock-128-256", "--password", "--scrypt-log2n", "10"],
                      pt, pw)
    rc2, back, e2 = run(["decrypt", "--password"], ct, pw)
    report(rc1 == 0 and rc2 == 0 and back == pt and ct[10] == 1 and ct[12] == 10,
           "password round trip (scrypt N=2^10)", e1 + e2)
    out = d.file("pw.out")
    rc, _, err = run(["decrypt", "-p", "-o", out], ct, {"KUAI_PASSWORD": "wrong"})
    report(rc == EXIT_VERIFY and "wrong password" in err and not os.path.exists(out)
           and not leftovers(d.path), "wrong password rejected", f"rc={rc} {err}")
    rc, _, err = run(["decrypt", "-k", "00" * 32], ct)
    report(rc == EXIT_USAGE and "password" in err, "key given for a password file", err)
    rc, _, err = run(["encrypt", "-c", "sm4", "-p"], b"x", {"KUAI_PASSWORD": ""})
    report(rc == EXIT_USAGE, "empty password refused", err)
    env = dict(pw)
    rc, _, err = run(["encrypt", "-c", "sm4", "-p", "--scrypt-log2n", "9"], b"x", env)
    report(rc == EXIT_USAGE, "scrypt cost below the floor refused", err)
    # the default cost is in the header
    rc1, ct, e1 = run(["encrypt", "-c", "sm4", "-p"], b"hello", pw)
    rc2, back, e2 = run(["decrypt", "-p"], ct, pw)
    report(rc1 == 0 and rc2 == 0 and back == b"hello" and ct[12] == 17 and ct[13] == 8
           and ct[14] == 1, "default scrypt N=2^17, r=8, p=1", e1 + e2)
    # a header asking for more scrypt work than kuai ever writes (here
    # N=2^20, r=32: 4 GiB) is refused before scrypt runs
    big = bytearray(ct)
    big[12], big[13] = 20, 32
    out = d.file("big.out")
    rc, _, err = run(["decrypt", "-p", "-o", out], bytes(big), pw)
    report(rc == EXIT_VERIFY and "scrypt cost" in err and not os.path.exists(out),
           "scrypt cost above the cap refused before scrypt", f"rc={rc} {err}")


def chunks_of(ct):
    body = ct[HEADER:]
    size = CHUNK + TAG
    return ct[:HEADER], [body[i:i + size] for i in range(0, len(body), size)]


def flip(b, pos, bit=0):
    b = bytearray(b)
    b[pos] ^= 1 << bit
    return bytes(b)


def test_tampering(d, supported):
    for name in ("sm4", "ublock-256-256", "aes-128", "ublock-128-128"):
        if name not in supported:
            skip(f"tampering {name}", "not available in this build")
            continue
        k = key_hex(name)
        pt = rbytes(3 * CHUNK + 4321)  # chunks 0, 1, 2 full; chunk 3 partial
        rc, ct, err = run(["encrypt", "-c", name, "-k", k], pt)
        if rc:
            report(False, f"tampering {name}: encrypt", err)
            continue
        hdr, ch = chunks_of(ct)
        last = len(ct) - 1
        c1 = HEADER + (CHUNK + TAG)
        cases = {}
        for pos, what in [(0, "magic"), (8, "version"), (9, "cipher id"), (10, "kdf id"),
                          (11, "chunk size"), (12, "kdf parameter"), (15, "reserved"),
                          (16, "salt"), (32, "nonce"), (47, "nonce end"), (48, "header tag"),
                          (63, "header tag end")]:
            cases[f"header bit flipped: {what}"] = flip(ct, pos, 3)
        cases["bit flipped in chunk 0"] = flip(ct, HEADER + 5)
        cases["bit flipped in chunk 1"] = flip(ct, c1 + CHUNK // 2, 7)
        cases["bit flipped in the last chunk"] = flip(ct, last - TAG - 3)
        cases["bit flipped in chunk 1's tag"] = flip(ct, c1 + CHUNK + 2)
        cases["bit flipped in the last tag"] = flip(ct, last)
        cases["truncated: header only"] = hdr
        cases["truncated: inside the header"] = ct[:30]
        cases["truncated: last byte"] = ct[:-1]
        cases["truncated: inside a tag"] = ct[:-TAG + 3]
        cases["truncated: at a chunk boundary"] = hdr + b"".join(ch[:3])
        cases["truncated: at the first chunk boundary"] = hdr + ch[0]
        cases["chunk removed"] = hdr + ch[0] + ch[2] + ch[3]
        cases["chunk duplicated"] = hdr + ch[0] + ch[1] + ch[1] + ch[2] + ch[3]
        cases["chunks swapped"] = hdr + ch[1] + ch[0] + ch[2] + ch[3]
        cases["appended chunk (a copy of the last)"] = ct + ch[3]
        cases["appended chunk (a copy of chunk 0)"] = ct + ch[0]
        cases["appended byte"] = ct + b"\0"
        cases["appended empty final chunk"] = ct + ch[3][-TAG:]
        # a chunk from another file under the same key
        rc, other, _ = run(["encrypt", "-c", name, "-k", k], pt)
        cases["chunk from another file, same key"] = hdr + ch[0] + chunks_of(other)[1][1] + ch[2] + ch[3]
        cases["header from another file, same key"] = other[:HEADER] + ct[HEADER:]
        wrong = bytearray(bytes.fromhex(k))
        wrong[0] ^= 1
        for label, data in cases.items():
            out = d.file("tampered.out")
            rc, _, err = run(["decrypt", "-k", k, "-o", out], data)
            ok = rc == EXIT_VERIFY and not os.path.exists(out) and not leftovers(d.path)
            report(ok and err.count("\n") == 1, f"{name}: {label} (to a file)",
                   f"rc={rc} exists={os.path.exists(out)} {err!r}")
            if os.path.exists(out):  # keep one failure from spilling into the next case
                os.unlink(out)
            # to standard output: only whole chunks that verified, in order
            rc, got, err = run(["decrypt", "-k", k], data)
            ok = rc == EXIT_VERIFY and pt.startswith(got) and len(got) % CHUNK == 0
            report(ok, f"{name}: {label} (to stdout)", f"rc={rc} {len(got)} bytes out {err!r}")
        out = d.file("wrongkey.out")
        rc, got, err = run(["decrypt", "-k", bytes(wrong).hex(), "-o", out], ct)
        report(rc == EXIT_VERIFY and "wrong key" in err and not os.path.exists(out)
               and not leftovers(d.path), f"{name}: wrong key", f"rc={rc} {err}")
        rc, got, err = run(["decrypt", "-k", bytes(wrong).hex()], ct)
        report(rc == EXIT_VERIFY and got == b"", f"{name}: wrong key (to stdout)", f"rc={rc}")
        # the truncation message says so
        rc, _, err = run(["decrypt", "-k", k], hdr + ch[0] + ch[1])
        report(rc == EXIT_VERIFY and "truncated" in err, f"{name}: truncation named", err)
        # fewer bytes than a tag after a full chunk: the file was cut inside
        # the next chunk, or they were appended to a file of whole MiBs;
        # both were "truncated", and which won was a race between the reader
        # and the thread opening that chunk ("failed authentication")
        _, whole, _ = run(["encrypt", "-c", name, "-k", k], pt[:CHUNK])  # one final full chunk
        for data, label, want in [
                (hdr + ch[0] + ch[1][:5], "cut 5 bytes into chunk 1",
                 "truncated: the file ends 5 bytes into chunk 1"),
                (hdr + ch[0] + ch[1][:1], "cut 1 byte into chunk 1",
                 "truncated: the file ends 1 byte into chunk 1"),
                (whole + b"\0" * 5, "5 bytes appended after a final full chunk",
                 "data appended after the last chunk (chunk 0): 5 bytes"),
                (whole + b"\0" * 15, "15 bytes appended after a final full chunk",
                 "data appended after the last chunk (chunk 0): 15 bytes")]:
            for j in ("-j1", "-j4"):
                out = d.file("frag.out")
                rc, _, err = run(["decrypt", j, "-k", k, "-o", out], data)
                ok = rc == EXIT_VERIFY and not os.path.exists(out) and not leftovers(d.path)
                rc2, got, err2 = run(["decrypt", j, "-k", k], data)
                ok = ok and rc2 == EXIT_VERIFY and got == b"" and err == err2
                report(ok and want in err and err.count("\n") == 1, f"{name}: {label} ({j})",
                       f"rc={rc} {err!r}")
        rc, _, err = run(["decrypt", "-k", k], hdr + ch[0][:1])
        report(rc == EXIT_VERIFY and "chunk 0 is 1 byte," in err, f"{name}: 1 byte after the "
               "header", err)


def openssl_name(cipher, mode):
    return f"-{cipher}-{mode}"


def test_raw(d, supported):
    if not shutil.which("openssl"):
        skip("raw vs openssl", "no openssl command")
        return
    for cipher in ("sm4", "aes-128", "aes-192", "aes-256"):
        if cipher not in supported:
            skip(f"raw {cipher} vs openssl enc", "not available in this build")
            continue
        k = key_hex(cipher)
        iv = rbytes(16).hex()
        for mode in ("ecb", "cbc", "ctr"):
            for n in (0, 1, 15, 16, 17, 31, 33, 1000, 100003, 4 * 1048576 + 5):
                for nopad in ((False, True) if mode != "ctr" and n % 16 == 0 else (False,)):
                    pt = rbytes(n)
                    src = d.file("raw.pt", pt)
                    ivk = [] if mode == "ecb" else ["--iv", iv]
                    ivo = [] if mode == "ecb" else ["-iv", iv]
                    padk = ["--nopad"] if nopad else []
                    pado = ["-nopad"] if nopad else []
                    o = subprocess.run(["openssl", "enc", openssl_name(cipher, mode), "-K", k]
                                       + ivo + pado + ["-in", src], capture_output=True)
                    rc, ct, err = run(["encrypt", "--raw", "-c", f"{cipher}-{mode}", "-k", k]
                                      + ivk + padk + [src])
                    label = f"raw {cipher}-{mode}{' nopad' if nopad else ''} {n} bytes"
                    report(rc == 0 and o.returncode == 0 and ct == o.stdout,
                           label + ": kuai encrypt == openssl enc", f"rc={rc} {err}")
                    rc, back, err = run(["decrypt", "--raw", "-c", f"{cipher}-{mode}", "-k", k]
                                        + ivk + padk, o.stdout)
                    report(rc == 0 and back == pt, label + ": kuai decrypt of openssl's", err)
                    ctf = d.file("raw.ct", ct)
                    o = subprocess.run(["openssl", "enc", "-d", openssl_name(cipher, mode), "-K",
                                        k] + ivo + pado + ["-in", ctf], capture_output=True)
                    report(o.returncode == 0 and o.stdout == pt,
                           label + ": openssl decrypt of kuai's", o.stderr.decode())
        # bad padding: decrypting with the wrong key
        rc, ct, _ = run(["encrypt", "--raw", "-c", f"{cipher}-cbc", "-k", k, "--iv", iv],
                        rbytes(1000))
        out = d.file("badpad.out")
        wrong = ("ff" if k[:2] != "ff" else "00") + k[2:]
        rc, _, err = run(["decrypt", "--raw", "-c", f"{cipher}-cbc", "-k", wrong, "--iv", iv,
                          "-o", out], ct)
        # 1 in ~256 wrong keys gives valid-looking padding; this key is fixed
        # by the seed, so the test is deterministic
        report(rc == EXIT_VERIFY and "padding" in err and not os.path.exists(out),
               f"raw {cipher}-cbc: bad padding rejected", f"rc={rc} {err}")
        rc, _, err = run(["decrypt", "--raw", "-c", f"{cipher}-cbc", "-k", k, "--iv", iv],
                         ct[:-3])
        report(rc == EXIT_VERIFY and "blocks" in err, f"raw {cipher}-cbc: truncated input", err)
        # several files: CBC encryption in lockstep, each equal to openssl's
        ind, outd = d.file("lock_in"), d.file("lock_out")
        os.makedirs(ind, exist_ok=True)
        os.makedirs(outd, exist_ok=True)
        for f in os.listdir(outd):
            os.unlink(os.path.join(outd, f))
        sizes = [0, 5, 1048576, 1048576 + 16, 3 * 1048576 + 1, 2500000]
        files = []
        for i, n in enumerate(sizes):
            p = os.path.join(ind, f"f{i}")
            with open(p, "wb") as f:
                f.write(rbytes(n))
            files.append(p)
        rc, _, err = run(["encrypt", "--raw", "-c", f"{cipher}-cbc", "-k", k, "--iv", iv, "-o",
                          outd] + files)
        ok = rc == 0
        for p in files:
            o = subprocess.run(["openssl", "enc", f"-{cipher}-cbc", "-K", k, "-iv", iv, "-in", p],
                               capture_output=True)
            q = os.path.join(outd, os.path.basename(p) + ".enc")
            ok = ok and os.path.exists(q) and open(q, "rb").read() == o.stdout
        report(ok, f"raw {cipher}-cbc: several files in lockstep == openssl", err)
        # per-file keys from a key file
        keys = [key_hex(cipher) for _ in files]
        kf = d.file("keys.txt", ("\n".join(keys) + "\n").encode())
        for f in os.listdir(outd):
            os.unlink(os.path.join(outd, f))
        rc, _, err = run(["encrypt", "--raw", "-c", f"{cipher}-cbc", "--key-file", kf, "--iv", iv,
                          "-o", outd] + files)
        ok = rc == 0
        for p, kk in zip(files, keys):
            o = subprocess.run(["openssl", "enc", f"-{cipher}-cbc", "-K", kk, "-iv", iv, "-in", p],
                               capture_output=True)
            q = os.path.join(outd, os.path.basename(p) + ".enc")
            ok = ok and open(q, "rb").read() == o.stdout
        report(ok, f"raw {cipher}-cbc: one key per file (key file)", err)
        # and back, several files at once
        dec = d.file("lock_dec")
        os.makedirs(dec, exist_ok=True)
        encs = [os.path.join(outd, os.path.basename(p) + ".enc") for p in files]
        rc, _, err = run(["decrypt", "--raw", "-c", f"{cipher}-cbc", "--key-file", kf, "--iv", iv,
                          "-o", dec] + encs)
        ok = rc == 0 and all(open(os.path.join(dec, os.path.basename(p)), "rb").read()
                             == open(p, "rb").read() for p in files)
        report(ok, f"raw {cipher}-cbc: several files decrypted", err)
        shutil.rmtree(dec)
    # the other ciphers round-trip in every raw mode (no openssl peer)
    for cipher in ("ublock-128-128", "ublock-128-256", "ublock-256-256"):
        k = key_hex(cipher)
        bs = 32 if cipher == "ublock-256-256" else 16
        iv = rbytes(bs).hex()
        for mode in ("ecb", "cbc", "ctr"):
            for n in (0, 1, bs - 1, bs, bs + 1, 100003):
                pt = rbytes(n)
                ivk = [] if mode == "ecb" else ["--iv", iv]
                rc1, ct, e1 = run(["encrypt", "--raw", "-c", f"{cipher}-{mode}", "-k", k] + ivk, pt)
                rc2, back, e2 = run(["decrypt", "--raw", "-c", f"{cipher}-{mode}", "-k", k] + ivk, ct)
                exp_len = n if mode == "ctr" else (n // bs + 1) * bs
                report(rc1 == 0 and rc2 == 0 and back == pt and len(ct) == exp_len,
                       f"raw {cipher}-{mode} {n} bytes round trip", e1 + e2)


def xor(a, b):
    return bytes(x ^ y for x, y in zip(a, b))


def stream_model(cipher, mode, k, iv, data, decrypt=False):
    """CFB128 / OFB built from kuai's own ECB and CBC (SP 800-38A's
    definitions), an oracle independent of the library's CFB/OFB code: the
    OFB keystream is the CBC encryption of zero blocks, the CFB keystream the
    ECB encryption of IV || the ciphertext but its last block. For
    encryption the ciphertext is unknown, so this returns None and the
    caller checks the relation with verify_cfb."""
    nb = (len(data) + 15) // 16
    if mode == "ofb":
        rc, ks, err = run(["encrypt", "--raw", "-c", f"{cipher}-cbc", "--nopad", "-k", k, "--iv",
                           iv], bytes(16 * nb))
        return xor(data, ks) if rc == 0 else None
    if not decrypt:
        return None
    ct = data
    rc, ks, err = run(["encrypt", "--raw", "-c", f"{cipher}-ecb", "--nopad", "-k", k],
                      bytes.fromhex(iv) + ct[:16 * (nb - 1)])
    return xor(ct, ks) if rc == 0 else None


def test_raw_stream(d, supported):
    """--raw CFB (CFB128) and OFB: byte-identical to openssl enc for AES and
    SM4, both ways; uBlock (no openssl peer) against CFB/OFB built from
    kuai's ECB/CBC and against the reference backend; the refusals."""
    have_openssl = shutil.which("openssl") is not None
    lengths = (0, 1, 15, 16, 17, 33, 4096 + 7)
    for cipher in ("sm4", "aes-128", "aes-192", "aes-256"):
        if cipher not in supported or not have_openssl:
            skip(f"raw {cipher} cfb/ofb vs openssl enc", "not available here")
            continue
        k = key_hex(cipher)
        iv = rbytes(16).hex()
        for mode in ("cfb", "ofb"):
            big = [4 * 1048576 + 7] if cipher in ("sm4", "aes-128") else []
            for n in lengths + tuple(big):
                pt = rbytes(n)
                src = d.file("st.pt", pt)
                label = f"raw {cipher}-{mode} {n} bytes"
                o = subprocess.run(["openssl", "enc", f"-{cipher}-{mode}", "-K", k, "-iv", iv,
                                    "-nopad", "-in", src], capture_output=True)
                # the 4 MiB + 7 case goes through a pipe: read in pieces, the
                # IV carried across them
                args = ["encrypt", "--raw", "-c", f"{cipher}-{mode}", "-k", k, "--iv", iv]
                rc, ct, err = run(args, pt) if big and n == big[0] else run(args + [src])
                report(rc == 0 and o.returncode == 0 and ct == o.stdout and len(ct) == n,
                       label + ": kuai encrypt == openssl enc", f"rc={rc} {err}")
                rc, back, err = run(["decrypt", "--raw", "-c", f"{cipher}-{mode}", "-k", k,
                                     "--iv", iv], o.stdout)
                report(rc == 0 and back == pt, label + ": kuai decrypt of openssl's", err)
                ctf = d.file("st.ct", ct)
                o2 = subprocess.run(["openssl", "enc", "-d", f"-{cipher}-{mode}", "-K", k, "-iv",
                                     iv, "-nopad", "-in", ctf], capture_output=True)
                report(o2.returncode == 0 and o2.stdout == pt, label + ": openssl decrypt of kuai's",
                       o2.stderr.decode())
                if n in (17, 33):
                    # no padding, so no way to see a truncation: what is
                    # left decrypts to the plaintext's prefix, as in openssl
                    t = ct[:-3]
                    rc, back, err = run(["decrypt", "--raw", "-c", f"{cipher}-{mode}", "-k", k,
                                         "--iv", iv], t)
                    o3 = subprocess.run(["openssl", "enc", "-d", f"-{cipher}-{mode}", "-K", k,
                                         "-iv", iv, "-in", d.file("st.tr", t)], capture_output=True)
                    report(rc == 0 and back == pt[:-3] == o3.stdout,
                           label + ": truncated input decrypts to the prefix, as openssl's", err)
        # refusals, each before any output exists
        out = d.file("st.out")
        bs_iv = {"15 bytes": rbytes(15).hex(), "17 bytes": rbytes(17).hex(), "odd hex": iv[:-1]}
        for what, bad in bs_iv.items():
            for cmd in ("encrypt", "decrypt"):
                rc, _, err = run([cmd, "--raw", "-c", f"{cipher}-cfb", "-k", k, "--iv", bad, "-o",
                                  out], b"x" * 40)
                report(rc == EXIT_USAGE and "--iv" in err and not os.path.exists(out),
                       f"raw {cipher}-cfb {cmd}: IV of {what} refused", f"rc={rc} {err}")
        rc, _, err = run(["encrypt", "--raw", "-c", f"{cipher}-ofb", "-k", k, "-o", out], b"x")
        report(rc == EXIT_USAGE and "--iv" in err and not os.path.exists(out),
               f"raw {cipher}-ofb: missing IV refused", f"rc={rc} {err}")
        klen = CIPHERS[cipher]
        for bad in (rbytes(klen - 1).hex(), rbytes(klen + 8 if klen < 32 else 8).hex()):
            rc, _, err = run(["encrypt", "--raw", "-c", f"{cipher}-ofb", "-k", bad, "--iv", iv,
                              "-o", out], b"x")
            report(rc == EXIT_USAGE and "key" in err and not os.path.exists(out),
                   f"raw {cipher}-ofb: key of {len(bad) // 2} bytes refused", f"rc={rc} {err}")
    # several files, one output each (the per-file path, not CBC's lockstep)
    if "sm4" in supported and have_openssl:
        k, iv = key_hex("sm4"), rbytes(16).hex()
        ind, outd = d.file("st_in"), d.file("st_outd")
        os.makedirs(ind, exist_ok=True)
        os.makedirs(outd, exist_ok=True)
        files = []
        for i, n in enumerate((0, 5, 1048576 + 3)):
            files.append(d.file(f"st_in/g{i}", rbytes(n)))
        rc, _, err = run(["encrypt", "--raw", "-c", "sm4-cfb", "-k", k, "--iv", iv, "-o", outd]
                         + files)
        ok = rc == 0
        for p in files:
            o = subprocess.run(["openssl", "enc", "-sm4-cfb", "-K", k, "-iv", iv, "-in", p],
                               capture_output=True)
            q = os.path.join(outd, os.path.basename(p) + ".enc")
            ok = ok and os.path.exists(q) and open(q, "rb").read() == o.stdout
        report(ok, "raw sm4-cfb: several files, each == openssl", err)
    # every 128-bit-block cipher against the ECB/CBC-built model and the
    # reference backend (uBlock has no openssl peer)
    for cipher in ("ublock-128-128", "ublock-128-256", "sm4", "aes-128", "aes-256"):
        if cipher not in supported:
            skip(f"raw {cipher} cfb/ofb model", "not available in this build")
            continue
        k = key_hex(cipher)
        iv = rbytes(16).hex()
        for mode in ("cfb", "ofb"):
            # AES and SM4 met openssl above: a few lengths suffice here
            ublock = cipher.startswith("ublock")
            for n in lengths + (100003,) if ublock else (0, 17, 4096 + 7):
                pt = rbytes(n)
                label = f"raw {cipher}-{mode} {n} bytes"
                rc1, ct, e1 = run(["encrypt", "--raw", "-c", f"{cipher}-{mode}", "-k", k, "--iv",
                                   iv], pt)
                rc2, back, e2 = run(["decrypt", "--raw", "-c", f"{cipher}-{mode}", "-k", k, "--iv",
                                     iv], ct)
                report(rc1 == 0 and rc2 == 0 and back == pt and len(ct) == n,
                       label + ": round trip", e1 + e2)
                if mode == "ofb":
                    want = stream_model(cipher, mode, k, iv, pt)
                    report(ct == want, label + ": == OFB built from kuai's CBC", "differs")
                else:
                    # decrypting kuai's ciphertext with the model gives the
                    # plaintext: then C_i = P_i ^ E(C_i-1) holds for every
                    # block, which defines CFB's ciphertext
                    got = stream_model(cipher, mode, k, iv, ct, decrypt=True)
                    report(got == pt, label + ": == CFB built from kuai's ECB", "differs")
                rc3, ct_ref, e3 = run(["encrypt", "--raw", "-c", f"{cipher}-{mode}", "-k", k,
                                       "--iv", iv], pt, {"KUAI_BACKEND": "ref"})
                rc4, back_ref, e4 = run(["decrypt", "--raw", "-c", f"{cipher}-{mode}", "-k", k,
                                         "--iv", iv], ct, {"KUAI_BACKEND": "ref"})
                report(rc3 == 0 and rc4 == 0 and ct_ref == ct and back_ref == pt,
                       label + ": == the ref backend's", e3 + e4)
    k = key_hex("sm4")
    iv = "00" * 16
    for args, needle in (
            (["encrypt", "--raw", "-c", "ublock-256-256-cfb", "-k", key_hex("ublock-256-256"),
              "--iv", "00" * 32], "128-bit"),
            (["decrypt", "--raw", "-c", "ublock-256-256-ofb", "-k", key_hex("ublock-256-256"),
              "--iv", "00" * 32], "128-bit"),
            (["encrypt", "--raw", "-c", "sm4-cfb", "-k", k, "--iv", iv, "--nopad"], "never padded"),
            (["decrypt", "--raw", "-c", "aes-128-ofb", "-k", k, "--iv", iv, "--nopad"],
             "never padded"),
            (["encrypt", "--raw", "-c", "aes-256-xts", "-k", key_hex("aes-256") * 2, "--iv", iv],
             "XTS"),
            (["encrypt", "--raw", "-c", "sm4-cfb8", "-k", k, "--iv", iv], "sm4-cfb8")):
        out = d.file("st.out")
        rc, _, err = run(args + ["-o", out], b"y" * 20)
        report(rc == EXIT_USAGE and needle in err and err.count("\n") <= 2
               and not os.path.exists(out), f"error: {' '.join(args[:4])} ...", f"rc={rc} {err!r}")


def test_overwrite(d):
    k = key_hex("sm4")
    src = d.file("ow.pt", b"secret data")
    dst = d.file("ow.kuai", b"precious")
    rc, _, err = run(["encrypt", "-c", "sm4", "-k", k, "-o", dst, src])
    report(rc == EXIT_IO and "exists" in err and d.read("ow.kuai") == b"precious",
           "encrypt refuses to overwrite", f"rc={rc} {err}")
    rc, _, err = run(["encrypt", "-c", "sm4", "-k", k, "-o", dst, "--force", src])
    report(rc == 0 and d.read("ow.kuai") != b"precious", "encrypt --force overwrites", err)
    plain = d.file("ow.plain", b"do not touch")
    rc, _, err = run(["decrypt", "-k", k, "-o", plain, dst])
    report(rc == EXIT_IO and d.read("ow.plain") == b"do not touch",
           "decrypt refuses to overwrite", f"rc={rc} {err}")
    rc, _, err = run(["decrypt", "-k", k, "-o", plain, "-f", dst])
    report(rc == 0 and d.read("ow.plain") == b"secret data", "decrypt -f overwrites", err)
    # a failed decryption with --force leaves the old file alone
    rc, _, err = run(["decrypt", "-k", k, "-o", plain, "-f"], flip(open(dst, "rb").read(), 70))
    report(rc == EXIT_VERIFY and d.read("ow.plain") == b"secret data",
           "failed decrypt --force keeps the old file", f"rc={rc}")
    # several inputs into a directory
    outd = d.file("ow_dir")
    os.makedirs(outd, exist_ok=True)
    a, b = d.file("a.txt", b"aaa"), d.file("b.txt", b"bbb")
    with open(os.path.join(outd, "b.txt.kuai"), "wb") as f:
        f.write(b"old")
    rc, _, err = run(["encrypt", "-c", "sm4", "-k", k, "-o", outd, a, b])
    report(rc == EXIT_IO and not os.path.exists(os.path.join(outd, "a.txt.kuai"))
           and "b.txt.kuai" in err, "several inputs: an existing output stops all first",
           f"rc={rc} {err}")
    rc, _, err = run(["encrypt", "-c", "sm4", "-k", k, "-o", outd, "-f", a, b])
    dec = d.file("ow_dec")
    os.makedirs(dec, exist_ok=True)
    rc2, _, err2 = run(["decrypt", "-k", k, "-o", dec, os.path.join(outd, "a.txt.kuai"),
                        os.path.join(outd, "b.txt.kuai")])
    report(rc == 0 and rc2 == 0 and open(os.path.join(dec, "a.txt"), "rb").read() == b"aaa"
           and open(os.path.join(dec, "b.txt"), "rb").read() == b"bbb",
           "several inputs with -o DIR", err + err2)


def test_interrupted(d):
    """Ctrl-C (SIGINT) or SIGTERM while the output is being written leaves
    no temporary file behind."""
    import signal
    import time
    k = key_hex("sm4")
    rc, ct, err = run(["encrypt", "-c", "sm4", "-k", k], b"interrupted" * 1000)
    assert rc == 0, err
    for sig in (signal.SIGINT, signal.SIGTERM):
        sub = d.file(f"sig{int(sig)}")
        os.makedirs(sub, exist_ok=True)
        out = os.path.join(sub, "out")
        p = subprocess.Popen([KUAI, "decrypt", "-k", k, "-o", out], stdin=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, start_new_session=True)
        # the header and part of a chunk: the temporary file is made once
        # the header verifies, and the rest is awaited
        p.stdin.write(ct[:100])
        p.stdin.flush()
        seen = False
        # until the temporary file exists (input still open); the budget
        # is generous for the sanitizer build on a loaded machine
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if leftovers(sub):
                seen = True
                break
            time.sleep(0.01)
        p.send_signal(sig)
        p.wait()
        p.stdin.close()
        report(seen and p.returncode == -sig and not leftovers(sub) and not os.path.exists(out),
               f"signal {sig.name} removes the temporary file",
               f"seen={seen} rc={p.returncode} left={os.listdir(sub)}")


def test_killed_during_scrypt(d):
    """SIGKILL, which no handler sees, while scrypt runs leaves no temporary
    file: the output's temporary file is made only once the key is derived
    (it used to be made first, and stayed, empty, after a kill)."""
    if mem_available_kib() < 2 * 1024 * 1024:
        skip("SIGKILL during scrypt", "less than 2 GiB available for its 512 MiB")
        return
    import signal
    import time
    sub = d.file("kill9")
    os.makedirs(sub, exist_ok=True)
    out = os.path.join(sub, "out")
    src = d.file("kill9.pt", b"killed while the key is derived")
    env = dict(os.environ, KUAI_PASSWORD="pw")
    env.pop("KUAI_BACKEND", None)
    # N=2^19, r=8: 512 MiB and about a second of scrypt; its memory shows it
    # running. A session of its own, no terminal: the password comes from
    # KUAI_PASSWORD, not /dev/tty (whose echo a SIGKILL would leave off).
    p = subprocess.Popen([KUAI, "encrypt", "-c", "sm4", "-p", "--scrypt-log2n", "19", "-o", out,
                          src], stdin=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
                         start_new_session=True)
    rss = 0
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and p.poll() is None:
        try:
            with open(f"/proc/{p.pid}/status") as f:
                rss = max([int(l.split()[1]) for l in f if l.startswith("VmRSS:")] + [0])
        except (OSError, ValueError):
            pass
        if rss > 128 * 1024:
            break
        time.sleep(0.002)
    in_scrypt = p.poll() is None and rss > 128 * 1024
    p.kill()
    p.wait()
    report(in_scrypt and not leftovers(sub) and not os.path.exists(out),
           "SIGKILL during scrypt leaves no temporary file",
           f"in_scrypt={in_scrypt} rss={rss} KiB left={os.listdir(sub)}")


def test_flag_values(d):
    """A flag that takes no value refuses one (exit 1): --force=no used to
    overwrite, --raw=no to switch raw mode on."""
    k = key_hex("sm4")
    src = d.file("fv.pt", b"flag values")
    dst = d.file("fv.out", b"keep me")
    for flag in ("--force=no", "--quiet=0", "--raw=no", "--nopad=no", "--no-pad=0",
                 "--help=x", "-f=1"):
        dst = d.file("fv.out", b"keep me")
        rc, out, err = run(["encrypt", "-c", "sm4", "-k", k, flag, "-o", dst, src])
        report(rc == EXIT_USAGE and flag.split("=")[0] in err and d.read("fv.out") == b"keep me"
               and err.count("\n") == 1 and not out,
               f"{flag} refused: the flag takes no value", f"rc={rc} {err!r}")


def test_options_twice(d):
    """An option that takes a value, given twice, is refused (exit 1,
    nothing written): the last used to win silently (two keys in one
    command line). --scrypt-log2n goes with encrypt --password only: with
    --key, --raw or on decrypt it used to be taken and ignored."""
    k = key_hex("sm4")
    k2 = "ff" + k[2:]
    src = d.file("twice.pt", b"options twice")
    out = d.file("twice.out")
    iv = "00" * 16
    for label, args in [
            ("-k twice", ["encrypt", "-c", "sm4", "-k", k, "-k", k2, "-o", out, src]),
            ("-c twice", ["encrypt", "-c", "sm4", "-c", "aes-128", "-k", k, "-o", out, src]),
            ("-o twice", ["encrypt", "-c", "sm4", "-k", k, "-o", out, "-o", out + "2", src]),
            ("--iv twice", ["encrypt", "--raw", "-c", "sm4-cbc", "-k", k, "--iv", iv, "--iv", iv,
                            "-o", out, src]),
            ("-j twice", ["encrypt", "-c", "sm4", "-k", k, "-j", "1", "-j2", "-o", out, src]),
            ("--scrypt-log2n twice", ["encrypt", "-c", "sm4", "-p", "--scrypt-log2n", "10",
                                      "--scrypt-log2n", "11", "-o", out, src]),
            ("--scrypt-log2n with --key", ["encrypt", "-c", "sm4", "-k", k, "--scrypt-log2n",
                                           "10", "-o", out, src]),
            ("--scrypt-log2n on decrypt", ["decrypt", "-p", "--scrypt-log2n", "10", "-o", out,
                                           src])]:
        rc, o_, err = run(args, None, {"KUAI_PASSWORD": "pw"})
        report(rc == EXIT_USAGE and not os.path.exists(out) and not o_
               and ("twice" in err or "goes with encrypt --password" in err),
               f"{label}: refused", f"rc={rc} {err!r}")


def test_short_option_values(d):
    """A short option's value is the next argument, whatever it holds: the
    long name's length was used to look for "=" after "-o", reading into the
    next argument ("-o abcde=zzz" took "zzz" as the output; "-j 1 -o a=2",
    "2" as the thread count)."""
    k = key_hex("sm4")
    sub, src = d.subdir("shortopt", b"short options")
    for label, args, out in [("-o abcde=zzz", ["-o", "abcde=zzz"], "abcde=zzz"),
                             ("-j 1 -o a=2", ["-j", "1", "-o", "a=2"], "a=2")]:
        p = subprocess.run([KUAI, "encrypt", "-c", "sm4", "-k", k] + args + ["in.pt"], cwd=sub,
                           capture_output=True, start_new_session=True)
        err = p.stderr.decode(errors="replace")
        ok = p.returncode == 0 and os.path.exists(os.path.join(sub, out))
        if ok:
            with open(os.path.join(sub, out), "rb") as f:
                ok = ref(f.read(), key=k) == b"short options"
        report(ok, f"short option value: {label}", f"rc={p.returncode} {err!r} {os.listdir(sub)}")


def test_closed_std(d):
    """Standard input or output closed when kuai starts (<&-, >&-) is an
    error, exit 2: a closed descriptor 0 used to be the temporary output
    file's (mkostemp), so kuai encrypted its own empty output, exit 0.
    Inputs and outputs named on the command line work as ever."""
    k = key_hex("sm4")
    sub, src = d.subdir("closedstd", b"closed descriptors")
    out = os.path.join(sub, "out.kuai")
    for label, args, close, code, needle in [
            ("<&-: standard input", ["-o", out], (0,), EXIT_IO, "standard input"),
            (">&-: standard output", [src], (1,), EXIT_IO, "standard output"),
            ("<&- >&- with files named", ["-o", out, src], (0, 1), 0, "")]:
        p = subprocess.run([KUAI, "encrypt", "-q", "-c", "sm4", "-k", k] + args,
                           stderr=subprocess.PIPE, start_new_session=True,
                           preexec_fn=lambda c=close: [os.close(fd) for fd in c])
        err = p.stderr.decode(errors="replace")
        ok = p.returncode == code and needle in err and leftovers(sub) == []
        if ok and code:
            ok = not os.path.exists(out) and err.count("\n") == 1
        elif ok:
            with open(out, "rb") as f:
                ok = ref(f.read(), key=k) == b"closed descriptors"
        report(ok, f"closed at start, {label}: exit {code}",
               f"rc={p.returncode} {err!r} {os.listdir(sub)}")
        if os.path.exists(out):
            os.unlink(out)


def test_one_file_two_ways(d):
    """What is one file, pipe or stream under two names or roles is refused
    before anything is written: two outputs through a link, a FIFO as input
    and output, a --key-file that is the input's pipe, a closed standard
    input named by path."""
    k = key_hex("sm4")
    sub = d.file("twoways")
    os.makedirs(os.path.join(sub, "x"))
    os.makedirs(os.path.join(sub, "o"))
    f1 = os.path.join(sub, "x", "f")
    g = os.path.join(sub, "g")
    for path, data in ((f1, b"one"), (g, b"two")):
        with open(path, "wb") as fh:
            fh.write(data)
    o = os.path.join(sub, "o")
    with open(os.path.join(o, "f.kuai"), "wb") as fh:
        fh.write(b"old")
    os.symlink("f.kuai", os.path.join(o, "g.kuai"))
    rc, out, err = run(["encrypt", "-q", "-f", "-c", "sm4", "-k", k, "-o", o, f1, g])
    with open(os.path.join(o, "f.kuai"), "rb") as fh:
        kept = fh.read() == b"old"
    report(rc == EXIT_USAGE and "both be written" in err and kept and leftovers(o) == [],
           "two outputs that are one file through a link: refused, nothing written", err)
    fifo = os.path.join(sub, "p")
    os.mkfifo(fifo)
    try:
        p = subprocess.run([KUAI, "encrypt", "-q", "-c", "sm4", "-k", k, "-o", fifo, fifo],
                           capture_output=True, start_new_session=True, timeout=20)
        rc, err = p.returncode, p.stderr.decode(errors="replace")
    except subprocess.TimeoutExpired:
        rc, err = None, "hung"
    report(rc == EXIT_USAGE and "same file" in err, "a FIFO as input and output: refused", err)
    kf = os.path.join(sub, "key.txt")
    with open(kf, "w") as fh:
        fh.write(k + "\n")
    rc, out, err = run(["encrypt", "-q", "-c", "sm4", "--key-file", "/dev/stdin"],
                       (k + "\n").encode() + b"data")
    report(rc == EXIT_USAGE and "same pipe" in err and out == b"",
           "--key-file /dev/stdin with standard input the input: refused", err)
    for name in ("/dev/stdin", "/dev/fd/0", "/proc/self/fd/0"):
        out_path = os.path.join(sub, "closed.kuai")
        p = subprocess.run([KUAI, "encrypt", "-q", "-c", "sm4", "--key-file", kf, "-o", out_path,
                            name], stderr=subprocess.PIPE, start_new_session=True,
                           preexec_fn=lambda: os.close(0))
        err = p.stderr.decode(errors="replace")
        report(p.returncode == EXIT_IO and "closed" in err and not os.path.exists(out_path),
               f"{name} as input, standard input closed: exit 2, nothing written",
               f"rc={p.returncode} {err!r}")


def test_dash_and_slash_outputs(d):
    """-o - is standard output (it made a file named "-"); -o missing/ is
    refused before any input is opened (it failed only when the output was
    moved into place, after the work)."""
    k = key_hex("sm4")
    sub = d.file("dashslash")
    os.makedirs(sub)
    p = subprocess.run([KUAI, "encrypt", "-q", "-c", "sm4", "-k", k, "-o", "-"], input=b"dash",
                       capture_output=True, cwd=sub, start_new_session=True)
    report(p.returncode == 0 and ref(p.stdout, key=k) == b"dash" and os.listdir(sub) == [],
           "-o - writes to standard output, no file named -", p.stderr.decode(errors="replace"))
    fifo = os.path.join(sub, "nowriter")
    os.mkfifo(fifo)
    try:
        p = subprocess.run([KUAI, "encrypt", "-q", "-c", "sm4", "-k", k, "-o",
                            os.path.join(sub, "missing") + "/", fifo], capture_output=True,
                           start_new_session=True, timeout=10)
        rc, err = p.returncode, p.stderr.decode(errors="replace")
    except subprocess.TimeoutExpired:
        rc, err = None, "opened the input (a FIFO with no writer) first"
    report(rc == EXIT_IO and "no such directory" in err,
           "-o missing/: exit 2 before any input is opened", err)


def test_names_escaped(d):
    """A file name's control characters reach the terminal as \\xHH: a name
    holding an escape sequence or a newline printed them raw (a recoloured
    terminal, a forged second message)."""
    k = key_hex("sm4")
    name = os.path.join(d.path, "evil\x1b[31mred\nkuai: all good\x07")
    rc, out, err = run(["encrypt", "-q", "-c", "sm4", "-k", k, name])
    report(rc == EXIT_IO and "\x1b" not in err and "\x07" not in err and err.count("\n") == 1
           and "evil\\x1b[31mred\\x0akuai: all good\\x07" in err,
           "a file name's control characters are escaped in messages", repr(err))


def test_stdout_errors(d):
    """--help, --version, info, selftest and speed --help whose standard
    output is full or closed: exit 2 and a message, not 0."""
    for args in (["--version"], ["--help"], ["help", "info"], ["info"], ["selftest"],
                 ["speed", "--help"]):
        with open("/dev/full", "wb") as full:
            p = subprocess.run([KUAI] + args, stdout=full, stderr=subprocess.PIPE,
                               start_new_session=True)
        err = p.stderr.decode(errors="replace")
        report(p.returncode == EXIT_IO and "standard output" in err,
               f"kuai {' '.join(args)} > /dev/full: exit 2", f"rc={p.returncode} {err!r}")
        p = subprocess.run([KUAI] + args, stderr=subprocess.PIPE, start_new_session=True,
                           preexec_fn=lambda: os.close(1))
        err = p.stderr.decode(errors="replace")
        report(p.returncode == EXIT_IO and "closed" in err,
               f"kuai {' '.join(args)} >&-: exit 2", f"rc={p.returncode} {err!r}")


def test_same_file_stdout(d):
    """Standard output that is an input file is refused like -o naming it
    (exit 1, nothing written): `kuai encrypt p 1<>p` overwrote p as it
    read it, exit 0, and `f >> f` encrypted its own output forever. The
    key file is no output either (--force replaced the key)."""
    k = key_hex("sm4")
    sub = d.file("samestdout")
    os.makedirs(sub, exist_ok=True)
    p_ = os.path.join(sub, "p")
    kf = os.path.join(sub, "key.txt")
    ct = os.path.join(sub, "p.kuai")
    with open(kf, "w") as f:
        f.write(k + "\n")
    rc, _, err = run(["encrypt", "-c", "sm4", "-k", k, "-o", ct, d.file("sfs.pt", b"ct")])
    cases = [  # label, arguments, standard input's file, standard output's file and mode
        ("p 1<>p", ["encrypt", "-k", k, "-c", "sm4", "p"], None, "p", "r+b"),
        ("p >> p", ["encrypt", "-k", k, "-c", "sm4", "p"], None, "p", "ab"),
        ("< p >> p", ["encrypt", "-k", k, "-c", "sm4"], "p", "p", "ab"),
        ("- < p 1<>p", ["encrypt", "-k", k, "-c", "sm4", "-"], "p", "p", "r+b"),
        ("decrypt c >> c", ["decrypt", "-k", k, "p.kuai"], None, "p.kuai", "ab"),
        ("--key-file key.txt -f -o key.txt", ["encrypt", "-c", "sm4", "--key-file", "key.txt",
                                             "-f", "-o", "key.txt", "p"], None, None, None),
        ("--key-file key.txt >> key.txt", ["encrypt", "-c", "sm4", "--key-file", "key.txt", "p"],
         None, "key.txt", "ab"),
    ]
    for label, args, stdin, stdout, mode in cases:
        with open(p_, "wb") as f:
            f.write(b"plaintext p")
        before = {n: open(os.path.join(sub, n), "rb").read() for n in ("p", "key.txt", "p.kuai")}
        fin = open(os.path.join(sub, stdin), "rb") if stdin else subprocess.DEVNULL
        fout = open(os.path.join(sub, stdout), mode) if stdout else subprocess.DEVNULL
        try:
            p = subprocess.run([KUAI] + args[:1] + ["-q"] + args[1:], cwd=sub, stdin=fin,
                               stdout=fout, stderr=subprocess.PIPE, start_new_session=True,
                               timeout=30)
            rc, err = p.returncode, p.stderr.decode(errors="replace")
        except subprocess.TimeoutExpired:
            rc, err = None, "timed out (reading its own output?)"
        finally:
            for f in (fin, fout):
                if f is not subprocess.DEVNULL:
                    f.close()
        after = {n: open(os.path.join(sub, n), "rb").read() for n in before}
        report(rc == EXIT_USAGE and "same file" in err and after == before
               and leftovers(sub) == [], f"{label}: refused, nothing written",
               f"rc={rc} {err!r}")
    # standard output appending to another regular file still works
    other = os.path.join(sub, "log")
    with open(other, "wb") as f:
        f.write(b"earlier ")
    with open(other, "ab") as fout:
        p = subprocess.run([KUAI, "encrypt", "-q", "-c", "sm4", "-k", k, "p"], cwd=sub,
                           stdout=fout, stderr=subprocess.PIPE, start_new_session=True)
    with open(other, "rb") as f:
        got = f.read()
    report(p.returncode == 0 and got.startswith(b"earlier ")
           and ref(got[8:], key=k) == b"plaintext p", "p >> log: appended", repr(p.stderr))


def test_force_output_is_other_input(d):
    """With several inputs and --force, an output that is another input
    (`-o d b d/b.kuai`: b's output is d/b.kuai) is refused, exit 1, every
    file as it was: the check compared each output with its own input
    only, and d/b.kuai was replaced by b's ciphertext (exit 0). Both
    paths: the container's and --raw CBC's lockstep."""
    k = key_hex("sm4")
    sub = d.file("force-other-input")
    outd = os.path.join(sub, "d")
    os.makedirs(outd, exist_ok=True)
    cases = [  # label, arguments, the input that is an output
        ("container", ["encrypt", "-c", "sm4", "-k", k], "d/b.kuai"),
        ("container, that input first", ["encrypt", "-c", "sm4", "-k", k], "d/b.kuai", True),
        ("--raw cbc lockstep", ["encrypt", "--raw", "-c", "sm4-cbc", "-k", k, "--iv", "00" * 16],
         "d/b.enc"),
        ("--raw ctr", ["encrypt", "--raw", "-c", "sm4-ctr", "-k", k, "--iv", "00" * 16],
         "d/b.enc"),
    ]
    for label, args, victim, *first in cases:
        files = {"b": b"hello", victim: b"precious, not an output"}
        for n, data in files.items():
            with open(os.path.join(sub, n), "wb") as f:
                f.write(data)
        inputs = [victim, "b"] if first else ["b", victim]
        p = subprocess.run([KUAI] + args[:1] + ["-q"] + args[1:] + ["-f", "-o", "d"] + inputs,
                           cwd=sub, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, start_new_session=True, timeout=30)
        err = p.stderr.decode(errors="replace")
        kept = all(open(os.path.join(sub, n), "rb").read() == data for n, data in files.items())
        report(p.returncode == EXIT_USAGE and "same file" in err and kept
               and sorted(os.listdir(outd)) == [os.path.basename(victim)]
               and leftovers(sub) == [], f"-f -o d b {victim} ({label}): refused, input kept",
               f"rc={p.returncode} {err!r} {os.listdir(outd)}")
        for n in files:
            os.unlink(os.path.join(sub, n))


def test_named_fds(d):
    """-o /dev/stdout, /dev/fd/N or /proc/self/fd/N is written through that
    descriptor, never replaced, no --force needed (docs/cli.md's table):
    with standard output a regular file it was refused without -f, and with
    -f the file was replaced (`>> log` lost its content). A name of a
    descriptor kuai was not started with is refused (exit 2): /dev/fd/3
    was kuai's own input, replaced under -f."""
    k = key_hex("sm4")
    sub, src = d.subdir("namedfd", b"named descriptors")
    log = os.path.join(sub, "log")
    for name, fd in [("/dev/stdout", 1), ("/dev/fd/1", 1), ("/proc/self/fd/1", 1),
                     ("/dev/fd/3", 3), ("/proc/self/fd/3", 3)]:
        for force in ([], ["-f"]):
            with open(log, "wb") as f:
                f.write(b"earlier ")
            with open(log, "ab") as f:
                p = subprocess.run(
                    [KUAI, "encrypt", "-q", "-c", "sm4", "-k", k, "-o", name] + force + [src],
                    stdout=f if fd == 1 else subprocess.DEVNULL, stderr=subprocess.PIPE,
                    pass_fds=(f.fileno(),) if fd == 3 else (), start_new_session=True,
                    preexec_fn=(lambda n=f.fileno(): os.dup2(n, 3)) if fd == 3 else None)
            with open(log, "rb") as f:
                got = f.read()
            report(p.returncode == 0 and got.startswith(b"earlier ")
                   and ref(got[8:], key=k) == b"named descriptors" and leftovers(sub) == [],
                   f"-o {name} {' '.join(force)}: appended through the descriptor",
                   f"rc={p.returncode} {p.stderr!r} {got[:20]!r}")
    # decryption the same way
    ct = os.path.join(sub, "in.kuai")
    run(["encrypt", "-c", "sm4", "-k", k, "-o", ct, src])
    with open(log, "wb") as f:
        f.write(b"earlier ")
    with open(log, "ab") as f:
        p = subprocess.run([KUAI, "decrypt", "-q", "-k", k, "-o", "/dev/stdout", ct], stdout=f,
                           stderr=subprocess.PIPE, start_new_session=True)
    report(p.returncode == 0 and open(log, "rb").read() == b"earlier named descriptors",
           "decrypt -o /dev/stdout >> log: appended", repr(p.stderr))
    # a descriptor kuai was not started with
    p = subprocess.run([KUAI, "encrypt", "-q", "-f", "-c", "sm4", "-k", k, "-o", "/dev/fd/3",
                        src], stderr=subprocess.PIPE, start_new_session=True)
    report(p.returncode == EXIT_IO and b"/dev/fd/3" in p.stderr
           and open(src, "rb").read() == b"named descriptors",
           "-o /dev/fd/3 with no descriptor 3: refused, the input kept", repr(p.stderr))


def wait_tmp(sub, budget=30):
    """Waits until a temporary file exists in sub (kuai blocked on its input)."""
    deadline = time.monotonic() + budget
    while time.monotonic() < deadline:
        if leftovers(sub):
            return True
        time.sleep(0.01)
    return False


def encrypt_from_pipe(d, name, k, **popen):
    """kuai encrypt (key k) of its standard input (a pipe) into d/name/out, started
    and waited for until its temporary file exists: (the process, d/name,
    the output's path, whether the temporary file showed)."""
    sub = d.file(name)
    os.makedirs(sub, exist_ok=True)
    out = os.path.join(sub, "out")
    p = subprocess.Popen([KUAI, "encrypt", "-c", "sm4", "-k", k, "-o", out],
                         stdin=subprocess.PIPE, start_new_session=True, **popen)
    return p, sub, out, wait_tmp(sub)


def test_replaced_output_changed(d):
    """--force replaces an output that was a regular file when the run
    started; by the time the run ends (minutes, for a large input) the name
    may hold something else, and rename replaced whatever it held: a FIFO
    made there meanwhile was replaced by a regular file, exit 0. It is now
    looked at again before any output is moved into place: exit 2, the FIFO
    and every other output left as they were, no temporary file. So is
    another regular file put there meanwhile (say a 0600 one), which the
    output, given the mode of the file found at the start, replaced."""
    k = key_hex("sm4")

    def to_fifo(path):
        os.unlink(path)
        os.mkfifo(path)

    def to_other(path):
        with open(path + ".new", "wb") as f:
            f.write(b"another file")
        os.chmod(path + ".new", 0o600)
        os.replace(path + ".new", path)

    def is_fifo(path):
        return stat.S_ISFIFO(os.lstat(path).st_mode)

    def is_other(path):
        return (open(path, "rb").read() == b"another file"
                and stat.S_IMODE(os.lstat(path).st_mode) == 0o600)

    for i, (what, change, check, needle) in enumerate((
            ("a FIFO", to_fifo, is_fifo, "no longer a regular file"),
            ("another regular file", to_other, is_other, "another file"))):
        sub = d.file(f"changed{i}")
        os.makedirs(sub)
        outs = [os.path.join(sub, n) for n in ("a.kuai", "fifo.kuai")]
        for o in outs:
            with open(o, "wb") as f:
                f.write(b"old output")
            os.chmod(o, 0o644)
        src, fifo = os.path.join(sub, "a"), os.path.join(sub, "fifo")
        with open(src, "wb") as f:
            f.write(b"first input")
        os.mkfifo(fifo)
        # two inputs: a is done (its temporary file waits) while fifo is read
        p = subprocess.Popen([KUAI, "encrypt", "-q", "-f", "-c", "sm4", "-k", k, "-o", sub, src,
                              fifo], stderr=subprocess.PIPE, start_new_session=True)
        with open(fifo, "wb") as w:
            seen = wait_tmp(sub)
            change(outs[0])
            w.write(b"second input")
        rc = p.wait()
        err = p.stderr.read().decode(errors="replace")
        kept = check(outs[0]) and open(outs[1], "rb").read() == b"old output"
        report(seen and rc == EXIT_IO and needle in err and kept and not leftovers(sub),
               f"--force: an output become {what} during the run is not replaced, nor any other",
               f"seen={seen} rc={rc} {err!r} left={os.listdir(sub)}")


def test_directory_swapped(d):
    """The output's directory moved away (or replaced by a symbolic link to
    another) while kuai waits for its input: the temporary file was named
    by its path, so its removal went through the new link or to nothing,
    and the file (0600, a decryption's plaintext) stayed in the moved
    directory, at exit 2 as at a signal. The file is now made, moved and
    removed through a handle on the directory itself; the output is not
    written where its path no longer leads (exit 2), and nothing is left in
    either directory."""
    k = key_hex("sm4")
    for i, (what, link) in enumerate((("moved away", False),
                                      ("replaced by a link to another", True))):
        for end in ("eof", "SIGTERM"):
            p, sub, out, seen = encrypt_from_pipe(d, f"dirswap{i}{end}", k,
                                                  stderr=subprocess.PIPE)
            old, other = sub + ".old", sub + ".other"
            os.rename(sub, old)
            os.makedirs(other)
            if link:
                os.symlink(other, sub)
            if end == "eof":
                p.stdin.write(b"input")
                p.stdin.close()
            else:
                p.send_signal(signal.SIGTERM)
            rc = p.wait()
            if end == "SIGTERM":
                p.stdin.close()
            err = p.stderr.read().decode(errors="replace")
            want_rc = EXIT_IO if end == "eof" else -signal.SIGTERM
            needle = "directory was moved or replaced" if end == "eof" else ""
            clean = not os.listdir(old) and not os.listdir(other)
            report(seen and rc == want_rc and needle in err and clean,
                   f"the output's directory {what} during the run ({end}): "
                   "nothing written, no temporary file left",
                   f"seen={seen} rc={rc} {err!r} old={os.listdir(old)} "
                   f"other={os.listdir(other)}")


def test_write_only_directory(d):
    """An output in a directory its user may write in but not list (mode
    0300) is made there, as mkostemp made it: the handle kuai holds on the
    directory must not need read permission (O_RDONLY did: exit 2). As
    nobody when root, whom permissions do not stop."""
    k = key_hex("sm4")
    sub = d.file("wonly")
    os.makedirs(sub)
    src = os.path.join(sub, "in")
    with open(src, "wb") as f:
        f.write(b"into a write-only directory")
    box = os.path.join(sub, "box")
    os.makedirs(box)
    exe, pre = KUAI, None
    if os.geteuid() == 0:
        for p_ in (d.path, sub):
            os.chmod(p_, 0o755)
        os.chmod(src, 0o644)
        os.chown(box, 65534, 65534)
        exe = os.path.join(sub, "kuai-as-nobody")
        shutil.copy(KUAI, exe)
        pre = lambda: (os.setgroups([]), os.setgid(65534), os.setuid(65534))
    os.chmod(box, 0o300)
    out = os.path.join(box, "out")
    p = subprocess.run([exe, "encrypt", "-q", "-c", "sm4", "-k", k, "-o", out, src],
                       capture_output=True, start_new_session=True, preexec_fn=pre)
    os.chmod(box, 0o700)
    ok = p.returncode == 0 and os.path.exists(out) and not leftovers(box)
    if ok:
        with open(out, "rb") as f:
            ok = ref(f.read(), key=k) == b"into a write-only directory"
    report(ok, "an output in a 0300 directory (writable, not readable) is made",
           f"rc={p.returncode} {p.stderr!r} {os.listdir(box)}")


def test_many_output_directories(d):
    """Outputs waiting in many directories (with -f, outputs that are links
    to files in as many directories) under a small open-file limit: each
    waiting output holds a handle on its directory, and with more
    directories than the limit allows the run failed (too many open files),
    where outputs named by path had worked. Past half the limit they go by
    path again; the run must succeed and replace every target."""
    import resource
    k = key_hex("sm4")
    sub = d.file("manydirs")
    out_dir = os.path.join(sub, "out")
    os.makedirs(out_dir)
    inputs, targets = [], []
    for i in range(24):
        src = os.path.join(sub, f"in{i}")
        with open(src, "wb") as f:
            f.write(b"input %d" % i)
        tdir = os.path.join(sub, f"t{i}")
        os.makedirs(tdir)
        tgt = os.path.join(tdir, "target")
        with open(tgt, "wb") as f:
            f.write(b"old")
        os.symlink(tgt, os.path.join(out_dir, f"in{i}.kuai"))
        inputs.append(src)
        targets.append(tgt)
    p = subprocess.run([KUAI, "encrypt", "-q", "-f", "-c", "sm4", "-k", k, "-o", out_dir] + inputs,
                       capture_output=True, start_new_session=True,
                       preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (20, 20)))
    ok = p.returncode == 0
    for i, tgt in enumerate(targets):
        with open(tgt, "rb") as f:
            ok = ok and ref(f.read(), key=k) == b"input %d" % i
        ok = ok and not leftovers(os.path.dirname(tgt))
    report(ok, "24 outputs in 24 directories under an open-file limit of 20",
           f"rc={p.returncode} {p.stderr!r}")


def test_ignored_signals(d):
    """A signal ignored by the caller (nohup, trap '' INT) stays ignored:
    kuai used to install its clean-up handler over SIG_IGN, so a nohup'd
    run died of the SIGHUP that nohup was there to ignore."""
    k = key_hex("sm4")
    for sig in (signal.SIGHUP, signal.SIGINT, signal.SIGTERM):
        p, sub, out, seen = encrypt_from_pipe(
            d, f"ign{int(sig)}", k, stderr=subprocess.PIPE,
            preexec_fn=lambda s=sig: signal.signal(s, signal.SIG_IGN))
        p.send_signal(sig)
        time.sleep(0.2)
        try:
            p.stdin.write(b"still here")
            p.stdin.close()
        except BrokenPipeError:
            pass
        rc = p.wait()
        err = p.stderr.read().decode(errors="replace")
        ok = seen and rc == 0 and os.path.exists(out) and not leftovers(sub)
        if ok:
            with open(out, "rb") as f:
                ok = ref(f.read(), key=k) == b"still here"
        report(ok, f"{sig.name} ignored by the caller stays ignored",
               f"seen={seen} rc={rc} {err!r} left={os.listdir(sub)}")


def test_more_signals(d):
    """Every signal whose default action ends the process removes the
    temporary file first (SIGQUIT is Ctrl-\\, SIGXCPU ulimit -t, SIGALRM
    and SIGUSR1 a timer or a kill): only INT, TERM, HUP and PIPE did. A
    file size limit (ulimit -f) is a write error, exit 2, not a SIGXFSZ
    that left the temporary file."""
    import resource
    k = key_hex("sm4")
    for sig in (signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2, signal.SIGALRM,
                signal.SIGXCPU, signal.SIGVTALRM, signal.SIGPROF):
        p, sub, out, seen = encrypt_from_pipe(
            d, f"more{int(sig)}", k, stderr=subprocess.DEVNULL,
            preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_CORE, (0, 0)))
        p.send_signal(sig)
        rc = p.wait()
        p.stdin.close()
        report(seen and rc == -sig and not leftovers(sub) and not os.path.exists(out),
               f"signal {sig.name} removes the temporary file",
               f"seen={seen} rc={rc} left={os.listdir(sub)}")
    src = d.file("fsz.pt", rbytes(5000))
    for args in (["--raw", "-c", "sm4-ctr", "--iv", "00" * 16], ["-c", "sm4"],
                 ["--raw", "-c", "sm4-cbc", "--iv", "00" * 16]):
        sub = d.file("fsz")
        shutil.rmtree(sub, ignore_errors=True)
        os.makedirs(sub)
        out = os.path.join(sub, "out")
        p = subprocess.run([KUAI, "encrypt", "-k", k, "-o", out, src] + args,
                           capture_output=True, start_new_session=True,
                           preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_FSIZE,
                                                                 (1024, 1024)))
        err = p.stderr.decode(errors="replace")
        report(p.returncode == EXIT_IO and "File too large" in err and not os.listdir(sub),
               f"ulimit -f: write error, no temporary file ({' '.join(args[:2])})",
               f"rc={p.returncode} {err!r} left={os.listdir(sub)}")


def test_no_core_dumps(d):
    """No core file can hold the key or the plaintext: kuai sets its core
    size limit, soft and hard, to 0 (and, on Linux, makes itself not
    dumpable) at startup, whatever limit it was started with."""
    import resource
    k = key_hex("sm4")
    soft, hard = resource.getrlimit(resource.RLIMIT_CORE)
    p, sub, out, seen = encrypt_from_pipe(
        d, "nocore", k, stderr=subprocess.DEVNULL,
        preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_CORE, (hard, hard)))
    limit = None
    try:
        with open(f"/proc/{p.pid}/limits") as f:
            for line in f:
                if line.startswith("Max core file size"):
                    limit = line.split()[4:6]
    except OSError as e:
        limit = repr(e)
    p.stdin.close()
    p.wait()
    report(seen and limit == ["0", "0"], "core dumps off (RLIMIT_CORE 0 0)",
           f"seen={seen} limit={limit} (started with {hard})")


_asan = None


def is_asan_build():
    """Whether the tool under test is built with AddressSanitizer (whose
    shadow memory does not fit under a memory limit)."""
    global _asan
    if _asan is None:
        with open(KUAI, "rb") as f:
            _asan = b"__asan_init" in f.read()
    return _asan


def test_key_file_binary(d):
    """A key file is text: a NUL byte is refused (exit 1) where it used to
    end the line silently (KEY\\0MORE read as KEY, \\0JUNK as a blank
    line), and an endless file (/dev/zero) is refused at once instead of
    being read into memory until the allocator gave up ("no key in the
    file"). CRLF line ends and trailing blanks still work."""
    import resource
    k = key_hex("sm4")
    src = d.file("kfb.pt", b"key file")
    for label, text in [("NUL after the key", k.encode() + b"\0ffff\n"),
                        ("a line starting with NUL", b"\0junk\n" + k.encode() + b"\n")]:
        kf = d.file("kfb.key", text)
        rc, out, err = run(["encrypt", "-c", "sm4", "--key-file", kf, src])
        report(rc == EXIT_USAGE and "NUL" in err and err.count("\n") == 1 and not out,
               f"--key-file: {label} refused", f"rc={rc} {err!r}")
    if os.path.exists("/dev/zero"):
        lim = 256 << 20

        def limit():
            # not for AddressSanitizer's build, whose shadow memory alone
            # is more: there the NUL refusal (it reads one byte) shows it
            if not is_asan_build():
                resource.setrlimit(resource.RLIMIT_AS, (lim, lim))
        p = subprocess.run([KUAI, "encrypt", "-c", "sm4", "--key-file", "/dev/zero", src],
                           capture_output=True, preexec_fn=limit, timeout=60)
        err = p.stderr.decode(errors="replace")
        report(p.returncode == EXIT_USAGE and "NUL" in err and not p.stdout,
               "--key-file /dev/zero refused at once", f"rc={p.returncode} {err!r}")
    for label, text in [("CRLF line ends", ("# key\r\n" + k + "\r\n").encode()),
                        ("trailing blanks", (k + "  \t \n\n  \n").encode())]:
        kf = d.file("kfb.key", text)
        rc, ct, err = run(["encrypt", "-c", "sm4", "--key-file", kf], b"kf")
        report(rc == 0 and ref(ct, key=k) == b"kf", f"--key-file: {label}", err)


def test_refused_before_prompt(d):
    """A run that is refused anyway (ciphertext to a terminal, an output
    that exists) says so before asking for the password: it used to ask
    twice, then refuse."""
    src = d.file("rbp.pt", b"refused before the prompt")
    dst = d.file("rbp.out", b"exists")
    for label, args in [("ciphertext to a terminal", []), ("output exists", ["-o", dst])]:
        pid, fd = pty.fork()
        if pid == 0:
            try:
                signal.alarm(5)  # kept across exec: a prompt waits for nobody
                os.execve(KUAI, [KUAI, "encrypt", "-c", "sm4", "-p", "--scrypt-log2n", "10"]
                          + args + [src], dict(os.environ))
            finally:
                os._exit(127)
        status, buf = pty_drain(pid, fd)
        code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else -os.WTERMSIG(status)
        want = EXIT_USAGE if not args else EXIT_IO
        report(code == want and b"Password" not in buf and d.read("rbp.out") == b"exists",
               f"{label}: refused before the password prompt", f"status={code} {buf!r}")
    # An output that cannot be created (its directory missing, or not
    # writable) is refused before the prompt too: it used to be found only
    # when the temporary file was made, after the password was typed (twice
    # when encrypting). Unwritable: as nobody when root (root writes anywhere).
    locked = os.path.join(d.path, "rbp-locked")
    os.mkdir(locked)
    os.chmod(locked, 0o555)
    as_nobody = os.geteuid() == 0
    exe = KUAI
    if as_nobody:
        exe = os.path.join(tempfile.mkdtemp(prefix="kuai-rbp-"), "kuai")
        shutil.copy(KUAI, exe)  # the build tree may be closed to nobody
        os.chmod(os.path.dirname(exe), 0o755)
        os.chmod(src, 0o644)
        os.chmod(d.path, 0o755)
    kuai_enc = [exe, "encrypt", "-c", "sm4", "-p", "--scrypt-log2n", "10"]
    for label, args, drop in [
            ("output directory missing", kuai_enc + ["-o", os.path.join(d.path, "rbp-none", "x")],
             False),
            ("output directory not writable", kuai_enc + ["-o", os.path.join(locked, "x")],
             as_nobody),
            ("decrypt: output directory missing",
             [exe, "decrypt", "-p", "-o", os.path.join(d.path, "rbp-none", "x"), src], False)]:
        pid, fd = pty.fork()
        if pid == 0:
            try:
                signal.alarm(5)
                if drop:
                    os.setgid(65534)
                    os.setuid(65534)
                os.execve(exe, args + ([] if "decrypt" in args else [src]), dict(os.environ))
            finally:
                os._exit(127)
        status, buf = pty_drain(pid, fd)
        code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else -os.WTERMSIG(status)
        report(code == EXIT_IO and b"Password" not in buf and b"rbp-" in buf
               and not os.listdir(locked), f"{label}: refused before the password prompt",
               f"status={code} {buf!r}")
    os.chmod(locked, 0o755)
    if exe != KUAI:
        shutil.rmtree(os.path.dirname(exe), ignore_errors=True)


def test_errors(d, supported):
    k = key_hex("sm4")
    src = d.file("e.pt", b"x" * 100)
    cases = [
        (["encrypt", "-c", "sm5", "-k", k, src], EXIT_USAGE, "sm5"),
        (["encrypt", "-c", "sm4-cbc", "-k", k, src], EXIT_USAGE, "sm4-cbc"),
        (["encrypt", "--raw", "-c", "sm4-xts", "-k", k, "--iv", "00" * 16], EXIT_USAGE, "sm4-xts"),
        (["encrypt", "-c", "sm4", "-k", "00112233445566778899aabbccddeefg", src], EXIT_USAGE, "hex"),
        (["encrypt", "-c", "sm4", "-k", "0011223", src], EXIT_USAGE, "hex"),
        (["encrypt", "-c", "sm4", "-k", "00" * 15, src], EXIT_USAGE, "16 bytes"),
        (["encrypt", "-c", "sm4", src], EXIT_USAGE, "no key"),
        (["encrypt", "-k", k, src], EXIT_USAGE, "--cipher"),
        (["encrypt", "-c", "sm4", "-k", k, "--bogus", src], EXIT_USAGE, "--bogus"),
        (["encrypt", "-c", "sm4", "-k", k, d.file("does-not-exist")], EXIT_IO, "does-not-exist"),
        (["encrypt", "-c", "sm4", "--key-file", d.file("no-key-file"), src], EXIT_IO, "no-key-file"),
        (["decrypt", "-k", k, src], EXIT_VERIFY, "not a kuai file"),
        (["encrypt", "--raw", "-c", "sm4-cbc", "-k", k, src], EXIT_USAGE, "--iv"),
        (["encrypt", "--raw", "-c", "sm4-cbc", "-k", k, "--iv", "00" * 8, src], EXIT_USAGE, "--iv"),
        (["encrypt", "--raw", "-c", "sm4-ecb", "-k", k, "--nopad", src], EXIT_VERIFY, "blocks"),
        (["encrypt", "-c", "sm4", "-k", k, "-j", "0", src], EXIT_USAGE, "-j"),
        (["encrypt", "-c", "sm4", "-k", k, src, src], EXIT_USAGE, "-o DIR"),
        (["frobnicate"], EXIT_USAGE, "frobnicate"),
        (["encrypt", "-c", "sm4", "-k", k, "-o", d.path + "/no/such/dir/x", src], EXIT_IO, "no/such"),
        # an empty name is a usage error before any input is read
        (["encrypt", "-c", "sm4", "-k", k, "-o", "", src], EXIT_USAGE, "empty"),
        (["decrypt", "-k", k, "--output=", src], EXIT_USAGE, "empty"),
        (["encrypt", "-c", "sm4", "-k", k, ""], EXIT_USAGE, "empty"),
    ]
    for args, code, needle in cases:
        rc, out, err = run(args)
        report(rc == code and needle in err and err.startswith("kuai") and err.count("\n") <= 2,
               f"error: {' '.join(a if len(a) < 40 else '...' for a in args)}",
               f"rc={rc} (want {code}) {err!r}")
    if "aes-128" not in supported:
        rc, _, err = run(["encrypt", "-c", "aes-128", "-k", "00" * 16], b"x")
        report(rc == EXIT_UNAVAIL, "unsupported cipher: exit 5", f"rc={rc} {err}")


def test_short_input(d):
    """An input shorter than the magic was "not a kuai file" even when it
    was the start of one (a kuai file cut after 3 bytes): a prefix of the
    magic is a truncated file, an empty input too (named as empty), and
    other short bytes are still not a kuai file. Exit 3 either way."""
    k = key_hex("sm4")
    rc, ct, _ = run(["encrypt", "-c", "sm4", "-k", k], b"x" * 100)
    report(rc == 0, "short input: encrypt", f"rc={rc}")
    cases = [(b"", "truncated: the input is empty"),
             (ct[:1], "truncated: the header is cut short"),
             (ct[:3], "truncated: the header is cut short"),
             (ct[:7], "truncated: the header is cut short"),
             (ct[:8], "truncated: the header is cut short"),
             (b"KUAX", "not a kuai file"),
             (b"k", "not a kuai file"),
             (ct[:4] + b"\n", "not a kuai file")]  # a text-mode transfer's line end
    for data, want in cases:
        for via_file in (False, True):
            args = ["decrypt", "-k", k]
            if via_file:
                args.append(d.file("short.kuai", data))
            rc, out, err = run(args, None if via_file else data)
            report(rc == EXIT_VERIFY and want in err and out == b"" and err.count("\n") == 1
                   and ("truncated" in want) == ("truncated" in err),
                   f"short input {data!r} ({'file' if via_file else 'stdin'}): {want}",
                   f"rc={rc} {err!r}")


def test_key_lengths(d):
    """An empty key, or one of a length no cipher takes, is a usage error
    (exit 1) in every command that takes a key: container decryption, which
    learns the cipher from the header, gave exit 3 ("wrong key", meant for a
    key that fails authentication) for `--key ''` or a 0-byte key file."""
    k = key_hex("sm4")
    sub = d.file("keylen")
    os.makedirs(sub, exist_ok=True)
    src = os.path.join(sub, "in.pt")
    with open(src, "wb") as f:
        f.write(b"key length plaintext")
    ct = os.path.join(sub, "in.kuai")
    rc, _, err = run(["encrypt", "-c", "sm4", "-k", k, "-o", ct, src])
    assert rc == 0, err
    files = {"empty.key": b"", "comments.key": b"# a comment\n\n   \n",
             "short.key": b"0011\n", "odd17.key": b"00" * 17 + b"\n"}
    for name, text in files.items():
        with open(os.path.join(sub, name), "wb") as f:
            f.write(text)
    keys = [(["-k", ""], "--key"), (["-k", "0x"], "--key"), (["--key=  "], "--key"),
            (["-k", "0011"], "--key"), (["-k", "00" * 17], "--key")]
    keys += [(["--key-file", os.path.join(sub, n)], n) for n in files]
    commands = [
        ("encrypt", ["encrypt", "-c", "sm4"], src),
        ("decrypt", ["decrypt"], ct),
        ("decrypt -c", ["decrypt", "-c", "sm4"], ct),
        ("encrypt --raw", ["encrypt", "--raw", "-c", "sm4-cbc", "--iv", "00" * 16], src),
        ("decrypt --raw", ["decrypt", "--raw", "-c", "sm4-ecb"], ct),
    ]
    before = sorted(os.listdir(sub))
    for what, cmd, inp in commands:
        for kargs, needle in keys:
            out = os.path.join(sub, "out")
            rc, _, err = run(cmd + kargs + ["-o", out, inp])
            report(rc == EXIT_USAGE and needle in err and "key" in err and err.count("\n") == 1
                   and sorted(os.listdir(sub)) == before,
                   f"{what} {' '.join(kargs)[-30:]}: refused as usage (exit 1), nothing written",
                   f"rc={rc} {err!r}")
    # a key of a length some cipher takes, not the header's (unverified)
    # cipher's: still a wrong key or a damaged header, exit 3
    rc, _, err = run(["decrypt", "-k", "00" * 32, "-o", os.path.join(sub, "out"), ct])
    report(rc == EXIT_VERIFY and "wrong key" in err and sorted(os.listdir(sub)) == before,
           "decrypt: a 32-byte key for an sm4 file: wrong key, exit 3", f"rc={rc} {err!r}")


def make_dev(d, name, minor):
    """A character device node 1:minor (/dev/null is 3, /dev/full 7) in d,
    or None where that is not allowed."""
    import stat as st_
    p = os.path.join(d, name)
    try:
        os.mknod(p, st_.S_IFCHR | 0o666, os.makedev(1, minor))
    except OSError:
        return None
    return p


def is_dev(p, minor):
    import stat as st_
    s = os.lstat(p)
    return st_.S_ISCHR(s.st_mode) and s.st_rdev == os.makedev(1, minor)


def test_issue15(d):
    """The defects of issue 15 (2-9), each as it was found."""
    import stat as st_
    k = key_hex("sm4")
    src = d.file("i15.pt", b"issue 15 plaintext")
    sub = d.file("i15")
    os.makedirs(sub, exist_ok=True)
    # 2: a device or FIFO is written to, never replaced; no --force needed.
    # Device nodes made here (as root), so that a regression replaces those
    # and not the system's /dev/null.
    devnull, devfull = make_dev(sub, "null", 3), make_dev(sub, "full", 7)
    if not devnull:
        skip("-o DEVICE", "cannot make device nodes (not root?)")
    for force in ([], ["-f"]):
        if not devnull:
            break
        rc, _, err = run(["encrypt", "-c", "sm4", "-k", k, "-o", devnull] + force + [src])
        report(rc == 0 and is_dev(devnull, 3) and not leftovers(sub),
               f"-o DEV/null {' '.join(force)}: written, not replaced", f"rc={rc} {err}")
    if devfull:
        rc, _, err = run(["encrypt", "-c", "sm4", "-k", k, "-o", devfull, "-f", src])
        report(rc == EXIT_IO and devfull in err and "No space" in err and is_dev(devfull, 7)
               and not leftovers(sub), "-o DEV/full -f: ENOSPC, exit 2, the device stays",
               f"rc={rc} {err}")
    rc, _, err = run(["encrypt", "-c", "sm4", "-k", k, "-o", "/dev/null", src])
    report(rc == 0, "-o /dev/null needs no --force", f"rc={rc} {err}")
    fifo = os.path.join(sub, "fifo")
    os.mkfifo(fifo)
    import threading
    got = []
    t = threading.Thread(target=lambda: got.append(open(fifo, "rb").read()), daemon=True)
    t.start()
    rc, _, err = run(["encrypt", "-c", "sm4", "-k", k, "-o", fifo, "-f", src])
    t.join(10)
    rc2, back, _ = run(["decrypt", "-k", k], got[0] if got else b"")
    report(rc == 0 and st_.S_ISFIFO(os.lstat(fifo).st_mode) and back == b"issue 15 plaintext",
           "-o FIFO -f: written through the FIFO, which stays", f"rc={rc} {err}")
    # a symlink is written through to its target, atomically; the link stays
    target = d.file("i15/target", b"old target")
    link = os.path.join(sub, "link")
    os.symlink("target", link)
    rc, _, err = run(["encrypt", "-c", "sm4", "-k", k, "-o", link, src])
    report(rc == EXIT_IO and "exists" in err and d.read("i15/target") == b"old target",
           "-o SYMLINK without -f: refused", f"rc={rc} {err}")
    rc, _, err = run(["encrypt", "-c", "sm4", "-k", k, "-o", link, "-f", src])
    rc2, back, _ = run(["decrypt", "-k", k, target])
    report(rc == 0 and os.path.islink(link) and back == b"issue 15 plaintext"
           and not leftovers(sub), "-o SYMLINK -f: the target replaced, the link kept",
           f"rc={rc} {err}")
    dangling = os.path.join(sub, "dangling")
    os.symlink("nowhere", dangling)
    rc, _, err = run(["encrypt", "-c", "sm4", "-k", k, "-o", dangling, "-f", src])
    report(rc == EXIT_IO and "dangling" in err and not os.path.exists(os.path.join(sub, "nowhere")),
           "-o DANGLING-SYMLINK -f: refused", f"rc={rc} {err}")
    # 3: replacing keeps the mode; a new file follows the umask
    ct = d.file("i15/ct.kuai")
    run(["encrypt", "-c", "sm4", "-k", k, "-o", ct, src])
    plain = d.file("i15/plain", b"old plaintext")
    os.chmod(plain, 0o600)
    rc, _, err = run(["decrypt", "-k", k, "-f", "-o", plain, ct])
    mode = st_.S_IMODE(os.stat(plain).st_mode)
    report(rc == 0 and mode == 0o600, "decrypt -f over a 0600 file keeps 0600", f"{oct(mode)} {err}")
    os.chmod(plain, 0o640)
    rc, _, err = run(["encrypt", "-c", "sm4", "-k", k, "-f", "-o", plain, src])
    mode = st_.S_IMODE(os.stat(plain).st_mode)
    report(rc == 0 and mode == 0o640, "encrypt -f over a 0640 file keeps 0640", f"{oct(mode)} {err}")
    # new content is not set-id; a group that cannot be kept (another user
    # replacing the file in a shared directory) takes its permissions along
    os.chmod(plain, 0o4750)
    rc, _, err = run(["encrypt", "-c", "sm4", "-k", k, "-f", "-o", plain, src])
    mode = st_.S_IMODE(os.stat(plain).st_mode)
    report(rc == 0 and mode == 0o750, "encrypt -f over a 4750 file gives 0750", f"{oct(mode)} {err}")
    if os.geteuid() == 0:
        shared = d.file("i15/shared")
        os.makedirs(shared, exist_ok=True)
        for p_ in (d.path, os.path.dirname(shared)):
            os.chmod(p_, 0o755)  # nobody reaches the directory, the tool and src
        os.chmod(shared, 0o777)
        os.chmod(src, 0o644)
        tgt = os.path.join(shared, "t")
        with open(tgt, "wb") as f:
            f.write(b"root's")
        os.chmod(tgt, 0o2770)
        mine = os.path.join(d.path, "kuai-as-nobody")
        shutil.copy(KUAI, mine)
        p = subprocess.run([mine, "encrypt", "-q", "-c", "sm4", "-k", k, "-f", "-o", tgt, src],
                           capture_output=True, start_new_session=True,
                           preexec_fn=lambda: (os.setgroups([]), os.setgid(65534), os.setuid(65534)))
        st = os.stat(tgt)
        report(p.returncode == 0 and st_.S_IMODE(st.st_mode) == 0o700 and st.st_gid == 65534,
               "another user's -f over a 2770 file: 0700, no group access passed on",
               f"{oct(st.st_mode)} gid {st.st_gid} {p.stderr!r}")
    old = os.umask(0o027)
    try:
        newf = os.path.join(sub, "new-umask")
        rc, _, err = run(["decrypt", "-k", k, "-o", newf, ct])
        mode = st_.S_IMODE(os.stat(newf).st_mode) if os.path.exists(newf) else None
    finally:
        os.umask(old)
    report(rc == 0 and mode == 0o640, "a new file follows the umask (027 -> 0640)", f"{mode} {err}")
    # a new file is never wider than its input (as cp): a 0600 plaintext
    # gives a 0600 ciphertext, which decrypts to a 0600 plaintext; from a
    # pipe, 0666 minus the umask
    secret = d.file("i15/secret", b"private")
    os.chmod(secret, 0o600)
    modes = []
    for args in (["encrypt", "-c", "sm4", "-k", k, "-o", os.path.join(sub, "s.kuai"), secret],
                 ["decrypt", "-k", k, "-o", os.path.join(sub, "s.out"), os.path.join(sub, "s.kuai")],
                 ["encrypt", "--raw", "-c", "sm4-ctr", "-k", k, "--iv", "00" * 16, "-o",
                  os.path.join(sub, "s.raw"), secret]):
        rc, _, err = run(args)
        out = args[args.index("-o") + 1]
        modes.append(st_.S_IMODE(os.stat(out).st_mode) if rc == 0 else err)
    rc, _, err = run(["encrypt", "-c", "sm4", "-k", k, "-o", os.path.join(sub, "p.kuai"), "-"],
                     b"from a pipe")
    modes.append(st_.S_IMODE(os.stat(os.path.join(sub, "p.kuai")).st_mode) if rc == 0 else err)
    # standard input redirected from the 0600 file counts as that file
    with open(secret, "rb") as f:
        p = subprocess.run([KUAI, "encrypt", "-c", "sm4", "-k", k, "-o",
                            os.path.join(sub, "r.kuai")], stdin=f, capture_output=True)
    modes.append(st_.S_IMODE(os.stat(os.path.join(sub, "r.kuai")).st_mode)
                 if p.returncode == 0 else p.stderr)
    # a named 0600 FIFO, as an input and as standard input: its permissions,
    # as a file's (it counted as an anonymous pipe: 0666 minus the umask)
    fifo = d.file("i15/secret-fifo")
    os.mkfifo(fifo, 0o600)
    os.chmod(fifo, 0o600)
    for name, stdin_fifo in (("f.kuai", False), ("fs.kuai", True)):
        out = os.path.join(sub, name)
        args = [KUAI, "encrypt", "-c", "sm4", "-k", k, "-o", out] + ([] if stdin_fifo else [fifo])
        if stdin_fifo:
            # the read end first (not blocking: no writer yet), then the
            # write end, then the read end made blocking for kuai
            r = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
            w = os.open(fifo, os.O_WRONLY)
            os.set_blocking(r, True)
            p = subprocess.Popen(args, stdin=r, stderr=subprocess.PIPE)
            os.close(r)
        else:
            p = subprocess.Popen(args, stderr=subprocess.PIPE)
            w = os.open(fifo, os.O_WRONLY)
        os.write(w, b"through a fifo")
        os.close(w)
        rc = p.wait()
        modes.append(st_.S_IMODE(os.stat(out).st_mode) if rc == 0 else p.stderr.read())
    umask = os.umask(0o022)
    os.umask(umask)
    report(modes == [0o600, 0o600, 0o600, 0o666 & ~umask, 0o600, 0o600, 0o600],
           "a new file: its input's permissions minus the umask, never wider", repr(modes))
    # a 0600 device node (1:3, empty as /dev/null), as an input and as
    # standard input: its permissions, as a file's (it counted as a pipe:
    # 0666 minus the umask, wider than the device)
    dev = make_dev(os.path.dirname(secret), "secret-dev", 3)
    if dev is None:
        print("  (skipped: no device node here) a new file from a 0600 device: 0600")
    else:
        os.chmod(dev, 0o600)
        dmodes = []
        for name, stdin_dev in (("dv.kuai", False), ("dvs.kuai", True)):
            out = os.path.join(sub, name)
            args = [KUAI, "encrypt", "-c", "sm4", "-k", k, "-o", out] + ([] if stdin_dev else [dev])
            with open(dev, "rb") as f:
                p = subprocess.run(args, stdin=f if stdin_dev else subprocess.DEVNULL,
                                   capture_output=True)
            dmodes.append(st_.S_IMODE(os.stat(out).st_mode) if p.returncode == 0 else p.stderr)
        report(dmodes == [0o600, 0o600], "a new file from a 0600 device node: 0600, never wider",
               repr(dmodes))
    # 4: no temporary file after a failure
    out = os.path.join(sub, "badiv.enc")
    rc, _, err = run(["encrypt", "--raw", "-c", "sm4-cbc", "-k", k, "--iv", "00" * 8, "-o", out,
                      src])
    report(rc == EXIT_USAGE and not leftovers(sub) and not os.path.exists(out),
           "--raw bad --iv with -o: nothing left", f"rc={rc} {os.listdir(sub)}")
    od = os.path.join(sub, "multi")
    os.makedirs(od)
    for second in (os.path.join(sub, "missing"), sub):
        rc, _, err = run(["encrypt", "--raw", "-c", "sm4-cbc", "-k", k, "--iv", "00" * 16, "-o",
                          od, src, second])
        report(rc == EXIT_IO and os.listdir(od) == [],
               f"multi-file --raw CBC, second input {'a directory' if second == sub else 'missing'}"
               ": nothing left", f"rc={rc} {os.listdir(od)} {err}")
    pw = {"KUAI_PASSWORD": "pw"}
    asan = is_asan_build()
    if asan:  # AddressSanitizer's shadow memory does not fit under ulimit -v
        skip("scrypt out of memory (ulimit -v)", "an AddressSanitizer build")
    # a file of N=2^20 (1 GiB) is a cheap one with its header's log2 N
    # raised: the decryption runs out of memory in scrypt, before anything
    # reads past the header, so the file need not be made at that cost
    rc, ctp, _ = run(["encrypt", "-c", "sm4", "-p", "--scrypt-log2n", "10"], b"x", pw)
    ctp = bytes(ctp[:12]) + bytes([20]) + bytes(ctp[13:])
    out = os.path.join(sub, "scrypt.out")
    p = subprocess.run(["sh", "-c", 'ulimit -v 400000; exec "$0" "$@"', KUAI, "decrypt", "-p",
                        "-o", out], input=ctp, capture_output=True,
                       env=dict(os.environ, **pw), start_new_session=True)
    if not asan:
        report(rc == 0 and p.returncode == 70 and b"scrypt" in p.stderr and not leftovers(sub)
               and not os.path.exists(out), "scrypt out of memory (ulimit -v): nothing left",
               f"rc={p.returncode} {p.stderr!r} {os.listdir(sub)}")
    # 5: two inputs mapping to one output are refused before anything is written
    for x in ("a", "b"):
        os.makedirs(os.path.join(sub, x))
        with open(os.path.join(sub, x, "x"), "wb") as f:
            f.write(x.encode() * 10)
    od = os.path.join(sub, "same")
    os.makedirs(od)
    rc, _, err = run(["encrypt", "-c", "sm4", "-k", k, "-f", "-o", od,
                      os.path.join(sub, "a", "x"), os.path.join(sub, "b", "x")])
    report(rc == EXIT_USAGE and os.listdir(od) == [] and "x.kuai" in err,
           "two inputs to one output refused, nothing written", f"rc={rc} {os.listdir(od)} {err}")
    # 6: write errors name the output
    if os.path.exists("/dev/full"):
        with open("/dev/full", "wb") as full:
            p = subprocess.run([KUAI, "encrypt", "-c", "sm4", "-k", k, src], stdout=full,
                               stderr=subprocess.PIPE, start_new_session=True)
        e = p.stderr.decode()
        report(p.returncode == EXIT_IO and "standard output" in e and src not in e,
               "a write error to standard output names it", e)
        with open("/dev/full", "wb") as full:
            p = subprocess.run([KUAI, "decrypt", "-k", k, ct], stdout=full,
                               stderr=subprocess.PIPE, start_new_session=True)
        e = p.stderr.decode()
        report(p.returncode == EXIT_IO and "standard output" in e and ct not in e,
               "a decrypt write error names standard output", e)
    p = subprocess.run([KUAI, "encrypt", "-c", "sm4", "-k", k, src], stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, start_new_session=True,
                       preexec_fn=lambda: os.close(1))
    e = p.stderr.decode()
    report(p.returncode == EXIT_IO and "standard output" in e and src not in e,
           "closed standard output named", e)
    # 7: output names of 239..255 bytes
    for n in (239, 247, 255):
        name = os.path.join(sub, "n" * n)
        rc, _, err = run(["encrypt", "-c", "sm4", "-k", k, "-o", name, src])
        rc2, _, err2 = run(["encrypt", "-c", "sm4", "-k", k, "-f", "-o", name, src])
        report(rc == 0 and rc2 == 0 and os.path.exists(name) and not leftovers(sub),
               f"{n}-byte output name (new and -f)", f"rc={rc},{rc2} {err}{err2}")
        if os.path.exists(name):
            os.unlink(name)
    # 8: key files: long comment lines, keys written in groups
    kb = bytes.fromhex(k)
    grouped = " ".join(k[i:i + 4] for i in range(0, len(k), 4))
    for label, text in [("a # comment line of 3000 characters", "#" + "c" * 3000 + "\n" + k + "\n"),
                        ("a key in groups of 4 digits", grouped + "\n"),
                        ("a key with tabs inside", k[:8] + "\t" + k[8:] + "\n")]:
        kf = d.file("i15.key", text.encode())
        rc, ct2, err = run(["encrypt", "-c", "sm4", "--key-file", kf], b"kf")
        rc2, back, err2 = run(["decrypt", "-k", kb.hex()], ct2)
        report(rc == 0 and rc2 == 0 and back == b"kf", f"--key-file: {label}", err + err2)
    rc, ct2, err = run(["encrypt", "-c", "sm4", "-k", grouped], b"kg")
    rc2, back, err2 = run(["decrypt", "-k", k], ct2)
    report(rc == 0 and back == b"kg", "--key in groups", err + err2)
    # 9: a cipher id changed to one with another key length: damaged header, exit 3
    rc, ct2, _ = run(["encrypt", "-c", "sm4", "-k", k], b"id")
    bad = bytearray(ct2)
    bad[9] = 3  # ublock-256-256 (32-byte key)
    rc, _, err = run(["decrypt", "-k", k], bytes(bad))
    report(rc == EXIT_VERIFY and "damaged header" in err, "cipher id changed: damaged header, exit 3",
           f"rc={rc} {err}")


def test_output_matrix(d):
    """Every kind of -o target x with and without --force x every command
    that writes (docs/cli.md, "Where the output goes")."""
    import stat as st_
    import threading
    k = key_hex("sm4")
    iv = rbytes(16).hex()
    pt = rbytes(CHUNK + 77)
    src = d.file("mx.pt", pt)
    _, ct, _ = run(["encrypt", "-c", "sm4", "-k", k], pt)
    _, raw_ct, _ = run(["encrypt", "--raw", "-c", "sm4-cbc", "-k", k, "--iv", iv], pt)
    ct_f, raw_f = d.file("mx.kuai", ct), d.file("mx.enc", raw_ct)
    raw = ["--raw", "-c", "sm4-cbc", "-k", k, "--iv", iv]
    commands = {  # name: (args before -o, input, check of what was written)
        "encrypt": (["encrypt", "-c", "sm4", "-k", k], src,
                    lambda b: run(["decrypt", "-k", k], b)[1] == pt),
        "decrypt": (["decrypt", "-k", k], ct_f, lambda b: b == pt),
        "encrypt --raw": (["encrypt"] + raw, src, lambda b: run(["decrypt"] + raw, b)[1] == pt),
        "decrypt --raw": (["decrypt"] + raw, raw_f, lambda b: b == pt),
    }
    old, old_mode = b"old content", 0o640
    cells = 0
    base = d.file("mx")
    os.makedirs(base, exist_ok=True)
    os.chmod(d.path, 0o755)
    os.chmod(base, 0o755)
    for f in (src, ct_f, raw_f):
        os.chmod(f, 0o644)

    def fresh():
        w = tempfile.mkdtemp(dir=base)
        os.chmod(w, 0o755)
        return w

    def write_old(p):
        with open(p, "wb") as f:
            f.write(old)
        os.chmod(p, old_mode)

    def unchanged(p):
        return open(p, "rb").read() == old and st_.S_IMODE(os.stat(p).st_mode) == old_mode

    def readf(p):
        return open(p, "rb").read()

    umask = os.umask(0o022)
    os.umask(umask)
    new_mode = 0o666 & ~umask
    nobody_kuai = os.path.join(d.path, "kuai-for-nobody")
    for cname, (args, inp, good) in commands.items():
        for force in (False, True):
            fl = ["-f"] if force else []
            label = f"matrix {cname}{' -f' if force else ''}"

            def go(out, **kw):
                return run(args + fl + ["-o", out, inp], **kw)
            # missing
            w = fresh()
            out = os.path.join(w, "out")
            rc, _, err = go(out)
            report(rc == 0 and good(readf(out)) and st_.S_IMODE(os.stat(out).st_mode) == new_mode
                   and not leftovers(w), f"{label}: missing -> created, umask mode", f"rc={rc} {err}")
            cells += 1
            # regular
            w = fresh()
            out = os.path.join(w, "out")
            write_old(out)
            rc, _, err = go(out)
            if force:
                ok = rc == 0 and good(readf(out)) and st_.S_IMODE(os.stat(out).st_mode) == old_mode
            else:
                ok = rc == EXIT_IO and "exists" in err and unchanged(out)
            report(ok and not leftovers(w), f"{label}: regular file", f"rc={rc} {err}")
            cells += 1
            # symlink to a regular file
            w = fresh()
            out, tgt = os.path.join(w, "link"), os.path.join(w, "target")
            write_old(tgt)
            os.symlink("target", out)
            rc, _, err = go(out)
            if force:
                ok = (rc == 0 and os.path.islink(out) and good(readf(tgt))
                      and st_.S_IMODE(os.stat(tgt).st_mode) == old_mode)
            else:
                ok = rc == EXIT_IO and os.path.islink(out) and unchanged(tgt)
            report(ok and not leftovers(w), f"{label}: symlink", f"rc={rc} {err}")
            cells += 1
            # hard link
            w = fresh()
            out, other = os.path.join(w, "out"), os.path.join(w, "other")
            write_old(out)
            os.link(out, other)
            rc, _, err = go(out)
            if force:
                ok = rc == 0 and good(readf(out)) and unchanged(other) and \
                    st_.S_IMODE(os.stat(out).st_mode) == old_mode
            else:
                ok = rc == EXIT_IO and unchanged(out) and unchanged(other)
            report(ok and not leftovers(w), f"{label}: hard link", f"rc={rc} {err}")
            cells += 1
            # character device
            w = fresh()
            dev = make_dev(w, "null", 3)
            if dev:
                rc, _, err = go(dev)
                report(rc == 0 and is_dev(dev, 3) and not leftovers(w),
                       f"{label}: character device", f"rc={rc} {err}")
                cells += 1
            else:
                skip(f"{label}: character device", "cannot make device nodes")
            # FIFO
            w = fresh()
            fifo = os.path.join(w, "fifo")
            os.mkfifo(fifo)
            got = []
            t = threading.Thread(target=lambda: got.append(open(fifo, "rb").read()), daemon=True)
            t.start()
            rc, _, err = go(fifo)
            t.join(10)
            report(rc == 0 and got and good(got[0]) and st_.S_ISFIFO(os.lstat(fifo).st_mode)
                   and not leftovers(w), f"{label}: FIFO", f"rc={rc} {err}")
            cells += 1
            # directory: the output goes inside
            w = fresh()
            rc, _, err = go(w)
            inside = [f for f in os.listdir(w)]
            report(rc == 0 and len(inside) == 1 and good(readf(os.path.join(w, inside[0]))),
                   f"{label}: directory", f"rc={rc} {inside} {err}")
            cells += 1
            # unwritable directory (as nobody when root: root writes anywhere)
            w = fresh()
            out = os.path.join(w, "out")
            if force:
                write_old(out)
                os.chmod(out, 0o644)
            os.chmod(w, 0o555)
            before = sorted(os.listdir(w))
            if os.geteuid() == 0:
                if not os.path.exists(nobody_kuai):
                    shutil.copy(KUAI, nobody_kuai)  # the build tree may be closed to nobody
                p = subprocess.run([nobody_kuai] + args + fl + ["-o", out, inp], capture_output=True,
                                   preexec_fn=lambda: (os.setgid(65534), os.setuid(65534)),
                                   start_new_session=True)
                rc, err = p.returncode, p.stderr.decode()
            else:
                rc, _, err = go(out)
            ok = rc == EXIT_IO and out in err and sorted(os.listdir(w)) == before
            if force:
                ok = ok and open(out, "rb").read() == old
            else:
                ok = ok and "exists" not in err
            report(ok, f"{label}: unwritable directory", f"rc={rc} {err}")
            os.chmod(w, 0o755)
            cells += 1
            # 255-byte name (with -f: it exists already)
            w = fresh()
            out = os.path.join(w, "n" * 255)
            if force:
                write_old(out)
            rc, _, err = go(out)
            report(rc == 0 and good(readf(out)) and not leftovers(w), f"{label}: 255-byte name",
                   f"rc={rc} {err}")
            cells += 1
    print(f"output matrix: {cells} cells")


def on_pty(args, typed=b"", cols=None, env=None):
    """Runs kuai with all three standard streams on a pseudo-terminal (its
    controlling terminal, `cols` wide), typing `typed` into it; returns
    (exit status, everything it printed)."""
    pid, fd = pty.fork()
    if pid == 0:
        try:
            if cols:
                import fcntl
                import struct
                import termios
                fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", 24, cols, 0, 0))
            os.execve(KUAI, [KUAI] + args, dict(os.environ, **(env or {})))
        finally:
            os._exit(127)
    buf = b""
    for line in typed.splitlines(keepends=True):
        # one line per prompt: wait for it, so the line is typed with echo off
        seen = b""
        while b":" not in seen:
            seen += os.read(fd, 100)
        buf += seen
        os.write(fd, line)
    status, rest = pty_drain(pid, fd)
    return os.WEXITSTATUS(status), buf + rest


def pty_drain(pid, fd):
    """Everything the child on pty fd prints until it exits: (its raw wait
    status, the bytes)."""
    buf = b""
    while True:
        try:
            chunk = os.read(fd, 4096)
        except OSError:
            break
        if not chunk:
            break
        buf += chunk
    _, status = os.waitpid(pid, 0)
    os.close(fd)
    return status, buf


def test_progress(d):
    src = d.file("prog.pt", rbytes(3 * CHUNK))
    k = key_hex("sm4")
    out = d.file("prog.kuai")
    status, buf = on_pty(["encrypt", "-c", "sm4", "-k", k, "-o", out, src])
    text = buf.decode(errors="replace")
    # the rate's unit follows the speed (KiB/s for the sanitizer build on a
    # loaded machine, GiB/s on a fast one); only binary units may appear
    binary = re.search(r"\d (B|KiB|MiB|GiB|TiB)/s", text)
    decimal = re.search(r"\d ?(kB|MB|GB|TB)/s", text)
    report(status == 0 and binary and not decimal and "3.0 MiB" in text
           and "ETA" in text and "\033[K" in text, "progress bar on a terminal (one unit family, "
           "clears to the end of the line)", repr(text))
    for cols in (40, 60, 100):
        os.unlink(out)
        status, buf = on_pty(["encrypt", "-c", "sm4", "-k", k, "-o", out, src], cols=cols)
        lines = [ln.replace("\033[K", "").rstrip("\n") for ln in
                 buf.decode(errors="replace").replace("\r\n", "\n").split("\r") if ln.strip()]
        report(status == 0 and lines and all(len(ln) < cols for ln in lines),
               f"progress bar fits a {cols}-column terminal", repr(lines))
    os.unlink(out)
    status, buf = on_pty(["encrypt", "-q", "-c", "sm4", "-k", k, "-o", out, src])
    report(status == 0 and buf == b"", "-q silences the progress bar", repr(buf))
    status, buf = on_pty(["encrypt", "-c", "sm4", "-k", k, src])
    report(status == EXIT_USAGE and b"terminal" in buf and len(buf) < 200,
           "no ciphertext written to a terminal", repr(buf[:200]))
    # nor through -o naming the terminal; a plaintext may go there
    tsrc, tout = d.file("tty.pt", b"hello tty"), d.file("tty.kuai")
    status, buf = on_pty(["encrypt", "-q", "-c", "sm4", "-k", k, "-o", "/dev/tty", tsrc])
    report(status == EXIT_USAGE and b"terminal" in buf and len(buf) < 200,
           "no ciphertext written to -o /dev/tty", repr(buf[:200]))
    run(["encrypt", "-c", "sm4", "-k", k, "-o", tout, tsrc])
    status, buf = on_pty(["decrypt", "-q", "-k", k, "-o", "/dev/tty", tout])
    report(status == 0 and b"hello tty" in buf, "a plaintext may be written to -o /dev/tty",
           repr(buf[:200]))
    # standard input that is the output file: refused like naming it twice
    with open(tsrc, "rb") as f:
        p = subprocess.run([KUAI, "encrypt", "-q", "-c", "sm4", "-k", k, "-f", "-o", tsrc, "-"],
                           stdin=f, capture_output=True)
    with open(tsrc, "rb") as f:
        kept = f.read() == b"hello tty"
    report(p.returncode == EXIT_USAGE and b"same file" in p.stderr and kept,
           "standard input that is the output file is refused", repr(p.stderr))
    os.unlink(out)
    rc, _, err = run(["encrypt", "-c", "sm4", "-k", k, "-o", out, src])
    report(rc == 0 and err == "", "no progress bar when stderr is not a terminal", repr(err))


# The test vectors of docs/format.md.
FORMAT_VECTORS = [
    ("sm4", {"key": "000102030405060708090a0b0c0d0e0f"},
     "4b5541490d0a1a0a010400140000000000000000000000000000000000000000"
     "05b31de9324aa24346758d06b810ed0d7c87ed985920eba834be87af9b7c0ba9"
     "d72e986bdcbdcf13e8845bcf4284c3a89d984a8b7c039f0e7cf4d60f9f88d520"
     "372e30791035c961a84bf0"),
    ("ublock-256-256", {"key": bytes(range(32)).hex()},
     "4b5541490d0a1a0a010300140000000000000000000000000000000000000000"
     "07def0f3eb793d0cbb6f0f8ad6495722ae67b98cdf85765faa3b46383e836966"
     "e2234cb2b0436891f1efc3cec250a6990b8a945436b975f8de38e3c3a771eeea"
     "f3ebd8384384269bd19bfd"),
    ("sm4 (password)", {"password": "password"},
     "4b5541490d0a1a0a010401140a080100a5ff21d706891499ac15ebd0dfc8de37"
     "8484a9aad4c1e73f93069b36a755341bcfedf279b3a70f179f446be13f3ec132"
     "24a541b79a9d2240533778c6b98d8a77304d492bc4f1c5acbd29260b78934f1c"
     "45c484012ae1a2cc3473a2"),
]


def ref(data, key=None, password=None):
    try:
        return ref_decrypt.decrypt(data, bytes.fromhex(key) if key else None, password, KUAI)
    except ref_decrypt.Rejected as e:
        return e


def test_polish(d):
    """Issue 16 item 8: cipher names in any case, decrypt asks for the
    password of a password file without -p, the bash completion."""
    k = key_hex("sm4")
    for name in ("SM4", "Sm4", "UBLOCK-128-128"):
        rc, ct, err = run(["encrypt", "-c", name, "-k", k if name.lower() != "ublock-128-128"
                           else key_hex("ublock-128-128")], b"case")
        report(rc == 0, f"cipher name {name} accepted", err)
    rc, ct, err = run(["encrypt", "--raw", "-c", "SM4-CBC", "-k", k, "--iv", "00" * 16], b"case")
    rc2, back, err2 = run(["decrypt", "--raw", "-c", "sm4-cbc", "-k", k, "--iv", "00" * 16], ct)
    report(rc == 0 and back == b"case", "raw cipher name SM4-CBC accepted", err + err2)
    pw = {"KUAI_PASSWORD": "asked anyway"}
    rc, ct, err = run(["encrypt", "-c", "sm4", "-p", "--scrypt-log2n", "10"], b"no -p", pw)
    src = d.file("pol.kuai", ct)
    rc, back, err = run(["decrypt", src], None, pw)
    report(rc == 0 and back == b"no -p", "decrypt of a password file without -p (KUAI_PASSWORD)",
           f"rc={rc} {err}")
    out = d.file("pol.out")
    status, buf = on_pty(["decrypt", "-q", "-o", out, src], b"asked anyway\n")
    report(status == 0 and b"Password" in buf and open(out, "rb").read() == b"no -p",
           "decrypt of a password file without -p asks on the terminal", repr(buf))
    rc, ct, _ = run(["encrypt", "-c", "sm4", "-k", k], b"key file")
    rc, _, err = run(["decrypt"], ct)
    report(rc == EXIT_USAGE and "--key" in err, "decrypt of a key file without a key: usage",
           f"rc={rc} {err}")
    comp = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "cli",
                        "completions", "kuai.bash")
    if shutil.which("bash"):
        script = (f'source "{comp}"; complete -p kuai >/dev/null || exit 9; '
                  'f() { COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMPREPLY=(); _kuai; '
                  'echo "${COMPREPLY[*]}"; }; '
                  'f kuai de; f kuai encrypt --raw -c sm4-c; f kuai decrypt -c ublock-256; '
                  'f kuai encrypt --key-f; f kuai encrypt --raw -c ublock-256-256-; '
                  'f kuai encrypt --raw -c aes-128-')
        p = subprocess.run(["bash", "-c", script], capture_output=True, text=True)
        want = ["decrypt", "sm4-cbc sm4-ctr sm4-cfb", "ublock-256-256", "--key-file",
            "ublock-256-256-ecb ublock-256-256-cbc ublock-256-256-ctr",
            "aes-128-ecb aes-128-cbc aes-128-ctr aes-128-cfb aes-128-ofb"]
        report(p.returncode == 0 and p.stdout.splitlines() == want, "bash completion",
               f"{p.stdout!r} {p.stderr!r}")


def test_zsh_completion():
    """The zsh completion run by zsh: compsys's _describe, _arguments,
    _values and _files stubbed to print what they were given (a completion
    function only hands its candidates to them), so each case checks what
    the user would be offered. The bash completion's cases are in
    test_polish."""
    comp = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "cli",
                        "completions", "_kuai")
    if not shutil.which("zsh"):
        skip("zsh completion", "no zsh (make deps installs it)")
        return
    # _describe's last argument names an array of NAME or NAME:DESCRIPTION
    script = (
        '_describe() { local a=${@[-1]}; print -r -- "${(j: :)${(@)${(P)a}%%:*}}"; }\n'
        '_arguments() { print -r -- "${(j:|:)@}"; }\n'
        '_values() { shift; print -r -- "$*"; }\n'
        '_files() { :; }\n'
        'words=(kuai ""); CURRENT=2\n'
        f'source {shlex.quote(comp)}\n'  # ends with one call of _kuai: the commands
        'words=(kuai encrypt -c ""); CURRENT=4; _kuai_ciphers\n'
        'words=(kuai decrypt --raw -c ""); CURRENT=5; _kuai_ciphers\n'
        'words=(kuai encrypt ""); CURRENT=3; _kuai\n'
        'words=(kuai help ""); CURRENT=3; _kuai\n')
    p = subprocess.run(["zsh", "-f", "-c", script], capture_output=True, text=True)
    out = p.stdout.splitlines()
    names = list(CIPHERS)  # the tool's list, as test_completion_names checks
    raw = [f"{n}-{m}" for n in names for m in ("ecb", "cbc", "ctr", "cfb", "ofb")
           if not (n == "ublock-256-256" and m in ("cfb", "ofb"))]
    ok = p.returncode == 0 and not p.stderr and len(out) == 5
    report(ok, "zsh completion runs", f"rc={p.returncode} {p.stdout!r} {p.stderr!r}")
    if not ok:
        return
    report(out[0].split() == ["encrypt", "decrypt", "speed", "selftest", "info", "help"],
           "zsh completion: commands", out[0])
    report(out[1].split() == names, "zsh completion: cipher names", out[1])
    report(sorted(out[2].split()) == sorted(raw), "zsh completion: --raw cipher names", out[2])
    specs = out[3].split("|")
    for opt in ("--cipher[", "--key-file[", "--password[", "--raw[", "--iv[", "--nopad[",
                "--force[", "--output["):
        report(any(opt in x for x in specs), f"zsh completion: encrypt offers {opt[:-1]}",
               out[3])
    report(out[4].split() == ["encrypt", "decrypt", "speed", "selftest", "info"],
           "zsh completion: help's commands", out[4])


def test_completion_names():
    """The shell completions are static files: they must name exactly the
    tool's ciphers (kuai_ciphers(), as the unknown-cipher error lists them),
    in its order, so that a new cipher cannot leave them behind silently;
    nor can it go untested here for want of a CIPHERS row."""
    rc, _, err = run(["encrypt", "-c", "no-such-cipher", "-k", "00"], b"")
    listed = err.split("one of:", 1)[-1].split("(a mode suffix", 1)[0]
    tool = [n.strip() for n in listed.replace("\n", " ").split(",") if n.strip()]
    report(rc == EXIT_USAGE and len(tool) >= 7, "unknown cipher lists the ciphers", err)
    comp = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "cli",
                        "completions")
    bash = open(os.path.join(comp, "kuai.bash")).read()
    zsh = open(os.path.join(comp, "_kuai")).read()
    in_bash = bash.split('local ciphers="', 1)[1].split('"', 1)[0].split()
    in_zsh = zsh.split("names=(", 1)[1].split(")", 1)[0].split()
    report(in_bash == tool, "bash completion names the tool's ciphers", f"{in_bash} != {tool}")
    report(in_zsh == tool, "zsh completion names the tool's ciphers", f"{in_zsh} != {tool}")
    report(list(CIPHERS) == tool, "this test's CIPHERS covers the tool's ciphers",
           f"{list(CIPHERS)} != {tool}")


def test_format_spec(d, supported):
    """docs/format.md is enough to decrypt: its vectors open in kuai and in
    the independent decryptor, and what kuai writes opens in the latter."""
    want = b"kuai container test vector\n"
    # The vectors above are copies: check that the page still prints them.
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    spec = open(os.path.join(root, "docs", "format.md"), encoding="utf-8").read()
    spec = "".join(spec.split())
    for label, cred, hexdata in FORMAT_VECTORS:
        report(hexdata in spec, f"format.md vector {label}: printed in docs/format.md", "")
        data = bytes.fromhex(hexdata)
        if "key" in cred:
            rc, out, err = run(["decrypt", "-k", cred["key"]], data)
        else:
            rc, out, err = run(["decrypt", "-p"], data, {"KUAI_PASSWORD": cred["password"]})
        report(rc == 0 and out == want, f"format.md vector {label}: kuai decrypts it", err)
        got = ref(data, cred.get("key"), cred.get("password"))
        report(got == want, f"format.md vector {label}: reference decryptor", repr(got)[:200])
    for name in ("sm4", "ublock-128-128", "ublock-128-256", "ublock-256-256", "aes-128",
                 "aes-192", "aes-256"):
        if name not in supported:
            skip(f"reference decryptor {name}", "not available in this build")
            continue
        if name.startswith("aes") and not shutil.which("openssl"):
            skip(f"reference decryptor {name}", "no openssl command")
            continue
        k = key_hex(name)
        pt = rbytes(2 * CHUNK + 333) if name in ("sm4", "ublock-256-256") else rbytes(5000)
        rc, ct, err = run(["encrypt", "-c", name, "-k", k], pt)
        got = ref(ct, k)
        report(rc == 0 and got == pt, f"reference decryptor opens kuai's {name} file",
               repr(got)[:200] if not isinstance(got, bytes) else "plaintext differs")
        got = ref(flip(ct, len(ct) - 20), k)
        report(isinstance(got, ref_decrypt.Rejected), f"reference decryptor rejects a flipped bit "
               f"({name})", repr(got)[:100])
    rc, ct, err = run(["encrypt", "-c", "ublock-128-128", "-p", "--scrypt-log2n", "11"], b"pw test",
                      {"KUAI_PASSWORD": "hunter2"})
    report(ref(ct, password="hunter2") == b"pw test", "reference decryptor: password file", err)


def test_password_prompt(d):
    src = d.file("prompt.pt", b"typed at the terminal")
    out = d.file("prompt.kuai")
    status, buf = on_pty(["encrypt", "-c", "sm4", "-p", "--scrypt-log2n", "10", "-q", "-o", out,
                          src], b"s3cret phrase\ns3cret phrase\n")
    rc, back, err = run(["decrypt", "-p", out], None, {"KUAI_PASSWORD": "s3cret phrase"})
    report(status == 0 and b"Password" in buf and b"s3cret" not in buf and rc == 0
           and back == b"typed at the terminal", "password typed at a terminal (no echo)",
           f"{status} {buf!r} {rc} {err}")
    os.unlink(out)
    status, buf = on_pty(["encrypt", "-c", "sm4", "-p", "-q", "-o", out, src], b"one\ntwo\n")
    report(status == EXIT_USAGE and b"do not match" in buf and not os.path.exists(out),
           "mismatched passwords at the terminal", repr(buf))
    # Ctrl-C (or SIGTERM, SIGHUP) at the prompt: the terminal gets its echo
    # back, and no output or temporary file is left (decrypt asks after
    # its temporary file exists)
    import termios
    rc, _, _ = run(["encrypt", "-c", "sm4", "-p", "--scrypt-log2n", "10", "-o", out, src], None,
                   {"KUAI_PASSWORD": "pw"})
    # every signal that ends the process, as for the temporary files: only
    # INT, TERM, HUP and QUIT gave the echo back
    import resource
    others = [signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2,
              signal.SIGALRM, signal.SIGPIPE, signal.SIGXCPU, signal.SIGVTALRM, signal.SIGPROF]
    for args, how in [(["encrypt", "-c", "sm4", "-p", "-q", "-o", out + ".2", src], b"\x03"),
                      (["decrypt", "-q", "-o", out + ".pt", out], b"\x03")] + [
                      (["decrypt", "-q", "-o", out + ".pt", out], sig) for sig in others]:
        pid, fd = pty.fork()
        if pid == 0:
            try:
                resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # SIGQUIT, SIGXCPU
                signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # Python ignores it
                signal.alarm(20)  # kept across exec: a prompt waits for nobody
                os.execv(KUAI, [KUAI] + args)
            finally:
                os._exit(127)
        seen = b""
        while b"Password:" not in seen:
            seen += os.read(fd, 100)
        time.sleep(0.2)
        if isinstance(how, bytes):
            os.write(fd, how)  # the terminal's interrupt character
        else:
            os.kill(pid, how)
        _, st = os.waitpid(pid, 0)
        echo = bool(termios.tcgetattr(fd)[3] & termios.ECHO)
        os.close(fd)
        report(rc == 0 and os.WIFSIGNALED(st) and echo and not os.path.exists(out + ".2")
               and not os.path.exists(out + ".pt") and leftovers(d.path) == [],
               f"{args[0]}: {how!r} at the password prompt gives the echo back",
               f"status {st}, echo {echo}, {leftovers(d.path)}")
    os.unlink(out)


def test_prompt_stopped(d):
    """Ctrl-Z at the password prompt, then fg: the terminal has its echo
    while kuai is stopped, and off again (the prompt repeated) once it goes
    on; it used to keep the echo off while stopped and, continued, read
    the password with the echo the shell had turned back on. kuai runs
    as a job: in its own process group in the foreground of the pty, under
    a parent of another group (so the group is not orphaned, and a stop
    signal stops it)."""
    import termios
    src = d.file("tstp.pt", b"stopped at the prompt")
    out = d.file("tstp.kuai")
    pid, fd = pty.fork()
    if pid == 0:
        try:
            job = os.fork()
            if job == 0:
                os.setpgid(0, 0)
                signal.signal(signal.SIGTTOU, signal.SIG_IGN)  # for tcsetpgrp
                os.tcsetpgrp(0, os.getpgrp())
                signal.signal(signal.SIGTTOU, signal.SIG_DFL)
                signal.alarm(20)  # kept across exec: a prompt waits for nobody
                os.execv(KUAI, [KUAI, "encrypt", "-c", "sm4", "-p", "--scrypt-log2n", "10",
                                "-q", "-o", out, src])
            _, st = os.waitpid(job, 0)
            os._exit(os.WEXITSTATUS(st) if os.WIFEXITED(st) else 100 + os.WTERMSIG(st))
        finally:
            os._exit(127)

    def until(pred, what, budget=10):
        seen = b""
        deadline = time.monotonic() + budget
        while not pred(seen) and time.monotonic() < deadline:
            import select
            if select.select([fd], [], [], 0.05)[0]:
                seen += os.read(fd, 1000)
        return seen

    def echo():
        return bool(termios.tcgetattr(fd)[3] & termios.ECHO)

    def state(p):
        try:
            with open(f"/proc/{p}/stat") as f:
                return f.read().rsplit(")", 1)[1].split()[0]
        except OSError:
            return "?"

    buf = until(lambda b: b"Password: " in b, "the prompt")
    job = os.tcgetpgrp(fd)  # the job's group, its leader kuai
    echo_at_prompt = echo()
    os.write(fd, b"\x1a")  # the terminal's suspend character: SIGTSTP to the job
    deadline = time.monotonic() + 10
    while state(job) != "T" and time.monotonic() < deadline:
        time.sleep(0.02)
    stopped, echo_stopped = state(job) == "T", echo()
    os.killpg(job, signal.SIGCONT)  # fg
    buf += until(lambda b: b.count(b"Password: ") >= 2, "the prompt again")
    echo_again = echo()
    os.write(fd, b"visiblepw\n")
    buf += until(lambda b: b"again" in b, "the second prompt")
    os.write(fd, b"visiblepw\n")
    status, rest = pty_drain(pid, fd)
    buf += rest
    rc, back, err = run(["decrypt", "-p", out], None, {"KUAI_PASSWORD": "visiblepw"})
    report(not echo_at_prompt and stopped and echo_stopped and not echo_again
           and buf.count(b"Password: ") == 2 and b"visiblepw" not in buf
           and os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0 and rc == 0
           and back == b"stopped at the prompt",
           "Ctrl-Z at the password prompt: echo back while stopped, off again after fg",
           f"echo {echo_at_prompt}/{echo_stopped}/{echo_again} stopped={stopped} "
           f"status={status} {buf!r} rc={rc} {err}")


def test_lockstep_tty(d):
    """Multi-file CBC --raw encryption (the lockstep path) refuses to write
    ciphertext to a terminal like every other path (exit 1): an output
    DIR/NAME.enc that is a link to the terminal was written to."""
    k = key_hex("sm4")
    sub = d.file("lockstep-tty")
    os.makedirs(sub, exist_ok=True)
    a, b = d.file("lsa.pt", b"first" * 100), d.file("lsb.pt", b"second" * 100)
    os.symlink("/dev/tty", os.path.join(sub, "lsa.pt.enc"))
    status, buf = on_pty(["encrypt", "-q", "--raw", "-c", "sm4-cbc", "-k", k, "--iv", "00" * 16,
                          "-o", sub, a, b])
    report(status == EXIT_USAGE and b"terminal" in buf and len(buf) < 200
           and sorted(os.listdir(sub)) == ["lsa.pt.enc"],
           "lockstep CBC: no ciphertext written to a terminal", repr(buf[:200]))


def test_password_length(d):
    """A password typed at the terminal is at most 1024 bytes; a longer one
    is refused (exit 1). It used to be cut to 1023 bytes silently, so a file
    encrypted at the prompt did not open with the same password in
    KUAI_PASSWORD, which takes any length."""
    src = d.file("pwlen.pt", b"long passwords")
    out = d.file("pwlen.kuai")
    longest, over = "L" * 1024, "O" * 1025
    status, buf = on_pty(["encrypt", "-c", "sm4", "-p", "--scrypt-log2n", "10", "-q", "-o", out,
                          src], (longest + "\n" + longest + "\n").encode())
    rc, back, err = run(["decrypt", "-p", out], None, {"KUAI_PASSWORD": longest})
    report(status == 0 and rc == 0 and back == b"long passwords",
           "a 1024-byte password typed at the terminal opens with KUAI_PASSWORD",
           f"{status} {buf[-200:]!r} {rc} {err}")
    rc, _, err = run(["decrypt", "-p", out], None, {"KUAI_PASSWORD": longest[:1023]})
    report(rc == EXIT_VERIFY, "a 1023-byte prefix of it does not", f"rc={rc} {err}")
    os.unlink(out)
    for label, typed in [("the first", over + "\n"), ("the second", "short\n" + over + "\n")]:
        status, buf = on_pty(["encrypt", "-c", "sm4", "-p", "--scrypt-log2n", "10", "-q", "-o",
                              out, src], typed.encode())
        report(status == EXIT_USAGE and b"longer than 1024 bytes at the terminal" in buf
               and not os.path.exists(out) and leftovers(d.path) == [],
               f"a 1025-byte password at the terminal ({label} prompt): refused",
               f"{status} {buf[-200:]!r}")
    longer = "K" * 5000
    rc, _, err = run(["encrypt", "-c", "sm4", "-p", "--scrypt-log2n", "10", "-q", "-o", out, src],
                     None, {"KUAI_PASSWORD": longer})
    rc2, back, err2 = run(["decrypt", "-p", out], None, {"KUAI_PASSWORD": longer})
    rc3, _, _ = run(["decrypt", "-p", out], None, {"KUAI_PASSWORD": longer[:-1]})
    report(rc == 0 and rc2 == 0 and back == b"long passwords" and rc3 == EXIT_VERIFY,
           "a 5000-byte KUAI_PASSWORD: taken whole", f"rc={rc} {err} {rc2} {err2} {rc3}")


def test_backend_env(d):
    """KUAI_BACKEND that chooses no usable backend: exit 5, nothing written,
    and the message names the variable and, for a backend that leaks
    through the cache, the opt-in it also needs (it said only "unknown
    backend, or backend not usable on this CPU")."""
    src = d.file("be.pt", b"x" * 100)
    out = d.file("be.kuai")
    k = key_hex("sm4")
    leaky = ["KUAI_BACKEND chose ttable", "KUAI_ALLOW_LEAKY_BACKENDS=1"]
    other = ["as KUAI_BACKEND chose", "'kuai info'"]
    for env, args, needles in (
            ({"KUAI_BACKEND": "ttable"}, ["encrypt", "-c", "sm4", "-k", k, "-o", out, src], leaky),
            ({"KUAI_BACKEND": "avx2,ttable"}, ["encrypt", "-c", "sm4", "-k", k, "-o", out, src],
             None),
            ({"KUAI_BACKEND": "no-such"}, ["encrypt", "-c", "sm4", "-k", k, "-o", out, src], other),
            ({"KUAI_BACKEND": "ttable"},
             ["encrypt", "--raw", "-c", "sm4-ctr", "-k", k, "--iv", "00" * 16], leaky)):
        rc, o, err = run(args, b"y" * 40, env)
        if needles is None:  # avx2 chosen where the CPU has it, else ttable refused
            ok = rc == 0 or (rc == EXIT_UNAVAIL and all(n in err for n in leaky[1:]))
        else:
            ok = rc == EXIT_UNAVAIL and all(n in err for n in needles) and not o
        report(ok and (rc == 0 or not os.path.exists(out)),
               f"KUAI_BACKEND={env['KUAI_BACKEND']} {args[0]}{' --raw' if '--raw' in args else ''}:"
               " refused, naming the variable", f"rc={rc} {err}")
        if os.path.exists(out):
            os.unlink(out)
    rc, o, err = run(["encrypt", "-c", "sm4", "-k", k, "-o", out, src],
                     env={"KUAI_BACKEND": "ttable", "KUAI_ALLOW_LEAKY_BACKENDS": "1"})
    report(rc == 0 and os.path.getsize(out) > 100, "KUAI_BACKEND=ttable with the opt-in", err)
    os.unlink(out)


def test_selftest_info_speed(d):
    rc, out, err = run(["selftest"])
    report(rc == 0 and b"PASS" in out and b"FAIL" not in out, "selftest passes", out.decode() + err)
    rc, out, err = run(["info"])
    report(rc == 0 and b"sm4" in out and b"cpu features" in out, "info", err)
    js = d.file("speed.json")
    for mode in ("ctr", "gcm-dec", "short-mk"):
        rc, out, err = run(["speed", "--cipher", "sm4", "--backend", "ref", "--mode", mode,
                            "--no-sweep", "--quick", "--reps", "1", "--json", js, "-f"])
        ok = rc == 0
        if ok:
            rows = json.load(open(js))
            ok = rows and all(r["mode"].startswith(mode) and r["cipher"] == "sm4" for r in rows)
        report(ok, f"speed --mode {mode} writes those rows as JSON", err)
    # the paper matrix's rows go to the JSON too; the one-shot calls take no
    # backend, so a backend other than the default has no one-shot row (a line
    # saying so instead)
    rc, out, err = run(["speed", "--cipher", "ublock-128-128", "--backend", "ref", "--mode",
                        "paper", "--no-sweep", "--quick", "--reps", "1", "--force", "--json", js])
    ok = rc == 0
    if ok:
        rows = json.load(open(js))
        whats = {r["mode"] for r in rows}
        ok = (all(r["mode"].startswith("paper: ") and r["cipher"] == "ublock-128-128"
                  and r["backend"] == "ref" for r in rows)
              and {"paper: short enc, 1 key", "paper: key setup alone",
                   "paper: long CBC enc, 1 chain"} <= whats
              # ref is the default backend only where nothing faster runs
              and any("one-shot" in w for w in whats)
              != (b"the one-shot calls run the default backend" in out))
    report(ok, "speed --mode paper writes the matrix's rows as JSON; one-shot rows: the default's",
           err)
    rc, out, err = run(["speed", "--threads", "0"])
    report(rc != 0 and "--threads" in err, "speed --threads 0 refused", err)


def test_speed_json(d):
    """--json FILE: the report replaces a file only once complete; a run that
    dies leaves the previous report whole and nothing else behind."""
    quick = ["speed", "--cipher", "sm4", "--backend", "ref", "--mode", "ctr", "--no-sweep",
             "--quick", "--reps", "1"]
    sub = d.file("speedjson")
    os.mkdir(sub)
    js = os.path.join(sub, "r.json")
    with open(js, "w") as f:
        f.write("previous report\n")
    os.chmod(js, 0o640)
    e = dict(os.environ)
    e.pop("KUAI_BACKEND", None)
    # ECB without --quick: seconds of rows, killed after the first ones
    p = subprocess.Popen([KUAI, "speed", "--cipher", "sm4", "--backend", "ref", "--mode", "ecb",
                          "--no-sweep", "--reps", "40", "--json", js, "-f"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=e)
    time.sleep(1)
    p.terminate()
    p.wait()
    report(open(js).read() == "previous report\n" and os.listdir(sub) == ["r.json"],
           "speed --json: a run killed midway leaves the previous report whole, no temporary",
           f"rc={p.returncode} {os.listdir(sub)}")
    rc, out, err = run(quick + ["--json", js])
    report(rc == EXIT_IO and "--force" in err and open(js).read() == "previous report\n"
           and os.listdir(sub) == ["r.json"],
           "speed --json: an existing report without --force: refused (exit 2), kept", err)
    rc, out, err = run(quick + ["--json", js, "--force"])
    ok = rc == 0 and json.load(open(js)) and os.listdir(sub) == ["r.json"]
    report(ok and stat.S_IMODE(os.stat(js).st_mode) == 0o640,
           "speed --json -f: a report replaced once complete keeps its mode", err)
    link = os.path.join(sub, "link.json")
    os.symlink("r.json", link)
    os.unlink(js)
    rc, out, err = run(quick + ["--json", link])
    report(rc != 0 and "symbolic link" in err and sorted(os.listdir(sub)) == ["link.json"],
           "speed --json: a dangling link is refused, nothing created", err)
    with open(js, "w") as f:
        f.write("x")
    rc, out, err = run(quick + ["-f", "--json", link])
    report(rc == 0 and os.path.islink(link) and json.load(open(js)),
           "speed --json: a link is written through to its target, the link stays", err)
    for bad, what in ((sub, "a directory"), (os.path.join(sub, "no", "r.json"),
                                               "a missing directory")):
        t0 = time.monotonic()
        rc, out, err = run(quick + ["--reps", "50", "--json", bad])
        report(rc == EXIT_IO and bad in err and time.monotonic() - t0 < 5
               and not os.path.exists(os.path.join(sub, "no")),
               f"speed --json into {what}: refused before the run", err)
    rc, out, err = run(quick + ["--json", "/dev/null"])
    report(rc == 0 and stat.S_ISCHR(os.stat("/dev/null").st_mode),
           "speed --json /dev/null: written directly", err)
    rc, out, err = run(quick + ["--json", ""])
    report(rc == EXIT_USAGE and "empty" in err, "speed --json '': refused (exit 1)", err)
    # --modes-ext is alone: an option after it was ignored (exit 0 after a
    # run of minutes, no report written)
    try:
        p = subprocess.run([KUAI, "speed", "--modes-ext", "--json", js], capture_output=True,
                           timeout=10, start_new_session=True)
        rc, err = p.returncode, p.stderr.decode(errors="replace")
    except subprocess.TimeoutExpired:
        rc, err = None, "still running after 10 s: the option was ignored"
    report(rc == EXIT_USAGE and "--modes-ext" in err,
           "speed --modes-ext --json FILE: refused (exit 1), not ignored", f"rc={rc} {err!r}")


def test_speed_json_changed(d):
    """speed --json FILE: the report is renamed into place at the end of a
    run of seconds or minutes, over whatever the name holds by then. A
    report name found a regular file (replaced with --force) or missing at
    the start that has become a link to another file, a directory, a FIFO or
    another regular file by the end is refused (exit 2), left as it is, the
    file a link leads to untouched, no temporary file left. Before, rename
    replaced the link, FIFO or other file (exit 0)."""
    victim_text = b"a file the report must not touch\n"

    def to_link(p, sub):
        v = os.path.join(sub, "victim")
        with open(v, "wb") as f:
            f.write(victim_text)
        tmp = os.path.join(sub, "new-link")
        os.symlink(v, tmp)
        os.replace(tmp, p)

    def to_dir(p, sub):
        os.unlink(p)
        os.mkdir(p)

    def to_fifo(p, sub):
        os.unlink(p)
        os.mkfifo(p)

    def to_other(p, sub):
        tmp = os.path.join(sub, "other")
        with open(tmp, "wb") as f:
            f.write(victim_text)
        os.chmod(tmp, 0o600)
        os.replace(tmp, p)

    cases = [("a link to another file", to_link, True, "no longer a regular file"),
             ("a directory", to_dir, True, "no longer a regular file"),
             ("a FIFO", to_fifo, True, "no longer a regular file"),
             ("another regular file", to_other, True, "another file"),
             ("a link where nothing was", to_link, False, "exists")]
    e = dict(os.environ)
    e.pop("KUAI_BACKEND", None)
    runs = []
    for i, (what, change, existed, needle) in enumerate(cases):
        sub = d.file(f"speedchg{i}")
        os.mkdir(sub)
        js = os.path.join(sub, "r.json")
        if existed:
            with open(js, "w") as f:
                f.write("previous report\n")
        # a run of seconds (ECB, 20 repetitions a row), changed after its check
        p = subprocess.Popen([KUAI, "speed", "--cipher", "sm4", "--backend", "ref", "--mode",
                              "ecb", "--no-sweep", "--reps", "20", "-f", "--json", js],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=e)
        runs.append((what, change, needle, sub, js, p))
    time.sleep(1)
    changed = []
    for what, change, needle, sub, js, p in runs:
        alive = p.poll() is None  # still running: the change comes after the check
        change(js, sub)
        changed.append((what, needle, sub, js, p, alive))
    for what, needle, sub, js, p, alive in changed:
        err = p.stderr.read().decode(errors="replace")
        rc = p.wait()
        before = os.lstat(js)
        victim = os.path.join(sub, "victim")
        ok = (alive and rc == EXIT_IO and needle in err and not leftovers(sub)
              and (not os.path.exists(victim) or open(victim, "rb").read() == victim_text))
        if what.startswith("a link"):
            ok = ok and stat.S_ISLNK(before.st_mode)
        elif what == "a directory":
            ok = ok and stat.S_ISDIR(before.st_mode) and os.listdir(js) == []
        elif what == "a FIFO":
            ok = ok and stat.S_ISFIFO(before.st_mode)
        else:
            ok = ok and open(js, "rb").read() == victim_text and stat.S_IMODE(before.st_mode) == 0o600
        report(ok, f"speed -f --json: a report name become {what} during the run: refused, exit 2",
               f"alive={alive} rc={rc} {err!r} {os.listdir(sub)}")


def main():
    if not os.access(KUAI, os.X_OK):
        print(f"test_cli: {KUAI} is not an executable (build it first)")
        return 2
    supported = probe_supported()
    d = Dir()
    try:
        test_help()
        test_errors(d, supported)
        test_short_input(d)
        test_key_lengths(d)
        test_flag_values(d)
        test_options_twice(d)
        test_short_option_values(d)
        test_closed_std(d)
        test_one_file_two_ways(d)
        test_stdout_errors(d)
        test_names_escaped(d)
        test_dash_and_slash_outputs(d)
        test_same_file_stdout(d)
        test_force_output_is_other_input(d)
        test_named_fds(d)
        test_key_file_binary(d)
        test_overwrite(d)
        test_issue15(d)
        test_output_matrix(d)
        test_interrupted(d)
        test_replaced_output_changed(d)
        test_directory_swapped(d)
        test_write_only_directory(d)
        test_many_output_directories(d)
        test_killed_during_scrypt(d)
        test_ignored_signals(d)
        test_more_signals(d)
        test_no_core_dumps(d)
        test_password(d)
        test_roundtrips(d, supported)
        test_tampering(d, supported)
        test_raw(d, supported)
        test_raw_stream(d, supported)
        test_format_spec(d, supported)
        test_progress(d)
        test_password_prompt(d)
        test_password_length(d)
        test_prompt_stopped(d)
        test_lockstep_tty(d)
        test_refused_before_prompt(d)
        test_polish(d)
        test_completion_names()
        test_zsh_completion()
        test_backend_env(d)
        test_selftest_info_speed(d)
        test_speed_json(d)
        test_speed_json_changed(d)
    finally:
        shutil.rmtree(d.path, ignore_errors=True)
    print(f"cli tests: {passed} passed, {failed} failed, {skipped} skipped")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
