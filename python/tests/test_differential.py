# SPDX-License-Identifier: Apache-2.0
"""kuai against cryptography (OpenSSL): SM4 and AES, ECB/CBC/CTR/GCM, random
keys, lengths 0..64 KiB, whole and in pieces, and in place via update_into."""
import random

import pytest
from cryptography.hazmat.primitives.ciphers import Cipher as CCipher
from cryptography.hazmat.primitives.ciphers import algorithms, modes as cmodes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM as CAESGCM
from hypothesis import given, strategies as st

import kuai
from kuai import aead, modes

MAX = 64 * 1024
ALGS = {
    "sm4": (algorithms.SM4, [16]),
    "aes": (algorithms.AES, [16, 24, 32]),
}


def rnd(seed, n):
    return random.Random(seed).randbytes(n)


def reference(alg, key, mode_name, iv, data, encrypt):
    cls = ALGS[alg][0]
    m = {"ECB": lambda: cmodes.ECB(), "CBC": lambda: cmodes.CBC(iv), "CTR": lambda: cmodes.CTR(iv)}[mode_name]()
    c = CCipher(cls(key), m)
    ctx = c.encryptor() if encrypt else c.decryptor()
    return ctx.update(data) + ctx.finalize()


def kuai_mode(mode_name, iv):
    return {"ECB": lambda: modes.ECB(), "CBC": lambda: modes.CBC(iv), "CTR": lambda: modes.CTR(iv)}[mode_name]()


cases = st.tuples(
    st.sampled_from(["sm4", "aes"]),
    st.sampled_from(["ECB", "CBC", "CTR"]),
    st.integers(0, 2**32),  # seed
    st.integers(0, MAX),  # length
    st.booleans(),  # encrypt
)


@given(cases, st.lists(st.integers(0, 5000), max_size=4))
def test_modes_match_cryptography(case, cuts):
    alg, mode_name, seed, n, encrypt = case
    r = random.Random(seed)
    key = r.randbytes(r.choice(ALGS[alg][1]))
    iv = r.randbytes(16)
    if mode_name != "CTR":
        n -= n % 16
    data = r.randbytes(n)
    want = reference(alg, key, mode_name, iv, data, encrypt)
    c = kuai.Cipher(alg, key)
    ctx = c.encryptor(kuai_mode(mode_name, iv)) if encrypt else c.decryptor(kuai_mode(mode_name, iv))
    # In arbitrary pieces: partial blocks are carried between calls.
    got, pos = b"", 0
    for cut in cuts:
        got += ctx.update(data[pos:pos + cut])
        pos = min(pos + cut, n)
    got += ctx.update(data[pos:]) + ctx.finalize()
    assert got == want


@given(cases)
def test_update_into_in_place(case):
    alg, mode_name, seed, n, encrypt = case
    r = random.Random(seed)
    key = r.randbytes(r.choice(ALGS[alg][1]))
    iv = r.randbytes(16)
    if mode_name != "CTR":
        n -= n % 16
    data = r.randbytes(n)
    want = reference(alg, key, mode_name, iv, data, encrypt)
    c = kuai.Cipher(alg, key)
    ctx = c.encryptor(kuai_mode(mode_name, iv)) if encrypt else c.decryptor(kuai_mode(mode_name, iv))
    buf = bytearray(data)
    assert ctx.update_into(buf, buf) == n
    ctx.finalize()
    assert bytes(buf) == want


@given(st.sampled_from(["sm4", "aes"]), st.integers(0, 2**32), st.integers(0, 3000), st.integers(0, 5000))
def test_update_into_pieces_overlapping(alg, seed, first, n):
    """A partial block pending and the output on the input (same buffer): the
    result must still be right (the extension copies in that case)."""
    r = random.Random(seed)
    key, iv = r.randbytes(16), r.randbytes(16)
    n -= n % 16
    first = min(first, n)
    data = r.randbytes(n)
    want = reference(alg, key, "CBC", iv, data, True)
    ctx = kuai.Cipher(alg, key).encryptor(modes.CBC(iv))
    buf = bytearray(data)
    mv = memoryview(buf)
    w = ctx.update_into(mv[:first], mv)
    w += ctx.update_into(mv[first:], mv[w:])
    ctx.finalize()
    assert w == n and bytes(buf) == want


@given(st.sampled_from(["sm4", "aes"]), st.integers(0, 2**32), st.integers(0, MAX),
       st.sampled_from([0, 1, 20, 1000]))
def test_gcm_matches_cryptography(alg, seed, n, aad_len):
    r = random.Random(seed)
    key = r.randbytes(16 if alg == "sm4" else r.choice([16, 24, 32]))
    nonce = r.randbytes(r.choice([12, 12, 8, 16, 60]))
    data, aad = r.randbytes(n), r.randbytes(aad_len)
    if alg == "aes":
        want = CAESGCM(key).encrypt(nonce, data, aad)
        k = aead.AESGCM(key)
    else:
        e = CCipher(algorithms.SM4(key), cmodes.GCM(nonce)).encryptor()
        e.authenticate_additional_data(aad)
        want = e.update(data) + e.finalize() + e.tag
        k = aead.SM4GCM(key)
    assert k.encrypt(nonce, data, aad) == want
    assert k.decrypt(nonce, want, aad) == data
    if n:
        bad = bytearray(want)
        bad[r.randrange(len(bad))] ^= 1 << r.randrange(8)
        with pytest.raises(kuai.InvalidTag):
            k.decrypt(nonce, bytes(bad), aad)


def test_buffer_kinds():
    np = pytest.importorskip("numpy")
    key, iv = bytes(range(16)), bytes(16)
    data = bytes(range(256)) * 4
    want = reference("sm4", key, "CBC", iv, data, True)
    c = kuai.Cipher("sm4", key)
    for obj in (data, bytearray(data), memoryview(data), np.frombuffer(data, dtype=np.uint8),
                np.frombuffer(data, dtype=np.uint32)):
        assert c.encryptor(modes.CBC(iv)).update(obj) == want
    arr = np.frombuffer(data, dtype=np.uint8).copy()
    c.encryptor(modes.CBC(iv)).update_into(arr, arr)
    assert arr.tobytes() == want
    with pytest.raises((TypeError, BufferError, ValueError)):
        c.encryptor(modes.CBC(iv)).update(np.frombuffer(data, dtype=np.uint8)[::2])


# encrypt_into/decrypt_into against cryptography 50's: the same bytes and
# counts, the same errors for a buffer of the wrong length, read-only or
# strided, in place; and (a kuai difference) zeros in buf after InvalidTag.
from cryptography.hazmat.primitives.ciphers.aead import AESCCM as CAESCCM  # noqa: E402


@pytest.mark.parametrize("kind", ["gcm", "ccm"])
@pytest.mark.parametrize("n", [0, 1, 15, 16, 17, 100])
def test_aead_into_matches_cryptography(kind, n):
    rnd = random.Random(n * 7 + len(kind))
    key = rnd.randbytes(16)
    k, c = (aead.AESGCM(key), CAESGCM(key)) if kind == "gcm" else (aead.AESCCM(key, 8),
                                                                   CAESCCM(key, 8))
    nonce = rnd.randbytes(12)
    data, ad = rnd.randbytes(n), rnd.randbytes(5)
    t = 16 if kind == "gcm" else 8
    want = c.encrypt(nonce, data, ad)
    buf = bytearray(n + t)
    assert k.encrypt_into(nonce, data, ad, buf) == n + t and bytes(buf) == want
    back = bytearray(n)
    assert k.decrypt_into(nonce, bytes(buf), ad, back) == n and bytes(back) == data
    # in place: the output starts where the input does
    io = bytearray(data) + bytearray(t)
    assert k.encrypt_into(nonce, memoryview(io)[:n], ad, io) == n + t and bytes(io) == want
    assert k.decrypt_into(nonce, bytes(io), ad, memoryview(io)[:n]) == n and io[:n] == data
    for wrong in (n + t - 1, n + t + 1):
        for impl in (k, c):
            with pytest.raises(ValueError):
                impl.encrypt_into(nonce, data, ad, bytearray(wrong))
    for wrong in (n - 1, n + 1):
        if wrong < 0:
            continue
        for impl in (k, c):
            with pytest.raises(ValueError):
                impl.decrypt_into(nonce, want, ad, bytearray(wrong))
    for impl in (k, c):
        with pytest.raises(TypeError):
            impl.encrypt_into(nonce, data, ad, bytes(n + t))
        with pytest.raises(BufferError):
            impl.encrypt_into(nonce, data, ad, memoryview(bytearray(2 * (n + t) + 2))[::2][:n + t])
    bad = want[:-1] + bytes([want[-1] ^ 1])
    out = bytearray(b"\xaa" * n)
    with pytest.raises(kuai.InvalidTag):
        k.decrypt_into(nonce, bad, ad, out)
    assert out == bytearray(n)  # zeros: no unauthenticated plaintext left
    with pytest.raises(kuai.InvalidTag):
        k.decrypt_into(nonce, want[:t - 1], ad, bytearray(0))


@pytest.mark.parametrize("kind", ["gcm", "ccm"])
@pytest.mark.parametrize("n", [1, 15, 16, 17, 100])
def test_aead_into_buf_overlapping_inputs_elsewhere(kind, n):
    # buf overlapping data (or the nonce, or the AAD) other than at data's
    # own start: ciphertext written back at another offset of the
    # plaintext's buffer (nonce || ciphertext over the message). This
    # raised ValueError; the inputs are now read from copies, so the result
    # is the separate-buffer one.
    rnd = random.Random(n * 11 + len(kind))
    key = rnd.randbytes(16)
    k = aead.AESGCM(key) if kind == "gcm" else aead.AESCCM(key, 8)
    t = 16 if kind == "gcm" else 8
    nonce, data, ad = rnd.randbytes(12), rnd.randbytes(n), rnd.randbytes(5)
    want = k.encrypt(nonce, data, ad)
    for shift in (-12, -1, 1, 7, n):  # where data lies relative to buf's start
        base = 12 + max(0, -shift)
        room = bytearray(base + n + t + max(shift, 0) + 12)
        mv = memoryview(room)
        room[base + shift:base + shift + n] = data
        buf = mv[base:base + n + t]
        assert k.encrypt_into(nonce, mv[base + shift:base + shift + n], ad, buf) == n + t
        assert bytes(buf) == want, shift
        # decryption back over the ciphertext, shifted: the plaintext
        room[base + shift:base + shift + n + t] = want
        out = mv[base:base + n]
        assert k.decrypt_into(nonce, mv[base + shift:base + shift + n + t], ad, out) == n
        assert bytes(out) == data, shift
    # the nonce and the AAD inside buf
    room = bytearray(nonce + ad + bytes(n + t))
    mv = memoryview(room)
    assert k.encrypt_into(mv[:12], data, mv[12:17], mv[:n + t]) == n + t
    assert bytes(mv[:n + t]) == want
    room = bytearray(nonce + ad + bytes(max(n, 17)))
    mv = memoryview(room)
    assert k.decrypt_into(mv[:12], want, mv[12:17], mv[:n]) == n and bytes(mv[:n]) == data
    # a forgery through an overlapping buf: InvalidTag, buf zeroed
    room = bytearray(want[:-1] + bytes([want[-1] ^ 1]) + bytes(1))
    mv = memoryview(room)
    with pytest.raises(kuai.InvalidTag):
        k.decrypt_into(nonce, mv[1:1 + n + t], ad, mv[:n])
    assert bytes(mv[:n]) == bytes(n)
