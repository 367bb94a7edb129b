import Foundation
import PersistenceTesting
import Testing

@testable import PersistenceLMDB

struct Secret: Entity, Equatable {
    var id: Int64
    var note: String
    var tag: String
    static let indexes: [Index] = [.on("tag"), .unique("note")]
}

func secrets(_ directory: URL, passphrase: String = "correct horse battery staple") -> LMDBBuilder {
    var builder = LMDBBuilder(databaseName: "Secrets", passphrase: passphrase, entities: [Secret.self])
    builder.directory = directory
    builder.keyDerivation = testKeyDerivation
    return builder
}

/// The store's data file.
func dataFile(_ directory: URL, name: String = "Secrets") -> URL { directory.appendingPathComponent(name + ".lmdb") }

/// The names of a store's databases and its migration marker, read through a database `builder` opens (and closes).
func inspectMigration(_ builder: LMDBBuilder) throws -> (names: [String], marker: Data?) {
    let db = try builder.create()
    defer { try? db.close() }
    return try db.environment.read { transaction in
        (try transaction.databaseNames(), try StoreMetadata.read(.migration, db.metaDBI, transaction))
    }
}

extension Data {
    /// Where `needle` first occurs, or `nil`.
    func offset(of needle: Data) -> Int? {
        guard !needle.isEmpty, needle.count <= count else { return nil }
        return range(of: needle).map { $0.lowerBound - startIndex }
    }
}
