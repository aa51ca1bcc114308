# SPDX-License-Identifier: Apache-2.0
"""The ``.kuai`` container of the ``kuai`` command (docs/format.md).

``encrypt(src, dst, key=... | password=..., cipher=...)`` and
``decrypt(src, dst, key=... | password=...)`` write and read the very bytes
``kuai encrypt`` / ``kuai decrypt`` do: the work is the library component
kuai_file (include/kuai_file.h), the one the tool uses, with the GIL
released. It needs libcrypto (OpenSSL 3) for scrypt, HKDF, HMAC and random
bytes; a kuai built where OpenSSL 3's headers were missing has no kuai.file
(importing it raises ImportError saying so), the ciphers are unaffected.

``src``: a path (str, bytes, os.PathLike) or a binary object with
``read(n)``. ``dst``: a path, or a binary object with ``write(b)``.

A path ``dst`` is written like the tool writes ``-o FILE``: into a
temporary file (mode 0600, O_EXCL) in the destination's directory, synced,
then moved into place only when everything has succeeded (decryption:
every chunk verified). On any error, Ctrl-C included, the temporary file
is removed and an existing ``dst`` is left exactly as it was.
``overwrite=False`` (the default) refuses an existing ``dst``
(FileExistsError, checked first and again atomically at the end);
``overwrite=True`` replaces a regular file keeping its mode (and owner and
group where allowed; not its set-id bits, nor its group permissions where
the group cannot be kept), so permissions are never widened; a symbolic link is
written through (its target is replaced, the link stays). A ``dst`` that is
not a regular file (directory, device, FIFO) is refused: pass an open file
object to write to a device or pipe. A new file gets what ``cp`` would give
it: the read and write permissions of ``src``'s file (a path, or a file
object with ``fileno()``, on a regular file, a block or character device
other than a terminal, or a named FIFO; else, as from an anonymous pipe, a
terminal or a socket, 0666) minus the umask, so never wider than its input.

A file object ``dst`` is written as the data come: decryption writes each
1 MiB chunk only once it has verified, but a failure can leave whole
verified chunks written before it (as the tool's standard output).
"""
from __future__ import annotations

import operator
import os
import stat
import tempfile
from typing import IO, Any, Optional, Union

from ._kuai import InvalidTag
from ._kuai import holds_objects as _holds_objects
from ._names import CIPHERS as _CIPHERS
from ._names import cipher_id as _cipher_id
from ._names import is_family as _is_family

try:
    from . import _kuai_file as _kf
except ImportError as _e:  # built without OpenSSL 3, or libcrypto.so.3 missing
    raise ImportError(
        "kuai.file is not available: it needs OpenSSL 3's libcrypto. This kuai was built "
        "without it (install the OpenSSL 3 development files, Debian: libssl-dev, then "
        "reinstall kuai) or libcrypto.so.3 cannot be loaded "
        f"({_e}). The ciphers (kuai.Cipher, kuai.aead) work without it."
    ) from _e

FormatError = _kf.FormatError
HEADER_SIZE: int = _kf.HEADER_SIZE
CHUNK_SIZE: int = _kf.CHUNK_SIZE

__all__ = ["encrypt", "decrypt", "header", "FormatError", "InvalidTag"]

Source = Union[str, bytes, "os.PathLike[Any]", IO[bytes]]


def _is_path(x: Any) -> bool:
    return isinstance(x, (str, bytes, os.PathLike))


def _contiguous(mv: memoryview, what: str) -> memoryview:
    # as every data argument of kuai (and cryptography): a strided buffer is
    # a BufferError, not a TypeError from cast() nor silently copied; an
    # array of Python objects (numpy dtype=object) a TypeError, not its
    # objects' addresses taken as the key's bytes
    if _holds_objects(mv):
        raise TypeError(f"{what} holds Python objects (buffer format 'O'), not bytes")
    if not mv.c_contiguous:
        raise BufferError(f"{what} is not C-contiguous")
    return mv


def _secret(key: Any, password: Any) -> "tuple[bool, Any]":
    if (key is None) == (password is None):
        raise TypeError("give exactly one of key= and password=")
    if key is not None:
        if isinstance(key, str):
            raise TypeError("key must be bytes (the raw key), not str; "
                            "for a hex key: bytes.fromhex(...)")
        return False, _contiguous(memoryview(key), "key").cast("B")
    if isinstance(password, str):
        password = password.encode("utf-8")
    # bytes(x) would take an int as a count of NUL bytes and a list of ints
    # as bytes: only text or a bytes-like object is a password.
    try:
        mv = memoryview(password)
    except TypeError:
        raise TypeError("password must be a str or a bytes-like object, not "
                        f"{type(password).__name__}") from None
    pw = bytes(_contiguous(mv, "password"))
    # The tool reads a password as a C string (terminal or KUAI_PASSWORD):
    # refuse what it could never be given, so every file opens there too.
    if not pw:
        raise ValueError("empty password")
    if b"\0" in pw:
        raise ValueError("a password cannot contain NUL bytes (the kuai command could not "
                         "take it)")
    return True, pw


def _umask() -> int:
    # os.umask() can only be read by setting it (racy with other threads):
    # Linux says it in /proc.
    try:
        with open("/proc/self/status", "rb") as f:
            for line in f:
                if line.startswith(b"Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    old = os.umask(0o077)
    os.umask(old)
    return old


def _new_mode(fd: int) -> int:
    """The permissions a new output takes from its input fd, as the kuai
    command's output_like_input: those of a regular file, a block or
    character device other than a terminal, or a named FIFO (they say who
    may read, or write, what comes through it); 0666 from an anonymous
    pipe, a terminal or a socket. Minus the umask when the file is made."""
    m = os.fstat(fd).st_mode
    own = stat.S_ISREG(m) or stat.S_ISBLK(m)
    if stat.S_ISCHR(m):
        own = not os.isatty(fd)
    elif stat.S_ISFIFO(m):
        try:  # an anonymous pipe is "pipe:[inode]" there
            own = not os.readlink(f"/proc/self/fd/{fd}").startswith("pipe:")
        except OSError:
            own = False
    return stat.S_IMODE(m) & 0o666 if own else 0o666  # as cp: never wider


def _run(src: Source, dst: Source, overwrite: bool, work: Any) -> Any:
    """work(src_io, dst_io): src_io/dst_io an fd or the caller's object."""
    fd_in = -1
    if _is_path(src):
        fd_in = os.open(src, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        src_io: Any = fd_in
    elif hasattr(src, "read"):
        src_io = src
    else:
        raise TypeError("src must be a path or a binary file object with read()")
    try:
        if not _is_path(dst):
            if not hasattr(dst, "write"):
                raise TypeError("dst must be a path or a binary file object with write()")
            return work(src_io, dst)
        new_mode = 0o666
        in_fd = fd_in
        if in_fd < 0:  # a file object: its file's, if it has one (as the tool's stdin)
            try:
                in_fd = src.fileno()
            except (AttributeError, OSError, ValueError):
                in_fd = -1
        if in_fd >= 0:
            new_mode = _new_mode(in_fd)
        return _to_path(dst, overwrite, lambda opener: work(src_io, opener), new_mode)
    finally:
        if fd_in >= 0:
            os.close(fd_in)


def _to_path(dst: Any, overwrite: bool, work: Any, new_mode: int) -> Any:
    target = os.fsdecode(dst)
    try:
        st: Optional[os.stat_result] = os.stat(target)  # through a symlink
    except FileNotFoundError:
        st = None
        if os.path.islink(target):
            raise FileNotFoundError(f"{target}: a dangling symbolic link (refused)") from None
    if st is not None:
        if stat.S_ISDIR(st.st_mode):
            raise IsADirectoryError(f"{target}: a directory; dst names the output file")
        if not stat.S_ISREG(st.st_mode):
            raise ValueError(f"{target}: not a regular file; kuai.file writes and replaces only "
                             "regular files (pass an open file object to write to a device "
                             "or pipe)")
        if not overwrite:
            raise FileExistsError(f"{target}: exists (pass overwrite=True to replace it)")
        target = os.path.realpath(target)  # a symlink stays, its target is replaced
    else:
        # A name that cannot be a new file is refused now, as the tool does,
        # not after the whole input was read and sealed. And the directory
        # is the one the kernel resolves: abspath() would drop "link/.." by
        # its letters, putting the temporary file elsewhere than dst (on
        # another file system the final link and rename then fail).
        name = os.path.basename(target)
        if not target:
            raise FileNotFoundError("dst: an empty file name")
        parent = os.path.dirname(target) or "."
        if name in ("", ".", "..") or not os.path.isdir(parent):
            raise FileNotFoundError(f"{target}: no such directory")
        target = os.path.join(os.path.realpath(parent), name)
    directory = os.path.dirname(target)
    # The temporary file is made at the first write (the C module calls
    # open_tmp): after the key is derived, so that a process killed during
    # scrypt leaves no file behind, as the tool.
    made: list[Any] = []

    def open_tmp() -> int:
        if not made:
            made.extend(tempfile.mkstemp(prefix=".kuai-tmp-", dir=directory))  # 0600, O_EXCL
        return int(made[0])

    try:
        result = work(open_tmp)
        fd = open_tmp()  # nothing written (an empty decryption): still an output
        if st is not None:
            # owner and group where allowed; new content is not set-id (as a
            # write into the file would clear it), and a group that cannot be
            # kept does not pass its permissions on to ours (as the tool)
            mode = stat.S_IMODE(st.st_mode) & ~(stat.S_ISUID | stat.S_ISGID)
            try:
                os.fchown(fd, st.st_uid, st.st_gid)
            except OSError:
                try:
                    os.fchown(fd, -1, st.st_gid)
                except OSError:
                    mode &= ~stat.S_IRWXG
            os.fchmod(fd, mode)
        else:
            os.fchmod(fd, new_mode & ~_umask())
        os.fsync(fd)
        made[0] = -1
        os.close(fd)
        tmp = made[1]
        if st is not None:
            os.replace(tmp, target)
        else:
            _move_new(tmp, target)
        return result
    except BaseException:
        if made:
            if made[0] >= 0:
                os.close(made[0])
            try:
                os.unlink(made[1])
            except FileNotFoundError:
                pass
        raise


def _move_new(tmp: str, target: str) -> None:
    # link() fails if the name has appeared meanwhile: never overwrite a
    # file created after the first check (the tool's renameat2 NOREPLACE).
    try:
        os.link(tmp, target)
    except FileExistsError:
        raise FileExistsError(f"{target}: appeared while writing (not replaced)") from None
    except OSError:
        # no hard links on this file system (vfat...): check, then rename
        if os.path.lexists(target):
            raise FileExistsError(f"{target}: appeared while writing (not replaced)") from None
        os.rename(tmp, target)
        return
    os.unlink(tmp)


def encrypt(src: Source, dst: Source, *, key: Any = None, password: Any = None,
            cipher: str, overwrite: bool = False, scrypt_log2n: Optional[int] = None) -> None:
    """Encrypt ``src`` into the .kuai file ``dst`` (as ``kuai encrypt``).

    ``cipher``: "sm4", "aes-128"/"aes-192"/"aes-256" (or "aes", the key's
    length choosing; not with a password), "ublock-128-128",
    "ublock-128-256", "ublock-256-256".
    ``key``: the raw key (bytes-like, the cipher's key length), or
    ``password`` (str, UTF-8, or bytes): the key is then derived with scrypt
    (N = 2**scrypt_log2n, default 2**17, r = 8, p = 1; 10..20 allowed).
    """
    use_pw, secret = _secret(key, password)
    if not isinstance(cipher, str):
        raise TypeError("cipher must be a name such as 'sm4'")
    if use_pw and _is_family(cipher):
        # no key, so no length to choose by: the first member (AES-128)
        # would be taken silently where AES-256 may have been meant
        raise ValueError(f"cipher {cipher!r} takes its key size from the key; with a password "
                         "name the cipher in full (e.g. 'aes-256', 'ublock-128-256')")
    cid = _cipher_id(cipher, None if use_pw else secret)
    if not use_pw and secret.nbytes != _CIPHERS[cid][1]:
        raise ValueError(f"Invalid key size ({secret.nbytes * 8} bits) for {_CIPHERS[cid][0]}")
    log2n = 0
    if use_pw:
        log2n = _kf.SCRYPT_LOG2N_DEFAULT if scrypt_log2n is None else scrypt_log2n
        # Any integer (numpy's too, as tag_length and bit_length take them),
        # and a TypeError for what is none, as cryptography's Scrypt(n=...).
        try:
            log2n = operator.index(log2n)
        except TypeError:
            raise TypeError("scrypt_log2n must be an integer (10..20), not "
                            f"{type(scrypt_log2n).__name__}") from None
        if not 10 <= log2n <= 20:
            raise ValueError("scrypt_log2n must be 10..20")
    elif scrypt_log2n is not None:
        raise TypeError("scrypt_log2n applies to password= only")

    def work(i: Any, o: Any) -> None:
        _kf.encrypt(cid, use_pw, secret, log2n, i, o)

    _run(src, dst, overwrite, work)


def decrypt(src: Source, dst: Source, *, key: Any = None, password: Any = None,
            overwrite: bool = False) -> str:
    """Decrypt the .kuai file ``src`` into ``dst`` (as ``kuai decrypt``);
    returns the file's cipher name. The header says the cipher and how the
    key was made: a file encrypted with a password needs ``password=``, one
    encrypted with a key needs ``key=`` (else ValueError). A wrong key or
    password, or any modified byte, raises kuai.InvalidTag; not a kuai file,
    a damaged header or a truncated file raise kuai.file.FormatError (a
    ValueError)."""
    use_pw, secret = _secret(key, password)

    def work(i: Any, o: Any) -> str:
        return _CIPHERS[_kf.decrypt(use_pw, secret, i, o)[0]][0]

    return _run(src, dst, overwrite, work)  # type: ignore[no-any-return]


def header(src: Union[bytes, Source]) -> dict:
    """The header's fields of a .kuai file (a path, a binary file object, or
    its first bytes), without a key: cipher, kdf ("key" or "scrypt") and the
    scrypt cost. FormatError when it is not a kuai file, or is cut short
    (fewer than its 64 header bytes, an empty input too: "truncated").

    Unlike encrypt() and decrypt(), a bytes src here is the file's first
    bytes, not a path: give a path held in bytes as os.fsdecode(path)."""
    if isinstance(src, (str, os.PathLike)):  # bytes are the header's bytes here
        with open(src, "rb") as f:
            buf = f.read(HEADER_SIZE)
    elif hasattr(src, "read"):
        # read(n) may give fewer bytes than n and more later (a raw file, a
        # socket, a pipe): as decrypt() does, read on until the header is
        # whole or the input ends, else a good file is "cut short"
        buf = b""
        while len(buf) < HEADER_SIZE:
            part = src.read(HEADER_SIZE - len(buf))
            if not part:
                break
            buf += bytes(part)
    else:
        # any bytes-like object (array, numpy), cut by bytes, not by items
        try:
            mv = memoryview(src)
        except TypeError:
            raise TypeError("src must be a path, a binary file object or bytes, not "
                            f"{type(src).__name__}") from None
        buf = bytes(_contiguous(mv, "src").cast("B")[:HEADER_SIZE])
    try:
        cid, kdf, log2n, r, p = _kf.parse_header(buf)
    except FormatError as e:
        # b"/path/f.kuai" reads as bytes that are not a kuai file; say how
        # bytes are taken here, as the other two calls take them as a path
        if isinstance(src, bytes) and str(e).startswith("not a kuai file"):
            raise FormatError(f"{e} (header() reads bytes as the file's first bytes, "
                              "not a path: give a path in bytes as os.fsdecode(path))") from None
        raise
    out = {"cipher": _CIPHERS[cid][0], "kdf": "scrypt" if kdf else "key"}
    if kdf:
        out.update(scrypt_log2n=log2n, scrypt_r=r, scrypt_p=p)
    return out
