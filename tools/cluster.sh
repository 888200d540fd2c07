#!/usr/bin/env bash
# A local 6-node Redis Cluster (3 masters, 3 replicas) on 127.0.0.1, from
# Debian's redis-server and redis-cli; no Docker (docker-compose.yml at the
# root is the same cluster for users who have it).
#
#   bash tools/cluster.sh start DIR    start, create, wait; print the URL
#   bash tools/cluster.sh stop DIR     stop what `start DIR` started
#   bash tools/cluster.sh status DIR   cluster_state and role of each node
#
# start picks six free ports (each with its bus port, port + 10000, free
# too) unless RDL_CLUSTER_PORTS="p1 ... p6" names them, writes each node's
# files to DIR/<port>/, and waits until every node reports cluster_state:ok,
# all agree on which master serves which slots, and every replica's link
# is up. The URL (redis+cluster://...) is printed and written to DIR/url.
# stop kills only the processes whose pid files are in DIR and which are
# still redis-server on that port, then removes DIR. The node timeout is
# RDL_CLUSTER_NODE_TIMEOUT ms (default 2000).
set -euo pipefail

usage() {
    echo "usage: bash tools/cluster.sh start|stop|status DIR" >&2
    exit 2
}
[ $# -eq 2 ] || usage
cmd=$1
dir=$2
host=127.0.0.1
node_timeout=${RDL_CLUSTER_NODE_TIMEOUT:-2000}
marker=.rdl-cluster

log() { echo "cluster.sh: $*" >&2; }
cli() {
    local p=$1
    shift
    redis-cli -h "$host" -p "$p" "$@"
}
# shellcheck source=tools/lib/nodes.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/nodes.sh"

ports_of() {
    local d
    for d in "$dir"/*/; do
        d=${d%/}
        d=${d##*/}
        [[ $d =~ ^[0-9]+$ ]] && echo "$d"
    done
}

# Six ports below the kernel's ephemeral range (so no outgoing connection
# holds them) whose bus ports are free too; away from 23790-23800, which
# other local tools use.
pick_ports() {
    local tries=0 p
    picked=()
    while [ ${#picked[@]} -lt 6 ]; do
        tries=$((tries + 1))
        [ $tries -lt 500 ] || {
            log "no free ports found"
            exit 1
        }
        p=$((20000 + RANDOM % 2700))
        [[ " ${picked[*]} " == *" $p "* ]] && continue
        port_busy "$p" || port_busy $((p + 10000)) || picked+=("$p")
    done
}

# "addr slots..." of the masters node $1 sees, sorted: equal everywhere
# when the nodes agree.
view() {
    cli "$1" CLUSTER NODES | awk '$3 ~ /master/ && $3 !~ /fail/ {
        split($2, a, "@"); s = a[1];
        for (i = 9; i <= NF; i++) s = s " " $i;
        print s }' | sort
}

settled() {
    local p ref="" v
    for p in "$@"; do
        cli "$p" CLUSTER INFO 2>/dev/null | grep -q '^cluster_state:ok' ||
            return 1
        v=$(view "$p") || return 1
        [ -n "$v" ] || return 1
        if [ -z "$ref" ]; then
            ref=$v
        elif [ "$v" != "$ref" ]; then
            return 1
        fi
        if cli "$p" INFO replication | grep -q '^role:slave'; then
            cli "$p" INFO replication | grep -q '^master_link_status:up' ||
                return 1
        fi
    done
}

start() {
    local p addrs=() url
    if [ -e "$dir/$marker" ]; then
        log "$dir already holds a cluster; stop it first"
        exit 1
    fi
    mkdir -p "$dir"
    touch "$dir/$marker"
    if [ -n "${RDL_CLUSTER_PORTS:-}" ]; then
        read -r -a picked <<<"$RDL_CLUSTER_PORTS"
        [ ${#picked[@]} -eq 6 ] || {
            log "RDL_CLUSTER_PORTS needs six ports"
            exit 2
        }
    else
        pick_ports
    fi
    for p in "${picked[@]}"; do
        mkdir -p "$dir/$p"
        redis-server --port "$p" --bind "$host" --daemonize yes \
            --dir "$dir/$p" --pidfile "$dir/$p/redis.pid" \
            --logfile "$dir/$p/redis.log" --save '' --appendonly no \
            --cluster-enabled yes --cluster-config-file nodes.conf \
            --cluster-node-timeout "$node_timeout" \
            "${sigterm_opts[@]}"
        addrs+=("$host:$p")
    done
    for p in "${picked[@]}"; do
        for _ in $(seq 100); do
            cli "$p" PING >/dev/null 2>&1 && break
            sleep 0.1
        done
        cli "$p" PING >/dev/null || {
            log "node $p did not start; see $dir/$p/redis.log"
            exit 1
        }
    done
    redis-cli --cluster create "${addrs[@]}" --cluster-replicas 1 \
        --cluster-yes >"$dir/create.log" 2>&1 || {
        cat "$dir/create.log" >&2
        exit 1
    }
    for _ in $(seq 300); do
        settled "${picked[@]}" && break
        sleep 0.1
    done
    settled "${picked[@]}" || {
        log "the nodes did not agree within 30 s"
        exit 1
    }
    url="redis+cluster://$(
        IFS=,
        echo "${addrs[*]}"
    )"
    echo "$url" >"$dir/url"
    echo "$url"
}

stop() {
    local p pid nodes=()
    [ -e "$dir/$marker" ] || {
        log "$dir holds no cluster started by this script"
        exit 1
    }
    for p in $(ports_of); do
        pid=$(node_pid "$p") || continue
        nodes+=("$pid:$p")
    done
    terminate "${nodes[@]}"
    rm -rf "$dir"
}

status() {
    local p state role
    for p in $(ports_of); do
        if node_pid "$p" >/dev/null; then
            state=$(cli "$p" CLUSTER INFO | tr -d '\r' |
                awk -F: '$1 == "cluster_state" {print $2}')
            role=$(cli "$p" ROLE | head -n 1)
            echo "$host:$p $role $state"
        else
            echo "$host:$p down"
        fi
    done
}

case $cmd in
start) start ;;
stop) stop ;;
status) status ;;
*) usage ;;
esac
