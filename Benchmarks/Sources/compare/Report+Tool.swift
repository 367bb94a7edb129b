import Workloads

/// The store tool's section: T1 (export, import), T2 (copy against S2 + L1), T3 (hash).
extension Report {
    func toolTable(_ rows: [ResultRow]) -> String {
        var table = MarkdownTable(
            header: [
                "Workload", "Impl", "Rows", "Median s", "Records/s", "s per 1M", "Peak RSS MiB", "Anon peak MiB",
                "File peak MiB", "× S2+L1", "Target", "Met",
            ],
            rightAligned: [2, 3, 4, 5, 6, 7, 8, 9])
        table.rows = rows.map { row in
            let tool = row.tool ?? ToolFigures(rows: row.operations)
            let mebibytes = { (kib: Int?) in kib.map { (Double($0) / 1024).formatted(digits: 1) } ?? "–" }
            return [
                row.workload, row.implementation, tool.rows.grouped, row.medianSeconds.secondsText,
                row.operationsPerSecond.rateText, tool.secondsPerMillion(row.medianSeconds).secondsText,
                mebibytes(tool.peakKiB) + (tool.peakSource == .sampled ? "*" : ""), mebibytes(tool.anonymousPeakKiB),
                mebibytes(tool.filePeakKiB),
                ratio(row.ratioVsReference), row.target?.text ?? "", mark(row.meetsTarget),
            ]
        }
        let records = (rows.first?.tool?.rows ?? 0).grouped
        var notes = [
            "Each row runs the release `persistence` binary as a child process, as a user would: `persistence "
                + "<command> … --quiet`, standard input `/dev/null`, the encrypted stores' passphrase from an "
                + "environment variable (`--passphrase-env`, `--destination-passphrase-env`). Timed from the spawn "
                + "to `wait4`'s return: the process's start, opening the stores (for encrypted LMDB, Argon2id "
                + "`KeyDerivation.rfc9106`: t = 3, 64 MiB) and closing them included. Medians of the runs, the order "
                + "rotating every round (the first round exports JSON Lines first: the imports read that file).",
            "The source is a SQLite store of \(records) `Person` records written by the library "
                + "(`OursSQLiteSubject`, as S1 writes it); T3's encrypted LMDB store likewise (as L1 writes it). "
                + "`export-*` writes a new file (`--output`), `import-*` makes a new store from the JSON Lines export.",
            "Peak RSS is the child's peak resident size, the highest over the runs: `wait4`'s `ru_maxrss` where it "
                + "exceeds `compare`'s own size at the spawn (its peak, reset just before): `posix_spawn` runs the "
                + "child in `compare`'s memory until `exec`, and Linux counts that memory's high-water mark in the "
                + "child's `ru_maxrss`. Otherwise (marked *) the child stayed below it, and the figure is its last "
                + "`VmHWM` from `/proc/<pid>/status` (its own memory's high-water mark), read every 10 ms — or that "
                + "of a process it started, if higher (`verify` checks in a child of its own). Anon and file peaks "
                + "are the highest `RssAnon` and `RssFile` sampled likewise (a shorter peak can be missed). Creating or opening an encrypted LMDB store takes 64 MiB "
                + "of anonymous memory for Argon2id for a moment, whatever the store's size; LMDB maps its file, so "
                + "the pages it reads or writes count as file-backed resident memory.",
        ]
        if let copy = rows.first(where: { $0.workload == WorkloadID.t2.rawValue && $0.implementation == "copy" }),
            let reference = copy.tool?.reference
        {
            func seconds(_ implementation: String) -> Double? {
                rows.first { $0.workload == WorkloadID.t2.rawValue && $0.implementation == implementation }?
                    .medianSeconds
            }
            var text =
                "T2: `copy` took \(copy.medianSeconds.secondsText) s against S2 + L1 = "
                + "\(reference.s2Seconds.secondsText) + \(reference.l1Seconds.secondsText) = "
                + "\(reference.seconds.secondsText) s (ours, at the same N, "
                + (reference.fromWorkloadRows ? "this run's S2 and L1 rows" : "measured by T2 in this run")
                + "): \(ratio(copy.ratioVsReference))×, goal ≤ 1.5×. S2 + L1 is one read of every record and one "
                + "write of them all, in one process, the store already open; `copy` also hashes the records it "
                + "reads, then opens the copy, verifies it and hashes it again to prove it equal to the source — "
                + "two more passes over the copy."
            if let verify = seconds("verify-copy"), let hash = seconds("hash-copy") {
                let pass = copy.medianSeconds - verify - hash
                text +=
                    " Run apart on each copy, `verify` took \(verify.secondsText) s and `hash` \(hash.secondsText) s, "
                    + "each with its own process start (`verify` checks in a second process) and Argon2id — as many "
                    + "key derivations as `copy` makes (one to create, one to reopen)"
                    + (pass > 0
                        ? ": the copying pass itself is about \(pass.secondsText) s, \(ratio(pass / reference.seconds))× "
                            + "S2 + L1."
                        : "; at this size those fixed costs outweigh the passes, so no estimate of the copying pass.")
            }
            notes.append(text)
        }
        notes.append(
            "Verified: `export-jsonl` has \(records) + 1 lines, the header and a `Person` record line each; "
                + "`export-csv` a header row of `Person`'s six attributes and rows that parse back into exactly the "
                + "generator's records (count and checksum of every field); each imported store, and each copy, "
                + "hashes (`persistence hash`, not timed for T1) to the source's digest; `copy` exits 0 and prints "
                + "that digest, `verify` finds the copy sound; T3's two stores both hash to it.")
        return section("## T1–T3: the store tool (`persistence`) on \(records) records", table, notes: notes)
    }
}
