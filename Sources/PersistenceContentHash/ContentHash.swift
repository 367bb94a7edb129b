import Crypto
import Foundation
@_spi(PersistenceBackend) package import PersistenceCore

/// A digest of a store's logical content — entities, attributes, values — the same for the same data on every
/// backend, so two copies can be proved equal.
///
/// Version 1 is SHA-256 over, in order: the tag `persistence-content-1`; then each entity sorted by name (UTF-8
/// bytes): its name, primary key, each attribute sorted by name with its type and optionality, then each record in
/// primary-key order (``Value/compare(_:_:)``, as every backend sorts) with its values in the same attribute order,
/// and the entity's record count. A value is a tag byte (null 0, integer 1, real 2, text 3, blob 4) and its bytes:
/// integers as 8 big-endian bytes, reals as the 8 big-endian bytes of their bit pattern (`-0.0` is not `0.0`), text
/// as its UTF-8 bytes and blobs as is, each prefixed with its length. Every string is length-prefixed the same way,
/// so no two different contents share a byte stream.
///
/// Schema versions, indexes, relationships, encryption and on-disk layout are not content: a copy to another backend,
/// or a store re-encrypted, hashes the same.
package struct ContentHash {
    private var hasher = SHA256()
    /// Records hashed so far.
    package private(set) var records = 0

    package init() { string("persistence-content-1") }

    /// The entity being hashed: its attribute positions in name order, its records so far, the last key.
    private var entity: (layout: RecordLayout, order: [Int], count: Int, previous: Value?)?
    /// The last entity's name, to check entities come in name order.
    private var lastEntity: String?

    /// The digest of one entity's records alone — what ``ContentHash`` gives for a store holding only that entity —
    /// and how many there are: what sync compares entity by entity, so that a difference is named.
    /// - Parameter records: Calls its argument with each record of the entity, in primary-key order.
    package static func entity(
        _ layout: RecordLayout, records: (_ add: (Record) throws -> Void) throws -> Void
    ) throws -> (digest: String, records: Int) {
        var hash = ContentHash()
        try hash.begin(layout)
        try records { try hash.add($0) }
        hash.end()
        return (hash.finish(), hash.records)
    }

    /// Starts an entity (entities must come in name order, by UTF-8 bytes, as ``StoredStore/layouts`` has them).
    package mutating func begin(_ layout: RecordLayout) throws {
        let entity = layout.entity
        if let lastEntity, !lastEntity.utf8.lexicographicallyPrecedes(entity.name.utf8) {
            throw PersistenceError(.invalidArgument, "entities must be hashed in name order")
        }
        lastEntity = entity.name
        let order = layout.names.indices.sorted {
            layout.names[$0].utf8.lexicographicallyPrecedes(layout.names[$1].utf8)
        }
        string("entity")
        string(entity.name)
        string(entity.primaryKey)
        integer(Int64(order.count))
        for position in order {
            let attribute = entity.attributes[position]
            string(attribute.name)
            string(attribute.type.rawValue)
            byte(attribute.isOptional ? 1 : 0)
        }
        self.entity = (layout, order, 0, nil)
    }

    /// Adds the next record of the entity begun last.
    /// - Throws: ``PersistenceError/Code/backend`` for a record out of primary-key order: a backend that didn't
    ///   sort by key would give another digest for the same data, so that is refused loudly.
    package mutating func add(_ record: Record) throws {
        guard var entity else { throw PersistenceError(.invalidArgument, "a record before its entity") }
        if let previous = entity.previous, Value.compare(previous, record.primaryKey) != .orderedAscending {
            throw PersistenceError(
                .backend, "'\(entity.layout.entity.name)' records came out of primary-key order")
        }
        byte(0x52)
        for position in entity.order { value(record.values[position]) }
        entity.previous = record.primaryKey
        entity.count += 1
        self.entity = entity
        records += 1
    }

    /// Ends the entity begun last.
    package mutating func end() {
        string("end")
        integer(Int64(entity?.count ?? 0))
        entity = nil
    }

    /// The digest, as `sha256:` and 64 hexadecimal digits.
    package func finish() -> String {
        "sha256:" + hasher.finalize().map { String(format: "%02x", $0) }.joined()
    }

    private mutating func value(_ value: Value) {
        switch value {
        case .null: byte(0)
        case .integer(let integer):
            byte(1)
            integer64(integer)
        case .real(let real):
            byte(2)
            integer64(Int64(bitPattern: real.bitPattern))
        case .text(let text):
            byte(3)
            string(text)
        case .blob(let data):
            byte(4)
            integer(Int64(data.count))
            hasher.update(data: data)
        }
    }

    private mutating func byte(_ byte: UInt8) { withUnsafeBytes(of: byte) { hasher.update(bufferPointer: $0) } }

    private mutating func integer(_ value: Int64) { integer64(value) }

    private mutating func integer64(_ value: Int64) {
        withUnsafeBytes(of: value.bigEndian) { hasher.update(bufferPointer: $0) }
    }

    private mutating func string(_ text: String) {
        var text = text
        text.withUTF8 { bytes in
            integer64(Int64(bytes.count))
            hasher.update(bufferPointer: UnsafeRawBufferPointer(bytes))
        }
    }
}
