# SPDX-License-Identifier: Apache-2.0
"""Key wrap (NIST SP 800-38F) as cryptography's
``cryptography.hazmat.primitives.keywrap``: KW (RFC 3394) and KWP, with
padding (RFC 5649): ::

    import os
    from kuai import keywrap
    kek = os.urandom(32)
    wrapped = keywrap.aes_key_wrap(kek, os.urandom(16))      # 24 bytes
    key = keywrap.aes_key_unwrap(kek, wrapped)               # or InvalidUnwrap

``aes_key_wrap(wrapping_key, key_to_wrap, backend=None)``,
``aes_key_unwrap(wrapping_key, wrapped_key, backend=None)``,
``aes_key_wrap_with_padding`` and ``aes_key_unwrap_with_padding``: the
same arguments, checks, exception types and messages as cryptography's
(``backend`` is ignored, as there): a wrapping key not of 16, 24 or 32
bytes, a key to wrap under 16 bytes or not a multiple of 8 (KW), or empty
(KWP) is a ``ValueError``; a wrapped key too short or not a multiple of 8,
or one that does not verify, :class:`InvalidUnwrap`. The exception is
kuai's own, as :class:`kuai.InvalidTag` is.

``key_wrap(cipher, wrapping_key, key_to_wrap, *, padding=False)`` and
``key_unwrap(cipher, wrapping_key, wrapped_key, *, padding=False)``: the
same with any 128-bit-block cipher by its kuai name ("sm4", "aes",
"ublock-128-128", "ublock-128" by key size...), as libgcrypt's AESWRAP
mode does with SM4; uBlock-256/256 (a 256-bit block) is a ``ValueError``.
"""
from __future__ import annotations

from typing import Any

from . import _kuai
from ._kuai import InvalidUnwrap
from ._names import cipher_id

__all__ = [
    "InvalidUnwrap",
    "aes_key_unwrap",
    "aes_key_unwrap_with_padding",
    "aes_key_wrap",
    "aes_key_wrap_with_padding",
    "key_unwrap",
    "key_wrap",
]

# KWP's length field (RFC 5649's MLI) is 32 bits.
_KWP_MAX = 2**32 - 1


def _nbytes(value: Any, name: str) -> int:
    """The length in bytes of a bytes-like argument, refused as the
    extension refuses it (TypeError, BufferError) before any length is
    judged: cryptography reads both buffers before it checks a length."""
    try:
        mv = memoryview(value)
    except TypeError:
        raise TypeError(f"{name} must be a bytes-like object (bytes, bytearray, memoryview, "
                        "C-contiguous array)") from None
    with mv:
        if _kuai.holds_objects(mv):
            raise TypeError(f"{name} holds Python objects (buffer format 'O'), not bytes")
        if not mv.c_contiguous:
            raise BufferError(f"{name} is not C-contiguous")
        return mv.nbytes


def _key(cipher: str, wrapping_key: Any, key_len: int, aes: bool) -> _kuai.Key:
    if aes and key_len not in (16, 24, 32):
        raise ValueError("The wrapping key must be a valid AES key length")
    return _kuai.Key(cipher_id(cipher, wrapping_key), wrapping_key)


def _wrap(cipher: str, wrapping_key: Any, key_to_wrap: Any, padding: bool, aes: bool) -> bytes:
    key_len = _nbytes(wrapping_key, "wrapping_key")
    n = _nbytes(key_to_wrap, "key_to_wrap")
    key = _key(cipher, wrapping_key, key_len, aes)
    if padding:
        if not 1 <= n <= _KWP_MAX:
            raise ValueError("key_to_wrap must be between 1 and 2^32 bytes")
    elif n < 16:
        raise ValueError("The key to wrap must be at least 16 bytes")
    elif n % 8 != 0:
        raise ValueError("The key to wrap must be a multiple of 8 bytes")
    return _kuai.key_wrap(key, key_to_wrap, padding)


def _unwrap(cipher: str, wrapping_key: Any, wrapped_key: Any, padding: bool, aes: bool) -> bytes:
    key_len = _nbytes(wrapping_key, "wrapping_key")
    n = _nbytes(wrapped_key, "wrapped_key")
    # As cryptography: the wrapped key's length before the wrapping key.
    least = 16 if padding else 24
    if n < least:
        raise InvalidUnwrap(f"Must be at least {least} bytes")
    if n % 8 != 0:
        raise InvalidUnwrap("The wrapped key must be a multiple of 8 bytes")
    return _kuai.key_unwrap(_key(cipher, wrapping_key, key_len, aes), wrapped_key, padding)


def aes_key_wrap(wrapping_key: Any, key_to_wrap: Any, backend: Any = None) -> bytes:
    """RFC 3394 key wrap with AES (the wrapping key's length picks
    AES-128/192/256): ``key_to_wrap`` a multiple of 8 bytes, at least 16;
    returns 8 bytes more."""
    return _wrap("aes", wrapping_key, key_to_wrap, False, True)


def aes_key_unwrap(wrapping_key: Any, wrapped_key: Any, backend: Any = None) -> bytes:
    """The key that :func:`aes_key_wrap` wrapped, or :class:`InvalidUnwrap`."""
    return _unwrap("aes", wrapping_key, wrapped_key, False, True)


def aes_key_wrap_with_padding(wrapping_key: Any, key_to_wrap: Any, backend: Any = None) -> bytes:
    """RFC 5649 key wrap with padding with AES: a key of any length from 1
    byte; returns 8 bytes more than it rounded up to 8 (16 up to 8 bytes)."""
    return _wrap("aes", wrapping_key, key_to_wrap, True, True)


def aes_key_unwrap_with_padding(wrapping_key: Any, wrapped_key: Any, backend: Any = None) -> bytes:
    """The key that :func:`aes_key_wrap_with_padding` wrapped, or
    :class:`InvalidUnwrap` (the length and the padding are checked too)."""
    return _unwrap("aes", wrapping_key, wrapped_key, True, True)


def key_wrap(cipher: str, wrapping_key: Any, key_to_wrap: Any, *, padding: bool = False) -> bytes:
    """:func:`aes_key_wrap` (or with ``padding=True``
    :func:`aes_key_wrap_with_padding`) with another 128-bit-block cipher:
    ``cipher`` is a name as :class:`kuai.Cipher` takes it ("sm4", "aes",
    "ublock-128-128"...) and ``wrapping_key`` that cipher's key."""
    return _wrap(cipher, wrapping_key, key_to_wrap, bool(padding), False)


def key_unwrap(cipher: str, wrapping_key: Any, wrapped_key: Any, *, padding: bool = False) -> bytes:
    """The key that :func:`key_wrap` wrapped with the same cipher, key and
    ``padding``, or :class:`InvalidUnwrap`."""
    return _unwrap(cipher, wrapping_key, wrapped_key, bool(padding), False)
