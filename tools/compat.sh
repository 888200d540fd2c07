#!/usr/bin/env bash
# Runs the compatibility set against other servers that speak Redis (the
# README's "Servers" table; docs/servers.md says what each server lacks
# and what rdl does about it).
#
#   bash tools/compat.sh [--build DIR] [--list] [SERVER_DIR...]
#
# A SERVER_DIR is a server build: a folder whose bin/ holds redis-server,
# redis-sentinel and redis-cli (Valkey's binaries answer to those names).
# For each one, bin/ goes first on PATH, RDL_TEST_REDIS_SERVER names its
# redis-server (the C tests take that one, the shell tests PATH's), and
# the tests of DIR (default: build/, as tools/test.sh's build stage leaves
# it) run against that server. With no SERVER_DIR: the folders named in
# $RDL_COMPAT_SERVERS (separated by ':'), else every servers/*/ folder of
# a directory beside the checkout (../*/servers/*/, where a CI machine
# keeps such builds).
# --list prints the folders found and the tests of the set, and runs
# nothing.
#
# The set: every test that talks to a server, except the stress profiles,
# the TLS copy of the cluster suite (TLS has its own suite, which runs)
# and the longest durable loop (test_durable_failover_loop; its
# append-only twin runs where the server has WAITAOF) and six long tests
# of the client's own logic (named below); then one stress
# profile, plain_fair_rw (every kind under contention, judged by the
# history checker). Every kind, wake-ups, the watchdog, the fault proxy,
# a 6-node cluster with failovers, Sentinel with failovers, TLS,
# durability and the rdl tool are in it. Debian's own redis-server runs
# the whole suite (test.sh's test stage).
#
# The set runs two tests at a time (on two CPUs), and a test that fails
# runs once more (ctest --repeat until-pass:2; its failed run stays in the
# output): a timing race between two neighbours is not a server's doing.
# The test stage's full suite on Debian's server, one test at a time and
# with no second chance, is where the library's own flakiness shows. The
# stress profile runs alone and once.
#
# Exit status: 0 when every server passed (or none was found: a message
# says so), 1 when one failed, 2 for bad arguments.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
build=build
list=0
dirs=()
jobs=${COMPAT_JOBS:-$(nproc 2>/dev/null || echo 2)}

# Not in the set: no server, or another stage's job (see above). Then one
# stress profile, alone: every kind contending, judged by the checker.
stress='^stress\.plain_fair_rw$'
exclude='^(stress|stress_check|cluster_tls|layers|url|keys|reply|slot|alloc|error|oom)\.|^durable\.test_durable_failover_loop$'
# Long tests of the client's own logic, which no server changes: the
# double grant without durability, back-off rounds, 10,000 holds renewed
# in batches, a latch's expiry, the listing over a cluster, the
# deployment script with a password (the one without runs).
exclude+='|^cluster\.test_cluster_durable_off_double_grant$|^sentinel\.test_sentinel_failed_rounds_back_off$|^watchdog\.test_watchdog_ten_thousand_holds_batched$|^latch\.test_latch_ttl_expiry$|^cli\.cluster_ls$|^tools\.sentinel_auth$'

while [ $# -gt 0 ]; do
    case $1 in
    --build)
        build=${2:-}
        [ -n "$build" ] || { echo "compat.sh: --build DIR" >&2; exit 2; }
        shift
        ;;
    --list) list=1 ;;
    -h | --help)
        sed -n '2,29p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
        exit 0
        ;;
    -*)
        echo "compat.sh: unknown option $1 (--help)" >&2
        exit 2
        ;;
    *) dirs+=("$1") ;;
    esac
    shift
done

if [ ${#dirs[@]} -eq 0 ] && [ -n "${RDL_COMPAT_SERVERS:-}" ]; then
    IFS=: read -ra dirs <<<"$RDL_COMPAT_SERVERS"
fi
if [ ${#dirs[@]} -eq 0 ]; then
    for d in "$root"/../*/servers/*/; do
        [ -x "$d/bin/redis-server" ] && dirs+=("$(cd "$d" && pwd)")
    done
fi

servers=()
for d in "${dirs[@]}"; do
    if [ ! -x "$d/bin/redis-server" ]; then
        echo "compat.sh: $d has no bin/redis-server" >&2
        exit 2
    fi
    servers+=("$(cd "$d" && pwd)")
done

if [ ${#servers[@]} -eq 0 ]; then
    echo "compat.sh: no server builds found (give folders, set" \
        "RDL_COMPAT_SERVERS, or keep them in ../*/servers/); nothing run"
    exit 0
fi
if [ ! -f "$build/CTestTestfile.cmake" ]; then
    echo "compat.sh: $build/ is not a build with tests (run tools/test.sh" \
        "or configure with -DRDL_BUILD_TESTS=ON)" >&2
    exit 2
fi

if [ $list -eq 1 ]; then
    printf '%s\n' "${servers[@]}"
    (cd "$build" && ctest -N -E "$exclude" | tail -n 1 &&
        ctest -N -R "$stress" | tail -n 1)
    exit 0
fi

failed=()
summary=()
for s in "${servers[@]}"; do
    version=$("$s/bin/redis-server" --version | head -n 1)
    echo
    echo "--- compat: $version ($s)"
    start=$(date +%s)
    rc=0
    (cd "$build" &&
        RDL_TEST_REDIS_SERVER="$s/bin/redis-server" PATH="$s/bin:$PATH" \
            ctest --output-on-failure --no-tests=error --timeout 300 \
            -j "$jobs" --repeat until-pass:2 -E "$exclude" &&
        RDL_TEST_REDIS_SERVER="$s/bin/redis-server" PATH="$s/bin:$PATH" \
            ctest --output-on-failure --no-tests=error --timeout 300 \
            -R "$stress") || rc=$?
    secs=$(($(date +%s) - start))
    if [ $rc -eq 0 ]; then
        summary+=("passed in ${secs} s: $version")
    else
        summary+=("FAILED after ${secs} s: $version")
        failed+=("$s")
    fi
done

echo
for line in "${summary[@]}"; do
    echo "compat: $line"
done
[ ${#failed[@]} -eq 0 ] || exit 1
