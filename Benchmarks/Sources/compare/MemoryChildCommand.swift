import ArgumentParser
import Foundation
import Workloads

/// The hidden child process of the memory workload: fills a store, or iterates it and prints a `MemoryReport`
/// as JSON on standard output.
struct MemoryChildCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "memory-child",
        abstract: "Internal: one phase of the memory workload, in a process of its own.",
        shouldDisplay: false
    )

    @Option(help: "sqlite-raw, sqlite-ours, lmdb-raw or lmdb-ours-encrypted.")
    var subject: String

    @Option(help: "fill or iterate.")
    var phase: String

    @Option(help: "The store's folder.")
    var directory: String

    @Option(help: "How many records the store holds.")
    var rows: Int

    func run() throws {
        guard let subject = MemorySubject(rawValue: subject) else {
            throw ValidationError("unknown subject '\(subject)'")
        }
        let folder = URL(fileURLWithPath: directory, isDirectory: true)
        switch phase {
        case "fill":
            try subject.fill(directory: folder, generator: PersonGenerator(count: rows))
        case "iterate":
            let report = try subject.iterate(directory: folder)
            FileHandle.standardOutput.write(try JSONEncoder().encode(report))
        default:
            throw ValidationError("unknown phase '\(phase)'")
        }
    }
}
