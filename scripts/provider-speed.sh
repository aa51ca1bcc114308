#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `openssl speed -evp` through OpenSSL's default provider and through kuai,
# one cipher after the other in the same run, 16 KiB blocks.
#   scripts/provider-speed.sh [DIR_WITH_kuai.so] [SECONDS] [CIPHER[:dec] ...]
# A :dec suffix measures decryption (openssl speed -decrypt).
set -u
moddir=$(cd "${1:-build}" && pwd)
secs=${2:-3}
shift $(($# > 2 ? 2 : $#))
ciphers=("$@")
[ ${#ciphers[@]} = 0 ] && ciphers=(sm4-ecb sm4-cbc sm4-cbc:dec sm4-ctr sm4-gcm aes-128-ctr aes-128-gcm
    aes-256-gcm ublock-128-128-ecb ublock-128-128-cbc:dec ublock-128-128-ctr ublock-128-128-gcm)
kuai=(-provider-path "$moddir" -provider kuai -provider default -propquery provider=kuai)
rate() { # $1 = "default" or "kuai", $2 = cipher, $3 = -decrypt or empty
    local p=()
    [ "$1" = kuai ] && p=("${kuai[@]}")
    openssl speed "${p[@]}" $3 -evp "$2" -bytes 16384 -seconds "$secs" 2>/dev/null |
        awk 'END { v = $NF; sub(/k$/, "", v); if (v + 0 > 0) printf "%.1f", v / 1000; else print "-" }'
}
printf '%-24s %12s %12s %8s\n' "cipher (16 KiB)" "default MB/s" "kuai MB/s" "ratio"
for c in "${ciphers[@]}"; do
    name=${c%%:*}
    dec=
    [ "$c" != "$name" ] && dec=-decrypt
    d=$(rate default "$name" "$dec")
    k=$(rate kuai "$name" "$dec")
    ratio=$(awk -v d="$d" -v k="$k" 'BEGIN { if (d + 0 > 0 && k + 0 > 0) printf "%.2f", k / d; else print "-" }')
    printf '%-24s %12s %12s %8s\n' "$name${dec:+ (dec)}" "$d" "$k" "$ratio"
done
