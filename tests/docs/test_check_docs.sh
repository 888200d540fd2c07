#!/usr/bin/env bash
# tools/check-docs.sh on its fixtures: it passes every block of good.md
# (one of each kind: programs, fragments, a file block, a run and a
# syntax-only sh block, find_package and add_subdirectory cmake projects,
# text) and fails every block of bad.md, each for its own reason, and its
# two broken links.
#
#   bash tests/docs/test_check_docs.sh SOURCE_DIR BUILD_DIR CASE
#
# CASE is good or bad. The sh blocks need redis-server: without it the
# case is skipped, unless CI is set (then it fails). Prints "PASS: CASE".
set -euo pipefail

src=$1
build=$2
case_name=$3
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
out=$(mktemp "${TMPDIR:-/tmp}/check-docs.XXXXXX")
trap 'rm -f "$out"' EXIT

fail() {
    echo "FAIL ($case_name): $*" >&2
    exit 1
}

if ! command -v redis-server >/dev/null 2>&1; then
    [ -z "${CI:-}" ] || fail "redis-server not found (CI is set)"
    echo "[  SKIPPED ] redis-server not found"
    exit 0
fi

# check FILE: runs the checker on FILE; sets rc, output in $out.
check() {
    rc=0
    CHECK_DOCS_TIMEOUT=3 bash "$src/tools/check-docs.sh" --root "$src" \
        --build "$build" "$here/$1" >"$out" 2>&1 || rc=$?
    cat "$out"
}

# The number of fenced blocks of FILE (opening fences: every other one).
blocks_in() {
    echo $(($(grep -cE '^ *(```|~~~)' "$here/$1") / 2))
}

# expect LINE_PATTERN: a line of the output matches.
expect() {
    grep -qE -- "$1" "$out" || fail "no line matching: $1"
}

case $case_name in
good)
    check good.md
    [ $rc -eq 0 ] || fail "check-docs exited $rc on good.md"
    n=$(blocks_in good.md)
    expect "^check-docs: $n blocks: $((n - 1)) ok, 0 FAILED, 1 not checked"
    expect ", 0 broken$"
    for kind in "c program" "c\+\+ program" "c fragment" "c\+\+ fragment" \
        "c file" "sh run" "sh syntax only \(needs root\)" "cmake cmake"; do
        expect "^tests/docs/good\.md:[0-9]+ $kind: ok$"
    done
    ;;
bad)
    check bad.md
    [ $rc -eq 1 ] || fail "check-docs exited $rc on bad.md, not 1"
    n=$(blocks_in bad.md)
    # Every block, and the marker followed by no block, fails.
    expect "^check-docs: $((n + 1)) blocks: 0 ok, $((n + 1)) FAILED"
    expect ", 2 broken$"
    expect "unlabelled block"
    expect "unknown language 'python'"
    expect "warn_unused_result|unused-result"
    expect "undeclared_variable.{1,3} undeclared"
    expect "missing_function.{1,3} was not declared"
    expect "check: file is for c and c\+\+ blocks"
    expect "check: syntax needs a reason"
    expect "^    tests/docs/bad\.md:[0-9]+: syntax error"
    expect "unknown check marker"
    expect "timed out after 3s"
    expect "rdl::no_such_target"
    expect "check marker not followed by a code block"
    expect "link \(no-such-file\.md\): FAILED: no such file"
    expect "link \(good\.md#no-such-heading\): FAILED: no heading"
    ;;
*) fail "unknown case" ;;
esac
echo "PASS: $case_name"
