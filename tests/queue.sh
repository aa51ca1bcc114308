#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Commands from one queue, JOBS at a time, for the steps of make test that
# run several slow programs (make test-sanitize):
#   tests/queue.sh -j JOBS -o PREFIX LABEL COMMAND [LABEL COMMAND]...
#   tests/queue.sh -j JOBS -o PREFIX -f FILE   (FILE: a label a line, then
#                                               its command on the next)
# Each COMMAND is a line of sh, run with its output in PREFIX-I.log (I: its
# place in the list); the queue hands them out in the order given, so put
# the longest first. Once all have ended, one line each in that order,
# "LABEL: ok (its output's last line, S s)" or "LABEL: FAILED (exit status
# R, S s)" followed by that run's whole output; the exit status is 1 if any
# failed. On 2 cores, single-threaded runs side by side end in about half
# the time of one after the other.
set -u
jobs=1 prefix="" file=""
while getopts f:j:o: opt; do
    case $opt in
    f) file=$OPTARG ;;
    j) jobs=$OPTARG ;;
    o) prefix=$OPTARG ;;
    *) exit 2 ;;
    esac
done
shift $((OPTIND - 1))
if [ -n "$file" ] && [ $# -eq 0 ]; then
    while IFS= read -r line; do
        set -- "$@" "$line"
    done <"$file"
    [ $# -gt 0 ] || exit 0 # nothing queued
fi
if [ -z "$prefix" ] || [ $# -lt 2 ] || [ $(($# % 2)) -ne 0 ]; then
    sed -n '5,7p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
fi

n=0
for arg in "$@"; do
    n=$((n + 1))
    i=$(((n + 1) / 2))
    if [ $((n % 2)) -eq 0 ]; then
        printf '%s\n' "$arg" >"$prefix-$i.cmd"
        rm -f "$prefix-$i.rc"
    fi
done
n=$((n / 2))

# The worker: run PREFIX-I.cmd, its exit status and seconds to PREFIX-I.rc
seq 1 "$n" | xargs -P "$jobs" -I{} sh -c '
    t0=$(date +%s)
    sh "$1-$2.cmd" >"$1-$2.log" 2>&1
    echo "$? $(($(date +%s) - t0))" >"$1-$2.rc"' sh "$prefix" {}

status=0 i=0
while [ $# -gt 0 ]; do
    i=$((i + 1))
    label=$1
    shift 2
    rc="(did not report)" secs=0
    [ -f "$prefix-$i.rc" ] && read -r rc secs <"$prefix-$i.rc"
    if [ "$rc" = 0 ]; then
        echo "$label: ok ($(tail -n 1 "$prefix-$i.log"), $secs s)"
    else
        echo "$label: FAILED (exit status $rc, $secs s)"
        cat "$prefix-$i.log" 2>/dev/null
        status=1
    fi
done
exit $status
