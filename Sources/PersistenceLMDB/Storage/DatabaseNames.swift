internal import CLMDB
import Foundation
import PersistenceCore

/// The physical names of a store's named databases.
///
/// Each database has a logical name — an entity's records `entity:<entity>`, each of its indexes `index:<index name>`
/// — which is its physical name too, until a migration replaces it: a migration writes the new databases beside the
/// old ones, under names of its own (`<logical>@<token>`, its *shadows*), in transactions that each stay small, and
/// then switches to them in one small write of this map (LMDB can't rename a database). The map holds only the names
/// that differ; it is the metadata's `databases` record, JSON, and a store that has one is format 4 (older versions
/// would read the logical names, and must refuse it instead).
struct DatabaseNames: Sendable, Equatable {
    /// Physical names by logical name, for the databases whose names differ.
    private(set) var remapped: [String: String]

    init(remapped: [String: String] = [:]) { self.remapped = remapped }

    static func entity(_ name: String) -> String { "entity:" + name }

    static func index(_ index: Index, of entity: String) -> String { "index:" + index.name(in: entity) }

    /// Whether a physical name is one of our entity or index databases (as opposed to `meta`, `aliases`, or one a
    /// later version keeps).
    static func isEntityOrIndex(_ name: String) -> Bool { name.hasPrefix("entity:") || name.hasPrefix("index:") }

    /// The name of the database that holds what `logical` names.
    func physical(_ logical: String) -> String { remapped[logical] ?? logical }

    /// The logical name of a database by its physical name (itself unless the map renames it).
    func logical(_ physical: String) -> String {
        remapped.first { $0.value == physical }?.key ?? physical
    }

    /// Makes `logical` name the database `physical`.
    mutating func map(_ logical: String, to physical: String) {
        remapped[logical] = logical == physical ? nil : physical
    }

    /// Forgets what `logical` named (its database is gone).
    mutating func remove(_ logical: String) { remapped[logical] = nil }

    /// The physical names of the databases a schema's entities use: their records and their indexes.
    func physicalNames(of schema: [EntityDescription]) -> Set<String> {
        Set(
            schema.flatMap { entity in
                [physical(Self.entity(entity.name))]
                    + entity.indexes.map { physical(Self.index($0, of: entity.name)) }
            })
    }

    /// The map the metadata holds; empty when it holds none.
    /// - Throws: `corrupt` for a record that isn't one.
    static func read(_ meta: MDB_dbi, _ transaction: Transaction) throws -> DatabaseNames {
        guard let json = try StoreMetadata.read(.databases, meta, transaction) else { return DatabaseNames() }
        guard let remapped = try? JSONDecoder().decode([String: String].self, from: json),
            remapped.allSatisfy({ isEntityOrIndex($0.key) && isEntityOrIndex($0.value) })
        else {
            throw PersistenceError(.corrupt, "the store's map of database names is damaged")
        }
        return DatabaseNames(remapped: remapped)
    }

    /// Writes the map to the metadata (removing the record when it is empty).
    func write(_ meta: MDB_dbi, _ transaction: Transaction) throws {
        guard !remapped.isEmpty else {
            try StoreMetadata.delete(.databases, meta, transaction)
            return
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        try StoreMetadata.write(.databases, encoder.encode(remapped), meta, transaction)
    }
}
