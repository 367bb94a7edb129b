package import ArgumentParser
import Foundation

/// Runs an executable's command line as ArgumentParser's `main()` does, except that every error is one line on
/// standard error — `persistence: MESSAGE` — as the commands' own errors are: a usage error (an unknown option, a
/// missing argument, a bad locator) ends with a pointer to the command's help instead of ArgumentParser's three
/// lines of error, usage and hint. Help and `ExitCode` are as ArgumentParser handles them.
package enum CommandLineRunner {
    /// Parses and runs `root`'s command line, then exits.
    package static func main(_ root: any ParsableCommand.Type) async -> Never {
        var command: (any ParsableCommand)?
        do {
            command = try root.parseAsRoot()
            if var asynchronous = command as? any AsyncParsableCommand {
                try await asynchronous.run()
            } else if var synchronous = command {
                try synchronous.run()
            }
            root.exit()
        } catch {
            exit(root, error, running: command.map { type(of: $0) })
        }
    }

    /// Parses and runs `root`'s command line (no command in it is asynchronous), then exits.
    package static func main(_ root: any ParsableCommand.Type) -> Never {
        var command: (any ParsableCommand)?
        do {
            command = try root.parseAsRoot()
            if var synchronous = command { try synchronous.run() }
            root.exit()
        } catch {
            exit(root, error, running: command.map { type(of: $0) })
        }
    }

    /// Exits for `error`: help, a clean exit and `ExitCode` as ArgumentParser does; anything else as one line.
    /// - Parameter running: The command whose `run()` threw, `nil` for an error of parsing.
    private static func exit(
        _ root: any ParsableCommand.Type, _ error: any Error, running: (any ParsableCommand.Type)?
    ) -> Never {
        let status = root.exitCode(for: error)
        if error is ExitCode || status == .success { root.exit(withError: error) }
        FileHandle.standardError.write(Data((line(root, error, running: running) + "\n").utf8))
        Foundation.exit(status.rawValue)
    }

    /// `persistence: missing expected argument '<store>' (see 'persistence inspect --help')`.
    package static func line(
        _ root: any ParsableCommand.Type, _ error: any Error, running: (any ParsableCommand.Type)? = nil
    ) -> String {
        var message = root.message(for: error).trimmingCharacters(in: .whitespacesAndNewlines)
        message = message.split(separator: "\n").joined(separator: "; ")
        if let first = message.first, first.isUppercase, message.dropFirst().first?.isLowercase ?? false {
            message = first.lowercased() + message.dropFirst()
        }
        var line = "\(commandName): \(message)"
        // A command's run() threw (a ValidationError): its help is the words of the command line up to its name.
        if let running, let name = running.configuration.commandName ?? Optional(running._commandName) {
            let words = CommandLine.arguments.dropFirst()
            if let end = words.firstIndex(of: name) {
                return line + " (see '" + ([commandName] + words[..<end] + [name, "--help"]).joined(separator: " ")
                    + "')"
            }
        }
        // ArgumentParser's hint names the help of the subcommand that failed: "  See 'persistence inspect --help'…".
        let full = root.fullMessage(for: error)
        if let hint = full.split(separator: "\n").first(where: { $0.contains("See '") }),
            let start = hint.range(of: "See '")?.upperBound,
            let end = hint[start...].firstIndex(of: "'")
        {
            line += " (see '\(hint[start..<end])')"
        }
        return line
    }
}
