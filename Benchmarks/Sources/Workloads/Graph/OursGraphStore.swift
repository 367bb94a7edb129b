import Foundation
import PersistenceCore
import PersistenceLMDB
import PersistenceSQLite

/// Where the graph workloads (G1, A1, E1) and RS1 run ours: SQLite, or LMDB plain or encrypted — builders as the
/// README shows them, LMDB's map as large as the raw baseline's from the start.
enum OursGraphStore {
    case sqlite
    case lmdbPlain
    case lmdbEncrypted

    /// Opens (creating when needed) the store named "ours" of `entities` in `directory`.
    func open(_ directory: URL, _ entities: [any Entity.Type]) throws -> any PersistenceCore.Database {
        try open(directory, model: Model(version: 1, entities: entities), earlier: [])
    }

    /// Opens (creating when needed) the store named "ours" of `model` in `directory`; a store of one of the
    /// `earlier` model versions is migrated (inferred steps only).
    func open(_ directory: URL, model: Model, earlier: [Model]) throws -> any PersistenceCore.Database {
        switch self {
        case .sqlite:
            var builder = SQLiteBuilder(databaseName: "ours", model: model)
            builder.directory = directory
            if !earlier.isEmpty { builder.migrationPlan = MigrationPlan(models: earlier) }
            return try builder.create()
        case .lmdbPlain, .lmdbEncrypted:
            var builder =
                self == .lmdbEncrypted
                ? LMDBBuilder(databaseName: "ours", passphrase: OursLMDBSubject.passphrase, model: model)
                : LMDBBuilder.unencrypted(databaseName: "ours", model: model)
            builder.directory = directory
            builder.initialMapSize = RawLMDBEnvironment.mapSize
            return try builder.create()
        }
    }
}
