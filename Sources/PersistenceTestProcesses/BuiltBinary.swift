package import Foundation
import PersistenceCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// An executable of this package, found in the build products directory beside the test bundle and run as a user
/// runs it: the store tools' tests check exit statuses and output of the real binary.
package struct BuiltBinary: Sendable {
    /// How a run ended, and what it wrote.
    package struct Result: Sendable {
        package var status: Int32
        package var output: String
        package var errors: String
    }

    /// The executable's name in the build products (`persistence`, `NotesStore`).
    package let name: String

    package init(_ name: String) { self.name = name }

    /// Runs the binary with `arguments` and `environment` added to this process's, standard input empty.
    /// - Parameter interruptWhen: Polled while the process runs; the process gets `SIGINT` (Ctrl-C) once it says
    ///   so.
    package func run(
        _ arguments: [String], environment: [String: String] = [:], interruptWhen: (() -> Bool)? = nil
    ) throws -> Result {
        let process = Process()
        process.executableURL = try url()
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let output = Pipe()
        // Standard error to a file: read after the end, it can't fill a pipe the child then blocks on.
        let errorFile = FileManager.default.temporaryDirectory.appendingPathComponent(
            "\(name)-\(UUID().uuidString).log")
        _ = FileManager.default.createFile(atPath: errorFile.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: errorFile) }
        let errors = try FileHandle(forWritingTo: errorFile)
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = FileHandle.nullDevice
        try process.run()
        try errors.close()
        if let interruptWhen {
            let deadline = Date().addingTimeInterval(60)
            while process.isRunning, !interruptWhen(), Date() < deadline { usleep(2_000) }
            usleep(100_000)
            process.interrupt()
        }
        let outputData = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Result(
            status: process.terminationStatus, output: String(decoding: outputData, as: UTF8.self),
            errors: String(decoding: (try? Data(contentsOf: errorFile)) ?? Data(), as: UTF8.self))
    }

    /// The binary in the build products directory that holds the test bundle.
    package func url() throws -> URL {
        var candidates = [URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()]
        candidates.append(Bundle.main.bundleURL)
        candidates += Bundle.allBundles.map { $0.bundleURL.deletingLastPathComponent() }
        for directory in candidates {
            let binary = directory.appendingPathComponent(name)
            if FileManager.default.isExecutableFile(atPath: binary.path) { return binary }
        }
        throw PersistenceError(.notFound, "the \(name) binary was not found next to the test bundle")
    }
}
