import ArgumentParser
import Foundation
import Workloads

/// The hidden child process of the migration workloads (M2, M3, S8 on LMDB): seeds a store at schema version 1, or
/// migrates one and prints a `MigrationReport` as JSON on standard output.
struct MigrationChildCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migration-child",
        abstract: "Internal: one phase of the migration workload, in a process of its own.",
        shouldDisplay: false
    )

    @Option(help: "sqlite-raw, sqlite-ours, lmdb-raw, ours-plain, raw+aes-gcm or ours-encrypted.")
    var subject: String

    @Option(help: "block (M2's migration block) or mapping (S8's mapping model).")
    var change = MigrationChange.block.rawValue

    @Option(help: "seed or migrate.")
    var phase: String

    @Option(help: "The store's folder.")
    var directory: String

    @Option(help: "How many records the store holds.")
    var rows: Int

    func run() throws {
        guard let subject = MigrationSubject(rawValue: subject) else {
            throw ValidationError("unknown subject '\(subject)'")
        }
        guard let change = MigrationChange(rawValue: change) else {
            throw ValidationError("unknown change '\(change)'")
        }
        guard rows >= 1 else { throw ValidationError("--rows must be at least 1") }
        let folder = URL(fileURLWithPath: directory, isDirectory: true)
        let generator = PersonGenerator(count: rows)
        switch phase {
        case "seed":
            try subject.seed(directory: folder, generator: generator)
        case "migrate":
            let report = try subject.migrate(change, directory: folder, generator: generator)
            FileHandle.standardOutput.write(try JSONEncoder().encode(report))
        default:
            throw ValidationError("unknown phase '\(phase)'")
        }
    }
}
