package import ArgumentParser
import Foundation
import PersistenceCore

/// Where a store's passphrase comes from (never the command line itself).
package struct PassphraseOptions: ParsableArguments {
    @Option(name: .long, help: "Read the store's passphrase from the first line of this file.")
    package var passphraseFile: String?

    @Option(name: .long, help: "Read the store's passphrase from this environment variable.")
    package var passphraseEnv: String?

    /// The source given, or `nil` (ask on the terminal if the store is encrypted).
    package init() {}

    package func source() throws -> SecretSource? {
        switch (passphraseFile, passphraseEnv) {
        case (let file?, nil): .file(file)
        case (nil, let name?): .environment(name)
        case (nil, nil): nil
        default: throw ValidationError("give --passphrase-file or --passphrase-env, not both")
        }
    }
}

/// The one source of a secret among a file, an environment variable and a prompt; `nil` when none is given.
package func chosenSource(file: String?, environment: String?, prompt: Bool, options: String) throws -> SecretSource? {
    guard [file != nil, environment != nil, prompt].filter({ $0 }).count <= 1 else {
        throw ValidationError("give one of \(options)")
    }
    if let file { return .file(file) }
    if let environment { return .environment(environment) }
    return prompt ? .prompt : nil
}

/// Runs a command's work, turning a `PersistenceError` into one line on standard error naming the store and the
/// exit status of its class (see ``ToolExit``).
/// - Parameter making: What the command makes (a copy's destination, an export's file): an interruption names it,
///   since that is what is thrown away; `nil` names `store`.
package func reportingErrors<R>(_ store: String, making: String? = nil, _ body: () throws -> R) throws -> R {
    do {
        return try Interruption.catching(body)
    } catch let error as PersistenceError {
        FileHandle.standardError.write(Data("\(commandName): \(store): \(error.message)\n".utf8))
        throw ExitCode(ToolExit.status(for: error).rawValue)
    } catch is CancellationError {
        FileHandle.standardError.write(
            Data("\(commandName): \(making ?? store): interrupted: what it was making is not kept\n".utf8))
        throw ExitCode(ToolExit.interrupted.rawValue)
    }
}

/// Parses a locator argument.
package func locator(_ text: String) throws -> StoreLocator {
    do {
        return try StoreLocator(text)
    } catch let error as PersistenceError {
        throw ValidationError(error.message)
    }
}

/// Runs async `body` (a request to a server), reporting a ``PersistenceError`` as ``reportingErrors(_:making:_:)``
/// does.
package func reportingErrors<R>(at store: String, _ body: () async throws -> R) async throws -> R {
    do {
        return try await body()
    } catch let error as PersistenceError {
        FileHandle.standardError.write(Data("\(commandName): \(store): \(error.message)\n".utf8))
        throw ExitCode(ToolExit.status(for: error).rawValue)
    }
}

/// This executable's name, for messages: `persistence`, or the app's own store command.
package var commandName: String {
    URL(fileURLWithPath: CommandLine.arguments.first ?? "persistence").lastPathComponent
}

/// The hidden flag that makes a command do its work in this process: what ``ChildProcess`` gives the child.
package struct InProcessOption: ParsableArguments {
    @Flag(name: .customLong("in-process"), help: .hidden) package var inProcess = false

    package init() {}

    /// Whether the command runs in a child process: a file store of `backend` (LMDB) in the parent.
    package func isolates(_ locator: StoreLocator) -> Bool { !inProcess && locator.backend == .lmdb }

    /// This command line for the child: ``ChildProcess/inProcessFlag`` right after the subcommand's name (before
    /// any `--`, so that it is never read as an argument).
    package static var childArguments: [String] {
        let arguments = Array(CommandLine.arguments.dropFirst())
        guard let command = arguments.first else { return [ChildProcess.inProcessFlag] }
        return [command, ChildProcess.inProcessFlag] + arguments.dropFirst()
    }
}
