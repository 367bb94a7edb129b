import Foundation
import InMemoryTracing
import PersistenceCore
import PersistenceSQLite
import PersistenceTesting
import Testing
import Tracing

/// Spans (swift-distributed-tracing): one per transaction and one per opening, children of the caller's span, with a
/// migration's versions on the opening's — and none when no tracer is given.
struct TracingTests {
    @Test func transactionsAndOpeningsAreSpansOfTheCallersTrace() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tracing-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        do {
            let tracer = InMemoryTracer()
            var v1 = builder(directory)
            v1.tracer = tracer
            let db = try v1.create()
            try tracer.withSpan("request") { _ in
                try db.write { try $0.create(Note(id: 1, title: "Zq9-traced", body: nil)) }
            }
            // From async code too: the transaction runs on another thread, and its span still has the caller's parent.
            try await tracer.withSpan("async request") { _ in
                _ = try await db.read { try $0.count(Note.self) }
            }
            #expect(throws: (any Error).self) {
                try db.write { try $0.create(Note(id: 1, title: "Zq9-again", body: nil)) }
            }
            try db.close()

            var v2 = SQLiteBuilder(
                databaseName: "Notes", model: Model(version: 2, entities: [InstrumentationTests.NoteV2.self]))
            v2.directory = directory
            v2.tracer = tracer
            _ = try v2.create()

            let spans = tracer.finishedSpans
            let names = spans.map(\.operationName)
            #expect(
                names == [
                    "persistence.open", "persistence.write", "request", "persistence.read", "async request",
                    "persistence.write", "persistence.open",
                ])
            let request = try #require(spans.first { $0.operationName == "request" })
            let write = spans[1]
            #expect(write.parentSpanID == request.spanID && write.traceID == request.traceID)
            let asyncRequest = try #require(spans.first { $0.operationName == "async request" })
            #expect(spans[3].parentSpanID == asyncRequest.spanID, "the async read lost the caller's trace")
            #expect(write.attributes["db.system.name"]?.toSpanAttribute() == "sqlite")
            #expect(write.attributes["db.namespace"]?.toSpanAttribute() == "Notes")
            #expect(write.errors.isEmpty && spans[5].errors.count == 1, "the failed write's error is on its span")
            let migrated = spans[6]
            #expect(migrated.attributes["persistence.migration.from_version"]?.toSpanAttribute() == 1)
            #expect(migrated.attributes["persistence.migration.to_version"]?.toSpanAttribute() == 2)
            #expect(migrated.events.map(\.name) == ["migrated"])
            #expect(spans[0].attributes["persistence.migration.to_version"] == nil, "no migration at creation")
            // No stored value in any span.
            #expect(!"\(spans)".contains("Zq9"))
        }
    }
}
