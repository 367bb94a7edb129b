import Foundation
import PersistenceCore
import Testing

/// What a tool asks of a builder before it opens a store (the PersistenceCommands product): whether the store exists,
/// which migration opening it would run — read without running it — and, for a store of files, a copy to rehearse on.
enum PendingMigrationChecks {
    static let all: [MigrationConformanceCheck] = [
        MigrationConformanceCheck("pending: the migration opening would run is read without running it") {
            try pendingMigration($0)
        },
        MigrationConformanceCheck("pending: a store of files copies whole, and the copy migrates alone") {
            try copiesAStore($0)
        },
    ]

    static let v1 = Model(version: 1, entities: [ItemV1.Item.self])
    static let v2 = Model(version: 2, entities: [ItemV2.AddedAttributes.self])

    static func pendingMigration(_ stores: MigrationStores) throws {
        #expect(try stores.pendingMigration("Items", v2) == nil)
        #expect(try !stores.storeExists("Items", v2))
        // Asking made nothing.
        #expect(try stores.storeNames().isEmpty)

        try stores.seed("Items", v1) { try $0.create(ItemV1.items) }
        let before = try stores.fingerprint("Items")
        #expect(try stores.storeExists("Items", v2))
        #expect(try stores.pendingMigration("Items", v1) == nil)
        #expect(try stores.pendingMigration("Items", v2) == 1...2)
        // A version bump alone is pending too: opening writes the new version.
        #expect(try stores.pendingMigration("Items", Model(version: 3, entities: [ItemV1.Item.self])) == 1...3)
        // What opening would refuse, this refuses: a changed schema at the same version, a store newer than the model.
        expectError(.migrationRequired) {
            try stores.pendingMigration("Items", Model(version: 1, entities: [ItemV2.AddedAttributes.self]))
        }
        expectError(.invalidConfiguration) {
            try stores.pendingMigration("Items", Model(version: 0, entities: [ItemV1.Item.self]))
        }
        #expect(try stores.fingerprint("Items") == before)

        let opened = try stores.open("Items", v2)
        #expect(opened.report?.fromVersion == 1 && opened.report?.toVersion == 2)
        try opened.database.close()
        #expect(try stores.pendingMigration("Items", v2) == nil)
    }

    static func copiesAStore(_ stores: MigrationStores) throws {
        try stores.seed("Items", v1) { try $0.create(ItemV1.items) }
        let before = try stores.fingerprint("Items")
        let destination = stores.directory.appendingPathComponent("copy", isDirectory: true)
        try FileManager.default.createDirectory(at: destination, withIntermediateDirectories: false)
        // A server's stores aren't files: nothing to check.
        guard try stores.copyStore("Items", v1, into: destination) else { return }
        #expect(try stores.fingerprint("Items") == before)
        let copies = MigrationStores(backend: stores.backend, directory: destination)
        #expect(try copies.storeNames() == ["Items"])
        // The copy holds the records (its file's bytes may differ: SQLite's backup writes its own header).
        let copy = try copies.open("Items", v1)
        #expect(copy.report == nil)
        #expect(try copy.database.recover(ItemV1.Item.self, sortedBy: [.ascending("id")]) == ItemV1.items)
        try copy.database.close()
        let copied = try copies.fingerprint("Items")
        // A copy never replaces a store.
        expectError(.invalidArgument) { _ = try stores.copyStore("Items", v1, into: destination) }
        #expect(try copies.fingerprint("Items") == copied)

        // The copy migrates; the store stays as it was.
        let migrated = try copies.open("Items", v2)
        #expect(migrated.report?.toVersion == 2)
        #expect(try migrated.database.count(ItemV2.AddedAttributes.self) == ItemV1.items.count)
        try migrated.database.close()
        #expect(try stores.fingerprint("Items") == before)
        #expect(try stores.pendingMigration("Items", v2) == 1...2)

        // No store, no copy — and nothing made.
        let empty = stores.directory.appendingPathComponent("empty", isDirectory: true)
        try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: false)
        expectError(.notFound) { _ = try stores.copyStore("Missing", v1, into: empty) }
        #expect(try FileManager.default.contentsOfDirectory(atPath: empty.path).isEmpty)
    }
}
