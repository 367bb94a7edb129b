package import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A running worker child process — `ReliabilityWorker` (the kill -9 tests of the reliability and sync suites) or
/// `LMDBWorker` (the LMDB suite's multi-process tests) — its output read line by line as it is written.
package final class WorkerProcess {
    private let process = Process()
    private let output = Pipe()
    private let inputPipe = Pipe()
    private var buffer = Data()
    private var ended = false
    /// Where the child's standard error goes, for failure messages.
    package let errorFile: URL

    /// Starts the worker `binary` with `arguments` and `environment` added to this process's; its standard error
    /// goes to `errorFile`. With `input`, the child's standard input is a pipe that stays open until ``closeInput()``.
    package init(
        _ arguments: [String], errorFile: URL, binary: Binary = .reliability, environment: [String: String] = [:],
        input: Bool = false
    ) throws {
        self.errorFile = errorFile
        process.executableURL = try Self.binary(binary)
        process.arguments = arguments
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        if input { process.standardInput = inputPipe }
        process.standardOutput = output
        _ = FileManager.default.createFile(atPath: errorFile.path, contents: nil)
        process.standardError = try FileHandle(forWritingTo: errorFile)
        try process.run()
    }

    /// The next line the child wrote, waiting for it; `nil` once its output has ended.
    package func nextLine() -> String? {
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self)
                buffer.removeSubrange(buffer.startIndex...newline)
                return line
            }
            if ended {
                guard !buffer.isEmpty else { return nil }
                defer { buffer.removeAll() }
                return String(decoding: buffer, as: UTF8.self)
            }
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { ended = true } else { buffer.append(chunk) }
        }
    }

    /// Every line left, until the child's output ends.
    package func remainingLines() -> [String] {
        var lines: [String] = []
        while let line = nextLine() { lines.append(line) }
        return lines
    }

    /// Writes `line` and a newline to the child's standard input (started with `input`).
    package func send(_ line: String) { inputPipe.fileHandleForWriting.write(Data((line + "\n").utf8)) }

    /// Ends the child's standard input (a worker that waits for it then goes on).
    package func closeInput() { try? inputPipe.fileHandleForWriting.close() }

    /// Whether the child is still running.
    package var isRunning: Bool { process.isRunning }

    /// Sends SIGKILL: the child stops wherever it is, with no chance to clean up.
    package func kill() {
        #if canImport(Glibc)
            _ = Glibc.kill(process.processIdentifier, SIGKILL)
        #elseif canImport(Darwin)
            _ = Darwin.kill(process.processIdentifier, SIGKILL)
        #endif
    }

    /// Waits for the child to end: `.exit(status)` or `.signal(number)`.
    package func wait() -> Termination {
        process.waitUntilExit()
        switch process.terminationReason {
        case .uncaughtSignal: return .signal(process.terminationStatus)
        case .exit: return .exit(process.terminationStatus)
        @unknown default: return .exit(process.terminationStatus)
        }
    }

    /// What the child wrote to standard error, for a failure message.
    package var errors: String { (try? String(contentsOf: errorFile, encoding: .utf8)) ?? "" }

    package enum Termination: Equatable {
        case exit(Int32)
        case signal(Int32)
    }

    /// Runs the worker to its end and returns its output lines and how it ended.
    package static func run(
        _ arguments: [String], errorFile: URL, binary: Binary = .reliability, environment: [String: String] = [:]
    ) throws -> (lines: [String], termination: Termination) {
        let worker = try WorkerProcess(arguments, errorFile: errorFile, binary: binary, environment: environment)
        let lines = worker.remainingLines()
        return (lines, worker.wait())
    }

    /// A worker executable of this package.
    package struct Binary: Sendable {
        /// Its name in the build products directory.
        package var name: String
        /// The environment variable that names another path for it.
        package var override: String

        package init(name: String, override: String) {
            self.name = name
            self.override = override
        }

        package static let reliability = Binary(name: "ReliabilityWorker", override: "RELIABILITY_WORKER")
        package static let lmdb = Binary(name: "LMDBWorker", override: "LMDB_WORKER")
    }

    /// The worker binary: the path in its environment variable, or the executable of its name in the build products
    /// directory that holds the test bundle (SwiftPM builds it first: the test target depends on it).
    package static func binary(_ worker: Binary = .reliability) throws -> URL {
        let environment = ProcessInfo.processInfo.environment
        if let path = environment[worker.override] { return URL(fileURLWithPath: path) }
        var candidates = [URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()]
        candidates.append(Bundle.main.bundleURL)
        candidates += Bundle.allBundles.map { $0.bundleURL.deletingLastPathComponent() }
        for directory in candidates {
            let binary = directory.appendingPathComponent(worker.name)
            if FileManager.default.isExecutableFile(atPath: binary.path) { return binary }
        }
        throw WorkerNotFound(worker: worker)
    }

    package struct WorkerNotFound: Error, CustomStringConvertible {
        let worker: Binary
        package var description: String {
            "\(worker.name) was not found next to the test bundle; build it (swift build --build-tests) or set "
                + worker.override
        }
    }
}
