# SPDX-License-Identifier: Apache-2.0
"""CMAC (NIST SP 800-38B, RFC 4493) as cryptography's
``cryptography.hazmat.primitives.cmac``: ::

    import kuai, os
    from kuai.cmac import CMAC
    c = CMAC(kuai.Cipher("aes", os.urandom(16)))
    c.update(b"message")
    tag = c.finalize()          # 16 bytes

``CMAC(algorithm)``: ``algorithm`` is a :class:`kuai.Cipher` (the key) of a
128-bit-block cipher (SM4, AES, uBlock-128/*). ``update(data)``,
``finalize() -> bytes``, ``verify(signature)`` (raises
:class:`kuai.InvalidSignature`; a shorter signature does not match),
``copy()``; after finalize() or verify() every call raises
:class:`kuai.AlreadyFinalized`. The context (kuai._kuai's C type) holds a
reference to the key and the subkeys, wiped when finalized or freed; it
cannot be pickled."""
from __future__ import annotations

from ._kuai import CMAC

__all__ = ["CMAC"]
