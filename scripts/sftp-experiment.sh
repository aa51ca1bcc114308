#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The AES paper's experiment with a real client: OpenSSH's sftp moving a large
# file over 127.0.0.1 with aes128-ctr and aes256-gcm@openssh.com, once with
# OpenSSL's default provider and once with an openssl.cnf that loads kuai and
# prefers it (default_properties = ?provider=kuai), on both ends.
#
#   scripts/sftp-experiment.sh [DIR_WITH_kuai.so] [SIZE_MIB]     (make sftp-demo)
#
# SFTP_DEMO_OPENSSL_NO_AESNI=1 turns OpenSSL's own AES-NI code off in every
# process (OPENSSL_ia32cap; kuai's code is unaffected): the AES paper's
# setting, where the cipher competes with software AES.
# Installs nothing. Needs: apt-get install openssh-server openssh-client
# Runs a private sshd (throwaway host and user keys in a temp dir, 127.0.0.1,
# a free port, this user), which it stops at exit.
# OpenSSH has no SM4 cipher, so kuai can only take part through AES: the kuai
# library must have AES (the provider lists AES-128-CTR), else the "kuai" runs
# silently use the default provider and the script says so.
set -eu
moddir=$(cd "${1:-build}" && pwd)
size_mib=${2:-1024}
sshd=$(command -v sshd || echo /usr/sbin/sshd)
for t in "$sshd" ssh sftp ssh-keygen openssl; do
    command -v "$t" >/dev/null || { echo "missing $t: apt-get install openssh-server openssh-client"; exit 1; }
done
[ -f "$moddir/kuai.so" ] || { echo "no $moddir/kuai.so (make build first)"; exit 1; }

tmp=$(mktemp -d /tmp/kuai-sftp.XXXXXX)
cleanup() {
    [ -f "$tmp/sshd.pid" ] && kill "$(cat "$tmp/sshd.pid")" 2>/dev/null || true
    rm -rf "$tmp"
}
trap cleanup EXIT

if ! openssl list -cipher-algorithms -provider-path "$moddir" -provider kuai 2>/dev/null |
    grep -q "AES-128-CTR @ kuai"; then
    echo "NOTE: this kuai.so has no AES (the library lacks it): the kuai runs below use OpenSSL's own AES."
fi

ssh-keygen -q -t ed25519 -N '' -f "$tmp/host_key"
ssh-keygen -q -t ed25519 -N '' -f "$tmp/user_key"
cp "$tmp/user_key.pub" "$tmp/authorized_keys"
chmod 600 "$tmp/authorized_keys"
mkdir -p /run/sshd 2>/dev/null || true # sshd's privilege-separation directory
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cat > "$tmp/sshd_config" <<EOF
ListenAddress 127.0.0.1
Port $port
HostKey $tmp/host_key
AuthorizedKeysFile $tmp/authorized_keys
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
PidFile $tmp/sshd.pid
Subsystem sftp internal-sftp
Ciphers aes128-ctr,aes256-gcm@openssh.com
LogLevel ${SFTP_DEMO_SSHD_LOGLEVEL:-INFO}
EOF

cat > "$tmp/kuai.cnf" <<EOF
openssl_conf = openssl_init
[openssl_init]
providers = provider_sect
alg_section = algorithm_sect
[provider_sect]
default = default_sect
kuai = kuai_sect
[default_sect]
activate = 1
[kuai_sect]
module = $moddir/kuai.so
activate = 1
[algorithm_sect]
default_properties = ?provider=kuai
EOF

echo "creating a ${size_mib} MiB file of random bytes"
head -c $((size_mib * 1024 * 1024)) /dev/urandom > "$tmp/big"

start_sshd() { # $1: OPENSSL_CONF or empty
    [ -f "$tmp/sshd.pid" ] && { kill "$(cat "$tmp/sshd.pid")"; sleep 0.3; }
    rm -f "$tmp/sshd.pid"
    # -D -e: in the foreground, logging to stderr, which its per-connection
    # children inherit, so their provider lines are seen too. Through a pipe:
    # the pre-auth sandbox sets RLIMIT_FSIZE to 0, and a write to a regular
    # file there would kill the child with SIGXFSZ.
    env ${1:+OPENSSL_CONF=$1} KUAI_PROVIDER_DEBUG=${SFTP_DEMO_SSHD_DEBUG:-1} "$sshd" -D -e -f "$tmp/sshd_config" \
        2> >(cat > "$tmp/sshd.stderr") &
    for _ in $(seq 50); do [ -f "$tmp/sshd.pid" ] && break; sleep 0.1; done
}

run() { # $1: label, $2: cipher, $3: OPENSSL_CONF or empty
    start_sshd "$3"
    rm -f "$tmp/copy"
    local mac=()
    [ "$2" = aes128-ctr ] && mac=(-o MACs=hmac-sha2-256-etm@openssh.com)
    local t0 t1
    t0=$(date +%s.%N)
    local rc=0
    env ${3:+OPENSSL_CONF=$3} KUAI_PROVIDER_DEBUG=1 sftp -q -b "$tmp/batch" -P "$port" \
        -i "$tmp/user_key" -o Ciphers="$2" "${mac[@]}" -o Compression=no -o BatchMode=yes \
        -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR \
        "$(id -un)@127.0.0.1" > /dev/null 2> "$tmp/client.stderr" || rc=$?
    t1=$(date +%s.%N)
    if [ $rc != 0 ] || ! cmp -s "$tmp/big" "$tmp/copy"; then
        echo "$1 $2: sftp exit $rc, or the copy differs"
        grep -v kuai-provider "$tmp/client.stderr" "$tmp/sshd.stderr" | tail -n 25
        exit 1
    fi
    local mibs
    mibs=$(python3 -c "print(f'{$size_mib / ($t1 - $t0):.0f}')")
    printf '%-8s %-24s %6s MiB/s  (%.2f s)\n' "$1" "$2" "$mibs" "$(python3 -c "print($t1 - $t0)")"
    # The session cipher's lines; other kuai lines are mostly OpenSSL's
    # CTR-DRBG, which also fetches AES-256-CTR/ECB through the preference.
    local want
    want=$(echo "$2" | sed 's/aes128-ctr/AES-128-CTR/; s/aes256-gcm@openssh.com/AES-256-GCM/')
    for side in client sshd; do
        echo "  $side: kuai-provider lines for $want:"
        if grep -q "kuai-provider: $want" "$tmp/$side.stderr"; then
            grep "kuai-provider: $want" "$tmp/$side.stderr" | sed 's/^/    /' | sort | uniq -c
        else
            echo "      (none)"
        fi
        echo "    + $(grep 'kuai-provider' "$tmp/$side.stderr" | grep -vc "$want") other kuai-provider lines"
    done
}

echo "put $tmp/big $tmp/copy" > "$tmp/batch"
if [ "${SFTP_DEMO_OPENSSL_NO_AESNI:-0}" = 1 ]; then
    export OPENSSL_ia32cap="~0x200000200000000"
    echo "OpenSSL's AES-NI paths off (OPENSSL_ia32cap=$OPENSSL_ia32cap)"
fi
echo "OpenSSH: $(ssh -V 2>&1)"
for cipher in aes128-ctr aes256-gcm@openssh.com; do
    run default "$cipher" ""
    run kuai "$cipher" "$tmp/kuai.cnf"
done
