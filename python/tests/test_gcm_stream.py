# SPDX-License-Identifier: Apache-2.0
"""Streaming GCM in kuai.Cipher (modes.GCM) against cryptography's GCM
contexts: SM4 and AES, random keys, nonces, AAD and data split at random,
in place via update_into; tags, wrong tags, order and finalize rules."""
import random

import pytest
from cryptography.hazmat.primitives.ciphers import Cipher as CCipher
from cryptography.hazmat.primitives.ciphers import algorithms, modes as cmodes
from hypothesis import given, strategies as st

import kuai
from kuai import modes

MAX = 64 * 1024
ALGS = {"sm4": (algorithms.SM4, [16]), "aes": (algorithms.AES, [16, 24, 32])}


def pieces(r, data, cuts):
    pos = 0
    for c in sorted(cuts):
        c = min(c, len(data))
        if c >= pos:
            yield data[pos:c]
            pos = c
    yield data[pos:]


def reference_encrypt(alg, key, nonce, aad, data):
    e = CCipher(ALGS[alg][0](key), cmodes.GCM(nonce)).encryptor()
    if aad:
        e.authenticate_additional_data(aad)
    ct = e.update(data) + e.finalize()
    return ct, e.tag


@given(st.sampled_from(["sm4", "aes"]), st.integers(0, 2**32), st.integers(0, MAX),
       st.integers(0, 300), st.lists(st.integers(0, MAX), max_size=5),
       st.sampled_from([12, 8, 16, 60]), st.booleans())
def test_gcm_stream_matches_cryptography(alg, seed, n, aad_len, cuts, nonce_len, in_place):
    r = random.Random(seed)
    key = r.randbytes(r.choice(ALGS[alg][1]))
    nonce = r.randbytes(nonce_len)
    aad = r.randbytes(aad_len)
    data = r.randbytes(n)
    want_ct, want_tag = reference_encrypt(alg, key, nonce, aad, data)
    c = kuai.Cipher(alg, key)

    enc = c.encryptor(modes.GCM(nonce))
    for a in pieces(r, aad, [x % (aad_len + 1) for x in cuts[:2]]):
        enc.authenticate_additional_data(a)
    if in_place:
        buf = bytearray(data)
        mv = memoryview(buf)
        pos = 0
        for p in pieces(r, data, cuts):
            assert enc.update_into(mv[pos:pos + len(p)], mv[pos:pos + len(p)]) == len(p)
            pos += len(p)
        got = bytes(buf)
    else:
        got = b"".join(enc.update(p) for p in pieces(r, data, cuts))
    got += enc.finalize()
    assert got == want_ct
    assert enc.tag == want_tag

    # decryption: the tag up front, or through finalize_with_tag
    dec = c.decryptor(modes.GCM(nonce, want_tag))
    dec.authenticate_additional_data(aad)
    pt = b"".join(dec.update(p) for p in pieces(r, want_ct, cuts)) + dec.finalize()
    assert pt == data
    dec = c.decryptor(modes.GCM(nonce))
    dec.authenticate_additional_data(aad)
    out = bytearray(len(want_ct))
    assert dec.update_into(want_ct, out) == len(want_ct)
    dec.finalize_with_tag(want_tag)
    assert out == data

    # a wrong tag, a changed byte of the ciphertext or of the AAD
    bad_tag = bytearray(want_tag)
    bad_tag[r.randrange(16)] ^= 1 << r.randrange(8)
    dec = c.decryptor(modes.GCM(nonce, bytes(bad_tag)))
    dec.authenticate_additional_data(aad)
    dec.update(want_ct)
    with pytest.raises(kuai.InvalidTag):
        dec.finalize()
    if n:
        bad = bytearray(want_ct)
        bad[r.randrange(n)] ^= 1
        dec = c.decryptor(modes.GCM(nonce))
        dec.authenticate_additional_data(aad)
        dec.update(bytes(bad))
        with pytest.raises(kuai.InvalidTag):
            dec.finalize_with_tag(want_tag)
    dec = c.decryptor(modes.GCM(nonce, want_tag))
    dec.authenticate_additional_data(aad + b"!")
    dec.update(want_ct)
    with pytest.raises(kuai.InvalidTag):
        dec.finalize()


def test_short_tags_and_ublock():
    key, nonce = bytes(range(16)), bytes(12)
    enc = kuai.Cipher("sm4", key).encryptor(modes.GCM(nonce))
    ct = enc.update(b"hello") + enc.finalize()
    tag = enc.tag
    # cryptography's rule: a shorter tag only with min_tag_length
    with pytest.raises(ValueError):
        modes.GCM(nonce, tag[:8])
    d = kuai.Cipher("sm4", key).decryptor(modes.GCM(nonce, tag[:8], min_tag_length=8))
    assert d.update(ct) + d.finalize() == b"hello"
    d = kuai.Cipher("sm4", key).decryptor(modes.GCM(nonce))
    d.update(ct)
    with pytest.raises(ValueError):
        d.finalize_with_tag(tag[:3])
    # finalize_with_tag follows min_tag_length too (cryptography's rule): the
    # default 16 refuses a truncated tag, a lower one admits it
    for short in (4, 8, 15):
        d = kuai.Cipher("sm4", key).decryptor(modes.GCM(nonce))
        d.update(ct)
        with pytest.raises(ValueError, match="16 bytes or longer"):
            d.finalize_with_tag(tag[:short])
    d = kuai.Cipher("sm4", key).decryptor(modes.GCM(nonce, min_tag_length=8))
    d.update(ct)
    with pytest.raises(ValueError, match="8 bytes or longer"):
        d.finalize_with_tag(tag[:4])
    d = kuai.Cipher("sm4", key).decryptor(modes.GCM(nonce, min_tag_length=8))
    assert d.update(ct) == b"hello"
    d.finalize_with_tag(tag[:8])
    # the same as the one-shot AEAD class, for uBlock too
    for name, k in [("sm4", key), ("aes", bytes(32)), ("ublock-128-128", key),
                    ("ublock-128-256", bytes(32))]:
        c = kuai.Cipher(name, k)
        e = c.encryptor(modes.GCM(nonce))
        e.authenticate_additional_data(b"hdr")
        got = e.update(b"x" * 100) + e.finalize() + e.tag
        assert got == c.gcm_encrypt(nonce, b"x" * 100, b"hdr")


def test_rules():
    c = kuai.Cipher("sm4", bytes(16))
    enc = c.encryptor(modes.GCM(bytes(12)))
    with pytest.raises(kuai.NotYetFinalized):
        enc.tag
    enc.update(b"abc")
    with pytest.raises(ValueError, match="before update"):
        enc.authenticate_additional_data(b"late")
    enc.finalize()
    assert len(enc.tag) == 16
    with pytest.raises(kuai.AlreadyFinalized):
        enc.update(b"more")
    with pytest.raises(kuai.AlreadyFinalized):
        enc.finalize()
    with pytest.raises(ValueError, match="must be None when encrypting"):
        c.encryptor(modes.GCM(bytes(12), bytes(16)))
    with pytest.raises(ValueError, match="between 8 and 128"):
        modes.GCM(bytes(7))
    dec = c.decryptor(modes.GCM(bytes(12)))
    with pytest.raises(ValueError, match="tag must be provided"):
        dec.finalize()
    with pytest.raises(kuai.InvalidTag):
        dec.finalize_with_tag(bytes(16))  # still usable after the refused finalize()
    with pytest.raises(kuai.AlreadyFinalized):
        dec.finalize_with_tag(bytes(16))
    dec = c.decryptor(modes.GCM(bytes(12), bytes(16)))
    with pytest.raises(ValueError, match="already given"):
        dec.finalize_with_tag(bytes(16))
    with pytest.raises(ValueError, match="128-bit-block"):
        kuai.Cipher("ublock-256-256", bytes(32)).encryptor(modes.GCM(bytes(12)))
    with pytest.raises(ValueError, match="at least"):
        c.encryptor(modes.GCM(bytes(12))).update_into(b"abcd", bytearray(3))


def test_threads_share_a_key():
    import concurrent.futures

    c = kuai.Cipher("aes", bytes(range(16)))
    data = bytes(range(256)) * 64

    def one(i):
        nonce = i.to_bytes(12, "big")
        e = c.encryptor(modes.GCM(nonce))
        ct = e.update(data) + e.finalize()
        return ct + e.tag == c.gcm_encrypt(nonce, data, None)

    with concurrent.futures.ThreadPoolExecutor(4) as ex:
        assert all(ex.map(one, range(64)))


def test_over_long_message_says_so(tmp_path):
    """A GCM message over 2^36 - 32 bytes is refused with a message about
    GCM's limit, not "not a multiple of the block size" (GCM has no block
    rule). A sparse file maps the 2^36 bytes; the length is refused before
    any of them is read."""
    mmap = pytest.importorskip("mmap")
    n = 1 << 36
    with open(tmp_path / "sparse", "w+b") as f:
        try:
            f.truncate(n)
            mm = mmap.mmap(f.fileno(), n, flags=mmap.MAP_SHARED | getattr(mmap, "MAP_NORESERVE", 0))
        except (OSError, OverflowError, ValueError) as e:
            pytest.skip(f"no sparse 2^36-byte mapping here: {e}")
        try:
            with memoryview(mm) as mv:
                g = kuai.Cipher("sm4", bytes(16)).encryptor(modes.GCM(bytes(12)))
                with pytest.raises(ValueError) as e:
                    g.update_into(mv, mv)
        finally:
            mm.close()
    assert "GCM's limit" in str(e.value)
    assert "multiple of the block" not in str(e.value)


def test_finalize_with_tag_after_finalize_is_already_finalized():
    # docs/python.md: after finalize every call raises AlreadyFinalized (as
    # cryptography's GCM contexts). finalize_with_tag checked its tag and
    # the context's kind first: a finalized decryptor raised ValueError
    # ("already given", "4 to 16 bytes"), a finalized encryptor too.
    c = kuai.Cipher("sm4", bytes(16))
    e = c.encryptor(modes.GCM(bytes(12)))
    e.update(b"abc")
    e.finalize()
    tag = e.tag
    with pytest.raises(kuai.AlreadyFinalized):
        e.finalize_with_tag(tag)
    d = c.decryptor(modes.GCM(bytes(12), tag))
    d.update(b"xyz")  # not e's ciphertext: the tag is wrong
    with pytest.raises(kuai.InvalidTag):
        d.finalize()
    with pytest.raises(kuai.AlreadyFinalized):
        d.finalize_with_tag(tag)
    d = c.decryptor(modes.GCM(bytes(12)))
    d.finalize_with_tag(c.gcm_encrypt(bytes(12), b"", None))  # the empty message's tag
    for t in (tag, tag[:2], bytes(17)):
        with pytest.raises(kuai.AlreadyFinalized):
            d.finalize_with_tag(t)
    # before finalize the old errors stand
    with pytest.raises(ValueError, match="is for decryption"):
        c.encryptor(modes.GCM(bytes(12))).finalize_with_tag(tag)
    with pytest.raises(ValueError, match="already given"):
        c.decryptor(modes.GCM(bytes(12), tag)).finalize_with_tag(tag)
