import Foundation
import PersistenceCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Where a passphrase comes from: never the command line (it would show in `ps` and in shell history).
package enum SecretSource: Sendable, Hashable {
    /// The first line of a file.
    case file(String)
    /// An environment variable, by name.
    case environment(String)
    /// Asked for on the terminal, without echo.
    case prompt

    /// The passphrase.
    /// - Parameter label: What the prompt asks for.
    /// - Throws: ``PersistenceError/Code/invalidArgument`` for a missing file or variable or an empty passphrase,
    ///   ``PersistenceError/Code/wrongPassphrase`` for a prompt with no terminal to ask on.
    package func read(label: String) throws -> String {
        let secret: String
        switch self {
        case .file(let path):
            // The first line, cut at its first LF byte and without a CR before it (a file written on Windows): by
            // bytes, since "\r\n" is one Character, and a split by Character never finds the "\n" in it.
            guard let data = FileManager.default.contents(atPath: path) else {
                throw PersistenceError(.invalidArgument, "the passphrase file \(path) can't be read")
            }
            var line = Array(data.prefix { $0 != UInt8(ascii: "\n") })
            if line.last == UInt8(ascii: "\r") { line.removeLast() }
            guard let text = String(bytes: line, encoding: .utf8) else {
                throw PersistenceError(.invalidArgument, "the passphrase file \(path) is not UTF-8 text")
            }
            secret = text
        case .environment(let name):
            guard let value = ProcessInfo.processInfo.environment[name] else {
                throw PersistenceError(.invalidArgument, "the environment variable \(name) is not set")
            }
            secret = value
        case .prompt:
            secret = try Self.prompt(label)
        }
        guard !secret.isEmpty else { throw PersistenceError(.invalidArgument, "the \(label) is empty") }
        return secret
    }

    /// A new passphrase: as ``read(label:)``, except that a prompt asks twice and refuses two different answers.
    /// - Throws: As ``read(label:)``; ``PersistenceError/Code/invalidArgument`` when the two answers differ.
    package func readNew(label: String) throws -> String {
        let secret = try read(label: label)
        guard self == .prompt else { return secret }
        guard try Self.prompt("\(label), again") == secret else {
            throw PersistenceError(.invalidArgument, "the two passphrases typed differ: nothing was changed")
        }
        return secret
    }

    /// A PostgreSQL server's password: from the source given, else `PGPASSWORD` (libpq's convention), else none.
    package static func serverPassword(_ source: SecretSource?) throws -> String? {
        if let source { return try source.read(label: "Password") }
        return ProcessInfo.processInfo.environment["PGPASSWORD"]
    }

    /// Reads a line from the terminal with echo off, restoring the terminal whatever happens.
    private static func prompt(_ label: String) throws -> String {
        let input = FileHandle.standardInput.fileDescriptor
        guard isatty(input) == 1 else {
            throw PersistenceError(
                .wrongPassphrase,
                "the store is encrypted: give its passphrase with --passphrase-file or --passphrase-env "
                    + "(no terminal to ask on)")
        }
        FileHandle.standardError.write(Data("\(label): ".utf8))
        var original = termios()
        tcgetattr(input, &original)
        var silent = original
        silent.c_lflag &= ~tcflag_t(ECHO)
        tcsetattr(input, TCSAFLUSH, &silent)
        defer {
            tcsetattr(input, TCSAFLUSH, &original)
            FileHandle.standardError.write(Data("\n".utf8))
        }
        return readLine(strippingNewline: true) ?? ""
    }
}
