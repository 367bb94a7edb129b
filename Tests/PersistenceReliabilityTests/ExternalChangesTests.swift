import Foundation
import PersistenceLMDB
import PersistenceSQLite
import PersistenceTestProcesses
import PersistenceTesting
import Testing

/// Observers and writes from another process: a child process commits to the store this process has open, and
/// this process's observers hear of it once it looks (`checkForExternalChanges()`, or its own next write).
@Suite("observers and other processes")
struct ExternalChangesTests {
    // The worker's `commit` entities, declared again with the same schema.
    struct Ledger: Entity, Equatable {
        var id: Int64
        var amount: Int64
        var bucket: Int64
        var memo: String
        static let indexes: [Index] = [.on("bucket")]
    }

    struct Counter: Entity, Equatable {
        var id: Int64
        var last: Int64
        var total: Int64
    }

    @Test("another process's commits reach this process's observers", arguments: ["sqlite", "lmdb", "lmdb-plain"])
    func otherProcess(backend: String) async throws {
        let directory = try makeDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        switch backend {
        case "sqlite":
            var builder = SQLiteBuilder(databaseName: "Reliability", entities: [Ledger.self, Counter.self])
            builder.directory = directory
            try await observe(builder.create(), backend: backend, directory: directory)
        case "lmdb":
            var builder = LMDBBuilder(
                databaseName: "Reliability", passphrase: "reliability", entities: [Ledger.self, Counter.self])
            builder.directory = directory
            builder.keyDerivation = .scrypt(logN: 10, blockSize: 8, parallelism: 1)
            try await observe(builder.create(), backend: backend, directory: directory)
        default:
            var builder = LMDBBuilder.unencrypted(databaseName: "Reliability", entities: [Ledger.self, Counter.self])
            builder.directory = directory
            try await observe(builder.create(), backend: backend, directory: directory)
        }
    }

    private func observe(_ db: some Database, backend: String, directory: URL) async throws {
        var ledgers = db.observe(tracking: [Ledger.self]) { try $0.count(Ledger.self) }.makeAsyncIterator()
        var counters = db.changes(of: Counter.self).makeAsyncIterator()
        #expect(try await ledgers.next() == 0)
        #expect(try db.checkForExternalChanges() == false)

        let (_, termination) = try WorkerProcess.run(
            ["commit", "--backend", backend, "--directory", directory.path, "--count", "3"],
            errorFile: directory.appendingPathComponent("commit.stderr"))
        try #require(termination == .exit(0))

        #expect(try db.checkForExternalChanges() == true, "the other process's commits went unnoticed")
        #expect(try await ledgers.next() == 3)
        let external = await counters.next()
        #expect(external?.isComplete == false, "another process's changes can't be named key by key")
        #expect(try db.checkForExternalChanges() == false, "nothing new since")

        // Noticed without asking, when this process's next write begins.
        _ = try WorkerProcess.run(
            ["commit", "--backend", backend, "--directory", directory.path, "--count", "2"],
            errorFile: directory.appendingPathComponent("commit2.stderr"))
        try await db.write { try $0.upsert(Counter(id: 99, last: 0, total: 0)) }
        #expect(try await ledgers.next() == 5)
        #expect(await counters.next()?.isComplete == false, "first the other process's commits")
        #expect(await counters.next()?.inserted == [99], "then this write's own, key by key")
    }

    private func makeDirectory() throws -> URL {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("persistence-external-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }
}
