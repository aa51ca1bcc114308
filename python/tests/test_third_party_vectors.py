# SPDX-License-Identifier: Apache-2.0
"""The third-party sets the C suite also reads, from the pinned PyPI package
cryptography-vectors: SM4 ECB/CBC/CTR (draft-ribose-cfrg-sm4-10), SM4-GCM
(RFC 8998) and AES-GCM (NIST CAVP, every 128-bit-tag case, encryption and
decryption including the cases that must fail)."""
import os
import pathlib

import pytest

import kuai
from kuai import aead, modes

cv = pytest.importorskip("cryptography_vectors")
ROOT = pathlib.Path(os.path.dirname(cv.__file__)) / "ciphers"


def records(path):
    """NIST-style files: [Section = value] headers, KEY = value lines, blank
    lines between records."""
    section, cur = {}, {}
    for line in path.read_text().splitlines() + [""]:
        line = line.strip()
        if line.startswith("#"):
            continue
        if line.startswith("[") and line.endswith("]"):
            if "=" in line:
                k, v = line[1:-1].split("=", 1)
                section[k.strip().lower()] = v.strip()
            continue
        if "=" in line:
            k, v = line.split("=", 1)
            cur[k.strip().lower()] = v.strip()
        elif line == "FAIL":
            cur["fail"] = True
        elif not line and cur:
            yield dict(section, **cur)
            cur = {}


def h(x):
    return bytes.fromhex(x or "")


@pytest.mark.parametrize("mode", ["ecb", "cbc", "ctr"])
def test_sm4_modes(mode):
    n = 0
    for r in records(ROOT / "SM4" / f"draft-ribose-cfrg-sm4-10-{mode}.txt"):
        c = kuai.Cipher("sm4", h(r["key"]))
        m = {"ecb": lambda: modes.ECB(), "cbc": lambda: modes.CBC(h(r["iv"])),
             "ctr": lambda: modes.CTR(h(r["iv"]))}[mode]
        assert c.encryptor(m()).update(h(r["plaintext"])) == h(r["ciphertext"])
        assert c.decryptor(m()).update(h(r["ciphertext"])) == h(r["plaintext"])
        n += 1
    assert n >= 2


def test_sm4_gcm_rfc8998():
    n = 0
    for r in records(ROOT / "SM4" / "rfc8998.txt"):
        g = aead.SM4GCM(h(r["key"]))
        ct = h(r["ciphertext"]) + h(r["tag"])
        assert g.encrypt(h(r["iv"]), h(r["plaintext"]), h(r["aad"])) == ct
        assert g.decrypt(h(r["iv"]), ct, h(r["aad"])) == h(r["plaintext"])
        n += 1
    assert n >= 1


@pytest.mark.parametrize("name", ["gcmEncryptExtIV128", "gcmEncryptExtIV192", "gcmEncryptExtIV256",
                                  "gcmDecrypt128", "gcmDecrypt192", "gcmDecrypt256"])
def test_aes_gcm_cavp(name):
    n = fails = 0
    for r in records(ROOT / "AES" / "GCM" / f"{name}.rsp"):
        iv = h(r["iv"])
        if r["taglen"] != "128" or not 8 <= len(iv) <= 128:
            continue  # 16-byte tags only; nonces 8..128 bytes, as cryptography's AESGCM
        g = aead.AESGCM(h(r["key"]))
        ct = h(r["ct"]) + h(r["tag"])
        if r.get("fail"):
            with pytest.raises(kuai.InvalidTag):
                g.decrypt(iv, ct, h(r["aad"]))
            fails += 1
        else:
            assert g.decrypt(iv, ct, h(r["aad"])) == h(r["pt"])
            assert g.encrypt(iv, h(r["pt"]), h(r["aad"])) == ct
        n += 1
    assert n >= 500 and (fails > 0) == name.startswith("gcmDecrypt")
