public import Foundation
public import PersistenceCore
import PersistenceLMDB

/// Persistence's LMDB backend, as the README shows it.
///
/// The builder's defaults, except the map: it starts as large as the raw baseline's, so no run measures map
/// growth (which re-runs a write block) instead of puts.
public class OursLMDBSubject {
    /// The passphrase of the encrypted stores (a benchmark's; never a real secret in source code).
    static let passphrase = "benchmark passphrase, not a secret"

    let db: LMDBDatabase

    init(directory: URL, encrypted: Bool) throws {
        var builder =
            encrypted
            ? LMDBBuilder(databaseName: "ours", passphrase: Self.passphrase, entities: [Person.self])
            : LMDBBuilder.unencrypted(databaseName: "ours", model: Model(version: 1, entities: [Person.self]))
        builder.directory = directory
        builder.initialMapSize = RawLMDBEnvironment.mapSize
        db = try builder.create()
    }

    public func put(_ people: [Person]) throws {
        try db.write { context in try context.create(people) }
    }

    public func get(ids: [Int64]) throws -> [Person] { try recoverEach(ids, in: db) }

    public func getEach(ids: [Int64]) throws -> [Person] {
        var people: [Person] = []
        people.reserveCapacity(ids.count)
        for id in ids {
            if let person = try db.recover(Person.self, id: id) { people.append(person) }
        }
        return people
    }

    public func scan() throws -> [Person] {
        try db.read { context in try context.recover(Person.self, query: Query()) }
    }

    /// R1: `reconcile` in one write, over every stored `Person` (no scope).
    public func reconcile(with incoming: [Person]) throws -> ChangeCounts {
        try db.write { context in try context.reconcile(Person.self, with: incoming) }
    }

    public func removeAll() throws {
        try db.write { context in try context.deleteAll(Person.self) }
    }
}

/// Persistence's LMDB backend with every value encrypted (the default Argon2id `.rfc9106` key derivation at open).
public final class OursEncryptedLMDBSubject: OursLMDBSubject, LMDBSubject {
    public static let implementation = "ours-encrypted"
    public required init(directory: URL) throws { try super.init(directory: directory, encrypted: true) }
}

/// Persistence's LMDB backend without encryption (`LMDBBuilder.unencrypted`).
public final class OursPlainLMDBSubject: OursLMDBSubject, LMDBSubject {
    public static let implementation = "ours-plain"
    public required init(directory: URL) throws { try super.init(directory: directory, encrypted: false) }
}
