#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Fault injection for the kuai tool (python3 standard library only).

usage: test_faults.py path/to/kuai path/to/libkuai_fault_shim.so

For every scenario (encrypt, decrypt, password/scrypt, --raw, multi-file,
standard output), a first run counts the calls the tool makes to each
function the shim (fault_shim.c) wraps; then one run per call makes exactly
that call fail. Every injected fault must give: an exit status > 0 (no
crash), a message naming the right file (the input, the output -- not its
temporary name --, the key file, standard input/output, or "memory" /
"scrypt" / "thread" for those), no temporary file anywhere, and every
pre-existing output unchanged byte for byte and mode for mode. A fault the
tool may survive (the terminal it asks on, the directory fsync after the
rename) must then give the correct output. Short writes (half the bytes
written) must give the correct output too.

Secrets: every run with a raw key (faulted or not) must end with the key
gone from its memory (the shim searches every resident writable mapping
at exit: KUAI_FAULT_SECRETS), fail() included; and wipe_checks makes the
two cases the CLI's secret registry was added for fail and looks for the
key and the container's derived keys: a fault after the key derivation
(decrypt: the file keys, which fail() must wipe), and SIGTERM while the
pipeline waits for input (the handler wipes the key, and by design not the
file keys the pipeline's threads use: they are the positive control that
the search sees what is there).
"""
import hashlib
import hmac
import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time

KUAI = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build/kuai")
SHIM = os.path.abspath(sys.argv[2] if len(sys.argv) > 2 else "build/libkuai_fault_shim.so")
# random: a key of no pattern cannot be found in memory by chance
KEY = os.urandom(16).hex()
KEY32 = os.urandom(32).hex()  # uBlock-256/256, whose file keys hold a raw MAC key
IV = "f0e0d0c0b0a090807060504030201000"
PW = "fault password"
OLD = b"precious old output"
OLD_MODE = 0o640

failures = []
injected = tolerated = shorts = doubles = 0
per_func = {}


def kuai(args, stdin=b"", env=None, shim=None):
    e = dict(os.environ)
    e.pop("KUAI_BACKEND", None)
    e["KUAI_PASSWORD"] = PW
    if env:
        e.update(env)
    if shim:
        e["LD_PRELOAD"] = SHIM
        e["KUAI_FAULT_SECRETS"] = KEY
        e.update(shim)
    p = subprocess.run([KUAI] + args, input=stdin, capture_output=True, env=e,
                       start_new_session=True)
    return p.returncode, p.stdout, p.stderr.decode(errors="replace")


def decrypt_ok(args_of, want):
    """A check: decrypting what the run wrote gives want."""
    def check(ws, out):
        rc, back, _ = kuai(args_of(ws, out))
        return rc == 0 and back == want
    return check


class Scenario:
    def __init__(self, name, args, outputs, check, stdin=None):
        self.name, self.args, self.outputs, self.check, self.stdin = (
            name, args, outputs, check, stdin)


def build(root):
    src = os.path.join(root, "src")
    os.makedirs(src)
    rnd = open("/dev/urandom", "rb")
    big, small = rnd.read(2 * (1 << 20) + 500007), rnd.read(100003)
    with open(os.path.join(src, "big"), "wb") as f:
        f.write(big)
    with open(os.path.join(src, "small"), "wb") as f:
        f.write(small)
    with open(os.path.join(src, "key.txt"), "w") as f:
        f.write("# the key\n" + KEY + "\n")
    files = {}
    for name, args in [("big.kuai", ["encrypt", "-c", "sm4", "-k", KEY]),
                       ("big.pw.kuai", ["encrypt", "-c", "sm4", "-p", "--scrypt-log2n", "10"]),
                       ("big.ctr", ["encrypt", "--raw", "-c", "sm4-ctr", "-k", KEY, "--iv", IV])]:
        rc, out, err = kuai(args, big)
        assert rc == 0, err
        with open(os.path.join(src, name), "wb") as f:
            f.write(out)
        files[name] = out
    S = lambda n: os.path.join(src, n)  # noqa: E731
    raw_cbc = lambda ws, p: ["decrypt", "--raw", "-c", "sm4-cbc", "-k", KEY, "--iv", IV, p]  # noqa
    dec_k = lambda ws, p: ["decrypt", "-k", KEY, p]  # noqa: E731
    read = lambda p: open(p, "rb").read()  # noqa: E731
    same = lambda want: (lambda ws, p: read(p) == want)  # noqa: E731
    return [
        Scenario("encrypt -f over a file", ["encrypt", "-c", "sm4", "-k", KEY, "-f", "-o", "{out}",
                                            S("big")], ["out"], decrypt_ok(dec_k, big)),
        Scenario("encrypt to a new file", ["encrypt", "-c", "sm4", "-k", KEY, "-o", "{out}",
                                           S("big")], [], decrypt_ok(dec_k, big)),
        Scenario("encrypt --key-file", ["encrypt", "-c", "sm4", "--key-file", S("key.txt"), "-f",
                                        "-o", "{out}", S("small")], ["out"],
                 decrypt_ok(dec_k, small)),
        Scenario("decrypt -f over a file", ["decrypt", "-k", KEY, "-f", "-o", "{out}",
                                            S("big.kuai")], ["out"], same(big)),
        Scenario("encrypt --password (scrypt)", ["encrypt", "-c", "sm4", "-p", "--scrypt-log2n",
                                                 "10", "-f", "-o", "{out}", S("small")], ["out"],
                 decrypt_ok(lambda ws, p: ["decrypt", "-p", p], small)),
        Scenario("decrypt --password (scrypt)", ["decrypt", "-p", "-f", "-o", "{out}",
                                                 S("big.pw.kuai")], ["out"], same(big)),
        Scenario("--raw CBC encrypt -f", ["encrypt", "--raw", "-c", "sm4-cbc", "-k", KEY, "--iv",
                                          IV, "-f", "-o", "{out}", S("big")], ["out"],
                 decrypt_ok(raw_cbc, big)),
        Scenario("--raw CTR decrypt -f", ["decrypt", "--raw", "-c", "sm4-ctr", "-k", KEY, "--iv",
                                          IV, "-f", "-o", "{out}", S("big.ctr")], ["out"],
                 same(big)),
        Scenario("multi-file encrypt -f", ["encrypt", "-c", "sm4", "-k", KEY, "-f", "-o", "{dir}",
                                           S("big"), S("small")], ["d/big.kuai", "d/small.kuai"],
                 lambda ws, p: all(decrypt_ok(dec_k, w)(ws, os.path.join(ws, "d", n))
                                   for n, w in (("big.kuai", big), ("small.kuai", small)))),
        Scenario("multi-file --raw CBC (lockstep) -f",
                 ["encrypt", "--raw", "-c", "sm4-cbc", "-k", KEY, "--iv", IV, "-f", "-o", "{dir}",
                  S("big"), S("small")], ["d/big.enc", "d/small.enc"],
                 lambda ws, p: all(decrypt_ok(raw_cbc, w)(ws, os.path.join(ws, "d", n))
                                   for n, w in (("big.enc", big), ("small.enc", small)))),
        Scenario("encrypt to standard output", ["encrypt", "-c", "sm4", "-k", KEY, S("big")], [],
                 None),
        Scenario("decrypt standard input to standard output", ["decrypt", "-k", KEY], [],
                 None, stdin=files["big.kuai"]),
    ], big, {"inputs": [S("big"), S("small"), S("big.kuai"), S("big.pw.kuai"), S("big.ctr")],
             "key": S("key.txt")}


def parse_log(path):
    counts, inj = {}, None
    if os.path.exists(path):
        for line in open(path):
            parts = line.rstrip("\n").split(" ", 3)
            if parts[0] == "count":
                counts[parts[1]] = int(parts[2])
            elif parts[0] == "inject":
                inj = (parts[1], parts[3] if len(parts) > 3 else "")
    return counts, inj


def secrets_log(path):
    """What the shim's search logged: the moments it searched ("exit",
    "raise"), and (index, moment, mapping) for each secret it found."""
    scanned, found = [], []
    if os.path.exists(path):
        for line in open(path):
            parts = line.split()
            if parts[0] == "scanned":
                scanned.append(parts[1])
            elif parts[0] == "secret-found":
                found.append((int(parts[1]), parts[2], parts[3]))
    return scanned, found


def key_left(label, log):
    """A run ends with its raw key wiped: searched for at exit."""
    scanned, found = secrets_log(log)
    if found:
        failures.append(f"{label}: the key is still in memory when the process ends: {found}")
    elif "exit" not in scanned and "raise" not in scanned:
        failures.append(f"{label}: the shim did not search the memory at the end")


def temporaries(root):
    return [os.path.join(dp, f) for dp, _, fs in os.walk(root) for f in fs if ".kuai-tmp-" in f]


def expected_names(func, what, ws, outs, named):
    """What the message must name for a fault in `what` (None: a call the
    tool may survive, so the run must then succeed): closing an input, the
    terminal kuai would ask on, the directory synced after the rename, a
    thread the library's parallel calls can do without."""
    if func == "close" and what.partition(" ")[2] in named["inputs"]:
        return None
    if what == "thread":
        return None
    if what in ("memory", "scrypt"):
        return [what]
    if what == "RAND_bytes":
        return ["RAND_bytes"]
    fd = None
    if what.startswith("fd="):
        fd, _, what = what.partition(" ")
        fd = int(fd[3:])
    if fd == 0 or what.startswith("pipe:") and fd == 0:
        return ["standard input"]
    if fd == 1:
        return ["standard output"]
    if ".kuai-tmp-" in what:
        d = os.path.dirname(what)
        return [o for o in outs if os.path.dirname(o) == d] or [None]
    if what in outs or what in named["inputs"] or what == named["key"]:
        return [what]
    return None


def run_scenario(sc, root, make_ws):
    global injected, tolerated, shorts
    ws, args, outs = make_ws(sc)
    log = os.path.join(root, "log")
    if os.path.exists(log):
        os.unlink(log)
    stdin = sc.stdin or b""
    rc, out, err = kuai(args, stdin, shim={"KUAI_FAULT_LOG": log})
    counts, _ = parse_log(log)
    key_left(f"{sc.name}: no fault", log)
    if rc != 0 or (sc.check and not sc.check(ws, outs[0] if outs else None)):
        failures.append(f"{sc.name}: the run without a fault failed: rc={rc} {err}")
        return
    good_stdout = out
    # Second faults: a failed write whose temporary file then cannot be
    # removed either: the message must name the file left behind.
    global doubles
    for i in range(1, counts.get("write", 0) + 1):
        ws, args, outs = make_ws(sc)
        if os.path.exists(log):
            os.unlink(log)
        rc, out, err = kuai(args, stdin, shim={"KUAI_FAULT_LOG": log, "KUAI_FAULT": f"write:{i}",
                                               "KUAI_FAULT_ALSO": "unlink"})
        _, inj = parse_log(log)
        kept = [ln.split(" ", 1)[1].rstrip("\n") for ln in open(log)
                if ln.startswith("unlink-failed ")] if os.path.exists(log) else []
        left = temporaries(root)
        label = f"{sc.name}: write #{i} and unlink"
        if not inj:
            continue
        key_left(label, log)
        doubles += 1
        if rc <= 0:
            failures.append(f"{label}: rc={rc} {err}")
        if sorted(left) != sorted(kept) or not all(t in err for t in left):
            failures.append(f"{label}: temporary files {left} (unlink refused for {kept}) not "
                            f"all named: {err!r}")
        for t in left:
            os.unlink(t)
    for func, n in sorted(counts.items()):
        modes = [""] + ([":short"] if func == "write" else [])
        for mode in modes:
            for i in range(1, n + 1):
                ws, args, outs = make_ws(sc)
                if os.path.exists(log):
                    os.unlink(log)
                rc, out, err = kuai(args, stdin, shim={"KUAI_FAULT_LOG": log,
                                                       "KUAI_FAULT": f"{func}:{i}{mode}"})
                _, inj = parse_log(log)
                label = f"{sc.name}: {func} #{i}{mode}"
                if not inj:
                    continue  # fewer calls this time (threads): nothing injected
                key_left(label, log)
                left = temporaries(root)
                if left:
                    failures.append(f"{label}: temporary files left: {left}")
                    for t in left:
                        os.unlink(t)
                if mode == ":short":
                    shorts += 1
                    ok = rc == 0 and (sc.check(ws, outs[0] if outs else None) if sc.check
                                      else out == good_stdout or sc.stdin is None)
                    if not ok:
                        failures.append(f"{label}: a short write was not completed: rc={rc} {err}")
                    continue
                injected += 1
                per_func[func] = per_func.get(func, 0) + 1
                names = expected_names(func, inj[1], ws, outs, NAMED)
                if rc == 0:
                    # survived: only where the call was not needed, and the
                    # output must then be right
                    ok = names is None and (sc.check(ws, outs[0] if outs else None)
                                            if sc.check else sc.stdin is None or out == good_stdout)
                    if ok:
                        tolerated += 1
                    else:
                        failures.append(f"{label} ({inj[1]}): exit 0 after a failed call")
                    continue
                if rc < 0:
                    failures.append(f"{label} ({inj[1]}): killed by signal {-rc}: {err}")
                    continue
                if names is None:
                    names = []
                if names and not any(n and n in err for n in names):
                    failures.append(f"{label} ({inj[1]}): the message does not name {names}: "
                                    f"{err!r}")
                if not err.startswith("kuai ") or err.count("\n") > 2:
                    failures.append(f"{label}: not one message: {err!r}")
                # The outputs of several inputs are all written and synced
                # before the first rename; a failing rename of the k-th
                # leaves the k-1 before it in place (docs/cli.md).
                renamed = i - 1 if func in ("rename", "renameat", "renameat2", "link", "linkat") else 0
                for o in PREEXISTING(ws, sc)[renamed:]:
                    s = os.stat(o)
                    if open(o, "rb").read() != OLD or stat.S_IMODE(s.st_mode) != OLD_MODE:
                        failures.append(f"{label}: the existing {o} was changed")
                if not sc.outputs:
                    for o in outs:
                        if o and os.path.exists(o):
                            failures.append(f"{label}: {o} exists after a failure")


def mac_key(key_hex, kuai_file):
    """K_mac of a uBlock-256/256 file with a raw key (docs/format.md): kept
    as is in the tool's file keys (kuai_file_keys)."""
    prk = hmac.new(kuai_file[32:48], bytes.fromhex(key_hex), hashlib.sha256).digest()
    return hmac.new(prk, b"kuai/v1 mac\x01", hashlib.sha256).digest()


def wipe_checks(root):
    """The two exits the secret registry (cli/util.c) was added for: a
    fail() after the file keys are derived, and a signal. Each must wipe
    the raw key; the fail() also the file keys."""
    ws = os.path.join(root, "wipe")
    os.makedirs(ws)
    rc, ct, err = kuai(["encrypt", "-c", "ublock-256-256", "-k", KEY32], os.urandom(300000))
    assert rc == 0, err
    src, out, log = os.path.join(ws, "in.kuai"), os.path.join(ws, "out"), os.path.join(root, "wl")
    with open(src, "wb") as f:
        f.write(ct)
    what = ["the raw key", "the file keys (their MAC key)"]
    shim = {"KUAI_FAULT_LOG": log, "KUAI_FAULT_SECRETS": f"{KEY32},{mac_key(KEY32, ct).hex()}"}

    # The temporary file cannot be made (a directory made read-only after
    # output_check, say): fail() with the file keys derived.
    label = "wipe: decrypt, output_create fails after the key derivation"
    rc, _, err = kuai(["decrypt", "-k", KEY32, "-o", out, src],
                      shim=dict(shim, KUAI_FAULT="openat:1"))
    scanned, found = secrets_log(log)
    if rc != 2 or "cannot create a temporary file" not in err:
        failures.append(f"{label}: rc={rc} {err!r}")
    if os.path.exists(out) or temporaries(root):
        failures.append(f"{label}: an output or temporary file is left")
    if "exit" not in scanned:
        failures.append(f"{label}: the shim did not search the memory at exit")
    for k, when, where in found:
        failures.append(f"{label}: {what[k]} still in memory at {when} ({where})")

    # SIGTERM while the pipeline waits for the rest of the input: the
    # handler wipes the raw key before raise() ends the process. Not the
    # file keys, which the pipeline's threads use (cli.h says why): their
    # MAC key must still be found there, or the search is blind.
    label = "wipe: decrypt, SIGTERM while reading"
    os.unlink(log)
    e = dict(os.environ, LD_PRELOAD=SHIM, **shim)
    e.pop("KUAI_BACKEND", None)
    p = subprocess.Popen([KUAI, "decrypt", "-k", KEY32, "-o", out], stdin=subprocess.PIPE,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=e,
                         start_new_session=True)
    p.stdin.write(ct[:64 + 4096])
    p.stdin.flush()
    deadline = time.time() + 30
    while not temporaries(ws) and p.poll() is None and time.time() < deadline:
        time.sleep(0.01)
    started = bool(temporaries(ws))
    p.send_signal(signal.SIGTERM)
    try:
        rc = p.wait(timeout=30)
    finally:
        p.stdin.close()
        p.stderr.close()
    scanned, found = secrets_log(log)
    if not started or rc != -signal.SIGTERM:
        failures.append(f"{label}: temporary file made: {started}; rc={rc}")
    if os.path.exists(out) or temporaries(root):
        failures.append(f"{label}: an output or temporary file is left")
    if "raise" not in scanned:
        failures.append(f"{label}: the shim did not search the memory at raise()")
    if 0 in [k for k, _, _ in found]:
        failures.append(f"{label}: {what[0]} still in memory at raise(): {found}")
    if 1 not in [k for k, _, _ in found]:
        failures.append(f"{label}: {what[1]} not found at raise(): the search cannot be trusted")
    print("  secret wipe on fail() and on SIGTERM: 2 runs")


def swap_checks(root):
    """An input replaced by the output between the checks on its name and
    its open (the shim's KUAI_FAULT_SWAP links the output over the input's
    name just before kuai opens it): the checks on the opened descriptor
    (cli/main.c, input_not_output) must refuse it, and --force must leave
    the output as it was. One run with one input and one with two (the
    multi-stream --raw CBC path opens its inputs in a loop of its own)."""
    ws = os.path.join(root, "swap")
    os.makedirs(ws)
    cases = [("one input", ["encrypt", "-c", "sm4", "-k", KEY], ["a"], None),
             ("--raw CBC, two inputs", ["encrypt", "--raw", "-c", "sm4-cbc", "--iv", IV, "-k", KEY],
              ["a", "b"], "b.enc")]
    for label, args, names, made in cases:
        label = f"swap: {label}"
        ins = [os.path.join(ws, n) for n in names]
        for p in ins:
            with open(p, "wb") as f:
                f.write(os.urandom(4096))
        out = os.path.join(ws, "out") if len(ins) == 1 else os.path.join(ws, "d")
        victim = os.path.join(out, made) if made else out
        os.makedirs(out if len(ins) > 1 else ws, exist_ok=True)
        with open(victim, "wb") as f:
            f.write(OLD)
        log = os.path.join(ws, "log")
        if os.path.exists(log):
            os.unlink(log)
        rc, _, err = kuai(args + ["--force", "-o", out] + ins,
                          shim={"KUAI_FAULT_SWAP": f"{ins[-1]}={victim}", "KUAI_FAULT_LOG": log})
        swapped = os.path.exists(log) and f"swapped {ins[-1]}" in open(log).read()
        if not swapped:
            failures.append(f"{label}: the shim did not swap the input: the check is blind")
        if rc != 1 or "are the same file" not in err:
            failures.append(f"{label}: rc={rc} {err!r}")
        if open(victim, "rb").read() != OLD:
            failures.append(f"{label}: the output the input became was overwritten")
        if temporaries(ws):
            failures.append(f"{label}: a temporary file is left")
        shutil.rmtree(ws)
        os.makedirs(ws)
    print(f"  input swapped for the output before its open: {len(cases)} runs")
    # A FIFO output is written in place (no temporary file, no --force):
    # one that is a regular file by the time it is opened (KUAI_FAULT_SWAP_OUT
    # links another file over its name) must not be written into.
    label = "swap: FIFO output become a regular file"
    src, fifo, victim = (os.path.join(ws, n) for n in ("a", "fifo", "victim"))
    with open(src, "wb") as f:
        f.write(os.urandom(4096))
    os.mkfifo(fifo)
    with open(victim, "wb") as f:
        f.write(OLD * 1000)
    log = os.path.join(ws, "log")
    rc, _, err = kuai(["encrypt", "-c", "sm4", "-k", KEY, "-o", fifo, src],
                      shim={"KUAI_FAULT_SWAP_OUT": f"{fifo}={victim}", "KUAI_FAULT_LOG": log})
    if not (os.path.exists(log) and f"swapped {fifo}" in open(log).read()):
        failures.append(f"{label}: the shim did not swap the output: the check is blind")
    if rc != 2 or "changed while it was being opened" not in err:
        failures.append(f"{label}: rc={rc} {err!r}")
    if open(victim, "rb").read() != OLD * 1000:
        failures.append(f"{label}: the regular file was written into")
    print("  FIFO output swapped for a regular file before its open: 1 run")
    # kuai speed --json: the same for its report (checked before the run,
    # written after it; fopen "w" truncated the regular file found there),
    # through the same output helpers now: exit 2, the same message.
    label = "swap: speed --json FIFO become a regular file"
    os.unlink(fifo)
    os.mkfifo(fifo)
    e = dict(os.environ, LD_PRELOAD=SHIM, KUAI_FAULT_SWAP_OUT=f"{fifo}={victim}",
             KUAI_FAULT_LOG=log)
    e.pop("KUAI_BACKEND", None)
    open(log, "w").close()
    try:
        p = subprocess.run([KUAI, "speed", "--quick", "--cipher", "sm4", "--backend", "ref",
                            "--mode", "ecb", "--no-sweep", "--reps", "1", "--json", fifo],
                           capture_output=True, env=e, start_new_session=True, timeout=20)
        rc, err = p.returncode, p.stderr.decode(errors="replace")
    except subprocess.TimeoutExpired:
        rc, err = None, "timed out (blocked opening the FIFO: no open of the kuai program's own)"
    if f"swapped {fifo}" not in open(log).read():
        failures.append(f"{label}: the shim did not swap the output: {err!r}")
    if rc != 2 or "changed while it was being opened" not in err:
        failures.append(f"{label}: rc={rc} {err!r}")
    if open(victim, "rb").read() != OLD * 1000:
        failures.append(f"{label}: the regular file was written into")
    print("  speed --json FIFO swapped for a regular file before its open: 1 run")


def PREEXISTING(ws, sc):
    return [os.path.join(ws, o) for o in sc.outputs]


NAMED = {}


def main():
    if not os.path.exists(SHIM):
        print(f"test_faults: no shim at {SHIM}")
        return 2
    t0 = time.time()
    root = tempfile.mkdtemp(prefix="kuai-faults-")
    try:
        scenarios, _, named = build(root)
        NAMED.update(named)
        counter = [0]

        def make_ws(sc):
            counter[0] += 1
            ws = os.path.join(root, "ws")
            if os.path.exists(ws):
                shutil.rmtree(ws)
            os.makedirs(os.path.join(ws, "d"))
            for o in sc.outputs:
                p = os.path.join(ws, o)
                with open(p, "wb") as f:
                    f.write(OLD)
                os.chmod(p, OLD_MODE)
            out, d = os.path.join(ws, "out"), os.path.join(ws, "d")
            args = [a.replace("{out}", out).replace("{dir}", d) for a in sc.args]
            if "{dir}" in " ".join(sc.args):
                outs = [os.path.join(ws, o) for o in sc.outputs]
            elif "{out}" in " ".join(sc.args):
                outs = [out]
            else:
                outs = []
            return ws, args, outs

        for sc in scenarios:
            t1 = time.time()
            before = injected + shorts
            run_scenario(sc, root, make_ws)
            print(f"  {sc.name}: {injected + shorts - before} faults, {time.time() - t1:.1f} s")
        wipe_checks(root)
        swap_checks(root)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    for f in failures:
        print("FAIL", f)
    funcs = ", ".join(f"{k} {v}" for k, v in sorted(per_func.items()))
    print(f"cli fault injection: {injected} failed calls injected ({funcs}), {tolerated} of them "
          f"survived with correct output; {shorts} short writes; {doubles} failed writes whose "
          f"temporary file could not be removed either; {len(failures)} failures; "
          f"{time.time() - t0:.0f} s")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
