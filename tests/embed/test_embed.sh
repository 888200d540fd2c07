#!/usr/bin/env bash
# cmake/EmbedScripts.cmake refuses the Lua that the generated script
# "batch" would run wrongly, naming the line: a library that reads KEYS
# or ARGV (in the batch it would read the batch's, the first call's keys)
# or keeps state outside its functions (every call of a batch would share
# it) unless the line before says --@shared, and a batched script that
# indexes KEYS or ARGV with anything but a number (its indices are moved
# to the call's offset). A library that includes another gets it first
# and once; an include cycle is refused. The real scripts embed.
#
#   bash tests/embed/test_embed.sh SOURCE_DIR CASE TMPDIR
set -euo pipefail

src=$1
case_=$2
tmp=$(mktemp -d "${3:-/tmp}/embed.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/scripts/lib"

fail() {
    echo "FAIL: $*" >&2
    exit 1
}

# embed SCRIPT...: runs the generator on scripts in $tmp/scripts; sets out
# and rc.
embed() {
    local list="" s
    for s in "$@"; do
        list="$list${list:+;}$tmp/scripts/$s.lua"
    done
    rc=0
    out=$(cmake -DOUT_DIR="$tmp/out" "-DSCRIPTS=$list" \
        -P "$src/cmake/EmbedScripts.cmake" 2>&1) || rc=$?
}

# The code (no comments) of the scripts it wrote, batch.lua last.
shown() {
    local f
    for f in $(ls "$tmp"/out/scripts/*.lua | grep -v /batch.lua) \
        "$tmp/out/scripts/batch.lua"; do
        [ -f "$f" ] || continue
        echo "${f##*/}:"
        grep -n -v -e '^ *--' -e '^$' "$f" | head -12
    done
}

# refused WHERE WHAT: the generator failed, naming file:line WHERE, and
# its message says WHAT.
refused() {
    [ "$rc" -ne 0 ] || fail "the generator accepted it:"$'\n'"$(shown)"
    grep -qF "$1" <<<"$out" || fail "the message does not name $1:"$'\n'"$out"
    grep -qF "$2" <<<"$out" || fail "the message does not say \"$2\":"$'\n'"$out"
    echo "$out"
}

# A batched script that calls the library `lib` (a function lib_value()).
batched_using() {
    cat >"$tmp/scripts/$1.lua" <<LUA
-- $1: KEYS[1] a key, ARGV[1] a value
--@batch
--@include $2
return {KEYS[1], ARGV[1], lib_value(KEYS[1])}
LUA
}

case $case_ in
tree)
    cp "$src"/scripts/*.lua "$tmp/scripts/"
    cp "$src"/scripts/lib/*.lua "$tmp/scripts/lib/"
    embed $(cd "$tmp/scripts" && ls *.lua | sed 's/\.lua$//')
    [ "$rc" -eq 0 ] || fail "the scripts do not embed:"$'\n'"$out"
    [ -s "$tmp/out/scripts/batch.lua" ] || fail "no batch.lua"
    ;;
lib_reads_keys)
    # As lib/semaphore.lua read the semaphore's keys.
    cat >"$tmp/scripts/lib/reader.lua" <<'LUA'
-- lib/reader
local function lib_value(key)
    return redis.call('GET', KEYS[1])
end
LUA
    batched_using one reader
    embed one
    refused "lib/reader.lua:3:" "KEYS"
    ;;
lib_reads_argv_unbatched)
    # Not batched today; marking its script --@batch must not change what
    # the library reads.
    cat >"$tmp/scripts/lib/reader.lua" <<'LUA'
-- lib/reader
local function lib_value(key)
    return ARGV[2]
end
LUA
    cat >"$tmp/scripts/plain.lua" <<'LUA'
-- plain: KEYS[1] a key, ARGV[1] a value
--@include reader
return lib_value(KEYS[1])
LUA
    embed plain
    refused "lib/reader.lua:3:" "ARGV"
    ;;
lib_keys_at_load)
    cat >"$tmp/scripts/lib/loader.lua" <<'LUA'
-- lib/loader
local key = KEYS[1]
local function lib_value(k)
    return key
end
LUA
    batched_using one loader
    embed one
    refused "lib/loader.lua:2:" "KEYS"
    ;;
lib_state)
    # A memo of the run: in the batch, of every call before.
    cat >"$tmp/scripts/lib/memo.lua" <<'LUA'
-- lib/memo
local seen = {}

local function lib_value(key)
    seen[#seen + 1] = key
    return #seen
end
LUA
    batched_using one memo
    embed one
    refused "lib/memo.lua:2:" "outside a function"
    ;;
lib_state_shared)
    # Said to be shared, as lib/clock.lua's time is: accepted.
    cat >"$tmp/scripts/lib/memo.lua" <<'LUA'
-- lib/memo
--@shared: one value for all the calls of a batch
local first

local function lib_value(key)
    if not first then
        first = key
    end
    return first
end
LUA
    batched_using one memo
    embed one
    [ "$rc" -eq 0 ] || fail "refused:"$'\n'"$out"
    grep -q '^local function one(' "$tmp/out/scripts/batch.lua" ||
        fail "no function one in batch.lua"
    ;;
lib_includes_lib)
    # A library that needs another includes it: the other comes first,
    # once, though the script names it too; no include line is left.
    cat >"$tmp/scripts/lib/base.lua" <<'LUA'
-- lib/base
local function base_value(key)
    return key
end
LUA
    cat >"$tmp/scripts/lib/top.lua" <<'LUA'
-- lib/top
--@include base
local function lib_value(key)
    return base_value(key)
end
LUA
    cat >"$tmp/scripts/one.lua" <<'LUA'
-- one: KEYS[1] a key, ARGV[1] a value
--@batch
--@include top
--@include base
return {KEYS[1], ARGV[1], lib_value(KEYS[1]), base_value(ARGV[1])}
LUA
    embed one
    [ "$rc" -eq 0 ] || fail "refused:"$'\n'"$out"
    for f in one batch library; do
        body="$tmp/out/scripts/$f.lua"
        ! grep -q -- '--@include' "$body" || fail "$f.lua: an include left"
        [ "$(grep -c '^local function base_value(' "$body")" -eq 1 ] ||
            fail "$f.lua: base_value not defined once"
        b=$(grep -n '^local function base_value(' "$body" | cut -d: -f1)
        t=$(grep -n '^local function lib_value(' "$body" | cut -d: -f1)
        [ "$b" -lt "$t" ] || fail "$f.lua: base comes after top"
    done
    ;;
lib_include_cycle)
    printf -- '-- lib/a\n--@include b\n' >"$tmp/scripts/lib/a.lua"
    printf -- '-- lib/b\n--@include a\n' >"$tmp/scripts/lib/b.lua"
    printf -- '-- one: KEYS[1], ARGV[1]\n--@include a\nreturn 1\n' \
        >"$tmp/scripts/one.lua"
    embed one
    refused "lib/b.lua" "includes"
    ;;
body_computed_index)
    cat >"$tmp/scripts/lib/plain.lua" <<'LUA'
-- lib/plain
local function lib_value(key)
    return key
end
LUA
    cat >"$tmp/scripts/two.lua" <<'LUA'
-- two: KEYS[1] a key, ARGV[1] a value, ARGV[2] optional
--@batch
--@include plain
local n = 2
return {KEYS[1], ARGV[n or 1]}
LUA
    embed two
    refused "two.lua:5:" "ARGV"
    ;;
*)
    fail "unknown case $case_"
    ;;
esac
echo "PASS: $case_"
