import Foundation

/// Runs this executable again with other arguments: the memory (M) and migration (M2) workloads measure peak
/// memory per process, so each measurement gets a process of its own.
enum ChildProcess {
    /// Runs this executable with `arguments` and returns its standard output; its standard error passes through.
    /// - Throws: ``Failure`` when the child exits with a non-zero status (a failed verification among others).
    static func run(_ arguments: [String]) throws -> Data {
        let process = Process()
        process.executableURL = Bundle.main.executableURL ?? URL(fileURLWithPath: CommandLine.arguments[0])
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationReason == .exit, process.terminationStatus == 0 else {
            throw Failure(arguments: arguments, status: process.terminationStatus)
        }
        return data
    }

    struct Failure: Error, CustomStringConvertible {
        var arguments: [String]
        var status: Int32
        var description: String { "the child process `compare \(arguments.joined(separator: " "))` failed (\(status))" }
    }
}
