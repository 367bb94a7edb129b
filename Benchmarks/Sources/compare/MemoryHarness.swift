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
            _ = try Self.child(arguments + ["--phase", "fill"])
            let output = try Self.child(arguments + ["--phase", "iterate"])
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

    /// Runs this executable with `arguments` and returns its standard output; its standard error passes through.
    private static func child(_ arguments: [String]) throws -> Data {
        let process = Process()
        process.executableURL = Bundle.main.executableURL ?? URL(fileURLWithPath: CommandLine.arguments[0])
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationReason == .exit, process.terminationStatus == 0 else {
            throw ChildFailure(arguments: arguments, status: process.terminationStatus)
        }
        return data
    }

    struct ChildFailure: Error, CustomStringConvertible {
        var arguments: [String]
        var status: Int32
        var description: String { "the memory child `compare \(arguments.joined(separator: " "))` failed (\(status))" }
    }
}
