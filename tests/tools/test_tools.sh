#!/usr/bin/env bash
# Tests of the deployment scripts in tools/, one case per CTest test:
#
#   bash tests/tools/test_tools.sh ROOT CASE TMPDIR
#
#   sentinel       tools/sentinel.sh start, status, failover, stop
#   sentinel_auth  the same with RDL_SENTINEL_PASSWORD (no failover)
#   tls            tools/tls.sh start, PING over TLS, stop
#
# Each case runs the script as a user would, into a directory of its own,
# and checks that stop leaves none of the script's processes behind; on
# failure it stops what it started. Without redis-server, redis-cli (or,
# for tls, openssl) the case is skipped, unless CI is set: then it fails.
set -euo pipefail

root=$1
case_name=$2
tmp=$(mktemp -d "${3:-/tmp}/tools.XXXXXX")
dir=$tmp/deploy # the scripts create it, with their marker
script=""

cleanup() {
    if [ -n "$script" ] && [ -e "$dir" ]; then
        bash "$root/tools/$script" stop "$dir" >/dev/null 2>&1 || true
    fi
    rm -rf "$tmp"
}
trap cleanup EXIT

fail() {
    echo "FAIL ($case_name): $*" >&2
    exit 1
}

need() {
    local t
    for t in "$@"; do
        command -v "$t" >/dev/null && continue
        [ -z "${CI:-}" ] || fail "$t missing; CI is set"
        echo "[  SKIPPED ] $t missing"
        exit 0
    done
}

# The pids in DIR's pid files, into pids, before stop removes DIR.
read_pids() {
    read -r -a pids <<<"$(cat "$dir"/redis.pid "$dir"/*/redis.pid \
        2>/dev/null | tr '\n' ' ')"
    [ ${#pids[@]} -gt 0 ] || fail "no pid files in $dir"
}

# stop_and_check PIDS...: the script's stop, then none of PIDS is still a
# redis-server and DIR is gone.
stop_and_check() {
    local pid
    bash "$root/tools/$script" stop "$dir" || fail "stop failed"
    for pid in "$@"; do
        if tr '\0' ' ' 2>/dev/null <"/proc/$pid/cmdline" |
            grep redis-server >/dev/null; then
            fail "redis-server $pid still runs after stop"
        fi
    done
    [ ! -e "$dir" ] || fail "$dir left behind"
}

# The sentinel cases: start; the URL; status.
sentinel_start() {
    local url_re=$1 out
    url=$(bash "$root/tools/sentinel.sh" start "$dir") || fail "start failed"
    echo "url: $url"
    [[ $url =~ $url_re ]] || fail "URL '$url' does not match $url_re"
    [ "$(cat "$dir/url")" = "$url" ] || fail "DIR/url is '$(cat "$dir/url")'"
    # A second start into the same DIR is refused.
    if bash "$root/tools/sentinel.sh" start "$dir" >/dev/null 2>&1; then
        fail "a second start into $dir succeeded"
    fi
    out=$(bash "$root/tools/sentinel.sh" status "$dir") || fail "status failed"
    echo "$out"
    master=$(awk '$2 == "sentinel" { print $4 }' <<<"$out" | sort -u)
    [ "$(awk '$2 == "sentinel"' <<<"$out" | wc -l)" -eq 3 ] ||
        fail "status lists no 3 sentinels"
    if [ "$(wc -l <<<"$master")" -ne 1 ] || [[ $master != 127.0.0.1:* ]]; then
        fail "the sentinels report different masters: $master"
    fi
    grep -qx "$master master" <<<"$out" ||
        fail "$master does not report the master role"
    [ "$(grep -c ' slave$' <<<"$out")" -eq 2 ] || fail "not 2 replicas"
}

seeds_re='127\.0\.0\.1:[0-9]+,127\.0\.0\.1:[0-9]+,127\.0\.0\.1:[0-9]+/rdlmaster$'

case $case_name in
sentinel)
    need redis-server redis-cli
    script=sentinel.sh
    unset RDL_SENTINEL_PASSWORD RDL_SENTINEL_PORTS
    sentinel_start "^redis\\+sentinel://$seeds_re"
    new=$(bash "$root/tools/sentinel.sh" failover "$dir") ||
        fail "failover failed"
    echo "new master: $new"
    if [[ $new != 127.0.0.1:* ]] || [ "$new" = "$master" ]; then
        fail "failover printed '$new' (was $master)"
    fi
    out=$(bash "$root/tools/sentinel.sh" status "$dir")
    echo "$out"
    [ "$(awk '$2 == "sentinel" { print $4 }' <<<"$out" | sort -u)" = "$new" ] ||
        fail "the sentinels do not all report $new"
    grep -qx "$new master" <<<"$out" || fail "$new is not master"
    read_pids
    stop_and_check "${pids[@]}"
    ;;
sentinel_auth)
    need redis-server redis-cli
    script=sentinel.sh
    unset RDL_SENTINEL_PORTS
    export RDL_SENTINEL_PASSWORD='s3cret:/@x'
    sentinel_start "^redis\\+sentinel://:s3cret%3A%2F%40x@$seeds_re"
    port=${master##*:}
    env -u REDISCLI_AUTH redis-cli -p "$port" PING 2>&1 | grep -q NOAUTH ||
        fail "the master answers without the password"
    REDISCLI_AUTH=$RDL_SENTINEL_PASSWORD redis-cli -p "$port" PING |
        grep -q PONG || fail "the master does not take the password"
    read_pids
    stop_and_check "${pids[@]}"
    ;;
tls)
    need redis-server redis-cli openssl
    script=tls.sh
    unset RDL_TLS_PORT
    url=$(bash "$root/tools/tls.sh" start "$dir") || fail "start failed"
    echo "url: $url"
    [[ $url =~ ^rediss://127\.0\.0\.1:([0-9]+)$ ]] || fail "URL '$url'"
    port=${BASH_REMATCH[1]}
    [ "$(cat "$dir/url")" = "$url" ] || fail "DIR/url is '$(cat "$dir/url")'"
    for f in ca.crt client.crt client.key; do
        [ -s "$dir/$f" ] || fail "no $f in DIR"
    done
    reply=$(redis-cli --tls --cacert "$dir/ca.crt" -p "$port" ping 2>&1)
    [ "$reply" = PONG ] || fail "ping over TLS: $reply"
    # Verified by name too, and with the client certificate.
    reply=$(redis-cli --tls --cacert "$dir/ca.crt" --cert "$dir/client.crt" \
        --key "$dir/client.key" -h localhost -p "$port" ping 2>&1)
    [ "$reply" = PONG ] || fail "ping as localhost with a client cert: $reply"
    # Nothing in plain text.
    reply=$(timeout 5 redis-cli -p "$port" ping 2>&1) || true
    [ "$reply" != PONG ] || fail "the server answers without TLS"
    read_pids
    stop_and_check "${pids[@]}"
    ;;
*)
    fail "unknown case"
    ;;
esac
echo "ok: $case_name"
