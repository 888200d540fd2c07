#!/usr/bin/env bash
# A local redis-server that speaks only TLS, on 127.0.0.1, with a
# throwaway CA of its own; from Debian's redis-server and the openssl tool.
#
#   bash tools/tls.sh start DIR    make the certificates, start; print the URL
#   bash tools/tls.sh stop DIR     stop what `start DIR` started
#   bash tools/tls.sh status DIR   PING over TLS
#
# start makes, in DIR, a CA (ca.crt, ca.key), a certificate for the
# server (server.crt, server.key; names IP:127.0.0.1 and DNS:localhost)
# and one for a client (client.crt, client.key), all with P-256 keys,
# valid for 30 days. The server listens on a free TLS port (none plain)
# unless RDL_TLS_PORT names one, and asks clients for a certificate
# without requiring one (--tls-auth-clients optional). The URL
# (rediss://127.0.0.1:PORT) is printed and written to DIR/url; a client
# verifies the server with DIR/ca.crt:
#
#   redis-cli --tls --cacert DIR/ca.crt -p PORT ping
#
# stop kills only the process whose pid file is in DIR and which is still
# redis-server on that port, then removes DIR.
set -euo pipefail

usage() {
    echo "usage: bash tools/tls.sh start|stop|status DIR" >&2
    exit 2
}
[ $# -eq 2 ] || usage
cmd=$1
dir=$2
[[ $dir == /* ]] || dir=$PWD/$dir # the server changes to its own dir
host=127.0.0.1
marker=.rdl-tls

log() { echo "tls.sh: $*" >&2; }
cli() {
    env -u REDISCLI_AUTH redis-cli -h "$host" -p "$1" --tls \
        --cacert "$dir/ca.crt" --cert "$dir/client.crt" \
        --key "$dir/client.key" "${@:2}"
}
# shellcheck source=tools/lib/nodes.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/nodes.sh"

# The pid of our server, if it still runs as that redis-server.
our_pid() {
    local pid port
    [ -f "$dir/redis.pid" ] && [ -f "$dir/port" ] || return 1
    pid=$(cat "$dir/redis.pid")
    port=$(cat "$dir/port")
    [ -n "$pid" ] && is_node "$pid" "$port" || return 1
    echo "$pid"
}

# A port below the kernel's ephemeral range (so no outgoing connection
# holds it); away from 23790-23800, which other local tools use.
pick_port() {
    local p
    for _ in $(seq 500); do
        p=$((20000 + RANDOM % 2700))
        port_busy "$p" || {
            echo "$p"
            return 0
        }
    done
    log "no free port found"
    exit 1
}

# The CA, the server's and the client's certificates, in DIR.
make_pki() {
    local ec=(-newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 30)
    (
        cd "$dir"
        umask 077
        openssl req -x509 "${ec[@]}" -keyout ca.key -out ca.crt \
            -subj "/CN=rdl throwaway CA" \
            -addext basicConstraints=critical,CA:TRUE \
            -addext keyUsage=critical,keyCertSign,cRLSign
        openssl req -new "${ec[@]}" -keyout server.key -out server.csr \
            -subj /CN=localhost
        printf '%s\n' "subjectAltName=IP:127.0.0.1,DNS:localhost" \
            "extendedKeyUsage=serverAuth" >server.ext
        openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key \
            -CAcreateserial -out server.crt -days 30 -extfile server.ext
        openssl req -new "${ec[@]}" -keyout client.key -out client.csr \
            -subj /CN=rdl-client
        echo "extendedKeyUsage=clientAuth" >client.ext
        openssl x509 -req -in client.csr -CA ca.crt -CAkey ca.key \
            -CAcreateserial -out client.crt -days 30 -extfile client.ext
        rm -f server.csr server.ext client.csr client.ext
        # The certificates are public.
        chmod 644 ca.crt server.crt client.crt
    ) >"$dir/openssl.log" 2>&1 || {
        cat "$dir/openssl.log" >&2
        exit 1
    }
}

start() {
    local port url
    if [ -e "$dir/$marker" ]; then
        log "$dir already holds a server; stop it first"
        exit 1
    fi
    mkdir -p "$dir"
    touch "$dir/$marker"
    make_pki
    port=${RDL_TLS_PORT:-$(pick_port)}
    echo "$port" >"$dir/port"
    redis-server --port 0 --tls-port "$port" --bind "$host" \
        --daemonize yes --dir "$dir" --pidfile "$dir/redis.pid" \
        --logfile "$dir/redis.log" --save '' --appendonly no \
        --tls-cert-file "$dir/server.crt" --tls-key-file "$dir/server.key" \
        --tls-ca-cert-file "$dir/ca.crt" --tls-auth-clients optional \
        "${sigterm_opts[@]}"
    for _ in $(seq 100); do
        cli "$port" PING 2>/dev/null | grep -q PONG && break
        sleep 0.1
    done
    cli "$port" PING 2>/dev/null | grep -q PONG || {
        log "the server did not start; see $dir/redis.log"
        exit 1
    }
    url="rediss://$host:$port"
    echo "$url" >"$dir/url"
    echo "$url"
}

stop() {
    local pid port
    [ -e "$dir/$marker" ] || {
        log "$dir holds no server started by this script"
        exit 1
    }
    if pid=$(our_pid); then
        port=$(cat "$dir/port")
        terminate "$pid:$port"
    fi
    rm -rf "$dir"
}

status() {
    local port
    [ -e "$dir/$marker" ] || {
        log "$dir holds no server started by this script"
        exit 1
    }
    port=$(cat "$dir/port" 2>/dev/null) || port=unknown
    if our_pid >/dev/null; then
        echo "$host:$port tls $(cli "$port" PING 2>&1 | tr -d '\r')"
    else
        echo "$host:$port down"
    fi
}

case $cmd in
start) start ;;
stop) stop ;;
status) status ;;
*) usage ;;
esac
