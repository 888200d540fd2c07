#!/usr/bin/env bash
# The test command: everything CI checks, in order.
#
#   bash tools/test.sh [--quick]
#
# Stages:
#   deps     install missing Debian packages (tools/deps.sh)
#   build    configure and build build/ with warnings as errors
#   test     ctest in build/, every label (unit, integration, cluster, fault)
#   compat   tools/compat.sh: the compatibility set in build/ against each
#            other server build found (Redis 6.2, Redis 7.2, Valkey 8;
#            the README's "Servers" table)
#   asan     the same in build-asan/ under AddressSanitizer + UBSan
#            (skipped with --quick)
#   consumers  install rdl and build the add_subdirectory, find_package and
#            pkg-config consumer projects (tests/consumers/run.sh)
#   package  install into a temporary prefix and run the tool from there;
#            build the Debian packages (cpack -G DEB), install them, build
#            the consumers against /usr, purge them (tests/package/run.sh)
#   notls    build-notls/: the build without OpenSSL (RDL_WITH_TLS=OFF),
#            unit tests
#   cxx      <rdl.hpp>, its test suite and the C++ example compile without
#            a warning under g++ and clang++, as C++17 and as C++20 (the
#            build stages compile them once, with g++ and C++17)
#   reference  tools/doc.sh: the API reference built from include/ with
#            Doxygen, without a single warning (every public symbol,
#            macro and enum value documented; docs/reference.md)
#   docs     tools/check-docs.sh --build build: every code block of
#            README.md and docs/ compiles, runs or builds against build/,
#            and every relative link resolves (docs/contributing.md)
#   fuzz     tools/fuzz.sh --ci: builds build-fuzz/ (clang, libFuzzer,
#            ASan + UBSan), replays every fuzz target's corpus
#            (tests/fuzz/corpus/, every regression input) and fuzzes
#            each target for 10 s (about 3 minutes); fails on a crash
#   format   clang-format --dry-run --Werror over the C and C++ sources
#   layers   tools/check-layers.sh: every #include, and every call between
#            the library's objects in build/, follows the layers
#   compose  docker-compose config: docker-compose.yml is valid (no engine
#            is needed for that)
#
# Stops at the first failing stage and names it; exits non-zero then.
# Set CI=1 (as .ci/run does) so tests that need redis-server fail, rather
# than skip, when it is missing.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
jobs=$(nproc 2>/dev/null || echo 2)
quick=0

usage() {
    echo "usage: bash tools/test.sh [--quick]" >&2
    echo "  --quick  skip the AddressSanitizer/UBSan pass" >&2
}

for arg in "$@"; do
    case $arg in
    --quick) quick=1 ;;
    -h | --help)
        usage
        exit 0
        ;;
    *)
        usage
        exit 2
        ;;
    esac
done

stage=""
report() {
    local rc=$?
    if [ $rc -ne 0 ]; then
        echo >&2
        echo "test.sh: FAILED in stage '$stage' (exit $rc)" >&2
    fi
}
trap report EXIT

begin() {
    stage=$1
    echo
    echo "=== [$1] $2"
}

# configure_and_build DIR [CMAKE_ARGS...]
configure_and_build() {
    local dir=$1
    shift
    cmake -S . -B "$dir" -DRDL_WARNINGS_AS_ERRORS=ON -DRDL_BUILD_TESTS=ON \
        "$@"
    cmake --build "$dir" -j "$jobs"
}

# run_ctest DIR: every test, every label; no tests at all is a failure. Tests
# set their own timeouts; --timeout only bounds one that forgot (a hang must
# fail CI, not stall it). One test at a time: the timing the tests judge
# (wake-ups, leases) is the library's, not a neighbour's.
run_ctest() {
    (cd "$1" && ctest --output-on-failure --no-tests=error --timeout 600)
}

stage_deps() {
    begin deps "installing missing packages"
    bash tools/deps.sh
}

# Optimised (so -O2-only warnings count) but with assert() kept: the
# RelWithDebInfo flags minus -DNDEBUG. build-asan/ is an -O0 Debug build.
stage_build() {
    begin build "building build/ (warnings are errors)"
    configure_and_build build -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O2 -g"
}

stage_test() {
    begin test "ctest in build/"
    run_ctest build
}

# Other servers that speak Redis; Debian's redis-server ran the whole
# suite in the test stage.
stage_compat() {
    begin compat "tools/compat.sh (the compatibility set on other servers)"
    bash tools/compat.sh --build build
}

stage_asan() {
    begin asan "building and testing build-asan/ (ASan + UBSan)"
    configure_and_build build-asan -DCMAKE_BUILD_TYPE=Debug -DRDL_SANITIZE=ON
    ASAN_OPTIONS=detect_leaks=1 \
        UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
        run_ctest build-asan
}

stage_consumers() {
    begin consumers "install + add_subdirectory/find_package/pkg-config"
    bash tests/consumers/run.sh "$root" "$root/build-consumers"
}

# Skips its Debian part, saying so, where cpack, dpkg-shlibdeps, apt-get or
# root are missing; leaves no package installed.
stage_package() {
    begin package "install to a prefix; cpack -G DEB, install, purge"
    bash tests/package/run.sh "$root" "$root/build-package"
}

# Where OpenSSL is missing rdl builds without TLS: the library, the tool
# and the unit tests (which check that rediss URLs are then refused).
stage_notls() {
    begin notls "building build-notls/ with RDL_WITH_TLS=OFF, unit tests"
    configure_and_build build-notls -DCMAKE_BUILD_TYPE=Debug \
        -DRDL_WITH_TLS=OFF -DRDL_BUILD_BENCH=OFF -DRDL_BUILD_EXAMPLES=OFF
    (cd build-notls && ctest --output-on-failure --no-tests=error -L unit)
}

stage_cxx() {
    begin cxx "<rdl.hpp> with g++ and clang++, -std=c++17 and -std=c++20"
    local cxx std flags=(-Wall -Wextra -Wpedantic -Werror -fsyntax-only
        -Iinclude)
    for cxx in g++ clang++; do
        for std in 17 20; do
            "$cxx" -std=c++$std "${flags[@]}" -Itests/support \
                tests/integration/test_cpp.cpp
            "$cxx" -std=c++$std "${flags[@]}" -Iexamples \
                examples/cpp_guard.cpp
            echo "$cxx -std=c++$std: no warnings"
        done
    done
}

# The reference generated from the headers (docs/reference.md): any
# Doxygen warning, an undocumented public symbol above all, fails.
stage_reference() {
    begin reference "tools/doc.sh (the API reference, no Doxygen warning)"
    bash tools/doc.sh
}

# The documentation's code blocks against build/ (built by then): C and
# C++ compiled, sh run against a redis-server of the check's own, cmake
# consumers built against an install of build/ (docs/contributing.md).
stage_docs() {
    begin docs "tools/check-docs.sh (README.md and docs/ code blocks, links)"
    CHECK_DOCS_JOBS=$jobs bash tools/check-docs.sh --build build
}

# Smoke test of the benchmark: it must run; no threshold is asserted
# (timings belong to bench/, never to CI: docs/design.md#tests).
stage_bench() {
    begin bench "rdl-bench --quick (smoke test, no thresholds)"
    (cd build && ./bench/rdl-bench --quick)
}

# The fuzz targets (docs/robustness.md#fuzzing): the corpora replayed,
# then a short fixed run of each. Long runs: tools/fuzz.sh --minutes.
stage_fuzz() {
    begin fuzz "tools/fuzz.sh --ci (corpora, then 10 s per target)"
    FUZZ_JOBS=$jobs bash tools/fuzz.sh --ci
}

# Every C and C++ file we wrote: the build trees and generated files are
# skipped.
c_sources() {
    local dirs=() d
    for d in src include tests examples tools bench; do
        [ -d "$d" ] && dirs+=("$d")
    done
    find "${dirs[@]}" \
        \( -type d \( -name 'build*' -o -name generated -o -name node_modules \) -prune \) -o \
        -type f \( -name '*.c' -o -name '*.h' -o -name '*.cpp' -o \
        -name '*.hpp' \) -print | sort
}

stage_format() {
    begin format "clang-format --dry-run --Werror"
    clang-format --version
    local files
    mapfile -t files < <(c_sources)
    if [ ${#files[@]} -eq 0 ]; then
        echo "no C sources found" >&2
        return 1
    fi
    local f bad=()
    for f in "${files[@]}"; do
        clang-format --dry-run --Werror "$f" 2>/dev/null || bad+=("$f")
    done
    if [ ${#bad[@]} -ne 0 ]; then
        clang-format --dry-run "${bad[@]}" 2>&1 | head -n 60 >&2 || true
        echo "${#bad[@]} of ${#files[@]} files are not formatted; fix with:" >&2
        echo "    clang-format -i ${bad[*]}" >&2
        return 1
    fi
    echo "${#files[@]} files formatted as .clang-format says"
}

stage_layers() {
    begin layers "tools/check-layers.sh (includes and calls only run down)"
    bash tools/check-layers.sh --calls build
}

stage_compose() {
    begin compose "docker-compose config"
    docker-compose -f docker-compose.yml config -q
    echo "docker-compose.yml is valid"
}

stage_deps
stage_build
stage_test
stage_compat
if [ $quick -eq 0 ]; then
    stage_asan
else
    echo
    echo "=== [asan] skipped (--quick)"
fi
stage_consumers
stage_package
stage_notls
stage_cxx
stage_reference
stage_docs
stage_bench
stage_fuzz
stage_format
stage_layers
stage_compose

stage=""
echo
echo "test.sh: all stages passed"
