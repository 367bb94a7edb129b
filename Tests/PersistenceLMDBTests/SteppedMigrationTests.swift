import Foundation
@_spi(PersistenceBackend) import PersistenceCore
@_spi(PersistenceBackend) import PersistenceEngine
import PersistenceTesting
import Testing

@testable import PersistenceLMDB

/// A migration writes into databases of its own in steps that each commit, so its memory doesn't grow with the store,
/// and switches to them in one last small step: what it leaves when it fails, is interrupted, or finishes.
struct SteppedMigrationTests {
    struct NoteV1: Entity, Equatable {
        var id: Int64
        var text: String
        var tag: String
        static var entityName: String { "Note" }
        static let indexes: [Index] = [.on("tag")]
    }

    struct NoteV2: Entity, Equatable {
        var id: Int64
        var body: String
        var tag: String
        var words: Int
        static var entityName: String { "Note" }
        static let indexes: [Index] = [.on("tag"), .on("words")]
        static let previousAttributeNames = ["body": "text"]
        static let defaultValues: [String: Value] = ["words": 1]
    }

    static let count = 30_000

    func builder(_ directory: URL, _ version: Int, encrypted: Bool, block: MigrationBlock? = nil) -> LMDBBuilder {
        let model = Model(version: version, entities: [version == 1 ? NoteV1.self : NoteV2.self])
        var builder =
            encrypted
            ? LMDBBuilder(databaseName: "Notes", passphrase: "notes", model: model)
            : LMDBBuilder.unencrypted(databaseName: "Notes", model: model)
        builder.directory = directory
        builder.keyDerivation = testKeyDerivation
        builder.migrationBlock = block
        return builder
    }

    func seed(_ directory: URL, encrypted: Bool, count: Int = Self.count) throws {
        let db = try builder(directory, 1, encrypted: encrypted).create()
        try db.create((1...count).map { NoteV1(id: Int64($0), text: "note \($0)", tag: "t\($0 % 7)") })
        try db.close()
    }

    func inspect(_ directory: URL, encrypted: Bool, version: Int = 1) throws -> (names: [String], marker: Data?) {
        try inspectMigration(builder(directory, version, encrypted: encrypted))
    }

    @Test(arguments: [true, false])
    func aLargeMigrationCommitsInStepsAndSwitchesOnce(encrypted: Bool) throws {
        try withTemporaryDirectory { directory in
            try seed(directory, encrypted: encrypted)
            let before = try lastTransaction(directory, encrypted: encrypted)
            let db = try builder(directory, 2, encrypted: encrypted).create()
            #expect(try lastTransaction(db) - before > 3, "the migration committed in several steps")
            #expect(try db.count(NoteV2.self) == Self.count)
            #expect(try db.recover(NoteV2.self, id: 77) == NoteV2(id: 77, body: "note 77", tag: "t0", words: 1))
            #expect(
                try db.count(NoteV2.self, where: Field("tag") == "t3") == (1...Self.count).filter { $0 % 7 == 3 }.count)
            #expect(try db.count(NoteV2.self, where: Field("words") == 1) == Self.count)
            let report = try db.verify()
            #expect(report.isSound, "\(report)")
            // The switch made the store format 4, keeping its key record's format; no shadow is left over.
            let (format, keyFormat, names) = try db.environment.read { transaction in
                (
                    try StoreMetadata.readNumber(.format, db.metaDBI, transaction),
                    try StoreMetadata.readNumber(.keyFormat, db.metaDBI, transaction),
                    try transaction.databaseNames()
                )
            }
            #expect(format == StoreMetadata.mappedFormat)
            #expect(keyFormat == (encrypted ? StoreMetadata.suiteFormat : StoreMetadata.derivedKeyFormat))
            // The records and the two indexes: the tag index kept as it was, the others the migration's.
            #expect(names.filter(DatabaseNames.isEntityOrIndex).count == 3, "\(names)")
            try db.close()
            // It opens again without migrating, and a second migration builds on the map.
            let again = try builder(directory, 2, encrypted: encrypted).create()
            #expect(again.migrationReport == nil)
            #expect(try again.count(NoteV2.self) == Self.count)
        }
    }

    @Test(arguments: [true, false])
    func aFailedMigrationLeavesNoShadowNorMarker(encrypted: Bool) throws {
        struct Stop: Error {}
        try withTemporaryDirectory { directory in
            try seed(directory, encrypted: encrypted)
            let namesBefore = try inspect(directory, encrypted: encrypted).names
            let failing = builder(directory, 2, encrypted: encrypted) { migration, _ in
                var seen = 0
                // Fails after several steps have committed.
                try migration.enumerateObjects(ofType: "Note") { _, new in
                    seen += 1
                    try new?.set("words", to: seen)
                    if seen == Self.count - 10 { throw Stop() }
                }
            }
            let error = expectError(.migrationFailed) { try failing.create() }
            #expect(error?.underlyingError is Stop)
            let after = try inspect(directory, encrypted: encrypted)
            #expect(after.names == namesBefore, "no shadow left")
            #expect(after.marker == nil)
            #expect(!FileManager.default.fileExists(atPath: dataFile(directory, name: "Notes").path + "-migration"))
            let db = try builder(directory, 1, encrypted: encrypted).create()
            #expect(try db.count(NoteV1.self) == Self.count)
            #expect(try db.verify().isSound)
        }
    }

    /// What a process killed during a migration leaves — its marker and shadows — is discarded by the next open; while
    /// the migrating process lives (it holds the lock), an open is `busy`.
    @Test(arguments: [true, false])
    func anInterruptedMigrationIsDiscardedAndALiveOneIsBusy(encrypted: Bool) throws {
        try withTemporaryDirectory { directory in
            try seed(directory, encrypted: encrypted, count: 100)
            do {
                let db = try builder(directory, 1, encrypted: encrypted).create()
                try db.environment.writer.withLock {
                    try db.environment.write { transaction in
                        try StoreMetadata.write(.migration, Data("0badc0de".utf8), db.metaDBI, transaction)
                        let shadow = try db.environment.database(
                            named: "entity:Note@0badc0de", flags: 0, in: transaction)
                        try transaction.put(shadow, Data([1]), Data([2]))
                    }
                }
                try db.close()
            }
            let store = dataFile(directory, name: "Notes")
            do {
                let live = try MigrationLock(store: store)
                defer { live.release() }
                expectError(.busy) { try builder(directory, 1, encrypted: encrypted).create() }
                expectError(.busy) { try MigrationLock(store: store) }
            }
            let db = try builder(directory, 1, encrypted: encrypted).create()
            #expect(try db.count(NoteV1.self) == 100)
            let (names, marker) = try db.environment.read { transaction in
                (try transaction.databaseNames(), try StoreMetadata.read(.migration, db.metaDBI, transaction))
            }
            #expect(!names.contains { $0.hasSuffix("@0badc0de") }, "\(names)")
            #expect(marker == nil)
            #expect(try db.verify().isSound)
        }
    }

    /// A process that ended between the switch and dropping the databases it switched away from leaves them; the
    /// next open drops them.
    @Test func databasesNoSchemaUsesAreDroppedAtOpen() throws {
        try withTemporaryDirectory { directory in
            try seed(directory, encrypted: true, count: 10)
            do {
                let db = try builder(directory, 1, encrypted: true).create()
                try db.environment.writer.withLock {
                    try db.environment.write { transaction in
                        let stale = try db.environment.database(
                            named: "entity:Note@feedface", flags: 0, in: transaction)
                        try transaction.put(stale, Data([1]), Data([2]))
                    }
                }
                #expect(try !db.verify().isSound, "verify reports a database the model doesn't use")
                try db.close()
            }
            let db = try builder(directory, 1, encrypted: true).create()
            let names = try db.environment.read { try $0.databaseNames() }
            #expect(!names.contains("entity:Note@feedface"))
            #expect(try db.verify().isSound)
        }
    }

    @Test func aPassphraseChangeKeepsAMigratedStoreFormatFour() throws {
        try withTemporaryDirectory { directory in
            try seed(directory, encrypted: true, count: 50)
            let db = try builder(directory, 2, encrypted: true).create()
            try db.changePassphrase(from: "notes", to: "other", keyDerivation: testKeyDerivation)
            try db.close()
            var reopened = builder(directory, 2, encrypted: true)
            reopened.passphrase = "other"
            let again = try reopened.create()
            #expect(try again.count(NoteV2.self) == 50)
            let format = try again.environment.read { try StoreMetadata.readNumber(.format, again.metaDBI, $0) }
            #expect(format == StoreMetadata.mappedFormat)
            #expect(try again.verify().isSound)
        }
    }

    private func lastTransaction(_ directory: URL, encrypted: Bool) throws -> Int {
        let db = try builder(directory, 1, encrypted: encrypted).create()
        defer { try? db.close() }
        return try lastTransaction(db)
    }

    private func lastTransaction(_ db: LMDBDatabase) throws -> Int {
        try db.environment.read { $0.id }
    }
}
