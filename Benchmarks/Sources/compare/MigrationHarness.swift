import Foundation
import Workloads

/// M2: each implementation migrates a copy of its seeded store `runs` times, each run in a child process of its
/// own (so its peak memory belongs to that migration alone), the order rotating every round; then ours migrates a
/// store a tenth the size once, to show how its memory depends on the number of records.
///
/// Seeding a million records takes a while, so each store is seeded once (in a child process) and every run
/// migrates a fresh copy of it; copying is not timed.
struct MigrationHarness {
    let rows: Int
    let runs: Int
    let scratch: ScratchDirectory

    /// The workload id of the rows at N records.
    static let workload = "M2"
    /// The workload id of the row at a tenth of the records.
    static let tenthWorkload = "M2/10"

    func measure() throws -> [ResultRow] {
        let subjects = MigrationSubject.allCases
        var seeds: [URL] = []
        defer { for seed in seeds { try? FileManager.default.removeItem(at: seed) } }
        for subject in subjects { seeds.append(try seed(subject, rows: rows)) }
        let expected = PersonGenerator(count: rows).checksum()

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
            progress("M2 run \(round + 1)/\(runs): " + line.joined(separator: " · "))
        }

        let tenth = max(1, rows / 10)
        let ours = MigrationSubject.oursEncrypted
        let tenthSeed = try seed(ours, rows: tenth)
        seeds.append(tenthSeed)
        let tenthReport = try migrate(
            ours, seed: tenthSeed, rows: tenth, expected: PersonGenerator(count: tenth).checksum())
        progress(
            "M2 \(ours.rawValue) at \(tenth.grouped) records: \(tenthReport.memory.seconds.secondsText) s "
                + "(anon peak \(tenthReport.memory.anonymousPeakKiB / 1024) MiB)")

        let medians = reports.map { median($0.map(\.memory.seconds)) }
        let rawMedian = subjects.firstIndex(of: .rawSealed).map { medians[$0] }
        var result = subjects.indices.map { index in
            row(
                Self.workload, subjects[index], reports[index], median: medians[index],
                ratio: rawMedian.map { medians[index] / $0 })
        }
        result.append(row(Self.tenthWorkload, ours, [tenthReport], median: tenthReport.memory.seconds, ratio: nil))
        return result
    }

    private func row(
        _ workload: String, _ subject: MigrationSubject, _ reports: [MigrationReport], median seconds: Double,
        ratio: Double?
    ) -> ResultRow {
        ResultRow(
            workload: workload, implementation: subject.rawValue, medianSeconds: seconds,
            operations: reports.first?.memory.rows ?? 0, ratioVsRaw: ratio,
            target: workload == Self.workload ? Target.migration(subject) : nil, memory: Self.peaks(of: reports),
            secondsBeforePass: reports.compactMap(\.secondsBeforePass).nilIfEmpty.map(median),
            secondsInPass: reports.compactMap(\.secondsInPass).nilIfEmpty.map(median))
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
        let folder = try scratch.fresh("M2-seed-\(subject.rawValue)-\(rows)")
        let started = ContinuousClock.now
        _ = try ChildProcess.run(Self.arguments(subject, folder, rows) + ["--phase", "seed"])
        let seconds = started.duration(to: .now).seconds
        progress("M2 \(subject.rawValue): seeded \(rows.grouped) records in \(seconds.secondsText) s")
        return folder
    }

    /// Migrates a fresh copy of `seed` in a child process and verifies what it read back.
    private func migrate(
        _ subject: MigrationSubject, seed: URL, rows: Int, expected: Checksum
    ) throws -> MigrationReport {
        let folder = try scratch.fresh("M2-\(subject.rawValue)")
        defer { try? FileManager.default.removeItem(at: folder) }
        // Not the lock file: LMDB creates a fresh one for the copy.
        try FileManager.default.copyStore(from: seed, to: folder, skipping: "-lock")
        let output = try ChildProcess.run(Self.arguments(subject, folder, rows) + ["--phase", "migrate"])
        let verify = { (condition: Bool, message: String) throws in
            guard condition else {
                throw VerificationError(workload: Self.workload, implementation: subject.rawValue, message: message)
            }
        }
        let report: MigrationReport
        do {
            report = try JSONDecoder().decode(MigrationReport.self, from: output)
        } catch {
            throw VerificationError(
                workload: Self.workload, implementation: subject.rawValue,
                message: "the child's report is unreadable: \(error)")
        }
        let found = report.memory.checksum
        try verify(
            found == expected,
            "records read back (about as bio): expected \(expected), got \(found.map(\.description) ?? "none")")
        try verify(
            report.wrongDefaults == 0,
            "\(report.wrongDefaults) migrated records don't hold karma = \(MigratedPerson.defaultKarma)")
        try verify(
            subject != .oursEncrypted || report.spotChecked > 0, "no record was looked up by id and name")
        return report
    }

    private static func arguments(_ subject: MigrationSubject, _ folder: URL, _ rows: Int) -> [String] {
        ["migration-child", "--subject", subject.rawValue, "--directory", folder.path, "--rows", "\(rows)"]
    }
}
