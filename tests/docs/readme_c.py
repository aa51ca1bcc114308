#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""README.md's C examples, compiled and run as a reader would use them
(make test-docs): the API block, the GCM block and the GCM template block in
one main(), the GCM blocks being fragments that name a message and its AAD,
which only this wrapper declares. Built with -Wall -Wextra -Werror -std=c11 against
build/libkuai.a; the program must exit 0, print the backend line with the
backend `kuai info` chooses for uBlock-128/128 here, and have the GCM
block's key set up and its message back after the round trip, so a renamed call, a changed
signature or a changed result fails here before a reader finds it.

usage: readme_c.py BUILD_DIR"""
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build")
    text = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
    blocks = re.findall(r"```c\n(.*?)```", text, re.S)
    if len(blocks) != 3:
        sys.exit(f"readme_c: README.md has {len(blocks)} C blocks, this test knows 3 "
                 "(the API, GCM and GCM template examples): update tests/docs/readme_c.py")
    code = "".join(blocks)
    body = [line for line in code.splitlines() if not line.startswith("#include")]
    includes = [line for line in code.splitlines() if line.startswith("#include")]
    src = "\n".join(
        ["#include <stdio.h>", "#include <string.h>"] + includes +
        ["", "int main(void)", "{",
         # what the GCM fragment takes as given
         '    uint8_t aad[] = "header", msg[100] = "a message";',
         "    size_t aad_len = sizeof aad, msg_len = sizeof msg;"] +
        ["    " + line for line in body] +
        # the GCM block's key set up, and its message back after the round trips
        ['    if (!kuai_key_backend(&k) || strcmp((const char *)msg, "a message"))',
         "        return 2;",
         '    puts("done");', "    return 0;", "}", ""])
    cc = os.environ.get("CC", "cc")
    with tempfile.TemporaryDirectory() as d:
        c = os.path.join(d, "readme.c")
        exe = os.path.join(d, "readme")
        with open(c, "w") as f:
            f.write(src)
        r = subprocess.run([cc, "-Wall", "-Wextra", "-Werror", "-std=c11",
                            "-I", os.path.join(ROOT, "include"), c,
                            os.path.join(build, "libkuai.a"), "-pthread", "-o", exe],
                           capture_output=True, text=True)
        if r.returncode:
            sys.exit(f"readme_c: README.md's C examples do not compile:\n{r.stderr}\n--- as "
                     f"wrapped:\n{src}")
        r = subprocess.run([exe], capture_output=True, text=True)
        info = subprocess.run([os.path.join(build, "kuai"), "info"], capture_output=True,
                              text=True).stdout
        m = re.match(r"backend: (\S+)\ndone\n\Z", r.stdout)
        if r.returncode or not m:
            sys.exit(f"readme_c: README.md's C examples exit {r.returncode}, printing "
                     f"{r.stdout!r} {r.stderr!r}")
        ub = re.search(r"^ublock-128-128\s+(\S+)", info, re.M)
        if not ub or ub.group(1) != m.group(1):
            sys.exit(f"readme_c: the example ran on {m.group(1)!r}; kuai info chooses "
                     f"{ub.group(1) if ub else None!r} for ublock-128-128")
    print(f"README.md's C examples: compiled with -Werror and ran (backend: {m.group(1)})")


if __name__ == "__main__":
    main()
