import Foundation
import Workloads

/// S8: raw, ours and ours with its backup each migrate an identical copy of one seeded version-1 SQLite store `runs`
/// times, the order rotating every round; every run is verified against the generator.
///
/// Seeding is done once, by the library, and every run copies the file (copying is not timed). The runs happen in
/// this process: S8 measures time only, and each store is closed before the next run.
struct MappingMigrationHarness {
    let rows: Int
    let runs: Int
    let scratch: ScratchDirectory

    /// The workload id of the rows.
    static let workload = "S8"

    func measure() throws -> [ResultRow] {
        let subjects = MappingMigrationSubject.allCases
        let generator = PersonGenerator(count: rows)
        let seed = try scratch.fresh("S8-seed")
        defer { try? FileManager.default.removeItem(at: seed) }
        let started = ContinuousClock.now
        try MappingMigrationSubject.seed(directory: seed, generator: generator)
        progress("S8: seeded \(rows.grouped) records in \(started.duration(to: .now).seconds.secondsText) s")
        let expected = try MigrationChange.mapping.expectedChecksum(generator)

        var results = Array(repeating: [MappingMigrationRun](), count: subjects.count)
        for round in 0..<runs {
            var line: [String] = []
            for offset in subjects.indices {
                let index = (offset + round) % subjects.count
                let subject = subjects[index]
                let folder = try scratch.fresh("S8-\(subject.rawValue)")
                defer { try? FileManager.default.removeItem(at: folder) }
                try FileManager.default.copyStore(from: seed, to: folder, skipping: "-shm")
                let run = try subject.migrate(directory: folder, generator: generator)
                guard run.checksum == expected else {
                    throw VerificationError(
                        workload: Self.workload, implementation: subject.rawValue,
                        message: "records read back: expected \(expected), got \(run.checksum)")
                }
                results[index].append(run)
                line.append("\(subject.rawValue) \(run.seconds.secondsText) s")
            }
            progress("S8 run \(round + 1)/\(runs): " + line.joined(separator: " · "))
        }

        let medians = results.map { median($0.map(\.seconds)) }
        let rawMedian = subjects.firstIndex(of: .raw).map { medians[$0] }
        return subjects.indices.map { index in
            ResultRow(
                workload: Self.workload, implementation: subjects[index].rawValue, medianSeconds: medians[index],
                operations: rows, ratioVsRaw: rawMedian.map { medians[index] / $0 },
                target: subjects[index] == .ours ? Target.mappingMigration : nil,
                secondsBeforePass: results[index].compactMap(\.secondsBeforeCopy).nilIfEmpty.map(median),
                secondsInPass: results[index].compactMap(\.secondsInCopy).nilIfEmpty.map(median), records: rows)
        }
    }
}
