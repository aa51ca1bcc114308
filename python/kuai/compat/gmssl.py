# SPDX-License-Identifier: Apache-2.0
"""A drop-in for gmssl 3.2.2's ``gmssl.sm4``: migrating is one import line.

    from kuai.compat.gmssl import CryptSM4, SM4_ENCRYPT, SM4_DECRYPT

Outputs are byte for byte those of gmssl 3.2.2 (tests/test_gmssl_compat.py
runs both), its quirks included:

* crypt_ecb pads by ``padding_mode`` (PKCS7 by default, ZERO, or anything else
  for none) when ``mode`` is SM4_ENCRYPT and unpads when it is SM4_DECRYPT;
  crypt_cbc always pads/unpads PKCS#7 whatever ``padding_mode`` says.
* Unpadding checks nothing: PKCS#7 drops as many bytes as the last byte says
  (all of them when it is 0 or too large); ZERO drops one trailing zero byte,
  and on a non-zero last byte fails (gmssl raises TypeError there; so does
  this, with an explanation).
* The key's direction is fixed by set_key(key, mode); ``mode`` (which
  set_key also sets) decides the padding. Changing ``crypt.mode`` afterwards
  gives what gmssl gives (e.g. CBC "decryption" with encryption round keys).
* Only the first 16 bytes of the key and of the IV count.

Errors gmssl raises by accident (an IndexError from a short key, IV or a
length that is not whole blocks) raise here an exception that is both a
ValueError and an IndexError, with a message saying what is wrong. Two
deliberate differences: using the object before set_key raises (gmssl
encrypts with all-zero round keys), and an IV under 16 bytes raises (gmssl
then shifts its output in ways no caller can want).
"""
from __future__ import annotations

import operator
from typing import Any, Optional

from .. import _kuai
from ..modes import _CBC_DEC, _CBC_ENC, _ECB_DEC, _ECB_ENC

SM4_ENCRYPT = 0
SM4_DECRYPT = 1
PKCS7 = 0
ZERO = 1

_SM4 = next(c[0] for c in _kuai.ciphers() if c[1] == "sm4")

__all__ = ["CryptSM4", "SM4_ENCRYPT", "SM4_DECRYPT", "PKCS7", "ZERO"]


class GmsslInputError(ValueError, IndexError):
    """Where gmssl 3.2.2 fails with an IndexError."""


def _bytes(data: Any) -> bytes:
    """Bytes-like values and lists of byte values, as gmssl takes them. Not an
    integer (bytes(16) is 16 zero bytes: an all-zero key or IV) nor a str,
    where gmssl raises TypeError."""
    if type(data) is bytes:
        return data
    bad = isinstance(data, str)
    if not bad:
        # Any integer, not only int: bytes() takes whatever has __index__
        # (numpy's integers, a 0-d integer array) as a count of zero bytes.
        try:
            operator.index(data)
            bad = True
        except TypeError:
            pass
    if bad:
        raise TypeError(f"expected bytes (a bytes-like object or a list of byte values), "
                        f"not {type(data).__name__}")
    # bytes() of an array of Python objects gives their addresses
    if _kuai.holds_objects(data):
        raise TypeError("expected bytes, not an array of Python objects (buffer format 'O')")
    return bytes(data)


class CryptSM4:
    def __init__(self, mode: int = SM4_ENCRYPT, padding_mode: int = PKCS7) -> None:
        self.mode = mode
        self.padding_mode = padding_mode
        self._key: Optional[_kuai.Key] = None
        self._decrypting_key = False

    def set_key(self, key: Any, mode: int) -> None:
        key = _bytes(key)
        if len(key) < 16:
            raise GmsslInputError(f"SM4 key must be 16 bytes, got {len(key)}")
        self._key = _kuai.Key(_SM4, key[:16])
        self._decrypting_key = mode == SM4_DECRYPT
        self.mode = mode

    def _ecb(self, data: bytes) -> bytes:
        if self._key is None:
            raise ValueError("CryptSM4: call set_key(key, mode) first")
        if len(data) % 16:
            raise GmsslInputError(f"SM4 input must be whole 16-byte blocks, got {len(data)} bytes")
        s = _kuai.stream(self._key, _ECB_DEC if self._decrypting_key else _ECB_ENC, None)
        return s.update(data)

    @staticmethod
    def _pkcs7_unpad(data: bytes) -> bytes:
        if not data:
            raise GmsslInputError("nothing to unpad: empty input")
        return data[: -data[-1]]

    def crypt_ecb(self, input_data: Any) -> bytes:
        data = _bytes(input_data)
        if self.mode == SM4_ENCRYPT:
            n = 16 - len(data) % 16
            if self.padding_mode == PKCS7:
                data += bytes([n]) * n
            elif self.padding_mode == ZERO:
                data += bytes(n)
        out = self._ecb(data)
        if self.mode == SM4_DECRYPT:
            if self.padding_mode == PKCS7:
                return self._pkcs7_unpad(out)
            if self.padding_mode == ZERO:
                if not out:
                    raise GmsslInputError("nothing to unpad: empty input")
                if out[-1] != 0:
                    raise TypeError("gmssl ZERO unpadding: the last byte is not zero "
                                    "(gmssl 3.2.2 fails here with \"'int' object is not iterable\")")
                return out[:-1]
        return out

    def crypt_cbc(self, iv: Any, input_data: Any) -> bytes:
        if self._key is None:
            raise ValueError("CryptSM4: call set_key(key, mode) first")
        iv = _bytes(iv)
        if len(iv) < 16:
            raise GmsslInputError(f"SM4-CBC IV must be 16 bytes, got {len(iv)}")
        iv = iv[:16]
        data = _bytes(input_data)
        if self.mode == SM4_ENCRYPT:
            n = 16 - len(data) % 16
            data += bytes([n]) * n
            if not self._decrypting_key:
                return _kuai.stream(self._key, _CBC_ENC, iv).update(data)
            # gmssl's CBC chain over its decryption round keys.
            chain = bytearray()
            prev = iv
            for i in range(0, len(data), 16):
                x = bytes(a ^ b for a, b in zip(data[i:i + 16], prev))
                prev = self._ecb(x)
                chain += prev
            return bytes(chain)
        if len(data) % 16:
            raise GmsslInputError(f"SM4 input must be whole 16-byte blocks, got {len(data)} bytes")
        if self._decrypting_key:
            out = _kuai.stream(self._key, _CBC_DEC, iv).update(data)
        else:
            # gmssl's CBC decryption structure over encryption round keys.
            e = self._ecb(data)
            chain = iv + data[:-16]
            out = bytes(a ^ b for a, b in zip(e, chain))
        return self._pkcs7_unpad(out)
