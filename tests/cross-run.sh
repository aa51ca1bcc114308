#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# make test-cross: run cross-built kuai_test binaries under qemu-user, once
# per backend each emulated CPU offers (kuai_test --list-backends), with the
# short random loops (KUAI_TEST_SHORT=1; every vector still runs), and print
# which backends ran and passed, architecture by architecture.
#   tests/cross-run.sh [-j JOBS] [-s SKIP] ARCH:BINARY...
# Each ARCH runs under qemu-ARCH-static -cpu max. The (architecture,
# backend) runs go JOBS at a time (default 1) from one queue, in the order
# given, each architecture's backends as --list-backends lists them: one
# emulator per architecture had left a core idle for minutes after the
# faster architecture ended (2 cores: LoongArch's four runs 655 s against
# ARM64's five 293 s, AMD EPYC Zen 3), so give the slowest one first.
# SKIP: backends not to run (blank-separated; for the host's own
# architecture, the ones the native suite already ran, so that only what
# this CPU lacks is emulated).
set -u
jobs=1 skip=""
while getopts j:s: opt; do
    case $opt in
    j) jobs=$OPTARG ;;
    s) skip=$OPTARG ;;
    *) exit 2 ;;
    esac
done
shift $((OPTIND - 1))
[ $# -ge 1 ] || {
    sed -n '7p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
}
skip=" $(echo $skip) " # one line, blank-separated
export KUAI_TEST_SHORT=1

# One run (the queue's worker): ARCH BINARY BACKEND -> BINARY-BACKEND.log
# (the suite's output) and BINARY-BACKEND.line (its result line).
if [ "${KUAI_CROSS_ONE:-}" = 1 ]; then
    arch=$1 bin=$2 be=$3
    t0=$(date +%s)
    # -q: group lines only for failures; the last line is the count
    if "qemu-$arch-static" -cpu max "$bin" --backend "$be" -q >"$bin-$be.log" 2>&1; then
        result=ok
    else
        result=FAILED
    fi
    echo "test-cross $arch: backend $be $result ($(tail -n 1 "$bin-$be.log"), $(($(date +%s) - t0)) s)" \
        >"$bin-$be.line"
    exit 0
fi

queue=$(mktemp)
trap 'rm -f "$queue"' EXIT
for ab in "$@"; do
    arch=${ab%%:*} bin=${ab#*:}
    all=$("qemu-$arch-static" -cpu max "$bin" --list-backends) || {
        echo "test-cross $arch: $bin does not run under qemu-$arch-static" >&2
        exit 1
    }
    # The CPU features the library reports under the emulated CPU (what
    # kuai info prints there); none where backends need some is caught by
    # the suite.
    echo "test-cross $arch: cpu features:" $("qemu-$arch-static" -cpu max "$bin" --cpu-features)
    n=0
    for be in $all; do
        case "$skip" in *" $be "*) continue ;; esac
        rm -f "$bin-$be.line"
        echo "$arch $bin $be" >>"$queue"
        n=$((n + 1))
    done
    [ $n -gt 0 ] || echo "test-cross $arch: nothing to emulate"
done
[ -s "$queue" ] || exit 0
KUAI_CROSS_ONE=1 xargs -P "$jobs" -L 1 "$0" <"$queue"

status=0
for ab in "$@"; do
    arch=${ab%%:*} bin=${ab#*:}
    passed="" failed=""
    for be in $(awk -v a="$arch" '$1 == a { print $3 }' "$queue"); do
        if [ -f "$bin-$be.line" ]; then
            cat "$bin-$be.line"
        else
            echo "test-cross $arch: backend $be did not report"
        fi
        if grep -q " ok (" "$bin-$be.line" 2>/dev/null; then
            passed="$passed $be"
        else
            failed="$failed $be"
            cat "$bin-$be.log" 2>/dev/null
        fi
    done
    if [ -n "$passed$failed" ]; then
        echo "test-cross $arch: passed:${passed:- none}${failed:+; FAILED:$failed}"
    fi
    [ -z "$failed" ] || status=1
done
exit $status
