#!/usr/bin/env bash
# The documentation check: every fenced code block of README.md and
# docs/**/*.md is compiled, run or built, and every relative link resolves.
#
#   bash tools/check-docs.sh [--root DIR] [--build BUILD_DIR] [FILE...]
#
#   --root DIR     the rdl tree (default: the one holding this script)
#   --build DIR    a configured and built tree of it (default: ROOT/build):
#                  its librdl, its rdl tool, its install
#   FILE...        Markdown files (default: ROOT/README.md, ROOT/docs/**/*.md)
#
# Prints one line per block, "FILE:LINE LANG KIND: ok" or "...: FAILED"
# followed by the compiler's or the shell's output, then one per broken
# link and a summary. Exits 0 when every block and link passes, 1
# otherwise, 2 on bad usage. CHECK_DOCS_JOBS (default: the processor count)
# compiles that many blocks at once; CHECK_DOCS_KEEP=1 keeps the scratch
# directory (its path is printed). Reading the Markdown is
# tools/check-docs/extract.py's (python3, standard library only).
#
# The conventions (docs/contributing.md, "Writing docs: how code blocks are
# checked"):
#
#   Every block, fenced with ``` or ~~~, has an info string, exactly one of
#   c, c++, sh, cmake, text. None, or another, fails. text blocks (output,
#   trees, diagrams) are not checked.
#
#   c / c++ containing "main(": a complete program, compiled and linked
#     against BUILD_DIR's librdl (cc -std=c11 / c++ -std=c++17, -Wall
#     -Wextra -Werror, -I ROOT/include; libuv, hiredis, libsodium, OpenSSL
#     from pkg-config). Not run. No prelude: it must stand alone.
#   other c / c++: a fragment. Its preprocessor lines (#include, #define,
#     with continuation lines) are hoisted to file scope; the rest becomes
#     the body of `static void doc_fragment(void)`. Compiled with -c, the
#     same flags plus -Wno-unused-variable -Wno-unused-but-set-variable
#     -Wno-unused-parameter -Wno-unused-function, after the prelude
#     (tools/check-docs/prelude.h): <rdl.h>, <stdint.h>, <stdio.h>,
#     <stdlib.h> (C++: also <rdl.hpp>, <string> and `using namespace
#     std::chrono_literals;`) and the declarations of
#       void fail(const char *msg);  (C++: also fail(const std::string &))
#       void do_work(void);
#       void write_to_storage_with_fence(uint64_t token);
#     Nothing else: a fragment declares the variables it uses.
#   <!-- check: file -->  on the line before the fence (blank lines
#     allowed): a c / c++ block compiled at file scope as it is, -c, after
#     the prelude, with the fragments' flags.
#   sh: run with `bash -euo pipefail` in a fresh empty directory, stdin
#     /dev/null, 60 s at most (CHECK_DOCS_TIMEOUT), with BUILD_DIR/tools/rdl
#     (the rdl tool) first on PATH and RDL_URL naming a throwaway
#     redis-server (loopback, a free port, --save '' --appendonly no),
#     started for this run and emptied (FLUSHALL) before each block.
#     What the block leaves running in the background is killed after it.
#   <!-- check: syntax (REASON) -->  before an sh block: only `bash -n`;
#     the reason is required and printed. Only for sh blocks.
#   cmake: the CMakeLists.txt of a scratch consumer project next to a
#     main.c (includes <rdl.h>, prints rdl_version_string()) and a main.cpp
#     (the same with <rdl.hpp>). What the block leaves out is put in front:
#     cmake_minimum_required(VERSION 3.16), project(doc_consumer LANGUAGES
#     C CXX), and add_executable(NAME main.c) for each target the block
#     uses (target_...(NAME ...)) but does not create (main.cpp instead
#     when the block mentions CXX). Configured and built (not run) with
#     CMAKE_PREFIX_PATH set to an install of BUILD_DIR in a scratch prefix
#     (cmake --install, once per run). add_subdirectory(PATH) of a relative
#     path gets PATH as a symlink to ROOT; FetchContent_Declare(NAME ...)
#     gets FETCHCONTENT_SOURCE_DIR_<NAME>=ROOT and
#     FETCHCONTENT_FULLY_DISCONNECTED=ON, so it builds ROOT and never
#     downloads.
#   Links: every [text](target) and [label]: target that is not a URL must
#     name an existing file or directory, relative to the Markdown file;
#     #anchor in a .md target (or alone) must be one of its headings'
#     GitHub anchors (or an <a name/id>).
#
# Compiler errors name the Markdown file and line (#line directives).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
build=""
files=()

usage() {
    echo "usage: bash tools/check-docs.sh [--root DIR] [--build BUILD_DIR]" \
        "[FILE...]" >&2
}

while [ $# -gt 0 ]; do
    case $1 in
    --root)
        [ $# -ge 2 ] || {
            usage
            exit 2
        }
        root=$(cd "$2" && pwd)
        shift 2
        ;;
    --build)
        [ $# -ge 2 ] || {
            usage
            exit 2
        }
        build=$2
        shift 2
        ;;
    -h | --help)
        usage
        exit 0
        ;;
    --)
        shift
        files+=("$@")
        break
        ;;
    -*)
        usage
        exit 2
        ;;
    *)
        files+=("$1")
        shift
        ;;
    esac
done

[ -n "$build" ] || build=$root/build
if [ ! -d "$build" ]; then
    echo "check-docs: no build tree $build (configure and build it first)" >&2
    exit 2
fi
build=$(cd "$build" && pwd)
if [ ${#files[@]} -eq 0 ]; then
    [ -f "$root/README.md" ] && files+=("$root/README.md")
    if [ -d "$root/docs" ]; then
        while IFS= read -r f; do files+=("$f"); done < <(
            find "$root/docs" -name '*.md' -type f | LC_ALL=C sort)
    fi
fi
for f in "${files[@]}"; do
    [ -f "$f" ] || {
        echo "check-docs: no such file: $f" >&2
        exit 2
    }
done

jobs=${CHECK_DOCS_JOBS:-$(nproc 2>/dev/null || echo 2)}
block_timeout=${CHECK_DOCS_TIMEOUT:-60}
prelude=$here/check-docs/prelude.h
python=/usr/bin/python3
[ -x "$python" ] || python=python3

work=$(mktemp -d "${TMPDIR:-/tmp}/rdl-check-docs.XXXXXX")
# shellcheck source=lib/throwaway.sh
. "$here/lib/throwaway.sh"
redis_pid=""
cleanup() {
    throwaway_stop
    if [ "${CHECK_DOCS_KEEP:-0}" = 1 ]; then
        echo "check-docs: kept $work" >&2
    else
        rm -rf "$work"
    fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

mkdir -p "$work/blocks" "$work/results"
"$python" "$here/check-docs/extract.py" --root "$root" \
    --out "$work/blocks" "${files[@]}"

# What the checks link and run.
lib=$(find "$build" -maxdepth 2 \( -name librdl.so -o -name librdl.a \) \
    -print | LC_ALL=C sort | head -n 1)
rdl_bin_dir=$build/tools/rdl
pc_libs=(libuv hiredis libsodium)
pkg-config --exists openssl 2>/dev/null && pc_libs+=(openssl)
read -r -a link_flags <<<"$(pkg-config --libs "${pc_libs[@]}")"
link_flags+=(-pthread)
common_flags=(-Wall -Wextra -Werror -I "$root/include")
fragment_flags=(-Wno-unused-variable -Wno-unused-but-set-variable
    -Wno-unused-parameter -Wno-unused-function -include "$prelude")

# result ID STATUS: STATUS is ok, FAILED or a word of its own; the output
# is in results/ID.log.
result() {
    echo "$2" >"$work/results/$1.status"
}

# check_compile ID LANG KIND SOURCE
check_compile() {
    local id=$1 lang=$2 kind=$3 src=$4 log=$work/results/$1.log
    local cc cmd
    if [ "$lang" = c++ ]; then
        read -r -a cc <<<"${CXX:-c++}"
        cc+=(-std=c++17)
    else
        read -r -a cc <<<"${CC:-cc}"
        cc+=(-std=c11)
    fi
    case $kind in
    program)
        if [ -z "$lib" ]; then
            echo "no librdl.so or librdl.a in $build" >"$log"
            result "$id" FAILED
            return
        fi
        cmd=("${cc[@]}" "${common_flags[@]}" -o "$work/blocks/$id.out"
            "$src" "$lib" "${link_flags[@]}")
        ;;
    *)
        cmd=("${cc[@]}" "${common_flags[@]}" "${fragment_flags[@]}" -c
            -o "$work/blocks/$id.o" "$src")
        ;;
    esac
    if "${cmd[@]}" >"$log" 2>&1; then
        result "$id" ok
    else
        result "$id" FAILED
    fi
}

# map_lines LOG SRC FILE:LINE: bash's "SRC: line N" in LOG becomes the
# Markdown file's line (N lines below the fence at FILE:LINE).
map_lines() {
    awk -v src="$2: line " -v file="${3%:*}" -v base="${3##*:}" '{
        out = ""
        while ((i = index($0, src)) > 0) {
            rest = substr($0, i + length(src))
            if (!match(rest, /^[0-9]+/))
                break
            n = substr(rest, 1, RLENGTH) + base
            out = out substr($0, 1, i - 1) file ":" n
            $0 = substr(rest, RLENGTH + 1)
        }
        print out $0
    }' "$1" >"$1.mapped" && mv "$1.mapped" "$1"
}

# check_syntax ID SOURCE FILE:LINE
check_syntax() {
    local id=$1 src=$2 log=$work/results/$1.log
    if bash -n "$src" >"$log" 2>&1; then
        result "$id" ok
    else
        map_lines "$log" "$src" "$3"
        result "$id" FAILED
    fi
}

# The throwaway server of the sh blocks (tools/lib/throwaway.sh), started
# at the first sh block that runs.
redis_port=""
redis_error=""
redis_call() { # redis_call COMMAND: one inline command, its reply's line
    local reply
    exec 3<>"/dev/tcp/127.0.0.1/$redis_port" || return 1
    printf '%s\r\n' "$1" >&3
    IFS= read -r -t 5 reply <&3 || reply=""
    exec 3<&-
    [ "${reply%$'\r'}" = "+${2:-OK}" ]
}
start_redis() {
    if throwaway_start check-docs 2>"$work/redis.err"; then
        redis_pid=$throwaway_pid
        redis_port=$throwaway_port
        return 0
    fi
    redis_error=$(tail -n 6 "$work/redis.err")
    return 1
}

# check_run ID SOURCE FILE:LINE
check_run() {
    local id=$1 src=$2 log=$work/results/$1.log dir pid rc=0
    if [ -z "$redis_pid" ]; then
        echo "$redis_error" >"$log"
        result "$id" FAILED
        return
    fi
    if ! redis_call FLUSHALL 2>/dev/null; then
        echo "the redis-server on port $redis_port does not answer" >"$log"
        result "$id" FAILED
        return
    fi
    dir=$(mktemp -d "$work/run.XXXXXX")
    # timeout(1) puts itself and the block in a process group of their own
    # (its PID): what the block left running in the background is ended
    # with it, nothing else.
    (cd "$dir" &&
        PATH="$rdl_bin_dir:$PATH" RDL_URL="redis://127.0.0.1:$redis_port" \
            exec timeout -k 5 "$block_timeout" bash -euo pipefail "$src" \
            </dev/null) >"$log" 2>&1 &
    pid=$!
    wait "$pid" || rc=$?
    kill -KILL -- "-$pid" 2>/dev/null || true
    if [ $rc -eq 0 ]; then
        result "$id" ok
    else
        map_lines "$log" "$src" "$3"
        [ $rc -ne 124 ] || echo "timed out after ${block_timeout}s" >>"$log"
        echo "exit status $rc" >>"$log"
        result "$id" FAILED
    fi
}

prefix=""
prefix_error=""
install_prefix() {
    prefix=$work/prefix
    if ! cmake --install "$build" --prefix "$prefix" \
        >"$work/install.log" 2>&1; then
        prefix_error="cmake --install $build failed: $(tail -n 20 \
            "$work/install.log")"
        prefix=""
    fi
}

generator=()
command -v ninja >/dev/null 2>&1 && generator=(-G Ninja)

check_cmake() {
    local id=$1 dir=$2 log=$work/results/$1.log args=()
    if [ -z "$prefix" ]; then
        echo "$prefix_error" >"$log"
        result "$id" FAILED
        return
    fi
    mapfile -t args <"$dir/cmake-args"
    if {
        echo "--- CMakeLists.txt as built:"
        cat "$dir/CMakeLists.txt"
        echo "---"
        cmake -S "$dir" -B "$dir/build" "${generator[@]}" \
            --log-level=WARNING -DCMAKE_PREFIX_PATH="$prefix" \
            ${args[@]+"${args[@]}"} &&
            cmake --build "$dir/build" -j "$jobs"
    } >"$log" 2>&1; then
        result "$id" ok
    else
        result "$id" FAILED
    fi
}

# Blocks, in document order.
ids=() langs=() kinds=() sources=() notes=() where=()
while IFS=$'\x1f' read -r id file line lang kind src note; do
    ids+=("$id")
    where+=("$file:$line")
    langs+=("$lang")
    kinds+=("$kind")
    sources+=("$src")
    notes+=("$note")
done <"$work/blocks/blocks.tsv"
echo "check-docs: ${#ids[@]} blocks in ${#files[@]} files (build: $build)"

# 1. Compiles, a few at once; syntax checks.
running=0
for i in "${!ids[@]}"; do
    case ${kinds[$i]} in
    program | fragment | file)
        check_compile "${ids[$i]}" "${langs[$i]}" "${kinds[$i]}" \
            "${sources[$i]}" &
        running=$((running + 1))
        if [ $running -ge "$jobs" ]; then
            wait -n || true
            running=$((running - 1))
        fi
        ;;
    syntax) check_syntax "${ids[$i]}" "${sources[$i]}" "${where[$i]}" ;;
    esac
done
wait

# 2. sh blocks, one at a time against one server; 3. cmake projects.
for i in "${!ids[@]}"; do
    if [ "${kinds[$i]}" = run ]; then
        [ -n "$redis_pid$redis_error" ] || start_redis || true
        check_run "${ids[$i]}" "${sources[$i]}" "${where[$i]}"
    fi
done
for i in "${!ids[@]}"; do
    if [ "${kinds[$i]}" = cmake ]; then
        [ -n "$prefix$prefix_error" ] || install_prefix
        check_cmake "${ids[$i]}" "${sources[$i]}"
    fi
done

# Report.
ok=0 failed=0 unchecked=0
for i in "${!ids[@]}"; do
    id=${ids[$i]} kind=${kinds[$i]}
    label="${where[$i]} ${langs[$i]} $kind"
    case $kind in
    text)
        echo "${where[$i]} text: not checked"
        unchecked=$((unchecked + 1))
        continue
        ;;
    error)
        echo "${where[$i]} ${langs[$i]}: FAILED: ${notes[$i]}"
        failed=$((failed + 1))
        continue
        ;;
    syntax) label="${where[$i]} ${langs[$i]} syntax only (${notes[$i]})" ;;
    esac
    status=$(cat "$work/results/$id.status" 2>/dev/null || echo FAILED)
    if [ "$status" = ok ]; then
        echo "$label: ok"
        ok=$((ok + 1))
    else
        echo "$label: FAILED"
        if [ -s "$work/results/$id.log" ]; then
            n=$(wc -l <"$work/results/$id.log")
            head -n 40 "$work/results/$id.log" | sed 's/^/    /'
            [ "$n" -le 40 ] || echo "    ... ($((n - 40)) more lines)"
        fi
        failed=$((failed + 1))
    fi
done

links=0 broken=0
while IFS=$'\x1f' read -r file line target status msg; do
    links=$((links + 1))
    if [ "$status" != ok ]; then
        echo "$file:$line link ($target): FAILED: $msg"
        broken=$((broken + 1))
    fi
done <"$work/blocks/links.tsv"

echo "check-docs: ${#ids[@]} blocks: $ok ok, $failed FAILED," \
    "$unchecked not checked (text); $links relative links, $broken broken"
[ $failed -eq 0 ] && [ $broken -eq 0 ]
