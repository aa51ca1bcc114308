# SPDX-License-Identifier: Apache-2.0
"""kuai.keywrap (SP 800-38F key wrap: KW, RFC 3394, and KWP, RFC 5649)
against the RFCs' examples and cryptography's keywrap: AES-128/192/256 on
every short length and random ones, the argument checks (types, messages,
order) of cryptography's functions, refused unwraps, and the generic form
with SM4 and uBlock-128 against a model of RFC 3394's index form."""
import ctypes
import os
import pickle
import random
import threading
from array import array

import pytest
from cryptography.hazmat.primitives import keywrap as ckw
from cryptography.hazmat.primitives.ciphers import Cipher as CCipher
from cryptography.hazmat.primitives.ciphers import algorithms, modes as cmodes
from hypothesis import given, strategies as st

import kuai
from kuai import _kuai, aead, keywrap

AES_SIZES = (16, 24, 32)

# The four functions, kuai's and cryptography's, by name.
PAIRS = {
    "aes_key_wrap": (keywrap.aes_key_wrap, ckw.aes_key_wrap),
    "aes_key_unwrap": (keywrap.aes_key_unwrap, ckw.aes_key_unwrap),
    "aes_key_wrap_with_padding": (keywrap.aes_key_wrap_with_padding, ckw.aes_key_wrap_with_padding),
    "aes_key_unwrap_with_padding": (keywrap.aes_key_unwrap_with_padding,
                                    ckw.aes_key_unwrap_with_padding),
}


def rnd(seed, n):
    return random.Random(seed).randbytes(n)


# ------------------------------------------------------------- the RFCs

# RFC 3394 section 4: (KEK, key data, wrapped)
RFC3394 = [
    ("000102030405060708090A0B0C0D0E0F", "00112233445566778899AABBCCDDEEFF",
     "1FA68B0A8112B447AEF34BD8FB5A7B829D3E862371D2CFE5"),
    ("000102030405060708090A0B0C0D0E0F1011121314151617", "00112233445566778899AABBCCDDEEFF",
     "96778B25AE6CA435F92B5B97C050AED2468AB8A17AD84E5D"),
    ("000102030405060708090A0B0C0D0E0F101112131415161718191A1B1C1D1E1F",
     "00112233445566778899AABBCCDDEEFF", "64E8C3F9CE0F5BA263E9777905818A2A93C8191E7D6E8AE7"),
    ("000102030405060708090A0B0C0D0E0F1011121314151617",
     "00112233445566778899AABBCCDDEEFF0001020304050607",
     "031D33264E15D33268F24EC260743EDCE1C6C7DDEE725A936BA814915C6762D2"),
    ("000102030405060708090A0B0C0D0E0F101112131415161718191A1B1C1D1E1F",
     "00112233445566778899AABBCCDDEEFF0001020304050607",
     "A8F9BC1612C68B3FF6E6F4FBE30E71E4769C8B80A32CB8958CD5D17D6B254DA1"),
    ("000102030405060708090A0B0C0D0E0F101112131415161718191A1B1C1D1E1F",
     "00112233445566778899AABBCCDDEEFF000102030405060708090A0B0C0D0E0F",
     "28C9F404C4B810F4CBCCB35CFB87F8263F5786E2D80ED326CBC7F0E71A99F43BFB988B9B7A02DD21"),
]

# RFC 5649 section 6: (KEK, key, wrapped)
RFC5649 = [
    ("5840df6e29b02af1ab493b705bf16ea1ae8338f4dcc176a8", "c37b7e6492584340bed12207808941155068f738",
     "138bdeaa9b8fa7fc61f97742e72248ee5ae6ae5360d1ae6a5f54f373fa543b6a"),
    ("5840df6e29b02af1ab493b705bf16ea1ae8338f4dcc176a8", "466f7250617369",
     "afbeb0f07dfbf5419200f2ccb50bb24f"),
]


@pytest.mark.parametrize("kek,key,wrapped", RFC3394)
def test_rfc3394_section4(kek, key, wrapped):
    kek, key, wrapped = bytes.fromhex(kek), bytes.fromhex(key), bytes.fromhex(wrapped)
    assert ckw.aes_key_wrap(kek, key) == wrapped  # the vector itself, by cryptography
    assert keywrap.aes_key_wrap(kek, key) == wrapped
    assert keywrap.aes_key_unwrap(kek, wrapped) == key
    assert keywrap.key_wrap("aes", kek, key) == wrapped
    assert keywrap.key_unwrap(f"aes-{len(kek) * 8}", kek, wrapped) == key


@pytest.mark.parametrize("kek,key,wrapped", RFC5649)
def test_rfc5649_section6(kek, key, wrapped):
    kek, key, wrapped = bytes.fromhex(kek), bytes.fromhex(key), bytes.fromhex(wrapped)
    assert ckw.aes_key_wrap_with_padding(kek, key) == wrapped
    assert keywrap.aes_key_wrap_with_padding(kek, key) == wrapped
    assert keywrap.aes_key_unwrap_with_padding(kek, wrapped) == key
    assert keywrap.key_wrap("aes", kek, key, padding=True) == wrapped
    assert keywrap.key_unwrap("aes-192", kek, wrapped, padding=True) == key


# ------------------------------------------------- against cryptography

@pytest.mark.parametrize("kek_len", AES_SIZES)
def test_kw_every_length_against_cryptography(kek_len):
    kek = rnd(kek_len, kek_len)
    for n in range(16, 521, 8):
        key = rnd(n, n)
        wrapped = ckw.aes_key_wrap(kek, key)
        assert keywrap.aes_key_wrap(kek, key) == wrapped, n
        assert keywrap.aes_key_unwrap(kek, wrapped) == key, n
        assert ckw.aes_key_unwrap(kek, keywrap.aes_key_wrap(kek, key)) == key


@pytest.mark.parametrize("kek_len", AES_SIZES)
def test_kwp_every_length_against_cryptography(kek_len):
    kek = rnd(100 + kek_len, kek_len)
    for n in range(1, 521):
        key = rnd(1000 + n, n)
        wrapped = ckw.aes_key_wrap_with_padding(kek, key)
        assert len(wrapped) == 8 + max(8, (n + 7) // 8 * 8)
        assert keywrap.aes_key_wrap_with_padding(kek, key) == wrapped, n
        assert keywrap.aes_key_unwrap_with_padding(kek, wrapped) == key, n


@pytest.mark.parametrize("n", [2048, 4096 + 8, 65536])
def test_long_keys_release_the_gil_and_agree(n):
    # From 2 KiB the calls run with the GIL released (kuai.info()); the
    # same bytes as cryptography, from several threads on one wrapping key.
    kek = rnd(7, 32)
    key = rnd(n, n)
    want_kw, want_kwp = ckw.aes_key_wrap(kek, key), ckw.aes_key_wrap_with_padding(kek, key + b"x")
    errors = []

    def run():
        try:
            for _ in range(3):
                assert keywrap.aes_key_wrap(kek, key) == want_kw
                assert keywrap.aes_key_unwrap(kek, want_kw) == key
                assert keywrap.aes_key_wrap_with_padding(kek, key + b"x") == want_kwp
                assert keywrap.aes_key_unwrap_with_padding(kek, want_kwp) == key + b"x"
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=run) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


@given(st.sampled_from(AES_SIZES), st.binary(min_size=2, max_size=64).map(lambda b: b * 8),
       st.integers(0, 2**32 - 1))
def test_kw_hypothesis(kek_len, key, seed):
    kek = rnd(seed, kek_len)
    wrapped = ckw.aes_key_wrap(kek, key)
    assert keywrap.aes_key_wrap(kek, key) == wrapped
    assert keywrap.aes_key_unwrap(kek, wrapped) == key


@given(st.sampled_from(AES_SIZES), st.binary(min_size=1, max_size=600), st.integers(0, 2**32 - 1))
def test_kwp_hypothesis(kek_len, key, seed):
    kek = rnd(seed, kek_len)
    wrapped = ckw.aes_key_wrap_with_padding(kek, key)
    assert keywrap.aes_key_wrap_with_padding(kek, key) == wrapped
    assert keywrap.aes_key_unwrap_with_padding(kek, wrapped) == key


@given(st.sampled_from(AES_SIZES), st.binary(min_size=0, max_size=80), st.booleans(),
       st.integers(0, 2**32 - 1))
def test_unwrap_of_anything_as_cryptography(kek_len, blob, padding, seed):
    # Random bytes (almost never a wrapped key): the same outcome and,
    # when refused, the same message.
    kek = rnd(seed, kek_len)
    name = "aes_key_unwrap_with_padding" if padding else "aes_key_unwrap"
    ours, theirs = PAIRS[name]
    assert outcome(ours, kek, blob) == outcome(theirs, kek, blob)


# ------------------------------------------------------- refused unwraps

def _flip_each_byte(wrapped):
    for i in range(len(wrapped)):
        for bit in (0x01, 0x80):
            b = bytearray(wrapped)
            b[i] ^= bit
            yield i, bytes(b)


@pytest.mark.parametrize("cipher,key_len", [("aes", 16), ("aes", 24), ("aes", 32), ("sm4", 16),
                                            ("ublock-128-128", 16), ("ublock-128-256", 32)])
@pytest.mark.parametrize("padding,n", [(False, 16), (False, 24), (True, 1), (True, 8), (True, 9),
                                       (True, 16)])
def test_tampered_or_wrong_key_unwrap_is_refused(cipher, key_len, padding, n):
    kek, key = rnd(1, key_len), rnd(2, n)
    wrapped = keywrap.key_wrap(cipher, kek, key, padding=padding)
    assert keywrap.key_unwrap(cipher, kek, wrapped, padding=padding) == key
    for i, bad in _flip_each_byte(wrapped):
        with pytest.raises(keywrap.InvalidUnwrap) as e:
            keywrap.key_unwrap(cipher, kek, bad, padding=padding)
        assert str(e.value) == "" and e.value.args == (), i
    other = bytearray(kek)
    other[-1] ^= 1
    with pytest.raises(keywrap.InvalidUnwrap):
        keywrap.key_unwrap(cipher, bytes(other), wrapped, padding=padding)
    # KW's wrapped key is no KWP one and the other way round
    with pytest.raises(keywrap.InvalidUnwrap):
        keywrap.key_unwrap(cipher, kek, wrapped, padding=not padding)
    # one semiblock fewer or more
    for bad in (wrapped[:-8], wrapped + bytes(8)):
        with pytest.raises(keywrap.InvalidUnwrap):
            keywrap.key_unwrap(cipher, kek, bad, padding=padding)


@pytest.mark.parametrize("kek_len", AES_SIZES)
def test_tampered_aes_as_cryptography(kek_len):
    kek = rnd(3, kek_len)
    for wrap, unwrap, n in (("aes_key_wrap", "aes_key_unwrap", 16),
                            ("aes_key_wrap_with_padding", "aes_key_unwrap_with_padding", 5),
                            ("aes_key_wrap_with_padding", "aes_key_unwrap_with_padding", 20)):
        wrapped = PAIRS[wrap][0](kek, rnd(4, n))
        for _, bad in _flip_each_byte(wrapped):
            assert (outcome(PAIRS[unwrap][0], kek, bad) == outcome(PAIRS[unwrap][1], kek, bad)
                    == ("InvalidUnwrap", ""))


def test_kwp_padding_and_length_are_checked():
    # A KWP block whose integrity value says another length, or whose
    # padding is not zeros, built with the raw cipher: refused.
    kek = rnd(5, 16)
    ecb = CCipher(algorithms.AES(kek), cmodes.ECB())

    def one_block(mli, payload):
        return ecb.encryptor().update(bytes.fromhex("a65959a6") + mli.to_bytes(4, "big") + payload)

    good = one_block(5, b"hello\0\0\0")
    assert keywrap.aes_key_unwrap_with_padding(kek, good) == b"hello"
    for bad in (one_block(5, b"hello\0\0\1"), one_block(9, b"hello\0\0\0"),
                one_block(0, b"hello\0\0\0")):
        assert outcome(keywrap.aes_key_unwrap_with_padding, kek, bad) == ("InvalidUnwrap", "")
        assert outcome(ckw.aes_key_unwrap_with_padding, kek, bad) == ("InvalidUnwrap", "")


# ----------------------------------------------------- argument checks

def outcome(f, *args, **kwargs):
    """("ok", result) or (exception class name, message), cryptography's
    InvalidUnwrap and kuai's by the one name."""
    try:
        return ("ok", f(*args, **kwargs))
    except Exception as e:
        return (type(e).__name__, str(e))


K16 = bytes(16)

# (function, wrapping key length, key length): every length rule and the
# order in which cryptography applies them.
LENGTH_CASES = [
    ("aes_key_wrap", 15, 16), ("aes_key_wrap", 0, 16), ("aes_key_wrap", 33, 16),
    ("aes_key_wrap", 16, 8), ("aes_key_wrap", 16, 0), ("aes_key_wrap", 16, 15), ("aes_key_wrap", 16, 17),
    ("aes_key_wrap", 16, 23), ("aes_key_wrap", 15, 17), ("aes_key_wrap", 15, 8), ("aes_key_wrap", 24, 24),
    ("aes_key_unwrap", 15, 24), ("aes_key_unwrap", 16, 16), ("aes_key_unwrap", 16, 0),
    ("aes_key_unwrap", 16, 23), ("aes_key_unwrap", 16, 25), ("aes_key_unwrap", 16, 24),
    ("aes_key_unwrap", 15, 16), ("aes_key_unwrap", 15, 25), ("aes_key_unwrap", 15, 32),
    ("aes_key_unwrap", 32, 8), ("aes_key_unwrap", 32, 40),
    ("aes_key_wrap_with_padding", 15, 16), ("aes_key_wrap_with_padding", 16, 0),
    ("aes_key_wrap_with_padding", 15, 0), ("aes_key_wrap_with_padding", 32, 1),
    ("aes_key_unwrap_with_padding", 15, 16), ("aes_key_unwrap_with_padding", 16, 8),
    ("aes_key_unwrap_with_padding", 16, 0), ("aes_key_unwrap_with_padding", 16, 15),
    ("aes_key_unwrap_with_padding", 16, 16), ("aes_key_unwrap_with_padding", 16, 17),
    ("aes_key_unwrap_with_padding", 16, 23), ("aes_key_unwrap_with_padding", 16, 24),
    ("aes_key_unwrap_with_padding", 15, 8), ("aes_key_unwrap_with_padding", 15, 17),
    ("aes_key_unwrap_with_padding", 15, 24), ("aes_key_unwrap_with_padding", 64, 32),
]


@pytest.mark.parametrize("name,kek_len,n", LENGTH_CASES)
def test_length_checks_as_cryptography(name, kek_len, n):
    ours, theirs = PAIRS[name]
    mine, want = outcome(ours, bytes(kek_len), bytes(n)), outcome(theirs, bytes(kek_len), bytes(n))
    assert mine == want
    # the generic form takes the same lengths with the same words (its
    # wrapping key's check is kuai.Cipher's)
    if kek_len in AES_SIZES:
        generic = keywrap.key_unwrap if "unwrap" in name else keywrap.key_wrap
        assert outcome(generic, "aes", bytes(kek_len), bytes(n), padding="padding" in name) == want


def _not_contiguous(n):
    return memoryview(bytes(2 * n))[::2]


# Arguments of the wrong kind: the same exception class as cryptography's
# (the messages are kuai's, as elsewhere in the package).
TYPE_CASES = [
    ("str wrapping key", lambda f: f("x" * 16, bytes(24))),
    ("str key", lambda f: f(K16, "x" * 24)),
    ("None key", lambda f: f(K16, None)),
    ("None wrapping key", lambda f: f(None, bytes(24))),
    ("int key", lambda f: f(K16, 24)),
    ("list key", lambda f: f(K16, [0] * 24)),
    ("str key, bad wrapping key length", lambda f: f(bytes(15), "x" * 24)),
    ("bad key length, str wrapping key", lambda f: f("x", bytes(3))),
    ("not contiguous key", lambda f: f(K16, _not_contiguous(24))),
    ("not contiguous wrapping key", lambda f: f(_not_contiguous(16), bytes(24))),
    ("not contiguous, bad length", lambda f: f(bytes(15), _not_contiguous(3))),
    ("missing argument", lambda f: f(K16)),
    ("too many arguments", lambda f: f(K16, bytes(24), None, 1)),
    ("unknown keyword", lambda f: f(K16, bytes(24), foo=1)),
]


@pytest.mark.parametrize("name", sorted(PAIRS))
@pytest.mark.parametrize("what,call", TYPE_CASES, ids=[c[0] for c in TYPE_CASES])
def test_argument_kinds_as_cryptography(name, what, call):
    ours, theirs = PAIRS[name]
    assert outcome(call, ours)[0] == outcome(call, theirs)[0] != "ok"


@pytest.mark.parametrize("name", sorted(PAIRS))
def test_keywords_and_backend_as_cryptography(name):
    ours, theirs = PAIRS[name]
    kek = rnd(6, 16)
    wrapped = PAIRS["aes_key_wrap_with_padding" if "padding" in name else "aes_key_wrap"][1](kek, K16)
    data = wrapped if "unwrap" in name else K16
    data_name = "wrapped_key" if "unwrap" in name else "key_to_wrap"
    want = theirs(kek, data)
    assert ours(kek, data) == want
    assert ours(kek, data, None) == want
    assert ours(kek, data, backend=object()) == want  # ignored, as there
    assert ours(wrapping_key=kek, **{data_name: data}) == want == theirs(wrapping_key=kek,
                                                                         **{data_name: data})


def test_invalid_unwrap_is_kuais_own():
    assert keywrap.InvalidUnwrap is _kuai.InvalidUnwrap
    assert issubclass(keywrap.InvalidUnwrap, Exception)
    assert not issubclass(keywrap.InvalidUnwrap, (kuai.InvalidTag, ValueError))
    assert keywrap.InvalidUnwrap.__module__ == "kuai.keywrap"
    assert keywrap.InvalidUnwrap.__name__ == "InvalidUnwrap"
    e = pickle.loads(pickle.dumps(keywrap.InvalidUnwrap("Must be at least 24 bytes")))
    assert type(e) is keywrap.InvalidUnwrap and e.args == ("Must be at least 24 bytes",)
    assert "keywrap" in kuai.__all__ and kuai.keywrap is keywrap
    assert set(keywrap.__all__) >= set(ckw.__all__)


# ---------------------------------------------------------- buffer kinds

def _kinds(data):
    yield bytes(data)
    yield bytearray(data)
    yield memoryview(data)
    yield memoryview(bytearray(b"..." + data))[3:]
    yield array("B", data)
    if len(data) % 4 == 0:
        yield array("I", data)  # a numeric array is its bytes, as elsewhere in kuai
    yield (ctypes.c_ubyte * len(data)).from_buffer_copy(data)


@pytest.mark.parametrize("padding,n", [(False, 16), (False, 40), (True, 3), (True, 20)])
def test_bytes_like_inputs(padding, n):
    kek, key = rnd(8, 32), rnd(9, n)
    wrap = keywrap.aes_key_wrap_with_padding if padding else keywrap.aes_key_wrap
    unwrap = keywrap.aes_key_unwrap_with_padding if padding else keywrap.aes_key_unwrap
    wrapped = wrap(kek, key)
    for k in _kinds(kek):
        for d in _kinds(key):
            assert wrap(k, d) == wrapped
        for w in _kinds(wrapped):
            out = unwrap(k, w)
            assert type(out) is bytes and out == key
        assert keywrap.key_wrap("aes", k, key, padding=padding) == wrapped
        assert keywrap.key_unwrap("aes", k, bytearray(wrapped), padding=padding) == key


def test_numpy_inputs():
    np = pytest.importorskip("numpy")
    kek, key = rnd(10, 16), rnd(11, 32)
    wrapped = ckw.aes_key_wrap(kek, key)
    assert keywrap.aes_key_wrap(np.frombuffer(kek, np.uint8), np.frombuffer(key, np.uint32)) == wrapped
    assert keywrap.aes_key_unwrap(np.frombuffer(kek, np.uint8), np.frombuffer(wrapped, np.uint8)) == key
    with pytest.raises(BufferError):
        keywrap.aes_key_wrap(kek, np.zeros((8, 4), np.uint8).T)
    # an array of Python objects is their addresses, not bytes
    for bad in (np.empty(3, dtype=object), (ctypes.py_object * 3)()):
        with pytest.raises(TypeError, match="Python objects"):
            keywrap.aes_key_wrap(kek, bad)
        with pytest.raises(TypeError, match="Python objects"):
            keywrap.aes_key_unwrap(kek, bad)
        with pytest.raises(TypeError, match="Python objects"):
            keywrap.key_wrap("sm4", bad, bytes(16))


# ------------------------------------------------ the other ciphers

def _model_wrap(enc, key, padding):
    """RFC 3394 section 2.2.1's index form (and RFC 5649's one-block case)
    over a block cipher enc(16 bytes) -> 16 bytes."""
    if padding:
        iv = bytes.fromhex("a65959a6") + len(key).to_bytes(4, "big")
        key = key + bytes(-len(key) % 8)
        if len(key) == 8:
            return enc(iv + key)
    else:
        iv = bytes.fromhex("a6a6a6a6a6a6a6a6")
    a, r = iv, [key[i:i + 8] for i in range(0, len(key), 8)]
    n = len(r)
    for j in range(6):
        for i in range(n):
            b = enc(a + r[i])
            a = (int.from_bytes(b[:8], "big") ^ (n * j + i + 1)).to_bytes(8, "big")
            r[i] = b[8:]
    return a + b"".join(r)


def _sm4_openssl(kek):
    return lambda block: CCipher(algorithms.SM4(kek), cmodes.ECB()).encryptor().update(block)


def _kuai_ecb(cipher, kek):
    c = kuai.Cipher(cipher, kek)
    return lambda block: c.encryptor(kuai.modes.ECB()).update(block)


@pytest.mark.parametrize("cipher,key_len", [("sm4", 16), ("ublock-128-128", 16), ("ublock-128-256", 32),
                                            ("aes", 16), ("aes", 32)])
def test_other_ciphers_against_the_model(cipher, key_len):
    # SM4 with OpenSSL's SM4 (through cryptography) under the model; the
    # uBlocks with kuai's own ECB (the wrapping, not the cipher, is tested
    # here: the cipher has its own vectors).
    kek = rnd(12 + key_len, key_len)
    enc = _sm4_openssl(kek) if cipher == "sm4" else _kuai_ecb(cipher, kek)
    lengths = [(False, n) for n in range(16, 264, 8)] + [(True, n) for n in range(1, 140)]
    for padding, n in lengths:
        key = rnd(n * 3 + padding, n)
        wrapped = keywrap.key_wrap(cipher, kek, key, padding=padding)
        assert wrapped == _model_wrap(enc, key, padding), (padding, n)
        assert keywrap.key_unwrap(cipher, kek, wrapped, padding=padding) == key


def test_cipher_names_and_families():
    k16, k32, key = rnd(13, 16), rnd(14, 32), rnd(15, 24)
    assert keywrap.key_wrap("ublock-128", k16, key) == keywrap.key_wrap("ublock-128-128", k16, key)
    assert keywrap.key_wrap("UBlock_128", k32, key) == keywrap.key_wrap("ublock-128-256", k32, key)
    assert keywrap.key_wrap("AES", k32, key) == keywrap.aes_key_wrap(k32, key)
    assert keywrap.key_wrap("aes-256", k32, key) == keywrap.aes_key_wrap(k32, key)
    # the ciphers give different wrappings of one key under one KEK
    assert len({keywrap.key_wrap(c, k16, key) for c in ("sm4", "aes", "ublock-128-128")}) == 3
    with pytest.raises(ValueError, match="unknown cipher"):
        keywrap.key_wrap("des", bytes(8), key)
    with pytest.raises(ValueError, match="key size"):
        keywrap.key_wrap("sm4", bytes(15), key)
    with pytest.raises(ValueError, match="key size"):
        keywrap.key_unwrap("aes-128", bytes(32), bytes(24))
    with pytest.raises(TypeError):
        keywrap.key_wrap(None, k16, key)
    with pytest.raises(TypeError):  # padding is keyword-only
        keywrap.key_wrap("sm4", k16, key, True)


@pytest.mark.parametrize("padding", [False, True])
def test_ublock_256_is_refused(padding):
    k = rnd(16, 32)
    with pytest.raises(ValueError, match="128-bit-block cipher, not ublock-256-256"):
        keywrap.key_wrap("ublock-256-256", k, bytes(16), padding=padding)
    with pytest.raises(ValueError, match="128-bit-block cipher, not ublock-256-256"):
        keywrap.key_unwrap("ublock-256-256", k, bytes(24), padding=padding)
    with pytest.raises(ValueError, match="128-bit-block cipher"):
        _kuai.key_wrap(kuai.Cipher("ublock-256-256", k), bytes(16), padding)


def test_extension_functions_refuse_other_keys_and_lengths():
    # kuai._kuai.key_wrap/key_unwrap, under kuai.keywrap's own checks
    sm4 = kuai.Cipher("sm4", K16)
    wrapped = _kuai.key_wrap(sm4, bytes(16))
    assert _kuai.key_unwrap(sm4, wrapped) == bytes(16)
    assert _kuai.key_unwrap(key=sm4, wrapped_key=wrapped, padding=False) == bytes(16)
    assert _kuai.key_unwrap(sm4, _kuai.key_wrap(sm4, b"k", padding=True), True) == b"k"
    with pytest.raises(TypeError, match="kuai.Cipher"):
        _kuai.key_wrap(K16, bytes(16))
    with pytest.raises(TypeError, match="kuai.aead key"):  # a GCM key is for GCM only
        _kuai.key_wrap(aead.AESGCM(K16), bytes(16))
    with pytest.raises(ValueError, match="XTS"):
        _kuai.key_wrap(kuai.Cipher("aes-xts", bytes(range(32))), bytes(16))
    for n in (0, 8, 15, 17):
        with pytest.raises(ValueError, match="length"):
            _kuai.key_wrap(sm4, bytes(n))
    with pytest.raises(ValueError, match="length"):
        _kuai.key_wrap(sm4, b"", True)
    for n, padding in ((0, False), (16, False), (25, False), (8, True), (17, True)):
        with pytest.raises(keywrap.InvalidUnwrap, match="length"):
            _kuai.key_unwrap(sm4, bytes(n), padding)
    with pytest.raises(TypeError, match="bytes-like"):
        _kuai.key_wrap(sm4, "x" * 16)
    with pytest.raises(TypeError):
        _kuai.key_wrap(sm4)


def test_kwp_wrapped_lengths():
    kek = rnd(17, 16)
    for n, want in ((1, 16), (8, 16), (9, 24), (16, 24), (17, 32), (520, 528)):
        assert len(keywrap.aes_key_wrap_with_padding(kek, bytes(n))) == want
        assert len(keywrap.key_wrap("sm4", kek, bytes(n), padding=True)) == want
