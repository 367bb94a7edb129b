import Foundation
import PersistenceTesting
import Synchronization
import Testing

@testable import PersistenceLMDB

/// Renames declared on the entity types (`previousAttributeNames`, `previousName`) are honoured by LMDB's migration
/// as by the SQL backends' — with or without a migration block. (Before, LMDB read a renamed attribute back as `nil`
/// and a renamed entity's records were dropped, with no error.) The suite's declarative checks run the same model on
/// every backend; these add what only LMDB has: the block's view of renamed data, and 100-record stores.
struct DeclaredRenameTests {
    enum V1 {
        struct Contact: Entity, Equatable {
            var id: Int64
            var handle: String?
            static let indexes: [Index] = [.on("handle")]
        }
        struct Tag: Entity, Equatable {
            var id: Int64
            var title: String
            static let indexes: [Index] = [.unique("title")]
        }
    }

    enum V2 {
        struct Contact: Entity, Equatable {
            var id: Int64
            var nickname: String?
            static let indexes: [Index] = [.on("nickname")]
            static let previousAttributeNames = ["nickname": "handle"]
        }
        struct Label: Entity, Equatable {
            var id: Int64
            var title: String
            var color: String
            static let indexes: [Index] = [.unique("title")]
            static let previousName = "Tag"
            static let defaultValues: [String: Value] = ["color": "grey"]
        }
    }

    func builder(_ directory: URL, _ model: Model, encrypted: Bool, block: MigrationBlock? = nil) -> LMDBBuilder {
        var builder =
            encrypted
            ? LMDBBuilder(databaseName: "Contacts", passphrase: "contacts", model: model)
            : LMDBBuilder.unencrypted(databaseName: "Contacts", model: model)
        builder.directory = directory
        builder.keyDerivation = testKeyDerivation
        builder.migrationBlock = block
        return builder
    }

    func seed(_ directory: URL, encrypted: Bool) throws {
        let db = try builder(
            directory, Model(version: 1, entities: [V1.Contact.self, V1.Tag.self]), encrypted: encrypted
        )
        .create()
        try db.create((1...100).map { V1.Contact(id: $0, handle: $0 % 10 == 0 ? nil : "h\($0)") })
        try db.create((1...100).map { V1.Tag(id: $0, title: "tag \($0)") })
        try db.close()
    }

    static let v2 = Model(version: 2, entities: [V2.Contact.self, V2.Label.self])

    func expectMigrated(_ db: LMDBDatabase) throws {
        let contacts = try db.recover(V2.Contact.self)
        #expect(contacts == (1...100).map { V2.Contact(id: $0, nickname: $0 % 10 == 0 ? nil : "h\($0)") })
        #expect(try db.recover(V2.Contact.self, where: Field("nickname") == "h42").map(\.id) == [42])
        let labels = try db.recover(V2.Label.self)
        #expect(labels == (1...100).map { V2.Label(id: $0, title: "tag \($0)", color: "grey") })
        #expect(try db.recover(V2.Label.self, where: Field("title") == "tag 7").map(\.id) == [7])
        expectError(.uniqueViolation) { try db.create(V2.Label(id: 101, title: "tag 7", color: "red")) }
        let report = try db.verify()
        #expect(report.isSound, "\(report)")
        #expect(report.entitiesChecked == 2, "the old entity's databases are gone")
    }

    @Test(arguments: [true, false])
    func renamesWithoutABlock(encrypted: Bool) throws {
        try withTemporaryDirectory { directory in
            try seed(directory, encrypted: encrypted)
            let db = try builder(directory, Self.v2, encrypted: encrypted).create()
            try expectMigrated(db)
            let changes = db.migrationReport?.changes ?? []
            #expect(changes.contains("1 → 2: entity 'Tag' renamed 'Label'"), "\(changes)")
            #expect(changes.contains("1 → 2: 'Contact.handle' renamed 'nickname'"), "\(changes)")
            #expect(db.migrationReport?.steps.map(\.kind) == [.inferred])
            #expect(db.migrationReport?.entities.map(\.recordsAfter) == [100, 100])
        }
    }

    @Test(arguments: [true, false])
    func aBlockSeesRenamedValuesAndMayRepeatTheDeclaration(encrypted: Bool) throws {
        try withTemporaryDirectory { directory in
            try seed(directory, encrypted: encrypted)
            let seen = Mutex<[String?]>([])
            let db = try builder(directory, Self.v2, encrypted: encrypted) { migration, _ in
                // A block ported from Realm renames what the model declares too: the same rename, accepted.
                try migration.renameProperty(onType: "Contact", from: "handle", to: "nickname")
                try migration.enumerateObjects(ofType: "Contact") { old, new in
                    let nickname = try new?.string("nickname")
                    #expect(try old?.string("handle") == nickname)
                    seen.withLock { $0.append(nickname) }
                }
                // The renamed entity answers to either name.
                var titles: [String] = []
                try migration.enumerateObjects(ofType: "Tag") { _, new in
                    if let title = try new?.string("title") { titles.append(title) }
                }
                #expect(titles.count == 100)
            }.create()
            #expect(seen.withLock { $0.count } == 100)
            #expect(seen.withLock { $0.compactMap { $0 }.count } == 90)
            try expectMigrated(db)
            #expect(db.migrationReport?.steps.map(\.kind) == [.mapped])
        }
    }

    @Test func anEntityTwoEntitiesClaimIsRefusedBeforeAnyChange() throws {
        struct Badge: Entity {
            var id: Int64
            var title: String
            static let previousName = "Tag"
        }
        try withTemporaryDirectory { directory in
            try seed(directory, encrypted: true)
            let before = try Data(contentsOf: directory.appendingPathComponent("Contacts.lmdb"))
            let model = Model(version: 2, entities: [V2.Contact.self, V2.Label.self, Badge.self])
            let error = expectError(.invalidSchema) { try builder(directory, model, encrypted: true).create() }
            #expect(error?.message.contains("'Tag'") == true, "\(String(describing: error))")
            #expect(try Data(contentsOf: directory.appendingPathComponent("Contacts.lmdb")) == before)
        }
    }
}
