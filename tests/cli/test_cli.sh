#!/usr/bin/env bash
# Tests of rdl(1), one case per CTest test:
#
#   bash tests/cli/test_cli.sh PATH/TO/rdl CASE TMPDIR
#
# Each case starts its own redis-server on a free loopback port and stops
# it (and every process the case started) on exit. Timings are bounds on
# what the tool promises (a lease, "at once"), never performance checks.
set -euo pipefail

rdl=$1
case_name=$2
tmp=$(mktemp -d "${3:-/tmp}/cli.XXXXXX")
server_pid=""
pids=()

cleanup() {
    local p
    for p in "${pids[@]}"; do
        kill -9 "$p" 2>/dev/null || true
    done
    if [ -n "$server_pid" ]; then
        kill "$server_pid" 2>/dev/null || true
        wait "$server_pid" 2>/dev/null || true
    fi
    rm -rf "$tmp"
}
trap cleanup EXIT

fail() {
    echo "FAIL ($case_name): $*" >&2
    exit 1
}

now_ms() { echo $(( $(date +%s%N) / 1000000 )); }

# start_server [ARGS...]: a redis-server with these extra arguments; with
# --tls-port auto also on a TLS port ($tls_port).
start_server() {
    local port tries args
    for tries in 1 2 3 4 5 6 7 8 9 10; do
        port=$(( 20000 + RANDOM % 40000 ))
        tls_port=$(( port + 1 ))
        args=("${@/#auto/$tls_port}")
        redis-server --port "$port" --bind 127.0.0.1 --save "" \
            --appendonly no --dir "$tmp" "${args[@]}" >"$tmp/redis.log" 2>&1 &
        server_pid=$!
        for _ in $(seq 50); do
            if redis-cli -p "$port" ping 2>/dev/null | grep PONG >/dev/null; then
                export RDL_URL="redis://127.0.0.1:$port"
                return 0
            fi
            kill -0 "$server_pid" 2>/dev/null || break
            sleep 0.05
        done
        kill "$server_pid" 2>/dev/null || true
        wait "$server_pid" 2>/dev/null || true
        server_pid=""
    done
    fail "could not start redis-server"
}

# expect_code WANT CMD...: runs CMD, checks its exit status.
expect_code() {
    local want=$1 got=0
    shift
    "$@" >"$tmp/out" 2>"$tmp/err" || got=$?
    [ "$got" -eq "$want" ] ||
        fail "'$*' exited $got, expected $want; stderr: $(cat "$tmp/err")"
}

# wait_locked NAME [KIND]: until rdl info says NAME is held.
wait_locked() {
    local i
    for i in $(seq 200); do
        if "$rdl" info --kind "${2:-lock}" "$1" | grep 'locked: *yes' >/dev/null; then
            return 0
        fi
        sleep 0.02
    done
    fail "$1 never became held"
}

# make_pki: a CA and a server certificate for 127.0.0.1 in $tmp.
make_pki() {
    local ec=(-newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes)
    (
        cd "$tmp"
        openssl req -x509 "${ec[@]}" -keyout ca.key -out ca.crt -subj /CN=ca \
            -days 2
        openssl req -new "${ec[@]}" -keyout server.key -out server.csr \
            -subj /CN=localhost
        echo "subjectAltName=IP:127.0.0.1" >server.ext
        openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key \
            -CAcreateserial -out server.crt -days 2 -extfile server.ext
    ) >"$tmp/openssl.log" 2>&1 || fail "openssl: $(cat "$tmp/openssl.log")"
}

if [ "$case_name" = tls ]; then
    make_pki
    start_server --tls-port auto --tls-cert-file "$tmp/server.crt" \
        --tls-key-file "$tmp/server.key" --tls-ca-cert-file "$tmp/ca.crt" \
        --tls-auth-clients no
else
    start_server
fi

case $case_name in
serializes)
    # Two runs of a 2 s command on one name, started together, run one
    # after the other: their [start, end] intervals do not overlap.
    for i in 1 2; do
        "$rdl" run serial -- sh -c "echo start \$(date +%s%N) >> '$tmp/log.$i';
            sleep 2; echo end \$(date +%s%N) >> '$tmp/log.$i'" &
        pids+=($!)
    done
    wait "${pids[@]}" || fail "a run failed"
    pids=()
    read -r _ s1 <"$tmp/log.1"; e1=$(sed -n 2p "$tmp/log.1" | cut -d' ' -f2)
    read -r _ s2 <"$tmp/log.2"; e2=$(sed -n 2p "$tmp/log.2" | cut -d' ' -f2)
    if [ "$s1" -lt "$s2" ]; then
        [ "$e1" -le "$s2" ] || fail "runs overlapped: $s1-$e1 and $s2-$e2"
    else
        [ "$e2" -le "$s1" ] || fail "runs overlapped: $s1-$e1 and $s2-$e2"
    fi
    ;;
wait_zero)
    # Held elsewhere: --wait 0 exits 75 at once and does not run CMD.
    "$rdl" run held -- sleep 3 &
    pids+=($!)
    wait_locked held
    t0=$(now_ms)
    expect_code 75 "$rdl" run --wait 0 held -- touch "$tmp/ran"
    t1=$(now_ms)
    [ ! -e "$tmp/ran" ] || fail "CMD ran without the lock"
    [ $((t1 - t0)) -lt 1500 ] || fail "--wait 0 took $((t1 - t0)) ms"
    grep "rdl: held: not acquired" "$tmp/err" >/dev/null ||
        fail "message: $(cat "$tmp/err")"
    expect_code 75 "$rdl" run --wait 300 held -- touch "$tmp/ran"
    [ ! -e "$tmp/ran" ] || fail "CMD ran without the lock"
    ;;
status)
    # CMD's status passes through; a signal that kills it gives 128+sig.
    expect_code 0 "$rdl" run st -- true
    expect_code 7 "$rdl" run st -- sh -c 'exit 7'
    expect_code 143 "$rdl" run st -- sh -c 'kill -TERM $$'
    expect_code 137 "$rdl" run st -- sh -c 'kill -KILL $$'
    expect_code 127 "$rdl" run st -- /nonexistent/command
    # The lock is free after each.
    expect_code 0 "$rdl" run --wait 0 st -- true
    ;;
signals)
    # SIGINT and SIGTERM sent to rdl reach CMD.
    "$rdl" run sig -- sh -c "trap 'echo int >> \"$tmp/got\"; exit 5' INT;
        echo \$\$ > '$tmp/cmd.pid'; while :; do sleep 0.05; done" &
    rp=$!
    pids+=($rp)
    wait_locked sig
    while [ ! -s "$tmp/cmd.pid" ]; do sleep 0.02; done
    kill -INT "$rp"
    code=0
    wait "$rp" || code=$?
    pids=()
    [ "$code" -eq 5 ] || fail "rdl exited $code after SIGINT, expected 5"
    grep int "$tmp/got" >/dev/null || fail "CMD did not get SIGINT"
    expect_code 0 "$rdl" run --wait 0 sig -- true
    ;;
sigkill)
    # rdl killed with SIGKILL: the lock frees within one lease.
    "$rdl" run --lease 1000 dead -- sh -c "echo \$\$ > '$tmp/cmd.pid';
        exec sleep 30" &
    rp=$!
    pids+=($rp)
    wait_locked dead
    while [ ! -s "$tmp/cmd.pid" ]; do sleep 0.02; done
    pids+=("$(cat "$tmp/cmd.pid")")
    kill -9 "$rp"
    t0=$(now_ms)
    expect_code 0 "$rdl" run --wait 5000 dead -- true
    t1=$(now_ms)
    [ $((t1 - t0)) -le 1600 ] || fail "freed after $((t1 - t0)) ms (lease 1000)"
    ;;
on_lost)
    # Force-released under a running CMD: SIGTERM by default, SIGKILL with
    # --on-lost kill, nothing with ignore; a message on stderr each time.
    for mode in term kill ignore; do
        "$rdl" run --lease 600 --on-lost "$mode" lost -- sh -c \
            "trap 'exit 9' TERM; sleep 3 & wait; exit 0" 2>"$tmp/err.$mode" &
        rp=$!
        wait_locked lost
        "$rdl" release --force lost >/dev/null
        code=0
        wait "$rp" || code=$?
        case $mode in
        term) want=9 ;;
        kill) want=137 ;;
        ignore) want=0 ;;
        esac
        [ "$code" -eq "$want" ] ||
            fail "--on-lost $mode: exit $code, expected $want"
        grep "lock was lost" "$tmp/err.$mode" >/dev/null ||
            fail "--on-lost $mode: no message: $(cat "$tmp/err.$mode")"
    done
    ;;
tokens)
    # Fencing tokens in CMD's environment strictly increase; the name too.
    prev=0
    for i in 1 2 3 4 5; do
        "$rdl" run tok -- sh -c 'echo "$RDL_LOCK_NAME $RDL_FENCING_TOKEN"' \
            >"$tmp/out"
        read -r name token <"$tmp/out"
        [ "$name" = tok ] || fail "RDL_LOCK_NAME=$name"
        [ "$token" -gt "$prev" ] || fail "token $token after $prev"
        prev=$token
    done
    ;;
kinds)
    # Every kind runs; readers share, a writer waits for them.
    for k in lock fair read write; do
        expect_code 0 "$rdl" run --kind "$k" kinds-$k -- true
    done
    "$rdl" run --kind read rw -- sleep 2 &
    pids+=($!)
    wait_locked rw read
    expect_code 0 "$rdl" run --kind read --wait 0 rw -- true
    expect_code 75 "$rdl" run --kind write --wait 0 rw -- true
    expect_code 0 "$rdl" info --kind write --json rw
    grep '"holders":1' "$tmp/out" >/dev/null || fail "info: $(cat "$tmp/out")"
    ;;
semaphore)
    # At most N holders across processes: two hold, a third is refused;
    # info shows the permits in use and the total.
    sem=(--kind semaphore --permits 2)
    "$rdl" run "${sem[@]}" --on-lost ignore sem -- sleep 3 &
    pids+=($!)
    "$rdl" run "${sem[@]}" --on-lost ignore sem -- sleep 3 &
    pids+=($!)
    for i in $(seq 200); do
        "$rdl" info --kind semaphore sem >"$tmp/out"
        grep 'permits: *2 in use of 2' "$tmp/out" >/dev/null && break
        [ "$i" -lt 200 ] || fail "two holders never held: $(cat "$tmp/out")"
        sleep 0.02
    done
    expect_code 75 "$rdl" run "${sem[@]}" --wait 0 sem -- true
    expect_code 0 "$rdl" info --kind semaphore --json sem
    grep '"holders":2' "$tmp/out" >/dev/null || fail "$(cat "$tmp/out")"
    grep '"permits":2' "$tmp/out" >/dev/null || fail "$(cat "$tmp/out")"
    expect_code 0 "$rdl" run "${sem[@]}" --wait 10000 sem -- true
    expect_code 0 "$rdl" release --kind semaphore --force sem
    ;;
info_release)
    expect_code 0 "$rdl" info --json free
    grep '"locked":false' "$tmp/out" >/dev/null || fail "$(cat "$tmp/out")"
    "$rdl" run --lease 5000 --on-lost ignore busy -- sleep 2 &
    pids+=($!)
    wait_locked busy
    expect_code 0 "$rdl" info busy
    grep 'holders: *1' "$tmp/out" >/dev/null || fail "$(cat "$tmp/out")"
    grep 'hold count: *1' "$tmp/out" >/dev/null || fail "$(cat "$tmp/out")"
    expect_code 0 "$rdl" info --json busy
    grep '"hold_count":1' "$tmp/out" >/dev/null || fail "$(cat "$tmp/out")"
    expect_code 0 "$rdl" release --force busy
    grep '^freed busy' "$tmp/out" >/dev/null || fail "$(cat "$tmp/out")"
    expect_code 0 "$rdl" release --force busy
    grep 'was not held' "$tmp/out" >/dev/null || fail "$(cat "$tmp/out")"
    ;;
bad_usage)
    # Bad options and arguments: usage on stderr, exit 64.
    expect_code 64 "$rdl"
    expect_code 64 "$rdl" frobnicate
    expect_code 64 "$rdl" --bogus info x
    expect_code 64 "$rdl" run
    expect_code 64 "$rdl" run name
    expect_code 64 "$rdl" run name --
    expect_code 64 "$rdl" run --wait soon name -- true
    expect_code 64 "$rdl" run --lease 5 name -- true
    expect_code 64 "$rdl" run --on-lost maybe name -- true
    expect_code 64 "$rdl" run --kind nope name -- true
    expect_code 64 "$rdl" run --kind semaphore name -- true
    expect_code 64 "$rdl" run --permits 2 name -- true
    expect_code 64 "$rdl" run --kind semaphore --permits 0 name -- true
    expect_code 64 "$rdl" info --kind semaphore --permits x name
    expect_code 64 "$rdl" info
    expect_code 64 "$rdl" release name
    expect_code 64 "$rdl" --timeout 0 info x
    expect_code 64 "$rdl" run '' -- true
    grep -i usage "$tmp/err" >/dev/null || true
    expect_code 0 "$rdl" --help
    expect_code 0 "$rdl" run --help
    expect_code 0 "$rdl" --version
    grep '^rdl ' "$tmp/out" >/dev/null || fail "--version: $(cat "$tmp/out")"
    ;;
tls)
    # rediss with the CA: runs; without it the server is not trusted (69,
    # one line saying so); --insecure skips the check; a bad file is a
    # usage error.
    url="rediss://127.0.0.1:$tls_port"
    expect_code 0 "$rdl" --url "$url" --cacert "$tmp/ca.crt" run t -- true
    expect_code 0 "$rdl" --url "$url" --cacert "$tmp/ca.crt" info t
    expect_code 69 "$rdl" --url "$url" --timeout 2000 run t -- true
    grep 'trusted CA' "$tmp/err" >/dev/null || fail "stderr: $(cat "$tmp/err")"
    [ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "stderr: $(cat "$tmp/err")"
    expect_code 0 "$rdl" --url "$url" --insecure run t -- true
    expect_code 69 "$rdl" --url "$url" --cacert "$tmp/ca.crt" \
        --sni other.example run t -- true
    grep 'does not match' "$tmp/err" >/dev/null || fail "stderr: $(cat "$tmp/err")"
    expect_code 64 "$rdl" --url "$url" --cacert "$tmp/nope.pem" run t -- true
    grep 'nope.pem' "$tmp/err" >/dev/null || fail "stderr: $(cat "$tmp/err")"
    ;;
unreachable)
    # No Redis there: one line naming the address, exit 69.
    expect_code 69 "$rdl" --url redis://127.0.0.1:1 --timeout 500 run x -- true
    [ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "stderr: $(cat "$tmp/err")"
    grep '127.0.0.1:1' "$tmp/err" >/dev/null || fail "stderr: $(cat "$tmp/err")"
    expect_code 69 "$rdl" --url redis://127.0.0.1:1 info x
    expect_code 64 "$rdl" --url http://x info x
    ;;
*)
    fail "unknown case"
    ;;
esac
echo "ok: $case_name"
