#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Runs of the suite (kuai_test), each one backend under its own
# environment, JOBS at a time, for make test-shim and make test-ymm-split:
#   tests/suite-runs.sh [-R] -j JOBS -n NAME BINARY 'BACKEND [VAR=VALUE...]'...
# Every run sets KUAI_TEST_SHORT=1 (the short random loops; every vector
# still runs) and writes its output to BINARY-NAME-I.log (I: the run's
# place in the list). The results are printed in the list's order once all
# have ended, "NAME: BACKEND, VARS ok (count, seconds)", with the whole
# output of any run that failed; the exit status is 1 if one did. A run
# whose backend BINARY does not list (--list-backends: not on this CPU) is
# said to be skipped and not run, or with -R (every backend required: the
# ISA shim's build, which says the CPU has them all) fails. On 2
# cores two runs at a time took each list in about half the time, as the
# suite's runs are single-threaded.
set -u
jobs=1 name=suite require=0
while getopts Rj:n: opt; do
    case $opt in
    R) require=1 ;;
    j) jobs=$OPTARG ;;
    n) name=$OPTARG ;;
    *) exit 2 ;;
    esac
done
shift $((OPTIND - 1))
[ $# -ge 2 ] || {
    sed -n '5p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
}
bin=$1
shift

# One run (the queue's worker): I BACKEND [VAR=VALUE...]
if [ "${KUAI_SUITE_ONE:-}" = 1 ]; then
    i=$1 be=$2
    shift 2
    t0=$(date +%s)
    if env "$@" KUAI_TEST_SHORT=1 "$bin" --backend "$be" -q >"$bin-$name-$i.log" 2>&1; then
        result=ok
    else
        result=FAILED
    fi
    echo "$result ($(tail -n 1 "$bin-$name-$i.log"), $(($(date +%s) - t0)) s)" >"$bin-$name-$i.line"
    exit 0
fi

list=$("$bin" --list-backends) || exit 1
have=" $(echo $list) "
i=0
for run in "$@"; do
    i=$((i + 1))
    rm -f "$bin-$name-$i.line"
    case "$have" in *" ${run%% *} "*) echo "$i $run" ;; esac
done | KUAI_SUITE_ONE=1 xargs -r -P "$jobs" -L 1 "$0" -n "$name" "$bin"

status=0 i=0
for run in "$@"; do
    i=$((i + 1))
    set -- $run
    be=$1
    shift
    case "$have" in *" $be "*) ;; *)
        if [ $require = 1 ]; then
            echo "$name: $be FAILED: $bin does not list it"
            status=1
        else
            echo "$name: no $be here, skipped"
        fi
        continue
        ;;
    esac
    line=$(cat "$bin-$name-$i.line" 2>/dev/null) || line="FAILED (did not report)"
    echo "$name: $be${*:+, $*} $line"
    case "$line" in
    ok*) ;;
    *)
        cat "$bin-$name-$i.log" 2>/dev/null
        status=1
        ;;
    esac
done
exit $status
