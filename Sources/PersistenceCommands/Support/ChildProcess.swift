import ArgumentParser
package import Foundation
import PersistenceCore
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A command that reads a file the storage engine can't read safely — an LMDB store, whose pages the engine maps and
/// follows without checks, so a damaged one can end the process with `SIGBUS` or `SIGSEGV` — run in a child process:
/// this executable again, with the flag that makes it do the work itself. The child shares this process's terminal,
/// standard input, output and error (its prompts, progress and output are the command's own); this process waits,
/// passes on a signal sent to it alone, and turns the child's death by a signal into one line and an exit status.
package enum ChildProcess {
    /// The hidden flag that makes a command do its work in this process (what the parent adds for the child).
    package static let inProcessFlag = "--in-process"

    /// This executable, which the child processes run again.
    package static var executable: URL? {
        #if os(Linux)
            URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        #else
            Bundle.main.executableURL
        #endif
    }

    /// This process's environment for a child: the Swift runtime's backtrace is turned off, since a crash on a damaged
    /// file is an answer the parent gives in one line, not a program's bug to print pages about.
    package static var environment: [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["SWIFT_BACKTRACE"] = "enable=no"
        return environment
    }

    /// Runs `arguments` (this executable's, with ``inProcessFlag``) in a child process and returns when it has
    /// exited with status 0.
    /// - Parameters:
    ///   - store: The store, as messages name it.
    ///   - making: A file the command makes (an export's output, a copy's destination): when the child is killed,
    ///     what it left of it — the file, its companions, its temporary `.<name>.….-partial` files — is removed, but
    ///     nothing that was there before the child started.
    /// - Throws: `ExitCode` — the child's own status when it exited with another; ``ToolExit/data`` when it was
    ///   killed by a signal (after one line on standard error); ``ToolExit/interrupted`` when it was killed by
    ///   `SIGINT` or `SIGTERM`.
    package static func run(_ arguments: [String], store: String, making: URL? = nil) throws {
        let before = making.map { Set(leftovers(of: $0)) } ?? []
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.environment = environment
        process.standardInput = FileHandle.standardInput
        process.standardOutput = FileHandle.standardOutput
        process.standardError = FileHandle.standardError
        forwardSignals()
        do {
            try process.run()
        } catch {
            FileHandle.standardError.write(
                Data("\(commandName): \(store): the reading process could not start: \(error)\n".utf8))
            throw ExitCode(ToolExit.io.rawValue)
        }
        child.store(process.processIdentifier, ordering: .relaxed)
        process.waitUntilExit()
        child.store(0, ordering: .relaxed)
        let status = process.terminationStatus
        let signaled = process.terminationReason == .uncaughtSignal
        if let making, signaled || status == ToolExit.interrupted.rawValue {
            // What the child left of what it was making: a second Ctrl-C ends it at once, before its own clean-up.
            for name in Set(leftovers(of: making)).subtracting(before) {
                try? FileManager.default.removeItem(at: making.deletingLastPathComponent().appendingPathComponent(name))
            }
        }
        guard signaled else {
            if status != 0 { throw ExitCode(status) }
            return
        }
        if status == SIGINT || status == SIGTERM {
            FileHandle.standardError.write(
                Data("\(commandName): \(making?.path ?? store): interrupted: what it was making is not kept\n".utf8))
            throw ExitCode(ToolExit.interrupted.rawValue)
        }
        FileHandle.standardError.write(
            Data(
                ("\(commandName): \(store): damaged: reading it ended the reading process (\(signalName(status))); "
                    + "`\(commandName) verify` tells more\n").utf8))
        throw ExitCode(ToolExit.data.rawValue)
    }

    /// `signal 7 (SIGBUS)`.
    package static func signalName(_ signal: Int32) -> String {
        let names: [Int32: String] = [
            SIGBUS: "SIGBUS", SIGSEGV: "SIGSEGV", SIGABRT: "SIGABRT", SIGILL: "SIGILL", SIGFPE: "SIGFPE",
            SIGTRAP: "SIGTRAP", SIGKILL: "SIGKILL", SIGINT: "SIGINT", SIGTERM: "SIGTERM", SIGHUP: "SIGHUP",
        ]
        return "signal \(signal)" + (names[signal].map { " (\($0))" } ?? "")
    }

    /// The names in `file`'s directory that are `file`, its companions (`-wal`, `-shm`, `-lock`, `-journal`) or a
    /// temporary file of a store being made there (`.<name>.<UUID>.<extension>-partial` and its companions).
    private static func leftovers(of file: URL) -> [String] {
        let name = file.lastPathComponent
        let temporary = "." + file.deletingPathExtension().lastPathComponent + "."
        let names = (try? FileManager.default.contentsOfDirectory(atPath: file.deletingLastPathComponent().path)) ?? []
        return names.filter { $0.hasPrefix(name) || ($0.hasPrefix(temporary) && $0.contains("-partial")) }
    }

    /// The child being waited for, for the signal handler (0: none).
    private static let child = Atomic<Int32>(0)

    /// Passes `SIGINT`, `SIGTERM` and `SIGHUP` sent to this process alone (by `kill`) on to the child, and ignores
    /// them here: the child undoes what it was making and its status becomes this one's. A signal from the terminal
    /// (Ctrl-C) already reaches the whole foreground process group, the child included, so it is not sent twice — a
    /// second one would end the child at once, without its clean-up.
    private static func forwardSignals() {
        var action = sigaction()
        #if canImport(Glibc)
            action.__sigaction_handler.sa_sigaction = { signal, info, _ in
                // si_code ≤ 0: sent by a process (SI_USER, SI_QUEUE, SI_TKILL); > 0: by the kernel (the terminal).
                guard let info, info.pointee.si_code <= 0 else { return }
                let pid = ChildProcess.child.load(ordering: .relaxed)
                if pid > 0 { kill(pid, signal) }
            }
        #elseif canImport(Darwin)
            action.__sigaction_u.__sa_sigaction = { signal, info, _ in
                guard let info, info.pointee.si_code <= 0 else { return }
                let pid = ChildProcess.child.load(ordering: .relaxed)
                if pid > 0 { kill(pid, signal) }
            }
        #endif
        action.sa_flags = SA_SIGINFO | SA_RESTART
        sigemptyset(&action.sa_mask)
        for signal in [SIGINT, SIGTERM, SIGHUP] { sigaction(signal, &action, nil) }
    }
}
