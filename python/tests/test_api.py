# SPDX-License-Identifier: Apache-2.0
"""The rest of the API: errors, padding, batches, multi-key, threads."""
import ctypes
import os
import random
import re
import threading
from array import array

import pytest
from cryptography.hazmat.primitives import padding as cpadding
from cryptography.hazmat.primitives.ciphers import Cipher as CCipher
from cryptography.hazmat.primitives.ciphers import algorithms, modes as cmodes
from hypothesis import given, strategies as st

import kuai
from kuai import aead, modes, padding

KEY = bytes(range(16))


def test_version_info_backends():
    assert kuai.__version__ == "0.1.0"
    info = kuai.info()
    assert set(info["ciphers"]) == {"ublock-128-128", "ublock-128-256", "ublock-256-256", "sm4",
                                    "aes-128", "aes-192", "aes-256"}
    for name, c in info["ciphers"].items():
        assert c["default"] == c["backends"][0] == kuai.backends(name)[0]
    assert "ref" in kuai.backends("sm4") and kuai.backends("aes") == kuai.backends("aes-256")


@pytest.mark.parametrize("name,key,msg", [
    ("sm4", bytes(15), "key size"), ("sm4", bytes(32), "key size"), ("aes", bytes(20), "key size"),
    ("ublock-256-256", bytes(16), "key size"), ("des", bytes(8), "unknown cipher"),
])
def test_bad_keys(name, key, msg):
    with pytest.raises(ValueError, match=msg):
        kuai.Cipher(name, key)


def test_unknown_cipher_long_name_not_shown():
    # a key in the name's place is not repeated in the error (logs)
    secret = KEY.hex()
    with pytest.raises(ValueError, match="unknown cipher a str of 32 characters") as e:
        kuai.Cipher(secret, KEY)
    assert secret not in str(e.value)
    with pytest.raises(ValueError, match="unknown cipher 'des'"):
        kuai.Cipher("des", KEY)


def test_unknown_backend_long_or_unprintable_name_not_shown():
    # A key passed by mistake as backend= (Cipher("sm4", key, key_hex)) was
    # repeated in the error, and so in logs: names of 16 characters or
    # more (a string key as Spark's aes_encrypt takes one has 16), or not
    # printable ASCII, are shown by their length only, the rule cipher
    # names follow. Short ones are still named.
    for secret in (KEY.hex(), "k" * 16, "a\x07b", "ключ"):
        with pytest.raises(ValueError, match=f"backend name of {len(secret)} characters "
                                             r"\(not shown") as e:
            kuai.Cipher("sm4", KEY, backend=secret)
        assert secret not in str(e.value)
    with pytest.raises(ValueError, match="backend 'no-such' is not available for sm4"):
        kuai.Cipher("sm4", KEY, backend="no-such")


def test_backend_env_refused():
    # KUAI_BACKEND choosing nothing usable: the error names the variable
    # and, for a leaky backend, the opt-in it also needs (it said
    # "backend '(from KUAI_BACKEND)' is not available ... (see
    # kuai.backends())", which lists ttable); with the opt-in it works.
    # A child process: the library reads the variables once.
    import subprocess
    import sys

    code = ("import kuai\n"
            "try:\n"
            "    kuai.Cipher('sm4', bytes(16)); print('ok')\n"
            "except ValueError as e:\n"
            "    print(e)\n")

    def child(**env):
        e = {k: v for k, v in os.environ.items()
             if k not in ("KUAI_BACKEND", "KUAI_ALLOW_LEAKY_BACKENDS")}
        e.update(env)
        return subprocess.run([sys.executable, "-c", code], env=e, capture_output=True,
                              text=True, check=True).stdout.strip()

    got = child(KUAI_BACKEND="ttable")
    assert got == ("KUAI_BACKEND chose ttable for sm4, which leaks through the cache and is "
                   "taken only with KUAI_ALLOW_LEAKY_BACKENDS=1")
    assert child(KUAI_BACKEND="ttable", KUAI_ALLOW_LEAKY_BACKENDS="1") == "ok"
    got = child(KUAI_BACKEND="no-such")
    assert got == "KUAI_BACKEND chooses no backend usable for sm4 on this CPU (see kuai.backends())"
    secret = "00112233445566778899aabbccddeeff"  # a key pasted there is not echoed
    assert secret not in child(KUAI_BACKEND=secret)


def test_bad_arguments():
    c = kuai.Cipher("sm4", KEY)
    with pytest.raises(ValueError, match="backend"):
        kuai.Cipher("sm4", KEY, backend="no-such")
    # A NUL in the name is no backend: not the name up to the NUL
    best = kuai.backends("sm4")[0]
    for name in (best + "\0", best + "\0no-such", "\0" + best):
        with pytest.raises(ValueError, match="backend"):
            kuai.Cipher("sm4", KEY, backend=name)
    with pytest.raises(ValueError, match="IV size"):
        c.encryptor(modes.CBC(bytes(8)))
    with pytest.raises(ValueError, match="IV size"):
        c.encryptor(modes.CTR(bytes(32)))
    with pytest.raises(TypeError):
        c.encryptor(modes.ECB()).update("text")
    with pytest.raises(TypeError, match="mode"):
        c.encryptor(cmodes.ECB())  # cryptography's, not kuai's
    # an IV, nonce or tag is bytes-like: an int is not a length of zero
    # bytes (CBC(16) would be an all-zero IV, GCM(12) an all-zero nonce),
    # nor a list of ints a nonce (cryptography raises TypeError as well)
    for bad in (16, 12, 0, -1, 2**70, [0] * 16, "0" * 16):
        for make in (modes.CBC, modes.CTR, modes.GCM,
                     lambda t: modes.GCM(bytes(12), t)):
            with pytest.raises(TypeError, match="must be bytes"):
                make(bad)
    # a partial block fails finalize() but leaves the context open, as in
    # cryptography: the rest of the block, and finalize() again, give what
    # one call of the whole would (it ended the context, and the partial
    # block given was lost)
    for mode, cmode in ((modes.ECB(), cmodes.ECB()),
                        (modes.CBC(bytes(range(16))), cmodes.CBC(bytes(range(16))))):
        want_ctx = CCipher(algorithms.SM4(KEY), cmode).encryptor()
        want = want_ctx.update(b"x" * 32) + want_ctx.finalize()
        for make in (c.encryptor, c.decryptor):
            e = make(mode)
            got = e.update(b"x" * 17)
            with pytest.raises(ValueError, match="multiple of the block length"):
                e.finalize()
            got += e.update(b"x" * 15)
            assert e.finalize() == b""
            if make == c.encryptor:
                assert got == want
            else:
                assert len(got) == 32
            with pytest.raises(kuai.AlreadyFinalized):
                e.update(b"x")
    e = c.encryptor(modes.CBC(bytes(16)))
    with pytest.raises(ValueError, match="at least 32"):
        e.update_into(bytes(32), bytearray(31))
    with pytest.raises(TypeError):
        e.update_into(bytes(32), bytes(32))  # read-only output
    with pytest.raises(ValueError, match="128-bit-block"):
        kuai.Cipher("ublock-256-256", bytes(32)).gcm_encrypt(bytes(12), b"", None)
    g = aead.SM4GCM(KEY)
    with pytest.raises(ValueError, match="Nonce"):
        g.encrypt(bytes(7), b"x", None)
    with pytest.raises(kuai.InvalidTag):
        g.decrypt(bytes(12), bytes(15), None)
    with pytest.raises(ValueError, match="key size"):
        aead.AESGCM(bytes(17))
    with pytest.raises(ValueError, match="key size"):
        aead.SM4GCM(bytes(32))


def test_aead_classes():
    for cls, args, sizes in [(aead.SM4GCM, (), {16}), (aead.AESGCM, (192,), {24}),
                             (aead.UBlockGCM, (), {16}), (aead.UBlockGCM, (256,), {32})]:
        key = cls.generate_key(*args)
        assert len(key) in sizes
        g = cls(key)
        ct = g.encrypt(b"n" * 12, b"hello", b"aad")
        assert len(ct) == 5 + 16 and g.decrypt(b"n" * 12, ct, b"aad") == b"hello"
        with pytest.raises(kuai.InvalidTag):
            g.decrypt(b"n" * 12, ct, None)
    assert aead.UBlockGCM(bytes(32)).backend in kuai.backends("ublock-128-256")


def test_ublock_gcm_is_gcm_over_ublock():
    """GCM over uBlock-128/128 built by hand from the ECB and CTR of the same
    cipher (GHASH in Python), for a 12-byte nonce."""
    key, nonce, aad, pt = os.urandom(16), os.urandom(12), os.urandom(20), os.urandom(100)
    c = kuai.Cipher("ublock-128-128", key)
    h = int.from_bytes(c.encryptor(modes.ECB()).update(bytes(16)), "big")

    def gmul(x, y):
        r, R = 0, 0xE1 << 120
        for i in range(127, -1, -1):
            if (y >> i) & 1:
                r ^= x
            x = (x >> 1) ^ R if x & 1 else x >> 1
        return r

    def ghash(data):
        y = 0
        for i in range(0, len(data), 16):
            y = gmul(y ^ int.from_bytes(data[i:i + 16].ljust(16, b"\0"), "big"), h)
        return y

    j0 = nonce + b"\0\0\0\1"
    ctr = (int.from_bytes(j0, "big") + 1).to_bytes(16, "big")
    ct = c.encryptor(modes.CTR(ctr)).update(pt)
    pad = lambda b: b + bytes(-len(b) % 16)
    s = ghash(pad(aad) + pad(ct) + (len(aad) * 8).to_bytes(8, "big") + (len(ct) * 8).to_bytes(8, "big"))
    tag = (s ^ int.from_bytes(c.encryptor(modes.ECB()).update(j0), "big")).to_bytes(16, "big")
    assert aead.UBlockGCM(key).encrypt(nonce, pt, aad) == ct + tag


@given(st.integers(0, 2**32), st.sampled_from([8, 16, 64, 128, 256, 2040]), st.integers(0, 100),
       st.sampled_from(["PKCS7", "ANSIX923"]))
def test_padding_matches_cryptography(seed, bits, n, scheme):
    r = random.Random(seed)
    data = r.randbytes(n)
    ours, theirs = getattr(padding, scheme), getattr(cpadding, scheme)
    p, cp = ours(bits).padder(), theirs(bits).padder()
    cut = r.randint(0, n)
    got = p.update(data[:cut]) + p.update(data[cut:]) + p.finalize()
    assert got == cp.update(data) + cp.finalize()
    u = ours(bits).unpadder()
    assert u.update(got[:cut]) + u.update(got[cut:]) + u.finalize() == data
    # one byte of the padding changed: both refuse it, or (the last byte
    # made another valid length) both give the same data
    if got:
        bad = bytearray(got)
        bad[-1 - r.randrange(min(len(got), bits // 8))] ^= 1 << r.randrange(8)
        res = []
        for make in (ours, theirs):
            u = make(bits).unpadder()
            try:
                res.append(u.update(bytes(bad)) + u.finalize())
            except ValueError:
                res.append("refused")
        assert res[0] == res[1]


def test_padding_rejects():
    for bad in (b"\x00" * 16, b"a" * 15 + b"\x11", b"a" * 14 + b"\x01\x02", b"a" * 15):
        u = padding.PKCS7(128).unpadder()
        u.update(bad)
        with pytest.raises(ValueError, match="Invalid padding"):
            u.finalize()
    for bad in (b"\x00" * 16, b"a" * 15 + b"\x11", b"a" * 13 + b"\x01\x00\x03", b"a" * 15,
                b"a" * 14 + b"\x02\x02"):
        u = padding.ANSIX923(128).unpadder()
        u.update(bad)
        with pytest.raises(ValueError, match="Invalid padding"):
            u.finalize()
    with pytest.raises(ValueError):
        padding.ANSIX923(12)
    with pytest.raises(ValueError):
        padding.PKCS7(12)
    # data is bytes-like: an int is not that many zero bytes to pad, a str
    # or a list of ints not data (cryptography: TypeError); the context
    # stays usable
    for ctx in (padding.PKCS7(128).padder(), padding.PKCS7(128).unpadder()):
        for bad in (5, 0, -1, 2**70, [1, 2, 3], "text"):
            with pytest.raises(TypeError, match="data must be bytes"):
                ctx.update(bad)
    p = padding.PKCS7(128).padder()
    with pytest.raises(TypeError):
        p.update(5)
    assert p.update(b"abc") + p.finalize() == b"abc" + bytes([13]) * 13


@pytest.mark.parametrize("cipher", ["sm4", "aes-128", "aes-256", "ublock-128-128", "ublock-128-256"])
def test_gcm_batches(cipher):
    r = random.Random(1)
    key = r.randbytes(32 if cipher in ("aes-256", "ublock-128-256") else 16)
    g = kuai.Cipher(cipher, key)
    n = 300
    datas = [r.randbytes(r.choice([0, 1, 15, 16, 64, 100, 3000])) for _ in range(n)]
    nonces = [r.randbytes(12) for _ in range(n)]
    aads = [r.randbytes(r.randint(0, 30)) for _ in range(n)]
    single = [g.gcm_encrypt(nonces[i], datas[i], aads[i]) for i in range(n)]
    assert aead.gcm_encrypt_batch(cipher, key, nonces, datas, aads) == single
    assert g.gcm_encrypt_batch(b"".join(nonces), datas, aads) == single  # nonces in one buffer
    assert g.gcm_decrypt_batch(nonces, single, aads) == datas
    # one AAD for all, and none
    assert g.gcm_encrypt_batch(nonces, datas, b"x") == [g.gcm_encrypt(nonces[i], datas[i], b"x") for i in range(n)]
    assert g.gcm_encrypt_batch(nonces, datas) == [g.gcm_encrypt(nonces[i], datas[i], None) for i in range(n)]
    # nonce_len out of range is refused before it sizes anything (a huge one
    # times the message count must not wrap around to the buffer's length)
    for nl in (0, -1, 7, 129, 2**62 + 3):
        for call in (g.gcm_encrypt_batch, g.gcm_decrypt_batch):
            with pytest.raises(ValueError, match="Nonce must be"):
                call(bytes(12), [b"", b"", b"", b""], nonce_len=nl)
    bad = list(single)
    bad[7] = bad[7][:-1] + bytes([bad[7][-1] ^ 1])
    bad[9] = b"short"
    with pytest.raises(kuai.InvalidTag, match="message 7"):
        g.gcm_decrypt_batch(nonces, bad, aads)
    got = aead.gcm_decrypt_batch(cipher, key, nonces, bad, aads, errors="none")
    assert got[7] is None and got[9] is None and got[:7] == datas[:7] and got[10:] == datas[10:]

    # Packed: one buffer + Arrow offsets (int32 and int64), as Spark hands them.
    np = pytest.importorskip("numpy")
    offs = np.cumsum([0] + [len(d) for d in datas])
    blob = b"".join(datas)
    nbuf = b"".join(nonces)
    for offsets in (offs.astype(np.int64), offs.astype(np.int32), array("q", offs.tolist())):
        out, out_off = g.gcm_encrypt_packed(nbuf, blob, offsets, b"x")
        oo = np.frombuffer(out_off, dtype=np.int64)
        rows = [out[oo[i]:oo[i + 1]] for i in range(n)]
        assert rows == [g.gcm_encrypt(nonces[i], datas[i], b"x") for i in range(n)]
    out, out_off = g.gcm_encrypt_packed(nbuf, blob, offs, None, prefix_nonce=True)
    oo = np.frombuffer(out_off, dtype=np.int64)
    rows = [out[oo[i]:oo[i + 1]] for i in range(n)]
    assert rows == [nonces[i] + g.gcm_encrypt(nonces[i], datas[i], None) for i in range(n)]
    # a row whose ciphertext fails comes out as zeros, never as the
    # unauthenticated plaintext, beside rows that pass
    j = next(i for i in range(n) if len(datas[i]) >= 16)
    bad_rows = list(rows)
    bad_rows[j] = bad_rows[j][:13] + bytes([bad_rows[j][13] ^ 1]) + bad_rows[j][14:]
    offs3 = np.cumsum([0] + [len(x) for x in bad_rows]).astype(np.int64)
    pt, pt_off, ok = g.gcm_decrypt_packed(None, b"".join(bad_rows), offs3, None, prefix_nonce=True, errors="none")
    po = np.frombuffer(pt_off, dtype=np.int64)
    assert not ok[j] and pt[po[j]:po[j + 1]] == bytes(len(datas[j]))
    assert all(ok[i] and pt[po[i]:po[i + 1]] == datas[i] for i in range(n) if i != j)
    # decrypt the Spark layout (nonce || ct || tag) with one row damaged
    rows[5] = rows[5][:-1] + bytes([rows[5][-1] ^ 0x80])
    rows[6] = b""  # e.g. a NULL row
    offs2 = np.cumsum([0] + [len(x) for x in rows]).astype(np.int64)
    pt, pt_off, ok = g.gcm_decrypt_packed(None, b"".join(rows), offs2, None, prefix_nonce=True, errors="none")
    po = np.frombuffer(pt_off, dtype=np.int64)
    assert list(ok) == [0 if i in (5, 6) else 1 for i in range(n)]
    for i in range(n):
        if ok[i]:
            assert pt[po[i]:po[i + 1]] == datas[i]
    with pytest.raises(kuai.InvalidTag, match="message 5"):
        g.gcm_decrypt_packed(None, b"".join(rows), offs2, None, prefix_nonce=True)


def test_packed_rejects_bad_offsets():
    g = aead.SM4GCM(KEY)
    with pytest.raises(ValueError, match="out of order"):
        g.encrypt_packed(bytes(24), bytes(10), array("q", [0, 6, 4]))
    with pytest.raises(ValueError, match="past the data"):
        g.encrypt_packed(bytes(24), bytes(10), array("q", [0, 6, 11]))
    with pytest.raises(ValueError, match="nonces"):
        g.encrypt_packed(bytes(12), bytes(10), array("q", [0, 6, 10]))
    with pytest.raises(TypeError, match="int32 or int64"):
        g.encrypt_packed(bytes(24), bytes(10), array("d", [0, 6, 10]))


def test_packed_unsigned_offsets_read_as_unsigned():
    # uint32/uint64 offsets are taken at their value: a uint32 of 2^31 or
    # more was sign-extended (offsets[2] = -1294967296 for 3000000000, an
    # offset that data of over 2 GiB holds), a uint64 of 2^63 or more taken
    # as negative.
    g = aead.SM4GCM(KEY)
    want = g.encrypt_packed(bytes(24), bytes(10), array("q", [0, 6, 10]))[0]
    for code in "ILQ":
        assert g.encrypt_packed(bytes(24), bytes(10), array(code, [0, 6, 10]))[0] == want
    with pytest.raises(ValueError, match=r"offsets\[2\] = 3000000000 .*past the data"):
        g.encrypt_packed(bytes(24), bytes(10), array("I", [0, 6, 3_000_000_000]))
    for big in (2**63, 2**64 - 1):
        with pytest.raises(ValueError, match=r"offsets\[2\] = %d past the data" % big):
            g.encrypt_packed(bytes(24), bytes(10), array("Q", [0, 6, big]))
        with pytest.raises(ValueError, match=r"offsets\[2\] = %d past the data" % big):
            kuai.Cipher("sm4", KEY).cbc_encrypt_packed(bytes(32), bytes(10), array("Q", [0, 6, big]))



class _PyBuffer(ctypes.Structure):
    """CPython's Py_buffer, to hand the extension a view with any format."""
    _fields_ = [("buf", ctypes.c_void_p), ("obj", ctypes.py_object), ("len", ctypes.c_ssize_t),
                ("itemsize", ctypes.c_ssize_t), ("readonly", ctypes.c_int),
                ("ndim", ctypes.c_int), ("format", ctypes.c_void_p), ("shape", ctypes.c_void_p),
                ("strides", ctypes.c_void_p), ("suboffsets", ctypes.c_void_p),
                ("internal", ctypes.c_void_p)]


def _exported(data, fmt, itemsize):
    """A memoryview over data whose buffer format is the bytes fmt as they
    are (what a C extension's exporter may give; memoryview.cast and the
    struct module make no such format), and what it points into (keep it
    alive as long as the view)."""
    keep = [ctypes.create_string_buffer(data, len(data)),
            ctypes.create_string_buffer(fmt, len(fmt)),
            (ctypes.c_ssize_t * 1)(len(data) // itemsize), (ctypes.c_ssize_t * 1)(itemsize)]
    b = _PyBuffer(buf=ctypes.addressof(keep[0]), len=len(data), itemsize=itemsize, readonly=1,
                  ndim=1, format=ctypes.addressof(keep[1]), shape=ctypes.addressof(keep[2]),
                  strides=ctypes.addressof(keep[3]))
    f = ctypes.pythonapi.PyMemoryView_FromBuffer
    f.restype, f.argtypes = ctypes.py_object, [ctypes.POINTER(_PyBuffer)]
    return f(ctypes.byref(b)), keep


def test_packed_offsets_format_without_a_type():
    # A format of "" or a bare byte-order prefix names no type: refused. It
    # was taken as int64, and whether it was depended on the byte after the
    # format's terminating NUL (read past the string): "<" followed by
    # "\0\0" passed, by "\0X" failed.
    g = aead.SM4GCM(KEY)
    k = kuai.Cipher("sm4", KEY)
    offs = array("q", [0, 6, 10]).tobytes()
    mv, keep = _exported(offs, b"<q\0", 8)
    assert len(g.encrypt_packed(bytes(24), bytes(10), mv)[0]) == 10 + 2 * 16
    for fmt in (b"\0\0", b"\0X", b"<\0\0", b"<\0X", b"=\0\0", b"@\0\0"):
        mv, keep = _exported(offs, fmt, 8)
        with pytest.raises(TypeError, match="int32 or int64"):
            g.encrypt_packed(bytes(24), bytes(10), mv)
        with pytest.raises(TypeError, match="int32 or int64"):
            k.cbc_encrypt_packed(bytes(32), bytes(10), mv)

# A thread flips one offset of a writable offsets array between its value and
# one far past the data while the main thread runs packed calls, which cut
# the rows with the GIL released. Each call must either refuse the offsets
# it saw (ValueError) or give exactly the rows of the good offsets: reading
# the offsets again after they were checked ran rows past the data and the
# output (a segfault within a second). In a child, so that a crash is a
# failed test and not a dead test run.
_PACKED_RACE = r"""
import os, sys, threading, time
from array import array
import kuai
from kuai.aead import SM4GCM
n = 4000
g, k = SM4GCM(bytes(16)), kuai.Cipher("sm4", bytes(16))
data, nonces, ivs = os.urandom(64 * n), os.urandom(12 * n), os.urandom(16 * n)
offs = array("q", range(0, 64 * (n + 1), 64))
calls = {
    "gcm": lambda: g.encrypt_packed(nonces, data, offs),
    "cbc": lambda: k.cbc_encrypt_packed(ivs, data, offs),
}
want = {name: bytes(f()[0]) for name, f in calls.items()}
stop = False
def flip():
    i, good = n // 2, offs[n // 2]
    while not stop:
        offs[i] = 1 << 40
        offs[i] = good
t = threading.Thread(target=flip)
t.start()
done = refused = 0
end = time.monotonic() + float(sys.argv[1])
try:
    while time.monotonic() < end:
        for name, f in calls.items():
            try:
                out = f()[0]
            except ValueError:
                refused += 1
                continue
            assert bytes(out) == want[name], name
            done += 1
finally:
    stop = True
    t.join()
print(done, refused)
"""


def test_packed_offsets_changed_by_another_thread():
    import subprocess
    import sys
    r = subprocess.run([sys.executable, "-c", _PACKED_RACE, "2"], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, (r.returncode, r.stderr[-2000:])
    done, refused = map(int, r.stdout.split())
    assert done > 0


def test_cbc_decrypt_packed_leaves_nothing_past_the_rows():
    # The output is sized for the rows before their padding is known; what
    # lies past the last offset (the last row's padding, the room of rows
    # that failed or are not IV + whole blocks) must be zeros, never the
    # decrypted padding or uninitialised memory.
    k = kuai.Cipher("sm4", KEY)
    datas = [b"first row", b"", b"x" * 40]
    offs = array("q", [0])
    for d in datas:
        offs.append(offs[-1] + len(d))
    out, oo = k.cbc_encrypt_packed(bytes(range(48)), b"".join(datas), offs)
    rows = [bytes(out[oo[i]:oo[i + 1]]) for i in range(3)]
    rows.insert(1, os.urandom(16 + 24))          # not IV + whole blocks
    rows.insert(2, rows[0][:-1] + b"\x01")        # padding wrong (almost surely)
    offs2 = array("q", [0])
    for r in rows:
        offs2.append(offs2[-1] + len(r))
    data = b"".join(rows)
    for _ in range(3):
        # freed memory full of 0xAA for the output to land on
        junk = [b"\xaa" * n for n in range(100, 200)]
        del junk
        pt, po, ok = k.cbc_decrypt_packed(data, offs2)
        assert list(ok) == [1, 0, 0, 1, 1]
        assert [pt[po[i]:po[i + 1]] for i in (0, 3, 4)] == datas
        assert pt[po[-1]:] == bytes(len(pt) - po[-1])


@pytest.mark.parametrize("cipher", ["sm4", "aes-128", "ublock-128-128", "ublock-256-256"])
def test_cbc_multi(cipher):
    r = random.Random(2)
    ks = kuai.info()["ciphers"][cipher]["key_size"]
    bs = kuai.info()["ciphers"][cipher]["block_size"]
    keys = [kuai.Cipher(cipher, r.randbytes(ks)) for _ in range(11)]
    ivs = [r.randbytes(bs) for _ in range(11)]
    datas = [r.randbytes(bs * 37) for _ in range(11)]
    ct = kuai.cbc_encrypt_multi(keys, ivs, datas)
    assert ct == [k.encryptor(modes.CBC(iv)).update(d) for k, iv, d in zip(keys, ivs, datas)]
    assert kuai.cbc_decrypt_multi(keys, ivs, ct) == datas
    with pytest.raises(ValueError, match="same length"):
        kuai.cbc_encrypt_multi(keys[:2], ivs[:2], [datas[0], datas[1][:bs]])
    with pytest.raises(ValueError, match="multiple of the block"):
        kuai.cbc_encrypt_multi(keys[:1], ivs[:1], [b"x"])
    with pytest.raises(ValueError, match="same cipher"):
        kuai.cbc_encrypt_multi([keys[0], kuai.Cipher("aes-256", bytes(32))], ivs[:2], datas[:2])


def test_threads_share_a_key():
    """One key, 4 threads at once on large buffers (GIL released) and small
    ones, every result checked against cryptography."""
    key = os.urandom(16)
    c, g = kuai.Cipher("sm4", key), aead.SM4GCM(key)
    errors = []

    def work(seed):
        r = random.Random(seed)
        try:
            for _ in range(30):
                n = r.choice([16, 4096, 200000])
                iv, data = r.randbytes(16), r.randbytes(n)
                want = CCipher(algorithms.SM4(key), cmodes.CTR(iv)).encryptor().update(data)
                assert c.encryptor(modes.CTR(iv)).update(data) == want
                assert g.decrypt(iv[:12], g.encrypt(iv[:12], data, None), None) == data
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    ts = [threading.Thread(target=work, args=(s,)) for s in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors


def test_shared_stream_is_not_corrupted():
    """Threads feeding one CTR stream: the lock keeps each update whole, so the
    keystream is used exactly once (the concatenation in lock order decrypts)."""
    key, iv = os.urandom(16), os.urandom(16)
    e = kuai.Cipher("sm4", key).encryptor(modes.CTR(iv))
    pieces, lock = [], threading.Lock()

    def work():
        for _ in range(50):
            data = bytes(5000)
            with lock:
                pieces.append(e.update(data))

    ts = [threading.Thread(target=work) for _ in range(3)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    want = CCipher(algorithms.SM4(key), cmodes.CTR(iv)).encryptor().update(bytes(5000 * 150))
    assert b"".join(pieces) == want


def test_key_freed():
    import gc
    import weakref

    # Key objects have no __dict__/weakref slot; check the type does not leak
    # through reference cycles instead: creating many keys keeps memory flat.
    import tracemalloc
    tracemalloc.start()
    for _ in range(2000):
        kuai.Cipher("sm4", KEY)
    gc.collect()
    cur, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert cur < 2000 * 8192 // 10  # 8 KiB schedules, not kept
    del weakref


@pytest.mark.parametrize("mode", [modes.CTR(bytes(16)), modes.CBC(bytes(16)), modes.ECB(),
                                  modes.GCM(bytes(12))])
def test_contexts_are_made_by_encryptor_only(mode):
    # A context type inherited object's tp_new: type(ctx)() and pickle's
    # protocols 0 and 1 made a context without key or lock, whose first
    # update() or finalize() crashed the interpreter.
    import copy
    import pickle

    c = kuai.Cipher("sm4", KEY)
    for ctx in (c.encryptor(mode), c.decryptor(mode)):
        with pytest.raises(TypeError, match="Cipher.encryptor"):
            type(ctx)()
        for proto in range(pickle.HIGHEST_PROTOCOL + 1):
            with pytest.raises(TypeError, match="cannot pickle"):
                pickle.dumps(ctx, proto)
        with pytest.raises(TypeError):
            copy.copy(ctx)
        assert len(ctx.update(bytes(32))) == 32  # still works


def test_keyword_arguments_as_cryptography():
    # cryptography's signatures take their arguments by name too
    # (AESGCM(k).encrypt(nonce, data, associated_data=None) is common); the
    # C methods took them by position only (TypeError: takes no keyword
    # arguments).
    from cryptography.hazmat.primitives.ciphers import aead as caead

    key, nonce, iv = bytes(range(16)), bytes(12), bytes(16)
    want = caead.AESGCM(key).encrypt(nonce, b"data", associated_data=b"ad")
    g = aead.AESGCM(key)
    assert g.encrypt(nonce, b"data", associated_data=b"ad") == want
    assert g.encrypt(nonce=nonce, data=b"data", associated_data=b"ad") == want
    assert g.decrypt(nonce, data=want, associated_data=b"ad") == b"data"
    assert g.encrypt(nonce, b"", associated_data=None) == caead.AESGCM(key).encrypt(nonce, b"", None)
    with pytest.raises(TypeError, match="associated_data"):
        g.encrypt(nonce, b"data")  # required, as in cryptography
    with pytest.raises(TypeError, match="unexpected keyword argument 'aad'"):
        g.encrypt(nonce, b"data", aad=None)
    with pytest.raises(TypeError, match="multiple values for argument 'data'"):
        g.encrypt(nonce, b"data", None, data=b"x")
    with pytest.raises(TypeError, match="at most 3 arguments"):
        g.encrypt(nonce, b"data", None, None)

    c = kuai.Cipher("aes", key)
    cc = CCipher(algorithms.AES(key), cmodes.CTR(iv)).encryptor()
    e = c.encryptor(modes.CTR(iv))
    assert e.update(data=b"abc") == cc.update(data=b"abc")
    buf, cbuf = bytearray(5), bytearray(5)
    assert e.update_into(data=b"defgh", buf=buf) == cc.update_into(data=b"defgh", buf=cbuf) == 5
    assert buf == cbuf
    with pytest.raises(TypeError, match="missing required argument 'buf'"):
        e.update_into(b"x")

    enc = c.encryptor(modes.GCM(nonce))
    enc.authenticate_additional_data(data=b"ad")
    ct = enc.update(data=b"data") + enc.finalize()
    assert ct + enc.tag == want
    dec = c.decryptor(modes.GCM(nonce))
    dec.authenticate_additional_data(b"ad")
    assert dec.update(ct) == b"data"
    dec.finalize_with_tag(tag=enc.tag)


def _stub_names(path):
    """{name: None for a function or value, {method names} for a class} of
    a .pyi file."""
    import ast
    names = {}
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.ClassDef):
            names[node.name] = {n.name for n in node.body if isinstance(n, ast.FunctionDef)}
        elif isinstance(node, ast.FunctionDef):
            names[node.name] = None
        elif isinstance(node, ast.AnnAssign):
            names[node.target.id] = None
    return names


@pytest.mark.parametrize("module", ["_kuai", "_kuai_file"])
def test_stubs_name_what_the_extension_has(module):
    # Every public name of the extension modules, and every method of their
    # classes, is in the type stubs (Key.cbc_encrypt_packed and
    # cbc_decrypt_packed were not), and the stubs name nothing they lack.
    import importlib
    import pathlib
    try:
        m = importlib.import_module("kuai." + module)
    except ImportError:
        pytest.skip(module + " not built (no OpenSSL 3 headers)")
    stub = _stub_names(pathlib.Path(kuai.__file__).parent / (module + ".pyi"))
    real = {n for n in vars(m) if not n.startswith("__")}
    assert real - set(stub) == set()
    assert set(stub) - real - {"Buffer", "_K"} == set()
    for name, methods in stub.items():
        if methods is not None:
            have = {a for a in vars(getattr(m, name)) if not a.startswith("__")}
            assert (name, have - methods) == (name, set())
            assert (name, methods - have - {"__new__"}) == (name, set())


def _raised(f):
    try:
        f()
    except Exception as e:
        return type(e)
    return None


def test_not_contiguous_is_a_buffer_error_as_in_cryptography():
    # A buffer that is not C-contiguous (a strided slice) raises BufferError
    # as in cryptography, for data and for update_into's buf alike (the buf
    # raised TypeError); a read-only buf is a TypeError in both.
    from cryptography.hazmat.primitives.ciphers import aead as caead

    key, iv, nonce = bytes(16), bytes(16), bytes(12)
    strided = memoryview(bytearray(64))[::2]
    c = kuai.Cipher("aes", key)
    for mode, cmode in ((modes.CTR(iv), cmodes.CTR(iv)), (modes.GCM(nonce), cmodes.GCM(nonce))):
        for call, want in ((lambda e: e.update(strided), BufferError),
                           (lambda e: e.update_into(strided, bytearray(64)), BufferError),
                           (lambda e: e.update_into(b"x" * 16, strided), BufferError),
                           (lambda e: e.update_into(b"x" * 16, bytes(64)), TypeError),
                           (lambda e: e.update_into(b"x" * 16, memoryview(bytes(64))[::2]),
                            TypeError)):
            theirs = _raised(lambda: call(CCipher(algorithms.AES(key), cmode).encryptor()))
            ours = _raised(lambda: call(c.encryptor(mode)))
            assert ours == theirs == want
    assert (_raised(lambda: aead.AESGCM(key).encrypt(nonce, strided, None))
            == _raised(lambda: caead.AESGCM(key).encrypt(nonce, strided, None)) == BufferError)


@pytest.mark.parametrize("mode", [modes.CTR(bytes(16)), modes.CBC(bytes(16)), modes.GCM(bytes(12))])
def test_overlap_copy_is_wiped(mode):
    # An update_into whose output overlaps its input at another address
    # runs on a copy of the input; that copy (the plaintext) was freed as
    # it was, and the next allocation of its size (glibc hands the same
    # chunk back) still held it. It is zeroed before it is freed.
    malloc, free = ctypes.pythonapi.PyMem_Malloc, ctypes.pythonapi.PyMem_Free
    malloc.restype, malloc.argtypes = ctypes.c_void_p, [ctypes.c_size_t]
    free.argtypes = [ctypes.c_void_p]
    n = 1008  # above pymalloc's 512, in glibc's tcache: reused first
    c = kuai.Cipher("aes", KEY)
    for _ in range(3):
        pt = os.urandom(n + 16)
        mv = memoryview(bytearray(pt))
        c.encryptor(mode).update_into(mv[16:], mv[:-16])  # input copied: it overlaps
        p = malloc(n)
        try:
            got = ctypes.string_at(p, n)
        finally:
            free(p)
        left = pt[16 + 64:16 + 200] in got
        assert not left, "the input's copy was freed unerased"


def test_encryption_takes_no_errors_argument():
    # errors= says what a failed authentication gives; encryption has none
    # and took the argument to ignore it, errors="none" or "raise" alike.
    g = aead.SM4GCM(KEY)
    offs = array("q", [0, 3])
    for errors in ("none", "raise"):
        with pytest.raises(TypeError, match="errors"):
            g.encrypt_batch(bytes(12), [b"abc"], errors=errors)
        with pytest.raises(TypeError, match="errors"):
            g.encrypt_packed(bytes(12), b"abc", offs, errors=errors)
    ct = g.encrypt_batch(bytes(12), [b"abc"], None, 12)  # nonce_len is the 4th now
    assert g.decrypt_batch(bytes(12), ct, errors="none") == [b"abc"]
    out, oo = g.encrypt_packed(bytes(12), b"abc", offs)
    assert g.decrypt_packed(bytes(12), out, oo, errors="none")[0] == b"abc"


def test_numpy_not_contiguous_or_read_only_as_cryptography():
    # numpy reports a non-C-contiguous array asked for as a simple view, and
    # a read-only one asked for as writable, with ValueError; the extension
    # passed that on, where the docs and cryptography say BufferError (not
    # C-contiguous) and TypeError (read-only buf). memoryview raises
    # BufferError itself, so only other exporters showed it.
    np = pytest.importorskip("numpy")
    from cryptography.hazmat.primitives import cmac as ccmac
    from cryptography.hazmat.primitives.ciphers import aead as caead
    from kuai.cmac import CMAC

    key, iv, nonce = bytes(16), bytes(16), bytes(12)
    fortran = np.zeros((8, 4), dtype=np.uint8).T  # 32 bytes, not C-contiguous
    read_only = np.zeros(32, dtype=np.uint8)
    read_only.setflags(write=False)
    c = kuai.Cipher("aes", key)
    for mode, cmode in ((modes.CTR(iv), cmodes.CTR(iv)), (modes.GCM(nonce), cmodes.GCM(nonce))):
        for call, want in ((lambda e: e.update(fortran), BufferError),
                           (lambda e: e.update_into(fortran, bytearray(64)), BufferError),
                           (lambda e: e.update_into(b"x" * 16, np.zeros((8, 4), np.uint8).T),
                            BufferError),
                           (lambda e: e.update_into(b"x" * 16, read_only), TypeError)):
            theirs = _raised(lambda: call(CCipher(algorithms.AES(key), cmode).encryptor()))
            ours = _raised(lambda: call(c.encryptor(mode)))
            assert ours == theirs == want
    for args in ((nonce, fortran, None), (nonce, b"", fortran)):
        assert (_raised(lambda: aead.AESGCM(key).encrypt(*args))
                == _raised(lambda: caead.AESGCM(key).encrypt(*args)) == BufferError)
    assert (_raised(lambda: CMAC(c).update(fortran))
            == _raised(lambda: ccmac.CMAC(algorithms.AES(key)).update(fortran)) == BufferError)
    # the kuai-only calls alike: packed data and offsets, batch messages
    g = aead.SM4GCM(key)
    offs = np.zeros((2, 2), dtype=np.int64).T  # 4 offsets, not C-contiguous
    assert _raised(lambda: g.encrypt_packed(bytes(36), b"", offs)) is BufferError
    assert _raised(lambda: g.encrypt_packed(bytes(12), fortran, array("q", [0, 32]))) is BufferError
    assert _raised(lambda: g.encrypt_batch(bytes(12), [fortran])) is BufferError


def test_arrays_of_python_objects_are_not_bytes(tmp_path):
    # A numpy dtype=object array, a structured dtype with an object field
    # and a ctypes py_object array export buffer format 'O': their bytes are
    # the objects' addresses. They were taken as a key, IV, data or AAD, and
    # as update_into's or encrypt_into's buf they were overwritten with
    # ciphertext: the interpreter then crashed freeing the "objects".
    np = pytest.importorskip("numpy")
    from kuai import file as kfile
    from kuai.cmac import CMAC
    from kuai.compat import gmssl

    def kinds(n_bytes):  # each of n_bytes bytes (a multiple of 16)
        yield np.empty(n_bytes // 8, dtype=object)
        yield np.zeros(n_bytes // 16, dtype=[("a", "<i8"), ("b", "O")])
        yield (ctypes.py_object * (n_bytes // 8))()

    key = bytes(16)
    c = kuai.Cipher("aes", key)
    for objs in kinds(16):
        calls = [lambda: kuai.Cipher("aes", objs),
                 lambda: c.encryptor(modes.CBC(objs)),
                 lambda: c.encryptor(modes.ECB()).update(objs),
                 lambda: aead.AESGCM(objs),
                 lambda: aead.AESGCM(key).encrypt(bytes(12), objs, None),
                 lambda: aead.AESGCM(key).encrypt(bytes(12), b"", objs),
                 lambda: aead.AESCCM(key).encrypt(bytes(12), objs, None),
                 lambda: CMAC(c).update(objs),
                 lambda: padding.PKCS7(128).padder().update(objs),
                 lambda: kfile.header(objs),
                 lambda: kfile.encrypt(b"x", str(tmp_path / "o.kuai"), key=objs, cipher="aes"),
                 lambda: kfile.encrypt(b"x", str(tmp_path / "o.kuai"), password=objs, cipher="sm4"),
                 lambda: gmssl.CryptSM4().set_key(objs, gmssl.SM4_ENCRYPT)]
        for call in calls:
            with pytest.raises(TypeError, match="Python objects"):
                call()
    assert not (tmp_path / "o.kuai").exists()
    for buf in kinds(64):
        before = bytes(memoryview(buf).cast("B"))
        for call in (lambda: c.encryptor(modes.CTR(bytes(16))).update_into(bytes(16), buf),
                     lambda: aead.AESGCM(key).encrypt_into(bytes(12), bytes(16), None, buf),
                     lambda: aead.AESGCM(key).decrypt_into(bytes(12), bytes(32), None, buf)):
            with pytest.raises(TypeError, match="Python objects"):
                call()
        assert bytes(memoryview(buf).cast("B")) == before  # the pointers untouched
        del buf  # freeing it crashed when its pointers had been overwritten
    # a batch's nonces or AADs as an object array (a pandas column's .values)
    # are a sequence of buffers, as a list is, not one buffer of pointers
    g = aead.AESGCM(key)
    nonces = [os.urandom(12) for _ in range(3)]
    datas = [b"a", b"bc", b""]
    aads = [b"x", b"", b"yz"]
    want = g.encrypt_batch(nonces, datas, aads)
    got = g.encrypt_batch(np.array(nonces, dtype=object), datas, np.array(aads, dtype=object))
    assert got == want
    assert g.decrypt_batch(np.array(nonces, dtype=object), want,
                           np.array(aads, dtype=object)) == datas


def test_aead_keys_are_for_their_mode_only():
    # A kuai.aead key object is a _kuai.Key: CMAC, multi-key CBC and the
    # streams took it. CBC of a zero block under a zero IV with an AESGCM
    # key gave GCM's hash key H = E_K(0), and CMAC or CTR under the AEAD's
    # key is a use its security does not cover. Now TypeError, as for a
    # key object of the wrong kind; the key's own mode still works.
    from kuai._kuai import Key, stream
    from kuai.cmac import CMAC

    key = bytes(16)
    for k, own in ((aead.AESGCM(key), "GCM"), (aead.SM4GCM(key), "GCM"),
                   (aead.AESCCM(key), "CCM"), (aead.UBlockCCM(key, 8), "CCM")):
        calls = [lambda: CMAC(k),
                 lambda: kuai.cbc_encrypt_multi([k], [bytes(16)], [bytes(16)]),
                 lambda: kuai.cbc_decrypt_multi([k], [bytes(16)], [bytes(16)]),
                 lambda: stream(k, modes._CBC_ENC, bytes(16)),
                 lambda: stream(k, modes._ECB_ENC, None),
                 lambda: stream(k, modes._CTR, bytes(16)),
                 lambda: stream(k, modes._OFB, bytes(16)),
                 lambda: Key.cbc_encrypt_packed(k, bytes(16), bytes(16), array("q", [0, 16])),
                 (lambda: Key.ccm_encrypt(k, bytes(12), b"x", None)) if own == "GCM" else
                 (lambda: Key.gcm_encrypt(k, bytes(12), b"x", None)),
                 (lambda: Key.ccm_encrypt_into(k, bytes(12), b"x", None, bytearray(17)))
                 if own == "GCM" else
                 (lambda: Key.gcm_encrypt_batch(k, [bytes(12)], [b"x"]))]
        for call in calls:
            with pytest.raises(TypeError, match=f"kuai.aead key is for {own} only"):
                call()
        assert k.decrypt(bytes(12), k.encrypt(bytes(12), b"abc", None), None) == b"abc"
    # H stays unreachable; an ordinary key still does everything
    c = kuai.Cipher("aes", key)
    assert CMAC(c) is not None
    assert kuai.cbc_encrypt_multi([c], [bytes(16)], [bytes(16)])[0] == \
        c.encryptor(modes.ECB()).update(bytes(16))
    with pytest.raises(ValueError, match="aead must be"):
        Key(kuai._names.cipher_id("aes", key), key, aead="cbc")


def test_gcm_over_its_length_limit(tmp_path):
    # A GCM ciphertext longer than GCM's 2^36 - 32 bytes of plaintext (plus
    # the tag) is one no encryption made: InvalidTag, as for one too short
    # to hold a tag (and as CCM over its length field). It raised
    # ValueError, so code catching InvalidTag on untrusted input let it
    # through as another exception. Encryption of such data: ValueError,
    # before anything the size of the data is allocated. The data is a
    # sparse file mapped read-only: no memory or disk is used.
    import mmap

    limit = 2**36 - 32
    path = tmp_path / "sparse"
    with open(path, "wb") as f:
        f.truncate(limit + 16 + 1)
    with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mm:
        big = memoryview(mm)
        try:
            for g in (aead.AESGCM(KEY), aead.SM4GCM(KEY)):
                with pytest.raises(kuai.InvalidTag):
                    g.decrypt(bytes(12), big, None)
                with pytest.raises(kuai.InvalidTag):
                    g.decrypt_into(bytes(12), big, None, bytearray(16))
                with pytest.raises(ValueError, match="too long for GCM"):
                    g.encrypt(bytes(12), big[:limit + 1], None)
        finally:
            big.release()


@pytest.mark.parametrize("bits", [128.0, "128", None, b"128"])
def test_pkcs7_block_size_not_an_integer(bits):
    # a float was accepted at construction and failed at the first
    # update() with a slicing TypeError; now TypeError at once
    with pytest.raises(TypeError):
        padding.PKCS7(bits)


def test_pkcs7_block_size_numpy_integer():
    np = pytest.importorskip("numpy")
    p = padding.PKCS7(np.int64(128)).padder()
    assert p.update(b"abc") + p.finalize() == b"abc" + bytes([13]) * 13


def test_strided_iv_and_padding_data_are_buffer_errors_as_in_cryptography():
    # The modes' IV/nonce and the padding contexts' data were copied with
    # bytes(memoryview(x)), which gathers a strided buffer silently; every
    # other buffer argument (and cryptography) raises BufferError.
    key = bytes(16)
    strided = memoryview(bytearray(32))[::2]  # 16 bytes, not C-contiguous
    pairs = [(lambda: kuai.Cipher("aes", key).encryptor(modes.CBC(strided)),
              lambda: CCipher(algorithms.AES(key), cmodes.CBC(strided)).encryptor()),
             (lambda: kuai.Cipher("aes", key).encryptor(modes.CTR(strided)),
              lambda: CCipher(algorithms.AES(key), cmodes.CTR(strided)).encryptor()),
             (lambda: kuai.Cipher("aes", key).encryptor(modes.GCM(strided[:12])),
              lambda: CCipher(algorithms.AES(key), cmodes.GCM(strided[:12])).encryptor()),
             (lambda: padding.PKCS7(128).padder().update(strided),
              lambda: cpadding.PKCS7(128).padder().update(strided)),
             (lambda: padding.PKCS7(128).unpadder().update(strided),
              lambda: cpadding.PKCS7(128).unpadder().update(strided))]
    for ours, theirs in pairs:
        assert _raised(ours) == _raised(theirs) == BufferError
    assert _raised(lambda: modes.XTS(strided)) is BufferError
    assert _raised(lambda: modes.GCM(bytes(12), strided)) is BufferError


@pytest.mark.parametrize("bits", ["128", 128.0, None, b"128", 100, True])
def test_generate_key_errors_as_cryptography(bits):
    # a bit_length that is not an integer is cryptography's TypeError
    # ("bit_length must be an integer"), not the ValueError of a wrong one
    from cryptography.hazmat.primitives.ciphers import aead as caead

    for ours, theirs in ((aead.AESGCM, caead.AESGCM), (aead.AESCCM, caead.AESCCM)):
        assert _raised(lambda: ours.generate_key(bits)) is _raised(lambda: theirs.generate_key(bits))
    want = _raised(lambda: caead.AESGCM.generate_key(bits))
    for cls in (aead.UBlockGCM, aead.UBlockCCM):
        assert _raised(lambda: cls.generate_key(bits)) is want


# A context that a Key subclass's instance refers to is a reference cycle
# (k.ctx -> context -> k). The contexts take part in the cycle collector, so
# gc.collect() frees the key, and with it wipes its schedule; before, the
# cycle was never collected.
@pytest.mark.parametrize("kind", ["stream", "gcm", "cmac"])
def test_context_cycle_is_collected(kind):
    import gc
    import weakref
    from kuai import cmac

    class K(kuai.Cipher):
        pass

    def make():
        k = K("sm4", bytes(16))
        if kind == "stream":
            k.ctx = k.encryptor(modes.CBC(bytes(16)))
        elif kind == "gcm":
            k.ctx = k.encryptor(modes.GCM(bytes(12)))
            k.ctx.update(b"started")
        else:
            k.ctx = cmac.CMAC(k)
            k.ctx.update(b"started")
        return weakref.ref(k)

    ref = make()
    gc.collect()
    assert ref() is None


# The AEAD classes offer what cryptography's do (encrypt, decrypt, the
# *_into pair, generate_key) and kuai's documented extras, not the base
# key's other calls: an AESCCM used as GCM by a raw gcm_encrypt, or an
# AESGCM as CCM, raises AttributeError.
def test_aead_classes_hide_base_key_calls():
    from cryptography.hazmat.primitives.ciphers import aead as caead

    g, c = aead.AESGCM(bytes(16)), aead.AESCCM(bytes(16), 8)
    for obj, theirs in ((g, caead.AESGCM(bytes(16))), (c, caead.AESCCM(bytes(16), 8))):
        for name in ("encrypt", "decrypt", "encrypt_into", "decrypt_into", "generate_key"):
            assert hasattr(obj, name) and hasattr(theirs, name)
        for name in ("gcm_encrypt", "ccm_encrypt", "cbc_encrypt_packed", "xts", "cipher_id"):
            assert not hasattr(obj, name), name
            assert name not in dir(obj)
            with pytest.raises(AttributeError):
                getattr(type(obj), name)
    assert not hasattr(g, "tag_length") and c.tag_length == 8
    # tag_length=None is the default 16, as cryptography takes it (a TypeError before)
    assert aead.AESCCM(bytes(16), None).tag_length == caead.AESCCM(bytes(16), None).encrypt(
        bytes(12), b"", None).__len__() == 16
    assert hasattr(g, "encrypt_batch") and not hasattr(c, "encrypt_batch")
    assert "backend=" in repr(g) and "tag_length=8" in repr(c)


# dir() on the class, not only on an instance, omits the hidden calls
# (type.__dir__ listed the placeholders and the base key's methods, and
# help() showed them), and getattr on the class raises; the metaclass that
# does it leaves isinstance, subclassing and help() as before, and a
# subclass that defines one of the names again has it listed.
@pytest.mark.parametrize("cls", [aead.SM4GCM, aead.AESGCM, aead.UBlockGCM, aead.SM4CCM,
                                 aead.AESCCM, aead.UBlockCCM])
def test_aead_class_dir_hides_base_key_calls(cls):
    import pydoc

    hidden = set(aead._KEY_NAMES) - ({"tag_length"} if "CCM" in cls.__name__ else set())
    listed = dir(cls)
    assert listed == sorted(listed)
    for name in hidden:
        assert name not in listed, name
        with pytest.raises(AttributeError):
            getattr(cls, name)
        assert not hasattr(cls, name)
    for name in ("encrypt", "decrypt", "encrypt_into", "decrypt_into", "generate_key", "backend",
                 "__init__", "__new__", "__repr__", "__dir__"):
        assert name in listed, name
    assert ("encrypt_batch" in listed) == ("GCM" in cls.__name__)
    assert ("tag_length" in listed) == ("CCM" in cls.__name__)
    key = bytes(16)
    obj = cls(key)
    assert isinstance(obj, cls) and isinstance(obj, kuai._kuai.Key)
    assert issubclass(cls, kuai._kuai.Key)
    assert not isinstance(kuai.Cipher("sm4", key), cls)
    assert "gcm_encrypt" in dir(kuai.Cipher) and "xts" in dir(kuai.Cipher("sm4", key))
    # help()'s entries are the " |  name..." lines (encrypt's reads
    # "encrypt = gcm_encrypt(...)", the C method's own name: not an entry).
    page = pydoc.render_doc(cls, renderer=pydoc.plaintext)
    entries = set(re.findall(r"^ \|  (\w+)", page, re.M))
    assert {"encrypt", "decrypt", "encrypt_into", "generate_key", "backend"} <= entries
    assert not entries & hidden, entries & hidden

    class Sub(cls):
        def xts(self):
            return "own"

    sub = Sub(key)
    assert isinstance(sub, cls) and sub.xts() == "own"
    assert sub.decrypt(bytes(12), sub.encrypt(bytes(12), b"m", None), None) == b"m"
    assert "xts" in dir(Sub) and "xts" in dir(sub)
    assert "gcm_encrypt" not in dir(Sub) and "gcm_encrypt" not in dir(sub)
    with pytest.raises(AttributeError):
        getattr(Sub, "gcm_encrypt")
