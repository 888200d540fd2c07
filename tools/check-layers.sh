#!/usr/bin/env bash
# The layering check: every #include "..." under src/ must point at its own
# module or at a module below it, along the edges listed here (README
# "Layout"). An include that points up or sideways fails the check.
#
#   bash tools/check-layers.sh [ROOT]     (ROOT defaults to the checkout)
#
# Exits 0 when every include follows an allowed edge, 1 (naming each
# offending line) otherwise, 2 on bad usage. System headers (<...>) and the
# public headers (rdl.h, rdl/...) are allowed everywhere; the generated
# script table (rdl_scripts.h) belongs to core.
set -euo pipefail

root=${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
[ -d "$root/src" ] || {
    echo "check-layers: no src/ under $root" >&2
    exit 2
}

# Module -> the modules it may include from (itself always). Bottom first:
#   core        connections, hub, scripts, keys, errors, the sync facade,
#               and the deployment ("router") interface
#   standalone, cluster, sentinel
#               deployments: implement core's router interface
#   deploy      picks a deployment for a URL (names every implementation)
#   watchdog    batched lease renewal
#   lock        rdl_lock_t, the script kinds' shared machinery
#   fair, rwlock, semaphore
#               script kinds
#   multilock   composites: only the extension interface of the lock
#               layer (lock/lock_ext.h), the allocator (core/alloc.h) and
#               the clock (core/clock.h)
#   latch       the count-down latch: scripts, the hub and the sync facade
#               of core; no lock machinery
declare -A allowed=(
    [core]=""
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
while IFS= read -r -d '' file; do
    rel=${file#"$root/src/"}
    module=${rel%%/*}
    if [ -z "${allowed[$module]+set}" ]; then
        echo "$rel: module '$module' is not in tools/check-layers.sh" >&2
        bad=1
        continue
    fi
    n=0
    while IFS= read -r line; do
        n=$((n + 1))
        [[ $line =~ ^[[:space:]]*#[[:space:]]*include[[:space:]]*\"([^\"]+)\" ]] ||
            continue
        inc=${BASH_REMATCH[1]}
        case $inc in
        rdl.h | rdl/*) continue ;;        # the public API
        rdl_scripts.h) target=core ;;     # generated, core's
        */*) target=${inc%%/*} ;;
        *) target=$module ;;              # a header beside the file
        esac
        [ "$target" = "$module" ] && continue
        ok=0
        for edge in ${allowed[$module]}; do
            if [ "$edge" = "$target" ] || [ "$edge" = "$inc" ]; then
                ok=1
                break
            fi
        done
        if [ $ok -eq 0 ]; then
            echo "$rel:$n: includes \"$inc\": $module may not use $target" \
                "(allowed: ${allowed[$module]:-nothing outside core})" >&2
            bad=1
        fi
    done <"$file"
done < <(find "$root/src" -type f \( -name '*.c' -o -name '*.h' \) -print0 |
    sort -z)

if [ $bad -ne 0 ]; then
    echo "check-layers: includes that run against the layers (see" \
        "tools/check-layers.sh)" >&2
    exit 1
fi
echo "check-layers: every include follows the layers"
