# SPDX-License-Identifier: Apache-2.0
# The extension kuai._kuai_file (src/_kuai_file.c), used by kuai.file.
from typing import Any, Tuple

from ._kuai import Buffer

class FormatError(ValueError): ...

HEADER_SIZE: int
CHUNK_SIZE: int
SCRYPT_LOG2N_DEFAULT: int

def encrypt(cipher_id: int, use_password: bool, secret: Buffer, scrypt_log2n: int, src: Any,
            dst: Any) -> None: ...
def decrypt(use_password: bool, secret: Buffer, src: Any, dst: Any) -> Tuple[int, int, int, int, int]: ...
def parse_header(buf: Buffer) -> Tuple[int, int, int, int, int]: ...
