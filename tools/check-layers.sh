#!/usr/bin/env bash
# The layering check: every #include "..." under src/, and with --calls
# every call between the library's object files, must point at its own
# unit or at a unit on its floor or below, along the edges listed here
# (docs/design.md "Layers"). One that points up or sideways fails.
#
#   bash tools/check-layers.sh [ROOT]                  includes
#   bash tools/check-layers.sh --calls BUILD_DIR [ROOT]
#                                    includes, then the calls: the symbols
#                                    each object of BUILD_DIR's library
#                                    takes from another (nm)
#
# Exits 0 when everything follows the layers, 1 (naming each offending
# line or call) otherwise, 2 on bad usage. System headers (<...>) and the
# public headers (rdl.h, rdl/...) are allowed everywhere; the generated
# script table (rdl_scripts.h) belongs to core/script; the function
# library's name and text (rdl_library.h, data only) to core/library, on
# the bottom floor.
set -euo pipefail

build=""
if [ "${1:-}" = "--calls" ]; then
    [ $# -ge 2 ] || {
        echo "usage: check-layers.sh [--calls BUILD_DIR] [ROOT]" >&2
        exit 2
    }
    build=$2
    shift 2
fi
root=${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
[ -d "$root/src" ] || {
    echo "check-layers: no src/ under $root" >&2
    exit 2
}

# A unit is a file of src/core (by its name without extension: its .c and
# .h are one unit) or a whole module (a folder of src/). Each has a floor;
# a unit may use units of its own floor or below, and a module only the
# modules its line below names ("core" means core's units on its floor or
# below). Bottom first:
#   0 base        allocation, the clock, errors, replies, URLs, key names,
#                 slots, the map and queue, thread owners, the scripts'
#                 function library (generated data)
#   1 transport   net (what one client's connections share), TLS sessions,
#                 the connection (conn.c)
#   2             getting a connection connected (connect.c)
#   3 durability  WAIT confirmations on the durable line
#   4 deployments the router interface (core/router.h) and its
#                 implementations: standalone, cluster, sentinel
#   5 deploy      picks a deployment for a URL (names every implementation)
#   6 client      the client object, its loop, tasks, shutdown
#   7 services    scripts, the hub, the blocking facade, retries
#   8             batching (runs scripts), waiting (uses the hub), the
#                 event callback (set through the blocking facade)
#   9             the listing of locks; internal.h (every service at once)
#  10 watchdog    batched lease renewal
#  11 lock        rdl_lock_t, the script kinds' shared machinery
#  12 kinds       fair, rwlock, semaphore; the latch (services of core, no
#                 lock machinery); multilock (only the extension interface
#                 of the lock layer, lock/lock_ext.h, and core's
#                 allocator and clock)
declare -A core_floor=(
    [alloc]=0 [clock]=0 [errmsg]=0 [error]=0 [reply]=0 [url]=0 [keys]=0
    [slot]=0 [map]=0 [queue]=0 [owner]=0 [library]=0
    [net]=1 [tls]=1 [conn]=1
    [connect]=2
    [durable]=3
    [router]=4
    [client]=6 [route]=6 [loop]=6
    [script]=7 [hub]=7 [sync]=7 [retry]=7
    [batch]=8 [wait]=8 [events]=8
    [list]=9 [internal]=9
)
declare -A floor=(
    [core]=-1 [standalone]=4 [cluster]=4 [sentinel]=4 [deploy]=5
    [watchdog]=10 [lock]=11 [fair]=12 [rwlock]=12 [semaphore]=12
    [latch]=12 [multilock]=12
)
declare -A allowed=(
    [core]="standalone cluster sentinel deploy"
    [standalone]="core"
    [cluster]="core"
    [sentinel]="core"
    [deploy]="core standalone cluster sentinel"
    [watchdog]="core"
    [lock]="core watchdog"
    [fair]="core watchdog lock"
    [rwlock]="core watchdog lock"
    [semaphore]="core watchdog lock"
    [multilock]="lock/lock_ext.h core/alloc.h core/clock.h"
    [latch]="core"
)

bad=0

# unit_of PATH (relative to src/, e.g. core/conn.c or lock/acquire.c)
unit_of() {
    local rel=$1 module=${1%%/*} base
    if [ "$module" = core ]; then
        base=${rel#core/}
        base=${base%%.*}
        echo "core/$base"
    else
        echo "$module"
    fi
}

# floor_of UNIT; empty if unknown
floor_of() {
    local u=$1
    if [[ $u == core/* ]]; then
        echo "${core_floor[${u#core/}]:-}"
    else
        echo "${floor[$u]:-}"
    fi
}

# may_use FROM_UNIT TO_UNIT WHAT: 0 if FROM may use TO (WHAT is the
# included header, "" for a call, "public" for a call of the public API,
# which only the floors restrict)
may_use() {
    local from=$1 to=$2 what=$3 ff tf edge ok=0
    [ "$from" = "$to" ] && return 0
    ff=$(floor_of "$from")
    tf=$(floor_of "$to")
    [ -n "$ff" ] && [ -n "$tf" ] && [ "$tf" -le "$ff" ] || return 1
    [ "${from%%/*}" = "${to%%/*}" ] && return 0 # within core: floors
    [ "$what" = public ] && return 0
    for edge in ${allowed[${from%%/*}]}; do
        if [ "$edge" = "${to%%/*}" ] || [ "$edge" = "$what" ] ||
            { [ -z "$what" ] && [[ $edge == */* ]] &&
                [ "$(unit_of "$edge")" = "$to" ]; }; then
            ok=1
            break
        fi
    done
    [ $ok -eq 1 ]
}

# Every unit must have a floor.
while IFS= read -r -d '' file; do
    rel=${file#"$root/src/"}
    u=$(unit_of "$rel")
    if [ -z "$(floor_of "$u")" ]; then
        echo "$rel: unit '$u' has no floor in tools/check-layers.sh" >&2
        bad=1
    fi
done < <(find "$root/src" -type f \( -name '*.c' -o -name '*.h' \) -print0 |
    sort -z)

# Includes.
while IFS= read -r -d '' file; do
    rel=${file#"$root/src/"}
    module=${rel%%/*}
    u=$(unit_of "$rel")
    [ -n "$(floor_of "$u")" ] || continue
    n=0
    while IFS= read -r line; do
        n=$((n + 1))
        [[ $line =~ ^[[:space:]]*#[[:space:]]*include[[:space:]]*\"([^\"]+)\" ]] ||
            continue
        inc=${BASH_REMATCH[1]}
        case $inc in
        rdl.h | rdl/*) continue ;;                   # the public API
        rdl_scripts.h) target=core/script ;;         # generated, core's
        rdl_library.h) target=core/library ;;        # generated: data only
        */*) target=$(unit_of "$inc") ;;
        *) target=$(unit_of "$module/$inc") ;;       # beside the file
        esac
        if ! may_use "$u" "$target" "$inc"; then
            echo "$rel:$n: includes \"$inc\": $u (floor $(floor_of "$u"))" \
                "may not use $target (floor $(floor_of "$target"))" >&2
            bad=1
        fi
    done <"$file"
done < <(find "$root/src" -type f \( -name '*.c' -o -name '*.h' \) -print0 |
    sort -z)

# Calls: which object defines each global symbol, and what each takes.
if [ -n "$build" ]; then
    objdir=$build/CMakeFiles/rdl_objects.dir/src
    [ -d "$objdir" ] || {
        echo "check-layers: no objects under $objdir (build first)" >&2
        exit 2
    }
    declare -A owner=()
    mapfile -t objs < <(cd "$objdir" && find . -name '*.o' | sed 's|^\./||' |
        sort)
    [ ${#objs[@]} -gt 0 ] || {
        echo "check-layers: no objects under $objdir" >&2
        exit 2
    }
    for o in "${objs[@]}"; do
        u=$(unit_of "${o%.o}")
        while read -r sym; do
            owner[$sym]=$u
        done < <(nm -g --defined-only "$objdir/$o" | awk '{print $3}')
    done
    ncalls=0
    for o in "${objs[@]}"; do
        rel=${o%.o}
        u=$(unit_of "$rel")
        while read -r sym; do
            to=${owner[$sym]:-}
            [ -n "$to" ] || continue # libc, libuv, hiredis, ...
            [ "$to" = "$u" ] && continue
            ncalls=$((ncalls + 1))
            what=""
            [[ $sym == rdl_* ]] && what=public
            if ! may_use "$u" "$to" "$what"; then
                echo "$rel: calls $sym: $u (floor $(floor_of "$u"))" \
                    "may not use $to (floor $(floor_of "$to"))" >&2
                bad=1
            fi
        done < <(nm -u "$objdir/$o" | awk '{print $2}')
    done
fi

if [ $bad -ne 0 ]; then
    echo "check-layers: uses that run against the layers (see" \
        "tools/check-layers.sh)" >&2
    exit 1
fi
if [ -n "$build" ]; then
    echo "check-layers: every include and all $ncalls calls between units" \
        "follow the layers"
else
    echo "check-layers: every include follows the layers"
fi
