import Foundation
import PersistenceCore
import PersistenceLMDB
import PersistenceSQLite

/// The stores the observation workloads (O1, O2) run on: Persistence's SQLite backend and its plain LMDB backend,
/// opened as the other workloads open them — SQLite with the builder's defaults (WAL, `synchronous = FULL`: an
/// fsync at every commit), LMDB unencrypted with the same 4 GiB map (LMDB syncs at every commit) — and SQLite once
/// more with `synchronous = NORMAL` (no fsync at commit in WAL mode), so that the commit's own work is timed rather
/// than the disk's. `Person` and ``Note`` are in every model.
public enum ObservationBackend: String, CaseIterable, Sendable {
    case sqlite = "sqlite"
    case sqliteNormal = "sqlite-normal"
    case lmdbPlain = "lmdb-plain"

    /// Opens a new store in `directory` and runs `body` on it (pass it on to a generic function, which opens the
    /// existential); the store closes when `body` returns.
    func withStore<R>(in directory: URL, _ body: (any Database) throws -> R) throws -> R {
        switch self {
        case .sqlite, .sqliteNormal:
            var builder = SQLiteBuilder(databaseName: "ours", entities: [Person.self, Note.self])
            builder.directory = directory
            builder.synchronous = self == .sqlite ? .full : .normal
            let db = try builder.create()
            let expected = self == .sqlite ? SQLiteDurability.full : SQLiteDurability.normal
            let synchronous = try db.write { context in try context.scalar("PRAGMA synchronous") }
            guard case .integer(let level)? = synchronous else {
                throw SQLiteDurability.Mismatch(implementation: rawValue, level: nil, expected: expected)
            }
            try SQLiteDurability.check(Int(level), rawValue, expected: expected)
            return try body(db)
        case .lmdbPlain:
            var builder = LMDBBuilder.unencrypted(
                databaseName: "ours", model: Model(version: 1, entities: [Person.self, Note.self]))
            builder.directory = directory
            builder.initialMapSize = RawLMDBEnvironment.mapSize
            return try body(builder.create())
        }
    }
}

extension Database {
    /// Every `Person` and the number of `Note`s, read back.
    func readBack() throws -> (people: Checksum, notes: Int) {
        try read { context in
            try (Checksum(context.recover(Person.self, query: Query())), context.count(Note.self))
        }
    }
}
