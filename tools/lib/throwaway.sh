# A throwaway redis-server, for the scripts that start one of their own
# (tools/demo.sh, tools/check-docs.sh, bench/peers/run.sh). Source it, then:
#
#   throwaway_start LABEL  starts redis-server (the one on PATH) on a free
#                          loopback port with no persistence, its log in a
#                          temporary directory; sets throwaway_pid and
#                          throwaway_port. Returns 1, having said why on
#                          stderr (prefixed with LABEL), if it could not
#                          start one.
#   throwaway_stop         stops it (its own PID only) and removes the
#                          directory; safe to call at any time, e.g. from
#                          an EXIT trap.
#
# A port that looked free can be taken before the server binds it, so a
# server that exits at once, or answers as another process, is retried on
# another port.

throwaway_pid=""
throwaway_port=""
throwaway_dir=""

# True once the server (pid $1, port $2) answers; false if it exits or
# stays silent for 5 s. The answer must come from that very process: if
# another server took the port first, ours fails to bind while the other
# answers.
throwaway_ready() {
    local tries=50
    while [ $tries -gt 0 ] && kill -0 "$1" 2>/dev/null; do
        if redis-cli -h 127.0.0.1 -p "$2" info server 2>/dev/null |
            tr -d '\r' | grep -qx "process_id:$1"; then
            return 0
        fi
        sleep 0.1
        tries=$((tries - 1))
    done
    return 1
}

throwaway_start() {
    local label=$1 attempt port dir
    if ! command -v redis-server >/dev/null 2>&1; then
        echo "$label: redis-server is not on PATH" >&2
        return 1
    fi
    throwaway_dir=$(mktemp -d "${TMPDIR:-/tmp}/rdl-redis.XXXXXX")
    dir=$throwaway_dir
    for attempt in 1 2 3 4 5 6 7 8 9 10; do
        port=$((20000 + (RANDOM * 32768 + RANDOM) % 40001))
        (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && continue # taken
        redis-server --port "$port" --bind 127.0.0.1 --save '' \
            --appendonly no --dir "$dir" --daemonize no \
            --logfile "$dir/redis.log" </dev/null &
        throwaway_pid=$!
        if throwaway_ready "$throwaway_pid" "$port"; then
            throwaway_port=$port
            return 0
        fi
        echo "$label: redis-server on port $port did not start (attempt" \
            "$attempt); log:" >&2
        tail -n 5 "$dir/redis.log" >&2 2>/dev/null || true
        throwaway_kill
    done
    echo "$label: could not start redis-server" >&2
    return 1
}

# The server's process only (its own PID), keeping the directory.
throwaway_kill() {
    if [ -n "$throwaway_pid" ]; then
        kill "$throwaway_pid" 2>/dev/null || true
        wait "$throwaway_pid" 2>/dev/null || true
    fi
    throwaway_pid=""
    throwaway_port=""
}

throwaway_stop() {
    throwaway_kill
    if [ -n "$throwaway_dir" ]; then
        rm -rf "$throwaway_dir"
    fi
    throwaway_dir=""
}
