# SPDX-License-Identifier: Apache-2.0
"""Modes for kuai.Cipher.encryptor()/decryptor(), as cryptography's
``cryptography.hazmat.primitives.ciphers.modes``. The IV or nonce is one
block (16 bytes; 32 for uBlock-256/256), checked when the context is made."""
from __future__ import annotations

from typing import Optional

# Operations of kuai._kuai.stream (src/_kuai.c).
_ECB_ENC, _ECB_DEC, _CBC_ENC, _CBC_DEC, _CTR = range(5)


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
        self._initialization_vector = bytes(initialization_vector)

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
        self._nonce = bytes(nonce)

    @property
    def nonce(self) -> bytes:
        return self._nonce

    def _op(self, encrypt: bool) -> int:
        return _CTR

    def _iv(self) -> Optional[bytes]:
        return self._nonce
