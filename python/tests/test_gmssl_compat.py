# SPDX-License-Identifier: Apache-2.0
"""kuai.compat.gmssl against gmssl 3.2.2 itself: byte-identical outputs,
padding quirks included, and failures where gmssl fails."""
import random

import pytest
from gmssl import sm4 as G
from hypothesis import given, strategies as st

from kuai.compat import gmssl as K

assert G.SM4_ENCRYPT == K.SM4_ENCRYPT and G.SM4_DECRYPT == K.SM4_DECRYPT


def both(fn):
    """fn on gmssl and on kuai: the same bytes, or both fail."""
    try:
        want = fn(G)
    except (IndexError, TypeError) as e:
        with pytest.raises(type(e)):
            fn(K)
        return None
    assert fn(K) == want
    return want


def make(mod, key, key_mode, mode=None, padding_mode=0):
    c = mod.CryptSM4(padding_mode=padding_mode)
    c.set_key(key, key_mode)
    if mode is not None:
        c.mode = mode
    return c


small = st.integers(0, 200)  # gmssl runs at ~0.1 MB/s


@given(st.integers(0, 2**32), small, st.sampled_from([0, 1, 2]), st.sampled_from([0, 1, 7]))
def test_ecb_round_trip_and_raw(seed, n, pad, odd_mode):
    r = random.Random(seed)
    key, data = r.randbytes(16), r.randbytes(n)
    ct = both(lambda m: make(m, key, m.SM4_ENCRYPT, padding_mode=pad).crypt_ecb(data))
    if ct is not None:
        both(lambda m: make(m, key, m.SM4_DECRYPT, padding_mode=pad).crypt_ecb(ct))
    # Decrypting arbitrary whole blocks: unpadding checks nothing.
    blocks = r.randbytes(16 * (n // 16))
    both(lambda m: make(m, key, m.SM4_DECRYPT, padding_mode=pad).crypt_ecb(blocks))
    # A mode that is neither: no padding, the key's direction.
    both(lambda m: make(m, key, m.SM4_ENCRYPT, mode=7 * odd_mode, padding_mode=pad).crypt_ecb(blocks))


@given(st.integers(0, 2**32), small, st.sampled_from([0, 1, 2]), st.booleans())
def test_cbc(seed, n, pad, long_iv):
    r = random.Random(seed)
    key, iv, data = r.randbytes(16), r.randbytes(32 if long_iv else 16), r.randbytes(n)
    ct = both(lambda m: make(m, key, m.SM4_ENCRYPT, padding_mode=pad).crypt_cbc(iv, data))
    assert both(lambda m: make(m, key, m.SM4_DECRYPT, padding_mode=pad).crypt_cbc(iv, ct)) == data
    blocks = r.randbytes(16 * (n // 16))
    both(lambda m: make(m, key, m.SM4_DECRYPT).crypt_cbc(iv, blocks))


@given(st.integers(0, 2**32), st.integers(0, 64))
def test_mode_changed_after_set_key(seed, n):
    """set_key fixes the round keys' direction; mode (changed later) the rest."""
    r = random.Random(seed)
    key, iv, data = r.randbytes(16), r.randbytes(16), r.randbytes(16 * (n // 16 + 1))
    for key_mode, mode in [(0, 1), (1, 0), (0, 5), (1, 5)]:
        both(lambda m: make(m, key, key_mode, mode=mode).crypt_ecb(data))
        both(lambda m: make(m, key, key_mode, mode=mode).crypt_cbc(iv, data))


def test_known_answer_and_types():
    key = bytes.fromhex("0123456789abcdeffedcba9876543210")
    c = K.CryptSM4()
    c.set_key(key, K.SM4_ENCRYPT)
    # GB/T 32907 example, plus gmssl's full PKCS#7 block
    assert c.crypt_ecb(key)[:16].hex() == "681edf34d206965e86b3e94f536e4246"
    for data in (bytearray(b"abc"), list(b"abc"), memoryview(b"abc")):
        assert both(lambda m: make(m, key, m.SM4_ENCRYPT).crypt_ecb(data)) is not None
    assert both(lambda m: make(m, key + b"extra", m.SM4_ENCRYPT).crypt_ecb(b"x")) is not None


def test_failures_where_gmssl_fails():
    key = bytes(16)
    both(lambda m: make(m, key, m.SM4_DECRYPT).crypt_ecb(b""))  # IndexError in both
    both(lambda m: make(m, key, m.SM4_DECRYPT).crypt_ecb(b"x" * 17))
    both(lambda m: make(m, key, m.SM4_DECRYPT).crypt_cbc(bytes(16), b""))
    both(lambda m: make(m, key[:8], m.SM4_ENCRYPT))
    # ZERO unpadding of a non-zero last byte: TypeError in gmssl
    ct = make(K, key, K.SM4_ENCRYPT, padding_mode=2).crypt_ecb(b"\x01" * 16)
    both(lambda m: make(m, key, m.SM4_DECRYPT, padding_mode=1).crypt_ecb(ct))
    with pytest.raises(ValueError):  # documented difference: no key, no output
        K.CryptSM4().crypt_ecb(b"x")


@pytest.mark.parametrize("bad", [16, 5, True, "0123456789abcdef"])
def test_int_and_str_refused(bad):
    """bytes(16) is 16 zero bytes: an int key, IV or input used to become an
    all-zero key, a zero IV or zero data. gmssl raises TypeError; so does
    this, for str as well."""
    _refused_as_key_iv_and_data(bad)


def _refused_as_key_iv_and_data(bad):
    """bad as the key, the IV and the input: TypeError from gmssl and from
    the drop-in alike."""
    key = bytes(range(16))
    for fn in (lambda m: make(m, bad, m.SM4_ENCRYPT),
               lambda m: make(m, key, m.SM4_ENCRYPT).crypt_cbc(bad, b"hello"),
               lambda m: make(m, key, m.SM4_ENCRYPT).crypt_ecb(bad),
               lambda m: make(m, key, m.SM4_ENCRYPT).crypt_cbc(bytes(16), bad)):
        with pytest.raises(TypeError):
            fn(G)
        with pytest.raises(TypeError):
            fn(K)


class _Index:
    """An integer that is not an int: operator.index() takes it, and so does
    bytes(), as a count of zero bytes."""

    def __index__(self):
        return 16


def _integer_likes():
    np = pytest.importorskip("numpy")
    return [_Index(), np.int64(16), np.uint8(16), np.array(16)]


def test_integer_likes_refused():
    """Not only int: any object with __index__ (numpy's integers, a 0-d
    integer array) was taken by bytes() as a count of zero bytes, so that
    set_key(np.int64(16), ...) set an all-zero key without a word. gmssl
    raises TypeError (it iterates the value); so does this."""
    for bad in _integer_likes():
        _refused_as_key_iv_and_data(bad)
