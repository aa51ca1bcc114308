#!/bin/sh
# make test-cross, one architecture: run a cross-built kuai_test under
# qemu-user once per backend the emulated CPU offers (kuai_test
# --list-backends), with the short random loops (KUAI_TEST_SHORT=1; every
# vector still runs), and print which backends ran and passed.
#   tests/cross-run.sh ARCH QEMU BINARY
set -u
arch=$1 qemu=$2 bin=$3
export KUAI_TEST_SHORT=1
backends=$($qemu -cpu max "$bin" --list-backends) || {
    echo "test-cross $arch: $bin does not run under $qemu" >&2
    exit 1
}
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
