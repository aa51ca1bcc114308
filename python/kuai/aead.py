# SPDX-License-Identifier: Apache-2.0
"""GCM and CCM with cryptography's AEAD signatures: ``encrypt(nonce, data,
associated_data) -> ciphertext || tag`` (GCM: 16-byte tag; CCM: the
``tag_length`` given, 16 by default), ``decrypt(nonce, ciphertext || tag,
associated_data)`` raising :class:`kuai.InvalidTag`.

Batches (GCM): many messages under one key, each with its own nonce, in ONE C call
with the GIL released: ``encrypt_batch``/``decrypt_batch`` on lists, and
``encrypt_packed``/``decrypt_packed`` on one contiguous buffer + Arrow-style
offsets (what an Arrow binary column is), optionally writing each row as
nonce || ciphertext || tag (the layout of Spark's aes_encrypt)."""
from __future__ import annotations

import operator
import os
from typing import Any, List, Literal, Optional, Sequence, Union

from . import _kuai
from ._names import cipher_id

__all__ = ["SM4GCM", "AESGCM", "UBlockGCM", "SM4CCM", "AESCCM", "UBlockCCM", "gcm_encrypt_batch",
           "gcm_decrypt_batch"]


class _NotHere:
    """A method of the base key type (kuai._kuai.Key, what kuai.Cipher
    builds on) that an AEAD class does not offer: the other mode's calls,
    the raw gcm_*/ccm_*/cbc_* names, the XTS flag. Looked up on the class
    or an instance it raises AttributeError (hasattr() is False), so an
    AESCCM cannot be used as GCM by mistake, nor an AESGCM as CCM."""

    def __set_name__(self, owner: type, name: str) -> None:
        self._name = name

    def __get__(self, obj: Any, owner: Optional[type] = None) -> Any:
        cls = owner if owner is not None else type(obj)
        raise AttributeError(f"{cls.__name__!r} object has no attribute {self._name!r}")


# The base key's public names, less the AEAD classes' own (encrypt,
# decrypt, encrypt_into, decrypt_into, generate_key, backend; GCM: the
# batch and packed calls; CCM: tag_length).
_KEY_NAMES = ("cipher_id", "block_size", "xts", "tag_length", "gcm_encrypt", "gcm_decrypt",
              "gcm_encrypt_into", "gcm_decrypt_into", "ccm_encrypt", "ccm_decrypt",
              "ccm_encrypt_into", "ccm_decrypt_into", "gcm_encrypt_batch", "gcm_decrypt_batch",
              "gcm_encrypt_packed", "gcm_decrypt_packed", "cbc_encrypt_packed",
              "cbc_decrypt_packed")


def _is_hidden(cls: type, name: str) -> bool:
    """Whether name resolves on cls to a _NotHere: by the class's MRO, not
    by a fixed list, so a subclass that defines one of the names again
    (its own xts, say) has it listed by dir() as getattr() finds it."""
    for klass in cls.__mro__:
        if name in vars(klass):
            return isinstance(vars(klass)[name], _NotHere)
    return False


class _AEADMeta(type):
    """The AEAD classes' metaclass, for dir(cls) alone: type.__dir__ lists
    every name in the MRO's dicts, the _NotHere placeholders and the base
    key's methods they shadow among them, and dir(cls) consults only the
    metaclass (an instance __dir__ does not reach it). A subclass of type,
    as the base kuai._kuai.Key's metaclass is type; it adds no state, so
    isinstance, issubclass, subclassing and pickling by name behave as
    with type."""

    def __dir__(cls) -> List[str]:
        return sorted(n for n in type.__dir__(cls) if not _is_hidden(cls, n))


def _instance_dir(self: Any) -> List[str]:
    # A name in the instance's own __dict__ (a subclass without
    # __slots__) is found by getattr before the class's _NotHere, a
    # non-data descriptor, so it stays listed.
    own = getattr(self, "__dict__", {})
    return sorted(n for n in object.__dir__(self)
                  if n in own or not _is_hidden(type(self), n))


def _hide(cls: type, keep: Sequence[str] = ()) -> type:
    for name in _KEY_NAMES:
        if name not in keep:
            hidden = _NotHere()
            hidden.__set_name__(cls, name)
            setattr(cls, name, hidden)
    cls.__dir__ = _instance_dir  # type: ignore
    return cls


class _GCM(_kuai.Key, metaclass=_AEADMeta):
    __slots__ = ()
    _family = ""

    def __new__(cls, key: Any) -> "_GCM":
        try:
            cid = cipher_id(cls._family, key)
        except ValueError:
            bits = memoryview(key).nbytes * 8
            raise ValueError(f"Invalid key size ({bits} bits) for {cls.__name__}") from None
        # for GCM only: CMAC, the streams and multi-key CBC refuse it
        return super().__new__(cls, cid, key, aead="gcm")

    # The C methods themselves: one C call per message, no Python frame.
    encrypt = _kuai.Key.gcm_encrypt
    decrypt = _kuai.Key.gcm_decrypt
    encrypt_into = _kuai.Key.gcm_encrypt_into
    decrypt_into = _kuai.Key.gcm_decrypt_into
    encrypt_batch = _kuai.Key.gcm_encrypt_batch
    decrypt_batch = _kuai.Key.gcm_decrypt_batch
    encrypt_packed = _kuai.Key.gcm_encrypt_packed
    decrypt_packed = _kuai.Key.gcm_decrypt_packed

    def __repr__(self) -> str:
        return f"<kuai.aead.{type(self).__name__} backend={self.backend}>"


_hide(_GCM)


def _bit_length(bit_length: Any) -> int:
    """As cryptography: an integer (anything with __index__), else
    TypeError; not the ValueError of a wrong size ("128", 128.0, None)."""
    try:
        return operator.index(bit_length)
    except TypeError:
        raise TypeError("bit_length must be an integer") from None


class _SM4Key:
    """SM4's keys, for the GCM and CCM classes: 16 bytes."""

    __slots__ = ()
    _family = "sm4"

    @classmethod
    def generate_key(cls) -> bytes:
        return os.urandom(16)


class _AESKey:
    """AES's keys: 16, 24 or 32 bytes."""

    __slots__ = ()
    _family = "aes"

    @classmethod
    def generate_key(cls, bit_length: int) -> bytes:
        bit_length = _bit_length(bit_length)
        if bit_length not in (128, 192, 256):
            raise ValueError("bit_length must be 128, 192, or 256")
        return os.urandom(bit_length // 8)


class _UBlockKey:
    """uBlock-128's keys: uBlock-128/128 (16 bytes) or uBlock-128/256 (32)."""

    __slots__ = ()
    _family = "ublock-128"

    @classmethod
    def generate_key(cls, bit_length: int = 128) -> bytes:
        bit_length = _bit_length(bit_length)
        if bit_length not in (128, 256):
            raise ValueError("bit_length must be 128 or 256")
        return os.urandom(bit_length // 8)


class SM4GCM(_SM4Key, _GCM):
    """SM4-GCM (as RFC 8998 uses it). Key: 16 bytes."""

    __slots__ = ()


class AESGCM(_AESKey, _GCM):
    """AES-GCM. Key: 16, 24 or 32 bytes."""

    __slots__ = ()


class UBlockGCM(_UBlockKey, _GCM):
    """GCM over uBlock-128/128 (16-byte key) or uBlock-128/256 (32-byte key)."""

    __slots__ = ()


class _CCM(_kuai.Key, metaclass=_AEADMeta):
    __slots__ = ()
    _family = ""

    def __new__(cls, key: Any, tag_length: "int | None" = 16) -> "_CCM":
        # None is the default, as cryptography takes it
        tag_length = 16 if tag_length is None else tag_length
        tag_length = operator.index(tag_length)  # TypeError for a float or str, as cryptography
        if tag_length not in (4, 6, 8, 10, 12, 14, 16):
            raise ValueError("Invalid tag_length")
        try:
            cid = cipher_id(cls._family, key)
        except ValueError:
            bits = memoryview(key).nbytes * 8
            raise ValueError(f"Invalid key size ({bits} bits) for {cls.__name__}") from None
        return super().__new__(cls, cid, key, tag_length=tag_length, aead="ccm")

    # The C methods themselves (the tag length is the key object's).
    encrypt = _kuai.Key.ccm_encrypt
    decrypt = _kuai.Key.ccm_decrypt
    encrypt_into = _kuai.Key.ccm_encrypt_into
    decrypt_into = _kuai.Key.ccm_decrypt_into

    def __repr__(self) -> str:
        return f"<kuai.aead.{type(self).__name__} tag_length={self.tag_length} backend={self.backend}>"


_hide(_CCM, keep=("tag_length",))


class SM4CCM(_SM4Key, _CCM):
    """SM4-CCM (RFC 8998). Key: 16 bytes; nonce 7..13 bytes (RFC 8998: 12)."""

    __slots__ = ()


class AESCCM(_AESKey, _CCM):
    """AES-CCM (SP 800-38C), as cryptography's AESCCM. Key: 16, 24 or 32
    bytes; nonce 7..13 bytes."""

    __slots__ = ()


class UBlockCCM(_UBlockKey, _CCM):
    """CCM over uBlock-128/128 (16-byte key) or uBlock-128/256 (32-byte key)."""

    __slots__ = ()


_Buffers = Union[Sequence[Any], bytes, bytearray, memoryview]


def gcm_encrypt_batch(cipher: str, key: Any, nonces: _Buffers, datas: Sequence[Any],
                      aad: Optional[Any] = None) -> List[bytes]:
    """Encrypt datas[i] with nonces[i] under one key: [ct_i || tag_i].

    ``nonces``: a sequence of nonces, or one buffer of len(datas) * 12 bytes
    (e.g. ``os.urandom(12 * n)``). ``aad``: None, one for all, or one each."""
    return _kuai.Key(cipher_id(cipher, key), key).gcm_encrypt_batch(nonces, datas, aad)


def gcm_decrypt_batch(cipher: str, key: Any, nonces: _Buffers, datas: Sequence[Any],
                      aad: Optional[Any] = None,
                      errors: Literal["raise", "none"] = "raise") -> List[Optional[bytes]]:
    """Decrypt [ct_i || tag_i]. A failed tag raises InvalidTag (naming the
    message) with ``errors="raise"``, or gives None in its place with
    ``errors="none"``."""
    return _kuai.Key(cipher_id(cipher, key), key).gcm_decrypt_batch(nonces, datas, aad, errors)
