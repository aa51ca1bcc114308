# SPDX-License-Identifier: Apache-2.0
"""The known-answer vectors the C suite reads (tests/vectors/*.txt): the uBlock
designers' set, SM4 (GB/T 32907) and AES (FIPS-197, SP 800-38A), through the
Python API and every backend this CPU has."""
import pytest

import kuai
from kuai import modes

from conftest import VECTORS


def parse(path):
    cases, cur = [], None
    for line in path.read_text().splitlines():
        line = line.strip()
        if line.startswith("["):
            kind, n = line[1:-1].split()
            cur = {"kind": kind, "n": int(n)}
            cases.append(cur)
        elif "=" in line and cur is not None and not line.startswith("#"):
            k, v = (x.strip() for x in line.split("=", 1))
            cur[k] = bytes.fromhex(v)
    return cases


FILES = sorted(VECTORS.glob("*.txt"))
PARAMS = [
    pytest.param(f.stem, i, case, backend, id=f"{f.stem}-{case['kind']}{i}-{backend}")
    for f in FILES
    for i, case in enumerate(parse(f))
    for backend in kuai.backends(f.stem)
]


def test_files_found():
    names = {f.stem for f in FILES}
    assert {"sm4", "aes-128", "ublock-128-128", "ublock-128-256", "ublock-256-256"} <= names
    assert len(PARAMS) > 100


@pytest.mark.parametrize("cipher,i,case,backend", PARAMS)
def test_vector(cipher, i, case, backend):
    c = kuai.Cipher(cipher, case["key"], backend=backend)
    assert c.backend == backend
    bs = c.block_size
    if case["kind"] == "ECB":
        assert c.encryptor(modes.ECB()).update(case["pt"]) == case["ct"]
        assert c.decryptor(modes.ECB()).update(case["ct"]) == case["pt"]
    elif case["kind"] == "CBC":
        iv = bytes(bs)  # the files' CBC IV is all zeros
        assert c.encryptor(modes.CBC(iv)).update(case["pt"]) == case["ct"]
        assert c.decryptor(modes.CBC(iv)).update(case["ct"]) == case["pt"]
    else:  # MC N: E applied N times; CBC over N zero blocks from IV = pt does it
        out = c.encryptor(modes.CBC(case["pt"])).update(bytes(bs * case["n"]))
        assert out[-bs:] == case["ct"]
