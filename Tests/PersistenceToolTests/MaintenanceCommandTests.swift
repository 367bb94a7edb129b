import Foundation
import PersistenceCore
@_spi(PersistenceBackend) import PersistenceEngine
import PersistenceLMDB
import PersistenceSQLite
import PersistenceTestProcesses
import PersistenceTesting
import Testing

/// `rekey` and `compact` through the binary: what each changes, what it keeps (the content hash), and the exit
/// status of each refusal.
@Suite(.serialized)
struct MaintenanceCommandTests {
    static let old = "correct horse battery staple"
    static let new = "NEW-passphrase-after-rekey-91c"
    static let environment = ["OLD_PASSPHRASE": old, "NEW_PASSPHRASE": new, "WRONG_PASSPHRASE": "not it"]

    /// An LMDB store made by the app's builder, with `count` tags of long labels.
    func lmdbStore(in directory: URL, name: String, passphrase: String?, count: Int = 40) throws -> URL {
        var builder =
            passphrase.map { LMDBBuilder(databaseName: name, passphrase: $0, entities: [Gadget.self, Tag.self]) }
            ?? LMDBBuilder.unencrypted(databaseName: name, entities: [Gadget.self, Tag.self])
        builder.directory = directory
        builder.keyDerivation = .owaspMinimum
        let db = try builder.create()
        try db.create(StoreToolTests.gadgets)
        try db.create(Self.tags(count))
        try db.close()
        return directory.appendingPathComponent(name + ".lmdb")
    }

    static func tags(_ count: Int) -> [Tag] {
        (0..<count).map { Tag(id: String(format: "tag-%06d", $0), label: String(repeating: "label \($0) ", count: 20)) }
    }

    func hash(_ store: URL, passphraseEnv: String? = nil) throws -> String {
        let arguments = ["hash", store.path, "--quiet"] + (passphraseEnv.map { ["--passphrase-env", $0] } ?? [])
        let run = try Tool.run(arguments, environment: Self.environment)
        #expect(run.status == 0, "\(run.errors)")
        return run.output.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test("PERSISTENCE_LMDB_SEMAPHORE_PREFIX reaches every LMDB opening: refused where LMDB names no semaphores")
    func semaphorePrefixFromTheEnvironment() throws {
        try withTemporaryDirectory { directory in
            let store = try lmdbStore(in: directory, name: "Sealed", passphrase: Self.old)
            var environment = Self.environment
            environment["PERSISTENCE_LMDB_SEMAPHORE_PREFIX"] = "group.notes"
            // The default build links the system's liblmdb, whose locks are mutexes: no names to prefix. (The
            // vendored LMDB's use of the prefix is tested in the LMDB suite, on LMDBStoredStore.)
            for arguments in [
                ["hash", store.path, "--passphrase-env", "OLD_PASSPHRASE"],
                ["rekey", store.path, "--passphrase-env", "OLD_PASSPHRASE", "--new-passphrase-env", "NEW_PASSPHRASE"],
            ] {
                let run = try Tool.run(arguments, environment: environment)
                #expect(run.status != 0 && run.errors.contains("semaphorePrefix"), "\(arguments[0]): \(run.errors)")
            }
            #expect(try hash(store, passphraseEnv: "OLD_PASSPHRASE").hasPrefix("sha256:"), "the store is unchanged")
        }
    }

    @Test func rekeyChangesThePassphraseKeepsTheContentAndRefusesWhatItCannotDo() throws {
        try withTemporaryDirectory { directory in
            let store = try lmdbStore(in: directory, name: "Sealed", passphrase: Self.old)
            let before = try hash(store, passphraseEnv: "OLD_PASSPHRASE")
            #expect(before.hasPrefix("sha256:"))

            // A wrong current passphrase: 77, and not one byte of the store changes.
            let bytes = try Data(contentsOf: store)
            let wrong = try Tool.run(
                [
                    "rekey", store.path, "--passphrase-env", "WRONG_PASSPHRASE", "--new-passphrase-env",
                    "NEW_PASSPHRASE",
                ], environment: Self.environment)
            #expect(wrong.status == 77, "\(wrong.errors)")
            #expect(try Data(contentsOf: store) == bytes)

            let rekey = try Tool.run(
                [
                    "rekey", store.path, "--passphrase-env", "OLD_PASSPHRASE", "--new-passphrase-env", "NEW_PASSPHRASE",
                    "--key-derivation", "owasp-scrypt",
                ], environment: Self.environment)
            #expect(rekey.status == 0, "\(rekey.errors)")
            #expect(rekey.output.contains("changed the passphrase") && rekey.output.contains("scrypt"))
            for text in [rekey.output, rekey.errors, wrong.output, wrong.errors] {
                #expect(!text.contains(Self.old) && !text.contains(Self.new) && !text.contains("not it"))
            }

            // The old passphrase no longer opens it; the new one does, with the same content.
            let old = try Tool.run(
                ["hash", store.path, "--passphrase-env", "OLD_PASSPHRASE"], environment: Self.environment)
            #expect(old.status == 77, "\(old.errors)")
            #expect(try hash(store, passphraseEnv: "NEW_PASSPHRASE") == before)
            var builder = LMDBBuilder(databaseName: "Sealed", passphrase: Self.new, entities: [Gadget.self, Tag.self])
            builder.directory = directory
            let db = try builder.create()
            #expect(try db.recover(Gadget.self, sortedBy: [.ascending("id")]) == StoreToolTests.gadgets)
            try db.close()

            // Only encrypted LMDB stores have a passphrase: 64 for the others, before any passphrase is read.
            let plain = try lmdbStore(in: directory, name: "Plain", passphrase: nil)
            let sqlite = try StoreToolTests().appStore(in: directory)
            for other in [plain, sqlite] {
                let refused = try Tool.run(
                    ["rekey", other.path, "--new-passphrase-env", "NEW_PASSPHRASE"], environment: Self.environment)
                #expect(refused.status == 64, "\(refused.errors)")
                #expect(refused.errors.contains("not encrypted"))
            }
            let missing = try Tool.run(
                ["rekey", directory.appendingPathComponent("None.lmdb").path, "--passphrase-env", "OLD_PASSPHRASE"],
                environment: Self.environment)
            #expect(missing.status == 66)
        }
    }

    @Test func compactShrinksAnLMDBStoreWithDeletedRecordsAndKeepsItsContent() throws {
        try withTemporaryDirectory { directory in
            for passphrase in [nil, Self.old] {
                let name = passphrase == nil ? "Plain" : "Sealed"
                let store = try lmdbStore(in: directory, name: name, passphrase: passphrase, count: 20_000)
                var builder =
                    passphrase.map {
                        LMDBBuilder(databaseName: name, passphrase: $0, entities: [Gadget.self, Tag.self])
                    } ?? LMDBBuilder.unencrypted(databaseName: name, entities: [Gadget.self, Tag.self])
                builder.directory = directory
                let db = try builder.create()
                try db.write { _ = try $0.delete(Tag.self, where: Field("id") > "tag-000500") }

                // Open in another process (this one): refused, 78, nothing changed.
                let bytes = try Data(contentsOf: store)
                let busy = try Tool.run(["compact", store.path])
                #expect(busy.status == 78, "\(busy.errors)")
                #expect(busy.errors.contains("open in another process"))
                #expect(try Data(contentsOf: store) == bytes)
                try db.close()

                let env = passphrase == nil ? nil : "OLD_PASSPHRASE"
                let before = try hash(store, passphraseEnv: env)
                let sizeBefore = StoredStoreSize.fileSize(store)
                // The encrypted store compacts without its passphrase (checked byte for byte only).
                let run = try Tool.run(["compact", store.path], environment: Self.environment)
                #expect(run.status == 0, "\(run.errors)")
                let sizeAfter = StoredStoreSize.fileSize(store)
                print("\(name).lmdb: \(sizeBefore) → \(sizeAfter) bytes")
                #expect(sizeAfter < sizeBefore / 4)
                #expect(run.output.contains(passphrase == nil ? "content hash \(before) unchanged" : "byte for byte"))
                #expect(try hash(store, passphraseEnv: env) == before)

                // With the passphrase, the content hash is checked too; a second compaction finds little to give.
                if passphrase != nil {
                    let again = try Tool.run(
                        ["compact", store.path, "--passphrase-env", "OLD_PASSPHRASE"], environment: Self.environment)
                    #expect(again.status == 0, "\(again.errors)")
                    #expect(again.output.contains("content hash \(before) unchanged"))
                }

                // The app's own builder opens the compacted store, reads and writes it.
                let reopened = try builder.create()
                #expect(try reopened.count(Tag.self) == 501)
                #expect(try reopened.recover(Gadget.self, sortedBy: [.ascending("id")]) == StoreToolTests.gadgets)
                try reopened.create(Tag(id: "after", label: "written after compaction"))
                #expect(try reopened.count(Tag.self) == 502)
                try reopened.close()
                let names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
                #expect(!names.contains { $0.hasSuffix("-partial") })
            }
        }
    }

    @Test func compactShrinksAnSQLiteStoreAndRefusesOneBeingWritten() throws {
        try withTemporaryDirectory { directory in
            var builder = SQLiteBuilder(databaseName: "Shop", entities: [Gadget.self, Tag.self])
            builder.directory = directory
            let db = try builder.create()
            try db.create(StoreToolTests.gadgets)
            try db.create(Self.tags(20_000))
            try db.write { _ = try $0.delete(Tag.self, where: Field("id") > "tag-000500") }
            let store = directory.appendingPathComponent("Shop.sqlite")

            // Another connection in the middle of a write: refused at once, 78.
            let busy = try db.write { context -> Tool.Result in
                try context.create(Tag(id: "pending", label: "uncommitted"))
                return try Tool.run(["compact", store.path])
            }
            #expect(busy.status == 78, "\(busy.errors)")
            try db.close()

            let before = try hash(store)
            let sizeBefore =
                StoredStoreSize.fileSize(store)
                + StoredStoreSize.fileSize(
                    URL(fileURLWithPath: store.path + "-wal"))
            let run = try Tool.run(["compact", store.path])
            #expect(run.status == 0, "\(run.errors)")
            #expect(run.output.contains("content hash \(before) unchanged"))
            let sizeAfter = StoredStoreSize.fileSize(store)
            print("Shop.sqlite: \(sizeBefore) → \(sizeAfter) bytes")
            #expect(sizeAfter < sizeBefore / 4)
            #expect(try hash(store) == before)
            let reopened = try builder.create()
            #expect(try reopened.count(Tag.self) == 502)
            try reopened.close()
            #expect(try Tool.run(["compact", directory.appendingPathComponent("None.sqlite").path]).status == 66)
        }
    }
}
