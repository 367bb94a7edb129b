import Foundation
import PersistenceCore
import PersistenceTesting
import Synchronization
import Testing

@testable import PersistencePostgres

/// An entity whose own decoding refuses one value, and counts what it decoded.
struct Picky: Entity, Equatable {
    var id: Int64
    var name: String

    static let decoded = Atomic<Int>(0)
    struct Refused: Error {}

    enum CodingKeys: String, CodingKey { case id, name }

    init(id: Int64, name: String) {
        self.id = id
        self.name = name
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(Int64.self, forKey: .id)
        name = try container.decode(String.self, forKey: .name)
        if name == "refused" { throw Refused() }
        Self.decoded.add(1, ordering: .relaxed)
    }
}

/// `recover(query:)` decodes rows on the calling thread while the connection receives the next ones: what happens
/// when a row doesn't decode halfway, or the connection ends halfway.
@Suite(.serialized) struct StreamingTests {
    @Test func aRowThatDoesntDecodeHalfwayFailsThatReadOnly() async throws {
        try await offPool {
            let db = try freshBuilder([Picky.self]).create()
            try db.create((1...6_000).map { Picky(id: $0, name: $0 == 3_000 ? "refused" : "n\($0)") })
            try db.read { context throws in
                Picky.decoded.store(0, ordering: .relaxed)
                #expect(throws: Picky.Refused.self) { try context.recover(Picky.self, query: Query()) }
                #expect(Picky.decoded.load(ordering: .relaxed) == 2_999, "decoding stopped at the row that failed")
                // The transaction and its connection go on: the next statements answer in order.
                #expect(try context.count(Picky.self) == 6_000)
                #expect(try context.recover(Picky.self, where: Field("id") <= 3).map(\.name) == ["n1", "n2", "n3"])
            }
            #expect(try db.recover(Picky.self, where: Field("id") > 3_000).count == 3_000)
        }
    }

    @Test func aConnectionEndedDuringAReadIsConnectionLostAndTheNextReadWorks() async throws {
        try await offPool {
            let builder = try freshBuilder([Item.self])
            let db = try builder.create()
            let killer = try builder.create()
            try db.create((1...10_000).map { Item(id: $0, label: String(repeating: "x", count: 100)) })
            let error = expectError(.connectionLost) {
                try db.read { context in
                    guard case .integer(let pid)? = try context.scalar("SELECT pg_backend_pid()") else { return }
                    let ended = Thread {
                        _ = try? killer.read { try $0.scalar("SELECT pg_terminate_backend($1::int)", [.integer(pid)]) }
                    }
                    ended.start()
                    // Reads until the connection is gone, however fast the server answers.
                    for _ in 0..<1_000 { _ = try context.recover(Item.self, query: Query()) }
                }
            }
            #expect(error?.isRetryable == true)
            #expect(try db.count(Item.self) == 10_000)
        }
    }
}
