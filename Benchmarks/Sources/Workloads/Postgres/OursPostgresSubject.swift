import PersistenceCore
import PersistencePostgres

/// Persistence's PostgreSQL backend, used as the README shows: a builder from the server's URL (schema
/// ``PostgresServer/oursSchema``, the default pool), work in `read` / `write` blocks.
public final class OursPostgresSubject: PostgresSubject {
    public typealias Record = Person
    public static let implementation = "ours"

    private let db: PostgresDatabase

    public init(server: PostgresServer, fresh: Bool) throws {
        let builder = try server.builder()
        if fresh { try builder.deleteStore() }
        db = try builder.create()
        // Opens a reader now: raw connects before the timing too, and a first read would otherwise time it.
        try db.read { _ in }
    }

    deinit {
        try? db.close()
    }

    public func insert(_ records: [Person]) throws {
        try db.write { context in try context.create(records) }
    }

    public func fetchAll() throws -> [Person] {
        try db.read { context in try context.recover(Person.self, query: Query()) }
    }

    public func lookup(ids: [Int64]) throws -> [Person] { try recoverEach(ids, in: db) }

    public func lookup(names: [String]) throws -> [Person] {
        try db.read { context in
            var people: [Person] = []
            for name in names { people += try context.recover(Person.self, where: Field("name") == name) }
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
}
