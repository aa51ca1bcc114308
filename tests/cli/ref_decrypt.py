#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""An independent decryptor for the kuai container, written from
docs/format.md alone (no kuai code): HKDF, HMAC, scrypt and GHASH here in
Python; the block cipher E through a command that encrypts raw blocks in
ECB without padding (`openssl enc` for SM4 and AES; for uBlock, which no
other tool has, `kuai encrypt --raw -c NAME-ecb --nopad`, i.e. only the
block function is borrowed from kuai).

usage: ref_decrypt.py (--key HEX | --password PW) [--kuai PATH] FILE > PLAINTEXT
"""
import hashlib
import hmac
import subprocess
import sys

MAGIC = bytes.fromhex("4b5541490d0a1a0a")
CHUNK = 1 << 20
TAG = 16
CIPHERS = {  # id: (name, key length, block size)
    1: ("ublock-128-128", 16, 16), 2: ("ublock-128-256", 32, 16),
    3: ("ublock-256-256", 32, 32), 4: ("sm4", 16, 16),
    5: ("aes-128", 16, 16), 6: ("aes-192", 24, 16), 7: ("aes-256", 32, 16),
}


class Rejected(Exception):
    pass


def ecb_encrypt(cipher, key, data, kuai):
    """E applied to each block of data (a whole number of blocks)."""
    if cipher.startswith("ublock"):
        cmd = [kuai, "encrypt", "--raw", "-c", cipher + "-ecb", "--nopad", "-q", "-k", key.hex()]
    else:
        cmd = ["openssl", "enc", f"-{cipher}-ecb", "-nopad", "-K", key.hex()]
    p = subprocess.run(cmd, input=data, capture_output=True, check=True)
    assert len(p.stdout) == len(data)
    return p.stdout


def hkdf(ikm, salt, info, length):
    prk = hmac.new(salt, ikm, hashlib.sha256).digest()
    out, t, i = b"", b"", 1
    while len(out) < length:
        t = hmac.new(prk, t + info + bytes([i]), hashlib.sha256).digest()
        out += t
        i += 1
    return out[:length]


# GHASH: multiplication in GF(2^128) with GCM's bit order (SP 800-38D, 6.3),
# by 16 tables of 256 multiples of H (one per byte position).
def gf_mult(x, y):
    r = 0xE1 << 120
    z, v = 0, y
    for i in range(128):
        if (x >> (127 - i)) & 1:
            z ^= v
        v = (v >> 1) ^ r if v & 1 else v >> 1
    return z


class Ghash:
    def __init__(self, h):
        self.t = []
        for j in range(16):
            shift = 8 * (15 - j)
            row = [0] * 256
            # linear in the byte: build from the 8 single-bit multiples
            bits = [gf_mult(1 << (shift + b), h) for b in range(8)]
            for v in range(1, 256):
                low = v & -v
                row[v] = row[v ^ low] ^ bits[low.bit_length() - 1]
            self.t.append(row)

    def digest(self, aad, ct):
        t = self.t
        y = 0

        def blocks(b):
            b = b + bytes(-len(b) % 16)
            return [b[i:i + 16] for i in range(0, len(b), 16)]

        lens = (8 * len(aad)).to_bytes(8, "big") + (8 * len(ct)).to_bytes(8, "big")
        for blk in blocks(aad) + blocks(ct) + [lens]:
            x = y ^ int.from_bytes(blk, "big")
            xb = x.to_bytes(16, "big")
            y = 0
            for j in range(16):
                y ^= t[j][xb[j]]
        return y.to_bytes(16, "big")


def xor(a, b):
    return (int.from_bytes(a, "big") ^ int.from_bytes(b, "big")).to_bytes(len(a), "big")


def gcm_open(cipher, key, gh, iv, aad, ct, tag, kuai):
    j0 = iv + b"\x00\x00\x00\x01"
    nblocks = -(-len(ct) // 16)
    ctrs = b"".join(iv + (2 + k).to_bytes(4, "big") for k in range(nblocks))
    ks = ecb_encrypt(cipher, key, j0 + ctrs, kuai)
    ekj0, stream = ks[:16], ks[16:]
    if not hmac.compare_digest(xor(ekj0, gh.digest(aad, ct)), tag):
        return None
    return xor(ct, stream[:len(ct)])


def decrypt(data, key=None, password=None, kuai="build/kuai"):
    if len(data) < 8 or data[:8] != MAGIC:
        raise Rejected("not a kuai file")
    if len(data) < 64:
        raise Rejected("truncated header")
    h = data[:64]
    if h[8] != 1 or h[9] not in CIPHERS or h[10] not in (0, 1) or h[11] != 20 or h[15] != 0:
        raise Rejected("bad header field")
    name, klen, bs = CIPHERS[h[9]]
    if h[10] == 0:
        if any(h[12:32]):
            raise Rejected("bad header field")
        master = key
    else:
        n, r, p = 1 << h[12], h[13], h[14]
        if not (10 <= h[12] <= 20 and 1 <= r <= 32 and 1 <= p <= 16):
            raise Rejected("bad KDF parameters")
        master = hashlib.scrypt(password.encode(), salt=h[16:32], n=n, r=r, p=p, dklen=32,
                                maxmem=256 * r * (n + 2) * p + (1 << 20))
    nonce = h[32:48]
    k_header = hkdf(master, nonce, b"kuai/v1 header", 32)
    if not hmac.compare_digest(hmac.new(k_header, h[:48], hashlib.sha256).digest()[:16], h[48:]):
        raise Rejected("wrong key or password, or damaged header")
    k_cipher = hkdf(master, nonce, b"kuai/v1 cipher", klen)
    k_mac = hkdf(master, nonce, b"kuai/v1 mac", 32) if bs == 32 else None
    gh = Ghash(int.from_bytes(ecb_encrypt(name, k_cipher, bytes(16), kuai), "big")) if bs == 16 else None
    body = data[64:]
    if not body:
        raise Rejected("truncated: no chunk")
    out = []
    pos, i = 0, 0
    while True:
        piece = body[pos:pos + CHUNK + TAG]
        pos += len(piece)
        last = pos == len(body)
        if len(piece) < TAG:
            raise Rejected("truncated chunk")
        ct, tag = piece[:-TAG], piece[-TAG:]
        if bs == 16:
            iv = bytes(3) + i.to_bytes(8, "big") + bytes([last])
            pt = gcm_open(name, k_cipher, gh, iv, h, ct, tag, kuai)
            if pt is None:
                raise Rejected(f"chunk {i} failed authentication")
        else:
            want = hmac.new(k_mac, h + i.to_bytes(8, "big") + bytes([last]) + ct,
                            hashlib.sha256).digest()[:16]
            if not hmac.compare_digest(want, tag):
                raise Rejected(f"chunk {i} failed authentication")
            start = int.from_bytes(i.to_bytes(8, "big") + bytes([last]) + bytes(23), "big")
            nblocks = -(-len(ct) // 32)
            ctrs = b"".join(((start + k) % (1 << 256)).to_bytes(32, "big") for k in range(nblocks))
            pt = xor(ct, ecb_encrypt(name, k_cipher, ctrs, kuai)[:len(ct)])
        out.append(pt)
        i += 1
        if last:
            return b"".join(out)


def main():
    args = sys.argv[1:]
    key = password = None
    kuai = "build/kuai"
    while len(args) > 1:
        if args[0] == "--key":
            key = bytes.fromhex(args[1])
        elif args[0] == "--password":
            password = args[1]
        elif args[0] == "--kuai":
            kuai = args[1]
        else:
            break
        args = args[2:]
    if len(args) != 1 or (key is None) == (password is None):
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 1
    with open(args[0], "rb") as f:
        data = f.read()
    try:
        sys.stdout.buffer.write(decrypt(data, key, password, kuai))
    except Rejected as e:
        print(f"ref_decrypt: {args[0]}: {e}", file=sys.stderr)
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main())
