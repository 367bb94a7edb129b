import Foundation
import Workloads

/// M: each implementation's iteration in child processes of its own, so each peak belongs to one store alone.
///
/// Runs once per implementation (a million records take a while to write, and peak memory varies far less
/// between runs than time does).
struct MemoryHarness {
    let rows: Int
    let scratch: ScratchDirectory

    func measure() throws -> [ResultRow] {
        guard MemoryProbe.isAvailable else {
            progress("M skipped: memory figures come from /proc/self/status, which only Linux has")
            return []
        }
        let expected = PersonGenerator(count: rows).checksum()
        var reports: [(subject: MemorySubject, report: MemoryReport)] = []
        for subject in MemorySubject.allCases {
            let folder = try scratch.fresh("M-\(subject.rawValue)")
            defer { try? FileManager.default.removeItem(at: folder) }
            let arguments = [
                "memory-child", "--subject", subject.rawValue, "--directory", folder.path, "--rows", "\(rows)",
            ]
            _ = try ChildProcess.run(arguments + ["--phase", "fill"])
            let output = try ChildProcess.run(arguments + ["--phase", "iterate"])
            let report: MemoryReport
            do {
                report = try JSONDecoder().decode(MemoryReport.self, from: output)
            } catch {
                throw VerificationError(
                    workload: "M", implementation: subject.rawValue,
                    message: "the child's report is unreadable: \(error)")
            }
            guard report.checksum == expected else {
                throw VerificationError(
                    workload: "M", implementation: subject.rawValue,
                    message:
                        "iterated records: expected \(expected), got \(report.checksum.map(\.description) ?? "none")")
            }
            progress(
                "M \(subject.rawValue): \(report.seconds.secondsText) s, peak RSS \(report.peakKiB / 1024) MiB, "
                    + "anonymous \(report.anonymousPeakKiB / 1024) MiB, file-backed \(report.filePeakKiB / 1024) MiB")
            reports.append((subject, report))
        }
        return reports.map { subject, report in
            let reference = subject.reference.flatMap { reference in reports.first { $0.subject == reference } }
            return ResultRow(
                workload: "M", implementation: subject.rawValue, medianSeconds: report.seconds, operations: report.rows,
                ratioVsRaw: subject.reference == nil ? 1 : reference.map { report.seconds / $0.report.seconds },
                target: Target.memory(subject), memory: report)
        }
    }
}
