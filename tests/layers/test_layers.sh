#!/usr/bin/env bash
# tools/check-layers.sh, checked both ways: the tree passes, and an include
# that runs up a layer (planted in a copy of src/) fails, naming the line.
#
#   bash tests/layers/test_layers.sh SOURCE_DIR CASE TMPDIR [BUILD_DIR]
#   CASE: tree | calls (BUILD_DIR's objects) | planted_core_includes_lock |
#         planted_multilock_includes_lock_int | planted_conn_calls_client
set -euo pipefail

src=$1
case_=$2
tmp=$(mktemp -d "${3:-/tmp}/layers.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
check=$src/tools/check-layers.sh

fail() {
    echo "FAIL: $*" >&2
    exit 1
}

# plant FILE LINE: a copy of src/ with LINE added after FILE's first
# include; the check must fail and name FILE.
plant() {
    local file=$1 line=$2 out rc=0
    cp -r "$src/src" "$tmp/src"
    [ -f "$tmp/src/$file" ] || fail "no src/$file to plant into"
    sed -i "0,/^#include/s||$line\n#include|" "$tmp/src/$file"
    grep -qF "$line" "$tmp/src/$file" || fail "could not plant into $file"
    out=$(bash "$check" "$tmp" 2>&1) || rc=$?
    [ $rc -eq 1 ] || fail "check exited $rc, expected 1:"$'\n'"$out"
    grep -q "^$file:[0-9]*: includes" <<<"$out" ||
        fail "the report does not name $file:"$'\n'"$out"
    echo "$out"
}

# A call that runs up a floor, with no include to show it: two objects,
# core/conn.c.o taking a symbol that core/client.c.o defines. The check
# must fail and name the call.
planted_call() {
    local objdir=$tmp/build/CMakeFiles/rdl_objects.dir/src/core out rc=0
    mkdir -p "$objdir"
    printf 'int rdl__client_post(void) { return 0; }\n' >"$tmp/client.c"
    printf 'int rdl__client_post(void);\nint rdl__conn_x(void) { return rdl__client_post(); }\n' \
        >"$tmp/conn.c"
    cc -c -o "$objdir/client.c.o" "$tmp/client.c"
    cc -c -o "$objdir/conn.c.o" "$tmp/conn.c"
    out=$(bash "$check" --calls "$tmp/build" "$src" 2>&1) || rc=$?
    [ $rc -eq 1 ] || fail "check exited $rc, expected 1:"$'\n'"$out"
    grep -q "^core/conn.c: calls rdl__client_post" <<<"$out" ||
        fail "the report does not name the call:"$'\n'"$out"
    echo "$out"
}

case $case_ in
calls)
    bash "$check" --calls "${4:?BUILD_DIR}" "$src"
    ;;
planted_conn_calls_client)
    planted_call
    ;;
tree)
    bash "$check" "$src"
    ;;
planted_core_includes_lock)
    plant core/hub.c '#include "lock/lock_int.h"'
    ;;
planted_multilock_includes_lock_int)
    plant multilock/composite.c '#include "lock/lock_int.h"'
    ;;
*)
    fail "unknown case $case_"
    ;;
esac
echo "PASS: $case_"
