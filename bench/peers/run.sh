#!/usr/bin/env bash
# rdl side by side with node-redlock, redis-semaphore and redis-py's Lock:
# the same workloads for each, one at a time, against one throwaway Redis;
# prints a markdown table (bench/peers/README.md says what it measures).
#
#   bash bench/peers/run.sh [--quick] [--only LIB[,LIB...]] [--out FILE]
#
#   --quick   a smoke test: 1-2 s per workload, under a minute in all
#             (a full run takes about 4-5 minutes)
#   --only    some of: node-redlock, redis-semaphore, redis-py, rdl
#   --out     where the raw results go, as JSON lines
#             (default bench/peers/results/last.jsonl)
#
# Installs what is missing (Debian's nodejs, npm and python3-redis; the npm
# packages pinned in package-lock.json, with npm ci), builds rdl-peer in
# build/ (RDL_BUILD_DIR to use another; configured Release if it is not
# configured yet), starts redis-server on a free loopback port with no
# persistence, and stops exactly that server when it exits.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
caller_dir=$PWD

usage() {
    sed -n '2,13s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"
}

quick=0
only=""
out=""
while [ $# -gt 0 ]; do
    case $1 in
    --quick) quick=1 ;;
    --only)
        [ $# -ge 2 ] || { usage >&2; exit 2; }
        only=$2
        shift
        ;;
    --out)
        [ $# -ge 2 ] || { usage >&2; exit 2; }
        out=$2
        shift
        ;;
    -h | --help)
        usage
        exit 0
        ;;
    *)
        echo "run.sh: unknown argument $1" >&2
        usage >&2
        exit 2
        ;;
    esac
    shift
done
for lib in ${only//,/ }; do
    case $lib in
    node-redlock | redis-semaphore | redis-py | rdl) ;;
    *)
        echo "run.sh: unknown library $lib" \
            "(known: node-redlock, redis-semaphore, redis-py, rdl)" >&2
        exit 2
        ;;
    esac
done
case $out in
"" | /*) ;;
*) out=$caller_dir/$out ;; # relative to where run.sh was called from
esac
cd "$root"

say() { echo "[peers] $*" >&2; }

# Whether the run includes library $1.
runs() {
    [ -z "$only" ] || [[ ",$only," == *",$1,"* ]]
}

# ---- packages -------------------------------------------------------------
# Debian's python3 (/usr/bin/python3) runs the redis-py driver and
# compare.py: python3-redis is installed for it, not for a python3 that may
# come first on PATH.
python=/usr/bin/python3

apt_install() {
    local sudo=()
    if [ "$(id -u)" -ne 0 ]; then
        command -v sudo >/dev/null || {
            say "not root and no sudo; as root: apt-get install $*"
            exit 1
        }
        sudo=(sudo)
    fi
    say "installing $* (apt-get)"
    if ! "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
        apt-get install -y -q --no-install-recommends "$@" >&2; then
        "${sudo[@]}" apt-get update -q >&2
        "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
            apt-get install -y -q --no-install-recommends "$@" >&2
    fi
}

missing=()
[ -x "$python" ] || missing+=(python3)
if runs redis-py && ! { [ -x "$python" ] && "$python" -c 'import redis' 2>/dev/null; }; then
    missing+=(python3-redis)
fi
if runs node-redlock || runs redis-semaphore; then
    command -v node >/dev/null || missing+=(nodejs)
    command -v npm >/dev/null || missing+=(npm)
fi
command -v redis-server >/dev/null || missing+=(redis-server)
command -v redis-cli >/dev/null || missing+=(redis-tools)
if [ ${#missing[@]} -gt 0 ]; then
    apt_install "${missing[@]}"
fi

# npm ci when node_modules is missing or was installed from another lock.
if runs node-redlock || runs redis-semaphore; then
    stamp=$here/node_modules/.installed-from-lock
    want=$(sha256sum "$here/package-lock.json" | cut -d' ' -f1)
    if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
        say "npm ci in bench/peers"
        (cd "$here" && npm ci --no-audit --no-fund --loglevel=error) >&2
        echo "$want" >"$stamp"
    fi
fi

# ---- rdl-peer ---------------------------------------------------------------
build=${RDL_BUILD_DIR:-build}
jobs=$(nproc 2>/dev/null || echo 2)
if [ ! -f "$build/CMakeCache.txt" ]; then
    say "configuring $build (Release)"
    bash tools/deps.sh >&2
    cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
else
    # Configured again: a tree configured before rdl-peer existed (or
    # without the benchmarks) has no such target.
    cmake -S . -B "$build" -DRDL_BUILD_BENCH=ON >/dev/null
fi
say "building rdl-peer in $build"
cmake --build "$build" -j "$jobs" --target rdl-peer >/dev/null
build_type=$(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$build/CMakeCache.txt")
case ${build_type:-none} in
Release | RelWithDebInfo) ;;
*) say "note: $build is a '${build_type:-no build type}' build (not optimised);" \
    "figures to publish come from a Release build" ;;
esac

# ---- the server -------------------------------------------------------------
# shellcheck source=../../tools/lib/throwaway.sh
. "$root/tools/lib/throwaway.sh"
trap throwaway_stop EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

throwaway_start "[peers]" || exit 1
port=$throwaway_port
say "redis-server $throwaway_pid on 127.0.0.1:$port"

# ---- the run ---------------------------------------------------------------
args=(--port "$port" --rdl-peer "$build/bench/rdl-peer" --python "$python"
    --build-type "${build_type:-none}")
[ $quick -eq 1 ] && args+=(--quick)
[ -n "$only" ] && args+=(--only "$only")
[ -n "$out" ] && args+=(--out "$out")
"$python" "$here/compare.py" "${args[@]}"
