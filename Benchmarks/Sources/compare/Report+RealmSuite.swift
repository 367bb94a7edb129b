import Workloads

/// RS1 and RS2 (the Realm-vs-SwiftData suite): one line per implementation, a column per phase.
extension Report {
    func realmSuiteTable(_ rows: [ResultRow], workload: String, phases: [String]) -> String {
        var table = MarkdownTable(
            header: ["Impl"] + phases.map { "\($0) s (× raw)" } + ["MiB per 1M"],
            rightAligned: Set(1...(phases.count + 1)))
        let implementations = rows.reduce(into: [String]()) { names, row in
            if !names.contains(row.implementation) { names.append(row.implementation) }
        }
        let count = rows.first?.operations ?? 0
        table.rows = implementations.map { implementation in
            let mine = rows.filter { $0.implementation == implementation }
            let cells = phases.map { phase -> String in
                guard let row = mine.first(where: { $0.workload == "\(workload)/\(phase)" }) else { return "" }
                return "\(row.medianSeconds.secondsText) (\(ratio(row.ratioVsRaw)))"
            }
            let mebibytes = mine.first?.fileBytes.map { Double($0) / Double(max(1, count)) * 1_000_000 / 1_048_576 }
            return [implementation] + cells + [mebibytes.map { $0.formatted(digits: 1) } ?? ""]
        }
        let notes =
            workload == SuiteUsersSubject.workload
            ? [
                "Jacob Bartlett's RealmVsSwiftData suite, simple objects: \(count.grouped) users (UUID key, first name, "
                    + "surname, age) inserted in one transaction; the users named \"Jane\" fetched in age order with "
                    + "no index; an index on the first name added (ours: the model's next version, an inferred "
                    + "migration, its open included — Argon2id for the encrypted store); the fetch again; every Jane "
                    + "renamed Wendy in one transaction (ours and GRDB fetch, change and update each record, as the "
                    + "suite does; raw SQLite runs one `UPDATE`); every user deleted in one transaction.",
                "Ratios are to raw SQLite for the SQLite rows and to raw LMDB for the LMDB rows. Size: every file of "
                    + "the closed store after the rename, per million users; Realm's published figure is 55 MB per "
                    + "million (on other hardware: compare sizes, not times).",
                "Verified: each fetch returns exactly the expected users in age order; the rename and the delete count "
                    + "every record.",
            ]
            : [
                "The suite's complex objects: 100 schools, \(count.grouped) students, 5 grades each (subject, mark and "
                    + "exam board; subject and mark indexed), inserted in one transaction; the students with an A* in "
                    + "physics (a condition through the to-many grades); Falconwood College's maths grades set to F "
                    + "(found through each grade's student's school; ours and GRDB fetch and update each, raw SQLite "
                    + "runs one `UPDATE`); every student deleted, grades with them (ours: the cascade rule; GRDB: "
                    + "SQLite's `ON DELETE CASCADE`; raw: two `DELETE`s).",
                "Ratios are to raw SQLite. No raw LMDB row: relationships by hand over LMDB would be a database engine "
                    + "of its own. Size: every file of the closed store after the change, per million students.",
                "Verified: the query returns exactly the expected students, every cheating grade is F, no grade "
                    + "outlives its student.",
            ]
        let title =
            workload == SuiteUsersSubject.workload
            ? "## RS1: the Realm-vs-SwiftData suite, simple objects"
            : "## RS2: the Realm-vs-SwiftData suite, objects with relationships"
        return section(title, table, notes: notes)
    }
}
