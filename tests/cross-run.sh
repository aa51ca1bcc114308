#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# make test-cross: run cross-built kuai_test binaries under qemu-user, once
# per backend each emulated CPU offers (kuai_test --list-backends), with the
# short random loops (KUAI_TEST_SHORT=1; every vector still runs), and print
# each run's result (tests/queue.sh's lines), architecture by architecture.
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

# The (architecture, backend) runs as the queue's labels and commands
# (tests/queue.sh): qemu-ARCH-static -cpu max BINARY --backend BACKEND -q
# (-q: group lines only for failures; the last line is the count), each
# run's output in cross-run-I.log beside the first BINARY.
prefix=$(dirname "${1#*:}")/cross-run queue=$(dirname "${1#*:}")/cross-run.queue
exec 3>&1 # the loop's standard output is the queue
for ab in "$@"; do
    arch=${ab%%:*} bin=${ab#*:}
    all=$("qemu-$arch-static" -cpu max "$bin" --list-backends) || {
        echo "test-cross $arch: $bin does not run under qemu-$arch-static" >&3
        exit 1
    }
    # The CPU features the library reports under the emulated CPU (what
    # kuai info prints there); none where backends need some is caught by
    # the suite.
    echo "test-cross $arch: cpu features:" $("qemu-$arch-static" -cpu max "$bin" --cpu-features) >&3
    n=0
    for be in $all; do
        case "$skip" in *" $be "*) continue ;; esac
        printf '%s\n%s\n' "test-cross $arch: backend $be" "qemu-$arch-static -cpu max $bin --backend $be -q"
        n=$((n + 1))
    done
    [ $n -gt 0 ] || echo "test-cross $arch: nothing to emulate" >&3
done >"$queue" || exit 1
exec "$(dirname "$0")/queue.sh" -j "$jobs" -o "$prefix" -f "$queue"
