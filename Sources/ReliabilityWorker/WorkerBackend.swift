import ArgumentParser
import Foundation
import PersistenceLMDB
import PersistenceSQLite

/// The store a worker command opens: `--backend sqlite|lmdb|lmdb-plain`.
enum WorkerBackend: String, CaseIterable, ExpressibleByArgument {
    case sqlite
    case lmdb
    case lmdbPlain = "lmdb-plain"
}

/// Work on an open store, generic over its backend so each command is written once.
protocol StoreWork {
    associatedtype Output
    func run<D: Database>(_ db: D) throws -> Output
}

/// The options every command shares: which backend, where, and the passphrase of an encrypted store.
struct StoreOptions: ParsableArguments {
    @Option(help: "The storage backend.")
    var backend: WorkerBackend

    @Option(help: "The directory that holds the store (created when missing).")
    var directory: String

    @Option(help: "The passphrase of an encrypted LMDB store.")
    var passphrase = "reliability"

    @Option(help: "scrypt's log2(N) for a new encrypted store: tests keep it cheap, opening costs ~1 ms at 10.")
    var kdfLogN: UInt8 = 10

    @Option(help: "LMDB's initial map size in MiB: the smallest, so that kills also land while the map grows.")
    var mapSizeMiB = 1

    /// The database name: one store per directory.
    static let databaseName = "Reliability"

    /// Opens (creating when needed) the store of `entities` and runs `work` on it.
    func open<W: StoreWork>(_ entities: [any Entity.Type], _ work: W) throws -> W.Output {
        let url = URL(fileURLWithPath: directory, isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        switch backend {
        case .sqlite:
            var builder = SQLiteBuilder(databaseName: Self.databaseName, entities: entities)
            builder.directory = url
            return try work.run(builder.create())
        case .lmdb:
            var builder = LMDBBuilder(databaseName: Self.databaseName, passphrase: passphrase, entities: entities)
            builder.directory = url
            builder.keyDerivation = .scrypt(logN: kdfLogN, blockSize: 8, parallelism: 1)
            builder.initialMapSize = mapSizeMiB << 20
            return try work.run(builder.create())
        case .lmdbPlain:
            var builder = LMDBBuilder.unencrypted(databaseName: Self.databaseName, entities: entities)
            builder.directory = url
            builder.initialMapSize = mapSizeMiB << 20
            return try work.run(builder.create())
        }
    }
}

/// Writes to standard output without buffering: the test reads each line as soon as it is written, and a
/// killed process must not take acknowledged lines with it in a buffer.
enum WorkerOutput {
    static func line(_ text: String) {
        FileHandle.standardOutput.write(Data((text + "\n").utf8))
    }

    /// One JSON line, as the tests parse it.
    static func json(_ value: some Encodable) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        line(String(decoding: try encoder.encode(value), as: UTF8.self))
    }
}

/// The error code a worker reports: a `PersistenceError`'s code, or the type of any other error.
func errorCode(_ error: any Error) -> String {
    (error as? PersistenceError)?.code.rawValue ?? "other:\(type(of: error))"
}
