import Foundation
import PersistenceCore
import PersistenceTesting
import Synchronization
import Testing

@testable import PersistencePostgres

/// Several app servers on one store: each hears the others' commits through `LISTEN`/`NOTIFY`, with no polling and
/// no write of its own. An observer that never hears waits forever: the time limit fails the test then (5 minutes:
/// in the full PostgreSQL phase these tests wait their turn behind the other suites).
@Suite(.timeLimit(.minutes(5)))
struct CommitNoticeTests {
    @Test func anotherServersCommitReachesObserversWithoutPolling() async throws {
        let builder = try freshBuilder([Item.self, Counter.self])
        let serverA = try builder.create()
        let serverB = try builder.create()
        defer {
            try? serverA.close()
            try? serverB.close()
        }
        var labels = serverB.observe(Item.self, sortedBy: [.ascending("id")]).makeAsyncIterator()
        // The observation started B's listener in the background; this waits until it listens.
        #expect(try serverB.checkForExternalChanges() == false)
        #expect(try await labels.next()?.map(\.label) == [])
        let counters = serverB.changes(of: Counter.self)
        let counterTask = Task {
            var heard = 0
            for await _ in counters {
                heard += 1
                break
            }
            return heard
        }

        try await serverA.write { try $0.create(Item(id: 1, label: "from A")) }
        #expect(try await labels.next()?.map(\.label) == ["from A"], "B never heard A's commit")
        try await serverA.write { try $0.update(Item(id: 1, label: "changed by A")) }
        #expect(try await labels.next()?.map(\.label) == ["changed by A"])

        // A commit to another entity names its table: B's observer of items isn't woken, its counter observer is.
        try await serverA.write { try $0.create(Counter(id: 1, value: 1)) }
        #expect(await counterTask.value == 1)
        // A write that rolls back notifies nobody; B's next value is A's next commit.
        _ = try? await serverA.write { context in
            try context.create(Item(id: 2, label: "rolled back"))
            throw CancellationError()
        }
        try await serverA.write { try $0.create(Item(id: 3, label: "third")) }
        #expect(try await labels.next()?.map(\.id) == [1, 3])
    }

    @Test func aDatabaseThatNeverObservesDoesNotListen() async throws {
        try await offPool {
            let builder = try freshBuilder([Item.self])
            let server = try builder.create()
            defer { try? server.close() }
            try server.create(Item(id: 1, label: "request"))
            #expect(!server.listener.isListening, "a database that only handles requests listens")
            let observation = server.observe(Item.self)
            #expect(try server.checkForExternalChanges() == false)
            #expect(server.listener.isListening)
            _ = observation
        }
    }

    @Test func aDatabaseDoesNotHearItsOwnCommitsAsSomeoneElses() async throws {
        let builder = try freshBuilder([Item.self])
        let db = try builder.create()
        let other = try builder.create()
        defer {
            try? db.close()
            try? other.close()
        }
        #expect(try db.checkForExternalChanges() == false)
        let changes = db.changes(of: Item.self)
        try await db.write { try $0.create(Item(id: 1, label: "mine")) }
        try await db.write { try $0.create(Item(id: 2, label: "mine too")) }
        // Every notice of its own commits has arrived once this returns: none was taken for another server's.
        #expect(try db.checkForExternalChanges() == false)
        try await other.write { try $0.create(Item(id: 3, label: "theirs")) }
        #expect(try db.checkForExternalChanges() == true)
        #expect(try db.checkForExternalChanges() == false, "nothing new since")

        // The change sets: two complete ones (its own, with keys), then an incomplete one (the other's commit, by
        // table only).
        var heard: [EntityChanges<Item>] = []
        for await change in changes {
            heard.append(change)
            if heard.count == 3 { break }
        }
        #expect(heard.map(\.inserted) == [[1], [2], []])
        #expect(heard.map(\.isComplete) == [true, true, false])
    }

    @Test func aStoreWhoseTriggersAreMissingGetsThemBackWhenItOpens() async throws {
        try await offPool {
            let builder = try freshBuilder([Item.self])
            let first = try builder.create()
            let qualified = "\"\(builder.schema)\".\"Item\""
            try first.write { _ = try $0.execute("DROP TRIGGER persistence_notify ON \(qualified)") }
            try first.close()
            // Opening again finds the trigger gone and makes it again.
            let listening = try builder.create()
            let writing = try builder.create()
            defer {
                try? listening.close()
                try? writing.close()
            }
            // Listening from here on (a database that never observed doesn't listen).
            #expect(try listening.checkForExternalChanges() == false)
            let triggers = try listening.read {
                try $0.scalar(
                    "SELECT count(*) FROM pg_trigger WHERE tgrelid = $1::regclass AND tgname = 'persistence_notify'",
                    [.text(qualified)])
            }
            #expect(triggers == .integer(1))
            try writing.create(Item(id: 1, label: "noticed"))
            #expect(try listening.checkForExternalChanges() == true)
        }
    }

    @Test func aStoreWhoseTriggersNotifiedAlwaysGetsTheLeasedOnesWhenItOpens() async throws {
        try await offPool {
            let builder = try freshBuilder([Item.self])
            let schema = "\"\(builder.schema)\""
            // As the version before leases left it: a function that always notifies, and no lease sequence.
            try builder.create().write { context in
                _ = try context.execute("DROP SEQUENCE \(schema).persistence_listening")
                _ = try context.execute(
                    "CREATE OR REPLACE FUNCTION \(schema).persistence_notify() RETURNS trigger LANGUAGE plpgsql AS "
                        + "$f$ BEGIN PERFORM pg_notify(TG_ARGV[0], '/' || TG_TABLE_NAME); RETURN NULL; END $f$")
            }
            let db = try builder.create()
            defer { try? db.close() }
            let source = try db.read {
                try $0.scalar(
                    "SELECT p.prosrc FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace "
                        + "WHERE n.nspname = $1 AND p.proname = 'persistence_notify'", [.text(builder.schema)])
            }
            #expect(source == .text(CommitNotices.functionBody(schema: builder.schema)))
            // It works: a listener hears another database's commit.
            let other = try builder.create()
            defer { try? other.close() }
            #expect(try db.checkForExternalChanges() == false)
            try other.create(Item(id: 1, label: "after the upgrade"))
            #expect(try db.checkForExternalChanges() == true)
        }
    }

    @Test func aRoleThatMayOnlyReadTheStoreObservesOtherServersCommits() async throws {
        try await offPool {
            let builder = try freshBuilder([Item.self])
            let writer = try builder.create()
            defer { try? writer.close() }
            let role = "reader_\(builder.schema)"
            let schema = "\"\(builder.schema)\""
            try writer.write { context in
                _ = try context.execute("CREATE ROLE \"\(role)\" LOGIN")
                _ = try context.execute("GRANT USAGE ON SCHEMA \(schema) TO \"\(role)\"")
                _ = try context.execute("GRANT SELECT ON ALL TABLES IN SCHEMA \(schema) TO \"\(role)\"")
            }
            defer {
                _ = try? writer.write { context in
                    _ = try context.execute("DROP OWNED BY \"\(role)\"")
                    _ = try context.execute("DROP ROLE \"\(role)\"")
                }
            }
            var readOnly = builder
            readOnly.username = role
            let observer = try readOnly.create()
            defer { try? observer.close() }
            // Listening renews the lease through the store's function, with its owner's rights.
            #expect(try observer.checkForExternalChanges() == false)
            try writer.create(Item(id: 1, label: "heard by a reader"))
            #expect(try observer.checkForExternalChanges() == true)
            #expect(try observer.count(Item.self) == 1)
        }
    }

    @Test func rawSQLFromOutsideTheLibraryIsHeardToo() async throws {
        try await offPool {
            let builder = try freshBuilder([Item.self])
            let db = try builder.create()
            let outsider = try builder.create()
            defer {
                try? db.close()
                try? outsider.close()
            }
            #expect(try db.checkForExternalChanges() == false)
            #expect(try outsider.checkForExternalChanges() == false)
            // A session that set no origin (psql, a script): its commits are someone else's for everyone.
            try outsider.write { context in
                _ = try context.execute("SET LOCAL persistence.origin = ''")
                _ = try context.execute(
                    "INSERT INTO \"\(builder.schema)\".\"Item\" (id, label) VALUES (7, convert_to('psql', 'UTF8'))")
            }
            #expect(try db.checkForExternalChanges() == true)
            #expect(try outsider.checkForExternalChanges() == true, "its own origin was unset for that commit")
        }
    }
    @Test func writersNotifyOnlyWhileSomeoneListens() async throws {
        try await offPool {
            let builder = try freshBuilder([Item.self])
            let writer = try builder.create()
            defer { try? writer.close() }
            // A session listening on the store's channel by hand: it hears what writers send, and sets no lease.
            let heard = Mutex<[String]>([])
            let ear = try ServerConnection.open(builder)
            defer { ear.close() }
            try ear.listen(CommitNotices.channel(schema: builder.schema)) { payload in
                heard.withLock { $0.append(payload) }
            }
            try writer.create(Item(id: 1, label: "nobody listens"))
            try ear.execute("SELECT 1")  // every notification sent before this has arrived
            #expect(heard.withLock { $0 }.isEmpty, "a commit notified while no database listened")

            let observer = try builder.create()
            defer { try? observer.close() }
            #expect(try observer.checkForExternalChanges() == false)  // listens, and holds the lease
            try writer.create(Item(id: 2, label: "someone listens"))
            try ear.execute("SELECT 1")
            #expect(heard.withLock { $0 }.count == 1 && heard.withLock { $0 }.first?.hasSuffix("/Item") == true)
            let lease = try ear.rows(
                "SELECT last_value - extract(epoch FROM now())::bigint FROM \"\(builder.schema)\".persistence_listening"
            )
            guard case .integer(let remaining)? = lease.first?.first else {
                Issue.record("no lease: \(lease)")
                return
            }
            #expect((1...Int64(CommitNotices.leaseSeconds)).contains(remaining), "\(remaining) s left")
        }
    }

    @Test func aWriteUnderWayBeforeAnyoneListenedReachesObserversWhenItCommits() async throws {
        let builder = try freshBuilder([Item.self])
        let writer = try builder.create()
        let observer = try builder.create()
        defer {
            try? writer.close()
            try? observer.close()
        }
        let inside = Atomic<Bool>(false)
        let commit = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            _ = try? writer.write { context in
                try context.create(Item(id: 1, label: "written before anyone listened"))
                inside.store(true, ordering: .releasing)
                commit.wait()
            }
        }
        while !inside.load(ordering: .acquiring) { try await Task.sleep(for: .milliseconds(5)) }
        // The write ran its trigger while no lease was held: it won't notify. The observation starts the listener.
        let firstRead = Atomic<Bool>(false)
        let seen = Task { () -> [Int] in
            var counts: [Int] = []
            for try await items in observer.observe(Item.self) {
                counts.append(items.count)
                firstRead.store(true, ordering: .releasing)
                if counts.count == 2 { break }
            }
            return counts
        }
        while !firstRead.load(ordering: .acquiring) { try await Task.sleep(for: .milliseconds(5)) }
        commit.signal()
        // The listener waits for that write to end, then tells observers to read again.
        let deadline = Task {
            try await Task.sleep(for: .seconds(30))
            seen.cancel()
        }
        defer { deadline.cancel() }
        #expect(try await seen.value == [0, 1], "the observer never heard of the write")
    }
}
