public import Foundation
public import PersistenceCore
import PersistenceSQLite

/// Persistence's SQLite backend, used as the README shows: a builder with defaults (WAL, `synchronous = FULL`),
/// work in `read` / `write` blocks.
public final class OursSQLiteSubject: SQLiteSubject {
    public typealias Record = Person
    public static let implementation = "ours"

    private let db: SQLiteDatabase

    public init(directory: URL) throws {
        var builder = SQLiteBuilder(databaseName: "ours", entities: [Person.self])
        builder.directory = directory
        db = try builder.create()
        let synchronous = try db.write { context in try context.scalar("PRAGMA synchronous") }
        guard case .integer(let level)? = synchronous else {
            throw SQLiteDurability.Mismatch(implementation: Self.implementation, level: nil)
        }
        try SQLiteDurability.check(Int(level), Self.implementation)
    }

    public func insert(_ records: [Person]) throws {
        try db.write { context in try context.create(records) }
    }

    /// Not a workload: inserts records as they stream by, in one transaction, with no array of them (the T
    /// workloads' store of a million records).
    public func insert(streaming people: some Sequence<Person>) throws {
        try db.write { context in try context.create(people) }
    }

    public func fetchAll() throws -> [Person] {
        try db.read { context in try context.recover(Person.self, query: Query()) }
    }

    public func lookup(ids: [Int64]) throws -> [Person] { try recoverEach(ids, in: db) }

    public func lookup(names: [String]) throws -> [Person] {
        try db.read { context in
            var people: [Person] = []
            for name in names { people += try context.recover(Person.self, key: "name", value: name) }
            return people
        }
    }

    public func update(_ records: [Person]) throws {
        try db.write { context in
            for person in records { try context.update(person) }
        }
    }

    public func delete(ids: [Int64]) throws -> Int {
        try db.write { context in
            var deleted = 0
            for id in ids where try context.delete(Person.self, id: id) { deleted += 1 }
            return deleted
        }
    }

    /// R1: `reconcile` in one write, over every stored `Person` (no scope).
    public func reconcile(with incoming: [Person]) throws -> ChangeCounts {
        try db.write { context in try context.reconcile(Person.self, with: incoming) }
    }

    public func insertEach(_ records: [Person]) throws {
        for person in records {
            try db.write { context in try context.create(person) }
        }
    }

    public func removeAll() throws {
        try db.write { context in try context.deleteAll(Person.self) }
    }
}
