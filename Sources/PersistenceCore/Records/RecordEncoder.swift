import Foundation

/// Encodes an entity into values in its layout's attribute order, without building a dictionary per record.
package enum RecordEncoder {
    /// The values of `entity`, one per attribute of `layout`.
    package static func encode<E: Encodable>(_ entity: E, layout: RecordLayout) throws -> [Value] {
        try RecordWriter(layout: layout).encode(entity)
    }

    /// Converts a non-primitive `Encodable` to the value an attribute of `type` stores.
    static func value<T: Encodable>(_ value: T, as type: AttributeType, attribute: String) throws -> Value {
        switch value {
        case let date as Date: return .real(date.timeIntervalSinceReferenceDate.canonicalForStorage)
        case let uuid as UUID: return uuid.storedValue
        case let url as URL: return .text(url.absoluteString)
        case let data as Data: return .blob(data)
        case let vector as Vector: return vector.storedValue
        default: break
        }
        if type == .codable {
            do {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.sortedKeys]
                return .blob(try encoder.encode(value))
            } catch {
                throw PersistenceError(.invalidValue, "attribute '\(attribute)' could not be encoded as JSON")
            }
        }
        let capture = SingleValueCapture(attribute: attribute)
        try value.encode(to: capture)
        guard let captured = capture.box.value else {
            throw PersistenceError(.invalidValue, "attribute '\(attribute)' encoded no value")
        }
        return captured
    }

    static func checked(_ value: Double, attribute: String) throws -> Value {
        guard !value.isNaN else {
            throw PersistenceError(.invalidValue, "attribute '\(attribute)' is NaN, which can't be stored or compared")
        }
        return .real(value.canonicalForStorage)
    }

    static func checked<T: BinaryInteger>(_ value: T, attribute: String) throws -> Value {
        guard let integer = Int64(exactly: value) else {
            throw PersistenceError(
                .invalidValue, "attribute '\(attribute)' holds an unsigned integer above Int64.max")
        }
        return .integer(integer)
    }
}

/// Encodes many records of one layout, one after another: a transaction makes one and reuses it for every record,
/// so a record costs no encoder state of its own. Not thread-safe.
package final class RecordWriter {
    private let storage: EncodingStorage

    package var layout: RecordLayout { storage.layout }

    package init(layout: RecordLayout) { storage = EncodingStorage(layout: layout) }

    /// The values of `entity`, one per attribute of the layout.
    ///
    /// The array shares the writer's storage until the next record overwrites it in place: a caller that keeps
    /// it across records gets its own copy then, as with any array.
    package func encode<E: Encodable>(_ entity: E) throws -> [Value] {
        storage.reset()
        try entity.encode(to: EntityEncoder(storage: storage))
        if let failure = storage.failure { throw failure }
        try storage.layout.checkVectors(storage.values)
        return storage.values
    }

    /// The values of `entity` through its ``Entity/encode(to:)-(AttributeWriter)`` — its own, or the default that
    /// goes through `Encodable`.
    package func encode<E: Entity>(_ entity: E) throws -> [Value] {
        storage.reset()
        try entity.encode(to: AttributeWriter(storage))
        if let failure = storage.failure { throw failure }
        try storage.layout.checkVectors(storage.values)
        return storage.values
    }
}

extension AttributeWriter {
    /// `Encodable`'s path into this writer's record, for ``Entity``'s default `encode(to:)`.
    func encodeWithCodable<E: Encodable>(_ entity: E) throws {
        try entity.encode(to: EntityEncoder(storage: storage))
    }
}

@usableFromInline
final class EncodingStorage {
    let layout: RecordLayout
    // Unchecked exclusivity: one record is encoded at a time, and no access to these overlaps another; the dynamic
    // checks cost more than storing the value (measured: one per attribute).
    @exclusivity(unchecked) var values: [Value]
    @exclusivity(unchecked) var next = 0
    @exclusivity(unchecked) var failure: PersistenceError?

    init(layout: RecordLayout) {
        self.layout = layout
        values = Array(repeating: .null, count: layout.names.count)
    }

    /// Clears the values for the next record, in place: attributes a record doesn't encode stay `nil`.
    func reset() {
        for index in values.indices { values[index] = .null }
        next = 0
        failure = nil
    }

    /// Stores a value; an attribute the schema does not know means `encode(to:)` and `init(from:)` disagree.
    @inline(__always)
    func store(_ value: Value, for name: String) throws {
        guard let position = layout.position(of: name, expected: next) else {
            throw PersistenceError(
                .invalidSchema,
                "entity '\(layout.entity.name)' encodes attribute '\(name)' that its init(from:) does not decode")
        }
        values[position] = value
        next = position + 1
    }

    /// Stores a value written by an entity's own ``Entity/encode(to:)-(AttributeWriter)``: the name must be an
    /// attribute, and the value of its storage class (or `nil`), a real not NaN.
    @usableFromInline
    func storeChecked(_ value: Value, for name: String) throws {
        guard let position = layout.position(of: name, expected: next) else {
            throw PersistenceError(.invalidSchema, "entity '\(layout.entity.name)' has no attribute '\(name)'")
        }
        if !value.isNull {
            if case .real(let real) = value, real.isNaN {
                throw PersistenceError(.invalidValue, "attribute '\(name)' is NaN, which can't be stored or compared")
            }
            guard layout.entity.attributes[position].accepts(value) else {
                throw PersistenceError(
                    .invalidValue,
                    "attribute '\(name)' of entity '\(layout.entity.name)' is \(layout.types[position].rawValue), "
                        + "not \(value.storageClassName)")
            }
        }
        values[position] = value
        next = position + 1
    }

    func fail(_ message: String) {
        if failure == nil { failure = PersistenceError(.invalidSchema, message) }
    }

    func type(of name: String) -> AttributeType {
        layout.position(of: name).map { layout.types[$0] } ?? .codable
    }
}

private struct EntityEncoder: Encoder {
    let storage: EncodingStorage
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        KeyedEncodingContainer(EntityKeyedEncoder<Key>(storage: storage))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        storage.fail("an entity must encode to a keyed container")
        return DiscardingUnkeyedEncoder()
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        storage.fail("an entity must encode to a keyed container")
        return SingleValueCapture(attribute: "")
    }
}

private struct EntityKeyedEncoder<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let storage: EncodingStorage
    var codingPath: [any CodingKey] { [] }

    mutating func encodeNil(forKey key: Key) throws { try storage.store(.null, for: key.stringValue) }
    mutating func encode(_ value: Bool, forKey key: Key) throws {
        try storage.store(.integer(value ? 1 : 0), for: key.stringValue)
    }
    mutating func encode(_ value: String, forKey key: Key) throws {
        try storage.store(.text(value), for: key.stringValue)
    }
    mutating func encode(_ value: Double, forKey key: Key) throws {
        try storage.store(RecordEncoder.checked(value, attribute: key.stringValue), for: key.stringValue)
    }
    mutating func encode(_ value: Float, forKey key: Key) throws {
        try storage.store(RecordEncoder.checked(Double(value), attribute: key.stringValue), for: key.stringValue)
    }
    mutating func encode(_ value: Int, forKey key: Key) throws {
        try storage.store(.integer(Int64(value)), for: key.stringValue)
    }
    mutating func encode(_ value: Int8, forKey key: Key) throws {
        try storage.store(.integer(Int64(value)), for: key.stringValue)
    }
    mutating func encode(_ value: Int16, forKey key: Key) throws {
        try storage.store(.integer(Int64(value)), for: key.stringValue)
    }
    mutating func encode(_ value: Int32, forKey key: Key) throws {
        try storage.store(.integer(Int64(value)), for: key.stringValue)
    }
    mutating func encode(_ value: Int64, forKey key: Key) throws {
        try storage.store(.integer(value), for: key.stringValue)
    }
    mutating func encode(_ value: UInt, forKey key: Key) throws {
        try storage.store(RecordEncoder.checked(value, attribute: key.stringValue), for: key.stringValue)
    }
    mutating func encode(_ value: UInt8, forKey key: Key) throws {
        try storage.store(.integer(Int64(value)), for: key.stringValue)
    }
    mutating func encode(_ value: UInt16, forKey key: Key) throws {
        try storage.store(.integer(Int64(value)), for: key.stringValue)
    }
    mutating func encode(_ value: UInt32, forKey key: Key) throws {
        try storage.store(.integer(Int64(value)), for: key.stringValue)
    }
    mutating func encode(_ value: UInt64, forKey key: Key) throws {
        try storage.store(RecordEncoder.checked(value, attribute: key.stringValue), for: key.stringValue)
    }
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        let name = key.stringValue
        try storage.store(RecordEncoder.value(value, as: storage.type(of: name), attribute: name), for: name)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key)
        -> KeyedEncodingContainer<NestedKey>
    {
        storage.fail("an entity's encode(to:) may not open nested containers; wrap nested data in a Codable type")
        return KeyedEncodingContainer(EntityKeyedEncoder<NestedKey>(storage: EncodingStorage(layout: storage.layout)))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        storage.fail("an entity's encode(to:) may not open nested containers; wrap nested data in a Codable type")
        return DiscardingUnkeyedEncoder()
    }

    mutating func superEncoder() -> any Encoder {
        storage.fail("an entity's encode(to:) may not use a super encoder")
        return EntityEncoder(storage: EncodingStorage(layout: storage.layout))
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder { superEncoder() }
}

/// Captures the single primitive a raw-value enum or wrapper type encodes itself as.
private final class SingleValueCapture: Encoder, SingleValueEncodingContainer {
    final class Box { var value: Value? }
    let box = Box()
    let attribute: String
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    init(attribute: String) { self.attribute = attribute }

    private func unsupported() -> PersistenceError {
        PersistenceError(.invalidValue, "attribute '\(attribute)' must encode a single value")
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        KeyedEncodingContainer(EntityKeyedEncoder<Key>(storage: failingStorage()))
    }
    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        box.value = nil
        return DiscardingUnkeyedEncoder()
    }
    func singleValueContainer() -> any SingleValueEncodingContainer { self }

    private func failingStorage() -> EncodingStorage {
        // A keyed value where one primitive was expected: nothing is captured, so encoding reports the failure.
        EncodingStorage(layout: RecordLayout.empty)
    }

    func encodeNil() throws { box.value = .null }
    func encode(_ value: Bool) throws { box.value = .integer(value ? 1 : 0) }
    func encode(_ value: String) throws { box.value = .text(value) }
    func encode(_ value: Double) throws { box.value = try RecordEncoder.checked(value, attribute: attribute) }
    func encode(_ value: Float) throws { box.value = try RecordEncoder.checked(Double(value), attribute: attribute) }
    func encode(_ value: Int) throws { box.value = .integer(Int64(value)) }
    func encode(_ value: Int8) throws { box.value = .integer(Int64(value)) }
    func encode(_ value: Int16) throws { box.value = .integer(Int64(value)) }
    func encode(_ value: Int32) throws { box.value = .integer(Int64(value)) }
    func encode(_ value: Int64) throws { box.value = .integer(value) }
    func encode(_ value: UInt) throws { box.value = try RecordEncoder.checked(value, attribute: attribute) }
    func encode(_ value: UInt8) throws { box.value = .integer(Int64(value)) }
    func encode(_ value: UInt16) throws { box.value = .integer(Int64(value)) }
    func encode(_ value: UInt32) throws { box.value = .integer(Int64(value)) }
    func encode(_ value: UInt64) throws { box.value = try RecordEncoder.checked(value, attribute: attribute) }
    func encode<T: Encodable>(_ value: T) throws {
        box.value = try RecordEncoder.value(value, as: .string, attribute: attribute)
    }
}

private struct DiscardingUnkeyedEncoder: UnkeyedEncodingContainer {
    var codingPath: [any CodingKey] { [] }
    var count: Int { 0 }
    mutating func encodeNil() throws {}
    mutating func encode<T: Encodable>(_ value: T) throws {}
    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type)
        -> KeyedEncodingContainer<NestedKey>
    {
        KeyedEncodingContainer(EntityKeyedEncoder<NestedKey>(storage: EncodingStorage(layout: RecordLayout.empty)))
    }
    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer { self }
    mutating func superEncoder() -> any Encoder { SingleValueCapture(attribute: "") }
}

extension RecordLayout {
    /// A layout with no attributes, for containers that must exist but receive nothing.
    static let empty = RecordLayout(
        EntityDescription(unchecked: "", attributes: [], primaryKey: "", indexes: []))
}

extension EntityDescription {
    /// A description that skips validation, for internal placeholders only.
    init(unchecked name: String, attributes: [AttributeDescription], primaryKey: String, indexes: [Index]) {
        self.name = name
        self.attributes = attributes
        self.primaryKey = primaryKey
        self.indexes = indexes
        relationships = []
        fullTextIndexes = []
        vectorAttributes = []
    }
}
