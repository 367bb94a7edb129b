import Foundation
import PersistenceCore
import Synchronization
import Testing

/// A write runs its block exactly once and stores everything or nothing, even when storage runs out.
enum StorageChecks {
    static let all: [ConformanceCheck] = [
        .database("stores a single-pass sequence whole, running the block once") { try singlePass($0) },
        .database("stores nothing of a sequence that fails part-way") { try failingSequence($0) },
        ConformanceCheck("a full disk is storageFull and keeps every committed write") { backend, _ in
            // Needs a file system of its own (Linux, root): CI has one; elsewhere there is nothing to fill. A
            // server's disk is the server's: its backend tests a full one its own way.
            guard SmallFileSystem.isAvailable, backend.storesAreFiles else { return }
            try await fullDisk(backend)
        },
    ]

    /// Numbered people; the one numbered `invalidAt` has a NaN score, which can't be stored.
    static func people(_ count: Int, invalidAt: Int? = nil) -> SinglePassSequence<Person> {
        SinglePassSequence(count: count) { number in
            Person(
                id: Int64(number), name: "p\(number % 97)", email: "\(number)@x",
                score: number == invalidAt ? .nan : Double(number))
        }
    }

    static func singlePass(_ db: some Database) throws {
        let sequence = people(60_000)
        let runs = Atomic(0)
        try db.write { context in
            runs.add(1, ordering: .relaxed)
            try context.create(sequence)
        }
        #expect(runs.load(ordering: .relaxed) == 1)
        #expect(sequence.iterations == 1)
        #expect(sequence.handedOut == 60_000)
        #expect(try db.count(Person.self) == 60_000, "every element of the sequence")
        #expect(try db.recover(Person.self, id: 60_000)?.email == "60000@x")
        let again = people(1_000)
        expectError(.duplicateKey) { try db.create(again) }
        #expect(again.iterations == 1)
        #expect(try db.count(Person.self) == 60_000, "a create of existing ids fails whole")
    }

    static func failingSequence(_ db: some Database) throws {
        try db.create(Person(id: 0, name: "kept"))
        let sequence = people(10_000, invalidAt: 5_000)
        expectError(.invalidValue) { try db.create(sequence) }
        #expect(sequence.iterations == 1)
        #expect(try db.count(Person.self) == 1, "none of the 4,999 elements before the invalid one")
    }

    struct Page: Entity, Equatable {
        var id: Int64
        var body: String

        static func numbered(_ id: Int64) -> Page {
            Page(id: id, body: "\(id):" + String(repeating: "p", count: 8_000))
        }
    }

    static func fullDisk(_ backend: any ConformanceBackend) async throws {
        let directory = try SmallFileSystem.mount(bytes: 4 << 20)
        defer { SmallFileSystem.unmount(directory) }
        var committed: Int64 = 0
        var failure: PersistenceError?
        do {
            try await withDatabase(backend, directory, [Page.self]) { db in
                while committed < 10_000 {
                    let first = committed + 1
                    try db.write { context in
                        for id in first...(first + 19) { try context.create(Page.numbered(id)) }
                    }
                    committed += 20
                }
            }
        } catch let error as PersistenceError {
            failure = error
        }
        #expect(failure?.code == .storageFull, "\(failure.map(String.init(describing:)) ?? "no error")")
        #expect(committed > 0)
        try await withDatabase(backend, directory, [Page.self]) { (db: any Database) async throws in
            #expect(try db.count(Page.self) == Int(committed), "every committed write, nothing of the failed one")
            for id in [1, committed / 2, committed] where id > 0 {
                #expect(try db.recover(Page.self, id: id) == Page.numbered(id))
            }
        }
    }
}
