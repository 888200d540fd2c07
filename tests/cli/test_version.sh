#!/usr/bin/env bash
# rdl --version says the version of rdl: that of the library it runs with,
# which is rdl_version_string(), RDL_VERSION_STRING of include/rdl/version.h
# and the CMake project's version; and says so when the library is not the
# version of the headers the tool was built with. No server.
#
#   bash tests/cli/test_version.sh CASE PATH/TO/rdl PATH/TO/test_cli_version
#        SOURCE_DIR PROJECT_VERSION PATH/TO/shim.so RDL_LIBRARY_TYPE
#
# Cases:
#   same      rdl --version prints one line, "rdl X.Y.Z", and X.Y.Z is
#             rdl_version_string() and RDL_VERSION_STRING (both as a
#             program built with the headers and linked with the library
#             prints them: tests/cli/version.c), version.h's numbers and
#             PROJECT_VERSION
#   mismatch  with a library that says it is 99.98.97 (the shim,
#             LD_PRELOAD), rdl --version prints "rdl 99.98.97" and a line
#             naming the headers' version, and exits 0. Skipped when the
#             tool does not load librdl (a static build).
#
# Prints "PASS: CASE" or "FAIL (CASE): ..." on stderr and exits 1.
set -euo pipefail

if [ $# -ne 7 ]; then
    echo "usage: $0 CASE RDL VERSION_PROGRAM SOURCE_DIR PROJECT_VERSION" \
        "SHIM LIBRARY_TYPE" >&2
    exit 2
fi
case_name=$1 rdl=$2 printer=$3 src=$4 project_version=$5 shim=$6
library_type=$7

fail() {
    echo "FAIL ($case_name): $*" >&2
    exit 1
}

# The version written in include/rdl/version.h.
header_version() {
    local part v=""
    for part in MAJOR MINOR PATCH; do
        v+=${v:+.}$(sed -nE "s/^#define RDL_VERSION_${part} ([0-9]+).*/\\1/p" \
            "$src/include/rdl/version.h")
    done
    echo "$v"
}

case_same() {
    local out lines library headers written
    out=$("$rdl" --version) || fail "rdl --version exited $?"
    lines=$(wc -l <<<"$out")
    [ "$lines" -eq 1 ] || fail "rdl --version printed $lines lines: $out"
    [[ $out =~ ^rdl\ ([0-9]+\.[0-9]+\.[0-9]+)$ ]] ||
        fail "rdl --version printed \"$out\", not \"rdl X.Y.Z\""
    {
        read -r library
        read -r headers
    } < <("$printer") || fail "$printer failed"
    written=$(header_version)
    [ "${BASH_REMATCH[1]}" = "$library" ] ||
        fail "rdl --version says ${BASH_REMATCH[1]}," \
            "rdl_version_string() $library"
    [ "$library" = "$headers" ] ||
        fail "rdl_version_string() is $library, RDL_VERSION_STRING $headers"
    [ "$headers" = "$written" ] ||
        fail "RDL_VERSION_STRING is $headers, version.h's numbers $written"
    [ "$written" = "$project_version" ] ||
        fail "version.h says $written, the CMake project $project_version"
    echo "rdl --version: $out; library $library, headers $headers"
}

case_mismatch() {
    local out rc=0 written
    if [ "$library_type" != SHARED_LIBRARY ]; then
        echo "[  SKIPPED ] librdl is a $library_type: nothing to preload over"
        exit 0
    fi
    written=$(header_version)
    # The shim is not built with AddressSanitizer: under RDL_SANITIZE it
    # comes before ASan's runtime, which ASan otherwise refuses.
    out=$(LD_PRELOAD=$shim \
        ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0 \
        "$rdl" --version) || rc=$?
    [ $rc -eq 0 ] || fail "rdl --version exited $rc"
    [ "$(head -n 1 <<<"$out")" = "rdl 99.98.97" ] ||
        fail "rdl --version's first line is not the library's version" \
            "(rdl 99.98.97): $out"
    grep -q "headers.*$written" <<<"$out" ||
        fail "rdl --version does not name the headers' version $written: $out"
    echo "rdl --version with another library: $out"
}

[ -x "$rdl" ] || fail "no tool at $rdl"
case $case_name in
same) case_same ;;
mismatch) case_mismatch ;;
*) fail "unknown case" ;;
esac
echo "PASS: $case_name"
