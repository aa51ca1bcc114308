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

# The wheel from the sdist alone, in pip's isolated build environment.
"$py" -m pip wheel -q --no-deps -w "$work/dist" "$sdist" > "$work/wheel.log" 2>&1 ||
  { tail -40 "$work/wheel.log"; fail "pip could not build a wheel from $(basename "$sdist")"; }
wheel=$(ls "$work"/dist/kuai-*.whl)
echo "test-python-package: $(basename "$wheel") built from the sdist"
"$py" -m pip install -q --force-reinstall --no-deps "$wheel"
(cd "$work" && "$py" -c 'import kuai, os; c = kuai.Cipher("sm4", bytes(16))
e = c.encryptor(kuai.modes.CTR(bytes(16))); assert len(e.update(b"x" * 33) + e.finalize()) == 33
print("test-python-package: import kuai", kuai.__version__, "from", os.path.dirname(kuai.__file__))')
echo "test-python-package: ok"
