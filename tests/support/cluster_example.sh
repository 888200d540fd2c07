#!/usr/bin/env bash
# CTest: tools/cluster.sh starts a cluster, examples/cluster runs against
# it, and stop leaves none of its processes behind.
#
#   bash tests/support/cluster_example.sh ROOT EXAMPLE TMPDIR
set -euo pipefail
root=$1
example=$2
dir=$(mktemp -d "${3:-/tmp}/rdl-cluster-XXXXXX")
rmdir "$dir" # cluster.sh creates it, with its marker

cleanup() {
    bash "$root/tools/cluster.sh" stop "$dir" >/dev/null 2>&1 || true
}
trap cleanup EXIT

if ! command -v redis-server >/dev/null || ! command -v redis-cli >/dev/null; then
    if [ -n "${CI:-}" ]; then
        echo "redis-server or redis-cli missing; CI is set" >&2
        exit 1
    fi
    echo "[  SKIPPED ] redis-server or redis-cli missing"
    exit 0
fi

url=$(bash "$root/tools/cluster.sh" start "$dir")
echo "cluster: $url"
bash "$root/tools/cluster.sh" status "$dir"
RDL_URL=$url "$example"
pids=$(cat "$dir"/*/redis.pid)
bash "$root/tools/cluster.sh" stop "$dir"
trap - EXIT
for pid in $pids; do
    if grep -q redis-server "/proc/$pid/cmdline" 2>/dev/null; then
        echo "redis-server $pid still runs after stop" >&2
        exit 1
    fi
done
[ ! -e "$dir" ] || {
    echo "$dir left behind" >&2
    exit 1
}
echo "example ran; cluster stopped"
