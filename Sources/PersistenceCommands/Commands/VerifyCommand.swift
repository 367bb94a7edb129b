import ArgumentParser
import Foundation
import PersistenceCore

/// `verify STORE`: the store's full check, then every record read as the app's entity types — in a child process.
struct VerifyCommand<App: StoreCommands>: ParsableCommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(
            commandName: "verify",
            abstract: "Check every record, index entry and the metadata of the store, and read it as the app does.",
            discussion: """
                Runs the backend's full verify(), then reads every record of every entity of the app's model as the \
                app's own type: a value the app's code can't decode is a problem too. The check runs in a child \
                process, so a file damaged enough to crash the storage engine ends that process, not this one. A \
                store that needs a migration is refused (verify never migrates). Exit status: 0 sound, 1 problems \
                found (listed), 2 the store could not be read at all (the checking process was killed by a signal \
                or gave no report), 78 a migration is needed. With --json, a check that gives no report prints \
                {"checked": false, "exitStatus": …, "error": "…", "store": "…"} instead.
                """)
    }

    @OptionGroup var arguments: StoreArguments
    @Flag(name: .long, help: "Print the report as JSON.") var json = false
    /// Set by the parent: run the check here and write the report to standard output as JSON.
    @Flag(name: .customLong("in-process"), help: .hidden) var inProcess = false
    /// Set by the parent: the passphrase comes on standard input (asked on the parent's terminal).
    @Flag(name: .customLong("passphrase-stdin"), help: .hidden) var passphraseStdin = false

    func run() throws {
        let address = try arguments.address()
        if inProcess { return try check() }
        // A store this process may not read is 77 here, before a child is started (or a passphrase asked for).
        try CheckingProcess.checkReadable(address.locator.file, store: arguments.store, json: json)
        // The child is this executable with this command line, whatever path of subcommands led here.
        let childArguments = Array(CommandLine.arguments.dropFirst()) + ["--in-process"]
        let asks = try address.backend == "lmdb" && arguments.passphrase.source() == nil
        let report = try CheckingProcess.report(
            childArguments, store: arguments.store, askPassphrase: asks ? "Passphrase of \(address)" : nil, json: json)
        try VerificationText.print(report, json: json, store: address.description)
    }

    /// The child's work: open through the app's builder, verify, read every record as the app's types.
    private func check() throws {
        var arguments = arguments
        if passphraseStdin {
            arguments.passphrase.passphraseFile = "/dev/stdin"
            arguments.passphrase.passphraseEnv = nil
        }
        let report = try reportingErrors(arguments.store) {
            let builder = try App.currentStoreBuilder(arguments)
            let database = try builder.create()
            defer { try? database.close() }
            var report = try database.verify()
            for type in builder.model.entities {
                if let problem = try Self.readEach(type, in: database) { report.append(problem) }
            }
            return report
        }
        try CheckingProcess.send(report)
    }

    /// Reads every record of `type` through the app's decoding; the first that fails is the problem returned.
    private static func readEach<E: Entity>(_ type: E.Type, in database: some Database) throws
        -> VerificationProblem?
    {
        do {
            try database.forEach(E.self, query: Query()) { _ in try Interruption.check() }
            return nil
        } catch let error as PersistenceError where error.code != .closed {
            return VerificationProblem(
                .recordUnreadable, entity: E.entityName,
                message: "a record can't be read as the app's \(E.self): \(error.message)")
        }
    }
}
