#!/usr/bin/env bash
# A long stress run (tests/stress/README.md): one profile of the stress
# test, for as long as asked, with a seed of your choice or a fresh one.
#
#   bash tools/stress.sh [--minutes N] [--seed S] [--profile NAME]
#                        [--build DIR] [--stall-ms MS] [--dump FILE]
#
# Profiles: plain_fair_rw (default), multilock_redlock, faults, cluster,
# random_seed, durable_sentinel, tls, cluster_durable, batch_close. The
# seed is printed first; rerun with --seed to replay the same operations and
# fault schedule (timing differs, so a race may need a few runs). On a violation the seed,
# the property and the history lines involved are printed, the whole
# history is written to a file, and the exit status is 1.
set -euo pipefail

minutes=5
seed=
profile=plain_fair_rw
build=
stall=
dump=
usage() {
    sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
}
while [ $# -gt 0 ]; do
    case $1 in
    --minutes) minutes=$2; shift 2 ;;
    --seed) seed=$2; shift 2 ;;
    --profile) profile=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --stall-ms) stall=$2; shift 2 ;;
    --dump) dump=$2; shift 2 ;;
    -h | --help) usage ;;
    *) echo "stress.sh: unknown argument $1" >&2; usage ;;
    esac
done
case $minutes in '' | *[!0-9.]*) echo "stress.sh: bad --minutes" >&2; exit 2 ;; esac
case $profile in
plain_fair_rw | multilock_redlock | faults | cluster | random_seed | \
    durable_sentinel | tls | cluster_durable | batch_close) ;;
*) echo "stress.sh: unknown profile $profile" >&2; exit 2 ;;
esac

root=$(cd "$(dirname "$0")/.." && pwd)
build=${build:-$root/build}
# Absolute: the servers it starts run in directories under it.
[ -d "$build" ] && build=$(cd "$build" && pwd)
exe=$build/tests/test_stress_stress
if [ ! -x "$exe" ]; then
    echo "stress.sh: $exe not built (cmake -DRDL_BUILD_TESTS=ON, then" \
         "cmake --build $build --target test_stress_stress)" >&2
    exit 2
fi
if [ -z "$seed" ]; then
    seed=$(od -An -N6 -tu8 /dev/urandom | tr -d ' ')
fi
seconds=$(awk -v m="$minutes" 'BEGIN { s = int(m * 60); print s < 1 ? 1 : s }')
tmp=${RDL_TEST_TMPDIR:-$build/tests/tmp}
mkdir -p "$tmp"

echo "stress.sh: profile $profile, seed $seed, $seconds s"
export RDL_STRESS_SEED=$seed RDL_STRESS_SECONDS=$seconds RDL_TEST_TMPDIR=$tmp
[ -n "$stall" ] && export RDL_STRESS_STALL_MS=$stall
[ -n "$dump" ] && export RDL_STRESS_DUMP=$dump
exec "$exe" "test_stress_$profile"
