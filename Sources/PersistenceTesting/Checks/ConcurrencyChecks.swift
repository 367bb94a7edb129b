import Foundation
import PersistenceCore
import Testing

/// The async API from many tasks at once.
enum ConcurrencyChecks {
    static let all: [ConformanceCheck] = [
        .database("serves the async API from many tasks at once") { try await manyTasks($0) },
        .database("rolls back a throwing async write") { try await asyncRollback($0) },
    ]

    static func manyTasks<D: Database>(_ db: D) async throws {
        let writers = 32
        let perWriter = 25
        try await withThrowingTaskGroup(of: Int.self) { group in
            for writer in 0..<writers {
                group.addTask {
                    try await db.write { context in
                        for index in 0..<perWriter {
                            let id = Int64(writer * perWriter + index)
                            try context.create(Person(id: id, name: "W\(writer)", score: Double(index)))
                        }
                        return perWriter
                    }
                }
                group.addTask {
                    // Readers run alongside and always see whole writes: a multiple of perWriter.
                    let seen = try await db.read { try $0.count(Person.self) }
                    #expect(seen % perWriter == 0, "a reader saw part of a write")
                    return 0
                }
            }
            var written = 0
            for try await count in group { written += count }
            #expect(written == writers * perWriter)
        }
        #expect(try await db.read { try $0.count(Person.self) } == writers * perWriter)
        let byWriter = try await db.read { try $0.recover(Person.self, key: "name", value: "W7") }
        #expect(byWriter.count == perWriter)
    }

    static func asyncRollback<D: Database>(_ db: D) async throws {
        do {
            try await db.write { context in
                try context.create(Person(id: 1, name: "Gone"))
                throw TransactionChecks.Abort()
            }
            Issue.record("the write should have thrown")
        } catch is TransactionChecks.Abort {}
        #expect(try await db.read { try $0.count(Person.self) } == 0)
    }
}
