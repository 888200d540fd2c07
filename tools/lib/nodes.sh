# shellcheck shell=bash disable=SC2154  # $host and $dir come from the caller
# Process helpers shared by tools/cluster.sh, tools/sentinel.sh and
# tools/tls.sh: sourced, not run. The caller sets $host (the address the
# servers listen on) and $dir (the deployment's directory).
#
# The scripts only ever stop processes they started: a pid from one of
# their pid files counts only while /proc says it is still a redis-server
# on the expected port, so a pid the kernel gave to another program since
# is left alone.

port_busy() { (exec 3<>"/dev/tcp/$host/$1") 2>/dev/null; }

# 1 if pid $1 is still a redis-server (or sentinel) on port $2, not a
# reused pid.
is_node() {
    [ -r "/proc/$1/cmdline" ] &&
        tr '\0' ' ' 2>/dev/null <"/proc/$1/cmdline" |
        grep -Eq "redis-server.*:$2([^0-9]|\$)"
}

# 1 while pid $1 is our node on port $2 or still exiting (its command line
# is empty then); 0 once it is gone or the pid belongs to another program.
exiting() {
    local cmd
    kill -0 "$1" 2>/dev/null || return 1
    cmd=$(tr '\0' ' ' 2>/dev/null <"/proc/$1/cmdline") || return 1
    [ -z "$cmd" ] || is_node "$1" "$2"
}

# The pid of our node on port $1 (from $dir/$1/redis.pid), if it still
# runs as that redis-server.
node_pid() {
    local f="$dir/$1/redis.pid" pid
    [ -f "$f" ] || return 1
    pid=$(cat "$f")
    [ -n "$pid" ] && is_node "$pid" "$1" || return 1
    echo "$pid"
}

# terminate PID:PORT...: SIGTERM to all at once (a node takes a moment to
# exit), then waits until each is gone, not only exiting (an exiting
# process has an empty command line for a while), so its ports are free
# on return; SIGKILL for one still there after 10 s.
terminate() {
    local pp pid port
    for pp in "$@"; do
        kill "${pp%%:*}" 2>/dev/null || true
    done
    for pp in "$@"; do
        pid=${pp%%:*}
        port=${pp##*:}
        for _ in $(seq 100); do
            exiting "$pid" "$port" || break
            sleep 0.1
        done
        if is_node "$pid" "$port"; then
            kill -9 "$pid"
        fi
    done
}

# The options that make a node stop at once on SIGTERM: on Redis 7.0 and
# later (and Valkey) --shutdown-on-sigterm "nosave now", without which a
# master waits up to 10 s for its replicas; Redis 6.2 has no such option
# and does not wait. Set from the redis-server on PATH.
sigterm_opts=()
if redis-server --version 2>/dev/null | grep -Eq ' v=([7-9]|[1-9][0-9])\.'; then
    sigterm_opts=(--shutdown-on-sigterm "nosave now")
fi
