#!/usr/bin/env bash
# Tests of rdl(1), one case per CTest test:
#
#   bash tests/cli/test_cli.sh PATH/TO/rdl CASE TMPDIR
#
# Each case starts its own redis-server on a free loopback port and stops
# it (and every process the case started) on exit; cluster_ls starts a
# local cluster with tools/cluster.sh instead and stops it the same way.
# Timings are bounds on what the tool promises (a lease, "at once"), never
# performance checks. A case that needs a program the machine lacks (top_tty:
# script(1)) is skipped, unless CI is set: then it fails.
set -euo pipefail

rdl=$1
case_name=$2
tmp=$(mktemp -d "${3:-/tmp}/cli.XXXXXX")
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
server_pid=""
cluster_dir=""
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
    if [ -n "$cluster_dir" ] && [ -e "$cluster_dir" ]; then
        bash "$root/tools/cluster.sh" stop "$cluster_dir" >/dev/null 2>&1 ||
            true
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

# json_check PYTHON-EXPR: $tmp/out is valid JSON (python3 -m json.tool)
# and the expression, over it as `j`, is true.
json_check() {
    python3 -m json.tool "$tmp/out" >/dev/null ||
        fail "not JSON: $(cat "$tmp/out")"
    python3 -c 'import json, sys
j = json.load(open(sys.argv[1]))
sys.exit(0 if eval(sys.argv[2]) else 1)' "$tmp/out" "$1" ||
        fail "JSON check $1 failed: $(cat "$tmp/out")"
}

# row NAME: the fields of NAME's line in $tmp/out (rdl ls's table).
row() {
    awk -v n="$1" '$1 == n {$1 = $1; print; found = 1} END {exit !found}' \
        "$tmp/out" || fail "no row for $1: $(cat "$tmp/out")"
}

# stop_pids: SIGTERM to the background rdl runs, which pass it on to their
# commands, so that no orphaned sleep keeps the test's output open.
stop_pids() {
    local p
    for p in "${pids[@]}"; do
        kill -TERM "$p" 2>/dev/null || true
    done
    for p in "${pids[@]}"; do
        wait "$p" 2>/dev/null || true
    done
    pids=()
}

# ls_fixture: deploy held (with a waiter), nightly free, catalogue an rw
# lock held by a reader, encode a semaphore with two of its 2 permits
# held; returns once rdl ls shows all of it.
ls_fixture() {
    local i
    "$rdl" run --lease 20000 --on-lost ignore deploy -- sleep 8 &
    pids+=($!)
    expect_code 0 "$rdl" run nightly -- true
    "$rdl" run --kind read --on-lost ignore catalogue -- sleep 8 &
    pids+=($!)
    for i in 1 2; do
        "$rdl" run --kind semaphore --permits 2 --on-lost ignore encode -- \
            sleep 8 &
        pids+=($!)
    done
    wait_locked deploy
    "$rdl" run --wait 7000 deploy -- true 2>/dev/null &
    pids+=($!)
    for i in $(seq 250); do
        "$rdl" ls >"$tmp/out"
        if [ "$(row deploy | cut -d' ' -f5)" = 1 ] &&
            [ "$(row encode | cut -d' ' -f3)" = 2/2 ] &&
            [ "$(row catalogue | cut -d' ' -f3)" = 1 ]; then
            return 0
        fi
        sleep 0.02
    done
    fail "the fixture never showed: $(cat "$tmp/out")"
}

if [ "$case_name" = cluster_ls ]; then
    cluster_dir=$tmp/cluster
    bash "$root/tools/cluster.sh" start "$cluster_dir" >"$tmp/cluster.log" \
        2>&1 || fail "tools/cluster.sh start: $(cat "$tmp/cluster.log")"
    RDL_URL=$(cat "$cluster_dir/url")
    export RDL_URL
elif [ "$case_name" = tls ]; then
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
    # Every kind runs; readers share, a writer waits for them. The views
    # of a read-write lock keep their earlier names, read and write, too.
    for k in lock fair rwlock:read rwlock:write read write; do
        expect_code 0 "$rdl" run --kind "$k" kinds-$k -- true
    done
    "$rdl" run --kind rwlock:read rw -- sleep 2 &
    pids+=($!)
    wait_locked rw rwlock:read
    expect_code 0 "$rdl" run --kind read --wait 0 rw -- true
    expect_code 75 "$rdl" run --kind rwlock:write --wait 0 rw -- true
    expect_code 75 "$rdl" run --kind write --wait 0 rw -- true
    expect_code 0 "$rdl" info --kind rwlock:write --json rw
    grep '"holders":1' "$tmp/out" >/dev/null || fail "info: $(cat "$tmp/out")"
    grep '"kind":"rwlock:write"' "$tmp/out" >/dev/null ||
        fail "info kind: $(cat "$tmp/out")"
    expect_code 0 "$rdl" info --kind write rw
    grep -E '^kind: +rwlock:write$' "$tmp/out" >/dev/null ||
        fail "info names the view: $(cat "$tmp/out")"
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
    # ls and top list the locks through the library too: over TLS, with
    # the same verification.
    "$rdl" --url "$url" --cacert "$tmp/ca.crt" run --lease 10000 \
        --on-lost ignore held -- sleep 5 &
    pids+=($!)
    for i in $(seq 200); do
        "$rdl" --url "$url" --cacert "$tmp/ca.crt" ls >"$tmp/out"
        grep '^held  *lock  *1 ' "$tmp/out" >/dev/null && break
        [ "$i" -lt 200 ] || fail "ls over TLS: $(cat "$tmp/out")"
        sleep 0.02
    done
    row t | grep '^t lock 0 - 0 [0-9][0-9]* -$' >/dev/null ||
        fail "ls over TLS: $(cat "$tmp/out")"
    expect_code 0 "$rdl" --url "$url" --insecure top --once --json
    json_check '[r["name"] for r in j] == ["held", "t"]'
    expect_code 69 "$rdl" --url "$url" --timeout 2000 ls
    grep 'trusted CA' "$tmp/err" >/dev/null || fail "stderr: $(cat "$tmp/err")"
    stop_pids
    ;;
unreachable)
    # No Redis there: one line naming the address, exit 69.
    expect_code 69 "$rdl" --url redis://127.0.0.1:1 --timeout 500 run x -- true
    [ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "stderr: $(cat "$tmp/err")"
    grep '127.0.0.1:1' "$tmp/err" >/dev/null || fail "stderr: $(cat "$tmp/err")"
    expect_code 69 "$rdl" --url redis://127.0.0.1:1 info x
    expect_code 64 "$rdl" --url http://x info x
    expect_code 69 "$rdl" --url redis://127.0.0.1:1 --timeout 500 ls
    [ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "stderr: $(cat "$tmp/err")"
    expect_code 69 "$rdl" --url redis://127.0.0.1:1 --timeout 500 top --once
    ;;
ls)
    # An empty server: the header only; [] in JSON.
    expect_code 0 "$rdl" ls
    [ "$(tr -s ' ' <"$tmp/out")" = "NAME KIND HOLDERS TTL WAITERS TOKEN AGE" ] ||
        fail "empty ls: $(cat "$tmp/out")"
    expect_code 0 "$rdl" ls --json
    json_check 'j == []'
    ls_fixture
    # One line each, sorted by name, in aligned columns; the age of a
    # plain lock's hold is known, a shared kind's is not.
    expect_code 0 "$rdl" ls
    [ "$(awk 'NR > 1 {print $1}' "$tmp/out" | tr '\n' ' ')" = \
        "catalogue deploy encode nightly " ] || fail "order: $(cat "$tmp/out")"
    awk 'NR == 1 {k = index($0, "KIND"); t = index($0, "TOKEN")}
         NR > 1 && (substr($0, k - 1, 1) != " " || substr($0, k, 1) == " " ||
                    substr($0, t, 1) == " ") {exit 1}' "$tmp/out" ||
        fail "columns not aligned: $(cat "$tmp/out")"
    row deploy | grep -E '^deploy lock 1 [0-9.]+(ms|s) 1 [0-9]+ [0-9.]+(ms|s)$' \
        >/dev/null || fail "deploy: $(row deploy)"
    row nightly | grep -E '^nightly lock 0 - 0 [0-9]+ -$' >/dev/null ||
        fail "nightly: $(row nightly)"
    row catalogue | grep -E '^catalogue rwlock 1 [0-9.]+s 0 [0-9]+ -$' \
        >/dev/null || fail "catalogue: $(row catalogue)"
    row encode | grep -E '^encode semaphore 2/2 [0-9.]+s 0 [0-9]+ -$' \
        >/dev/null || fail "encode: $(row encode)"
    # PATTERN, --held, --sort waiters.
    expect_code 0 "$rdl" ls 'c*'
    [ "$(awk 'NR > 1 {print $1}' "$tmp/out")" = catalogue ] ||
        fail "ls 'c*': $(cat "$tmp/out")"
    expect_code 0 "$rdl" ls '*o[dy]*'
    [ "$(awk 'NR > 1 {print $1}' "$tmp/out" | tr '\n' ' ')" = \
        "deploy encode " ] || fail "ls '*o[dy]*': $(cat "$tmp/out")"
    expect_code 0 "$rdl" ls 'zz*'
    [ "$(wc -l <"$tmp/out")" -eq 1 ] || fail "ls 'zz*': $(cat "$tmp/out")"
    expect_code 0 "$rdl" ls --held
    grep '^nightly ' "$tmp/out" >/dev/null && fail "--held: $(cat "$tmp/out")"
    [ "$(wc -l <"$tmp/out")" -eq 4 ] || fail "--held: $(cat "$tmp/out")"
    expect_code 0 "$rdl" ls --sort waiters
    [ "$(awk 'NR == 2 {print $1}' "$tmp/out")" = deploy ] ||
        fail "--sort waiters: $(cat "$tmp/out")"
    # --json: one valid array, the fields of rdl info --json and age_ms.
    expect_code 0 "$rdl" ls --json
    [ "$(wc -l <"$tmp/out")" -eq 1 ] || fail "--json: $(cat "$tmp/out")"
    json_check '[r["name"] for r in j] == ["catalogue", "deploy", "encode", "nightly"]'
    json_check 'all(set(r) == {"name", "kind", "locked", "holders", "permits", "ttl_ms", "hold_count", "fencing_token", "waiters", "age_ms"} for r in j)'
    json_check '[r["kind"] for r in j] == ["rwlock", "lock", "semaphore", "lock"]'
    json_check 'j[1]["locked"] and j[1]["holders"] == 1 and j[1]["waiters"] == 1 and 0 <= j[1]["age_ms"] < 60000 and j[1]["ttl_ms"] > 0'
    json_check 'j[2]["holders"] == 2 and j[2]["permits"] == 2 and j[2]["age_ms"] is None'
    json_check 'not j[3]["locked"] and j[3]["ttl_ms"] == -2 and j[3]["fencing_token"] > 0 and j[3]["age_ms"] is None'
    json_check 'j[0]["holders"] == 1 and j[0]["age_ms"] is None'
    # Another prefix sees none of them.
    expect_code 0 "$rdl" --prefix other ls --json
    json_check 'j == []'
    stop_pids
    ;;
ls_names)
    # Names come back as they were given, whatever their bytes: escaped in
    # JSON (valid UTF-8 out, U+FFFD for a byte that is not), \xNN for
    # control characters in the table; a name with its own hash tag keeps
    # it. Glob characters in the prefix match only themselves.
    weird=$(printf 'we"i\\rd\tname\001')
    for n in "$weird" '{order:42}:stock' "$(printf 'caf\303\251')" \
        "$(printf 'bad\377')" 'a}b' 'x{y'; do
        expect_code 0 "$rdl" run "$n" -- true
    done
    expect_code 0 "$rdl" ls --json
    json_check 'sorted(r["name"] for r in j) == sorted(["we\"i\\rd\tname\x01", "{order:42}:stock", "caf\u00e9", "bad\ufffd", "a}b", "x{y"])'
    expect_code 0 "$rdl" ls
    grep -F 'we"i\rd\x09name\x01 ' "$tmp/out" >/dev/null ||
        fail "control characters: $(cat "$tmp/out")"
    [ "$(wc -l <"$tmp/out")" -eq 7 ] || fail "one line each: $(cat "$tmp/out")"
    # Each listed name opens its lock: info finds its token.
    expect_code 0 "$rdl" info --json '{order:42}:stock'
    grep '"fencing_token":0' "$tmp/out" >/dev/null && fail "$(cat "$tmp/out")"
    expect_code 0 "$rdl" --prefix 'a*b' run x -- true
    expect_code 0 "$rdl" --prefix 'aXXb' run y -- true
    expect_code 0 "$rdl" --prefix 'a*b' ls --json
    json_check '[r["name"] for r in j] == ["x"]'
    ;;
top)
    expect_code 0 "$rdl" top --once
    grep '^rdl top - ' "$tmp/out" >/dev/null || fail "top: $(cat "$tmp/out")"
    ls_fixture
    # Busiest first (deploy has a waiter), then held before free.
    expect_code 0 "$rdl" top --once
    grep -E '^rdl top - .* 4 locks, 3 held, 1 waiting$' "$tmp/out" \
        >/dev/null || fail "top summary: $(cat "$tmp/out")"
    [ "$(awk '$1 == "NAME" {n = NR} n && NR > n {print $1}' "$tmp/out" |
        tr '\n' ' ')" = "deploy encode catalogue nightly " ] ||
        fail "top order: $(cat "$tmp/out")"
    expect_code 0 "$rdl" top --once --json
    json_check '[r["name"] for r in j] == ["deploy", "encode", "catalogue", "nightly"]'
    expect_code 0 "$rdl" top --once --held 'n*'
    [ "$(awk '$1 == "NAME" {n = NR} n && NR > n' "$tmp/out" | wc -l)" -eq 0 ] ||
        fail "top --held 'n*': $(cat "$tmp/out")"
    # Without a terminal: a snapshot per refresh, until SIGTERM (then 143).
    "$rdl" top --json --interval 100 >"$tmp/stream" &
    tp=$!
    pids+=("$tp")
    sleep 1
    kill -TERM "$tp"
    code=0
    wait "$tp" || code=$?
    [ "$code" -eq 143 ] || fail "top after SIGTERM: exit $code"
    [ "$(wc -l <"$tmp/stream")" -ge 3 ] || fail "stream: $(cat "$tmp/stream")"
    while read -r line; do
        echo "$line" >"$tmp/out"
        json_check 'len(j) == 4'
    done <"$tmp/stream"
    stop_pids
    ;;
top_tty)
    # On a terminal (script(1) gives one): the alternate screen, and the
    # terminal as it was after q, Ctrl-C or SIGTERM.
    if ! command -v script >/dev/null; then
        [ -z "${CI:-}" ] || fail "script(1) missing; CI is set"
        echo "[  SKIPPED ] script(1) missing"
        exit 0
    fi
    expect_code 0 "$rdl" run quiet -- true
    for key in q ctrl-c; do
        if [ $key = q ]; then k=q; else k=$(printf '\003'); fi
        (
            sleep 1.5
            printf '%s' "$k"
            sleep 1
        ) | SHELL=$(command -v bash) script -qc "stty -g >'$tmp/tty.before'; '$rdl' top --interval 200;
            echo rc=\$?; stty -g >'$tmp/tty.after'" /dev/null >"$tmp/tty.out"
        grep -F "$(printf '\033[?1049h')" "$tmp/tty.out" >/dev/null ||
            fail "$key: no alternate screen: $(cat -v "$tmp/tty.out")"
        grep '^quiet  *lock ' "$tmp/tty.out" >/dev/null ||
            fail "$key: no table: $(cat -v "$tmp/tty.out")"
        tr -d '\r' <"$tmp/tty.out" | grep -F "$(printf '\033[?1049lrc=0')" \
            >/dev/null || fail "$key: not restored: $(cat -v "$tmp/tty.out")"
        cmp -s "$tmp/tty.before" "$tmp/tty.after" ||
            fail "$key: terminal modes changed"
    done
    SHELL=$(command -v bash) script -qc "'$rdl' top --interval 200 & p=\$!; sleep 1; kill -TERM \$p;
        wait \$p; echo rc=\$?" /dev/null </dev/null >"$tmp/tty.out"
    tr -d '\r' <"$tmp/tty.out" | grep -F "$(printf '\033[?1049lrc=143')" \
        >/dev/null || fail "SIGTERM: $(cat -v "$tmp/tty.out")"
    ;;
ls_usage)
    # Bad usage exits 64 with the usage; --help exits 0.
    expect_code 64 "$rdl" ls --bogus
    grep 'usage: rdl' "$tmp/err" >/dev/null || fail "no usage: $(cat "$tmp/err")"
    expect_code 64 "$rdl" ls a b
    expect_code 64 "$rdl" ls --sort size
    expect_code 64 "$rdl" ls --sort
    expect_code 64 "$rdl" ls --once
    expect_code 64 "$rdl" ls --interval 500
    expect_code 64 "$rdl" top --interval 5
    expect_code 64 "$rdl" top --interval soon
    expect_code 64 "$rdl" top --interval
    expect_code 64 "$rdl" top --sort name
    expect_code 64 "$rdl" top a b
    expect_code 0 "$rdl" ls --help
    grep '^usage: rdl .* ls ' "$tmp/out" >/dev/null || fail "$(cat "$tmp/out")"
    expect_code 0 "$rdl" top --help
    grep '^usage: rdl .* top ' "$tmp/out" >/dev/null || fail "$(cat "$tmp/out")"
    expect_code 0 "$rdl" --help
    grep '^  ls ' "$tmp/out" >/dev/null || fail "$(cat "$tmp/out")"
    grep '^  top ' "$tmp/out" >/dev/null || fail "$(cat "$tmp/out")"
    # -- ends the options: a PATTERN may start with '-'.
    expect_code 0 "$rdl" run x -- true
    expect_code 0 "$rdl" ls -- '-*'
    [ "$(wc -l <"$tmp/out")" -eq 1 ] || fail "$(cat "$tmp/out")"
    expect_code 0 "$rdl" ls -- 'x*'
    [ "$(awk 'NR > 1 {print $1}' "$tmp/out")" = x ] || fail "$(cat "$tmp/out")"
    ;;
cluster_ls)
    # Every master is scanned: locks whose keys live on different masters
    # are all listed, once each.
    names="alpha bravo charlie delta echo foxtrot golf hotel {t}one {t}two"
    for n in $names; do
        expect_code 0 "$rdl" run "$n" -- true
    done
    "$rdl" run --lease 10000 --on-lost ignore held -- sleep 5 &
    pids+=($!)
    wait_locked held
    masters=0
    for p in $(tr ',' '\n' <"$cluster_dir/url" | sed 's/.*://'); do
        if redis-cli -p "$p" ROLE | head -n 1 | grep master >/dev/null; then
            [ "$(redis-cli -p "$p" DBSIZE)" -gt 0 ] && masters=$((masters + 1))
        fi
    done
    [ "$masters" -ge 2 ] || fail "the keys are on $masters master(s) only"
    expect_code 0 "$rdl" ls --json
    json_check 'sorted(r["name"] for r in j) == sorted("'"$names"' held".split())'
    json_check '[r["age_ms"] is not None for r in j if r["name"] == "held"] == [True]'
    expect_code 0 "$rdl" top --once
    grep -E '^rdl top - .* 3 nodes - 11 locks, 1 held' "$tmp/out" >/dev/null ||
        fail "top: $(cat "$tmp/out")"
    stop_pids
    ;;
*)
    fail "unknown case"
    ;;
esac
echo "ok: $case_name"
