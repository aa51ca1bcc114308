# SPDX-License-Identifier: Apache-2.0
"""Cipher names to the library's ids."""
from __future__ import annotations

from typing import Any, Dict, Optional, Tuple

from . import _kuai

# id -> (name, key size, block size), from the library itself (kuai_ciphers()).
CIPHERS: Dict[int, Tuple[str, int, int]] = {c[0]: (c[1], c[2], c[3]) for c in _kuai.ciphers()}
# The binding's own aliases: families whose member the key length picks.
_FAMILIES = {"aes": "aes-{bits}", "ublock-128": "ublock-128-{bits}", "ublock": "ublock-128-{bits}"}


def _by_name(n: str) -> int:
    """The library's kuai_cipher_by_name; 0 for none (names are ASCII, without NUL)."""
    if not n.isascii() or "\0" in n:
        return 0
    return _kuai.cipher_by_name(n)


def is_family(name: str) -> bool:
    """Whether name is one of the binding's aliases ("aes", "ublock-128")
    whose member the key's length picks."""
    return isinstance(name, str) and name.strip().lower().replace("_", "-") in _FAMILIES


def shown(value: Any) -> str:
    """value for an error message about a cipher or mode name: repr() of a
    short name, else only its type and length. A key passed by mistake in
    a name's place (kuai_encrypt(col, key, '<hex key>', 'gcm')) must not
    reach the message and so the logs; every name kuai knows is shorter
    than 16 characters, a 128-bit key is 22 or more in base64 or hex, and
    a key as Spark's aes_encrypt takes it as a string (UTF-8) 16, 24 or
    32 (with 20, such a 16-character key was shown)."""
    if isinstance(value, str) and len(value) < 16 and value.isprintable():
        return repr(value)
    try:
        size = f" of {len(value)} {'characters' if isinstance(value, str) else 'bytes'}"
    except TypeError:
        size = ""
    return f"a {type(value).__name__}{size} (not shown: it may be a key)"


def cipher_id(name: str, key: Optional[Any]) -> int:
    if not isinstance(name, str):
        raise TypeError("cipher name must be a str, e.g. 'sm4'")
    n = name.strip().lower().replace("_", "-")
    if n in _FAMILIES:
        if key is None:  # kuai.backends("aes"): the family's first member
            return _by_name(_FAMILIES[n].format(bits=128))
        bits = memoryview(key).nbytes * 8
        cid = _by_name(_FAMILIES[n].format(bits=bits))
        if cid == 0:
            raise ValueError(f"Invalid key size ({bits} bits) for {name}")
        return cid
    cid = _by_name(n)
    if cid != 0:
        return cid
    known = sorted(cname for cname, _, _ in CIPHERS.values())
    raise ValueError(f"unknown cipher {shown(name)}; known: {', '.join(known)}, "
                     "aes (by key size), ublock-128 (by key size)")


def xts_cipher_id(name: str, key: Any) -> Optional[int]:
    """For a name ending in "-xts" ("aes-xts", "sm4-xts", "aes-128-xts"...),
    the id of the cipher of each half of key (data key || tweak key); None
    for any other name."""
    if not isinstance(name, str):
        raise TypeError("cipher name must be a str, e.g. 'sm4'")
    n = name.strip().lower().replace("_", "-")
    if not n.endswith("-xts"):
        return None
    base = n[:-4]
    nbytes = memoryview(key).nbytes
    if base.startswith("aes") and nbytes not in (32, 64):
        # IEEE Std 1619 (and cryptography) have AES-128-XTS and AES-256-XTS
        raise ValueError("The XTS specification requires a 256-bit key for AES-128-XTS and "
                         "512-bit key for AES-256-XTS")
    if base not in _FAMILIES:
        cid = cipher_id(base, None)  # ValueError for an unknown name
        if CIPHERS[cid][2] != 16:
            raise ValueError(f"XTS needs a 128-bit-block cipher, not {CIPHERS[cid][0]}")
    try:
        cid = cipher_id(base, bytes(nbytes // 2))
    except ValueError:
        cid = 0
    if cid == 0 or nbytes % 2 or CIPHERS[cid][1] * 2 != nbytes or CIPHERS[cid][2] != 16:
        raise ValueError(f"Invalid key size ({nbytes * 8} bits) for {name}: an XTS key is two keys "
                         "of a 128-bit-block cipher, data key || tweak key")
    return cid
