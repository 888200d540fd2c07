#!/usr/bin/env bash
# Checks rdl the way it is installed: into any prefix, and as Debian packages.
#
#   bash tests/package/run.sh SOURCE_DIR SCRATCH_DIR
#
# 1. Builds SOURCE_DIR as a new user would (CMake's default prefix),
#    installs it with `cmake --install --prefix` into a temporary
#    .../opt/rdl, and runs the installed rdl --help and --version with a
#    clean environment (no LD_LIBRARY_PATH): the tool finds librdl through
#    its $ORIGIN RUNPATH, and ldd resolves librdl inside the prefix.
# 2. Builds the Debian packages (cmake/Package.cmake) from a tree configured
#    for /usr with `cpack -G DEB`, and checks their Depends (computed by
#    dpkg-shlibdeps), their files, the shlibs entry and that the packaged
#    tool has no RUNPATH.
# 3. Installs both packages with apt-get, runs /usr/bin/rdl, builds the
#    find_package and pkg-config consumers against /usr
#    (tests/consumers/run.sh --installed /usr), then purges the packages
#    again, with whatever apt-get had to install for them, so the machine is
#    left as it was found.
#
# Steps 2 and 3 are skipped, saying why, without cpack, dpkg-deb,
# dpkg-shlibdeps or file (tools/deps.sh installs dpkg-dev and file); step 3
# without apt-get, without root (or sudo that asks no password), or when an
# rdl package is installed already (it is not replaced). Exits non-zero,
# naming the step, on the first failure.
set -euo pipefail

if [ $# -ne 2 ]; then
    echo "usage: $0 SOURCE_DIR SCRATCH_DIR" >&2
    exit 2
fi
mkdir -p "$2"
src=$(cd "$1" && pwd)
scratch=$(cd "$2" && pwd)
jobs=$(nproc 2>/dev/null || echo 2)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rdl-package.XXXXXX")

version=$(sed -n \
    's/^#define RDL_VERSION_\(MAJOR\|MINOR\|PATCH\) \([0-9]*\)$/\2/p' \
    "$src/include/rdl/version.h" | paste -sd .)
[[ $version =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] ||
    { echo "package: no version in include/rdl/version.h" >&2; exit 1; }

# Clean environments: PATH only.
clean_env=(env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin)

step=""
sudo=()
apt_installed=0 # set once apt-get may have installed something
apt_extra=()    # packages apt-get installs for ours (none in CI: deps.sh)

# present PACKAGE: dpkg knows it in some state other than not-installed.
present() {
    local status
    status=$(dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null) || true
    [ -n "$status" ] && [ "$status" != not-installed ]
}

# apt_purge: purges ours and apt_extra, those of them that are present.
apt_purge() {
    local p some=()
    for p in rdl-dev rdl ${apt_extra[@]+"${apt_extra[@]}"}; do
        present "$p" && some+=("$p")
    done
    [ ${#some[@]} -eq 0 ] && return 0
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
        apt-get purge -y -q "${some[@]}"
}

finish() {
    local rc=$?
    if [ $apt_installed -eq 1 ]; then
        echo "--- package: purging the packages again"
        apt_purge || rc=1
    fi
    rm -rf "$tmp"
    if [ $rc -ne 0 ]; then
        echo "package: FAILED: $step (exit $rc)" >&2
    fi
    exit $rc
}
trap finish EXIT

begin() {
    step=$1
    echo "--- package: $step"
}

fail() {
    echo "package: $*" >&2
    exit 1
}

# configure_and_build BUILD_DIR [CMAKE_ARGS...]: the library and the tool.
configure_and_build() {
    local build=$1
    shift
    cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DRDL_BUILD_TESTS=OFF -DRDL_BUILD_EXAMPLES=OFF -DRDL_BUILD_BENCH=OFF \
        -DRDL_BUILD_TOOLS=ON "$@"
    cmake --build "$build" -j "$jobs"
}

# check_tool RDL: --help and --version work in a clean environment, and
# --version is the library's version.
check_tool() {
    local rdl=$1 out
    "${clean_env[@]}" "$rdl" --help >/dev/null || fail "$rdl --help failed"
    out=$("${clean_env[@]}" "$rdl" --version) ||
        fail "$rdl --version failed"
    [ "$out" = "rdl $version" ] ||
        fail "$rdl --version says '$out', not 'rdl $version'"
    echo "$rdl --version: $out"
}

# librdl_of PROGRAM: the librdl the dynamic linker loads for PROGRAM, in a
# clean environment, as a real path.
librdl_of() {
    local path
    path=$("${clean_env[@]}" ldd "$1" |
        awk '$1 ~ /^librdl\.so/ { print $3; exit }')
    [ -n "$path" ] && [ -e "$path" ] || fail "ldd does not resolve librdl of $1"
    readlink -f "$path"
}

# 1. Any prefix.
opt=$tmp/opt/rdl
begin "install into $opt (configured with the default prefix)"
configure_and_build "$scratch/build-prefix" -DCMAKE_INSTALL_PREFIX=/usr/local
cmake --install "$scratch/build-prefix" --prefix "$opt"
check_tool "$opt/bin/rdl"
lib=$(librdl_of "$opt/bin/rdl")
case $lib in
"$(readlink -f "$opt")"/*) echo "$opt/bin/rdl loads $lib" ;;
*) fail "$opt/bin/rdl loads $lib, not the one in $opt" ;;
esac

# 2. Debian packages.
for t in cpack dpkg-deb dpkg-shlibdeps file; do
    if ! command -v "$t" >/dev/null; then
        step=""
        echo "--- package: SKIPPED the Debian packages: no $t" \
            "(bash tools/deps.sh installs dpkg-dev and file)"
        exit 0
    fi
done

deb_build=$scratch/build-deb
begin "cpack -G DEB in $deb_build (configured for /usr)"
configure_and_build "$deb_build" -DCMAKE_INSTALL_PREFIX=/usr
rm -f "$deb_build"/*.deb
(cd "$deb_build" && cpack -G DEB)
arch=$(dpkg --print-architecture)
deb=$deb_build/rdl_${version}_${arch}.deb
dev_deb=$deb_build/rdl-dev_${version}_${arch}.deb
[ -f "$deb" ] || fail "no $deb"
[ -f "$dev_deb" ] || fail "no $dev_deb"

begin "what the packages depend on and hold"
depends=$(dpkg-deb -f "$deb" Depends)
echo "rdl Depends: $depends"
wanted=(libc6 libuv1 libhiredis0.14 libsodium23)
if grep -qx 'RDL_WITH_TLS:BOOL=ON' "$deb_build/CMakeCache.txt"; then
    wanted+=(libssl3)
fi
for p in "${wanted[@]}"; do
    [[ ", $depends," == *", $p "* || ", $depends," == *", $p,"* ]] ||
        fail "rdl does not depend on $p"
done
dev_depends=$(dpkg-deb -f "$dev_deb" Depends)
echo "rdl-dev Depends: $dev_depends"
[[ $dev_depends == *"rdl (= $version)"* ]] ||
    fail "rdl-dev does not depend on rdl (= $version)"
# The SONAME's version: 0.MINOR before 1.0, then MAJOR (CMakeLists.txt).
if [[ $version == 0.* ]]; then
    soversion=${version%.*}
else
    soversion=${version%%.*}
fi
shlibs=$(dpkg-deb -I "$deb" shlibs)
[[ $shlibs == "librdl $soversion rdl (>= $version)" ]] ||
    fail "rdl's shlibs file is '$shlibs', not 'librdl $soversion rdl (>= $version)'"

# has_files DEB PATTERN...: each pattern (an extended regex) matches a path.
has_files() {
    local deb=$1 paths p
    shift
    paths=$(dpkg-deb -c "$deb" | awk '{ print $6 }')
    for p in "$@"; do
        grep -Eqx "$p" <<<"$paths" || fail "$(basename "$deb") has no $p"
    done
}
soname_re="librdl\\.so\\.${soversion//./\\.}"
has_files "$deb" './usr/bin/rdl' "./usr/lib/[^/]+/$soname_re" \
    './usr/lib/[^/]+/librdl\.so\.[0-9.]+' './usr/share/man/man1/rdl\.1' \
    './usr/share/doc/rdl/README\.md'
has_files "$dev_deb" './usr/include/rdl\.h' './usr/include/rdl\.hpp' \
    './usr/include/rdl/version\.h' './usr/lib/[^/]+/librdl\.so' \
    './usr/lib/[^/]+/cmake/rdl/rdlConfig\.cmake' \
    './usr/lib/[^/]+/cmake/rdl/rdlTargets\.cmake' \
    './usr/lib/[^/]+/pkgconfig/rdl\.pc'
dpkg-deb -x "$deb" "$tmp/root"
if readelf -d "$tmp/root/usr/bin/rdl" | grep -E 'RPATH|RUNPATH'; then
    fail "the packaged rdl has a RUNPATH (libdir is a system directory)"
fi
echo "the packaged rdl has no RUNPATH"

# 3. Installed.
skip_install() {
    step=""
    echo "--- package: SKIPPED installing the packages: $*"
    exit 0
}
command -v apt-get >/dev/null || skip_install "no apt-get"
if [ "$(id -u)" -ne 0 ]; then
    sudo -n true 2>/dev/null || skip_install "not root, and no sudo"
    sudo=(sudo -n)
fi
for p in rdl rdl-dev; do
    if present "$p"; then
        skip_install "package $p is on this machine already; not replacing it"
    fi
done

begin "apt-get install rdl and rdl-dev"
# What apt-get would install besides ours is purged with them afterwards.
mapfile -t apt_extra < <("${sudo[@]}" apt-get install -s -q \
    --no-install-recommends "$deb" "$dev_deb" |
    awk '$1 == "Inst" && $2 != "rdl" && $2 != "rdl-dev" { print $2 }')
if [ ${#apt_extra[@]} -ne 0 ]; then
    echo "apt-get also installs (and the end purges): ${apt_extra[*]}"
fi
apt_installed=1
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y -q --no-install-recommends "$deb" "$dev_deb"

begin "the installed rdl tool"
check_tool /usr/bin/rdl
lib=$(librdl_of /usr/bin/rdl)
[ "$lib" = "$(readlink -f "$(dpkg -L rdl | grep -E "/$soname_re\$")")" ] ||
    fail "/usr/bin/rdl loads $lib, not the packaged librdl"
echo "/usr/bin/rdl loads $lib"

begin "consumers against /usr"
bash "$src/tests/consumers/run.sh" --installed /usr "$scratch/consumers"

begin "apt-get purge rdl-dev rdl"
apt_installed=0
apt_purge
for p in rdl rdl-dev ${apt_extra[@]+"${apt_extra[@]}"}; do
    ! present "$p" || fail "package $p is still on this machine"
done

step=""
echo "--- package: all passed"
