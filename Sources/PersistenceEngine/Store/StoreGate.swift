package import Foundation
@_spi(PersistenceBackend) package import PersistenceCore

/// The one decision every backend makes when it opens a store: from what the store's metadata says (its format, the
/// schema and schema version stored with the data) and the model, whether to create the store, open it, migrate it,
/// or refuse — with the same answer and the same words on SQLite, LMDB and PostgreSQL.
///
/// Each backend reads its metadata in its own way (a table, LMDB's meta database) and acts on the decision in its own
/// transaction; what the metadata *means* is decided here.
package enum StoreGate {
    /// What a store's metadata holds, as a backend read it.
    package struct Metadata: Equatable {
        /// The store's format version; `nil` when there is no store yet.
        package var format: Int64?
        /// The stored schema's JSON (`[EntityDescription]`); `nil` when missing.
        package var schema: Data?
        /// The stored schema version; `nil` when missing.
        package var version: Int?

        package init(format: Int64?, schema: Data?, version: Int?) {
            self.format = format
            self.schema = schema
            self.version = version
        }
    }

    /// What the opening does.
    package enum Decision {
        /// There is no store: create it.
        case create
        /// The store is at the model's version, with the model's schema (attribute, index and entity order aside).
        case open(stored: [EntityDescription])
        /// The store was written with an older version: migrate it from `version`, whose schema is `stored`.
        case migrate(from: Int, stored: [EntityDescription])
    }

    /// Decides what opening a store with `metadata` means for `model`, whose entities are `current`.
    /// - Parameter formats: The format versions this version of the library reads.
    /// - Throws: Before anything is changed — ``PersistenceError/Code/corrupt`` for metadata without a valid
    ///   format, a readable schema or a schema version; ``PersistenceError/Code/unsupportedFormatVersion`` for a
    ///   newer format; ``PersistenceError/Code/invalidConfiguration`` for a store of a newer schema version (an older
    ///   app must not write it as if it were its own); ``PersistenceError/Code/migrationRequired`` for a changed
    ///   schema at the same version.
    package static func decide(
        _ metadata: Metadata, formats: ClosedRange<Int64>, model: Model, current: [EntityDescription]
    ) throws -> Decision {
        guard let format = metadata.format else { return .create }
        try check(format: format, formats: formats)
        guard let json = metadata.schema,
            let stored = try? JSONDecoder().decode([EntityDescription].self, from: json)
        else {
            throw PersistenceError(.corrupt, "the store's metadata has no readable schema")
        }
        // Every store has had a schema version from its creation: a missing one is damage, never version 0.
        guard let version = metadata.version, version >= 0 else {
            throw PersistenceError(.corrupt, "the store's metadata has no valid schema version: the store is damaged")
        }
        guard version <= model.version else {
            throw PersistenceError(
                .invalidConfiguration,
                "the store has schema version \(version), newer than this model's \(model.version)")
        }
        guard version < model.version else {
            guard sameSchema(stored, current) else {
                throw PersistenceError(
                    .migrationRequired,
                    EntityDescription.difference(stored: stored, current: current)
                        + "; the model's schema version is the store's (\(version)): bump it (model.version) to "
                        + "migrate")
            }
            return .open(stored: stored)
        }
        return .migrate(from: version, stored: stored)
    }

    /// Checks a store's format version, before anything else of the store is read (an encrypted store's keys, say).
    /// - Throws: ``PersistenceError/Code/corrupt`` below `formats`, ``PersistenceError/Code/unsupportedFormatVersion``
    ///   above.
    package static func check(format: Int64, formats: ClosedRange<Int64>) throws {
        guard format >= formats.lowerBound else {
            throw PersistenceError(.corrupt, "the store's metadata has no valid format version")
        }
        guard format <= formats.upperBound else {
            throw PersistenceError(
                .unsupportedFormatVersion,
                "the store has format version \(format); this version of Persistence reads up to "
                    + "\(formats.upperBound)")
        }
    }

    /// Whether two schemas are the same, the order of entities, attributes and indexes aside.
    package static func sameSchema(_ stored: [EntityDescription], _ current: [EntityDescription]) -> Bool {
        let canonical = { (schema: [EntityDescription]) in schema.map(\.normalized).sorted { $0.name < $1.name } }
        return canonical(stored) == canonical(current)
    }

    /// The stored form of a schema: its entities' descriptions as JSON, keys sorted.
    package static func schemaJSON(_ descriptions: [EntityDescription]) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return try encoder.encode(descriptions)
    }
}
