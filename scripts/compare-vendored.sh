#!/usr/bin/env bash
# L1, L4, L5, L6 and K with the vendored LMDB and libsodium (what Apple's platforms build) against the system's, in one
# run on one machine: two builds of `compare`, run in turn ROUNDS times (default 2); of each row, the median of 3 runs
# per round and the best round are kept.
# `make compare-vendored` builds both and runs this.
#
#   scripts/compare-vendored.sh <system compare> <vendored compare>
#
# In the vendored binary the raw rows run on the vendored code too: the binary's own mdb_* and libsodium symbols
# take precedence over the system libraries RawLMDB names, so each binary's ratios to raw compare like with like.
set -euo pipefail
SYSTEM=$1
VENDORED=$2
ROUNDS=${ROUNDS:-2}
N=${N:-100000}
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
for round in $(seq "$ROUNDS"); do
    for build in system vendored; do
        binary=$SYSTEM
        [ "$build" = vendored ] && binary=$VENDORED
        echo "==> compare-vendored: round $round, $build libraries"
        "$binary" --n "$N" --runs 3 --only L1,L4,L5,L6,K --json "$OUT/$build-$round.json" > "$OUT/$build-$round.log" 2>&1 || {
            tail -20 "$OUT/$build-$round.log" >&2
            exit 1
        }
    done
done
python3 - "$OUT" <<'PYTHON'
import glob, json, os, sys

best = {}
for path in glob.glob(os.path.join(sys.argv[1], "*.json")):
    build = os.path.basename(path).split("-")[0]
    for row in json.load(open(path)):
        key = (row["workload"], row["impl"], build)
        seconds = row["median_s"]
        best[key] = min(best.get(key, seconds), seconds)
rows = sorted({(w, i) for (w, i, _) in best}, key=lambda r: ("L1 L4 L5 L6 K".split().index(r[0]), r[1]))
print(f'{"workload":8} {"implementation":15} {"system s":>10} {"vendored s":>11} {"vendored/system":>16}')
for workload, impl in rows:
    system, vendored = best.get((workload, impl, "system")), best.get((workload, impl, "vendored"))
    ratio = f"{vendored / system:.2f}" if system and vendored else ""
    print(f'{workload:8} {impl:15} {system or 0:>10.4f} {vendored or 0:>11.4f} {ratio:>16}')
PYTHON
