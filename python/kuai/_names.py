# SPDX-License-Identifier: Apache-2.0
"""Cipher names to the library's ids."""
from __future__ import annotations

from typing import Any, Dict, Optional, Tuple

from . import _kuai

# id -> (name, key size, block size), from the library itself.
CIPHERS: Dict[int, Tuple[str, int, int]] = {c[0]: (c[1], c[2], c[3]) for c in _kuai.ciphers()}
_BY_NAME = {name: cid for cid, (name, _, _) in CIPHERS.items()}
# Families whose member the key length picks.
_FAMILIES = {"aes": "aes-{bits}", "ublock-128": "ublock-128-{bits}", "ublock": "ublock-128-{bits}"}


def cipher_id(name: str, key: Optional[Any]) -> int:
    if not isinstance(name, str):
        raise TypeError("cipher name must be a str, e.g. 'sm4'")
    n = name.strip().lower().replace("_", "-")
    if n in _BY_NAME:
        return _BY_NAME[n]
    if n in _FAMILIES:
        if key is None:  # kuai.backends("aes"): the family's first member
            return _BY_NAME[_FAMILIES[n].format(bits=128)]
        bits = memoryview(key).nbytes * 8
        full = _FAMILIES[n].format(bits=bits)
        if full not in _BY_NAME:
            raise ValueError(f"Invalid key size ({bits} bits) for {name}")
        return _BY_NAME[full]
    raise ValueError(f"unknown cipher {name!r}; known: {', '.join(sorted(_BY_NAME))}, "
                     "aes (by key size), ublock-128 (by key size)")
