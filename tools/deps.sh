#!/usr/bin/env bash
# Installs the Debian packages needed to build and test rdl, if any is
# missing (a no-op on a machine that has them all).
#
#   bash tools/deps.sh
#
# Uses apt-get, through sudo when not run as root. The package lists are
# refreshed (apt-get update) only if the install fails without it. Never
# starts a Redis service: the tests start their own throwaway servers, and
# a system redis-server on port 6379 is exactly what they must not rely on.
set -euo pipefail

packages=(
    libhiredis-dev libuv1-dev libsodium-dev libssl-dev libcmocka-dev openssl
    redis-server redis-tools
    cmake gcc g++ make pkg-config clang-format
    clang   # <rdl.hpp> is checked with clang++ too (test.sh stage cxx)
    libclang-rt-14-dev # libFuzzer and the sanitizers' runtime for clang 14
    #                    (the fuzz targets: tools/fuzz.sh, test.sh stage fuzz)
    python3 # the CLI tests validate JSON with python3 -m json.tool
    docker-compose
    dpkg-dev file # cpack -G DEB: dpkg-shlibdeps; CPack runs file(1)
    doxygen # the API reference, without graphviz (tools/doc.sh, stage reference)
)

installed() {
    [ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null)" = \
        "install ok installed" ]
}

missing=()
for p in "${packages[@]}"; do
    installed "$p" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
    echo "deps: all ${#packages[@]} packages installed"
    exit 0
fi
echo "deps: installing ${missing[*]}"

sudo=()
if [ "$(id -u)" -ne 0 ]; then
    if ! command -v sudo >/dev/null; then
        echo "deps: not root and no sudo; install as root:" >&2
        echo "    apt-get install ${missing[*]}" >&2
        exit 1
    fi
    sudo=(sudo)
fi

# Debian's maintainer scripts start services on install unless
# /usr/sbin/policy-rc.d says no (exit 101); both invoke-rc.d and
# deb-systemd-invoke honour it. Put one in place for the duration of the
# install, unless the machine already has its own.
policy=/usr/sbin/policy-rc.d
own_policy=0
remove_policy() {
    if [ "$own_policy" -eq 1 ]; then
        "${sudo[@]}" rm -f "$policy"
    fi
}
trap remove_policy EXIT
if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\n# Written by rdl tools/deps.sh.\nexit 101\n' |
        "${sudo[@]}" tee "$policy" >/dev/null
    "${sudo[@]}" chmod 755 "$policy"
    own_policy=1
fi

apt_install() {
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
        apt-get install -y -q --no-install-recommends "${missing[@]}"
}
if ! apt_install; then
    echo "deps: install failed; updating the package lists and retrying"
    "${sudo[@]}" apt-get update -q
    apt_install
fi

for p in "${missing[@]}"; do
    installed "$p" || { echo "deps: $p did not install" >&2; exit 1; }
done
echo "deps: done"
