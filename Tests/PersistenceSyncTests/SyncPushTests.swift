import Foundation
import PersistenceCore
import PersistencePostgres
import PersistenceSync
import Synchronization
import Testing

@testable import PersistenceSyncServer

/// Pushes at server scale: batches of records without relationships run at once, locking the records they read;
/// whatever runs at the same time — another device's push of the same records, the server's own writes, another sync
/// server on the store — no change is lost and each is settled by its policy once.
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

    @Test func aBatchWithoutRelationshipsDoesntWaitForThePushTurn() async throws {
        let devices = try await TwoDevices.make(laptop: .sqlite)
        defer { devices.remove() }
        let (store, server, phone) = (devices.store, devices.server, devices.phone)
        try await phone.write { try $0.create(Memo(id: UUID(), text: "at once", tags: "")) }
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
        #expect(pushed == 1)
        #expect(!released, "the memo's push waited for the turn")
        #expect(try await Contents.of(store).memos.map(\.text) == ["at once"])
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
