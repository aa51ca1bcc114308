# SPDX-License-Identifier: Apache-2.0
"""PKCS#7 padding, as cryptography's ``padding.PKCS7``."""
from __future__ import annotations

import operator
from typing import Any

from ._kuai import AlreadyFinalized
from .modes import _as_bytes


class PKCS7:
    def __init__(self, block_size: int) -> None:
        # an integer (numpy's too): a float or str is a TypeError here, not
        # from the first update() (cryptography: from padder())
        block_size = operator.index(block_size)
        if not 8 <= block_size <= 2040 or block_size % 8:
            raise ValueError("block_size must be a multiple of 8 in 8..2040 bits")
        self.block_size = block_size

    def padder(self) -> "PaddingContext":
        return PaddingContext(self.block_size // 8)

    def unpadder(self) -> "UnpaddingContext":
        return UnpaddingContext(self.block_size // 8)


class PaddingContext:
    def __init__(self, block: int) -> None:
        self._block = block
        self._buf: bytes | None = b""

    def update(self, data: Any) -> bytes:
        if self._buf is None:
            raise AlreadyFinalized("Context was already finalized.")
        self._buf += _as_bytes(data, "data")
        cut = len(self._buf) - len(self._buf) % self._block
        out, self._buf = self._buf[:cut], self._buf[cut:]
        return out

    def finalize(self) -> bytes:
        if self._buf is None:
            raise AlreadyFinalized("Context was already finalized.")
        n = self._block - len(self._buf)
        out, self._buf = self._buf + bytes([n]) * n, None
        return out


class UnpaddingContext:
    def __init__(self, block: int) -> None:
        self._block = block
        self._buf: bytes | None = b""

    def update(self, data: Any) -> bytes:
        if self._buf is None:
            raise AlreadyFinalized("Context was already finalized.")
        self._buf += _as_bytes(data, "data")
        # Keep the last whole block back: it holds the padding.
        cut = max(len(self._buf) - len(self._buf) % self._block - self._block, 0)
        out, self._buf = self._buf[:cut], self._buf[cut:]
        return out

    def finalize(self) -> bytes:
        if self._buf is None:
            raise AlreadyFinalized("Context was already finalized.")
        buf, self._buf = self._buf, None
        if len(buf) != self._block or self._block == 0:
            raise ValueError("Invalid padding bytes.")
        n = buf[-1]
        # Every byte checked whatever n is (no early exit on the padding).
        bad = int(n == 0) | int(n > self._block)
        for i in range(1, self._block + 1):
            bad |= int(i <= n) & int(buf[-i] != n)
        if bad:
            raise ValueError("Invalid padding bytes.")
        return buf[: self._block - n]
