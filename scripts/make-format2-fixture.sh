#!/usr/bin/env bash
# Writes the committed fixture of an encrypted LMDB store in format 2 (scrypt, AES-256-GCM, HMAC-SHA256 index keys)
# with the code of the commit that last wrote that format, so later formats are tested against real old bytes.
#
#   scripts/make-format2-fixture.sh [commit]   (default: aea6f18, the last commit whose new stores are format 2)
#
# The store: ReliabilityWorker's `populate` — Note 1...40 (each field follows from the id), an index on `tag`,
# passphrase "reliability", scrypt logN 10. Tests/PersistenceLMDBTests/LegacyFormatTests.swift reads it.
set -euo pipefail

commit="${1:-aea6f18}"
root="$(cd "$(dirname "$0")/.." && pwd)"
out="$root/Tests/PersistenceLMDBTests/Fixtures"
# A fixed, git-ignored place for the old checkout, so a second run reuses its build.
work="$root/.build-fixture"
store="$(mktemp -d)"
cleanup() {
	git -C "$root" worktree remove --force "$work/src" >/dev/null 2>&1 || true
	rm -rf "$store"
}
trap cleanup EXIT

mkdir -p "$work"
git -C "$root" worktree remove --force "$work/src" >/dev/null 2>&1 || true
git -C "$root" worktree add --detach "$work/src" "$commit" >/dev/null
(cd "$work/src" && swift build --product ReliabilityWorker --scratch-path "$work/build")
bin="$(cd "$work/src" && swift build --show-bin-path --scratch-path "$work/build")/ReliabilityWorker"
"$bin" populate --backend lmdb --directory "$store" --records 40 --passphrase reliability --kdf-log-n 10

# Only the data file: LMDB recreates its lock file, which holds nothing but reader slots.
mkdir -p "$out"
cp "$store/Reliability.lmdb" "$out/Format2.lmdb"
ls -l "$out/Format2.lmdb"
