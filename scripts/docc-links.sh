#!/usr/bin/env bash
# Lists the DocC links of every product's docs that don't resolve or are ambiguous — what the docs say about symbols
# that were renamed, moved or hidden since — and exits non-zero when there is one. Builds the symbol graphs in debug
# (in `.build-docc`, so the usual build keeps its flags), then runs the toolchain's `docc convert` per module (a few
# seconds each). `make docs-check` runs it, and `make test` after the tests (a cold symbol-graph build of the documented
# modules only, swift-syntax included: ~4 minutes).
set -euo pipefail
cd "$(dirname "$0")/.."
graphs=$(mktemp -d)
trap 'rm -rf "$graphs"' EXIT
modules=(PersistenceCore PersistenceSQLite PersistenceLMDB PersistencePostgres PersistenceTesting PersistenceMacros PersistenceCommands)
# Only the documented modules and what they depend on: not the executables, the fuzzer or the tests.
for module in "${modules[@]}"; do
    swift build --scratch-path .build-docc --target "$module" -Xswiftc -emit-symbol-graph \
        -Xswiftc -emit-symbol-graph-dir -Xswiftc "$graphs/all" >/dev/null
done
status=0
for module in "${modules[@]}"; do
    mkdir -p "$graphs/$module"
    cp "$graphs/all/$module".symbols.json "$graphs/$module/"
    cp "$graphs/all/$module"@*.symbols.json "$graphs/$module/" 2>/dev/null || true
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
