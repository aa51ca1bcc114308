#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# make test-package: the Debian packages of make deb as a user gets them.
# Unpacks them (dpkg-deb -x) into a throwaway root, checks what each holds
# and that libkuai.so and libkuai_file.so export exactly their APIs (and
# the static libraries nothing more), compiles the headers under several
# C and C++ standards, then builds the consumers of
# tests/package against that root through pkg-config (kuai, kuai-file; kuai
# also fully static) and
# through find_package(kuai COMPONENTS file) + kuai::kuai, kuai::kuai_file
# (and their _static forms), and runs them, and the same consumers through
# find_package from the build tree itself and through add_subdirectory;
# the packaged tool and provider run once each. Then the same build
# installed under another prefix: its kuai.pc and kuai.cnf must name it.
# Usage: test_package.sh BUILD_DIR   (the directory make deb wrote *.deb to)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
dir=$(cd "$1" && pwd)
root=$dir/pkgroot
rm -rf "$root" "$dir/consumer-pc" "$dir/consumer-cmake"
mkdir -p "$root" "$dir/consumer-pc"
ma=$(gcc -print-multiarch)
libdir=usr/lib/$ma
fail() { echo "test-package: FAIL: $*" >&2; exit 1; }
# The libraries a binary loads, as ldd lists them. Captured whole before any
# grep: with pipefail, `ldd | grep -q` fails at random when grep exits on the
# first match and ldd dies of SIGPIPE writing the next line.
loads() { local out; out=$(ldd "$1") || fail "ldd $1 failed"; grep -q -- "$2" <<< "$out"; }
# openssl enc with OPENSSL_CONF=$1 must run on the kuai provider.
openssl_uses_kuai() {
  local out
  out=$(echo hello | KUAI_PROVIDER_DEBUG=1 OPENSSL_CONF=$1 openssl enc -sm4-ctr \
    -K 000102030405060708090a0b0c0d0e0f -iv 000102030405060708090a0b0c0d0e0f 2>&1 >/dev/null)
  grep -q "kuai-provider: SM4-CTR encrypt" <<< "$out" || fail "openssl with $1 did not use kuai: $out"
}

# Each package: present once, unpacked, holding its files.
declare -A want=(
  [libkuai0]="$libdir/libkuai.so.0 usr/share/doc/libkuai0/copyright"
  [libkuai-dev]="usr/include/kuai.h $libdir/libkuai.a $libdir/libkuai.so $libdir/pkgconfig/kuai.pc
    $libdir/cmake/kuai/kuai-config.cmake $libdir/cmake/kuai/kuai-config-version.cmake
    $libdir/cmake/kuai/kuai-targets.cmake"
  [kuai]="usr/bin/kuai usr/share/man/man1/kuai.1.gz"
  [kuai-openssl-provider]="$libdir/ossl-modules/kuai.so
    usr/share/doc/kuai-openssl-provider/examples/kuai.cnf"
  [libkuai-file0]="$libdir/libkuai_file.so.0 usr/share/doc/libkuai-file0/copyright"
  [libkuai-file-dev]="usr/include/kuai_file.h $libdir/libkuai_file.a $libdir/libkuai_file.so
    $libdir/pkgconfig/kuai-file.pc $libdir/cmake/kuai/kuai-file-targets.cmake"
)
for pkg in "${!want[@]}"; do
  debs=("$dir"/"${pkg}"_*.deb)
  [ ${#debs[@]} = 1 ] && [ -f "${debs[0]}" ] || fail "no single ${pkg}_*.deb in $dir"
  dpkg-deb -x "${debs[0]}" "$root"
  list=$(dpkg-deb -c "${debs[0]}")
  for f in ${want[$pkg]}; do
    grep -q " \./$f\( \|$\)" <<< "$list" || fail "$pkg lacks /$f"
  done
  echo "test-package: $(basename "${debs[0]}"): $(grep -vc '/$' <<< "$list") files," \
    "Depends: $(dpkg-deb -f "${debs[0]}" Depends)"
done
# As Debian ships them (policy 10.1, 12.3): executables and shared objects
# stripped (no symbol table, no debug sections; libkuai.so keeps its
# dynamic symbols), the man page compressed with gzip -9n.
for f in usr/bin/kuai $libdir/libkuai.so.0 $libdir/libkuai_file.so.0 $libdir/ossl-modules/kuai.so; do
  secs=$(readelf -S --wide "$root/$f") || fail "readelf -S /$f failed"
  ! grep -qE ' \.(symtab|debug_[a-z_]+) ' <<< "$secs" ||
    fail "/$f is not stripped: $(grep -oE ' \.(symtab|debug_[a-z_]+) ' <<< "$secs" | tr -d '\n')"
done
[ ! -e "$root/usr/share/man/man1/kuai.1" ] || fail "/usr/share/man/man1/kuai.1 is not compressed"
man=$root/usr/share/man/man1/kuai.1.gz
gzip -t "$man" || fail "$man is not gzip"
# The gzip header (RFC 1952): no FNAME flag and a zero MTIME (gzip -n, so
# the package's bytes do not depend on the build), XFL 2 (gzip -9).
h=$(od -An -tx1 -N9 "$man" | tr -d ' \n')
[ "${h:0:6}" = 1f8b08 ] && (((0x${h:6:2} & 8) == 0)) && [ "${h:8:8}" = 00000000 ] && [ "${h:16:2}" = 02 ] ||
  fail "kuai.1.gz is not gzip -9n output (header $h)"
echo "test-package: the binaries are stripped, the man page gzip -9n"
# Built with Debian's hardening flags (make deb: dpkg-buildflags, hardening
# +all): read-only relocations bound at load (RELRO, BIND_NOW), a stack
# protector, fortified libc calls. The tool parses untrusted files.
for f in usr/bin/kuai $libdir/libkuai.so.0 $libdir/libkuai_file.so.0 $libdir/ossl-modules/kuai.so; do
  dyn=$(readelf -dW "$root/$f") && ph=$(readelf -lW "$root/$f") && syms=$(nm -D "$root/$f") ||
    fail "readelf/nm /$f failed"
  grep -qE 'BIND_NOW|FLAGS_1.* NOW' <<< "$dyn" || fail "/$f: not linked with -z now"
  grep -q GNU_RELRO <<< "$ph" || fail "/$f: no RELRO segment"
  grep -q ' __stack_chk_fail' <<< "$syms" || fail "/$f: no stack protector (__stack_chk_fail)"
  grep -q '_chk@' <<< "$syms" || fail "/$f: no fortified libc call (_FORTIFY_SOURCE)"
done
echo "test-package: the binaries are hardened (RELRO, BIND_NOW, stack protector, _FORTIFY_SOURCE)"
# lintian (Debian's package checker) where it is installed: no errors.
if command -v lintian > /dev/null; then
  # bogus-mail-host(-in-debian-changelog): make deb's placeholder Maintainer
  # (packaging/deb.cmake, KUAI_DEB_MAINTAINER).
  rc=0
  lint=$(lintian --fail-on error --tag-display-limit 0 --suppress-tags bogus-mail-host,bogus-mail-host-in-debian-changelog "$dir"/*.deb 2>&1) ||
    rc=$?
  [ $rc = 0 ] || fail "lintian found errors (exit $rc):"$'\n'"$lint"
  echo "test-package: lintian: no errors, $(grep -c '^W: ' <<< "$lint" || true) warnings"
  grep '^W: ' <<< "$lint" || true
else
  echo "test-package: lintian not installed (apt-get install lintian), not run"
fi
grep -q '^libkuai0 (= ' <<< "$(dpkg-deb -f "$dir"/libkuai-dev_*.deb Depends)" || fail "libkuai-dev must depend on libkuai0 (= version)"
grep -q 'libkuai0 (= ' <<< "$(dpkg-deb -f "$dir"/libkuai-file0_*.deb Depends)" || fail "libkuai-file0 must depend on libkuai0 (= version)"
grep -q 'libkuai-file0 (= .*libkuai-dev (= ' <<< "$(dpkg-deb -f "$dir"/libkuai-file-dev_*.deb Depends)" ||
  fail "libkuai-file-dev must depend on libkuai-file0 and libkuai-dev (= version)"

"$here/check_symbols.sh" "$root/$libdir/libkuai.so" "$root/usr/include/kuai.h"
"$here/check_symbols.sh" "$root/$libdir/libkuai_file.so" "$root/usr/include/kuai_file.h"
# libNAME.a defines the same names as libNAME.so and nothing else global: a
# static consumer's own symbols (aes_ref, sm4_expand_with, ...) never clash
# with the library's internals.
static_api_only() {
  local static_globals
  static_globals=$(nm -g --defined-only "$root/$libdir/$1.a" | awk 'NF == 3 { print $3 }' | sort)
  [ "$static_globals" = "$(nm -D --defined-only "$root/$libdir/$1.so" |
    awk '$2 != "A" { sub(/@.*/, "", $3); print $3 }' | sort)" ] ||
    fail "$1.a defines globals beyond the API: $(grep -v '^kuai_' <<< "$static_globals" | head -5 | tr '\n' ' ')"
  # nor leaves a weak name undefined for a consumer's own symbol to fill
  # (a test hook was one: kuai_test_registry_building)
  local weak
  weak=$(nm -g --undefined-only "$root/$libdir/$1.a" | awk '$1 == "w" { print $2 }')
  [ -z "$weak" ] || fail "$1.a leaves weak names for a consumer to define: $(echo $weak)"
  echo "test-package: $1.a: $(wc -l <<< "$static_globals") global symbols, the API's"
}
static_api_only libkuai
static_api_only libkuai_file

# The packaged headers as consumers include them: alone, first or after
# the C library's, twice; C99, C11 and C17 with -pedantic, C++11 and C++17,
# every warning an error.
hdrs=$dir/consumer-pc/headers
mkdir -p "$hdrs"
for h in kuai.h kuai_file.h; do
  printf '#include <%s>\n#include <%s>\nint main(void) { return KUAI_OK; }\n' "$h" "$h" > "$hdrs/first_$h.c"
  printf '#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n#include <%s>\nint main(void) { return KUAI_OK; }\n' \
    "$h" > "$hdrs/after_$h.c"
  for std in c99 c11 c17; do
    for f in first after; do
      cc -std=$std -pedantic -Wall -Wextra -Werror -Wstrict-prototypes -Wundef -Wshadow -I"$root/usr/include" \
        -c "$hdrs/${f}_$h.c" -o /dev/null || fail "$h ($f) does not compile clean with -std=$std -pedantic"
    done
  done
done
# C++: compiled clean and linked (extern "C": the names unmangled).
printf '%s\n' '#include <kuai_file.h>' '#include <kuai.h>' '#include <cstdio>' \
  'int main() { kuai_file_params p; kuai_file_header_error why;' \
  '  std::printf("%s %d\n", kuai_version(), kuai_file_header_parse(nullptr, 0, &p, &why)); }' > "$hdrs/cxx.cc"
for std in c++11 c++17; do
  c++ -std=$std -pedantic -Wall -Wextra -Werror -I"$root/usr/include" -o "$hdrs/cxx" "$hdrs/cxx.cc" \
    -L"$root/$libdir" -lkuai_file -lkuai || fail "kuai.h, kuai_file.h do not build clean as C++ (-std=$std)"
done
echo "test-package: kuai.h and kuai_file.h: C99/C11/C17 -pedantic and C++11/17 (linked), -Wall -Wextra -Werror"

# pkg-config, with the root as sysroot (it prefixes -I and -L).
export PKG_CONFIG_SYSROOT_DIR=$root PKG_CONFIG_LIBDIR=$root/$libdir/pkgconfig
flags=$(pkg-config --cflags --libs kuai)
echo "test-package: pkg-config --cflags --libs kuai: $flags"
# shellcheck disable=SC2086
cc -O2 -Wall -Werror -o "$dir/consumer-pc/consumer" "$here/consumer.c" $flags
unset PKG_CONFIG_SYSROOT_DIR PKG_CONFIG_LIBDIR
# The root is not where ld.so looks; an installed package would be.
LD_LIBRARY_PATH=$root/$libdir "$dir/consumer-pc/consumer"
LD_LIBRARY_PATH=$root/$libdir loads "$dir/consumer-pc/consumer" "$root/$libdir/libkuai.so.0" ||
  fail "the pkg-config consumer does not use the packaged libkuai.so.0"
# README's fully static link: pkg-config --static, cc -static (libkuai.a's
# Libs.private must cover every library it calls).
export PKG_CONFIG_SYSROOT_DIR=$root PKG_CONFIG_LIBDIR=$root/$libdir/pkgconfig
flags=$(pkg-config --cflags --libs --static kuai)
unset PKG_CONFIG_SYSROOT_DIR PKG_CONFIG_LIBDIR
# shellcheck disable=SC2086
cc -O2 -Wall -Werror -o "$dir/consumer-pc/consumer_full_static" "$here/consumer.c" $flags -static ||
  fail "cc -static with pkg-config --static kuai ($flags) failed"
"$dir/consumer-pc/consumer_full_static" > /dev/null
phdrs=$(readelf -lW "$dir/consumer-pc/consumer_full_static") || fail "readelf -l consumer_full_static failed"
! grep -q INTERP <<< "$phdrs" || fail "the -static pkg-config consumer is not static"
echo "test-package: cc -static with pkg-config --static kuai ($(echo $flags)) ran"
# kuai-file.pc: Requires kuai (its header includes kuai.h), libcrypto only
# for static linking.
export PKG_CONFIG_SYSROOT_DIR=$root PKG_CONFIG_LIBDIR=$root/$libdir/pkgconfig:$(pkg-config --variable pc_path pkg-config)
flags=$(pkg-config --cflags --libs kuai-file)
echo "test-package: pkg-config --cflags --libs kuai-file: $flags"
# shellcheck disable=SC2086
cc -O2 -Wall -Werror -o "$dir/consumer-pc/consumer_file" "$here/consumer_file.c" $flags
unset PKG_CONFIG_SYSROOT_DIR PKG_CONFIG_LIBDIR
LD_LIBRARY_PATH=$root/$libdir "$dir/consumer-pc/consumer_file"
LD_LIBRARY_PATH=$root/$libdir loads "$dir/consumer-pc/consumer_file" "$root/$libdir/libkuai_file.so.0" ||
  fail "the pkg-config kuai_file consumer does not use the packaged libkuai_file.so.0"

# find_package(kuai) from the root (the CMake files are relocatable).
cmake -S "$here" -B "$dir/consumer-cmake" -DCMAKE_PREFIX_PATH="$root/usr" \
  -DCMAKE_C_FLAGS="-Wall -Werror" > "$dir/consumer-cmake.log" || { cat "$dir/consumer-cmake.log"; exit 1; }
grep -- "-- kuai " "$dir/consumer-cmake.log"
cmake --build "$dir/consumer-cmake" > /dev/null
"$dir/consumer-cmake/consumer"
loads "$dir/consumer-cmake/consumer" "$root/$libdir/libkuai.so.0" ||
  fail "the find_package consumer does not use the packaged libkuai.so.0"
"$dir/consumer-cmake/consumer_static"
! loads "$dir/consumer-cmake/consumer_static" libkuai ||
  fail "kuai::kuai_static linked libkuai.so"
"$dir/consumer-cmake/consumer_file"
loads "$dir/consumer-cmake/consumer_file" "$root/$libdir/libkuai_file.so.0" ||
  fail "the find_package kuai::kuai_file consumer does not use the packaged libkuai_file.so.0"
"$dir/consumer-cmake/consumer_file_static"
! loads "$dir/consumer-cmake/consumer_file_static" libkuai ||
  fail "kuai::kuai_file_static linked libkuai.so or libkuai_file.so"

# find_package(kuai) from the build tree itself (CMAKE_PREFIX_PATH naming
# the build directory, which holds a kuai-config.cmake): the targets point
# at the libraries built there.
rm -rf "$dir/consumer-buildtree"
cmake -S "$here" -B "$dir/consumer-buildtree" -DCMAKE_PREFIX_PATH="$dir" \
  -DCMAKE_C_FLAGS="-Wall -Werror" > "$dir/consumer-buildtree.log" 2>&1 ||
  { cat "$dir/consumer-buildtree.log"; fail "find_package(kuai) from the build tree $dir"; }
grep -q -- "-- kuai .* from $dir\$" "$dir/consumer-buildtree.log" ||
  fail "find_package(kuai) with CMAKE_PREFIX_PATH=$dir did not take the build tree's package"
cmake --build "$dir/consumer-buildtree" > /dev/null
for prog in consumer consumer_static consumer_file consumer_file_static; do
  "$dir/consumer-buildtree/$prog" > /dev/null
done
loads "$dir/consumer-buildtree/consumer" "$dir/libkuai.so.0" ||
  fail "the build-tree find_package consumer does not use $dir/libkuai.so.0"
echo "test-package: find_package(kuai COMPONENTS file) from the build tree: four consumers ran"

# The source tree through add_subdirectory (README: CMake), kuai_file
# turned on as README says (KUAI_BUILD_FILE is off there by default) and
# warnings as errors inside kuai: the same four consumers, and none of
# kuai's own compile flags (-W..., -Werror, -fvisibility, -std) on theirs.
# Portable backends only, unoptimised, as the absolute-directories build below.
sub=$dir/consumer-subdir
rm -rf "$sub"
cmake -S "$here" -B "$sub" -DKUAI_SOURCE_DIR="$src" -DKUAI_BUILD_FILE=ON -DKUAI_WERROR=ON \
  -DKUAI_PORTABLE_ONLY=ON -DCMAKE_BUILD_TYPE=Debug > "$sub.log" 2>&1 || { cat "$sub.log"; fail "add_subdirectory(kuai)"; }
cmake --build "$sub" >> "$sub.log" 2>&1 || { cat "$sub.log"; fail "add_subdirectory(kuai): build"; }
for prog in consumer consumer_static consumer_file consumer_file_static; do
  [ -x "$sub/$prog" ] || fail "add_subdirectory(kuai) -DKUAI_BUILD_FILE=ON built no $prog"
  "$sub/$prog" > /dev/null
done
leaked=$(cat "$sub"/CMakeFiles/consumer*.dir/flags.make | grep -E '^C_(FLAGS|DEFINES) =' |
  grep -oE -- ' -(W[a-z-]*|Werror|fvisibility=[a-z]*|std=[a-z0-9]*|m[a-z0-9-]+)' | sort -u | tr '\n' ' ' || true)
[ -z "$leaked" ] || fail "add_subdirectory(kuai) put kuai's flags on the consumer's compile: $leaked"
echo "test-package: add_subdirectory(kuai) with KUAI_BUILD_FILE=ON: four consumers ran, no kuai flag on theirs"

# libkuai.so as a plugin host loads it: dlopen, a parallel call that starts
# the worker pool, dlclose, and the program goes on (tests/package/dlclose.c).
cc -O2 -Wall -Werror -I"$root/usr/include" -o "$dir/consumer-pc/dlclose" "$here/dlclose.c" -ldl
"$dir/consumer-pc/dlclose" "$root/$libdir/libkuai.so.0"

# The tool (the library linked in statically) and the provider through the
# packaged openssl.cnf example, with its module path moved into the root.
"$root/usr/bin/kuai" --version
! loads "$root/usr/bin/kuai" libkuai || fail "the kuai tool needs libkuai.so"
sed "s|^module = /|module = $root/|" "$root/usr/share/doc/kuai-openssl-provider/examples/kuai.cnf" \
  > "$dir/kuai.cnf"
openssl_uses_kuai "$dir/kuai.cnf"
echo "test-package: openssl enc -sm4-ctr with the packaged kuai.cnf ran on kuai.so"
# The module is where this system's OpenSSL looks for modules by name
# (`openssl version -m`), so `-provider kuai` needs no path once installed.
mdir=$(openssl version -m | sed -n 's/^MODULESDIR: "\(.*\)"$/\1/p')
[ "$mdir" = "/$libdir/ossl-modules" ] ||
  fail "kuai-openssl-provider puts kuai.so in /$libdir/ossl-modules; openssl version -m says $mdir"

# The same build installed under another prefix (cmake --install --prefix,
# as README says): kuai.pc and kuai.cnf name that prefix, unedited.
moved=$dir/moved-prefix
mlib=$(sed -n 's/^CMAKE_INSTALL_LIBDIR:PATH=//p' "$dir/CMakeCache.txt") # relative, as GNUInstallDirs set it
rm -rf "$moved" "$dir/consumer-moved"
mkdir -p "$dir/consumer-moved"
for comp in lib dev provider filelib filedev; do
  cmake --install "$dir" --prefix "$moved" --component $comp > /dev/null
done
flags=$(PKG_CONFIG_LIBDIR=$moved/$mlib/pkgconfig pkg-config --cflags --libs kuai)
flags=$(echo $flags) # pkg-config ends with a space
[ "$flags" = "-I$moved/include -L$moved/$mlib -lkuai" ] ||
  fail "kuai.pc installed under $moved gives: $flags"
# shellcheck disable=SC2086
cc -O2 -Wall -Werror -o "$dir/consumer-moved/consumer" "$here/consumer.c" $flags
LD_LIBRARY_PATH=$moved/$mlib loads "$dir/consumer-moved/consumer" "$moved/$mlib/libkuai.so.0" ||
  fail "the consumer of the moved install does not use its libkuai.so.0"
LD_LIBRARY_PATH=$moved/$mlib "$dir/consumer-moved/consumer" > /dev/null
flags=$(PKG_CONFIG_LIBDIR=$moved/$mlib/pkgconfig:$(pkg-config --variable pc_path pkg-config) pkg-config --cflags --libs kuai-file)
flags=$(echo $flags)
[ "$flags" = "-I$moved/include -L$moved/$mlib -lkuai_file -lkuai" ] ||
  fail "kuai-file.pc installed under $moved gives: $flags"
cnf=$moved/share/doc/kuai-openssl-provider/examples/kuai.cnf
grep -qx "module = $moved/$mlib/ossl-modules/kuai.so" "$cnf" ||
  fail "kuai.cnf installed under $moved names: $(grep '^module' "$cnf")"
openssl_uses_kuai "$cnf"
echo "test-package: installed under another prefix, kuai.pc, kuai-file.pc and kuai.cnf name it (consumer and openssl ran)"

# A plain `cmake --install` (every component, as README's `make install`)
# puts the licence and the NOTICE beside the files they cover.
full=$dir/full-install
rm -rf "$full"
cmake --install "$dir" --prefix "$full" > /dev/null
for f in LICENSE NOTICE; do
  cmp -s "$src/$f" "$full/share/doc/kuai/$f" || fail "cmake --install put no $f in share/doc/kuai"
done
echo "test-package: cmake --install puts LICENSE and NOTICE in share/doc/kuai"

# Absolute CMAKE_INSTALL_LIBDIR / _INCLUDEDIR (as Nix, Guix and some distro
# helpers pass them): kuai.pc must name them as they are, not under the
# prefix again. The library alone, portable backends only, unoptimised: the
# build is only there to be installed.
abs=$dir/absdirs
rm -rf "$abs" "$abs-build"
cmake -S "$src" -B "$abs-build" -DCMAKE_BUILD_TYPE=Debug -DKUAI_PORTABLE_ONLY=ON \
  -DKUAI_BUILD_TESTS=OFF -DKUAI_BUILD_CLI=OFF -DKUAI_BUILD_PROVIDER=OFF -DKUAI_BUILD_BENCH=OFF \
  -DKUAI_BUILD_FILE=OFF -DCMAKE_INSTALL_PREFIX="$abs" -DCMAKE_INSTALL_LIBDIR="$abs/lib64" \
  -DCMAKE_INSTALL_INCLUDEDIR="$abs/inc" > "$abs-build.log" || { cat "$abs-build.log"; exit 1; }
cmake --build "$abs-build" --target kuai_shared kuai_static >> "$abs-build.log" ||
  { cat "$abs-build.log"; exit 1; }
cmake --install "$abs-build" --component dev > /dev/null
cmake --install "$abs-build" --component lib > /dev/null
flags=$(PKG_CONFIG_LIBDIR=$abs/lib64/pkgconfig pkg-config --cflags --libs kuai)
flags=$(echo $flags)
[ "$flags" = "-I$abs/inc -L$abs/lib64 -lkuai" ] ||
  fail "kuai.pc with absolute CMAKE_INSTALL_LIBDIR/INCLUDEDIR gives: $flags"
# shellcheck disable=SC2086
cc -Wall -Werror -o "$abs-build/consumer" "$here/consumer.c" $flags
LD_LIBRARY_PATH=$abs/lib64 "$abs-build/consumer" > /dev/null
echo "test-package: absolute CMAKE_INSTALL_LIBDIR/INCLUDEDIR: kuai.pc names them (consumer ran)"
echo "test-package: ok"
