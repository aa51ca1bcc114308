# SPDX-License-Identifier: Apache-2.0
"""Modes for kuai.Cipher.encryptor()/decryptor(), as cryptography's
``cryptography.hazmat.primitives.ciphers.modes``. The IV or nonce is one
block (16 bytes; 32 for uBlock-256/256), checked when the context is made.
CFB, OFB, XTS and GCM are for the 128-bit-block ciphers only (SM4, AES,
uBlock-128/*); XTS needs an XTS key (``kuai.Cipher("aes-xts", key)``)."""
from __future__ import annotations

from typing import Any, Optional

from . import _kuai

# Operations of kuai._kuai.stream (src/_kuai/stream.c).
_ECB_ENC, _ECB_DEC, _CBC_ENC, _CBC_DEC, _CTR, _CFB_ENC, _CFB_DEC, _OFB, _XTS_ENC, _XTS_DEC = range(10)
# kuai_xts_standard (include/kuai.h), by the names of OpenSSL's xts_standard.
_XTS_STANDARDS = {"IEEE": 0, "GB": 1}


def _as_bytes(value: Any, name: str) -> bytes:
    """A copy of a bytes-like value. Not bytes(value): that takes an int as
    a count of zero bytes (CBC(16) would be an all-zero IV) and a list of
    ints as bytes."""
    try:
        mv = memoryview(value)
    except TypeError:
        raise TypeError(f"{name} must be bytes (a bytes-like object), not "
                        f"{type(value).__name__}") from None
    # An array of Python objects' bytes are their addresses: TypeError, as
    # the extension's own buffer arguments (an IV made of heap pointers).
    if _kuai.holds_objects(mv):
        raise TypeError(f"{name} holds Python objects (buffer format 'O'), not bytes")
    # bytes(mv) would gather a strided buffer silently: BufferError, as for
    # every other buffer argument and in cryptography.
    if not mv.c_contiguous:
        raise BufferError(f"{name} is not C-contiguous")
    return bytes(mv)


class Mode:
    name = ""
    _xts_standard = 0

    def _op(self, encrypt: bool) -> int:
        raise NotImplementedError

    def _iv(self) -> Optional[bytes]:
        return None


class ECB(Mode):
    """Electronic codebook: each block alone. Data must come to a multiple of
    the block size by finalize() (kuai.padding.PKCS7 pads)."""

    name = "ECB"

    def _op(self, encrypt: bool) -> int:
        return _ECB_ENC if encrypt else _ECB_DEC


class _ModeWithIV(Mode):
    """A mode whose one parameter is an initialization vector of a block
    (cryptography's ModeWithInitializationVector): CBC, CFB, OFB."""

    def __init__(self, initialization_vector: bytes) -> None:
        self._initialization_vector = _as_bytes(initialization_vector, "initialization_vector")

    @property
    def initialization_vector(self) -> bytes:
        return self._initialization_vector

    def _iv(self) -> Optional[bytes]:
        return self._initialization_vector


class CBC(_ModeWithIV):
    name = "CBC"

    def _op(self, encrypt: bool) -> int:
        return _CBC_ENC if encrypt else _CBC_DEC


class CTR(Mode):
    """Counter mode: the nonce is the whole first counter block, incremented
    as one big-endian integer (as OpenSSL and cryptography do)."""

    name = "CTR"

    def __init__(self, nonce: bytes) -> None:
        self._nonce = _as_bytes(nonce, "nonce")

    @property
    def nonce(self) -> bytes:
        return self._nonce

    def _op(self, encrypt: bool) -> int:
        return _CTR

    def _iv(self) -> Optional[bytes]:
        return self._nonce


class CFB(_ModeWithIV):
    """Cipher feedback with 128-bit segments (CFB128, as cryptography's and
    OpenSSL's CFB): any length, in updates of any sizes. 128-bit-block
    ciphers only."""

    name = "CFB"

    def _op(self, encrypt: bool) -> int:
        return _CFB_ENC if encrypt else _CFB_DEC


class OFB(_ModeWithIV):
    """Output feedback: any length, in updates of any sizes; encryption and
    decryption are the same operation. 128-bit-block ciphers only."""

    name = "OFB"

    def _op(self, encrypt: bool) -> int:
        return _OFB


class XTS(Mode):
    """XTS for an XTS key, ``kuai.Cipher("aes-xts" / "sm4-xts" / ...,
    data key || tweak key)``: ``tweak`` is 16 bytes (IEEE 1619: the data unit
    number, little-endian). As in cryptography (OpenSSL), each update() is
    one whole data unit of 16 bytes to 2^24 bytes, every one under this
    tweak: give a sector in one call. ``standard``: "IEEE" (IEEE Std 1619,
    the default, as cryptography) or "GB" (GB/T 17964-2021, OpenSSL's
    SM4-XTS default; any 128-bit-block cipher here). An encryptor refuses
    a key whose two halves are equal; a decryptor takes it (as cryptography)."""

    name = "XTS"

    def __init__(self, tweak: bytes, standard: str = "IEEE") -> None:
        self._tweak = _as_bytes(tweak, "tweak")
        if len(self._tweak) != 16:
            raise ValueError("tweak must be 128-bits (16 bytes)")
        if not isinstance(standard, str):
            raise TypeError("standard must be a str: 'IEEE' or 'GB'")
        if standard.upper() not in _XTS_STANDARDS:
            raise ValueError(f"unknown XTS standard {standard!r}: 'IEEE' or 'GB'")
        self._standard = standard.upper()
        self._xts_standard = _XTS_STANDARDS[self._standard]

    @property
    def tweak(self) -> bytes:
        return self._tweak

    @property
    def standard(self) -> str:
        return self._standard

    def _op(self, encrypt: bool) -> int:
        return _XTS_ENC if encrypt else _XTS_DEC

    def _iv(self) -> Optional[bytes]:
        return self._tweak


class GCM(Mode):
    """Galois/counter mode for Cipher(...).encryptor()/decryptor(), as
    cryptography's ``modes.GCM``: ``initialization_vector`` of 8 to 128
    bytes (12 is the one to use; never twice under one key); for decryption
    the ``tag`` here, or later through ``finalize_with_tag(tag)``. Tags
    shorter than 16 bytes are accepted down to ``min_tag_length`` (>= 4).
    A 128-bit-block cipher only (SM4, AES, uBlock-128/*)."""

    name = "GCM"

    def __init__(self, initialization_vector: bytes, tag: Optional[bytes] = None,
                 min_tag_length: int = 16) -> None:
        self._initialization_vector = _as_bytes(initialization_vector, "initialization_vector")
        if not 8 <= len(self._initialization_vector) <= 128:
            raise ValueError("initialization_vector must be between 8 and 128 bytes "
                             "(64 and 1024 bits).")
        if min_tag_length < 4:
            raise ValueError("min_tag_length must be >= 4")
        if tag is not None:
            tag = _as_bytes(tag, "tag")
            if len(tag) < min_tag_length:
                raise ValueError(f"Authentication tag must be {min_tag_length} bytes or longer.")
            if len(tag) > 16:
                raise ValueError("Authentication tag cannot be more than 16 bytes.")
        self._tag = tag
        self._min_tag_length = min_tag_length

    @property
    def initialization_vector(self) -> bytes:
        return self._initialization_vector

    @property
    def tag(self) -> Optional[bytes]:
        return self._tag

    def _op(self, encrypt: bool) -> int:
        raise TypeError("GCM contexts are made by Cipher.encryptor()/decryptor()")
