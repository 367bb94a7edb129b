import Foundation
@_spi(PersistenceBackend) import PersistenceCore
import Synchronization

/// One entity's records in one version of a store: a value type, so a transaction's copy costs a few retains and a
/// write's changes never reach another transaction's copy (the dictionaries copy themselves on a write's first
/// change).
struct MemoryTable: Sendable {
    /// The attributes the records were written with, in their order: a model that declares the entity otherwise
    /// can't read them without a migration.
    let attributes: [AttributeDescription]
    /// The position of the primary key in each record's values.
    let primaryKeyIndex: Int
    /// The records, in layout order, by their primary key's stored value.
    private(set) var records: [Value: [Value]] = [:]
    /// The entity's unique indexes: each holds the primary key of the record that has its values.
    private(set) var uniques: [UniqueIndex]
    /// The primary keys in order, sorted once for each set of keys: inserts and deletes start a new one.
    private var order = KeyOrder()

    /// An empty table of the entity `layout` describes.
    init(_ layout: RecordLayout) {
        attributes = layout.entity.attributes
        primaryKeyIndex = layout.primaryKeyIndex
        uniques = Self.uniqueIndexes(of: layout)
    }

    /// The unique indexes `layout`'s entity declares, empty.
    private static func uniqueIndexes(of layout: RecordLayout) -> [UniqueIndex] {
        layout.entity.indexes.filter(\.isUnique).map { index in
            UniqueIndex(
                name: index.name(in: layout.entity.name), attributes: index.attributes,
                positions: index.attributes.compactMap(layout.position(of:)))
        }
    }

    /// Whether records of this table can be read and written through `layout`: the same attributes, in the same
    /// order, with the same types and optionality.
    func fits(_ layout: RecordLayout) -> Bool { attributes == layout.entity.attributes }

    /// This table with the unique indexes `layout` declares, rebuilt from the records when they differ from its own
    /// (a model may add or drop an index without a migration).
    /// - Throws: `uniqueViolation` when two records hold the values of a new unique index.
    func indexed(as layout: RecordLayout) throws -> MemoryTable {
        let wanted = Self.uniqueIndexes(of: layout)
        guard wanted.map(\.attributes) != uniques.map(\.attributes) else { return self }
        var table = self
        table.uniques = wanted
        for (key, values) in records {
            try table.checkUnique(values, key: key, entity: layout.entity.name)
            table.addEntries(values, key: key)
        }
        return table
    }

    /// The primary keys of every record, in primary-key order.
    var orderedKeys: [Value] { order.keys(of: records) }

    // MARK: - Changes

    /// Adds a record.
    /// - Throws: `duplicateKey` when its primary key is stored, `uniqueViolation` when a unique index holds its
    ///   values for another record; nothing changed either way.
    mutating func insert(_ values: [Value], entity: String) throws {
        let key = values[primaryKeyIndex]
        guard records[key] == nil else {
            throw PersistenceError(.duplicateKey, "a '\(entity)' record has that primary key")
        }
        try checkUnique(values, key: key, entity: entity)
        records[key] = values
        addEntries(values, key: key)
        order = KeyOrder()
    }

    /// Replaces the stored record `old` (whose primary key `values` holds) with `values`.
    /// - Throws: `uniqueViolation`, with nothing changed.
    mutating func replace(_ old: [Value], with values: [Value], entity: String) throws {
        let key = values[primaryKeyIndex]
        try checkUnique(values, key: key, entity: entity)
        removeEntries(old)
        records[key] = values
        addEntries(values, key: key)
    }

    /// Removes the record whose primary key's stored value is `key`, and returns it; `nil` when there is none.
    mutating func remove(key: Value) -> [Value]? {
        guard let old = records.removeValue(forKey: key) else { return nil }
        removeEntries(old)
        order = KeyOrder()
        return old
    }

    /// Removes every record.
    mutating func removeAll() {
        records.removeAll()
        for index in uniques.indices { uniques[index].owners.removeAll() }
        order = KeyOrder()
    }

    // MARK: - Unique indexes

    /// Refuses values that a unique index holds for another record than the one with `key`.
    private func checkUnique(_ values: [Value], key: Value, entity: String) throws {
        for index in uniques {
            guard let entry = index.entry(of: values), let owner = index.owners[entry], owner != key else { continue }
            throw PersistenceError(
                .uniqueViolation,
                "a '\(entity)' record already has those values in \(index.attributes.joined(separator: ", "))")
        }
    }

    private mutating func addEntries(_ values: [Value], key: Value) {
        for index in uniques.indices {
            if let entry = uniques[index].entry(of: values) { uniques[index].owners[entry] = key }
        }
    }

    private mutating func removeEntries(_ values: [Value]) {
        for index in uniques.indices {
            if let entry = uniques[index].entry(of: values) { uniques[index].owners[entry] = nil }
        }
    }
}

/// A unique index of a ``MemoryTable``: the primary key of the record holding each combination of values.
struct UniqueIndex: Sendable {
    /// The index's name, for verification reports.
    let name: String
    let attributes: [String]
    /// The indexed attributes' positions in a record's values.
    let positions: [Int]
    /// The owner of each entry: `Value`'s equality and hashing compare text by its bytes, as SQLite's binary
    /// collation and LMDB's keys do.
    var owners: [[Value]: Value] = [:]

    /// The index entry of a record's values, or `nil` when one of them is `nil`: such records are not indexed, so
    /// `nil`s never collide (as in SQL).
    func entry(of values: [Value]) -> [Value]? {
        var entry: [Value] = []
        entry.reserveCapacity(positions.count)
        for position in positions {
            let value = values[position]
            if value.isNull { return nil }
            entry.append(value)
        }
        return entry
    }
}

/// The primary keys of one set of records in order, sorted the first time a scan asks and then shared by every
/// transaction that sees the same keys (a table's copy keeps it until an insert or delete starts a new one).
///
/// A class so that a table's copies share the sort; the `Mutex` makes the first sort safe between concurrent reads.
final class KeyOrder: Sendable {
    private let sorted = Mutex<[Value]?>(nil)

    /// The keys of `records` in primary-key order (`Value.compare`: numbers numerically, text and bytes bytewise).
    /// `records` must be the set this order belongs to.
    func keys(of records: [Value: [Value]]) -> [Value] {
        sorted.withLock { cached in
            if let cached { return cached }
            let keys = records.keys.sorted { Value.compare($0, $1) == .orderedAscending }
            cached = keys
            return keys
        }
    }
}
