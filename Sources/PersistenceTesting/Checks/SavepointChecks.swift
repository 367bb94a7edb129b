import Foundation
import PersistenceCore
import Testing

/// Savepoints (nested blocks that fail on their own) and discardable edits.
enum SavepointChecks {
    struct Abort: Error {}

    static let all: [ConformanceCheck] = [
        .database("rolls back a failing savepoint alone, at every depth") { try depths($0) },
        .database("rolls back a savepoint's index entries and engine errors") { try indexesAndErrors($0) },
        .database("rolls back kept savepoints with their write") { try keptThenRolledBack($0) },
        .database("tells observers only what savepoints kept") { try await observedSavepoints($0) },
        .database("commits or discards an edit without throwing") { try edits($0) },
        .database("discards a savepoint edit and goes on") { try savepointEdits($0) },
        ConformanceCheck("leaves the store byte-identical after a discarded edit") { backend, directory in
            try await withDatabase(backend, directory, conformanceEntities) { db in
                try discardIsByteIdentical(db, backend.storesAreFiles ? directory : nil)
            }
        },
    ]

    /// Records an issue unless `body` throws ``Abort``.
    ///
    /// Not `#expect(throws:)`: with Swift 6.3, a savepoint called inside that macro's closure in generic code is
    /// compiled so that the *next* savepoint call runs the macro's closure again (seen in debug builds; a plain
    /// function taking the closure, as here, is compiled correctly).
    static func expectAbort(sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void) {
        do {
            try body()
            Issue.record("expected Abort, nothing was thrown", sourceLocation: sourceLocation)
        } catch is Abort {
        } catch {
            Issue.record("expected Abort, got \(error)", sourceLocation: sourceLocation)
        }
    }

    static func ids(_ context: some DatabaseContext) throws -> [Int64] {
        try context.recover(Person.self).map(\.id)
    }

    static func depths(_ db: some Database) throws {
        try db.write { context in
            try context.create(Person(id: 1, name: "Outer"))
            // The outermost of three fails after the inner two succeeded: all three roll back.
            expectAbort {
                try context.savepoint {
                    try context.create(Person(id: 2, name: "L1"))
                    try context.savepoint {
                        try context.create(Person(id: 3, name: "L2"))
                        try context.savepoint { try context.create(Person(id: 4, name: "L3")) }
                    }
                    throw Abort()
                }
            }
            #expect(try ids(context) == [1])
            // The middle one fails: its inner one goes with it, the outer one keeps its own changes.
            try context.savepoint {
                try context.create(Person(id: 5, name: "L1"))
                expectAbort {
                    try context.savepoint {
                        try context.create(Person(id: 6, name: "L2"))
                        try context.savepoint { try context.create(Person(id: 7, name: "L3")) }
                        throw Abort()
                    }
                }
                try context.create(Person(id: 8, name: "L1 after"))
            }
            #expect(try ids(context) == [1, 5, 8])
            // The innermost fails: an update and a delete in it are undone too.
            try context.savepoint {
                try context.create(Person(id: 9, name: "L1"))
                try context.savepoint {
                    try context.create(Person(id: 10, name: "L2"))
                    expectAbort {
                        try context.savepoint {
                            try context.update(Person(id: 1, name: "Changed"))
                            try context.delete(Person.self, id: 5)
                            try context.create(Person(id: 11, name: "L3"))
                            throw Abort()
                        }
                    }
                }
            }
            #expect(try ids(context) == [1, 5, 8, 9, 10])
            #expect(try context.recover(Person.self, id: 1)?.name == "Outer")
            // A savepoint's result comes back.
            let counted = try context.savepoint { try context.count(Person.self) }
            #expect(counted == 5)
        }
        #expect(try db.recover(Person.self).map(\.id) == [1, 5, 8, 9, 10])
        expectError(.readOnly) { try db.read { context in try context.savepoint { 0 } } }
    }

    static func indexesAndErrors(_ db: some Database) throws {
        try db.write { context in
            try context.create(Person(id: 1, name: "Ada", email: "ada@example.com"))
            expectAbort {
                try context.savepoint {
                    try context.create(Person(id: 2, name: "Bob", email: "bob@example.com"))
                    try context.update(Person(id: 1, name: "Ada", email: "ada@new.example"))
                    throw Abort()
                }
            }
            // The rolled-back index entries are gone and the kept ones are back.
            #expect(try context.recover(Person.self, where: Field("email") == "bob@example.com").isEmpty)
            #expect(try context.recover(Person.self, where: Field("email") == "ada@example.com").map(\.id) == [1])
            #expect(try context.recover(Person.self, where: Field("name") == "Bob").isEmpty)
            try context.create(Person(id: 3, name: "Cy", email: "bob@example.com"))
            // An engine error in a savepoint rolls it back; the write goes on.
            expectError(.duplicateKey) {
                try context.savepoint {
                    try context.create(Person(id: 4, name: "Dee"))
                    try context.create(Person(id: 1, name: "Again"))
                }
            }
            expectError(.uniqueViolation) {
                try context.savepoint { try context.create(Person(id: 5, name: "Eve", email: "ada@example.com")) }
            }
            try context.create(Person(id: 6, name: "Fay"))
        }
        #expect(try db.recover(Person.self).map(\.id) == [1, 3, 6])
        #expect(try db.recover(Person.self, where: Field("name") == "Dee").isEmpty)
    }

    static func keptThenRolledBack(_ db: some Database) throws {
        expectAbort {
            try db.write { context in
                try context.savepoint {
                    try context.create(Person(id: 1, name: "Kept"))
                    try context.savepoint { try context.upsert(Tag(id: "kept", count: 1)) }
                }
                throw Abort()
            }
        }
        #expect(try db.count(Person.self) == 0)
        #expect(try db.count(Tag.self) == 0)
    }

    static func observedSavepoints(_ db: some Database) async throws {
        let changes = db.changes(of: Person.self)
        var iterator = changes.makeAsyncIterator()
        try await db.write { context in
            try context.create(Person(id: 1, name: "Kept"))
            try? context.savepoint {
                try context.create(Person(id: 2, name: "Dropped"))
                try context.update(Person(id: 1, name: "Dropped too"))
                throw Abort()
            }
            try context.savepoint { try context.create(Person(id: 3, name: "Kept too")) }
            // A savepoint that changed an alias and rolled back leaves no alias change either.
            try? context.savepoint {
                try context.setAlias("rolled back", to: Person(id: 1, name: "Kept"))
                throw Abort()
            }
        }
        let committed = await iterator.next()
        #expect(committed?.inserted.sorted() == [1, 3])
        #expect(committed?.updated == [])
        #expect(try await db.read { context in try context.alias("rolled back", as: Person.self) } == nil)
    }

    static func edits(_ db: some Database) throws {
        try db.create(Person(id: 1, name: "Ada"))
        let discarded = try db.edit { context in
            try context.update(Person(id: 1, name: "Draft"))
            try context.create(Person(id: 2, name: "New"))
            // The edit reads its own changes back.
            #expect(try context.recover(Person.self, id: 1)?.name == "Draft")
            #expect(try context.count(Person.self) == 2)
            return .discard
        }
        #expect(discarded == .discard)
        #expect(try db.recover(Person.self) == [Person(id: 1, name: "Ada")])
        let committed = try db.edit { context in
            try context.update(Person(id: 1, name: "Saved"))
            return .commit
        }
        #expect(committed == .commit)
        #expect(try db.recover(Person.self, id: 1)?.name == "Saved")
        // A thrown error still rolls back and is rethrown.
        expectAbort {
            try db.edit { context in
                try context.delete(Person.self, id: 1)
                throw Abort()
            }
        }
        #expect(try db.count(Person.self) == 1)
    }

    static func savepointEdits(_ db: some Database) throws {
        try db.write { context in
            try context.create(Person(id: 1, name: "Ada"))
            let decision = try context.edit {
                try context.create(Person(id: 2, name: "Draft"))
                #expect(try context.count(Person.self) == 2)
                return .discard
            }
            #expect(decision == .discard)
            #expect(
                try context.edit {
                    try context.create(Person(id: 3, name: "Kept"))
                    return .commit
                } == .commit)
        }
        #expect(try db.recover(Person.self).map(\.id) == [1, 3])
    }

    /// The bytes of every file in `directory` but the lock and shared-memory files, which readers write to.
    static func storeBytes(_ directory: URL) throws -> [String: Data] {
        var files: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.path)
        where !name.hasSuffix("-shm") && !name.hasSuffix("-lock") {
            files[name] = try Data(contentsOf: directory.appendingPathComponent(name))
        }
        return files
    }

    /// - Parameter directory: Where the store's files are, to compare them byte by byte; `nil` for a server's store
    ///   (then only what reads see is compared).
    static func discardIsByteIdentical(_ db: some Database, _ directory: URL?) throws {
        try db.write { context in
            try context.create(QueryChecks.people())
            try context.upsert(Tag(id: "t", count: 1))
            try context.setAlias("first", to: Person.self, id: 1)
        }
        let before = try directory.map(storeBytes)
        #expect(before.map { !$0.isEmpty } ?? true)
        let decision = try db.edit { context in
            try context.create(Person(id: 100, name: "Draft", email: "draft@example.com"))
            try context.update(Person(id: 1, name: "Changed"))
            try context.delete(Person.self, id: 2)
            try context.deleteAll(Tag.self)
            try context.setAlias("first", to: Person.self, id: 3)
            try context.create((0..<500).map { Person(id: 1_000 + Int64($0), name: "Bulk \($0)") })
            return .discard
        }
        #expect(decision == .discard)
        #expect(try directory.map(storeBytes) == before, "a discarded edit wrote to the store")
        #expect(try db.recover(Person.self) == QueryChecks.people())
        #expect(try db.read { context in try context.alias("first", as: Person.self)?.id } == 1)
        // The next write works and continues as if the edit never ran.
        try db.create(Person(id: 100, name: "Real"))
        #expect(try db.count(Person.self) == 6)
    }
}
