#!/usr/bin/env bash
# A local Redis Sentinel deployment on 127.0.0.1: one master, two replicas
# and three sentinels, from Debian's redis-server and redis-cli; no Docker
# (`docker-compose --profile sentinel` in docker-compose.yml is the same
# shape for users who have it).
#
#   bash tools/sentinel.sh start DIR     start, wait; print the URL
#   bash tools/sentinel.sh stop DIR      stop what `start DIR` started
#   bash tools/sentinel.sh status DIR    the master each sentinel reports,
#                                        the role of each data node
#   bash tools/sentinel.sh failover DIR  SENTINEL FAILOVER, wait until the
#                                        sentinels agree on the new master;
#                                        print its address
#
# start picks six free ports (master, replica, replica, sentinel x3)
# unless RDL_SENTINEL_PORTS="m r1 r2 s1 s2 s3" names them, writes each
# process's files to DIR/<port>/ (a sentinel's config file there too: it
# rewrites it), and waits until every sentinel reports the master with two
# replicas and two other sentinels. The URL
# (redis+sentinel://127.0.0.1:s1,...,127.0.0.1:s3/rdlmaster) is printed
# and written to DIR/url. The master's name is rdlmaster; the sentinels
# see a master down after RDL_SENTINEL_DOWN_AFTER ms (default 1000), a
# quorum of two agreeing. With RDL_SENTINEL_PASSWORD set the data nodes
# require it (and use it towards their master), the sentinels use it
# towards them, and the URL carries it as :password@ (percent-encoded);
# the sentinels themselves ask for none. failover returns once all three
# sentinels report the new master and it answers ROLE as master; the old
# master still runs as one until the sentinels turn it into a replica of
# the new one, some 10 s later (status shows it).
# stop kills only the processes whose pid files are in DIR and which are
# still redis-server on that port, then removes DIR.
set -euo pipefail

usage() {
    echo "usage: bash tools/sentinel.sh start|stop|status|failover DIR" >&2
    exit 2
}
[ $# -eq 2 ] || usage
cmd=$1
dir=$2
[[ $dir == /* ]] || dir=$PWD/$dir # the sentinels' configs name their dir
host=127.0.0.1
name=rdlmaster
down_after=${RDL_SENTINEL_DOWN_AFTER:-1000}
password=${RDL_SENTINEL_PASSWORD:-}
marker=.rdl-sentinel

log() { echo "sentinel.sh: $*" >&2; }
# A data node (with the password, if any; from the environment, so that
# it is not on redis-cli's command line).
cli() {
    local p=$1
    shift
    if [ -n "$password" ]; then
        REDISCLI_AUTH=$password redis-cli -h "$host" -p "$p" "$@"
    else
        env -u REDISCLI_AUTH redis-cli -h "$host" -p "$p" "$@"
    fi
}
# A sentinel (which asks for no password).
scli() {
    local p=$1
    shift
    env -u REDISCLI_AUTH redis-cli -h "$host" -p "$p" "$@"
}
# shellcheck source=tools/lib/nodes.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/nodes.sh"

# The ports start wrote down, by kind: data nodes (master first, as
# started) and sentinels.
data_ports() { cat "$dir/data-ports" 2>/dev/null || true; }
sentinel_ports() { cat "$dir/sentinel-ports" 2>/dev/null || true; }

# Six ports below the kernel's ephemeral range (so no outgoing connection
# holds them); away from 23790-23800, which other local tools use.
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
        port_busy "$p" || picked+=("$p")
    done
}

# $1 percent-encoded for a URL's user information: all but A-Z a-z 0-9
# - . _ ~ as %XX.
urlencode() {
    local LC_ALL=C s=$1 out="" c i # byte by byte
    for ((i = 0; i < ${#s}; i++)); do
        c=${s:i:1}
        case $c in
        [A-Za-z0-9._~-]) out+=$c ;;
        *) out+=$(printf '%%%02X' "'$c") ;;
        esac
    done
    echo "$out"
}

# $1 as a double-quoted string for a Redis config file (\ and " escaped).
conf_quote() {
    local s=${1//\\/\\\\}
    printf '"%s"' "${s//\"/\\\"}"
}

# One value of a field of SENTINEL MASTER's flat field/value reply.
master_field() {
    { scli "$1" SENTINEL MASTER "$name" 2>/dev/null || true; } |
        tr -d '\r' |
        awk -v f="$2" 'NR % 2 == 1 && $0 == f { getline; print; exit }'
}

# host:port of the master sentinel $1 reports; empty if it does not
# answer.
reported_master() {
    { scli "$1" SENTINEL GET-MASTER-ADDR-BY-NAME "$name" 2>/dev/null ||
        true; } | tr -d '\r' | grep -v '^$' | paste -sd: - || true
}

# The first line of ROLE at host:port $1 (master, slave); empty if it does
# not answer.
role_of() {
    { cli "${1##*:}" ROLE 2>/dev/null || true; } | tr -d '\r' | head -n 1
}

# Every sentinel in $1... reports the same master, which is not down, with
# two replicas that are not down and two other sentinels.
settled() {
    local s ref="" m flags
    for s in "$@"; do
        m=$(reported_master "$s")
        [[ $m == "$host:"* ]] || return 1
        if [ -z "$ref" ]; then
            ref=$m
        elif [ "$m" != "$ref" ]; then
            return 1
        fi
        flags=$(master_field "$s" flags)
        [ "$flags" = master ] || return 1
        [ "$(master_field "$s" num-slaves)" = 2 ] || return 1
        [ "$(master_field "$s" num-other-sentinels)" = 2 ] || return 1
        # Both replicas known and up (flags "slave", no s_down).
        [ "$(scli "$s" SENTINEL REPLICAS "$name" | tr -d '\r' |
            awk 'NR % 2 == 1 && $0 == "flags" { getline; if ($0 == "slave") n++ }
                 END { print n + 0 }')" = 2 ] || return 1
    done
    echo "$ref"
}

# Waits up to 10 s until the data node on port $1 answers.
wait_up() {
    local i
    for i in $(seq 100); do
        cli "$1" PING 2>/dev/null | grep -q PONG && return 0
        sleep 0.1
    done
    log "$2 $1 did not start; see $dir/$1/redis.log"
    exit 1
}

start_data() {
    local p=$1 auth=()
    shift
    mkdir -p "$dir/$p"
    if [ -n "$password" ]; then
        # masterauth on the master too: it becomes a replica after a
        # failover.
        auth=(--requirepass "$password" --masterauth "$password")
    fi
    redis-server --port "$p" --bind "$host" --daemonize yes \
        --dir "$dir/$p" --pidfile "$dir/$p/redis.pid" \
        --logfile "$dir/$p/redis.log" --save '' --appendonly no \
        "${sigterm_opts[@]}" "${auth[@]}" "$@"
}

start_sentinel() {
    local p=$1 conf="$dir/$1/sentinel.conf"
    mkdir -p "$dir/$p"
    {
        echo "port $p"
        echo "bind $host"
        echo "daemonize yes"
        echo "dir $(conf_quote "$dir/$p")"
        echo "pidfile $(conf_quote "$dir/$p/redis.pid")"
        echo "logfile $(conf_quote "$dir/$p/redis.log")"
        echo "sentinel monitor $name $host $master 2"
        echo "sentinel down-after-milliseconds $name $down_after"
        echo "sentinel failover-timeout $name 5000"
        echo "sentinel parallel-syncs $name 1"
        if [ -n "$password" ]; then
            echo "sentinel auth-pass $name $(conf_quote "$password")"
        fi
    } >"$conf"
    # It holds the password, and Sentinel rewrites it.
    chmod 600 "$conf"
    redis-server "$conf" --sentinel
}

start() {
    local p i url seeds=() master replicas sentinels userinfo=""
    if [ -e "$dir/$marker" ]; then
        log "$dir already holds a deployment; stop it first"
        exit 1
    fi
    if [[ $password == *[[:cntrl:]]* ]]; then
        log "RDL_SENTINEL_PASSWORD holds control characters"
        exit 2
    fi
    mkdir -p "$dir"
    touch "$dir/$marker"
    if [ -n "${RDL_SENTINEL_PORTS:-}" ]; then
        read -r -a picked <<<"$RDL_SENTINEL_PORTS"
        [ ${#picked[@]} -eq 6 ] || {
            log "RDL_SENTINEL_PORTS needs six ports: m r1 r2 s1 s2 s3"
            exit 2
        }
    else
        pick_ports
    fi
    master=${picked[0]}
    replicas=("${picked[@]:1:2}")
    sentinels=("${picked[@]:3:3}")
    printf '%s\n' "$master" "${replicas[@]}" >"$dir/data-ports"
    printf '%s\n' "${sentinels[@]}" >"$dir/sentinel-ports"

    start_data "$master"
    wait_up "$master" master
    for p in "${replicas[@]}"; do
        start_data "$p" --replicaof "$host" "$master"
    done
    # The replicas are in sync before the sentinels start, so that their
    # first INFO of the master lists both (the next one is 10 s later).
    for p in "${replicas[@]}"; do
        wait_up "$p" replica
        for i in $(seq 150); do
            cli "$p" INFO replication 2>/dev/null |
                grep -q '^master_link_status:up' && break
            sleep 0.1
        done
        cli "$p" INFO replication | grep -q '^master_link_status:up' || {
            log "replica $p did not sync; see $dir/$p/redis.log"
            exit 1
        }
    done
    for p in "${sentinels[@]}"; do
        start_sentinel "$p"
    done
    for p in "${sentinels[@]}"; do
        for i in $(seq 100); do
            scli "$p" PING 2>/dev/null | grep -q PONG && break
            sleep 0.1
        done
        scli "$p" PING >/dev/null || {
            log "sentinel $p did not start; see $dir/$p/redis.log"
            exit 1
        }
        seeds+=("$host:$p")
    done
    # Sentinels find each other through hello messages every 2 s.
    for i in $(seq 300); do
        settled "${sentinels[@]}" >/dev/null && break
        sleep 0.1
    done
    settled "${sentinels[@]}" >/dev/null || {
        log "the sentinels did not agree within 30 s"
        exit 1
    }
    [ -z "$password" ] || userinfo=":$(urlencode "$password")@"
    url="redis+sentinel://$userinfo$(
        IFS=,
        echo "${seeds[*]}"
    )/$name"
    echo "$url" >"$dir/url"
    echo "$url"
}

stop() {
    local p pid nodes=()
    [ -e "$dir/$marker" ] || {
        log "$dir holds no deployment started by this script"
        exit 1
    }
    # Sentinels first, so none of them reacts to the data nodes going
    # away; then all of those at once.
    for p in $(sentinel_ports); do
        pid=$(node_pid "$p") || continue
        nodes+=("$pid:$p")
    done
    terminate "${nodes[@]}"
    nodes=()
    for p in $(data_ports); do
        pid=$(node_pid "$p") || continue
        nodes+=("$pid:$p")
    done
    terminate "${nodes[@]}"
    rm -rf "$dir"
}

status() {
    local p m
    [ -e "$dir/$marker" ] || {
        log "$dir holds no deployment started by this script"
        exit 1
    }
    for p in $(sentinel_ports); do
        if node_pid "$p" >/dev/null; then
            m=$(reported_master "$p")
            echo "$host:$p sentinel master ${m:-unknown}"
        else
            echo "$host:$p sentinel down"
        fi
    done
    for p in $(data_ports); do
        if node_pid "$p" >/dev/null; then
            echo "$host:$p $(role_of "$host:$p")"
        else
            echo "$host:$p down"
        fi
    done
}

failover() {
    local s old new="" i ok
    [ -e "$dir/$marker" ] || {
        log "$dir holds no deployment started by this script"
        exit 1
    }
    read -r -a sentinels <<<"$(sentinel_ports | tr '\n' ' ')"
    s=${sentinels[0]}
    old=$(reported_master "$s")
    [ -n "$old" ] || {
        log "sentinel $s reports no master"
        exit 1
    }
    # NOGOODSLAVE or INPROG come back as an error reply, which redis-cli
    # prints and exits 0 for: look at the reply.
    ok=$(scli "$s" SENTINEL FAILOVER "$name" 2>&1 | tr -d '\r') || true
    [ "$ok" = OK ] || {
        log "SENTINEL FAILOVER on $s: $ok"
        exit 1
    }
    for i in $(seq 300); do
        new=$(agreed_master "${sentinels[@]}") &&
            [ "$new" != "$old" ] && [ "$(role_of "$new")" = master ] && break
        new=""
        sleep 0.1
    done
    [ -n "$new" ] || {
        log "the sentinels did not agree on a new master within 30 s"
        exit 1
    }
    echo "$new"
}

# The master all sentinels in $1... report, if they agree.
agreed_master() {
    local s m ref=""
    for s in "$@"; do
        m=$(reported_master "$s")
        [ -n "$m" ] || return 1
        if [ -z "$ref" ]; then
            ref=$m
        elif [ "$m" != "$ref" ]; then
            return 1
        fi
    done
    echo "$ref"
}

case $cmd in
start) start ;;
stop) stop ;;
status) status ;;
failover) failover ;;
*) usage ;;
esac
