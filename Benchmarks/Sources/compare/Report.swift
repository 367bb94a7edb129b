import Workloads

/// The tables of a run, as Markdown: SQLite, SQLite migration (S8), reconcile (R1), PostgreSQL (P1–P6, P7), LMDB,
/// opening (K), memory (M), migration (M2), observation (O1, O2), sync (Y1–Y3), the store tool (T1–T3), then a
/// summary of the targets.
struct Report {
    let rows: [ResultRow]
    let memoryRows: Int
    let migrationRows: Int
    let commits: Int

    func render() -> String {
        var sections: [String] = []
        let sqlite = rows.filter { SQLiteWorkload(rawValue: $0.workload) != nil }
        if !sqlite.isEmpty {
            sections.append("## SQLite\n\n" + timingTable(sqlite, referenceTitle: "× GRDB").render())
        }
        let recordCode = rows.filter { $0.workload == RecordCodeSubject.workload }
        if !recordCode.isEmpty { sections.append(recordCodeTable(recordCode)) }
        let northwind = rows.filter { $0.workload == NorthwindSubject.workload }
        if !northwind.isEmpty { sections.append(northwindTable(northwind)) }
        for (workload, phases) in [
            (SuiteUsersSubject.workload, SuitePhase.allCases.map(\.rawValue)),
            (SuiteStudentsSubject.workload, SuiteStudentsPhase.allCases.map(\.rawValue)),
        ] {
            let suite = rows.filter { $0.workload.hasPrefix(workload + "/") }
            if !suite.isEmpty { sections.append(realmSuiteTable(suite, workload: workload, phases: phases)) }
        }
        let mapping = rows.filter { $0.workload == MappingMigrationHarness.workload }
        if !mapping.isEmpty { sections.append(mappingMigrationTable(mapping)) }
        let reconcile = rows.filter { $0.workload == ReconcileSubject.workload }
        if !reconcile.isEmpty { sections.append(reconcileTable(reconcile)) }
        let search = rows.filter { $0.workload == FullTextSubject.workload }
        if !search.isEmpty { sections.append(fullTextTable(search)) }
        let vectors = rows.filter { $0.workload == VectorSubject.workload }
        if !vectors.isEmpty { sections.append(vectorTable(vectors)) }
        let cascade = rows.filter { $0.workload == CascadeSubject.workload }
        if !cascade.isEmpty { sections.append(cascadeTable(cascade)) }
        let eager = rows.filter { $0.workload == EagerLoadSubject.workload }
        if !eager.isEmpty { sections.append(eagerTable(eager)) }
        let aggregates = rows.filter { $0.workload == AggregateSubject.workload }
        if !aggregates.isEmpty { sections.append(aggregateTable(aggregates)) }
        let postgres = rows.filter { PostgresWorkload(rawValue: $0.workload) != nil }
        if !postgres.isEmpty { sections.append(postgresTable(postgres)) }
        let writers = rows.filter { $0.concurrentWriters != nil }
        if !writers.isEmpty { sections.append(concurrentWritersTable(writers)) }
        let lmdb = rows.filter { ["L1", "L4", "L5", "L6"].contains($0.workload) }
        if !lmdb.isEmpty {
            sections.append(
                "## LMDB\n\n" + timingTable(lmdb, referenceTitle: "× raw+AES").render()
                    + "\n\nRatios are to raw plain LMDB; targets apply to ours-encrypted. Every implementation keeps "
                    + "the `name` index (a keyed digest per record when encrypted).")
        }
        let opening = rows.filter { $0.workload == "K" }
        if !opening.isEmpty {
            var table = MarkdownTable(header: ["Impl", "Median s", "Opens/s", "× raw"], rightAligned: [1, 2, 3])
            table.rows = opening.map { row in
                [
                    row.implementation, row.medianSeconds.secondsText, row.operationsPerSecond.rateText,
                    ratio(row.ratioVsRaw),
                ]
            }
            sections.append(
                "## K: opening an existing store\n\n" + table.render()
                    + "\n\nOurs-encrypted derives its key with Argon2id (`KeyDerivation.rfc9106`: t = 3, 64 MiB, p = 1) "
                    + "and checks the passphrase; raw is `mdb_env_open` plus opening its database.")
        }
        let memory = rows.filter { $0.workload == "M" }
        if !memory.isEmpty { sections.append(memoryTable(memory)) }
        let migration = rows.filter {
            [MigrationHarness.blockWorkload, MigrationHarness.tenthWorkload, MigrationHarness.mappedMemoryWorkload]
                .contains($0.workload)
        }
        if !migration.isEmpty { sections.append(migrationTable(migration)) }
        let commitCost = rows.filter { $0.workload == CommitCostWorkload.workload }
        if !commitCost.isEmpty { sections.append(commitCostTable(commitCost)) }
        let latency = rows.filter { $0.workload == DeliveryLatencyWorkload.workload }
        if !latency.isEmpty { sections.append(deliveryLatencyTable(latency)) }
        sections += syncSections()
        let tool = rows.filter { $0.tool != nil }
        if !tool.isEmpty { sections.append(toolTable(tool)) }
        sections.append(summary())
        return sections.joined(separator: "\n\n")
    }

    /// The timings of workloads every implementation runs alike; `referenceTitle` names the column of ratios to a
    /// second reference, left out when `nil`.
    func timingTable(_ rows: [ResultRow], referenceTitle: String?) -> MarkdownTable {
        let reference = referenceTitle.map { [$0] } ?? []
        var table = MarkdownTable(
            header: ["Workload", "Impl", "Median s", "Ops/s", "× raw"] + reference + ["Target (ours)", "Met"],
            rightAligned: Set(2..<(5 + reference.count)))
        table.rows = rows.map { row in
            [
                row.workload, row.implementation, row.medianSeconds.secondsText, row.operationsPerSecond.rateText,
                ratio(row.ratioVsRaw),
            ] + (referenceTitle == nil ? [] : [ratio(row.ratioVsReference)])
                + [row.target?.text ?? "", mark(row.meetsTarget)]
        }
        return table
    }

    private func memoryTable(_ rows: [ResultRow]) -> String {
        var table = MarkdownTable(
            header: [
                "Impl", "Rows", "Iterate s", "× raw", "Peak RSS MiB", "Anon peak MiB", "File peak MiB", "Target", "Met",
            ],
            rightAligned: [1, 2, 3, 4, 5, 6])
        table.rows = rows.map { row in
            let memory = row.memory ?? MemoryReport()
            return [
                row.implementation, memory.rows.grouped, row.medianSeconds.secondsText, ratio(row.ratioVsRaw),
                mebibytes(memory.peakKiB), mebibytes(memory.anonymousPeakKiB), mebibytes(memory.filePeakKiB),
                row.target?.text ?? "", mark(row.meetsTarget),
            ]
        }
        let openPeak = rows.first { $0.implementation == MemorySubject.lmdbOursEncrypted.rawValue }?.memory?.openPeakKiB
        let reset = rows.allSatisfy { $0.memory?.peakWasReset == true }
        var notes = [
            "Each store is filled by one child process (records streamed from the generator) and iterated by another, "
                + "one record at a time (`forEach` for ours), so each peak belongs to that iteration alone.",
            reset
                ? "Peak RSS is `VmHWM` during the iteration: the counter is reset after opening"
                    + (openPeak.map { " (opening the encrypted store peaks at \(mebibytes($0)) MiB: Argon2id)" } ?? "")
                    + "."
                : "Peak RSS is `VmHWM` since the process started (resetting it failed), so it includes opening.",
            "Anon and file peaks sample `RssAnon` and `RssFile` every 1,024 records. LMDB maps its file: every page "
                + "read stays resident as file-backed memory the kernel can drop at will, so peak RSS grows with the "
                + "store. The < 64 MiB target is judged on peak RSS for SQLite and on anonymous memory for LMDB.",
        ]
        if memoryRows != rows.first?.memory?.rows { notes.removeAll() }
        return section("## M: iterating \(memoryRows.grouped) records", table, notes: notes)
    }

    private func mappingMigrationTable(_ rows: [ResultRow]) -> String {
        var table = MarkdownTable(
            header: [
                "Impl", "Rows", "Migrate s", "Before s", "Copy s", "After s", "Records/s", "× raw", "Anon +MiB",
                "Target (ours)", "Met",
            ],
            rightAligned: [1, 2, 3, 4, 5, 6, 7, 8])
        table.rows = rows.map { row in
            [
                row.implementation, (row.records ?? row.operations).grouped, row.medianSeconds.secondsText,
                row.secondsBeforePass.map(\.secondsText) ?? "–", row.secondsInPass.map(\.secondsText) ?? "–",
                row.secondsAfterPass.map(\.secondsText) ?? "–", row.operationsPerSecond.rateText,
                ratio(row.ratioVsRaw), growth(row), row.target?.text ?? "", mark(row.meetsTarget),
            ]
        }
        let records = rows.first.map { ($0.records ?? $0.operations).grouped } ?? "N"
        let notes = [
            "Version 1 → 2 of `Person` in one heavyweight step: `score` transformed (points, a `Double`, to whole "
                + "hundredths, an integer, rounded half up), `email` removed, `karma` added with its declared "
                + "default; the table is rebuilt, so its `name` index is built again.",
            "Timed: ours is `SQLiteBuilder.create()` with the version-2 model and a `MigrationPlan` whose "
                + "`MappingModel` transforms `score` in a Swift closure, from its start to its return, the backup "
                + "before a heavyweight migration turned off (`backsUpBeforeHeavyweightMigration = false`: raw "
                + "makes no copy either); raw is opening the connection and one transaction written by hand in the "
                + "C API — `CREATE TABLE` new, `INSERT … SELECT` with the transform in SQL "
                + "(`CAST(score * 100 + 0.5 AS INTEGER)`), the default as a literal and `email` left out, "
                + "`DROP TABLE`, `ALTER TABLE … RENAME`, `CREATE INDEX`, the metadata's model version, `COMMIT`. "
                + "`ours+backup` is ours with the builder's default: SQLite's online backup copies the store first "
                + "(no target; its `Before s` includes the copy).",
            "Every run migrates an identical copy of one store of \(records) records seeded by the library "
                + "(copying is not timed), the order rotating every round. Phases (medians): `Before s` until the "
                + "copy of the rows begins (opening, the schema check and plan, the new table), `Copy s` the copy "
                + "(ours' mapping pass, raw's `INSERT … SELECT`), `After s` the rest: dropping the old table, "
                + "renaming, building the index, the metadata and the commit.",
            "Verified: both stores are read back with the same C code — no `email` column, the index present, "
                + "`PRAGMA integrity_check` ok, model version 2, `score` and `karma` stored as integers, and the "
                + "checksum of every record against the generator; ours is also read through the library, and "
                + "looked up by id and by the rebuilt `name` index.",
            "LMDB (`lmdb-raw`, `ours-plain`; `raw+aes-gcm`, `ours-encrypted`; each `× raw` to the raw rewrite of its "
                + "own configuration, the goal ≤ 2×): the same `MigrationPlan` given to `LMDBBuilder.create()`; raw "
                + "opens the environment and, in one write transaction, opens (AES-GCM), decodes, maps (the same "
                + "`score` transform in Swift, `email` left out, `karma` appended), encodes, seals again and puts "
                + "back every record in place (the `name` index kept: neither names nor keys change). Each run in a "
                + "child process of its own, as M2's; `Before s` is opening (Argon2id for ours-encrypted), `Copy s` "
                + "the pass over the records, `After s` the commit; `Anon +MiB` the anonymous peak over the "
                + "anonymous memory before the migration (M3 judges it at 1,000,000 records). Verified: every "
                + "record read back (raw with its own decoder, ours through the library) against the generator, "
                + "ours also looked up by id and by name.",
        ]
        return section("## S8: mapping-model migration of \(records) records", table, notes: notes)
    }

    /// The table of G1 or A1: medians, records per second and the ratio to raw.
    private func graphTable(_ rows: [ResultRow]) -> MarkdownTable {
        var table = MarkdownTable(
            header: ["Impl", "Median s", "Records/s", "× raw", "Target (ours)", "Met"], rightAligned: [1, 2, 3])
        table.rows = rows.map { row in
            [
                row.implementation, row.medianSeconds.secondsText, row.operationsPerSecond.rateText,
                ratio(row.ratioVsRaw), row.target?.text ?? "", mark(row.meetsTarget),
            ]
        }
        return table
    }

    private func cascadeTable(_ rows: [ResultRow]) -> String {
        let notes = [
            "One author with a hundredth of N posts and the rest their comments; a second author's 10 posts and 90 "
                + "comments stay. Timed: the one write that deletes the author, on a store filled, closed and "
                + "reopened. Raw is SQLite's own `ON DELETE CASCADE` (`PRAGMA foreign_keys = ON`, an index on each "
                + "foreign key) in `BEGIN IMMEDIATE` … `COMMIT`; ours is `db.delete(GraphAuthor.self, id: 1)` with "
                + "the rules declared as `Relationship.toOne(…, onDelete: .cascade)`.",
            "`ours-lmdb-plain` and `ours-lmdb-encrypted` make the same call on LMDB stores: for information, no "
                + "target; their `× raw` is to raw SQLite.",
            "Verified: afterwards every implementation holds exactly the second author, its 10 posts and 90 comments.",
        ]
        return section(
            "## G1: cascading delete of 1 author and \((rows.first?.operations ?? 1) - 1) descendants",
            graphTable(rows), notes: notes)
    }

    private func eagerTable(_ rows: [ResultRow]) -> String {
        var table = MarkdownTable(
            header: ["Impl", "Median s", "Authors/s", "× raw", "× GRDB", "Target (ours)", "Met"],
            rightAligned: [1, 2, 3, 4])
        table.rows = rows.map { row in
            [
                row.implementation, row.medianSeconds.secondsText, row.operationsPerSecond.rateText,
                ratio(row.ratioVsRaw), ratio(row.ratioVsReference), row.target?.text ?? "", mark(row.meetsTarget),
            ]
        }
        let notes = [
            "N / 100 authors with 10 posts each; each author with their 3 latest posts, decoded into the same "
                + "`(BlogAuthor, [BlogPost])` values. Raw is one `LEFT JOIN` with a window query "
                + "(`ROW_NUMBER() OVER (PARTITION BY authorID …) <= 3`) through the C API; ours is "
                + "`recover(_:including: .many(\"posts\", …, sortedBy: [.descending(\"published\")], limit: 3))` "
                + "(two queries); GRDB is `including(all: Author.posts.order(…))`, which can't limit per author: it "
                + "loads all 10 and keeps 3 in Swift.",
            "`ours-lmdb-plain` makes ours' call on an LMDB store, for information.",
            "Verified: every implementation returns every author, in order, with exactly their 3 latest posts.",
        ]
        return section(
            "## E1: eager loading \((rows.first?.operations ?? 0).grouped) authors with their 3 latest posts", table,
            notes: notes)
    }

    private func aggregateTable(_ rows: [ResultRow]) -> String {
        let notes = [
            "One read with three queries over N sales of 100 customers: `count(*) WHERE amount > 500`, "
                + "`sum(amount)`, and `GROUP BY customer` with `count(*)`, `sum(amount)`, `sum(price)`. Raw is that "
                + "SQL through the C API; ours is `count(_:where:)`, `sum(_:_:as:)` and "
                + "`aggregate(_:_:groupedBy:)` on SQLite, compiled to the same kind of SQL.",
            "`ours-lmdb-plain` and `ours-lmdb-encrypted` compute the same in one streaming pass per query (no index "
                + "answers these): for information, no target; their `× raw` is to raw SQLite.",
            "Verified: every answer equals the one computed in Swift when the data was generated.",
        ]
        return section(
            "## A1: aggregates over \((rows.first?.operations ?? 0).grouped) records", graphTable(rows), notes: notes)
    }

    private func reconcileTable(_ rows: [ResultRow]) -> String {
        var table = MarkdownTable(
            header: ["Impl", "Median s", "Records/s", "× raw", "Target (ours)", "Met"], rightAligned: [1, 2, 3])
        table.rows = rows.map { row in
            [
                row.implementation, row.medianSeconds.secondsText, row.operationsPerSecond.rateText,
                ratio(row.ratioVsRaw), row.target?.text ?? "", mark(row.meetsTarget),
            ]
        }
        let figures = rows.first?.reconcile
        let notes = [
            "The snapshot: " + (figures.map { "\($0)" } ?? "–") + " — every tenth record with a new age and score, "
                + "every twentieth left out, N / 100 new ids; the same arrays for every implementation.",
            "Timed: the one write transaction, on a store filled with the N records, closed and reopened (filling, "
                + "reopening and verifying are not timed). Ours is `context.reconcile(Person.self, with: incoming)` "
                + "(no scope) in `db.write`; raw is the C API in `BEGIN IMMEDIATE` … `COMMIT`: the incoming "
                + "records' positions in a dictionary keyed by id, one pass over every stored row decoding and "
                + "comparing it, then prepared `DELETE`, `UPDATE` and `INSERT` statements bound by index.",
            "`ours-lmdb-plain` and `ours-lmdb-encrypted` make the same call on LMDB stores: for information, no "
                + "target; their `× raw` is to raw SQLite.",
            "Verified: every implementation's counts (inserted, updated, unchanged, deleted) equal the snapshot's, "
                + "and the store, reopened, holds exactly the incoming records (count and checksum of every field).",
        ]
        return section(
            "## R1: reconciling \((figures?.stored ?? 0).grouped) records with a snapshot", table, notes: notes)
    }

    private func migrationTable(_ rows: [ResultRow]) -> String {
        var table = MarkdownTable(
            header: [
                "Workload", "Impl", "Rows", "Migrate s", "Open s", "Pass s", "Commit s", "Records/s", "× raw",
                "Peak RSS MiB", "Anon peak MiB", "Anon +MiB", "File peak MiB", "Target", "Met",
            ],
            rightAligned: [2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12])
        let measured = MemoryProbe.isAvailable
        table.rows = rows.map { row in
            let memory = row.memory ?? MemoryReport()
            return [
                row.workload, row.implementation, memory.rows.grouped, row.medianSeconds.secondsText,
                row.secondsBeforePass.map(\.secondsText) ?? "–", row.secondsInPass.map(\.secondsText) ?? "–",
                row.secondsAfterPass.map(\.secondsText) ?? "–", row.operationsPerSecond.rateText,
                ratio(row.ratioVsRaw), measured ? mebibytes(memory.peakKiB) : "–",
                measured ? mebibytes(memory.anonymousPeakKiB) : "–", measured ? growth(row) : "–",
                measured ? mebibytes(memory.filePeakKiB) : "–", row.target?.text ?? "", mark(row.meetsTarget),
            ]
        }
        func anonymous(_ workload: String, _ subject: MigrationSubject) -> Int? {
            rows.first { $0.workload == workload && $0.implementation == subject.rawValue }?.memory?.anonymousPeakKiB
        }
        var notes = [
            "M2: the same migration block (renaming `bio` to `about`; `karma` is added with its declared default) "
                + "given to `SQLiteBuilder` (`sqlite-ours`, the backup before a heavyweight migration off), "
                + "`LMDBBuilder.unencrypted` (`ours-plain`) and `LMDBBuilder` (`ours-encrypted`); timed: `create()` "
                + "with the version-2 model, opening (and Argon2id key derivation) included. Raw, each `× raw` "
                + "taken against its own configuration: `sqlite-raw` is SQLite's table rebuild by hand in one "
                + "transaction on the same store the library seeded (`bio` selected into `about`, `karma` a "
                + "literal, the `name` index built again); `lmdb-raw` and `raw+aes-gcm` open the environment and, "
                + "in one write transaction, open, decode, rewrite (`about` where `bio` was, `karma` appended), "
                + "re-encode and (sealed) seal again with a fresh nonce every record. Each run migrates a fresh copy "
                + "of a store seeded once, in a child process of its own; verified by reading every record back "
                + "(the SQLite stores also with the C API: schema, `PRAGMA integrity_check`, every record).",
            "M3: S8's mapping model (the same `MigrationPlan`) on plain and encrypted LMDB at "
                + "\(migrationRows.grouped) records, against the same raw rewrites doing S8's change; its goal is "
                + "memory: ours' anonymous peak at most 16 MiB above the anonymous memory before the migration "
                + "(`Anon +MiB`, the most over the runs).",
            "Phases (medians): `Open s` until the pass over the records begins (for ours: Argon2id and the schema "
                + "difference); `Pass s` the pass (for ours: from its first progress report to its "
                + "last); `Commit s` the rest, mostly the commit writing and syncing the dirty pages.",
            "On LMDB neither side of M2 rebuilds the `name` index: names and keys don't change, and the engine keeps "
                + "an index whose entries can't have changed.",
        ]
        if measured {
            var figures =
                "Peak RSS is `VmHWM` from the start of the pass over the records (reset there, so opening "
                + "is left out); anon and file peaks sample `RssAnon` and `RssFile` every 1,000 records (ours: from "
                + "the migration's progress handler) or 1,024 (raw), the highest over the runs. LMDB maps its file, "
                + "so the file-backed figure grows with the store; the anonymous peak is the heap — which holds every "
                + "page the write transaction dirties until it commits (LMDB without `MDB_WRITEMAP`, spilling only "
                + "past 128 Ki dirty pages), for raw as for ours."
            if let large = anonymous(MigrationHarness.blockWorkload, .oursEncrypted),
                let small = anonymous(MigrationHarness.tenthWorkload, .oursEncrypted)
            {
                figures +=
                    " Ours' anonymous peak: \(mebibytes(large)) MiB at \(migrationRows.grouped) records, "
                    + "\(mebibytes(small)) MiB at a tenth as many"
                    + (anonymous(MigrationHarness.blockWorkload, .rawSealed).map {
                        "; raw's: \(mebibytes($0)) MiB at \(migrationRows.grouped)."
                    } ?? ".")
            }
            notes.append(figures)
        }
        return section(
            "## M2, M3: migrating \(migrationRows.grouped) records (memory, in child processes)", table, notes: notes)
    }

    private func commitCostTable(_ rows: [ResultRow]) -> String {
        var table = MarkdownTable(
            header: [
                "Impl", "Observers", "Commits", "Total s", "Total ×", "Median commit µs", "Commit ×", "Target", "Met",
            ],
            rightAligned: [1, 2, 3, 4, 5, 6])
        table.rows = rows.map { row in
            let cost = row.commitCost
            return [
                row.implementation, (cost?.observers ?? 0).grouped, row.operations.grouped,
                row.medianSeconds.secondsText,
                cost.map { $0.totalRatio.formatted(digits: 3) } ?? "–",
                cost.map(\.medianCommitSeconds.microsecondsText) ?? "–",
                cost.map { $0.commitRatio.formatted(digits: 3) } ?? "–", row.target?.text ?? "", mark(row.meetsTarget),
            ]
        }
        let observers = CommitCostWorkload.observers
        let notes = [
            "Each run writes one fresh store (`Person` and `Note` in its model), one `Person` per write transaction "
                + "(`db.write { try $0.create(person) }`, the synchronous API), \(commits.grouped) commits per row, "
                + "in blocks: a block with no observer, one with \(observers) live `observe(Note.self)` observations, "
                + "one with \(observers) `changes(of: Note.self)` ones, and again, the order rotating, so that the "
                + "drift of a disk syncing at every commit spreads over the three. Only the commits are timed.",
            "Each observation is iterated by a task of its own that has received its first value (`observe`) and "
                + "waits for the next: no commit of `Person` concerns it, and the run fails if one wakes it. While any "
                + "`changes(of:)` observation is live, every write transaction records the primary keys it changes.",
            "`sqlite` and `lmdb-plain` sync at every commit (SQLite in WAL mode with `synchronous = FULL`, as in S7); "
                + "`sqlite-normal` is SQLite with `synchronous = NORMAL`, no fsync at commit, so its commits are the "
                + "library's and SQLite's own work and the observers' share shows most.",
            "`Total s`: the commits of one run, median over the runs; `Total ×`: the median over the runs of each "
                + "run's ratio to its own unobserved commits. `Median commit µs`: over every commit of every run; "
                + "`Commit ×` divides it by the unobserved one and is what the target judges: a single slow fsync "
                + "moves a total by more than observers could. On `sqlite-normal`, the few WAL checkpoints of a run "
                + "(milliseconds each, synced even at NORMAL) make up about half of the total, so its `Total ×` "
                + "mostly tells which blocks they fell in.",
        ]
        return section("## O1: what observers of another entity cost a commit", table, notes: notes)
    }

    private func deliveryLatencyTable(_ rows: [ResultRow]) -> String {
        let table = latencyTable(
            rows, header: ["Impl", "Commits", "Write µs", "Latency µs", "p99 µs", "After return µs", "p99 µs"])
        let notes = [
            "One observation of `Person`, `observe(tracking: [Person.self]) { try $0.count(Person.self) }`, iterated "
                + "by a task; the writer creates one record per write transaction (`db.write`, the synchronous API) "
                + "and waits for the count that includes it before the next, so no value is coalesced. "
                + "\(commits.grouped) commits per run, on a fresh store; the figures pool every commit of every run.",
            "`Write µs` is the median write, start to return (its fsync included, but for `sqlite-normal`: "
                + "`synchronous = NORMAL`). `Latency µs` runs from just before the write began to the arrival of "
                + "the value, median and 99th percentile; `After return µs` from the write's return, which leaves "
                + "the commit out but also whatever of the delivery overlapped the end of `write` (the hub hears of "
                + "the commit under the writer lock, before `write` returns).",
        ]
        return section("## O2: from a commit to its observer", table, notes: notes)
    }

    /// Latency rows (O2, Y2): the implementation, the count, the median write, then the medians and 99th percentiles
    /// from the write's start and from its return, under `header`.
    func latencyTable(_ rows: [ResultRow], header: [String]) -> MarkdownTable {
        var table = MarkdownTable(header: header, rightAligned: [1, 2, 3, 4, 5, 6])
        table.rows = rows.map { row in
            guard let latency = row.latency else { return [row.implementation] + Array(repeating: "–", count: 6) }
            return [
                row.implementation, latency.commits.grouped, latency.writeMedianSeconds.microsecondsText,
                latency.medianSeconds.microsecondsText, latency.p99Seconds.microsecondsText,
                latency.afterReturnMedianSeconds.microsecondsText, latency.afterReturnP99Seconds.microsecondsText,
            ]
        }
        return table
    }

    private func summary() -> String {
        let judged = rows.filter { $0.meetsTarget != nil }
        let missed = judged.filter { $0.meetsTarget == false }
        var text = "Targets met: \(judged.count - missed.count) of \(judged.count)."
        if !missed.isEmpty {
            text +=
                " Missed: " + missed.map { "\($0.workload) (\($0.target?.text ?? ""))" }.joined(separator: ", ") + "."
        }
        return text
    }

    /// A section: its title, its table, then its notes as a list.
    func section(_ title: String, _ table: MarkdownTable, notes: [String]) -> String {
        title + "\n\n" + table.render() + "\n\n" + notes.map { "- " + $0 }.joined(separator: "\n")
    }

    func ratio(_ value: Double?) -> String {
        value.map { $0.formatted(digits: 2) } ?? "–"
    }

    func mark(_ met: Bool?) -> String {
        met.map { $0 ? "✓" : "✗" } ?? ""
    }

    /// A migration row's `Anon +MiB`: how far its anonymous peak rose above the memory before it; `–` without one.
    private func growth(_ row: ResultRow) -> String {
        row.anonymousGrowthKiB.map { "+" + mebibytes($0) } ?? "–"
    }

    private func mebibytes(_ kib: Int) -> String {
        (Double(kib) / 1024).formatted(digits: 1)
    }
}
