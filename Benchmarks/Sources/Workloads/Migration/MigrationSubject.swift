public import Foundation
import PersistenceLMDB

/// M2: migrating an encrypted store of N records from schema version 1 to 2 — `bio` renamed `about`, `karma`
/// added with a declared default — every record opened, rewritten and sealed again with a fresh nonce, in one
/// write transaction.
///
/// A migration consumes its store, so the parent seeds one store per implementation (``seed(directory:generator:)``,
/// in a child process) and gives each run a copy of it; each run migrates its copy in a child process of its own
/// (``migrate(directory:generator:)``), so its peak memory belongs to that migration alone.
public enum MigrationSubject: String, CaseIterable, Sendable {
    /// Raw C LMDB sealing each value with swift-crypto's one-shot AES-GCM, as the L workloads' `raw+aes-gcm`.
    case rawSealed = "raw+aes-gcm"
    /// Persistence's encrypted LMDB store, migrated by `LMDBBuilder.create()` with a migration block.
    case oursEncrypted = "ours-encrypted"

    /// The store's name (ours) and the store file's stem.
    static let databaseName = "ours"

    /// Writes the generator's records (version 1, streamed) to a new store in `directory`, in one transaction.
    public func seed(directory: URL, generator: PersonGenerator) throws {
        switch self {
        case .rawSealed:
            try RawLMDBStore<AESGCMValues>(directory: directory).put(streaming: generator.people)
        case .oursEncrypted:
            try Self.oursBuilder(directory: directory, migrating: false).create().write { context in
                try context.create(generator.people)
            }
        }
    }

    /// Migrates the store in `directory` — seeded with `generator`'s records — timing the migration alone, then
    /// reads every record back for the parent to verify.
    ///
    /// Timed: for ours, `create()` with the version-2 model and the migration block (opening and its Argon2id key
    /// derivation included); for raw, opening the environment and the one write transaction that rewrites every
    /// record. The kernel's peak counter is reset when the pass over the records begins (for ours, at the
    /// migration's first progress report), so the peak leaves out opening.
    /// - Throws: ``VerificationError`` when a record looked up by id or name isn't what the generator predicts;
    ///   the implementation's errors.
    public func migrate(directory: URL, generator: PersonGenerator) throws -> MigrationReport {
        let sampler = MigrationSampler()
        var report = MigrationReport()
        var checksum = Checksum()
        func readBack(_ person: MigratedPerson) {
            checksum.add(person.original)
            if person.karma != MigratedPerson.defaultKarma { report.wrongDefaults += 1 }
        }
        switch self {
        case .rawSealed:
            sampler.start()
            let (store, seconds) = try Stopwatch.time {
                let store = try RawLMDBStore<AESGCMValues>(directory: directory)
                sampler.beginPass()
                _ = try store.migrate(karma: MigratedPerson.defaultKarma, sampler: sampler)
                return store
            }
            (report.memory, report.secondsBeforePass, report.secondsInPass) = sampler.finish()
            report.memory.seconds = seconds
            try store.forEachMigrated(readBack)
        case .oursEncrypted:
            var builder = Self.oursBuilder(directory: directory, migrating: true)
            builder.migrationProgress = { progress in
                guard progress.stage == .rewriting else { return sampler.sample() }
                if progress.completed == 0 { sampler.beginPass() }
                sampler.sample()
                if progress.completed == progress.total { sampler.endPass() }
            }
            sampler.start()
            let (db, seconds) = try Stopwatch.time { try builder.create() }
            (report.memory, report.secondsBeforePass, report.secondsInPass) = sampler.finish()
            report.memory.seconds = seconds
            try db.read { context in try context.forEach(MigratedPerson.self, query: Query(), readBack) }
            report.spotChecked = try Self.spotCheck(db, generator: generator)
        }
        report.memory.rows = checksum.count
        report.memory.digest = String(checksum.digest, radix: 16)
        return report
    }

    /// Ours, version 1 (``Person``) or version 2 (``MigratedPerson``, with the migration block), with the map as
    /// large as the raw baseline's.
    private static func oursBuilder(directory: URL, migrating: Bool) -> LMDBBuilder {
        let model =
            migrating
            ? Model(version: 2, entities: [MigratedPerson.self]) : Model(version: 1, entities: [Person.self])
        var builder = LMDBBuilder(databaseName: databaseName, passphrase: OursLMDBSubject.passphrase, model: model)
        builder.directory = directory
        builder.initialMapSize = RawLMDBEnvironment.mapSize
        if migrating {
            builder.migrationBlock = { migration, oldSchemaVersion in
                if oldSchemaVersion < 2 {
                    try migration.renameProperty(onType: "Person", from: "bio", to: "about")
                }
            }
        }
        return builder
    }

    /// Looks up a sample of records by id and by the indexed `name` (rebuilt by the migration) and checks them
    /// against the generator. Returns how many records were checked.
    private static func spotCheck(_ db: LMDBDatabase, generator: PersonGenerator) throws -> Int {
        let verify = Verifier(workload: "M2", implementation: MigrationSubject.oursEncrypted.rawValue)
        let ids = generator.randomIDs(min(100, generator.count), stream: 3)
        let nameNumbers = generator.randomNameNumbers(min(20, generator.distinctNames), stream: 4)
        return try db.read { context in
            var checked = 0
            for id in ids {
                let found = try context.recover(MigratedPerson.self, id: id)
                try verify.expect(
                    found == MigratedPerson(migrating: generator.person(id: id)), "record \(id) read back by id")
                checked += 1
            }
            for number in nameNumbers {
                let name = generator.name(number: number)
                let found = try context.recover(MigratedPerson.self, key: "name", value: name)
                let expected = generator.ids(withNameNumber: number).map {
                    MigratedPerson(migrating: generator.person(id: $0))
                }
                try verify.expect(
                    Set(found) == Set(expected) && found.count == expected.count,
                    "records named \(name): expected \(expected.count), found \(found.count) or other records")
                checked += found.count
            }
            return checked
        }
    }
}
