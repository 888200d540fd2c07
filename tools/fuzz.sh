#!/usr/bin/env bash
# Builds and runs the fuzz targets of tests/fuzz (docs/robustness.md#fuzzing):
# libFuzzer with clang, ASan and UBSan, in build-fuzz/ (RDL_FUZZ=ON).
#
#   bash tools/fuzz.sh --ci
#       configure and build build-fuzz/, replay every target's corpus
#       (tests/fuzz/corpus/<target>/), then fuzz each target for a fixed
#       time (--seconds, default 10: about 3 minutes for all of them);
#       prints the inputs run per target and fails on any crash.
#   bash tools/fuzz.sh --minutes N TARGET
#       one long run of TARGET (its corpus grows in
#       build-fuzz/corpus/TARGET, seeded from the repository's); prints
#       the inputs run, fails on a crash.
#   bash tools/fuzz.sh --list
#       the targets.
#
# Options: --seconds S (--ci: per target), --jobs N (build; default: the
# number of CPUs; $FUZZ_JOBS too). One fuzzing process at a time
# (-workers=1): the runs are for a shared machine.
#
# A crash leaves its input in build-fuzz/artifacts/TARGET/; replay it with
# build-fuzz/fuzz/TARGET FILE. Once fixed, it belongs in
# tests/fuzz/corpus/TARGET/ as regress-<what> (docs/robustness.md).
# A target's dictionary is tests/fuzz/TARGET.dict, else the one named for
# the part of TARGET before its first '_' (reply_try: reply.dict).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
build=build-fuzz
jobs=${FUZZ_JOBS:-$(nproc 2>/dev/null || echo 2)}
mode=""
minutes=""
target=""
seconds=10

usage() {
    sed -n '2,26p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
}

while [ $# -gt 0 ]; do
    case $1 in
    --ci) mode=ci ;;
    --list) mode=list ;;
    --minutes)
        mode=long
        minutes=${2:-}
        target=${3:-}
        [ $# -ge 3 ] || { usage; exit 2; }
        shift 2
        ;;
    --seconds)
        seconds=${2:-}
        shift
        ;;
    --jobs)
        jobs=${2:-}
        shift
        ;;
    -h | --help)
        usage
        exit 0
        ;;
    *)
        usage
        exit 2
        ;;
    esac
    shift
done
[ -n "$mode" ] || { usage; exit 2; }
case $seconds$minutes in
*[!0-9]*)
    echo "fuzz.sh: --seconds and --minutes take whole numbers" >&2
    exit 2
    ;;
esac

targets() {
    local f
    for f in tests/fuzz/*.c; do
        basename "$f" .c
    done
}

if [ "$mode" = list ]; then
    targets
    exit 0
fi

configure_and_build() {
    if ! command -v clang >/dev/null; then
        echo "fuzz.sh: clang is missing (bash tools/deps.sh installs it)" >&2
        exit 1
    fi
    # -O1 with assert() kept: the library's own checks fire too.
    cmake -S . -B "$build" -DCMAKE_C_COMPILER=clang -DRDL_FUZZ=ON \
        -DRDL_WARNINGS_AS_ERRORS=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g" -DRDL_BUILD_TESTS=OFF \
        -DRDL_BUILD_EXAMPLES=OFF -DRDL_BUILD_BENCH=OFF -DRDL_BUILD_TOOLS=OFF \
        -DRDL_INSTALL=OFF -DBUILD_SHARED_LIBS=OFF >/dev/null
    cmake --build "$build" -j "$jobs"
}

dict_of() {
    local t=$1
    if [ -f "tests/fuzz/$t.dict" ]; then
        echo "-dict=tests/fuzz/$t.dict"
    elif [ -f "tests/fuzz/${t%%_*}.dict" ]; then
        echo "-dict=tests/fuzz/${t%%_*}.dict"
    fi
}

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

# run_target TARGET SECONDS CORPUS_DIR: fuzzes TARGET for SECONDS from its
# repository corpus into CORPUS_DIR; prints "TARGET: N inputs in S s" and
# returns non-zero on a crash (its log is printed).
run_target() {
    local t=$1 secs=$2 work=$3 log rc=0 execs
    local art="$build/artifacts/$t/"
    mkdir -p "$work" "$art"
    log=$(mktemp)
    # shellcheck disable=SC2046 # the dictionary option, if any
    "$build/fuzz/$t" -max_total_time="$secs" -timeout=25 -rss_limit_mb=2048 \
        -workers=1 -print_final_stats=1 -artifact_prefix="$art" \
        $(dict_of "$t") "$work" "tests/fuzz/corpus/$t" >"$log" 2>&1 || rc=$?
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    if [ $rc -ne 0 ]; then
        tail -n 60 "$log" >&2
        echo "fuzz.sh: $t FAILED after ${execs:-?} inputs; the input is in $art" >&2
        rm -f "$log"
        return 1
    fi
    printf '%-16s %12s inputs in %s s\n' "$t:" "${execs:-?}" "$secs"
    rm -f "$log"
    echo "$t ${execs:-0}" >>"$build/execs.txt"
}

# replay TARGET: every input of its repository corpus, once.
replay() {
    local t=$1 log
    log=$(mktemp)
    if ! "$build/fuzz/$t" -runs=0 "tests/fuzz/corpus/$t" >"$log" 2>&1; then
        tail -n 60 "$log" >&2
        echo "fuzz.sh: $t FAILED on its corpus (tests/fuzz/corpus/$t)" >&2
        rm -f "$log"
        return 1
    fi
    rm -f "$log"
    echo "$t: $(find "tests/fuzz/corpus/$t" -type f | wc -l) corpus inputs pass"
}

start=$(date +%s)
configure_and_build
: >"$build/execs.txt"
if [ "$mode" = long ]; then
    [ -f "tests/fuzz/$target.c" ] || {
        echo "fuzz.sh: no target $target (bash tools/fuzz.sh --list)" >&2
        exit 2
    }
    [ "$minutes" -ge 1 ] || { echo "fuzz.sh: --minutes N, N >= 1" >&2; exit 2; }
    replay "$target"
    run_target "$target" $((minutes * 60)) "$build/corpus/$target"
    exit 0
fi

# --ci: the corpora first (every regression input), then the short runs,
# each into a corpus of its own that the next CI run does not see.
failed=0
for t in $(targets); do
    replay "$t" || failed=1
done
[ $failed -eq 0 ] || exit 1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
total=0
for t in $(targets); do
    run_target "$t" "$seconds" "$work/$t" || failed=1
done
[ $failed -eq 0 ] || exit 1
while read -r t n; do
    total=$((total + n))
done <"$build/execs.txt"
echo "fuzz.sh: $(targets | wc -l) targets, $total inputs, no crash" \
    "($(($(date +%s) - start)) s)"
