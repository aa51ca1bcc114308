#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The kuai provider through the system `openssl` command alone.
#   tests/provider/test_openssl_cli.sh BUILD_DIR
# Needs BUILD_DIR/kuai.so; uses BUILD_DIR/kuai (the CLI) for the uBlock
# cross-check when it exists.
set -u
build=$(cd "${1:-build}" && pwd)
prov=(-provider-path "$build" -provider kuai -provider default)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

hexkey() { head -c "$1" /dev/urandom | od -An -tx1 -v | tr -d ' \n'; }

# 1. The provider lists its ciphers.
openssl list -cipher-algorithms "${prov[@]}" > "$tmp/list" 2>&1 || bad "openssl list failed"
for name in UBLOCK-128-128-ECB UBLOCK-128-128-CBC UBLOCK-128-128-CTR UBLOCK-128-128-GCM \
    UBLOCK-128-256-ECB UBLOCK-128-256-CBC UBLOCK-128-256-CTR UBLOCK-128-256-GCM \
    UBLOCK-256-256-ECB UBLOCK-256-256-CBC UBLOCK-256-256-CTR SM4-ECB SM4-CBC SM4-CTR SM4-GCM \
    SM4-CFB SM4-OFB SM4-XTS SM4-CCM UBLOCK-128-128-CFB UBLOCK-128-128-OFB UBLOCK-128-128-XTS \
    UBLOCK-128-128-CCM UBLOCK-128-256-CFB UBLOCK-128-256-OFB UBLOCK-128-256-XTS UBLOCK-128-256-CCM; do
    if grep -q "\b$name\b.*@ kuai" "$tmp/list"; then ok; else bad "$name not listed @ kuai"; fi
done
aes=0
if grep -q "AES-128-CTR @ kuai" "$tmp/list"; then
    aes=1
    for name in AES-128-XTS AES-256-XTS AES-128-CFB AES-192-OFB id-aes128-CCM id-aes256-CCM; do
        if grep -q "\b$name\b.*@ kuai" "$tmp/list"; then ok; else bad "$name not listed @ kuai"; fi
    done
else
    echo "SKIP AES: the kuai provider does not list it (no AES in this kuai build)"
fi

# A run through kuai must really use kuai: KUAI_PROVIDER_DEBUG names the cipher.
head -c 1000 /dev/urandom > "$tmp/small"
KUAI_PROVIDER_DEBUG=1 openssl enc -sm4-ctr -K "$(hexkey 16)" -iv "$(hexkey 16)" -in "$tmp/small" \
    -out /dev/null "${prov[@]}" -propquery provider=kuai 2> "$tmp/dbg"
if grep -q "kuai-provider: SM4-CTR encrypt, kuai backend" "$tmp/dbg"; then ok; else
    bad "no KUAI_PROVIDER_DEBUG line for SM4-CTR"; cat "$tmp/dbg"; fi

lengths=(0 1 15 16 17 31 32 33 100 1000 4095 65536 100003)
for n in "${lengths[@]}"; do head -c "$n" /dev/urandom > "$tmp/in$n"; done
# CFB and OFB: the block boundaries and a long run (the C test has the rest).
stream_lengths=(0 1 15 16 17 33 100003)

# Whether the kuai CLI has CFB (another branch adds it): else no cross-check there.
cli_cfb=0
if [ -x "$build/kuai" ] && "$build/kuai" encrypt --raw --cipher ublock-128-128-cfb \
    --key "$(hexkey 16)" --iv "$(hexkey 16)" -q "$tmp/in1" > /dev/null 2>&1; then
    cli_cfb=1
else
    echo "SKIP kuai encrypt --raw cross-check of CFB/OFB: the kuai CLI has no CFB"
fi

# 2. uBlock: round trips through openssl enc (GCM: enc has no AEAD; the C
# test covers it). uBlock-256/256 CBC and CTR take a 32-byte IV, beyond the
# 16-byte IV buffer of `openssl enc` (EVP_MAX_IV_LENGTH), so only the C test
# runs them.
for c in ublock-128-128 ublock-128-256 ublock-256-256; do
    klen=16
    [ "$c" != ublock-128-128 ] && klen=32
    for m in ecb cbc ctr cfb ofb; do
        if [ "$c" = ublock-256-256 ] && [ "$m" != ecb ]; then continue; fi
        ns=("${lengths[@]}")
        case $m in cfb | ofb) ns=("${stream_lengths[@]}") ;; esac
        for n in "${ns[@]}"; do
            for pad in "" -nopad; do
                case $m in ctr | cfb | ofb) [ -n "$pad" ] && continue ;; esac
                [ -n "$pad" ] && [ $((n % 16)) -ne 0 ] && continue
                [ -n "$pad" ] && [ "$c" = ublock-256-256 ] && [ $((n % 32)) -ne 0 ] && continue
                key=$(hexkey $klen)
                iv=()
                [ "$m" != ecb ] && iv=(-iv "$(hexkey 16)")
                openssl enc -e -"$c-$m" $pad -K "$key" "${iv[@]}" -in "$tmp/in$n" -out "$tmp/ct" \
                    "${prov[@]}" 2>/dev/null &&
                    openssl enc -d -"$c-$m" $pad -K "$key" "${iv[@]}" -in "$tmp/ct" \
                        -out "$tmp/back" "${prov[@]}" 2>/dev/null
                # The ciphertext must differ from the input, but a stream mode's
                # 1-byte ciphertext equals it for 1 key in 256: ask that only
                # from 8 bytes on (the cross-check below pins the short ones).
                if cmp -s "$tmp/in$n" "$tmp/back" && { [ "$n" -lt 8 ] || ! cmp -s "$tmp/in$n" "$tmp/ct"; }; then
                    ok
                else
                    bad "$c-$m $pad round trip, $n bytes"
                fi
                # Cross-check with the kuai CLI (another branch adds it).
                if [ -x "$build/kuai" ] && { [ "$m" != cfb ] && [ "$m" != ofb ] || [ $cli_cfb = 1 ]; }; then
                    "$build/kuai" encrypt --raw --cipher "$c-$m" --key "$key" \
                        ${iv[1]:+--iv "${iv[1]}"} ${pad:+--nopad} -q "$tmp/in$n" > "$tmp/cli" 2>/dev/null
                    if cmp -s "$tmp/ct" "$tmp/cli"; then ok; else bad "$c-$m $pad != kuai encrypt --raw, $n bytes"; fi
                fi
            done
        done
    done
done
[ -x "$build/kuai" ] || echo "SKIP kuai encrypt --raw cross-check: $build/kuai not built"

# 2b. uBlock-256/256 CBC/CTR through openssl enc (issue 15, defect 12): enc
# keeps IVs in a 16-byte buffer, so the provider is handed the given IV's
# first 16 bytes followed by the first 16 bytes of the key. That must be
# refused (non-zero exit), never a silently wrong ciphertext; -pass aborts
# in openssl itself (EVP_BytesToKey/PBKDF2 into the same buffer).
key=$(hexkey 32)
for m in cbc ctr; do
    for d in "" -d; do
        if openssl enc $d -ublock-256-256-$m -nopad -K "$key" -iv "$(hexkey 32)" -in "$tmp/in32" \
            -out "$tmp/wrong" "${prov[@]}" 2>/dev/null; then
            bad "openssl enc $d -ublock-256-256-$m -iv <64 hex digits> exited 0 (IV half key)"
        else
            ok
        fi
    done
done

# 3. SM4 and AES through kuai give exactly the default provider's bytes.
ciphers=(sm4:16)
[ $aes = 1 ] && ciphers+=(aes-128:16 aes-192:24 aes-256:32)
for ck in "${ciphers[@]}"; do
    c=${ck%%:*}
    klen=${ck##*:}
    for m in ecb cbc ctr cfb ofb; do
        ns=("${lengths[@]}")
        case $m in cfb | ofb) ns=("${stream_lengths[@]}") ;; esac
        for n in "${ns[@]}"; do
            for pad in "" -nopad; do
                case $m in ctr | cfb | ofb) [ -n "$pad" ] && continue ;; esac
                [ -n "$pad" ] && [ $((n % 16)) -ne 0 ] && continue
                key=$(hexkey "$klen")
                iv=()
                [ "$m" != ecb ] && iv=(-iv "$(hexkey 16)")
                for d in "" -d; do
                    src=$tmp/in$n
                    [ -n "$d" ] && src=$tmp/ref
                    openssl enc -e -"$c-$m" $pad -K "$key" "${iv[@]}" -in "$tmp/in$n" \
                        -out "$tmp/ref" 2>/dev/null
                    [ -n "$d" ] && cp "$tmp/ref" "$tmp/refct" && src=$tmp/refct
                    KUAI_PROVIDER_DEBUG=1 openssl enc $d -"$c-$m" $pad -K "$key" "${iv[@]}" \
                        -in "$src" -out "$tmp/kuai" "${prov[@]}" -propquery provider=kuai \
                        2> "$tmp/dbg"
                    if [ -n "$d" ]; then
                        cmp -s "$tmp/kuai" "$tmp/in$n" || { bad "$c-$m $pad decrypt through kuai, $n bytes"; continue; }
                    else
                        cmp -s "$tmp/kuai" "$tmp/ref" || { bad "$c-$m $pad through kuai != default, $n bytes"; continue; }
                    fi
                    if grep -qi "kuai-provider: $c-$m" "$tmp/dbg"; then ok; else bad "$c-$m $d did not run in kuai"; fi
                done
            done
        done
    done
done

# 3b. A wrong key through kuai: `openssl enc -d` fails and prints kuai's
# reason (library "kuai", reason "bad decrypt"), not "bad decrypt" alone.
# Fixed key, wrong key and text, whose wrong decryption ends in a bad
# padding (a random wrong key gives a good one about once in 256 runs); the
# default provider refusing it too shows that it does.
printf 'kuai provider error queue check\n' > "$tmp/wrongkey.txt"
ekey=000102030405060708090a0b0c0d0e0f
wkey=0f0e0d0c0b0a09080706050403020100
eiv=101112131415161718191a1b1c1d1e1f
openssl enc -sm4-cbc -K $ekey -iv $eiv -in "$tmp/wrongkey.txt" -out "$tmp/wrongkey.ct" \
    "${prov[@]}" -propquery provider=kuai 2> /dev/null || bad "openssl enc -sm4-cbc through kuai failed"
if openssl enc -d -sm4-cbc -K $wkey -iv $eiv -in "$tmp/wrongkey.ct" -out /dev/null > /dev/null 2>&1; then
    bad "the default provider decrypted under the wrong key: the fixture's padding is good"
elif openssl enc -d -sm4-cbc -K $wkey -iv $eiv -in "$tmp/wrongkey.ct" -out /dev/null "${prov[@]}" \
    -propquery provider=kuai > /dev/null 2> "$tmp/wrongkey.err"; then
    bad "openssl enc -d through kuai exited 0 under a wrong key"
elif grep -q ':kuai:.*:bad decrypt' "$tmp/wrongkey.err"; then
    ok
else
    bad "openssl enc -d through kuai under a wrong key printed no kuai reason: $(tr '\n' ' ' < "$tmp/wrongkey.err")"
fi

# 4. CMAC through `openssl mac`: the default provider's MACs (uBlock: kuai's
# own, whole file against the C test's split runs), run in kuai.
macs=(SM4-CBC:16 UBLOCK-128-128-CBC:16)
[ $aes = 1 ] && macs+=(AES-128-CBC:16 AES-256-CBC:32)
for ck in "${macs[@]}"; do
    c=${ck%%:*}
    for n in 0 1 16 17 1000 100003; do
        key=$(hexkey "${ck##*:}")
        KUAI_PROVIDER_DEBUG=1 openssl mac "${prov[@]}" -propquery provider=kuai -cipher "$c" \
            -macopt hexkey:"$key" -in "$tmp/in$n" CMAC > "$tmp/kmac" 2> "$tmp/dbg" || {
            bad "openssl mac CMAC $c through kuai failed, $n bytes"
            continue
        }
        grep -q "kuai-provider: CMAC" "$tmp/dbg" || { bad "CMAC $c did not run in kuai"; continue; }
        if [ "${c#UBLOCK}" = "$c" ]; then
            openssl mac -cipher "$c" -macopt hexkey:"$key" -in "$tmp/in$n" CMAC > "$tmp/dmac"
            if cmp -s "$tmp/kmac" "$tmp/dmac"; then ok; else bad "CMAC $c != default, $n bytes"; fi
        elif [ "$(wc -c < "$tmp/kmac")" -ge 32 ]; then ok; else bad "CMAC $c: no MAC printed"; fi
    done
done

# 5. TLS 1.0-1.2 CBC suites through libssl (s_server -www and s_client on
# localhost): kuai's AES-CBC in the record layer on both ends and on one end
# beside the default provider's, with encrypt-then-MAC (libssl checks the
# MAC, kuai the padding) and without it (kuai takes padding and MAC off in
# constant time; SHA-384 suites, which no stitched cipher of the default
# provider takes over). The server's status page crosses the record layer.
if [ $aes = 1 ]; then
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -keyout "$tmp/tls.key" \
        -out "$tmp/tls.crt" -days 1 -nodes -subj /CN=localhost > /dev/null 2>&1
    kuai_tls=("${prov[@]}" -propquery "?provider=kuai")
    # Where an end is kuai, its CBC records went through kuai (its debug
    # lines): the server's decryption, and the client's in direction $4.
    via_kuai() { # what, server, client, the client's direction
        [ "$2" != kuai ] || grep -q "kuai-provider: AES-[0-9]*-CBC decrypt" "$tmp/srv.err" || {
            bad "$1: the server's records not through kuai"
            return 1
        }
        [ "$3" != kuai ] || grep -q "kuai-provider: AES-[0-9]*-CBC $4" "$tmp/cli.err" || {
            bad "$1: the client's records not through kuai"
            return 1
        }
    }
    tls_case() { # server: kuai|default, client: kuai|default, client options...
        local srv=$1 cli=$2 opts=("${@:3}") sp=() cp=() port try
        [ "$srv" = kuai ] && sp=("${kuai_tls[@]}")
        [ "$cli" = kuai ] && cp=("${kuai_tls[@]}")
        for try in 1 2 3; do
            port=$((20000 + RANDOM % 40000))
            KUAI_PROVIDER_DEBUG=1 timeout 20 openssl s_server -accept "$port" -naccept 1 -www \
                -cert "$tmp/tls.crt" -key "$tmp/tls.key" -cipher 'ALL:@SECLEVEL=0' "${sp[@]}" \
                > /dev/null 2> "$tmp/srv.err" &
            local pid=$!
            sleep 0.5
            (printf 'GET / HTTP/1.0\r\n\r\n'; sleep 1) | KUAI_PROVIDER_DEBUG=1 timeout 10 \
                openssl s_client -connect "127.0.0.1:$port" -ign_eof "${opts[@]}" "${cp[@]}" \
                > "$tmp/cli.out" 2> "$tmp/cli.err"
            wait "$pid"
            grep -q "Ciphers supported in s_server" "$tmp/cli.out" && break
            grep -q "errno=111" "$tmp/cli.err" || break # not a port taken: no retry
        done
        local what="TLS, server $srv, client $cli, ${opts[*]}"
        grep -q "Ciphers supported in s_server" "$tmp/cli.out" || {
            bad "$what: no page"
            tail -3 "$tmp/srv.err" "$tmp/cli.err"
            return
        }
        via_kuai "$what" "$srv" "$cli" decrypt && ok
    }
    tls_case kuai kuai -tls1_2 -cipher ECDHE-ECDSA-AES128-SHA
    tls_case kuai kuai -tls1_2 -no_etm -cipher ECDHE-ECDSA-AES256-SHA384
    tls_case kuai default -tls1_2 -no_etm -cipher ECDHE-ECDSA-AES256-SHA384
    tls_case default kuai -tls1_2 -no_etm -cipher ECDHE-ECDSA-AES256-SHA384
    tls_case kuai kuai -tls1_1 -cipher 'ECDHE-ECDSA-AES128-SHA:@SECLEVEL=0'
    tls_case kuai default -tls1 -cipher 'ECDHE-ECDSA-AES256-SHA:@SECLEVEL=0'

    # DTLS 1.2 and 1.0 over UDP: s_server has no -www there, so the client
    # sends a line and the server must print it. The server's standard
    # input stays open meanwhile (at its end of file s_server stops), and
    # the client starts once the server says ACCEPT (a datagram sent
    # before it binds is lost).
    dtls_case() { # server: kuai|default, client: kuai|default, client options...
        local srv=$1 cli=$2 opts=("${@:3}") sp=() cp=() port try line
        [ "$srv" = kuai ] && sp=("${kuai_tls[@]}")
        [ "$cli" = kuai ] && cp=("${kuai_tls[@]}")
        line="dtls line $RANDOM$RANDOM" # (s_client takes a line starting with k, K, Q or R as a command)
        for try in 1 2 3; do
            port=$((20000 + RANDOM % 40000))
            : > "$tmp/srv.out"
            sleep 15 2> /dev/null | KUAI_PROVIDER_DEBUG=1 timeout 20 openssl s_server -dtls \
                -accept "127.0.0.1:$port" -naccept 1 -cert "$tmp/tls.crt" -key "$tmp/tls.key" \
                -cipher 'ALL:@SECLEVEL=0' "${sp[@]}" > "$tmp/srv.out" 2> "$tmp/srv.err" &
            local pid=$! i
            for i in $(seq 100); do
                grep -q ACCEPT "$tmp/srv.out" && break
                sleep 0.1
            done
            (printf '%s\n' "$line"; sleep 1) | KUAI_PROVIDER_DEBUG=1 timeout 10 \
                openssl s_client -connect "127.0.0.1:$port" "${opts[@]}" "${cp[@]}" \
                > "$tmp/cli.out" 2> "$tmp/cli.err"
            wait "$pid"
            grep -aq "$line" "$tmp/srv.out" && break
        done
        local what="DTLS, server $srv, client $cli, ${opts[*]}"
        grep -aq "$line" "$tmp/srv.out" || {
            bad "$what: the line did not arrive"
            tail -n 3 "$tmp/srv.err" "$tmp/cli.err"
            return
        }
        via_kuai "$what" "$srv" "$cli" encrypt && ok
    }
    dtls_case kuai kuai -dtls1_2 -no_etm -cipher ECDHE-ECDSA-AES256-SHA384
    dtls_case kuai kuai -dtls1_2 -cipher ECDHE-ECDSA-AES128-SHA
    dtls_case default kuai -dtls1_2 -no_etm -cipher ECDHE-ECDSA-AES256-SHA384
    dtls_case kuai default -dtls1 -no_etm -cipher 'ECDHE-ECDSA-AES256-SHA:@SECLEVEL=0'
fi

echo "provider openssl-command test: $pass passed, $fail failed"
[ "$fail" = 0 ]
