import Foundation
@_spi(PersistenceBackend) import PersistenceCore
import Synchronization
import Testing

/// Features' part in writes: a model's will-commit hooks run once in every write transaction, inside it, seeing what
/// it changed (cascades included) and its options; a hook that throws rolls the whole write back. A write applying
/// remote changes keeps references to records not stored, and reports them — the same on every backend.
enum WriteHookChecks {
    typealias G = GraphFixtures

    static let all: [ConformanceCheck] = [
        hooked("runs a model's will-commit hook once per write, inside it, never in a read") { db, hook in
            try runsOnce(db, hook)
        },
        hooked("rolls the whole write back when a hook throws, running the block once") { db, hook in
            try rollsBack(db, hook)
        },
        hooked("applies remote changes: keeps and reports references to records not stored") { db, hook in
            try remote(db, hook)
        },
    ]

    /// A check whose body gets a database of the delete-rule entities and ``Audit``, its model carrying `hook`.
    static func hooked(
        _ name: String, _ body: @escaping @Sendable (any Database, AuditHook) async throws -> Void
    ) -> ConformanceCheck {
        ConformanceCheck(name) { backend, directory in
            let hook = AuditHook()
            let model = Model(version: 1, entities: G.ruleEntities + [Audit.self]).adding(hook)
            func open<B: ConformanceBackend>(_ backend: B) throws -> any Database {
                try backend.open(model: model, in: directory)
            }
            try await body(open(backend), hook)
        }
    }

    /// One record per write the hook saw: how many records it changed, and whether it applied remote changes.
    struct Audit: Entity, Equatable {
        var id: Int64
        var changed: Int64
        var remote: Bool
    }

    /// Writes an ``Audit`` record in each write it runs in; throws when a write changed the parent with id 13.
    final class AuditHook: WillCommitHook {
        let calls = Mutex(0)

        func willCommit(_ changes: ChangeRecorder, in context: some DatabaseContext) throws {
            let changed = changes.changedKeys().filter { $0.entity != Audit.entityName }
            if changed.contains(where: { $0.entity == G.Parent.entityName && $0.keys.contains(.integer(13)) }) {
                throw PersistenceError(.invalidArgument, "the audit refuses parent 13")
            }
            let call = calls.withLock {
                $0 += 1
                return $0
            }
            try context.create(
                Audit(
                    id: Int64(call), changed: Int64(changed.reduce(0) { $0 + $1.keys.count }),
                    remote: changes.appliesRemoteChanges))
        }
    }

    static func runsOnce(_ db: some Database, _ hook: AuditHook) throws {
        try db.write { context in
            try context.create(G.Parent(id: 1))
            try context.create([G.CascadeChild(id: 1, parentID: 1), G.CascadeChild(id: 2, parentID: 1)])
        }
        // A cascade's deletions are the write's changes too.
        try db.write { context in _ = try context.delete(G.Parent.self, id: 1) }
        // A write that changes nothing runs it as well; a read never does.
        try db.write { _ in }
        _ = try db.read { try $0.count(G.Parent.self, where: nil) }
        #expect(hook.calls.withLock { $0 } == 3)
        let audits = try db.recover(Audit.self, sortedBy: [.ascending("id")])
        #expect(
            audits == [
                Audit(id: 1, changed: 3, remote: false), Audit(id: 2, changed: 3, remote: false),
                Audit(id: 3, changed: 0, remote: false),
            ])
    }

    static func rollsBack(_ db: some Database, _ hook: AuditHook) throws {
        try db.create(G.Parent(id: 1))
        var runs = 0
        let refused = expectError(.invalidArgument) {
            try db.write { context in
                runs += 1
                try context.create(G.Parent(id: 2))
                try context.create(G.Parent(id: 13))
            }
        }
        #expect(refused?.message.contains("parent 13") == true)
        #expect(runs == 1)
        #expect(try db.read { try $0.count(G.Parent.self, where: nil) } == 1)
        #expect(try db.read { try $0.count(Audit.self, where: nil) } == 1)
        // The store goes on: the next write commits, with its audit.
        try db.create(G.Parent(id: 2))
        #expect(try db.read { try $0.count(Audit.self, where: nil) } == 2)
    }

    static func remote(_ db: some Database, _ hook: AuditHook) throws {
        // A local write refuses a reference to a record not stored.
        expectError(.referenceNotFound) { try db.create(G.CascadeChild(id: 1, parentID: 7)) }
        let dangling = try db.write(options: .appliesRemoteChanges) { context in
            try context.create(G.CascadeChild(id: 1, parentID: 7))
            try context.create(G.CascadeChild(id: 2, parentID: nil))
            return context.changeRecorder?.danglingReferences.map { ("\($0.source).\($0.foreignKey)", $0.key) } ?? []
        }
        #expect(dangling.map(\.0) == ["\(G.CascadeChild.entityName).parentID"])
        #expect(dangling.map(\.1) == [.integer(7)])
        #expect(try db.recover(G.CascadeChild.self, id: 1)?.parentID == 7)
        // The hook heard it was remote; a local write after it is local again, and checks references again.
        let audits = try db.recover(Audit.self, sortedBy: [.ascending("id")])
        #expect(audits.last == Audit(id: Int64(audits.count), changed: 2, remote: true))
        expectError(.referenceNotFound) { try db.create(G.CascadeChild(id: 3, parentID: 8)) }
        try db.write(options: []) { try $0.create(G.Parent(id: 7)) }
        #expect(try db.recover(Audit.self, sortedBy: [.ascending("id")]).last?.remote == false)
        // Once its parent arrives, the reference is whole: verify reports nothing.
        #expect(try db.verify().isSound)
    }
}
