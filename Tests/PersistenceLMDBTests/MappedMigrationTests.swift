import Foundation
@_spi(PersistenceBackend) import PersistenceCore
@_spi(PersistenceBackend) import PersistenceEngine
import PersistenceTesting
import Synchronization
import Testing

@testable import PersistenceLMDB

/// A migration plan's chain on LMDB: each step writes into databases of the migration's own in steps that commit,
/// the store switches to the last step's at once, and a failure, however late, leaves the store as it was.
struct MappedMigrationTests {
    enum V1 {
        struct Note: Entity, Equatable {
            var id: Int64
            var body: String
            var tag: String
            static let indexes: [Index] = [.on("tag")]
        }
    }

    enum V2 {
        struct Note: Entity, Equatable {
            var id: Int64
            var text: String
            var tag: String
            var words: Int
            static let indexes: [Index] = [.on("tag"), .on("words")]
        }
    }

    enum V3 {
        struct Note: Entity, Equatable {
            var id: Int64
            var content: String
            var tag: String
            var words: Int
            static let indexes: [Index] = [.on("tag"), .on("words")]
            static let previousAttributeNames = ["content": "text"]
        }

        struct Tag: Entity, Equatable {
            var id: String
            var notes: Int
        }
    }

    /// How many times a mapping closure ran.
    final class Calls: Sendable {
        private let count = Mutex(0)
        var value: Int { count.withLock { $0 } }
        func next() -> Int {
            count.withLock { count in
                count += 1
                return count
            }
        }
    }

    static let oldMarker = "old-plaintext-marker"
    static let newMarker = "NEW-PLAINTEXT-MARKER"
    static let count = 30_000

    /// 1 → 2: `body` becomes `text` (its marker replaced) and `words` is counted; 2 → 3 is inferred.
    static func plan(calls: Calls? = nil, failingAt: Int? = nil) -> MigrationPlan {
        MigrationPlan(
            models: [Model(version: 1, entities: [V1.Note.self]), Model(version: 2, entities: [V2.Note.self])],
            mappings: [
                MappingModel(
                    from: 1, to: 2,
                    [
                        .transform(
                            "Note",
                            [
                                "text": .value { source in
                                    let seen = calls?.next()
                                    if let failingAt, seen == failingAt { throw CancellationError() }
                                    return try (source.string("body") ?? "")
                                        .replacingOccurrences(of: Self.oldMarker, with: Self.newMarker)
                                },
                                "words": .value { source in
                                    try (source.string("body") ?? "").split(separator: " ").count
                                },
                            ])
                    ])
            ])
    }

    func builder(_ directory: URL, _ version: Int, encrypted: Bool, plan: MigrationPlan? = nil) -> LMDBBuilder {
        let entities: [any Entity.Type] =
            switch version {
            case 1: [V1.Note.self]
            case 2: [V2.Note.self]
            default: [V3.Note.self, V3.Tag.self]
            }
        let model = Model(version: version, entities: entities)
        var builder =
            encrypted
            ? LMDBBuilder(databaseName: "Notes", passphrase: "notes", model: model)
            : LMDBBuilder.unencrypted(databaseName: "Notes", model: model)
        builder.directory = directory
        builder.keyDerivation = testKeyDerivation
        builder.migrationPlan = plan
        return builder
    }

    func seed(_ directory: URL, encrypted: Bool, count: Int = Self.count, mapSize: Int? = nil) throws {
        var builder = builder(directory, 1, encrypted: encrypted)
        if let mapSize { builder.initialMapSize = mapSize }
        let db = try builder.create()
        try db.create(
            (1...count).map { V1.Note(id: Int64($0), body: "\(Self.oldMarker) \($0) one two", tag: "t\($0 % 7)") })
        try db.close()
    }

    func inspect(_ directory: URL, encrypted: Bool, version: Int = 1) throws -> (names: [String], marker: Data?) {
        try inspectMigration(builder(directory, version, encrypted: encrypted))
    }

    @Test(arguments: [true, false])
    func aLargeChainCommitsInStepsAndSwitchesOnce(encrypted: Bool) throws {
        try withTemporaryDirectory { directory in
            try seed(directory, encrypted: encrypted)
            let calls = Calls()
            let db = try builder(directory, 3, encrypted: encrypted, plan: Self.plan(calls: calls)).create()
            #expect(calls.value == Self.count, "the mapping ran once per record")
            let report = try #require(db.migrationReport)
            #expect(report.steps.map(\.kind) == [.mapped, .inferred])
            #expect(report.steps[1].changes.contains("'Note.text' renamed 'content'"), "\(report)")
            #expect(try db.count(V3.Note.self) == Self.count)
            #expect(
                try db.recover(V3.Note.self, id: 77)
                    == V3.Note(id: 77, content: "\(Self.newMarker) 77 one two", tag: "t0", words: 4))
            #expect(
                try db.count(V3.Note.self, where: Field("tag") == "t3")
                    == (1...Self.count).filter { $0 % 7 == 3 }.count)
            #expect(try db.count(V3.Note.self, where: Field("words") == 4) == Self.count)
            #expect(try db.count(V3.Tag.self) == 0)
            let verification = try db.verify()
            #expect(verification.isSound, "\(verification)")
            // The records and two indexes of Note, the records of Tag: nothing of the steps' work left over.
            let names = try db.environment.read { try $0.databaseNames() }
            #expect(names.filter(DatabaseNames.isEntityOrIndex).count == 4, "\(names)")
            #expect(!names.contains { $0.hasPrefix("tracking") }, "\(names)")
            if encrypted {
                let file = try Data(contentsOf: dataFile(directory, name: "Notes"))
                #expect(file.range(of: Data(Self.newMarker.utf8)) == nil, "no new value in plaintext")
                #expect(file.range(of: Data("one two".utf8)) == nil, "no value in plaintext")
            }
            try db.close()
            let again = try builder(directory, 3, encrypted: encrypted, plan: Self.plan()).create()
            #expect(again.migrationReport == nil)
            #expect(try again.count(V3.Note.self) == Self.count)
        }
    }

    @Test(arguments: [true, false])
    func aChainThatFailsLateLeavesTheStoreAsItWas(encrypted: Bool) throws {
        try withTemporaryDirectory { directory in
            try seed(directory, encrypted: encrypted)
            let namesBefore = try inspect(directory, encrypted: encrypted).names
            let failing = builder(
                directory, 3, encrypted: encrypted, plan: Self.plan(calls: Calls(), failingAt: Self.count - 10))
            let error = expectError(.migrationFailed) { try failing.create() }
            #expect(error?.underlyingError is CancellationError, "\(String(describing: error))")
            #expect(error?.message.contains("migration step 1 → 2") == true, "\(String(describing: error))")
            let after = try inspect(directory, encrypted: encrypted)
            #expect(after.names == namesBefore, "nothing of the migration left")
            #expect(after.marker == nil)
            let db = try builder(directory, 1, encrypted: encrypted).create()
            #expect(try db.count(V1.Note.self) == Self.count)
            #expect(try db.recover(V1.Note.self, id: 5)?.body == "\(Self.oldMarker) 5 one two")
            #expect(try db.verify().isSound)
        }
    }

    /// A custom policy that creates records of an entity the step otherwise keeps as it is: the kept records are
    /// copied before the first change, never written in place.
    @Test(arguments: [true, false])
    func mappingCodeChangingAKeptEntityLeavesItsStoredDatabaseAlone(encrypted: Bool) throws {
        enum W1 {
            struct Note: Entity, Equatable {
                var id: Int64
                var tag: String
                static let indexes: [Index] = [.on("tag")]
            }
            struct Tag: Entity, Equatable {
                var id: String
                var notes: Int
                static let indexes: [Index] = [.on("notes")]
            }
        }
        enum W2 {
            struct Note: Entity, Equatable {
                var id: Int64
                var tagID: String
            }
        }
        try withTemporaryDirectory { directory in
            func builder(_ model: Model, plan: MigrationPlan? = nil) -> LMDBBuilder {
                var builder =
                    encrypted
                    ? LMDBBuilder(databaseName: "Tags", passphrase: "tags", model: model)
                    : LMDBBuilder.unencrypted(databaseName: "Tags", model: model)
                builder.directory = directory
                builder.keyDerivation = testKeyDerivation
                builder.migrationPlan = plan
                return builder
            }
            let v1 = Model(version: 1, entities: [W1.Note.self, W1.Tag.self])
            let seeded = try builder(v1).create()
            try seeded.create((1...50).map { W1.Note(id: Int64($0), tag: "t\($0 % 5)") })
            try seeded.create(W1.Tag(id: "t0", notes: 0))
            try seeded.close()
            // Tag keeps its table (same attributes); each note's tag becomes a Tag record if it isn't one.
            let policy = EntityMigrationPolicy(createDestinationRecords: { source, context in
                let tag = try source.string("tag") ?? ""
                var note = try context.newRecord("Note")
                try note.set("id", to: try source["id"])
                try note.set("tagID", to: tag)
                try context.insert(note)
                if var existing = try context.destinationRecord("Tag", id: tag) {
                    try existing.set("notes", to: (try existing.int64("notes") ?? 0) + 1)
                    try context.update(existing)
                } else {
                    var created = try context.newRecord("Tag")
                    try created.set("id", to: tag)
                    try created.set("notes", to: 1)
                    try context.insert(created)
                }
            })
            let v2 = Model(version: 2, entities: [W2.Note.self, W1.Tag.self])
            let plan = MigrationPlan(
                models: [v1], mappings: [MappingModel(from: 1, to: 2, [.custom("Note", to: "Note", policy: policy)])])
            let db = try builder(v2, plan: plan).create()
            #expect(try db.count(W2.Note.self) == 50)
            #expect(
                try db.recover(W1.Tag.self).sorted { $0.id < $1.id } == (0..<5).map { W1.Tag(id: "t\($0)", notes: 10) })
            #expect(try db.count(W1.Tag.self, where: Field("notes") == 10) == 5, "the kept index has the new records")
            #expect(try db.verify().isSound)
        }
    }

    @Test func aPlanAndABlockTogetherAreRefused() throws {
        try withTemporaryDirectory { directory in
            var builder = builder(directory, 2, encrypted: false, plan: Self.plan())
            builder.migrationBlock = { _, _ in }
            expectError(.invalidConfiguration) { _ = try builder.create() }
            #expect((try? FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty) == true)
        }
    }

    @Test func theMappingRunsOnceWhenTheMapMustGrow() throws {
        try withTemporaryDirectory { directory in
            // A 1 MiB map holding ~0.6 MiB of records: the chain's writes need several times that.
            try seed(directory, encrypted: true, count: 3_000, mapSize: 1 << 20)
            let calls = Calls()
            var builder = builder(directory, 3, encrypted: true, plan: Self.plan(calls: calls))
            builder.initialMapSize = 1 << 20
            let db = try builder.create()
            #expect(calls.value == 3_000)
            #expect(try db.count(V3.Note.self) == 3_000)
            let report = try db.verify()
            #expect(report.isSound, "\(report)")
        }
    }

    /// The physical name of the database of Note's index on `attribute`.
    func indexDatabase(_ directory: URL, _ version: Int, encrypted: Bool, on attribute: String) throws -> String {
        let names = try inspect(directory, encrypted: encrypted, version: version).names
        return try #require(names.first { $0.hasPrefix(DatabaseNames.index(.on(attribute), of: "Note")) }, "\(names)")
    }

    /// A transform leaving `tag` and the key alone keeps the stored `tag` index's database (no walk builds it); an
    /// index whose attribute a closure maps, or one of an entity mapping code changes, is built anew — and every
    /// index answers as the records say.
    @Test(arguments: [true, false])
    func anIndexTheMappingProvablyLeavesAloneIsKept(encrypted: Bool) throws {
        enum Change { case none, tagMapped, recordUpdated }
        for change in [Change.none, .tagMapped, .recordUpdated] {
            try withTemporaryDirectory { directory in
                try seed(directory, encrypted: encrypted, count: 700)
                let stored = try indexDatabase(directory, 1, encrypted: encrypted, on: "tag")
                var attributes: [String: AttributeMapping] = [
                    "text": .value { source in try source.string("body") ?? "" },
                    "words": .value { source in try (source.string("body") ?? "").split(separator: " ").count },
                ]
                if change == .tagMapped {
                    attributes["tag"] = .value { source in try (source.string("tag") ?? "") + "!" }
                }
                var mappings: [EntityMapping] = [.transform("Note", attributes)]
                if change == .recordUpdated {
                    // Mapping code outside the transform changes one record's `tag`.
                    mappings.append(
                        .custom(
                            nil, to: nil,
                            policy: EntityMigrationPolicy(finish: { context in
                                var note = try #require(try context.destinationRecord("Note", id: Int64(3)))
                                try note.set("tag", to: "moved")
                                try context.update(note)
                            })))
                }
                let plan = MigrationPlan(
                    models: [Model(version: 1, entities: [V1.Note.self]), Model(version: 2, entities: [V2.Note.self])],
                    mappings: [MappingModel(from: 1, to: 2, mappings)])
                let db = try builder(directory, 2, encrypted: encrypted, plan: plan).create()
                let suffix = change == .tagMapped ? "!" : ""
                let moved = change == .recordUpdated ? 1 : 0
                #expect(
                    try db.count(V2.Note.self, where: Field("tag") == "t3\(suffix)")
                        == (1...700).filter { $0 % 7 == 3 }.count - moved)
                #expect(try db.count(V2.Note.self, where: Field("tag") == "moved") == moved)
                #expect(try db.count(V2.Note.self, where: Field("tag") == "t4") == (change == .tagMapped ? 0 : 100))
                #expect(try db.count(V2.Note.self, where: Field("words") == 4) == 700)
                let verification = try db.verify()
                #expect(verification.isSound, "\(verification)")
                try db.close()
                let after = try indexDatabase(directory, 2, encrypted: encrypted, on: "tag")
                #expect((after == stored) == (change == .none), "\(change): \(stored) → \(after)")
            }
        }
    }

    /// However many aliases name a renamed entity, their rewrites go into the transaction the switch commits in: a
    /// step due among them would commit some before the switch, and a crash then would leave aliases naming an
    /// entity the store doesn't have.
    @Test(arguments: [true, false])
    func aliasRewritesAllLandInTheSwitchsTransaction(encrypted: Bool) throws {
        try withTemporaryDirectory { directory in
            let db = try builder(directory, 1, encrypted: encrypted).create()
            let count = SteppedWrite.maximumPuts + 1_000
            try db.write { context in
                for id in 1...count { try context.setAlias("a\(id)", to: V1.Note.self, id: Int64(id)) }
            }
            let environment = try db.environment
            let sealer = try db.sealer
            /// How many aliases name each entity, as `transaction` sees them.
            func targets(_ transaction: Transaction) throws -> [String: Int] {
                let aliases = try environment.database(named: StoredAlias.databaseName, flags: 0, in: transaction)
                var counts: [String: Int] = [:]
                try transaction.forEach(aliases) { key, stored in
                    counts[try StoredAlias.open(stored, key: Data(key), sealer).entity, default: 0] += 1
                    return true
                }
                return counts
            }
            try environment.writer.withLock {
                try environment.writeInSteps(
                    commitsSteps: true, instrumentation: db.instrumentation, beforeEachCommit: { _ in }
                ) { write in
                    let writer = MigrationWriter(
                        write: write, environment: environment, sealer: sealer, token: "test", nonceCounter: 1 << 40)
                    try writer.renameAliasTargets(["Note": "Memo"])
                    #expect(try targets(write.transaction) == ["Memo": count])
                    #expect(try environment.read(targets) == ["Note": count], "none committed before the switch")
                }
            }
            #expect(try environment.read(targets) == ["Memo": count])
            try db.close()
        }
    }

    /// Records mapping code creates in any key order — ascending with the source, then descending from far above —
    /// are every one stored and found by key and index; one with a key already taken fails the step.
    @Test(arguments: [true, false])
    func recordsCreatedOutOfKeyOrderAreAllStored(encrypted: Bool) throws {
        for duplicate in [false, true] {
            try withTemporaryDirectory { directory in
                try seed(directory, encrypted: encrypted, count: 700)
                let plan = MigrationPlan(
                    models: [Model(version: 1, entities: [V1.Note.self]), Model(version: 2, entities: [V2.Note.self])],
                    mappings: [
                        MappingModel(
                            from: 1, to: 2,
                            [
                                .custom(
                                    "Note", to: "Note",
                                    policy: EntityMigrationPolicy(createDestinationRecords: { source, context in
                                        let id = try #require(try source.int64("id"))
                                        // With `duplicate`, once a key taken already.
                                        for key in [id, 100_000 - id] + (duplicate && id == 500 ? [3] : []) {
                                            var note = try context.newRecord("Note")
                                            try note.set("id", to: key)
                                            try note.set("text", to: "n\(key)")
                                            try note.set("tag", to: "t\(key % 7)")
                                            try note.set("words", to: 1)
                                            try context.insert(note)
                                        }
                                    }))
                            ])
                    ])
                let builder = builder(directory, 2, encrypted: encrypted, plan: plan)
                guard !duplicate else {
                    let error = expectError(.migrationFailed) { _ = try builder.create() }
                    #expect(
                        (error?.underlyingError as? PersistenceError)?.code == .duplicateKey,
                        "\(String(describing: error))")
                    return
                }
                let db = try builder.create()
                #expect(try db.count(V2.Note.self) == 1_400)
                for id in [1, 350, 700, 99_300, 99_650, 99_999] {
                    #expect(try db.recover(V2.Note.self, id: Int64(id))?.text == "n\(id)")
                }
                #expect(try db.count(V2.Note.self, where: Field("tag") == "t3") == 200)
                let verification = try db.verify()
                #expect(verification.isSound, "\(verification)")
            }
        }
    }
}
