#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# make deps: the Debian 12 packages that make bench and make test need.
# Installs the missing ones when run as root; otherwise prints the exact
# command to run and fails. Quick and silent when everything is there (no
# apt-get update then).
set -euo pipefail

# build-essential cmake: the build; libssl-dev openssl libgcrypt20-dev: the
# peers of the tests, benchmark, tool and provider; python3-venv: the
# pinned PyPI vectors, zig and matplotlib; valgrind: make test-ct; clang-14
# libclang-rt-14-dev: make fuzz; pkg-config dpkg-dev file: make deb and
# make test-package (dpkg-shlibdeps; CPack inspects binaries with file);
# xxd: the README's tour; python3-dev: the Python package's extension
# (make test-python); clang-format-14: make format-check (pinned: another
# release formats differently); zsh: make test-cli runs the zsh completion;
# lintian: make test-package checks the Debian packages with it.
need=(build-essential cmake pkg-config libssl-dev openssl libgcrypt20-dev python3-venv
  valgrind clang-14 libclang-rt-14-dev dpkg-dev file xxd python3-dev clang-format-14 zsh lintian)
# make test-cross runs the ARM64 and LoongArch64 builds under QEMU user
# mode: bookworm's own QEMU 7.2 cannot run LSX, bookworm-backports has
# QEMU 10.
qemu=qemu-user-static
qemu_min=1:8

installed() {
  [ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null)" = "install ok installed" ]
}

missing=()
for p in "${need[@]}"; do
  installed "$p" || missing+=("$p")
done
qemu_ok=1
if ! installed $qemu ||
  ! dpkg --compare-versions "$(dpkg-query -W -f='${Version}' $qemu)" ge $qemu_min; then
  qemu_ok=0
fi
[ ${#missing[@]} -eq 0 ] && [ $qemu_ok = 1 ] && exit 0

has_backports() {
  grep -rqs '^[^#]*bookworm-backports' /etc/apt/sources.list /etc/apt/sources.list.d/
}
add_backports='echo "deb http://deb.debian.org/debian bookworm-backports main" > /etc/apt/sources.list.d/bookworm-backports.list'

if [ "$(id -u)" != 0 ]; then
  echo "make deps: missing Debian packages; as root, run:" >&2
  [ ${#missing[@]} -gt 0 ] && echo "  apt-get update && apt-get install -y ${missing[*]}" >&2
  if [ $qemu_ok = 0 ]; then
    has_backports || echo "  $add_backports" >&2
    echo "  apt-get update && apt-get install -y -t bookworm-backports $qemu" >&2
  fi
  echo "(or run make deps as root, which does exactly this)" >&2
  exit 1
fi

export DEBIAN_FRONTEND=noninteractive
if [ $qemu_ok = 0 ]; then
  has_backports || eval "$add_backports"
fi
apt-get update -qq
if [ ${#missing[@]} -gt 0 ]; then apt-get install -y -qq "${missing[@]}"; fi
if [ $qemu_ok = 0 ]; then apt-get install -y -qq -t bookworm-backports $qemu; fi
