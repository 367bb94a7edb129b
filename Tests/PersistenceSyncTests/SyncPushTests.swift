import Foundation
import PersistenceCore
import PersistencePostgres
import PersistenceSync
import Synchronization
import Testing

@testable import PersistenceSyncServer

/// Pushes at server scale: batches that run no delete rule run at once, locking the records they read and refer to;
/// whatever runs at the same time — another device's push of the same records, the server's own writes, another sync
/// server on the store — no change is lost, each is settled by its policy once, and no reference is left dangling.
@Suite struct SyncPushTests {
    /// `count` memos created on `device` and synced, then the ids.
    private func memos(_ count: Int, on device: any TestSyncClient) async throws -> [UUID] {
        let ids = (0..<count).map { _ in UUID() }
        try await device.write { context in
            for id in ids { try context.create(Memo(id: id, text: "first", tags: "")) }
        }
        _ = try await device.sync()
        return ids
    }

    private func edit(_ ids: [UUID], to text: String, on device: any TestSyncClient) async throws {
        try await device.write { context in
            for id in ids { try context.update(Memo(id: id, text: text, tags: "")) }
        }
    }

    /// Records with relationships too: a batch that deletes nothing others refer to runs at once with the others.
    @Test func aBatchThatRunsNoDeleteRuleDoesntWaitForThePushTurn() async throws {
        let devices = try await TwoDevices.make(laptop: .sqlite)
        defer { devices.remove() }
        let (store, server, phone) = (devices.store, devices.server, devices.phone)
        try await phone.write { context in
            try context.create(Memo(id: UUID(), text: "at once", tags: ""))
            try context.create(Project(id: 1, name: "at once"))
            try context.create(Chore(id: "a", projectID: 1, title: "at once", done: false, revision: 1))
        }
        final class Turn: Sendable {
            let began = Mutex(false)
            let release = Mutex(false)
        }
        let turn = Turn()
        // A push of records with relationships holds its turn until this test ends it.
        let holder = Task {
            try await store.write(takingTurnsOn: server.pushLockKey) { _ in
                turn.began.withLock { $0 = true }
                let deadline = Date().addingTimeInterval(60)
                while !turn.release.withLock({ $0 }), Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
            }
        }
        while !turn.began.withLock({ $0 }) { try await Task.sleep(for: .milliseconds(5)) }
        let pushed = try await phone.sync().pushed
        let released = turn.release.withLock { released in
            defer { released = true }
            return released
        }
        try await holder.value
        #expect(pushed == 3)
        #expect(!released, "the push waited for the turn")
        let contents = try await Contents.of(store)
        #expect(contents.memos.map(\.text) == ["at once"] && contents.chores.map(\.projectID) == [1])
    }

    /// A phone that synced project 1 and then created a chore of it, not pushed yet.
    private func projectWithAPendingChore() async throws -> TwoDevices {
        let devices = try await TwoDevices.make(laptop: .sqlite)
        try await devices.phone.write { try $0.create(Project(id: 1, name: "going")) }
        _ = try await devices.phone.sync()
        try await devices.phone.write {
            try $0.create(Chore(id: "late", projectID: 1, title: "late", done: false, revision: 1))
        }
        return devices
    }

    /// The server holds neither project nor chore — no chore of a deleted project — and the phone, synced, holds the
    /// same.
    private func expectNeitherProjectNorChore(_ devices: TwoDevices) async throws {
        let contents = try await Contents.of(devices.store)
        #expect(contents.projects.isEmpty && contents.chores.isEmpty, "\(contents.chores)")
        _ = try await devices.phone.sync()
        #expect(try await devices.phone.contents() == contents)
    }

    /// The server deletes a project (its chores cascade) and hasn't committed when a device pushes a new chore of it:
    /// the push's hold on the project waits for the deletion, then finds no project — the chore is rejected, not
    /// stored under a project that is gone.
    @Test func aChildPushedWhileItsParentIsBeingDeletedIsRejectedNotLeftDangling() async throws {
        let devices = try await projectWithAPendingChore()
        defer { devices.remove() }
        let (store, phone) = (devices.store, devices.phone)
        let gate = Gate()
        let deletion = Task {
            try await store.write { context in
                _ = try context.delete(Project.self, id: 1)
                gate.hold()
            }
        }
        await gate.waitUntilHeld()
        async let report = phone.sync()
        try await Task.sleep(for: .milliseconds(300))
        gate.release()
        try await deletion.value
        #expect(try await report.rejections.map(\.key) == [.text("late")])
        try await expectNeitherProjectNorChore(devices)
    }

    /// A serializable deletion of a project began — and found no chores of it — before a device's push of a new chore
    /// of it committed: the push updated the project in place as it referred to it, so the deletion fails and runs
    /// again, and its cascade then takes the new chore too. Nothing refers to a deleted project.
    @Test func aDeletionThatBeganBeforeAChildWasPushedRunsAgainAndTakesIt() async throws {
        let devices = try await projectWithAPendingChore()
        defer { devices.remove() }
        let (store, phone) = (devices.store, devices.phone)
        let gate = Gate()
        let attempts = Mutex(0)
        let deletion = Task {
            try await store.write(retrying: .collisions(for: .seconds(30))) { context in
                let attempt = attempts.withLock {
                    $0 += 1
                    return $0
                }
                // The transaction's snapshot, taken now: no chore yet on the first attempt.
                let chores = try context.count(Chore.self)
                if attempt == 1 {
                    #expect(chores == 0)
                    gate.hold()
                }
                _ = try context.delete(Project.self, id: 1)
            }
        }
        await gate.waitUntilHeld()
        let report = try await phone.sync()
        #expect(report.pushed == 1 && report.rejections.isEmpty)
        gate.release()
        try await deletion.value
        #expect(attempts.withLock { $0 } >= 2, "the deletion didn't run again")
        try await expectNeitherProjectNorChore(devices)
    }

    /// A push's hold on a record it refers to writes the same values: no new version in the change log, so other
    /// devices don't pull the record again.
    @Test func referringToARecordDoesNotMakeItChange() async throws {
        let devices = try await TwoDevices.make(laptop: .sqlite)
        defer { devices.remove() }
        let (store, phone, laptop) = (devices.store, devices.phone, devices.laptop)
        let project = SyncChange(entity: "Project", key: .integer(1), values: nil, version: 0)
        let version = { try await store.read { try SyncServer.loggedVersion(of: project, in: $0) } }
        try await phone.write { try $0.create(Project(id: 1, name: "kept")) }
        _ = try await phone.sync()
        let created = try await version()
        #expect(created > 0)
        try await phone.write {
            try $0.create(Chore(id: "a", projectID: 1, title: "a", done: false, revision: 1))
        }
        #expect(try await phone.sync().pushed == 1)
        #expect(try await version() == created, "the project has a new version")
        _ = try await laptop.sync()
        #expect(try await laptop.contents() == phone.contents())
    }

    /// Two devices push edits of the same 60 records at the same moment, both made on the same version: for each
    /// record exactly one is applied and the other rejected (the server wins) — none applied twice over the other.
    @Test func concurrentPushesOfOneRecordApplyOneAndRejectTheOther() async throws {
        let devices = try await TwoDevices.make(laptop: .lmdb)
        defer { devices.remove() }
        let (store, phone, laptop) = (devices.store, devices.phone, devices.laptop)
        let ids = try await memos(60, on: phone)
        _ = try await laptop.sync()
        try await edit(ids, to: "phone", on: phone)
        try await edit(ids, to: "laptop", on: laptop)
        async let phoneReport = phone.sync()
        async let laptopReport = laptop.sync()
        let reports = try await [phoneReport, laptopReport]
        let rejected = reports.flatMap(\.rejections)
        #expect(rejected.count == ids.count, "each record applied once, rejected once")
        #expect(Set(rejected.map(\.key)).count == ids.count)
        _ = try await phone.sync()
        _ = try await laptop.sync()
        let server = try await Contents.of(store)
        #expect(try await phone.contents() == server)
        #expect(try await laptop.contents() == server)
        // Each record holds the text of the device whose push was applied.
        let rejectedText = Dictionary(
            uniqueKeysWithValues: zip(reports, ["phone", "laptop"]).flatMap { report, text in
                report.rejections.map { ($0.key, text) }
            })
        for memo in server.memos {
            let key = Value.blob(withUnsafeBytes(of: memo.id.uuid) { Data($0) })
            #expect(rejectedText[key] != nil && rejectedText[key] != memo.text)
        }
    }

    /// The server's own writes (serializable transactions, no locks of the push's) race a push of the same records:
    /// neither is lost — a push that read a record before the server changed it can't overwrite that change.
    @Test func aPushRacingTheServersOwnWritesLosesNeither() async throws {
        let devices = try await TwoDevices.make(laptop: .sqlite)
        defer { devices.remove() }
        let (store, phone) = (devices.store, devices.phone)
        let ids = try await memos(200, on: phone)
        try await edit(ids, to: "phone", on: phone)
        async let report = phone.sync()
        // One transaction per record, unconditional: each must end as the server's text.
        async let writes: Void = {
            for id in ids {
                try await store.write(retryingUpTo: 1_000) { try $0.update(Memo(id: id, text: "server", tags: "")) }
            }
        }()
        let rejections = try await report.rejections
        try await writes
        #expect(try await Contents.of(store).memos.allSatisfy { $0.text == "server" }, "a push overwrote the server")
        _ = try await phone.sync()
        #expect(try await phone.contents() == Contents.of(store))
        // A rejected push found the server's write; the others were applied before it.
        #expect(rejections.allSatisfy { $0.serverState.values?["text"] == .text("server") })
    }

    /// A record the server creates while a device pushes its own creation under the same key: the push sees it (it
    /// runs again) and its policy settles it; it never overwrites the server's record unsettled.
    @Test func aRecordCreatedOnBothSidesAtOnceIsSettledNotOverwritten() async throws {
        let devices = try await TwoDevices.make(laptop: .sqlite)
        defer { devices.remove() }
        let (store, phone) = (devices.store, devices.phone)
        let ids = (0..<200).map { _ in UUID() }
        try await phone.write { context in
            for id in ids { try context.create(Memo(id: id, text: "phone", tags: "")) }
        }
        async let report = phone.sync()
        async let created: Set<UUID> = {
            var created = Set<UUID>()
            for id in ids.reversed() {
                do {
                    try await store.write(retryingUpTo: 1_000) { try $0.create(Memo(id: id, text: "server", tags: "")) }
                    created.insert(id)
                } catch let error as PersistenceError where error.code == .duplicateKey {
                    // The push created it first.
                }
            }
            return created
        }()
        let rejected = Set(try await report.rejections.map(\.key))
        let serverCreated = try await created
        let memos = try await Contents.of(store).memos
        #expect(memos.count == ids.count)
        for memo in memos {
            let key = Value.blob(withUnsafeBytes(of: memo.id.uuid) { Data($0) })
            // The server's creation stays exactly when it came first, and then the push was rejected.
            #expect(memo.text == (serverCreated.contains(memo.id) ? "server" : "phone"))
            #expect(rejected.contains(key) == serverCreated.contains(memo.id))
        }
        _ = try await phone.sync()
        #expect(try await phone.contents() == Contents.of(store))
    }

    /// Two sync servers on one store (two processes' worth: each its own database and connections) take the pushes
    /// of four devices at once, records with and without relationships: everyone ends with the same content.
    @Test func twoSyncServersOnOneStoreShareItsPushes() async throws {
        let setup = try await ServerAndFolder.make()
        defer { setup.remove() }
        let schema = setup.store.schema
        let secondStore = try await offPool {
            var builder = try PostgresBuilder(url: serverURL(), model: serverModel)
            builder.schema = schema
            return try builder.create()
        }
        defer { try? secondStore.close() }
        let second = try await offPool { try SyncServer(database: secondStore, model: serverModel) }
        var devices: [any TestSyncClient] = []
        for (index, server) in [setup.server, second, setup.server, second].enumerated() {
            devices.append(try TestClient.make(.sqlite, in: setup.directory, server: server, name: "d\(index)").client)
        }
        for (index, device) in devices.enumerated() {
            try await device.write { context in
                try context.create(Project(id: Int64(index + 1), name: "p\(index)"))
                for item in 0..<150 {
                    try context.create(Memo(id: UUID(), text: "d\(index)-\(item)", tags: ""))
                }
            }
        }
        try await withThrowingTaskGroup(of: SyncReport.self) { group in
            for device in devices { group.addTask { try await device.sync() } }
            for try await report in group {
                #expect(report.pushed == 151 && report.rejections.isEmpty)
            }
        }
        for device in devices { _ = try await device.sync() }
        let server = try await Contents.of(setup.store)
        #expect(server.memos.count == 600 && server.projects.count == 4)
        for device in devices { #expect(try await device.contents() == server) }
    }
}

/// Holds a transaction open from inside it until the test releases it (at most a minute).
final class Gate: Sendable {
    private let state = Mutex((held: false, released: false))

    /// Called inside the transaction (off the cooperative pool): marks it held, then waits for the release.
    func hold() {
        state.withLock { $0.held = true }
        let deadline = Date().addingTimeInterval(60)
        while !state.withLock({ $0.released }), Date() < deadline { Thread.sleep(forTimeInterval: 0.005) }
    }

    func waitUntilHeld() async {
        while !state.withLock({ $0.held }) { try? await Task.sleep(for: .milliseconds(5)) }
    }

    func release() { state.withLock { $0.released = true } }
}
