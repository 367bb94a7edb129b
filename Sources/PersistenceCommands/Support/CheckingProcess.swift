import ArgumentParser
package import Foundation
package import PersistenceCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Runs a store's check in a child process — this executable again, with other arguments — so that a file damaged
/// enough to crash the storage engine ends that process, not the command.
package enum CheckingProcess {
    /// Runs the check in a child process (`arguments` are this executable's, with the flag that makes it check in
    /// process and print the report as JSON) and returns its report, passing its messages through to standard error.
    ///
    /// When the child says the passphrase is wrong or missing and `askPassphrase` is given (the store is encrypted and
    /// no passphrase source was named), asks for it on this process's terminal with that label and runs the child
    /// again with `--passphrase-stdin`, handing it over a pipe — never an argument.
    ///
    /// A child that ends without a report prints one line on standard error and, with `json`, a JSON document on
    /// standard output saying why (see ``VerificationText/printFailure(store:status:reason:json:)``).
    /// - Throws: `ExitCode` — the child's status when it said why it failed (a missing store, a wrong passphrase),
    ///   ``ToolExit/unreadable`` when it was killed by a signal or printed no report.
    package static func report(_ arguments: [String], store: String, askPassphrase: String?, json: Bool) throws
        -> VerificationReport
    {
        var result = try run(arguments, passphrase: nil)
        if result.status == ToolExit.permission.rawValue, !result.signaled, let label = askPassphrase,
            isatty(FileHandle.standardInput.fileDescriptor) == 1
        {
            let secret = try reportingErrors(store) { try SecretSource.prompt.read(label: label) }
            result = try run(arguments + ["--passphrase-stdin"], passphrase: secret)
        }
        if let report = try? JSONDecoder().decode(VerificationReport.self, from: result.output) {
            FileHandle.standardError.write(result.errors)
            return report
        }
        if !result.signaled, result.status > 0, result.status != ToolExit.problems.rawValue, !result.errors.isEmpty {
            // The child said why (a missing store, a wrong passphrase, Ctrl-C): its line, and its status.
            FileHandle.standardError.write(result.errors)
            let said =
                String(decoding: result.errors, as: UTF8.self)
                .split(separator: "\n", omittingEmptySubsequences: true).last.map(String.init) ?? ""
            let prefix = "\(commandName): \(store): "
            let reason = said.hasPrefix(prefix) ? String(said.dropFirst(prefix.count)) : said
            VerificationText.printFailure(store: store, status: result.status, reason: reason, json: json)
            throw ExitCode(result.status)
        }
        // A crash (a file damaged enough to crash the storage engine) or no report: the child's own output — a
        // backtrace, half a line — is no message for the user.
        let reason = "could not be read (the checking process \(result.describe))"
        FileHandle.standardError.write(Data("\(commandName): \(store): \(reason)\n".utf8))
        VerificationText.printFailure(store: store, status: ToolExit.unreadable.rawValue, reason: reason, json: json)
        throw ExitCode(ToolExit.unreadable.rawValue)
    }

    /// Refuses, before a child is started (or a passphrase asked for), a store's file this process may not read:
    /// one line and, with `json`, the JSON document saying why.
    /// - Throws: `ExitCode` ``ToolExit/permission``.
    package static func checkReadable(_ file: URL?, store: String, json: Bool) throws {
        guard let file else { return }
        do {
            try StoreAccess.checkReadable(file)
        } catch let error as PersistenceError {
            FileHandle.standardError.write(Data("\(commandName): \(store): \(error.message)\n".utf8))
            VerificationText.printFailure(
                store: store, status: ToolExit.permission.rawValue, reason: error.message, json: json)
            throw ExitCode(ToolExit.permission.rawValue)
        }
    }

    /// The child's side: prints `report` as one line of JSON for the parent.
    package static func send(_ report: VerificationReport) throws {
        Swift.print(String(decoding: try JSONEncoder().encode(report), as: UTF8.self))
    }

    /// How the checking process ended, and what it wrote.
    package struct Result {
        package var status: Int32
        package var signaled: Bool
        package var output: Data
        package var errors: Data

        package var describe: String {
            signaled ? "was killed by \(ChildProcess.signalName(status))" : "exited with status \(status)"
        }
    }

    /// Runs this executable with `arguments` (Foundation's `Process`), feeding `passphrase` on standard input.
    package static func run(_ arguments: [String], passphrase: String?) throws -> Result {
        let process = Process()
        process.executableURL = ChildProcess.executable
        process.arguments = arguments
        process.environment = ChildProcess.environment
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
        return Result(
            status: process.terminationStatus, signaled: process.terminationReason == .uncaughtSignal,
            output: outputData, errors: (try? Data(contentsOf: errorFile)) ?? Data())
    }
}

/// A verification report as the commands print it.
package enum VerificationText {
    /// Prints `report` (as text, or as JSON), then throws ``ToolExit/problems`` when it isn't sound.
    package static func print(_ report: VerificationReport, json: Bool, store: String) throws {
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            Swift.print(String(decoding: try encoder.encode(report), as: UTF8.self))
        } else {
            Swift.print(text(report, store: store))
        }
        if !report.isSound { throw ExitCode(ToolExit.problems.rawValue) }
    }

    /// What `verify` prints when there is no report: with `json`, a JSON document on standard output saying why —
    /// `{"checked": false, "exitStatus": 2, "error": "…", "store": "…"}` — so a script reading the output always
    /// gets one document. (The one-line message on standard error is the caller's.)
    package static func printFailure(store: String, status: Int32, reason: String, json: Bool) {
        guard json else { return }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        let failure = Failure(store: store, exitStatus: status, error: reason)
        guard let data = try? encoder.encode(failure) else { return }
        Swift.print(String(decoding: data, as: UTF8.self))
    }

    /// The JSON document of a check that gave no report.
    package struct Failure: Codable, Sendable {
        /// Always `false`: the store was not checked.
        package var checked = false
        package var store: String
        /// The command's exit status.
        package var exitStatus: Int32
        /// Why there is no report.
        package var error: String

        package init(store: String, exitStatus: Int32, error: String) {
            self.store = store
            self.exitStatus = exitStatus
            self.error = error
        }
    }

    package static func text(_ report: VerificationReport, store: String) -> String {
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
