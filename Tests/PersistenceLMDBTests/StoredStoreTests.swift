import Foundation
@_spi(PersistenceBackend) import PersistenceEngine
import PersistenceTesting
import Testing

@testable import PersistenceLMDB

/// ``LMDBStoredStore`` and ``LMDBStoredStoreWriter``: a store opened read-only through its stored schema reads what
/// the app wrote, in primary-key order, without changing a byte; a store filled by the writer opens in the app.
struct StoredStoreTests {
    struct Ledger: Entity, Equatable {
        var id: Int64
        var amount: Double
        var memo: String?
        static let indexes: [Index] = [.on("memo")]
    }

    struct Person: Entity, Equatable {
        var id: String
        var email: String
        var nickname: String?
        static let indexes: [Index] = [.unique("email"), .on("nickname")]
    }

    struct Device: Entity, Equatable {
        var id: UUID
        var serial: Int64
        var owner: String?
        static let indexes: [Index] = [.unique("serial")]
    }

    static let passphrase = "stored store passphrase"
    static let entities: [any Entity.Type] = [Ledger.self, Person.self, Device.self]

    static let ledgers: [Ledger] = [
        9_000_000_000, -42, 0, .min, 256, -1, 1, 255, -5_000_000_000, .max, 7,
    ].enumerated().map { offset, id in
        Ledger(id: id, amount: Double(offset) * 1.5, memo: offset % 3 == 0 ? nil : "memo \(offset % 2)")
    }
    static let people: [Person] = ["bob", "Alice", "alice", "ab", "a", "é", "Zed", "日本", "", "a b"].enumerated().map {
        Person(id: $1, email: "p\($0)@example.com", nickname: $0 % 2 == 0 ? "nick \($0 % 4)" : nil)
    }
    static let devices: [Device] = (0..<20).map {
        Device(id: UUID(), serial: Int64($0) * 10 - 50, owner: $0 % 4 == 0 ? nil : "owner \($0)")
    }

    static func builder(_ directory: URL, name: String = "Source", encrypted: Bool) -> LMDBBuilder {
        var builder =
            encrypted
            ? LMDBBuilder(databaseName: name, passphrase: passphrase, entities: entities, schemaVersion: 3)
            : LMDBBuilder.unencrypted(databaseName: name, entities: entities, schemaVersion: 3)
        builder.directory = directory
        builder.keyDerivation = testKeyDerivation
        return builder
    }

    /// A store of every fixture, made and closed by the app's builder.
    static func seeded(_ directory: URL, encrypted: Bool) throws -> URL {
        let db = try builder(directory, encrypted: encrypted).create()
        try db.create(ledgers)
        try db.create(people)
        try db.create(devices)
        try db.close()
        return directory.appendingPathComponent("Source.lmdb")
    }

    static func records(_ store: LMDBStoredStore, _ entity: String) throws -> [Record] {
        var records: [Record] = []
        try store.forEachRecord(store.layout(named: entity)) { records.append($0) }
        return records
    }

    static func inKeyOrder<E: Entity>(_ entities: [E]) throws -> [[Value]] {
        let encoded = try entities.map { try Record(encoding: $0) }
        return encoded.sorted { Value.compare($0.primaryKey, $1.primaryKey) == .orderedAscending }.map(\.values)
    }

    @Test(arguments: [false, true])
    func readsTheStoredSchemaAndRecordsInPrimaryKeyOrder(encrypted: Bool) throws {
        try withTemporaryDirectory { directory in
            let file = try Self.seeded(directory, encrypted: encrypted)
            let store = try LMDBStoredStore(file: file, passphrase: encrypted ? Self.passphrase : nil)
            defer { try? store.close() }
            #expect(store.backend == "lmdb")
            #expect(store.isEncrypted == encrypted)
            #expect(store.schemaVersion == 3)
            #expect(store.layouts.map(\.entity.name) == ["Device", "Ledger", "Person"])
            #expect(try store.layout(named: "Person").names == ["id", "email", "nickname"])
            #expect(try store.count(store.layout(named: "Ledger")) == Self.ledgers.count)
            #expect(try store.count(store.layout(named: "Person")) == Self.people.count)
            #expect(try store.count(store.layout(named: "Device")) == Self.devices.count)
            // Order and values: LMDB's key order is Value.compare's for negative and positive integers, text
            // (empty, case, non-ASCII, prefixes) and UUIDs.
            #expect(try Self.records(store, "Ledger").map(\.values) == Self.inKeyOrder(Self.ledgers))
            #expect(try Self.records(store, "Person").map(\.values) == Self.inKeyOrder(Self.people))
            #expect(try Self.records(store, "Device").map(\.values) == Self.inKeyOrder(Self.devices))
            let ledger = try store.layout(named: "Ledger")
            #expect(try store.contains(ledger, key: .integer(.min)))
            #expect(try store.contains(ledger, key: .integer(-42)))
            #expect(try !store.contains(ledger, key: .integer(-43)))
            #expect(try !store.contains(ledger, key: .null))
            #expect(try store.contains(store.layout(named: "Person"), key: .text("")))
            #expect(try !store.contains(store.layout(named: "Person"), key: .text("carol")))
            let report = try store.verify()
            #expect(report.isSound, "\(report)")
            #expect(report.recordsChecked == Self.ledgers.count + Self.people.count + Self.devices.count)
            let details = Dictionary(try store.details.map { ($0.label, $0.value) }, uniquingKeysWith: { a, _ in a })
            #expect(details["file"] == file.path)
            #expect(details["format"]?.hasPrefix("Persistence LMDB format") == true)
            #expect(details["map size"] != nil && details["pages"] != nil && details["readers"] != nil)
            let encryption = try #require(details["encryption"])
            #expect(encryption.contains("Argon2id") == encrypted, "\(encryption)")
            #expect(!encryption.contains(Self.passphrase))
            try store.close()
            expectError(.closed) { try store.count(ledger) }
            expectError(.closed) { try store.verify() }
        }
    }

    @Test func refusesAMissingWrongOrUnneededPassphrase() throws {
        try withTemporaryDirectory { directory in
            let encrypted = try Self.seeded(directory, encrypted: true)
            expectError(.wrongPassphrase) { try LMDBStoredStore(file: encrypted, passphrase: nil) }
            expectError(.wrongPassphrase) { try LMDBStoredStore(file: encrypted, passphrase: "not it") }
            let plainDirectory = directory.appendingPathComponent("plain")
            try FileManager.default.createDirectory(at: plainDirectory, withIntermediateDirectories: false)
            let plain = try Self.seeded(plainDirectory, encrypted: false)
            expectError(.invalidConfiguration) { try LMDBStoredStore(file: plain, passphrase: Self.passphrase) }
            expectError(.notFound) {
                try LMDBStoredStore(file: directory.appendingPathComponent("None.lmdb"), passphrase: nil)
            }
            let garbage = directory.appendingPathComponent("Garbage.lmdb")
            try Data(repeating: 0x5A, count: 16_384).write(to: garbage)
            expectError(.corrupt) { try LMDBStoredStore(file: garbage, passphrase: nil) }
        }
    }

    /// Opening, reading, verifying and closing leave the data file byte for byte as it was; without a lock file
    /// beside it, none is made.
    @Test(arguments: [true, false])
    func readingChangesNoByte(keepsLockFile: Bool) throws {
        try withTemporaryDirectory { directory in
            let file = try Self.seeded(directory, encrypted: true)
            let lockFile = URL(fileURLWithPath: file.path + "-lock")
            if !keepsLockFile { try FileManager.default.removeItem(at: lockFile) }
            let before = try Data(contentsOf: file)
            let modified = try FileManager.default.attributesOfItem(atPath: file.path)[.modificationDate] as? Date
            let store = try LMDBStoredStore(file: file, passphrase: Self.passphrase)
            for layout in store.layouts { try store.forEachRecord(layout) { _ in } }
            #expect(try store.verify().isSound)
            _ = try store.details
            try store.close()
            #expect(try Data(contentsOf: file) == before)
            #expect(try FileManager.default.attributesOfItem(atPath: file.path)[.modificationDate] as? Date == modified)
            #expect(FileManager.default.fileExists(atPath: lockFile.path) == keepsLockFile)
        }
    }

    @Test func aRecordThatFailsAuthenticationIsATypedError() throws {
        try withTemporaryDirectory { directory in
            let db = try secrets(directory).create()
            try db.create([Secret(id: 1, note: "one", tag: "a"), Secret(id: 2, note: "two", tag: "b")])
            try db.raw { transaction, store in
                let key = try KeyCodec.encode(.integer(2))
                var sealed = try #require(try transaction.get(store.dbi, key))
                sealed[sealed.count - 1] ^= 0x01
                try transaction.put(store.dbi, key, sealed)
            }
            // The app reads through the same storage, and its error holds no stored value: not the key.
            let appError = expectError(.authenticationFailed) { try db.recover(Secret.self) }
            #expect(appError?.message.contains("primary key") == false, "\(appError?.message ?? "")")
            try db.close()
            let store = try LMDBStoredStore(file: dataFile(directory), passphrase: "correct horse battery staple")
            defer { try? store.close() }
            var seen = 0
            let error = expectError(.authenticationFailed) {
                try store.forEachRecord(store.layout(named: "Secret")) { _ in seen += 1 }
            }
            #expect(seen == 1)
            #expect(error?.message.contains("'Secret' record with primary key 2 fails authentication") == true)
            let problems = try store.verify().problems
            #expect(problems.map(\.kind) == [.authenticationFailed], "\(problems)")
        }
    }

    @Test func refusesAStoreOpenInThisProcess() throws {
        try withTemporaryDirectory { directory in
            let db = try secrets(directory).create()
            expectError(.storeInUse) {
                try LMDBStoredStore(file: dataFile(directory), passphrase: "correct horse battery staple")
            }
            try db.close()
            let store = try LMDBStoredStore(file: dataFile(directory), passphrase: "correct horse battery staple")
            // The tool's read holds the file as the app's databases do: it can't be deleted meanwhile.
            expectError(.storeInUse) { try secrets(directory).deleteStore() }
            try store.close()
            #expect(try secrets(directory).deleteStore())
        }
    }

    /// A database the stored schema declares but the file lacks (only damage makes one): an index's leaves the records
    /// readable, an entity's reads as empty; verification reports each.
    @Test(arguments: [false, true])
    func aMissingDatabaseIsReported(entityDatabase: Bool) throws {
        try withTemporaryDirectory { directory in
            let db = try secrets(directory).create()
            try db.create([Secret(id: 1, note: "one", tag: "a"), Secret(id: 2, note: "two", tag: "b")])
            let dropped = try db.raw { transaction, store in
                let name = entityDatabase ? store.databaseName : store.indexes[0].databaseName
                try transaction.environment.dropDatabase(named: name, in: transaction)
                return name
            }
            try db.close()
            let store = try LMDBStoredStore(file: dataFile(directory), passphrase: "correct horse battery staple")
            defer { try? store.close() }
            let layout = try store.layout(named: "Secret")
            #expect(try store.count(layout) == (entityDatabase ? 0 : 2))
            #expect(try Self.records(store, "Secret").count == (entityDatabase ? 0 : 2))
            #expect(try store.contains(layout, key: .integer(1)) == !entityDatabase)
            let problems = try store.verify().problems
            #expect(
                problems.contains {
                    $0.kind == .schemaMismatch && $0.entity == "Secret" && $0.message.contains(dropped)
                },
                "\(problems)")
        }
    }

    /// Every record copied into a new encrypted store, which the app's builder then opens as its own.
    @Test func aCopyOpensWithTheBuilderAndHoldsEqualEntities() throws {
        try withTemporaryDirectory { directory in
            let source = try LMDBStoredStore(file: Self.seeded(directory, encrypted: false), passphrase: nil)
            defer { try? source.close() }
            let copy = directory.appendingPathComponent("Copy.lmdb")
            let writer = try LMDBStoredStoreWriter(
                file: copy, layouts: source.layouts, schemaVersion: source.schemaVersion,
                passphrase: "copy passphrase", keyDerivation: testKeyDerivation)
            for layout in source.layouts { try source.forEachRecord(layout) { try writer.insert($0) } }
            #expect(!FileManager.default.fileExists(atPath: copy.path))
            try writer.commit()
            try source.close()
            let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
            #expect(names == ["Copy.lmdb", "Source.lmdb", "Source.lmdb-lock"])

            var builder = Self.builder(directory, name: "Copy", encrypted: true)
            builder.passphrase = "copy passphrase"
            let db = try builder.create()
            #expect(db.migrationReport == nil)
            #expect(
                try db.recover(Ledger.self, query: Query()).sorted { $0.id < $1.id }
                    == Self.ledgers.sorted { $0.id < $1.id })
            #expect(
                try db.recover(Person.self, query: Query()).sorted { $0.id < $1.id }
                    == Self.people.sorted { $0.id < $1.id })
            #expect(
                try db.recover(Device.self, query: Query()).sorted { $0.serial < $1.serial }
                    == Self.devices.sorted { $0.serial < $1.serial })
            // The index entries are there: lookups through them find the records, unique ones refuse duplicates.
            #expect(try db.recover(Person.self, key: "email", value: "p3@example.com").map(\.id) == ["ab"])
            #expect(
                try db.count(Ledger.self, where: Field("memo") == "memo 1")
                    == Self.ledgers.filter { $0.memo == "memo 1" }.count)
            expectError(.uniqueViolation) { try db.create(Person(id: "new", email: "p0@example.com", nickname: nil)) }
            // The nonce counter went with the records: a new write and verification are sound.
            try db.create(Ledger(id: 12, amount: 1, memo: "after"))
            let report = try db.verify()
            #expect(report.isSound, "\(report)")
            try db.close()

            expectError(.wrongPassphrase) { try LMDBStoredStore(file: copy, passphrase: nil) }
            let reopened = try LMDBStoredStore(file: copy, passphrase: "copy passphrase")
            defer { try? reopened.close() }
            #expect(reopened.isEncrypted)
            #expect(try reopened.verify().isSound)
        }
    }

    @Test func aDiscardedOrDroppedWriterLeavesNoFile() throws {
        try withTemporaryDirectory { directory in
            let layouts = try Model(version: 1, entities: Self.entities).layouts()
            let file = directory.appendingPathComponent("New.lmdb")
            let writer = try LMDBStoredStoreWriter(
                file: file, layouts: layouts, schemaVersion: 1, passphrase: "p", keyDerivation: testKeyDerivation)
            for ledger in Self.ledgers { try writer.insert(Record(encoding: ledger)) }
            writer.discard()
            expectError(.closed) { try writer.insert(Record(encoding: Self.ledgers[0])) }
            expectError(.closed) { try writer.commit() }
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)
            do {
                let dropped = try LMDBStoredStoreWriter(
                    file: file, layouts: layouts, schemaVersion: 1, passphrase: nil, keyDerivation: testKeyDerivation)
                try dropped.insert(Record(encoding: Self.people[0]))
            }
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)
        }
    }

    @Test func refusesDuplicatesAndValuesTheSchemaCantHold() throws {
        try withTemporaryDirectory { directory in
            let layouts = try Model(version: 1, entities: Self.entities).layouts()
            let file = directory.appendingPathComponent("New.lmdb")
            let writer = try LMDBStoredStoreWriter(
                file: file, layouts: layouts, schemaVersion: 1, passphrase: nil, keyDerivation: testKeyDerivation)
            try writer.insert(Record(encoding: Self.people[0]))
            expectError(.duplicateKey) { try writer.insert(Record(encoding: Self.people[0])) }
            var sameEmail = Self.people[1]
            sameEmail.email = Self.people[0].email
            expectError(.uniqueViolation) { try writer.insert(Record(encoding: sameEmail)) }
            var wrongType = try Record(encoding: Self.ledgers[0])
            wrongType.values[1] = .text("not a number")
            expectError(.invalidValue) { try writer.insert(wrongType) }
            var missing = try Record(encoding: Self.people[1])
            missing.values[1] = .null
            expectError(.invalidValue) { try writer.insert(missing) }
            // The refusals left the write usable.
            try writer.insert(Record(encoding: Self.people[1]))
            writer.discard()
            #expect(!FileManager.default.fileExists(atPath: file.path))
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)
        }
    }

    @Test func refusesAnExistingFileAndOtherExtensions() throws {
        try withTemporaryDirectory { directory in
            let layouts = try Model(version: 1, entities: Self.entities).layouts()
            let existing = directory.appendingPathComponent("Taken.lmdb")
            try Data("x".utf8).write(to: existing)
            expectError(.invalidArgument) {
                try LMDBStoredStoreWriter(
                    file: existing, layouts: layouts, schemaVersion: 1, passphrase: nil,
                    keyDerivation: testKeyDerivation)
            }
            expectError(.invalidName) {
                try LMDBStoredStoreWriter(
                    file: directory.appendingPathComponent("Other.sqlite"), layouts: layouts, schemaVersion: 1,
                    passphrase: nil, keyDerivation: testKeyDerivation)
            }
            #expect(try Data(contentsOf: existing) == Data("x".utf8))
        }
    }

    @Test func aFullMapIsStorageFullAndLeavesNothing() throws {
        try withTemporaryDirectory { directory in
            let layouts = try Model(version: 1, entities: Self.entities).layouts()
            let writer = try LMDBStoredStoreWriter(
                file: directory.appendingPathComponent("Small.lmdb"), layouts: layouts, schemaVersion: 1,
                passphrase: "p", keyDerivation: testKeyDerivation, initialMapSize: 1 << 20)
            let memo = String(repeating: "m", count: 16_384)
            let error = expectError(.storageFull) {
                for id in 0..<200 { try writer.insert(Record(encoding: Ledger(id: Int64(id), amount: 0, memo: memo))) }
            }
            #expect(error?.nativeCode == -30_792)  // MDB_MAP_FULL
            expectError(.closed) { try writer.commit() }
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)
        }
    }
}
