#!/usr/bin/env bash
# The demo: builds rdl and runs the example programs against Redis.
#
#   bash tools/demo.sh
#
# With RDL_URL set (e.g. redis://127.0.0.1:6379), the examples use that
# server. Otherwise the script starts a throwaway redis-server on a free
# loopback port, with no persistence and a temporary directory, points
# RDL_URL at it, and stops exactly that server (and removes the directory)
# when it exits, however it exits. Then, unless RDL_URL was given or
# RDL_DEMO_DEPLOYMENTS=0, the basic example runs again over TLS
# (tools/tls.sh) and on a Sentinel deployment across a failover
# (tools/sentinel.sh), both started and stopped here.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
jobs=$(nproc 2>/dev/null || echo 2)
examples=(lock_basic lock_async watchdog fair multilock redlock rwlock semaphore latch events metrics cpp_guard)

# shellcheck source=lib/throwaway.sh
. tools/lib/throwaway.sh
example_pid=""
deploy_dir=""
cleanup() {
    if [ -n "$deploy_dir" ]; then
        [ -f "$deploy_dir/tls/url" ] && bash tools/tls.sh stop "$deploy_dir/tls" >/dev/null 2>&1
        [ -f "$deploy_dir/sentinel/url" ] && bash tools/sentinel.sh stop "$deploy_dir/sentinel" >/dev/null 2>&1
        rm -rf "$deploy_dir"
    fi
    if [ -n "$example_pid" ]; then
        kill "$example_pid" 2>/dev/null || true
        wait "$example_pid" 2>/dev/null || true
    fi
    throwaway_stop
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

bash tools/deps.sh
# Only what the demo runs: the tests are test.sh's business.
cmake -S . -B build -DRDL_BUILD_EXAMPLES=ON
cmake --build build -j "$jobs" --target "${examples[@]}" rdl_cli

own_server=0
if [ -z "${RDL_URL:-}" ]; then
    own_server=1
    throwaway_start demo
    echo "demo: redis-server $throwaway_pid on 127.0.0.1:$throwaway_port"
    export RDL_URL="redis://127.0.0.1:$throwaway_port"
fi
echo "demo: RDL_URL=$RDL_URL"

for ex in "${examples[@]}"; do
    bin=build/examples/$ex
    if [ ! -x "$bin" ]; then
        echo "demo: $bin was not built (is RDL_BUILD_EXAMPLES on?)" >&2
        exit 1
    fi
    echo
    echo "=== $ex"
    # In the background so that a signal to this script is handled (and the
    # server stopped) at once, not when the example finishes.
    "$bin" &
    example_pid=$!
    rc=0
    wait "$example_pid" || rc=$?
    example_pid=""
    if [ $rc -ne 0 ]; then
        echo "demo: $ex failed (exit $rc)" >&2
        exit $rc
    fi
done
echo
echo "=== the rdl tool: two jobs on one lock run one after the other"
rdl=build/tools/rdl/rdl
jobs_pids=()
for job in A B; do
    "$rdl" run demo:job -- sh -c "echo \"job $job starts (fencing token \$RDL_FENCING_TOKEN)\"; sleep 1; echo \"job $job ends\"" &
    jobs_pids+=($!)
done
wait "${jobs_pids[@]}" # not a bare wait: the server is a child too
echo "--- a third with --wait 0 while a job holds it exits 75 (EX_TEMPFAIL):"
"$rdl" run demo:job -- sleep 1 &
holder=$!
sleep 0.3
rc=0
"$rdl" run --wait 0 demo:job -- echo "never printed" || rc=$?
wait "$holder"
echo "exit status $rc"
"$rdl" info demo:job
if [ $rc -ne 75 ]; then
    echo "demo: the rdl tool did not exit 75" >&2
    exit 1
fi

# run_example NAME: runs build/examples/NAME in the background (so that a
# signal to this script is handled at once) and fails the demo if it fails.
run_example() {
    local rc=0
    "build/examples/$1" &
    example_pid=$!
    wait "$example_pid" || rc=$?
    example_pid=""
    if [ $rc -ne 0 ]; then
        echo "demo: $1 failed (exit $rc)" >&2
        exit $rc
    fi
}

if [ $own_server -eq 1 ] && [ "${RDL_DEMO_DEPLOYMENTS:-1}" != 0 ]; then
    deploy_dir=$(mktemp -d "${TMPDIR:-/tmp}/rdl-demo-deploy.XXXXXX")
    echo
    echo "=== lock_basic over TLS (tools/tls.sh: a throwaway CA, rediss://)"
    bash tools/tls.sh start "$deploy_dir/tls"
    RDL_URL=$(cat "$deploy_dir/tls/url") RDL_TLS_CA="$deploy_dir/tls/ca.crt" \
        run_example lock_basic
    bash tools/tls.sh stop "$deploy_dir/tls"
    echo
    echo "=== lock_basic on Sentinel (tools/sentinel.sh), before and after a failover"
    bash tools/sentinel.sh start "$deploy_dir/sentinel"
    RDL_URL=$(cat "$deploy_dir/sentinel/url") run_example lock_basic
    bash tools/sentinel.sh failover "$deploy_dir/sentinel"
    RDL_URL=$(cat "$deploy_dir/sentinel/url") run_example lock_basic
    bash tools/sentinel.sh stop "$deploy_dir/sentinel"
fi
echo
echo "demo: all examples ran"
