# SPDX-License-Identifier: Apache-2.0
"""PKCS#7 and ANSI X9.23 padding, as cryptography's ``padding.PKCS7`` and
``padding.ANSIX923``: both end the data with n bytes (1..block) whose last
byte is n; PKCS#7 fills the others with n, ANSI X9.23 with zero bytes."""
from __future__ import annotations

import operator
from typing import Any

from ._kuai import AlreadyFinalized
from .modes import _as_bytes


class PKCS7:
    _zero_fill = False  # the bytes before the last one: n (PKCS#7) or 0 (X9.23)

    def __init__(self, block_size: int) -> None:
        # an integer (numpy's too): a float or str is a TypeError here, not
        # from the first update() (cryptography: from padder())
        block_size = operator.index(block_size)
        if not 8 <= block_size <= 2040 or block_size % 8:
            raise ValueError("block_size must be a multiple of 8 in 8..2040 bits")
        self.block_size = block_size

    def padder(self) -> "PaddingContext":
        return PaddingContext(self.block_size // 8, self._zero_fill)

    def unpadder(self) -> "UnpaddingContext":
        return UnpaddingContext(self.block_size // 8, self._zero_fill)


class ANSIX923(PKCS7):
    _zero_fill = True


class PaddingContext:
    def __init__(self, block: int, zero_fill: bool = False) -> None:
        self._block = block
        self._zero_fill = zero_fill
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
        fill = bytes(n - 1) if self._zero_fill else bytes([n]) * (n - 1)
        out, self._buf = self._buf + fill + bytes([n]), None
        return out


class UnpaddingContext:
    def __init__(self, block: int, zero_fill: bool = False) -> None:
        self._block = block
        self._zero_fill = zero_fill
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
        fill = 0 if self._zero_fill else n
        # Every byte checked whatever n is (no early exit on the padding).
        bad = int(n == 0) | int(n > self._block)
        for i in range(2, self._block + 1):
            bad |= int(i <= n) & int(buf[-i] != fill)
        if bad:
            raise ValueError("Invalid padding bytes.")
        return buf[: self._block - n]
