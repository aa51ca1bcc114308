#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# make test-cross, one architecture: run a cross-built kuai_test under
# qemu-user once per backend the emulated CPU offers (kuai_test
# --list-backends), with the short random loops (KUAI_TEST_SHORT=1; every
# vector still runs), and print which backends ran and passed.
#   tests/cross-run.sh ARCH QEMU BINARY [SKIP]
# SKIP: backends not to run (for the host's own architecture, the ones the
# native suite already ran, so that only what this CPU lacks is emulated).
set -u
arch=$1 qemu=$2 bin=$3
skip=" $(echo ${4:-}) " # one line, blank-separated
export KUAI_TEST_SHORT=1
all=$($qemu -cpu max "$bin" --list-backends) || {
    echo "test-cross $arch: $bin does not run under $qemu" >&2
    exit 1
}
# The CPU features the library reports under the emulated CPU (what kuai
# info prints there); none where backends need some is caught by the suite.
echo "test-cross $arch: cpu features:" $($qemu -cpu max "$bin" --cpu-features)
backends=""
for be in $all; do
    case "$skip" in *" $be "*) ;; *) backends="$backends $be" ;; esac
done
[ -n "$backends" ] || { echo "test-cross $arch: nothing to emulate"; exit 0; }
passed="" failed=""
for be in $backends; do
    t0=$(date +%s)
    # -q: group lines only for failures; the last line is the count
    if $qemu -cpu max "$bin" --backend "$be" -q >"$bin-$be.log" 2>&1; then
        passed="$passed $be"
        result=ok
    else
        failed="$failed $be"
        result=FAILED
    fi
    echo "test-cross $arch: backend $be $result ($(tail -n 1 "$bin-$be.log"), $(($(date +%s) - t0)) s)"
    [ $result = ok ] || cat "$bin-$be.log"
done
echo "test-cross $arch: passed:${passed:- none}${failed:+; FAILED:$failed}"
[ -z "$failed" ]
