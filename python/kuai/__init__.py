# SPDX-License-Identifier: Apache-2.0
"""kuai: fast, constant-time SM4, uBlock and AES from Python.

A `cryptography`-style API over the kuai C library (linked into the
extension kuai._kuai): ::

    import kuai, os
    c = kuai.Cipher("sm4", os.urandom(16))
    enc = c.encryptor(kuai.modes.CTR(os.urandom(16)))
    ct = enc.update(b"attack at dawn") + enc.finalize()
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Union

from . import _kuai
from ._kuai import AlreadyFinalized, InvalidSignature, InvalidTag, NotYetFinalized
from ._names import cipher_id as _cipher_id
from ._names import xts_cipher_id as _xts_cipher_id
from ._names import CIPHERS as _CIPHERS

__version__: str = _kuai.VERSION

__all__ = [
    "Cipher", "InvalidTag", "InvalidSignature", "AlreadyFinalized", "NotYetFinalized", "backends", "info",
    "modes", "padding", "aead", "cmac", "keywrap",
    "cbc_encrypt_multi", "cbc_decrypt_multi", "__version__",
]


_MODE_TYPE_ERROR = ("mode must be kuai.modes.ECB(), CBC(iv), CTR(nonce), CFB(iv), OFB(iv), XTS(tweak) "
                    "or GCM(nonce)")


class Cipher(_kuai.Key):
    """A key of one cipher, set up once, usable from many threads at once.

    ``name``: "sm4", "aes" (128/192/256 by key length) or "aes-128"...,
    "ublock-128-128", "ublock-128-256", "ublock-256-256" (or "ublock-128" with
    the key size choosing). ``backend``: force one of :func:`backends`.
    The key schedule is wiped when the object is freed.

    An XTS key, for modes.XTS only: the name with "-xts" ("aes-xts",
    "sm4-xts", "ublock-128-xts", or "aes-128-xts"...) and the data key and
    the tweak key concatenated, as cryptography's AES key for XTS (AES: 32
    or 64 bytes, AES-128-XTS and AES-256-XTS).
    """

    __slots__ = ()

    def __new__(cls, name: str, key: Any, backend: Optional[str] = None) -> "Cipher":
        xts_id = _xts_cipher_id(name, key)
        if xts_id is not None:
            return super().__new__(cls, xts_id, key, backend, xts=True)
        return super().__new__(cls, _cipher_id(name, key), key, backend)

    @property
    def name(self) -> str:
        return _CIPHERS[self.cipher_id][0] + ("-xts" if self.xts else "")

    @property
    def key_size(self) -> int:
        return _CIPHERS[self.cipher_id][1] * (2 if self.xts else 1)

    def encryptor(self, mode: "modes.Mode") -> "Union[_kuai.Stream, _kuai.GcmStream]":
        """A context with update(data), update_into(data, buf), finalize();
        with modes.GCM also authenticate_additional_data(data) and, after
        finalize(), .tag."""
        if isinstance(mode, modes.GCM):
            if mode.tag is not None:
                raise ValueError("Authentication tag must be None when encrypting.")
            return _kuai.gcm_stream(self, True, mode.initialization_vector, None)
        if not isinstance(mode, modes.Mode):
            raise TypeError(_MODE_TYPE_ERROR)
        return _kuai.stream(self, mode._op(True), mode._iv(), mode._xts_standard)

    def decryptor(self, mode: "modes.Mode") -> "Union[_kuai.Stream, _kuai.GcmStream]":
        """As encryptor(); a GCM decryptor checks the tag of GCM(nonce, tag)
        at finalize(), or the one given to finalize_with_tag(tag), raising
        kuai.InvalidTag. Its update() returns plaintext before the tag is
        checked: use none of it until finalize() has returned."""
        if isinstance(mode, modes.GCM):
            return _kuai.gcm_stream(self, False, mode.initialization_vector, mode.tag,
                                    mode._min_tag_length)
        if not isinstance(mode, modes.Mode):
            raise TypeError(_MODE_TYPE_ERROR)
        return _kuai.stream(self, mode._op(False), mode._iv(), mode._xts_standard)

    def __repr__(self) -> str:
        return f"<kuai.Cipher {self.name} backend={self.backend}>"


def backends(cipher: str = "sm4") -> List[str]:
    """The backends usable on this CPU for ``cipher``, best first."""
    return _kuai.backends(_cipher_id(cipher, None))


def info() -> Dict[str, Any]:
    """Version, and per cipher its sizes, usable backends and the default one
    (what a new key gets here, KUAI_BACKEND included)."""
    ciphers = {}
    for cid, (name, key_size, block_size) in _CIPHERS.items():
        try:
            default: Optional[str] = _kuai.Key(cid, bytes(key_size)).backend
        except ValueError:
            default = None
        ciphers[name] = {
            "key_size": key_size,
            "block_size": block_size,
            "backends": _kuai.backends(cid),
            "default": default,
        }
    return {"version": __version__, "gil_released_from_bytes": _kuai.GIL_BYTES, "ciphers": ciphers}


def cbc_encrypt_multi(keys: Sequence[Cipher], ivs: Sequence[Any], datas: Sequence[Any]) -> List[bytes]:
    """CBC-encrypt datas[i] under keys[i] with ivs[i], all streams in one C
    call, interleaved so that even CBC encryption fills the vector lanes.
    Keys of one cipher; data of one length, a multiple of the block size (no
    padding; see kuai.padding)."""
    return _kuai.cbc_multi(True, keys, ivs, datas)


def cbc_decrypt_multi(keys: Sequence[Cipher], ivs: Sequence[Any], datas: Sequence[Any]) -> List[bytes]:
    return _kuai.cbc_multi(False, keys, ivs, datas)


from . import aead, cmac, keywrap, modes, padding  # noqa: E402  (they use Cipher)
