# SPDX-License-Identifier: Apache-2.0
"""Modes for kuai.Cipher.encryptor()/decryptor(), as cryptography's
``cryptography.hazmat.primitives.ciphers.modes``. The IV or nonce is one
block (16 bytes; 32 for uBlock-256/256), checked when the context is made."""
from __future__ import annotations

from typing import Any, Optional

# Operations of kuai._kuai.stream (src/_kuai/stream.c).
_ECB_ENC, _ECB_DEC, _CBC_ENC, _CBC_DEC, _CTR = range(5)


def _as_bytes(value: Any, name: str) -> bytes:
    """A copy of a bytes-like value. Not bytes(value): that takes an int as
    a count of zero bytes (CBC(16) would be an all-zero IV) and a list of
    ints as bytes."""
    try:
        return bytes(memoryview(value))
    except TypeError:
        raise TypeError(f"{name} must be bytes (a bytes-like object), not "
                        f"{type(value).__name__}") from None


class Mode:
    name = ""

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


class CBC(Mode):
    name = "CBC"

    def __init__(self, initialization_vector: bytes) -> None:
        self._initialization_vector = _as_bytes(initialization_vector, "initialization_vector")

    @property
    def initialization_vector(self) -> bytes:
        return self._initialization_vector

    def _op(self, encrypt: bool) -> int:
        return _CBC_ENC if encrypt else _CBC_DEC

    def _iv(self) -> Optional[bytes]:
        return self._initialization_vector


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
