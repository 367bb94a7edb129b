import Foundation
import PersistenceCore
import Testing

/// Closing databases, deleting and listing stores.
enum LifecycleChecks {
    static let all: [ConformanceCheck] = [
        ConformanceCheck("closes, refuses later use, deletes the files and reuses the name") { backend, directory in
            try await closeDeleteReuse(backend, directory)
        },
        ConformanceCheck("refuses to delete a store open in this process") { backend, directory in
            try await refusesOpenStores(backend, directory)
        },
        ConformanceCheck("waits for transactions under way before closing") { backend, directory in
            try await closeWaits(backend, directory)
        },
        ConformanceCheck("refuses to close inside its own transaction") { backend, directory in
            try await withDatabase(backend, directory, conformanceEntities) { db in try closeInside(db) }
        },
        ConformanceCheck("checks names and directories when deleting and listing") { backend, directory in
            try await withDatabase(backend, directory, conformanceEntities) { _ in try names(backend, directory) }
        },
    ]

    /// The files in `directory`.
    static func files(_ directory: URL) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
    }

    static func closeDeleteReuse(_ backend: any ConformanceBackend, _ directory: URL) async throws {
        try await withDatabase(backend, directory, conformanceEntities) { db in
            try db.create(QueryChecks.people())
            try close(db)
        }
        let names = try backend.storeNames(in: directory)
        #expect(names.count == 1, "\(names)")
        let name = try #require(names.first)
        #expect(try backend.deleteStore(named: name, in: directory))
        if backend.storesAreFiles {
            let left = try files(directory)
            #expect(left.isEmpty, "left behind: \(left)")
        }
        #expect(try backend.storeNames(in: directory).isEmpty)
        #expect(try !backend.deleteStore(named: name, in: directory), "a missing store was deleted")
        // The name is free again: a new, empty store.
        try await withDatabase(backend, directory, conformanceEntities) { db in
            #expect(try db.count(Person.self) == 0)
            try db.create(Person(id: 1, name: "New"))
            #expect(try db.count(Person.self) == 1)
        }
    }

    /// Closes `db` and checks that every later use throws `closed`.
    static func close(_ db: some Database) throws {
        try db.close()
        try db.close()
        expectError(.closed) { try db.count(Person.self) }
        expectError(.closed) { try db.create(Person(id: 99, name: "Late")) }
        expectError(.closed) { try db.write { _ in } }
        expectError(.closed) { try db.verify() }
        expectError(.closed) { try db.checkForExternalChanges() }
    }

    static func refusesOpenStores(_ backend: any ConformanceBackend, _ directory: URL) async throws {
        try await withDatabase(backend, directory, conformanceEntities) { first in
            try first.create(Person(id: 1, name: "Kept"))
            let name = try #require(try backend.storeNames(in: directory).first)
            let before = try files(directory)
            expectError(.storeInUse) { try backend.deleteStore(named: name, in: directory) }
            #expect(try files(directory) == before)
            // A second database on the same store holds it too.
            try await withDatabase(backend, directory, conformanceEntities) { second in
                try first.close()
                expectError(.storeInUse) { try backend.deleteStore(named: name, in: directory) }
                #expect(try second.recover(Person.self, id: 1)?.name == "Kept")
                try second.close()
            }
            #expect(try backend.deleteStore(named: name, in: directory))
        }
        // A database released without close() lets go of its store as well.
        try await withDatabase(backend, directory, conformanceEntities) { _ in }
        let name = try #require(try backend.storeNames(in: directory).first)
        #expect(try backend.deleteStore(named: name, in: directory))
    }

    static func closeWaits(_ backend: any ConformanceBackend, _ directory: URL) async throws {
        try await withDatabase(backend, directory, conformanceEntities) { db in
            try db.create(Person(id: 1, name: "Ada"))
            let reading = CancellationChecks.Signal()
            let writing = CancellationChecks.Signal()
            async let read = db.read { context -> String? in
                reading.raise()
                usleep(200_000)
                return try context.recover(Person.self, id: 1)?.name
            }
            async let write: Void = db.write { context in
                writing.raise()
                usleep(200_000)
                try context.create(Person(id: 2, name: "Bob"))
            }
            await reading.wait()
            await writing.wait()
            try db.close()
            // Both finished first, and both succeeded.
            #expect(try await read == "Ada")
            try await write
            expectError(.closed) { try db.count(Person.self) }
        }
        try await withDatabase(backend, directory, conformanceEntities) { db throws in
            #expect(try db.count(Person.self) == 2)
            // A read under way that starts a write while the database closes: the write either runs or is refused
            // with `closed` — never a deadlock between the read and the close.
            let reading = CancellationChecks.Signal()
            async let readThenWrite = db.read { _ -> PersistenceError.Code? in
                reading.raise()
                usleep(200_000)
                do {
                    try db.create(Person(id: 3, name: "Cy"))
                    return nil
                } catch let error as PersistenceError {
                    return error.code
                }
            }
            await reading.wait()
            try db.close()
            let code = try await readThenWrite
            #expect(code == nil || code == .closed, "\(String(describing: code))")
        }
    }

    static func closeInside(_ db: some Database) throws {
        expectError(.nestedTransaction) { try db.read { _ in try db.close() } }
        expectError(.nestedTransaction) { try db.write { _ in try db.close() } }
        // Still open.
        try db.create(Person(id: 1, name: "Ada"))
        #expect(try db.count(Person.self) == 1)
    }

    static func names(_ backend: any ConformanceBackend, _ directory: URL) throws {
        #expect(try backend.storeNames(in: directory).count == 1)
        guard backend.storesAreFiles else { return }
        for bad in ["", "../escape", "a/b", ".."] {
            expectError(.invalidName) { try backend.deleteStore(named: bad, in: directory) }
        }
        let missing = directory.appendingPathComponent("missing", isDirectory: true)
        expectError(.directoryNotFound) { try backend.deleteStore(named: "x", in: missing) }
        expectError(.directoryNotFound) { try backend.storeNames(in: missing) }
        // Other files and folders are not stores.
        try Data("not a store".utf8).write(to: directory.appendingPathComponent("notes.txt"))
        try FileManager.default.createDirectory(
            at: directory.appendingPathComponent("folder.sqlite"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(
            at: directory.appendingPathComponent("folder.lmdb"), withIntermediateDirectories: true)
        #expect(try backend.storeNames(in: directory).count == 1)
    }
}
