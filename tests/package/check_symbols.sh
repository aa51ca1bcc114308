#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The ABI check of docs/abi.md: the dynamic symbols libkuai.so defines are
# exactly the functions include/kuai.h declares with KUAI_API, each under a
# KUAI_ version node, and nothing else (no internal or libc symbol); and
# the size and alignment of every struct a program allocates itself
# (kuai_key, kuai_gcm_ctx, kuai_cmac_ctx; with kuai_file.h beside the
# header, kuai_file_params and kuai_file_keys too) as the table of
# docs/abi.md says.
# Usage: check_symbols.sh path/to/libkuai.so [path/to/kuai.h]
set -euo pipefail
lib=$1
src=$(cd "$(dirname "$0")/../.." && pwd)
hdr=${2:-$src/include/kuai.h}

declared=$(tr '\n' ' ' < "$hdr" | grep -oE 'KUAI_API[^;(]*\(' | grep -oE 'kuai_[a-z0-9_]+ *\($' |
  tr -d ' (' | sort)
# nm -D: "ADDRESS TYPE NAME@@NODE"; the node itself shows as an absolute (A) symbol.
exported=$(nm -D --defined-only "$lib" | awk '$2 != "A" { print $3 }' | sort)
unversioned=$(grep -v '@@KUAI_' <<< "$exported" || true)
names=$(sed 's/@.*//' <<< "$exported")

ok=1
if [ -n "$unversioned" ]; then
  echo "check_symbols: exported without a KUAI_ version node:"; echo "$unversioned"; ok=0
fi
if [ "$declared" != "$names" ]; then
  echo "check_symbols: libkuai.so exports differ from the KUAI_API declarations of $hdr"
  echo "(< declared only, > exported only)"
  diff <(echo "$declared") <(echo "$names") || true
  ok=0
fi
# The struct sizes of the ABI (LP64), from the header as compiled.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Every struct of kuai.h a caller allocates (kuai_cmac_ctx too: it was
# missing from the check and the table), and kuai_file.h's where the
# header directory has it (the source tree and an installed root do).
row_of() { printf '  printf("%s %%zu %%zu\\n", sizeof(%s), alignof(%s));\n' "$1" "$1" "$1"; }
{
  printf '%s\n' '#include <kuai.h>' '#include <stdio.h>' '#include <stdalign.h>'
  [ -f "$(dirname "$hdr")/kuai_file.h" ] && printf '%s\n' '#include <kuai_file.h>'
  printf '%s\n' 'int main(void) {'
  for type in kuai_key kuai_gcm_ctx kuai_cmac_ctx; do row_of $type; done
  if [ -f "$(dirname "$hdr")/kuai_file.h" ]; then
    for type in kuai_file_params kuai_file_keys; do row_of $type; done
  fi
  printf '%s\n' '  return 0;' '}'
} > "$tmp/sz.c"
cc -std=c11 -I"$(dirname "$hdr")" -o "$tmp/sz" "$tmp/sz.c"
while read -r type size align; do
  row=$( (grep -E "^ *\| \`sizeof\($type\)\` \|" "$src/docs/abi.md" || true) | tr -d ' `')
  if [ "$row" != "|sizeof($type)|$size|$align|" ]; then
    echo "check_symbols: $type is $size bytes, alignment $align; docs/abi.md says: ${row:-nothing}"
    ok=0
  fi
done < <("$tmp/sz")

if [ $ok = 1 ]; then
  echo "check_symbols: $(wc -l <<< "$names") symbols, all declared KUAI_API in $(basename "$hdr"), all under $(grep -o '@@KUAI_[0-9.]*' <<< "$exported" | sort -u | tr -d @ | tr '\n' ' ')and sizes as in docs/abi.md"
fi
[ $ok = 1 ]
