#!/usr/bin/env bash
# Builds the API reference from the public headers with Doxygen
# (docs/Doxyfile; docs/reference.md says what it covers).
#
#   bash tools/doc.sh
#
# Writes build-doc/html/ (index.html is the main page), afresh each run.
# Fails, printing every warning, if anything public in include/ is
# undocumented or a comment is malformed: the reference is built with no
# warning or not at all (CI: tools/test.sh, stage reference). The version shown
# is the one in include/rdl/version.h. Needs doxygen (tools/deps.sh).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
out=build-doc

if ! command -v doxygen >/dev/null; then
    echo "doc: doxygen not found; install it with: bash tools/deps.sh" >&2
    exit 1
fi

# The version, written once in include/rdl/version.h (as CMakeLists.txt
# reads it).
part() {
    sed -n "s/^#define RDL_VERSION_$1 \([0-9][0-9]*\)\$/\1/p" \
        include/rdl/version.h
}
version="$(part MAJOR).$(part MINOR).$(part PATCH)"
case $version in
[0-9]*.[0-9]*.[0-9]*) ;;
*)
    echo "doc: no version in include/rdl/version.h ('$version')" >&2
    exit 1
    ;;
esac

rm -rf "$out/html"
mkdir -p "$out"
log="$out/warnings.log"
# docs/Doxyfile has QUIET = YES: whatever doxygen prints on stderr is a
# warning (or an error). WARN_AS_ERROR = FAIL_ON_WARNINGS makes it exit
# non-zero after reporting them all; an empty log is checked as well, so a
# warning fails the run either way.
rc=0
{
    cat docs/Doxyfile
    echo "PROJECT_NUMBER = $version"
} | doxygen - 2>"$log" || rc=$?

count=$(grep -c . "$log" || true)
if [ "$rc" -ne 0 ] || [ "$count" -ne 0 ]; then
    cat "$log" >&2
    echo "doc: doxygen exited $rc with $count line(s) of warnings" \
        "(above; also in $log)" >&2
    exit 1
fi
echo "doc: rdl $version reference in $out/html/index.html, no warnings"
