internal import CLMDB
import Foundation
@_spi(PersistenceBackend) import PersistenceCore
@_spi(PersistenceBackend) import PersistenceEngine

/// Where one entity lives: its named database (primary key → record) and one named database per index
/// (index key → primary key; sorted duplicates unless unique).
final class EntityStore: Sendable {
    struct IndexStore: Sendable {
        let index: Index
        let positions: [Int]
        let dbi: MDB_dbi
        /// The database's physical name.
        let databaseName: String
    }

    let layout: RecordLayout
    let dbi: MDB_dbi
    /// The records database's physical name.
    let databaseName: String
    let indexes: [IndexStore]
    /// The databases of the entity's full-text indexes, by index name (none in a read-only opening).
    let fullText: [String: FullTextStore]
    private let aadPrefix: [UInt8]

    /// Opens (creating when missing) the entity's databases in `transaction`, each under the physical name `names`
    /// gives its logical name (see ``DatabaseNames``).
    init(
        layout: RecordLayout, names: (String) -> String = { $0 }, environment: Environment, transaction: Transaction
    ) throws {
        self.layout = layout
        let name = layout.entity.name
        databaseName = names(DatabaseNames.entity(name))
        dbi = try environment.database(named: databaseName, flags: 0, in: transaction)
        indexes = try layout.entity.indexes.map { index in
            let positions = try index.attributes.map { try layout.requirePosition(of: $0) }
            let flags = index.isUnique ? 0 : UInt32(MDB_DUPSORT)
            let databaseName = names(DatabaseNames.index(index, of: name))
            let dbi = try environment.database(named: databaseName, flags: flags, in: transaction)
            return IndexStore(index: index, positions: positions, dbi: dbi, databaseName: databaseName)
        }
        var fullText: [String: FullTextStore] = [:]
        for index in layout.fullTextIndexes {
            fullText[index.name] = try FullTextStore(
                name: index.name, environment: environment, transaction: transaction)
        }
        self.fullText = fullText
        aadPrefix = Array(name.utf8) + [0]
    }

    /// An entity's databases opened elsewhere (a read-only opening looks them up without creating them), with the
    /// indexes it found.
    init(layout: RecordLayout, dbi: MDB_dbi, databaseName: String, indexes: [IndexStore]) {
        self.layout = layout
        self.dbi = dbi
        self.databaseName = databaseName
        self.indexes = indexes
        fullText = [:]
        aadPrefix = Array(layout.entity.name.utf8) + [0]
    }

    /// Calls `body` with what a sealed record authenticates besides itself — the entity and the record's key —
    /// built on the stack: reads and writes need it once per record.
    func withAuthenticatedData<R>(for key: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) throws -> R)
        rethrows -> R
    {
        try withUnsafeTemporaryAllocation(byteCount: aadPrefix.count + key.count, alignment: 1) { buffer in
            aadPrefix.withUnsafeBytes { buffer.copyMemory(from: $0) }
            UnsafeMutableRawBufferPointer(rebasing: buffer[aadPrefix.count...]).copyMemory(from: key)
            return try body(UnsafeRawBufferPointer(buffer))
        }
    }

    /// The single-attribute index on `position`, if the entity has one.
    func index(on position: Int) -> IndexStore? {
        indexes.first { $0.positions == [position] }
    }
}

extension EntityLookup<EntityStore> {
    /// The databases of `type`'s records and indexes.
    /// - Throws: `unknownEntity` when the type is not part of the model.
    @inline(__always)
    func store<E: Entity>(for type: E.Type) throws -> EntityStore { all[try positions.position(of: type)] }
}
