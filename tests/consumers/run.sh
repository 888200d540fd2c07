#!/usr/bin/env bash
# Builds rdl the three ways a project consumes it and checks what it ships.
#
#   bash tests/consumers/run.sh SOURCE_DIR SCRATCH_DIR
#   bash tests/consumers/run.sh --installed PREFIX SCRATCH_DIR
#
# 1. Configures, builds and installs SOURCE_DIR (shared, as at top level)
#    into SCRATCH_DIR/prefix, and checks the installed files and that
#    librdl.so exports nothing but public rdl_ symbols.
# 2. Builds and runs the consumer projects next to this script:
#    subdir (add_subdirectory of SOURCE_DIR), find_package and pkgconfig
#    (against the install), each a C program (main.c) and a C++ one
#    (main.cpp, <rdl.hpp>).
# 3. Installs a static librdl into SCRATCH_DIR/prefix-static and builds the
#    find_package and pkgconfig consumers against it, which exercises the
#    private dependencies the package files declare for static linking.
#
# With --installed, only the find_package and pkgconfig consumers are built
# and run, against the shared librdl already installed in PREFIX (the Debian
# packages install it in /usr: tests/package/run.sh). For /usr they get no
# search path (no CMAKE_PREFIX_PATH, no PKG_CONFIG_PATH), as a project
# building against a system package would not.
#
# SCRATCH_DIR is created if needed; its previous build trees are reused.
# Exits non-zero, naming the step, on the first failure.
set -euo pipefail

installed=0
if [ "${1:-}" = --installed ]; then
    installed=1
    shift
fi
if [ $# -ne 2 ]; then
    echo "usage: $0 SOURCE_DIR SCRATCH_DIR" >&2
    echo "       $0 --installed PREFIX SCRATCH_DIR" >&2
    exit 2
fi
mkdir -p "$2"
src=$(cd "$1" && pwd) # the install prefix with --installed
scratch=$(cd "$2" && pwd)
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
jobs=$(nproc 2>/dev/null || echo 2)

step=""
report() {
    local rc=$?
    if [ $rc -ne 0 ]; then
        echo "consumers: FAILED: $step (exit $rc)" >&2
    fi
}
trap report EXIT

begin() {
    step=$1
    echo "--- consumers: $step"
}

fail() {
    echo "consumers: $*" >&2
    exit 1
}

# install_rdl PREFIX BUILD_DIR [CMAKE_ARGS...]
install_rdl() {
    local prefix=$1 build=$2
    shift 2
    rm -rf "$prefix"
    cmake -S "$src" -B "$build" \
        -DRDL_BUILD_TESTS=OFF -DRDL_BUILD_EXAMPLES=OFF \
        -DCMAKE_INSTALL_PREFIX="$prefix" "$@"
    cmake --build "$build" -j "$jobs"
    cmake --install "$build"
}

# The directory holding rdl.pc under PREFIX (lib, lib64 or lib/<arch>).
pc_dir() {
    local pc
    pc=$(find "$1" -name rdl.pc -path '*/pkgconfig/*' | head -n 1)
    [ -n "$pc" ] || fail "no rdl.pc under $1"
    dirname "$pc"
}

check_installed_files() {
    local prefix=$1 lib=$2 f
    for f in include/rdl.h include/rdl.hpp include/rdl/common.h \
        include/rdl/client.h; do
        [ -f "$prefix/$f" ] || fail "not installed: $f"
    done
    for f in rdlConfig.cmake rdlConfigVersion.cmake rdlTargets.cmake; do
        [ -n "$(find "$prefix" -path "*/cmake/rdl/$f")" ] ||
            fail "not installed: cmake/rdl/$f"
    done
    [ -n "$(find "$prefix" -name "$lib")" ] || fail "not installed: $lib"
    # Internal headers must not leak into the install.
    if find "$prefix/include" -name '*_int.h' -o -name 'internal.h' |
        grep . >/dev/null; then
        fail "internal headers installed under $prefix/include"
    fi
}

# Every defined dynamic symbol must be public API: rdl_ but not rdl__.
check_exports() {
    local so=$1 syms bad
    syms=$(nm -D --defined-only "$so" | awk 'NF == 3 { print $3 }')
    [ -n "$syms" ] || fail "$so exports no symbols"
    bad=$(printf '%s\n' "$syms" | grep -v '^rdl_[a-z0-9]' || true)
    if [ -n "$bad" ]; then
        echo "consumers: $so exports symbols outside the public rdl_ API:" >&2
        printf '%s\n' "$bad" | sed 's/^/    /' >&2
        exit 1
    fi
    printf '%s\n' "$syms" | grep -x rdl_version_string >/dev/null ||
        fail "$so does not export rdl_version_string"
    echo "$(printf '%s\n' "$syms" | wc -l) exported symbols, all rdl_"
}

# build_cmake_consumer NAME BUILD_DIR [CMAKE_ARGS...]
build_cmake_consumer() {
    local name=$1 build=$2
    shift 2
    rm -rf "$build"
    cmake -S "$here/$name" -B "$build" "$@"
    cmake --build "$build" -j "$jobs"
    "$build/consumer"
    "$build/consumer_cpp"
}

# build_pkgconfig_consumer PREFIX OUT_DIR [MAKE_ARGS...]; PREFIX "" leaves
# pkg-config to its default search path.
build_pkgconfig_consumer() {
    local prefix=$1 out=$2 pcdir=""
    shift 2
    [ -z "$prefix" ] || pcdir=$(pc_dir "$prefix")
    rm -rf "$out"
    mkdir -p "$out"
    PKG_CONFIG_PATH="$pcdir" make -C "$here/pkgconfig" OUT="$out" "$@"
    "$out/consumer"
    "$out/consumer_cpp"
}

# check_linked_to PROGRAM LIBDIR: the dynamic linker resolves PROGRAM's
# librdl to the one in LIBDIR (compared as real paths: /lib is /usr/lib on
# Debian 12).
check_linked_to() {
    local prog=$1 libdir=$2 name path
    read -r name path < <(ldd "$prog" |
        awk '$1 ~ /^librdl\.so/ { print $1, $3; exit }') || true
    [ -n "${name:-}" ] || fail "$prog does not link librdl"
    [ "$(readlink -f "$path")" = "$(readlink -f "$libdir/$name")" ] ||
        fail "$prog loads $path, not $libdir/$name"
}

# --installed: the consumers against an installed shared librdl.
if [ $installed -eq 1 ]; then
    prefix=$src
    cmake_args=()
    pkg_prefix=""
    if [ "$prefix" != /usr ]; then
        cmake_args=(-DCMAKE_PREFIX_PATH="$prefix")
        pkg_prefix=$prefix
    fi
    pkg_path=""
    [ -z "$pkg_prefix" ] || pkg_path=$(pc_dir "$pkg_prefix")
    libdir=$(PKG_CONFIG_PATH="$pkg_path" pkg-config --variable=libdir rdl) ||
        fail "pkg-config finds no rdl (PKG_CONFIG_PATH=$pkg_path)"

    begin "exported symbols of $libdir/librdl.so"
    check_exports "$libdir/librdl.so"

    begin "find_package consumer (installed in $prefix)"
    build_cmake_consumer find_package "$scratch/find_package-installed" \
        ${cmake_args[@]+"${cmake_args[@]}"}
    check_linked_to "$scratch/find_package-installed/consumer" "$libdir"

    begin "pkgconfig consumer (installed in $prefix)"
    build_pkgconfig_consumer "$pkg_prefix" "$scratch/pkgconfig-installed"
    check_linked_to "$scratch/pkgconfig-installed/consumer" "$libdir"

    step=""
    echo "--- consumers: all passed (installed in $prefix)"
    exit 0
fi

prefix=$scratch/prefix
static_prefix=$scratch/prefix-static

begin "install shared librdl into $prefix"
install_rdl "$prefix" "$scratch/build-shared" -DBUILD_SHARED_LIBS=ON
check_installed_files "$prefix" librdl.so

begin "exported symbols of librdl.so"
check_exports "$(find "$prefix" -name librdl.so | head -n 1)"

begin "subdir consumer (add_subdirectory)"
build_cmake_consumer subdir "$scratch/subdir" -DRDL_SOURCE_DIR="$src"

begin "find_package consumer (shared)"
build_cmake_consumer find_package "$scratch/find_package" \
    -DCMAKE_PREFIX_PATH="$prefix"
ldd "$scratch/find_package/consumer" | grep -F "$prefix" >/dev/null ||
    fail "find_package consumer is not linked to $prefix's librdl"

begin "pkgconfig consumer (shared)"
build_pkgconfig_consumer "$prefix" "$scratch/pkgconfig"
ldd "$scratch/pkgconfig/consumer" | grep -F "$prefix" >/dev/null ||
    fail "pkgconfig consumer is not linked to $prefix's librdl"

begin "install static librdl into $static_prefix"
install_rdl "$static_prefix" "$scratch/build-static" -DBUILD_SHARED_LIBS=OFF
check_installed_files "$static_prefix" librdl.a

begin "find_package consumer (static)"
build_cmake_consumer find_package "$scratch/find_package-static" \
    -DCMAKE_PREFIX_PATH="$static_prefix"

begin "pkgconfig consumer (static)"
build_pkgconfig_consumer "$static_prefix" "$scratch/pkgconfig-static" STATIC=1

step=""
echo "--- consumers: all passed"
