import PersistenceCore

/// The version-2 record a migration workload makes of each version-1 ``Person`` — M2's ``MigratedPerson`` (the
/// migration block), S8's ``MappedPerson`` (the mapping model) — with what every implementation needs to migrate it
/// and read it back: ours' builder configuration, raw LMDB's value encoding and raw SQLite's table rebuild.
///
/// Every implementation of both workloads is written once over this, on each backend (``MigrationSubject``).
protocol MigratedRecord: Entity, Hashable where ID == Int64 {
    /// The value every migrated record gets for ``karma``.
    static var defaultKarma: Int { get }
    /// Added in version 2.
    var karma: Int { get }

    /// The workload that migrates to this record.
    static var workload: String { get }
    /// The model ours migrates to.
    static var version2: Model { get }
    /// Gives `builder` the app's migration: a plan or a block.
    static func configure(_ builder: inout some MigratingDatabaseBuilder)

    /// The version-2 record the migration makes of `person`; `nil` when it can't (never for the generator's).
    static func migrated(from person: Person) -> Self?
    /// The checksum a migration of the generator's records must read back.
    static func expectedChecksum(_ generator: PersonGenerator) throws -> Checksum
    /// Adds the record to `checksum` in the form ``expectedChecksum(_:)`` takes.
    func add(to checksum: inout Checksum)

    /// Appends raw LMDB's value bytes of `record` to `buffer` (emptied first, its capacity kept).
    static func encode(_ record: Self, into buffer: inout [UInt8])
    /// The record `id` whose raw LMDB value bytes are `bytes`.
    static func decode(id: Int64, _ bytes: UnsafeRawBufferPointer) throws -> Self

    /// Raw SQLite's table rebuild to this record's table.
    static var rebuiltTable: RebuiltPersonTable { get }
    /// The record in the row `statement` stands on, selected with ``RebuiltPersonTable/columns``; a column of the
    /// wrong storage class fails `verify`.
    static func read(_ statement: OpaquePointer, _ verify: Verifier) throws -> Self
}

extension MigratedRecord {
    static func expectedChecksum(_ generator: PersonGenerator) throws -> Checksum {
        var checksum = Checksum()
        for person in generator.people {
            guard let record = migrated(from: person) else {
                throw VerificationError(
                    workload: workload, implementation: "generator", message: "record \(person.id) can't be migrated")
            }
            record.add(to: &checksum)
        }
        return checksum
    }
}
