#!/usr/bin/env bash
# Instructions per operation of every timed workload, ours and raw and the others, counted by callgrind: the steady
# figure beside `make compare`'s times, which swing by ±30 % on a shared machine. `make instructions` runs it.
#
# The benchmarks mark each timed operation (Workloads' Stopwatch, through the CallgrindMarkers C target): valgrind
# runs `compare` once with collection off, each timed operation turns it on, and dumps its count labelled with the
# workload and implementation (`"S2 ours"`). This script sums the dumps per label and joins them with the run's
# compare.json, so the rows are the same — workload, implementation, operations — with instructions per operation
# and the ratio to raw's in place of seconds. Counts are exact for a given binary and input: a regression shows as a
# number that moves, not as noise.
#
# Not counted: M (memory), M2, M3, S8's LMDB rows, S8's and O2's phases (child processes or latencies, not work done
# in the process), O1 and P7 (commit costs bound by fsync and the server), Y1–Y4 (sync: the timing thread only waits
# while the stores' and SwiftNIO's threads work, so its count says nothing — 13 instructions per record for ours — and
# Y3's HTTP requests time out under valgrind), PostgreSQL's side of P1–P6 (another process), and raw postgres-nio's
# (its event loop's threads): P1–P6 have ours' client work only.
#
#   scripts/instructions.sh                   every workload at N=20000 (N1: 2 reads of the table)
#   N=5000 ONLY=S2,D1 scripts/instructions.sh
#   BIN=path/to/compare ONLY=L1,L4,L6,K scripts/instructions.sh   another build of compare (make compare-vendored)
#   ONLY=V1 ARGS="--vectors 5000" scripts/instructions.sh           more arguments for compare (sizes of F1, V1…)
set -euo pipefail
cd "$(dirname "$0")/.."
N=${N:-20000}
ONLY=${ONLY:-}
JSON=${JSON:-.benchmarks/instructions.json}
if [ -z "${BIN:-}" ]; then
    swift build -c release --package-path Benchmarks --product compare >/dev/null
    BIN="$(swift build -c release --package-path Benchmarks --show-bin-path)/compare"
fi
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
# valgrind 3.19 can't read the toolchain's DWARF: run a copy without debug information (symbols kept).
objcopy --strip-debug "$BIN" "$OUT/compare"
echo "==> instructions: compare under callgrind, N=$N${ONLY:+, only $ONLY} (several minutes)"
# Swift seeds its hashing at random per process: fixed, the same binary counts the same instructions every run.
SWIFT_DETERMINISTIC_HASHING=1 scripts/with-postgres.sh valgrind --tool=callgrind --collect-atstart=no \
    --callgrind-out-file="$OUT/callgrind.out" "$OUT/compare" --n "$N" --lookups "$N" --postgres-lookups "$N" \
    --writer-commits 16 --runs 1 --memory-rows 0 --migration-rows 0 --aggregate-rows "$N" --northwind-fetches 2 --realm-users "$N" --realm-students "$((N / 5))" \
    --commits 0 --sync-rows 0 --sync-push-records 0 --sync-resume-records 0 ${ONLY:+--only "$ONLY"} ${ARGS:-} --json "$OUT/compare.json" >"$OUT/compare.log" 2>&1 || {
    tail -20 "$OUT/compare.log" >&2
    exit 1
}
mkdir -p "$(dirname "$JSON")"
python3 - "$OUT" "$JSON" <<'PYTHON'
import glob, json, os, sys

out, destination = sys.argv[1], sys.argv[2]
counts = {}
for path in glob.glob(os.path.join(out, "callgrind.out*")):
    label, total = None, None
    with open(path, errors="replace") as dump:
        for line in dump:
            if line.startswith("desc: Trigger: Client Request: "):
                label = line[len("desc: Trigger: Client Request: "):].strip()
            elif line.startswith("totals:") or line.startswith("summary:"):
                total = int(line.split()[1])
    if label and label != "unlabelled" and total is not None:
        counts[label] = counts.get(label, 0) + total
rows = json.load(open(os.path.join(out, "compare.json")))
result = []
for row in rows:
    label = f'{row["workload"]} {row["impl"]}'
    # Raw postgres-nio works on its event loop threads, outside the timed closure's thread: nothing to compare.
    if label not in counts or (row["workload"].startswith("P") and row["impl"] == "raw"):
        continue
    operations = max(1, row.get("operations") or 1)
    result.append({
        "workload": row["workload"], "implementation": row["impl"], "operations": operations,
        "instructions": counts[label], "instructionsPerOperation": round(counts[label] / operations, 1),
    })
for entry in result:
    raw = next((r for r in result if r["workload"] == entry["workload"] and r["implementation"] == "raw"), None)
    raw_total = raw["instructions"] / raw["operations"] if raw else 0
    ratio = entry["instructions"] / entry["operations"] / raw_total if raw_total > 0 else None
    entry["ratioVsRaw"] = round(ratio, 3) if ratio is not None else None
json.dump({"method": "callgrind instructions of each timed operation (scripts/instructions.sh)", "rows": result},
          open(destination, "w"), indent=2)
width = max((len(e["implementation"]) for e in result), default=10)
print(f'{"workload":8} {"implementation":{width}} {"instr/op":>14} {"x raw":>7}')
for e in result:
    ratio = f'{e["ratioVsRaw"]:.2f}' if e["ratioVsRaw"] is not None else ""
    print(f'{e["workload"]:8} {e["implementation"]:{width}} {e["instructionsPerOperation"]:>14,.1f} {ratio:>7}')
print(f"JSON: {destination}")
PYTHON
