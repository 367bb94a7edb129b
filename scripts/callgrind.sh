#!/usr/bin/env bash
# Instructions per record of ours and of the raw C API, counted by callgrind in the benchmarks' own workloads: the
# steady figure beside `make compare`'s times, which swing by ±30 % on a shared machine. Each workload runs once
# under callgrind with N records (and N lookups); a subject's figure is the inclusive cost of its workload method
# divided by N (the protocol witness through which the harness calls it). valgrind 3.19 can't read the toolchain's
# DWARF, so the binary runs with its debug information stripped (symbols are kept).
#
#   scripts/callgrind.sh            S2 S3 L1 L4 L6 at N=20000 (builds the Benchmarks package in release first)
#   scripts/callgrind.sh D1         S2's read by record code: hand-written, @Entity, Codable
#   N=5000 scripts/callgrind.sh S2  one workload, fewer records
#   PERSISTENCE_POSTGRES_URL=… scripts/callgrind.sh P3   (scripts/with-postgres.sh sets it; raw postgres-nio
#                                                   works on its event loop, so only ours' figure means something)
#   COMPARE=/path/to/compare scripts/callgrind.sh   another build of the benchmarks (a baseline), not rebuilt
set -euo pipefail
cd "$(dirname "$0")/.."
N=${N:-20000}
WORKLOADS=("$@")
[ ${#WORKLOADS[@]} -gt 0 ] || WORKLOADS=(S2 S3 L1 L4 L6)
if [ -n "${COMPARE:-}" ]; then
    BIN=$COMPARE
else
    swift build -c release --package-path Benchmarks --product compare >/dev/null
    BIN=Benchmarks/.build/release/compare
fi
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT

# Each workload's subjects: label=regex of the mangled name of its witness for the workload's method.
subjects() {
    local witness="A2aDP"
    case "$1" in
        S2) echo "ours=17OursSQLiteSubjectC.*${witness}8fetchAll raw=16RawSQLiteSubjectC.*${witness}8fetchAll" ;;
        S3) echo "ours=17OursSQLiteSubjectC.*${witness}6lookup3ids raw=16RawSQLiteSubjectC.*${witness}6lookup3ids" ;;
        L1 | L4 | L6)
            local method
            case "$1" in L1) method=3put ;; L4) method=3get3ids ;; L6) method=4scan ;; esac
            echo "encrypted=24OursEncryptedLMDBSubjectC.*${witness}${method} plain=20OursPlainLMDBSubjectC.*${witness}${method}" \
                "raw=19RawLMDBPlainSubjectC.*${witness}${method} raw+aes=20RawLMDBSealedSubjectC.*${witness}${method}"
            ;;
        # The read inside `RecordCodeSubject.decodeAll`, specialized per record type (the closure given to `read`;
        # the function around it is merged across types): hand-written (`Person`), `@Entity`, `Codable`.
        D1) echo "raw=16RawSQLiteSubjectC11transaction.*8fetchAll hand=9decodeAll.*KXEfU_AA6PersonV_TG5" \
            "entity=9decodeAll.*KXEfU_AA11MacroPersonV_TG5 codable=9decodeAll.*KXEfU_AA13CodablePersonV_TG5" ;;
        P3) echo "ours=19OursPostgresSubjectC.*${witness}6lookup3ids raw=18RawPostgresSubjectC.*${witness}6lookup3ids" ;;
        *) echo "unknown workload $1" >&2; exit 2 ;;
    esac
}

objcopy --strip-debug "$BIN" "$OUT/compare"
echo "instructions per record, N=$N"
for workload in "${WORKLOADS[@]}"; do
    # Swift seeds its hashing at random per process: fixed, the same binary counts the same instructions every run.
    SWIFT_DETERMINISTIC_HASHING=1 valgrind --tool=callgrind --callgrind-out-file="$OUT/$workload.out" \
        "$OUT/compare" --only "$workload" --n "$N" --lookups "$N" --postgres-lookups "$N" --runs 1 \
        --memory-rows 0 --migration-rows 0 --commits 0 --json "$OUT/$workload.json" >"$OUT/$workload.log" 2>&1 || {
        tail -20 "$OUT/$workload.log" >&2
        exit 1
    }
    callgrind_annotate --inclusive=yes --threshold=100 "$OUT/$workload.out" >"$OUT/$workload.txt"
    line="$workload"
    for subject in $(subjects "$workload"); do
        label=${subject%%=*}
        pattern=${subject#*=}
        ir=$(grep -E "$pattern" "$OUT/$workload.txt" | head -1 | awk '{ gsub(",", "", $1); print $1 }' || true)
        if [ -z "$ir" ]; then
            echo "$workload: no method matching $pattern in callgrind's output (renamed?)" >&2
            exit 1
        fi
        line+=$(awk -v l="$label" -v i="$ir" -v n="$N" 'BEGIN { printf "  %s %d", l, i / n }')
    done
    echo "$line"
done
