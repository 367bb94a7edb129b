public import PersistenceCore

/// One record's state as the sync protocol carries it: its values, or its deletion, and the server's version of it.
///
/// Pulled changes carry the server's current state; pushed ones the client's, with the server version the client
/// last saw of the record (its *base*: the server detects conflicting edits by it).
public struct SyncChange: Sendable, Hashable, Codable {
    /// The record's entity name.
    public var entity: String
    /// The record's primary key.
    public var key: Value
    /// The record's values by attribute name, or `nil` when the record is deleted.
    public var values: [String: Value]?
    /// The server's version of the record: in a pull, the version sent; in a push, the one the client last saw (0:
    /// none).
    public var version: Int64

    /// Creates a change.
    public init(entity: String, key: Value, values: [String: Value]?, version: Int64) {
        self.entity = entity
        self.key = key
        self.values = values
        self.version = version
    }

    /// Whether the change deletes the record.
    public var isDeletion: Bool { values == nil }
}

extension SyncChange {
    /// A record's change from its stored record.
    package init(record: Record, version: Int64) {
        self.init(
            entity: record.layout.entity.name, key: record.primaryKey, values: Self.values(of: record),
            version: version)
    }

    /// A record's values by attribute name.
    package static func values(of record: Record) -> [String: Value] {
        Dictionary(uniqueKeysWithValues: zip(record.layout.names, record.values))
    }

    /// The change's values as a record of `layout`: every attribute the layout has must be present, and no other.
    /// - Throws: `unknownAttribute` for an attribute the layout doesn't have,
    ///   `invalidValue` for a missing one or a key that isn't the record's.
    package func record(of layout: RecordLayout) throws -> Record? {
        guard let values else { return nil }
        var record = Record(layout: layout)
        for (name, value) in values {
            try record.set(name, to: value)
        }
        guard values.count == layout.names.count else {
            let missing = layout.names.filter { values[$0] == nil }
            throw PersistenceError(
                .invalidValue,
                "a synced \(entity) record lacks attribute(s) \(missing.joined(separator: ", ")): the two models differ"
            )
        }
        guard record.values[layout.primaryKeyIndex] == key else {
            throw PersistenceError(.invalidValue, "a synced \(entity) record's key isn't the one it was sent under")
        }
        return record
    }
}
