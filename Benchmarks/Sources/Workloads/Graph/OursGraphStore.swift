import Foundation
import PersistenceCore
import PersistenceLMDB
import PersistenceSQLite

/// Where the graph workloads (G1, A1, E1) run ours: SQLite, or LMDB plain or encrypted — builders as the README
/// shows them, LMDB's map as large as the raw baseline's from the start.
enum OursGraphStore {
    case sqlite
    case lmdbPlain
    case lmdbEncrypted

    /// Opens (creating when needed) the store named "ours" of `entities` in `directory`.
    func open(_ directory: URL, _ entities: [any Entity.Type]) throws -> any PersistenceCore.Database {
        switch self {
        case .sqlite:
            var builder = SQLiteBuilder(databaseName: "ours", entities: entities)
            builder.directory = directory
            return try builder.create()
        case .lmdbPlain, .lmdbEncrypted:
            var builder =
                self == .lmdbEncrypted
                ? LMDBBuilder(databaseName: "ours", passphrase: OursLMDBSubject.passphrase, entities: entities)
                : LMDBBuilder.unencrypted(databaseName: "ours", model: Model(version: 1, entities: entities))
            builder.directory = directory
            builder.initialMapSize = RawLMDBEnvironment.mapSize
            return try builder.create()
        }
    }
}
