import Foundation
import InMemoryTracing
import PersistenceCore
import PersistencePostgres
import Testing
import Tracing

/// A server's traces show its database work: each transaction a client span, a child of the request's span although it
/// ran on one of the database's threads.
struct PostgresTracingTests {
    @Test func concurrentRequestsEachGetTheirTransactionsAsChildSpans() async throws {
        let tracer = InMemoryTracer()
        var builder = try freshBuilder([Item.self])
        builder.tracer = tracer
        let db = try builder.create()
        defer { try? db.close() }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for id in 1...4 {
                group.addTask {
                    try await tracer.withSpan("request \(id)") { _ in
                        try await db.write { try $0.create(Item(id: Int64(id), label: "traced")) }
                    }
                }
            }
            try await group.waitForAll()
        }
        let spans = tracer.finishedSpans
        for id in 1...4 {
            let request = try #require(spans.first { $0.operationName == "request \(id)" })
            let writes = spans.filter { $0.operationName == "persistence.write" && $0.parentSpanID == request.spanID }
            #expect(writes.count == 1, "request \(id)")
            #expect(writes.first?.kind == .client)
            #expect(writes.first?.attributes["db.system.name"]?.toSpanAttribute() == "postgresql")
        }
        #expect(spans.filter { $0.operationName == "persistence.open" }.count == 1)
    }
}
