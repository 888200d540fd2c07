# A throwaway redis-server, for the scripts that start one of their own
# (tools/demo.sh, tools/check-docs.sh, bench/peers/run.sh). Source it, then:
#
#   throwaway_start DIR LABEL  starts redis-server (the one on PATH) on a
#                              free loopback port with no persistence, its
#                              files and log in DIR; sets throwaway_pid and
#                              throwaway_port. Returns 1, having said why
#                              on stderr (prefixed with LABEL), if it could
#                              not start one.
#   throwaway_stop             stops it: its own PID only.
#
# A port that looked free can be taken before the server binds it, so a
# server that exits at once, or answers as another process, is retried on
# another port.

throwaway_pid=""
throwaway_port=""

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
    local dir=$1 label=$2 attempt port
    if ! command -v redis-server >/dev/null 2>&1; then
        echo "$label: redis-server is not on PATH" >&2
        return 1
    fi
    mkdir -p "$dir"
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
        throwaway_stop
        echo "$label: redis-server on port $port did not start (attempt" \
            "$attempt); log:" >&2
        tail -n 5 "$dir/redis.log" >&2 2>/dev/null || true
    done
    echo "$label: could not start redis-server" >&2
    return 1
}

throwaway_stop() {
    if [ -n "$throwaway_pid" ]; then
        kill "$throwaway_pid" 2>/dev/null || true
        wait "$throwaway_pid" 2>/dev/null || true
    fi
    throwaway_pid=""
    throwaway_port=""
}
