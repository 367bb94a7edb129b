import Foundation
import Workloads

/// The migrations measured in child processes: each subject migrates a copy of its seeded store `runs` times, each
/// run in a child process of its own (so its peak memory belongs to that migration alone), the order rotating every
/// round; each of ours is compared with the raw rewrite of its own configuration in the same rounds.
///
/// - M2: the migration block on SQLite, plain and encrypted LMDB, at `--migration-rows`; then ours-encrypted
///   migrates a store a tenth the size once, to show how its memory depends on the number of records (M2/10).
/// - S8's LMDB rows: S8's mapping model on plain and encrypted LMDB, at N records (the SQLite rows run in process,
///   `MappingMigrationHarness`).
/// - M3: the same mapping on LMDB at `--migration-rows`: what its anonymous memory grows by.
///
/// Seeding takes a while, so each store is seeded once (in a child process) and every run migrates a fresh copy of
/// it; copying is not timed.
struct MigrationHarness {
    let workload: String
    let change: MigrationChange
    let subjects: [MigrationSubject]
    let rows: Int
    let runs: Int
    let scratch: ScratchDirectory

    /// M2's workload id.
    static let blockWorkload = "M2"
    /// The workload id of M2's row at a tenth of the records.
    static let tenthWorkload = "M2/10"
    /// M3's workload id.
    static let mappedMemoryWorkload = "M3"

    /// M2: the block on every embedded configuration.
    static func block(rows: Int, runs: Int, scratch: ScratchDirectory) -> MigrationHarness {
        MigrationHarness(
            workload: blockWorkload, change: .block, subjects: MigrationSubject.allCases, rows: rows, runs: runs,
            scratch: scratch)
    }

    /// S8's mapping on plain and encrypted LMDB, under `workload` (S8 at N records, M3 at `--migration-rows`).
    static func mapping(_ workload: String, rows: Int, runs: Int, scratch: ScratchDirectory) -> MigrationHarness {
        MigrationHarness(
            workload: workload, change: .mapping, subjects: MigrationSubject.lmdb, rows: rows, runs: runs,
            scratch: scratch)
    }

    func measure() throws -> [ResultRow] {
        var seeds: [URL] = []
        defer { for seed in seeds { try? FileManager.default.removeItem(at: seed) } }
        for subject in subjects { seeds.append(try seed(subject, rows: rows)) }
        let expected = try change.expectedChecksum(PersonGenerator(count: rows))

        var reports = Array(repeating: [MigrationReport](), count: subjects.count)
        for round in 0..<runs {
            var line: [String] = []
            for offset in subjects.indices {
                let index = (offset + round) % subjects.count
                let report = try migrate(subjects[index], seed: seeds[index], rows: rows, expected: expected)
                reports[index].append(report)
                line.append(
                    "\(subjects[index].rawValue) \(report.memory.seconds.secondsText) s "
                        + "(anon peak \(report.memory.anonymousPeakKiB / 1024) MiB)")
            }
            progress("\(workload) run \(round + 1)/\(runs): " + line.joined(separator: " · "))
        }

        let medians = reports.map { median($0.map(\.memory.seconds)) }
        return subjects.indices.map { index in
            let baseline = subjects.firstIndex(of: subjects[index].baseline)
            return row(
                workload, subjects[index], reports[index], median: medians[index],
                ratio: baseline.map { medians[index] / medians[$0] })
        }
    }

    /// M2/10: ours-encrypted migrating a store a tenth the size, once.
    func measureTenth() throws -> ResultRow {
        let tenth = max(1, rows / 10)
        let ours = MigrationSubject.oursEncrypted
        let seed = try seed(ours, rows: tenth)
        defer { try? FileManager.default.removeItem(at: seed) }
        let report = try migrate(
            ours, seed: seed, rows: tenth, expected: try change.expectedChecksum(PersonGenerator(count: tenth)))
        progress(
            "\(workload) \(ours.rawValue) at \(tenth.grouped) records: \(report.memory.seconds.secondsText) s "
                + "(anon peak \(report.memory.anonymousPeakKiB / 1024) MiB)")
        return row(Self.tenthWorkload, ours, [report], median: report.memory.seconds, ratio: nil)
    }

    private func row(
        _ workload: String, _ subject: MigrationSubject, _ reports: [MigrationReport], median seconds: Double,
        ratio: Double?
    ) -> ResultRow {
        var row = ResultRow(
            workload: workload, implementation: subject.rawValue, medianSeconds: seconds,
            operations: reports.first?.memory.rows ?? 0, ratioVsRaw: ratio,
            target: workload == Self.tenthWorkload ? nil : Target.migration(workload, subject),
            memory: Self.peaks(of: reports),
            secondsBeforePass: reports.compactMap(\.secondsBeforePass).nilIfEmpty.map(median),
            secondsInPass: reports.compactMap(\.secondsInPass).nilIfEmpty.map(median), records: rows)
        row.anonymousGrowthKiB = reports.compactMap { report in
            report.anonymousBeforeKiB.map { report.memory.anonymousPeakKiB - $0 }
        }.max()
        return row
    }

    /// The highest of each memory figure over the runs.
    private static func peaks(of reports: [MigrationReport]) -> MemoryReport {
        var peaks = reports.first?.memory ?? MemoryReport()
        for report in reports.dropFirst() {
            peaks.peakKiB = max(peaks.peakKiB, report.memory.peakKiB)
            peaks.anonymousPeakKiB = max(peaks.anonymousPeakKiB, report.memory.anonymousPeakKiB)
            peaks.filePeakKiB = max(peaks.filePeakKiB, report.memory.filePeakKiB)
            peaks.openPeakKiB = max(peaks.openPeakKiB, report.memory.openPeakKiB)
            peaks.peakWasReset = peaks.peakWasReset && report.memory.peakWasReset
        }
        return peaks
    }

    /// Seeds a store of `rows` records for `subject`, in a child process; returns its folder.
    private func seed(_ subject: MigrationSubject, rows: Int) throws -> URL {
        let folder = try scratch.fresh("\(workload)-seed-\(subject.rawValue)-\(rows)")
        let started = ContinuousClock.now
        _ = try ChildProcess.run(arguments(subject, folder, rows) + ["--phase", "seed"])
        let seconds = started.duration(to: .now).seconds
        progress("\(workload) \(subject.rawValue): seeded \(rows.grouped) records in \(seconds.secondsText) s")
        return folder
    }

    /// Migrates a fresh copy of `seed` in a child process and verifies what it read back.
    private func migrate(
        _ subject: MigrationSubject, seed: URL, rows: Int, expected: Checksum
    ) throws -> MigrationReport {
        let folder = try scratch.fresh("\(workload)-\(subject.rawValue)")
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.copyStore(from: seed, to: folder, skipping: subject.transientFileSuffix)
        let output = try ChildProcess.run(arguments(subject, folder, rows) + ["--phase", "migrate"])
        let verify = { (condition: Bool, message: String) throws in
            guard condition else {
                throw VerificationError(workload: workload, implementation: subject.rawValue, message: message)
            }
        }
        let report: MigrationReport
        do {
            report = try JSONDecoder().decode(MigrationReport.self, from: output)
        } catch {
            throw VerificationError(
                workload: workload, implementation: subject.rawValue,
                message: "the child's report is unreadable: \(error)")
        }
        let found = report.memory.checksum
        try verify(
            found == expected, "records read back: expected \(expected), got \(found.map(\.description) ?? "none")")
        try verify(
            report.wrongDefaults == 0,
            "\(report.wrongDefaults) migrated records don't hold karma = \(change.defaultKarma)")
        try verify(subject.isRaw || report.spotChecked > 0, "no record was looked up by id and name")
        return report
    }

    private func arguments(_ subject: MigrationSubject, _ folder: URL, _ rows: Int) -> [String] {
        [
            "migration-child", "--subject", subject.rawValue, "--change", change.rawValue, "--directory", folder.path,
            "--rows", "\(rows)",
        ]
    }
}
