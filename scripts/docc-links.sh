#!/usr/bin/env bash
# Lists the DocC links of every product's docs that don't resolve or are ambiguous — what the docs say about symbols
# that were renamed, moved or hidden since — and exits non-zero when there is one. Then the toolchain's `docc convert`
# runs per module (a few seconds each). `make docs-check` runs it, and `make test` after the tests.
#
# The symbol graphs come from the usual debug build in `.build`, not from a build of their own: `swift package
# dump-symbol-graph` builds what is missing (nothing after `make test`'s build) and runs swift-symbolgraph-extract on
# each module, and its commands are run again for the documented modules with the modules they re-export
# (`@_exported import PersistenceCore` in the backends) allowed, as the compiler's `-emit-symbol-graph` has them: the
# same symbols and the same warnings. A second debug build of every dependency with `-emit-symbol-graph` (SwiftNIO,
# postgres-nio, BoringSSL, swift-syntax, in `.build-docc`) cost ~20 CPU-minutes of a cold CI run; this costs seconds.
set -euo pipefail
cd "$(dirname "$0")/.."
graphs=$(mktemp -d)
trap 'rm -rf "$graphs"' EXIT
modules=(PersistenceCore PersistenceSQLite PersistenceLMDB PersistencePostgres PersistenceTesting PersistenceMacros
    PersistenceSync PersistenceSyncServer PersistenceSyncHTTP PersistenceSyncHummingbird
    PersistenceCommands)
# --very-verbose prints each extraction command SwiftPM runs, with the module search paths and module maps it needs.
swift package --very-verbose dump-symbol-graph >"$graphs/dump.log" 2>&1 || { cat "$graphs/dump.log" >&2; exit 1; }
status=0
for module in "${modules[@]}"; do
    line=$(sed -n "/^debug: .*swift-symbolgraph-extract -module-name $module /{s/^debug: //p;q;}" "$graphs/dump.log")
    if [ -z "$line" ]; then
        echo "error: swift package dump-symbol-graph ran no swift-symbolgraph-extract for $module" >&2
        exit 1
    fi
    read -r -a extract <<<"$line"
    mkdir -p "$graphs/$module"
    reexported=$(grep -rhoE '^@_exported (public )?import [A-Za-z0-9_]+' "Sources/$module" | awk '{ print $NF }' \
        | sort -u | paste -sd, - || true)
    # The last -output-dir wins: each module's graphs go to a folder of their own.
    "${extract[@]}" -output-dir "$graphs/$module" ${reexported:+"-experimental-allowed-reexported-modules=$reexported"} \
        >"$graphs/extract-$module.log" 2>&1 || { cat "$graphs/extract-$module.log" >&2; exit 1; }
    [ -f "$graphs/$module/$module.symbols.json" ] || { echo "error: no symbol graph for $module" >&2; exit 1; }
    links=$(docc convert "Sources/$module/$module.docc" --additional-symbol-graph-dir "$graphs/$module" \
        --output-path "$graphs/out-$module" --fallback-display-name "$module" \
        --fallback-bundle-identifier "persistence.$module" 2>&1 | grep "warning:" | grep -E "doesn't exist|ambiguous" \
        | sort | uniq -c || true)
    if [ -n "$links" ]; then
        status=1
        printf '%s\n' "$links" | sed "s/^/$module /"
    fi
done
exit $status
