#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Runs of the suite (kuai_test), each one backend under its own
# environment, JOBS at a time, for make test-shim and make test-ymm-split:
#   tests/suite-runs.sh [-R] -j JOBS -n NAME BINARY 'BACKEND [VAR=VALUE...]'...
# Every run sets KUAI_TEST_SHORT=1 (the short random loops; every vector
# still runs) and goes from one queue (tests/queue.sh), its output in
# BINARY-NAME-I.log (I: its place among the runs this CPU has). The results
# are printed in the list's order once all have ended, "NAME: BACKEND,
# VARS: ok (count, seconds)", with the whole output of any run that failed;
# the exit status is 1 if one did. A run
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

# Every run this CPU has goes to the queue (tests/queue.sh) as a label and
# a command; the others are said to be skipped, or fail with -R.
list=$("$bin" --list-backends) || exit 1
have=" $(echo $list) "
status=0
exec 3>&1 # the loop's standard output is the queue
for run in "$@"; do
    set -- $run
    be=$1
    shift
    case "$have" in *" $be "*) ;; *)
        if [ $require = 1 ]; then
            echo "$name: $be FAILED: $bin does not list it" >&3
            status=1
        else
            echo "$name: no $be here, skipped" >&3
        fi
        continue
        ;;
    esac
    printf '%s\n%s\n' "$name: $be${*:+, $*}" "env $* KUAI_TEST_SHORT=1 $bin --backend $be -q"
done >"$bin-$name.queue"
"$(dirname "$0")/queue.sh" -j "$jobs" -o "$bin-$name" -f "$bin-$name.queue" || status=1
exit $status
