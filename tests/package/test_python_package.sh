#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# make test-package, the Python half: the package of python/ as PyPI would
# carry it. From a clean copy of the tracked files, the sdist is built by
# the pinned backend (python/build-constraints.txt), a wheel is built from
# that sdist alone by pip (what `pip install kuai-X.tar.gz` does), installed
# into a fresh venv and imported; the sdist and the wheel are checked for
# the licence, their metadata and the version of include/kuai.h.
# Usage: test_python_package.sh WORK_DIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
mkdir -p "$1"
work=$(cd "$1" && pwd)
fail() { echo "test-python-package: FAIL: $*" >&2; exit 1; }
export PIP_CONSTRAINT=$src/python/build-constraints.txt PIP_DISABLE_PIP_VERSION_CHECK=1
export CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-1}

# A clean checkout: the tracked files only (symlinks kept as links).
tree=$work/tree
rm -rf "$tree" "$work/dist"
mkdir -p "$tree" "$work/dist"
git -C "$src" ls-files -z | (cd "$src" && tar --null -T - -cf -) | tar -xf - -C "$tree"

test -x "$work/venv/bin/python" || python3 -m venv "$work/venv"
py=$work/venv/bin/python
"$py" -m pip install -q scikit-build-core packaging pathspec
(cd "$tree/python" && "$py" -c 'import sys; from scikit_build_core.build import build_sdist
print(build_sdist(sys.argv[1]))' "$work/dist") > "$work/sdist.log" 2>&1 || { cat "$work/sdist.log"; fail "no sdist"; }
sdist=$(ls "$work"/dist/kuai-*.tar.gz)
echo "test-python-package: $(basename "$sdist"), $(tar tzf "$sdist" | wc -l) files"
# The licence: an SPDX expression (PEP 639) and the LICENSE and NOTICE
# files, in the sdist and (below) the wheel.
meta_ok() { # $1: the metadata text, $2: what it came from
  grep -qx "License-Expression: Apache-2.0" <<< "$1" || fail "$2: no License-Expression: Apache-2.0"
  for f in LICENSE NOTICE; do
    grep -qx "License-File: $f" <<< "$1" || fail "$2: no License-File: $f"
  done
  ! grep -q "^Classifier: License ::" <<< "$1" || fail "$2: a licence classifier beside the expression"
}
meta_ok "$(tar xzf "$sdist" -O --wildcards '*/PKG-INFO')" "$(basename "$sdist")"
# The version: include/kuai.h's, the one place it is written (docs/abi.md),
# here and in a copy of the tree whose header says 0.1.99 before the build.
hver=$(sed -n 's/^#define KUAI_VERSION_\(MAJOR\|MINOR\|PATCH\) \([0-9]*\)$/\2/p' "$tree/include/kuai.h" | paste -sd.)
pver=$(tar xzf "$sdist" -O "$(basename "$sdist" .tar.gz)/PKG-INFO" | sed -n 's/^Version: //p')
[ "$pver" = "$hver" ] || fail "the sdist is version $pver, include/kuai.h says $hver"
bumped=$work/tree-bumped
rm -rf "$bumped" && cp -a "$tree" "$bumped" && mkdir -p "$bumped/dist"
sed -i 's/^#define KUAI_VERSION_PATCH [0-9]*$/#define KUAI_VERSION_PATCH 99/' "$bumped/include/kuai.h"
(cd "$bumped/python" && "$py" -c 'import sys; from scikit_build_core.build import build_sdist
print(build_sdist(sys.argv[1]))' "$bumped/dist") > "$work/sdist-bumped.log" 2>&1 || { cat "$work/sdist-bumped.log"; fail "no sdist of the bumped tree"; }
[ -f "$bumped/dist/kuai-${hver%.*}.99.tar.gz" ] ||
  fail "with KUAI_VERSION_PATCH 99 in include/kuai.h the sdist is $(cd "$bumped/dist" && ls)"
echo "test-python-package: the package's version is include/kuai.h's ($hver; ${hver%.*}.99 followed it)"
for f in LICENSE NOTICE; do
  tar xzf "$sdist" -O "$(basename "$sdist" .tar.gz)/$f" | cmp -s - "$src/$f" || fail "$(basename "$sdist") lacks $f"
done

# The wheel from the sdist alone, in pip's isolated build environment.
"$py" -m pip wheel -q --no-deps -w "$work/dist" "$sdist" > "$work/wheel.log" 2>&1 ||
  { tail -40 "$work/wheel.log"; fail "pip could not build a wheel from $(basename "$sdist")"; }
wheel=$(ls "$work"/dist/kuai-*.whl)
echo "test-python-package: $(basename "$wheel") built from the sdist"
wmeta=$("$py" -c 'import sys, zipfile; z = zipfile.ZipFile(sys.argv[1])
print(z.read(next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))).decode())' "$wheel")
meta_ok "$wmeta" "$(basename "$wheel")"
for f in LICENSE NOTICE; do
  "$py" -c 'import sys, zipfile; z = zipfile.ZipFile(sys.argv[1])
sys.stdout.buffer.write(z.read(next(n for n in z.namelist() if n.endswith(".dist-info/licenses/" + sys.argv[2]))))' \
    "$wheel" $f | cmp -s - "$src/$f" || fail "$(basename "$wheel") lacks .dist-info/licenses/$f"
done
echo "test-python-package: sdist and wheel: License-Expression: Apache-2.0, LICENSE and NOTICE"
"$py" -m pip install -q --force-reinstall --no-deps "$wheel"
(cd "$work" && "$py" -c 'import kuai, os; c = kuai.Cipher("sm4", bytes(16))
e = c.encryptor(kuai.modes.CTR(bytes(16))); assert len(e.update(b"x" * 33) + e.finalize()) == 33
import importlib.metadata as m; d = m.version("kuai")
assert d == kuai.__version__, "distribution %s, kuai.__version__ (kuai_version()) %s" % (d, kuai.__version__)
print("test-python-package: import kuai", kuai.__version__, "from", os.path.dirname(kuai.__file__))')
echo "test-python-package: ok"
