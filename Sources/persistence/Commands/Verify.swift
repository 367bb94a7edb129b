import ArgumentParser
import Foundation
import PersistenceCommands
import PersistenceCore
@_spi(PersistenceBackend) import PersistenceEngine
import PersistenceTool

/// `persistence verify STORE`: the full check, in a child process so a damaged file can't take the tool down.
struct Verify: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check every record, index entry and the metadata of a store, safely.",
        discussion: """
            The check runs in a child process: a file damaged enough to crash the storage engine ends that process, \
            not this one. Exit status: 0 sound, 1 problems found (listed), 2 the store could not be read at all (the \
            checking process was killed by a signal or gave no report); a wrong passphrase or a missing store has \
            its own status (see the README). With --json, a check that gives no report prints \
            {"checked": false, "exitStatus": …, "error": "…", "store": "…"} instead.
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
        // A store this process may not read is 77 here, before a child is started (or a passphrase asked for).
        try CheckingProcess.checkReadable(locator.file, store: store, json: json)
        let asks = try locator.backend == .lmdb && passphrase.source() == nil
        let report = try CheckingProcess.report(
            arguments(), store: store, askPassphrase: asks ? "Passphrase of \(locator)" : nil, json: json)
        try VerificationText.print(report, json: json, store: locator.description)
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
        try CheckingProcess.send(report)
    }

    /// This command's arguments for the child.
    private func arguments() -> [String] {
        var arguments = ["verify", ChildProcess.inProcessFlag]
        if let file = passphrase.passphraseFile { arguments += ["--passphrase-file", file] }
        if let name = passphrase.passphraseEnv { arguments += ["--passphrase-env", name] }
        // After `--`, a store whose name begins with `-` is still the store.
        return arguments + ["--", store]
    }
}
