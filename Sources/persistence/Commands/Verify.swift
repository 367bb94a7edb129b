import ArgumentParser
import Foundation
import PersistenceCore
import PersistenceTool

/// `persistence verify STORE`: the full check, in a child process so a damaged file can't take the tool down.
struct Verify: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check every record, index entry and the metadata of a store, safely.",
        discussion: """
            The check runs in a child process: a file damaged enough to crash the storage engine ends that process, \
            not this one. Exit status: 0 sound, 1 problems found (listed), 2 the store could not be read at all; \
            a wrong passphrase or a missing store has its own status (see the README).
            """)

    @Argument(help: "The store.") var store: String
    @Flag(name: .long, help: "Print the report as JSON.") var json = false
    @OptionGroup var passphrase: PassphraseOptions
    /// Set by the parent: run the check here and write the report to standard output as JSON.
    @Flag(name: .customLong("in-process"), help: .hidden) var inProcess = false
    /// Set by the parent: the passphrase comes on standard input (asked on the parent's terminal).
    @Flag(name: .customLong("passphrase-stdin"), help: .hidden) var passphraseStdin = false

    func run() throws {
        let locator = try locator(store)
        if inProcess { return try check(locator) }
        var result = try Self.child(arguments(), passphrase: nil)
        if result.status == ToolExit.permission.rawValue, try passphrase.source() == nil, locator.backend == .lmdb,
            isatty(FileHandle.standardInput.fileDescriptor) == 1
        {
            // Encrypted, and no passphrase given: ask here, hand it to the child on a pipe.
            let secret = try reportingErrors(store) {
                try SecretSource.prompt.read(label: "Passphrase of \(locator)")
            }
            result = try Self.child(arguments() + ["--passphrase-stdin"], passphrase: secret)
        }
        FileHandle.standardError.write(result.errors)
        guard let report = try? JSONDecoder().decode(VerificationReport.self, from: result.output) else {
            if result.status > 0, result.status != ToolExit.problems.rawValue, result.status < 128,
                !result.errors.isEmpty
            {
                // The child said why (missing store, wrong passphrase…): same status.
                throw ExitCode(result.status)
            }
            FileHandle.standardError.write(
                Data("persistence: \(store): could not be read (the checking process \(result.describe))\n".utf8))
            throw ExitCode(ToolExit.unreadable.rawValue)
        }
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            print(String(decoding: try encoder.encode(report), as: UTF8.self))
        } else {
            print(Self.text(report, store: locator))
        }
        if !report.isSound { throw ExitCode(ToolExit.problems.rawValue) }
    }

    /// The child's work: open, verify, print the report as JSON.
    private func check(_ locator: StoreLocator) throws {
        let source: SecretSource? =
            passphraseStdin ? .file("/dev/stdin") : try passphrase.source()
        let report = try reportingErrors(store) {
            let opened = try StoreOpener(passphrase: source).open(locator)
            defer { try? opened.close() }
            return try opened.verify()
        }
        print(String(decoding: try JSONEncoder().encode(report), as: UTF8.self))
    }

    /// This command's arguments for the child.
    private func arguments() -> [String] {
        var arguments = ["verify", store, "--in-process"]
        if let file = passphrase.passphraseFile { arguments += ["--passphrase-file", file] }
        if let name = passphrase.passphraseEnv { arguments += ["--passphrase-env", name] }
        return arguments
    }

    /// How a child process ended, and what it wrote.
    struct ChildResult {
        var status: Int32
        var signaled: Bool
        var output: Data
        var errors: Data

        var describe: String { signaled ? "was killed by signal \(status)" : "exited with status \(status)" }
    }

    /// Runs this executable with `arguments` (Foundation's `Process`), feeding `passphrase` on standard input.
    static func child(_ arguments: [String], passphrase: String?) throws -> ChildResult {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        process.arguments = arguments
        let output = Pipe()
        let input = Pipe()
        // Standard error to a file: read after the end, it can't fill a pipe the child then blocks on.
        let errorFile = FileManager.default.temporaryDirectory.appendingPathComponent(
            "persistence-verify-\(UUID().uuidString).log")
        guard FileManager.default.createFile(atPath: errorFile.path, contents: nil),
            let errors = try? FileHandle(forWritingTo: errorFile)
        else { throw PersistenceError(.ioFailure, "the checking process's log could not be made") }
        defer { try? FileManager.default.removeItem(at: errorFile) }
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = input
        do {
            try process.run()
        } catch {
            throw PersistenceError(.ioFailure, "the checking process could not start", underlyingError: error)
        }
        try? errors.close()
        if let passphrase { input.fileHandleForWriting.write(Data((passphrase + "\n").utf8)) }
        try? input.fileHandleForWriting.close()
        let outputData = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return ChildResult(
            status: process.terminationStatus, signaled: process.terminationReason == .uncaughtSignal,
            output: outputData, errors: (try? Data(contentsOf: errorFile)) ?? Data())
    }

    static func text(_ report: VerificationReport, store: StoreLocator) -> String {
        var lines = [
            "\(store): \(report.isSound ? "sound" : "\(report.problemCount) problems")",
            "  checked \(report.entitiesChecked) entities, \(report.recordsChecked) records, "
                + "\(report.indexEntriesChecked) index entries",
        ]
        for problem in report.problems {
            var location = [problem.entity, problem.primaryKey.map { "key \($0)" }, problem.attribute, problem.index]
                .compactMap { $0 }.joined(separator: " · ")
            if !location.isEmpty { location = " (\(location))" }
            lines.append("  \(problem.kind.rawValue)\(location): \(problem.message)")
        }
        if report.omittedProblemCount > 0 { lines.append("  … and \(report.omittedProblemCount) more") }
        return lines.joined(separator: "\n")
    }
}
