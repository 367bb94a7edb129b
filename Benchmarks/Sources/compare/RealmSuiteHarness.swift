import Foundation
import Workloads

/// RS1 and RS2, the Realm-vs-SwiftData suite: every implementation runs every phase on a new store `runs` times, the
/// order rotating every round; a row per phase and implementation (`RS1/insert`) holds the median, with its ratio to
/// the raw C API of the same engine and, on SQLite, to GRDB's `Codable` record.
struct RealmSuiteHarness {
    let runs: Int
    let scratch: ScratchDirectory

    /// RS1: `count` simple objects.
    func measureUsers(_ count: Int) throws -> [ResultRow] {
        let input = SuiteUsersInput(count: count)
        progress("RS1: \(input.users.count.grouped) users: insert, fetch \"Jane\" by age, index, fetch, rename, delete")
        let subjects = SuiteUsersSubject.allCases
        return try measure(
            workload: SuiteUsersSubject.workload, subjects: subjects.map(\.rawValue),
            phases: SuitePhase.allCases.map(\.rawValue), records: input.users.count,
            raw: { subjects.firstIndex(of: subjects[$0].raw) },
            reference: subjects[0].raw == .rawSQLite ? subjects.firstIndex(of: .grdbCodable) : nil,
            onSQLite: { subjects[$0].raw == .rawSQLite },
            run: { index, folder in try subjects[index].run(input, directory: folder) })
    }

    /// RS2: `count` students of 100 schools, with 5 grades each.
    func measureStudents(_ count: Int) throws -> [ResultRow] {
        let input = SuiteStudentsInput(count: count)
        progress("RS2: \(count.grouped) students with 5 grades each: insert, query, fail, delete")
        let subjects = SuiteStudentsSubject.allCases
        return try measure(
            workload: SuiteStudentsSubject.workload, subjects: subjects.map(\.rawValue),
            phases: SuiteStudentsPhase.allCases.map(\.rawValue), records: count,
            raw: { subjects[$0].onSQLite ? subjects.firstIndex(of: .rawSQLite) : nil },
            reference: subjects.firstIndex(of: .grdb), onSQLite: { subjects[$0].onSQLite },
            run: { index, folder in try subjects[index].run(input, directory: folder) })
    }

    private func measure(
        workload: String, subjects: [String], phases: [String], records: Int, raw: (Int) -> Int?, reference: Int?,
        onSQLite: (Int) -> Bool, run: (Int, URL) throws -> SuiteRun
    ) throws -> [ResultRow] {
        let results = try RotatingMeasurement(runs: runs, scratch: scratch).rotate(
            workload: workload, subjects: subjects, seconds: { $0.seconds.values.reduce(0, +) }, run: run)
        var rows: [ResultRow] = []
        for phase in phases {
            let medians = results.map { runs in median(runs.compactMap { $0.seconds[phase] }) }
            for index in subjects.indices {
                var row = ResultRow(
                    workload: "\(workload)/\(phase)", implementation: subjects[index], medianSeconds: medians[index],
                    operations: records, ratioVsRaw: raw(index).map { medians[index] / medians[$0] },
                    ratioVsReference: onSQLite(index) ? reference.map { medians[index] / medians[$0] } : nil,
                    target: nil, records: records)
                let bytes = median(results[index].map { Double($0.fileBytes) })
                row.fileBytes = bytes.isFinite ? Int(bytes) : nil
                rows.append(row)
            }
        }
        return rows
    }
}
