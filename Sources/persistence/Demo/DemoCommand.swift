import ArgumentParser
import Foundation

/// `persistence demo`: a small shop's data flow on a real store, each step printed and checked.
struct Demo: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run a guided tour of the Persistence API on a real store.",
        discussion: """
            Creates a store in a fresh temporary directory (removed afterwards) or in --directory (kept), then \
            inserts, queries, updates, upserts, deletes and counts records, shows a rollback, the async API and \
            what is the backend's own: raw SQL on SQLite; on LMDB, encryption at rest, a refused wrong \
            passphrase and a store written by an older app version migrated at start-up, with progress. The \
            flow is the same code on every backend. Exits non-zero if any step does not give the expected result.
            """
    )

    @Option(
        name: .long,
        help: "The storage backend; lmdb encrypts every value with a passphrase; postgres needs a server (--url).")
    var backend: DemoBackend = .sqlite

    @Option(name: .long, help: "The PostgreSQL server's postgres:// URL (default: $PERSISTENCE_POSTGRES_URL).")
    var url: String?

    @Option(name: .long, help: "Keep the store in this directory (created when missing) instead of a temporary one.")
    var directory: String?

    mutating func run() async throws {
        let console = Console()
        let (location, isTemporary) = try prepareDirectory()
        defer {
            if isTemporary { try? FileManager.default.removeItem(at: location) }
        }
        try await backend.run(in: location, postgresURL: url, console: console)

        console.note("")
        console.note(
            isTemporary ? "Demo finished; the temporary store was removed." : "Demo finished; the store is kept.")
    }

    /// The directory to use, and whether the demo made it (and so removes it).
    private func prepareDirectory() throws -> (URL, Bool) {
        let url: URL
        let isTemporary: Bool
        if let directory {
            url = URL(fileURLWithPath: directory, isDirectory: true)
            isTemporary = false
        } else {
            url = FileManager.default.temporaryDirectory
                .appendingPathComponent("persistence-demo-\(UUID().uuidString)", isDirectory: true)
            isTemporary = true
        }
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return (url, isTemporary)
    }
}

/// `--backend sqlite|lmdb|postgres`, parsed from the raw values.
extension DemoBackend: ExpressibleByArgument {}
