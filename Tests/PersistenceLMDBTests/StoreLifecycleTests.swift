import Foundation
import PersistenceLMDB
import PersistenceTesting
import Testing

/// Closing, deleting and reopening LMDB stores beyond the conformance suite: the builder's own delete, shared
/// environments, an encrypted store reused under the same name with another passphrase.
struct StoreLifecycleTests {
    struct Item: Entity, Equatable {
        var id: Int64
        var label: String
    }

    func builder(_ directory: URL, passphrase: String = "first") -> LMDBBuilder {
        var builder = LMDBBuilder(databaseName: "Items", passphrase: passphrase, entities: [Item.self])
        builder.directory = directory
        builder.keyDerivation = testKeyDerivation
        return builder
    }

    @Test func aDeletedStoreIsReusedWithAnotherPassphrase() throws {
        try withTemporaryDirectory { directory in
            let first = builder(directory)
            let db = try first.create()
            try db.create(Item(id: 1, label: "secret"))
            expectError(.storeInUse) { try first.deleteStore() }
            try db.close()
            #expect(db.mapSize == 0)
            #expect(try first.deleteStore())
            let left = try FileManager.default.contentsOfDirectory(atPath: directory.path)
            #expect(left.isEmpty, "\(left)")
            // The name is free: a new store with a new key, no trace of the old one.
            let second = try builder(directory, passphrase: "second").create()
            #expect(try second.count(Item.self) == 0)
            try second.create(Item(id: 2, label: "new"))
            try second.close()
            expectError(.wrongPassphrase) { try first.create() }
            #expect(try builder(directory, passphrase: "second").create().recover(Item.self, id: 2)?.label == "new")
        }
    }

    @Test func closingOneOfTwoDatabasesKeepsTheSharedEnvironmentOpen() throws {
        try withTemporaryDirectory { directory in
            let one = try builder(directory).create()
            let two = try builder(directory).create()
            try one.create(Item(id: 1, label: "one"))
            try one.close()
            expectError(.closed) { try one.count(Item.self) }
            #expect(try two.recover(Item.self, id: 1)?.label == "one")
            try two.create(Item(id: 2, label: "two"))
            try two.close()
            // Reopened after both closed: a fresh environment on the same file.
            #expect(try builder(directory).create().count(Item.self) == 2)
        }
    }
}
