import Workloads

/// The PostgreSQL sections: P1–P6 against postgres-nio by hand, and P7's concurrent writers.
extension Report {
    func postgresTable(_ rows: [ResultRow]) -> String {
        let notes = [
            "Ours is `PostgresDatabase` (`PostgresBuilder(url:model:)`, the default pool) with the same calls as S1–S6 "
                + "(`create`, `recover(query:)`, `recover(Person.self, id:)`, `recover(where: Field(\"name\") == …)`, "
                + "`update`, `delete(Person.self, id:)`); raw is postgres-nio on one `PostgresConnection`: prepared "
                + "statements with static SQL run with `execute(_:logger:)`, rows decoded into `Person` as ours does.",
            "Both in the same run against the same server (`PERSISTENCE_POSTGRES_URL`), each on a table of the same "
                + "shape in a schema of its own (`bench_ours`, `bench_raw`, dropped and created again before every "
                + "run): `bigint` id `NOT NULL PRIMARY KEY`, texts as UTF-8 in `bytea`, `bigint` age, "
                + "`double precision` score, an index on `name`. One transaction per workload, with ours' isolation "
                + "for both: writes `SERIALIZABLE`, reads `REPEATABLE READ READ ONLY`.",
            "Stores a workload reads or changes are filled first and the timed operation runs on new connections "
                + "(ours opens its reader before the timing, as raw connects); P3 looks up ids drawn at random, P4 "
                + "1,000 names (about 20 records each). Verified as S1–S6: checksums of what was read, or of "
                + "everything read back on new connections.",
        ]
        return section("## PostgreSQL", timingTable(rows, referenceTitle: nil), notes: notes)
    }

    func concurrentWritersTable(_ rows: [ResultRow]) -> String {
        var table = MarkdownTable(
            header: ["Impl", "Writers", "Commits", "Median s", "Commits/s", "× raw", "Retries"],
            rightAligned: [1, 2, 3, 4, 5, 6])
        table.rows = rows.map { row in
            [
                row.implementation, (row.concurrentWriters?.writers ?? 0).grouped, row.operations.grouped,
                row.medianSeconds.secondsText, row.operationsPerSecond.rateText, ratio(row.ratioVsRaw),
                (row.concurrentWriters?.retries ?? 0).grouped,
            ]
        }
        let notes = [
            "Each run, on a fresh store: the writers connect (not timed), then commit \((rows.first?.operations ?? 0).grouped) "
                + "transactions between them, each upserting one record whose id no other writer uses; timed from "
                + "the first writer's start to the last one's end. Ours: one `PostgresDatabase` (`poolSize` = writers), "
                + "a task per writer, async API (`write(retryingUpTo:) { try $0.upsert(person) }`); raw: one "
                + "`PostgresConnection` per writer, each in a task of its own (`BEGIN ISOLATION LEVEL SERIALIZABLE`, "
                + "a prepared `INSERT … ON CONFLICT (id) DO UPDATE`, `COMMIT`).",
            "`Retries`: transactions the server rolled back (serialization failures) and the writer ran again, over "
                + "every run. No target: reported for information; verified by reading every record back.",
        ]
        return section("## P7: concurrent writers on PostgreSQL", table, notes: notes)
    }
}
