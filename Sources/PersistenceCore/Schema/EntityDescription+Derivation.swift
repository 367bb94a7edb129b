import Foundation

extension EntityDescription {
    /// Derives the description of an entity type from its `Codable` conformance.
    ///
    /// The type is decoded once from a probing decoder that records each attribute the type asks for, with its
    /// type and whether it is optional (`decodeIfPresent`). Attribute order is the decoding order.
    /// - Throws: ``PersistenceError`` with ``PersistenceError/Code/invalidSchema`` when the type can't be probed —
    ///   for example a non-optional `String` enum that is not `CaseIterable`, or a type that does not decode from
    ///   a keyed container.
    public init<E: Entity>(describing type: E.Type) throws {
        let recorder = AttributeRecorder()
        do {
            _ = try E(from: SchemaProbe(mode: .entity(recorder)))
        } catch let error as PersistenceError {
            throw error
        } catch {
            throw PersistenceError(
                .invalidSchema, "entity type \(E.self) could not be probed for its schema: \(error)")
        }
        let relationships = E.relationships.map { relationship in
            Self.resolvingDefaultRule(relationship, attributes: recorder.attributes)
        }
        try self.init(
            name: E.entityName, attributes: recorder.attributes, primaryKey: E.primaryKeyAttribute,
            indexes: Self.indexingForeignKeys(E.indexes, of: relationships), relationships: relationships,
            fullTextIndexes: E.fullTextIndexes, vectorAttributes: E.vectorAttributes)
        guard let key = primaryKeyAttribute,
            key.type.storageClass == E.ID.probeStorageClass() ?? key.type.storageClass
        else {
            throw PersistenceError(
                .invalidSchema, "the type of 'id' of \(E.self) does not match its primary-key attribute")
        }
    }
}

extension EntityDescription {
    /// The attributes a `Decodable` type asks for — its coding keys, types and optionality — probed as an entity's
    /// are (for projections: a lighter type decoded from some of an entity's attributes).
    /// - Throws: ``PersistenceError/Code/invalidSchema`` when the type can't be probed.
    package static func probedAttributes<T: Decodable>(of type: T.Type) throws -> [AttributeDescription] {
        let recorder = AttributeRecorder()
        do {
            _ = try T(from: SchemaProbe(mode: .entity(recorder)))
        } catch let error as PersistenceError {
            throw error
        } catch {
            throw PersistenceError(.invalidSchema, "type \(T.self) could not be probed for its attributes: \(error)")
        }
        return recorder.attributes
    }
}

extension EntityDescription {
    /// A to-one declared without a delete rule gets `nullify` on an optional foreign key and `deny` on a required one.
    fileprivate static func resolvingDefaultRule(
        _ relationship: Relationship, attributes: [AttributeDescription]
    ) -> Relationship {
        guard relationship.kind == .toOne, relationship.deleteRule == nil,
            let key = attributes.first(where: { $0.name == relationship.foreignKey })
        else { return relationship }
        var resolved = relationship
        resolved.deleteRule = key.isOptional ? .nullify : .deny
        return resolved
    }

    /// The declared indexes, with an index on each foreign key that no declared index begins with: delete rules
    /// and eager loading look records up by their foreign keys.
    fileprivate static func indexingForeignKeys(_ indexes: [Index], of relationships: [Relationship]) -> [Index] {
        var indexes = indexes
        for relationship in relationships where relationship.kind == .toOne {
            guard let key = relationship.foreignKey, !indexes.contains(where: { $0.attributes.first == key })
            else { continue }
            indexes.append(.on(key))
        }
        return indexes
    }
}

extension PrimaryKey {
    /// The storage class of this key type, read from a sample where one can be made without a value.
    fileprivate static func probeStorageClass() -> StorageClass? {
        switch Self.self {
        case is String.Type: .text
        case is UUID.Type: .blob
        case is Int.Type, is Int8.Type, is Int16.Type, is Int32.Type, is Int64.Type,
            is UInt8.Type, is UInt16.Type, is UInt32.Type:
            .integer
        default: nil
        }
    }
}

/// Collects attributes in the order an entity decodes them.
private final class AttributeRecorder {
    var attributes: [AttributeDescription] = []
    private var seen: Set<String> = []

    func record(_ name: String, _ type: AttributeType, optional: Bool) {
        guard seen.insert(name).inserted else { return }
        attributes.append(AttributeDescription(name: name, type: type, isOptional: optional))
    }
}

/// Records what a value type asks of its decoder: which container, and which primitive.
private final class ValueShape {
    var type: AttributeType?
}

/// A decoder that hands out neutral values and records what it was asked for.
///
/// In `.entity` mode, its keyed container records each attribute. In `.value` mode it probes one attribute's type:
/// a single-value container records the primitive; a keyed or unkeyed container makes the attribute ``AttributeType/codable``.
/// In `.filler` mode it only produces a neutral instance (for nested `Codable` values).
private struct SchemaProbe: Decoder {
    enum Mode {
        case entity(AttributeRecorder)
        case value(ValueShape)
        case filler
    }

    let mode: Mode
    var codingPath: [any CodingKey] = []
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        if case .value(let shape) = mode, shape.type == nil { shape.type = .codable }
        return KeyedDecodingContainer(ProbeKeyedContainer<Key>(mode: mode))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        switch mode {
        case .entity:
            throw PersistenceError(.invalidSchema, "an entity must decode from a keyed container")
        case .value(let shape):
            if shape.type == nil { shape.type = .codable }
        case .filler: break
        }
        return EmptyUnkeyedContainer()
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        if case .entity = mode {
            throw PersistenceError(.invalidSchema, "an entity must decode from a keyed container")
        }
        return ProbeSingleValueContainer(mode: mode)
    }
}

/// Neutral values for primitives, and the attribute type each one maps to.
private enum Neutral {
    static func make<T: Decodable>(_ type: T.Type, probing mode: SchemaProbe.Mode, path: String) throws -> (
        T, AttributeType
    ) {
        if let special = special(type) { return special }
        // A custom or raw-value type: ask it how it decodes.
        let shape = ValueShape()
        let instance = try? T(from: SchemaProbe(mode: .value(shape)))
        let attributeType = shape.type ?? .codable
        if let instance { return (instance, attributeType) }
        if let first = firstCase(of: type) { return (first, attributeType) }
        if attributeType != .codable, let first = firstRawValueCase(of: type) { return (first, attributeType) }
        throw PersistenceError(
            .invalidSchema,
            "attribute '\(path)' of type \(T.self) can't be probed for the schema; make \(T.self) CaseIterable")
    }

    /// Foundation types with a fixed storage, and Swift primitives reached through generic paths.
    static func special<T>(_ type: T.Type) -> (T, AttributeType)? {
        func pair(_ value: Any, _ attributeType: AttributeType) -> (T, AttributeType)? {
            (value as? T).map { ($0, attributeType) }
        }
        switch type {
        case is Date.Type: return pair(Date(timeIntervalSinceReferenceDate: 0), .date)
        case is UUID.Type: return pair(UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)), .uuid)
        case is URL.Type: return pair(URL(fileURLWithPath: "/"), .url)
        case is Data.Type: return pair(Data(), .data)
        case is Vector.Type: return pair(Vector([]), .data)
        case is String.Type: return pair("", .string)
        case is Bool.Type: return pair(false, .bool)
        case is Double.Type: return pair(0.0, .double)
        case is Float.Type: return pair(Float(0), .double)
        case is Int.Type: return pair(0, .integer)
        case is Int8.Type: return pair(Int8(0), .integer)
        case is Int16.Type: return pair(Int16(0), .integer)
        case is Int32.Type: return pair(Int32(0), .integer)
        case is Int64.Type: return pair(Int64(0), .integer)
        case is UInt.Type: return pair(UInt(0), .integer)
        case is UInt8.Type: return pair(UInt8(0), .integer)
        case is UInt16.Type: return pair(UInt16(0), .integer)
        case is UInt32.Type: return pair(UInt32(0), .integer)
        case is UInt64.Type: return pair(UInt64(0), .integer)
        default: return nil
        }
    }

    static func firstCase<T>(of type: T.Type) -> T? {
        guard let iterable = type as? any CaseIterable.Type else { return nil }
        return first(iterable) as? T
    }

    private static func first<C: CaseIterable>(_ type: C.Type) -> Any? { C.allCases.first }

    /// The first case of a raw-value enum whose raw values the probe can't guess (`case admin` is `"admin"`).
    ///
    /// Raw-value enums have no payloads, and Swift's ABI numbers payload-free cases from 0 in declaration order,
    /// stored in the smallest integer that fits (TypeLayout: "no-payload enums"); up to 256 cases fit one byte and
    /// a single case takes none. So for such a type the all-zero bit pattern is its first case. Types of other
    /// sizes, or that are not `RawRepresentable`, are left to `CaseIterable`.
    static func firstRawValueCase<T>(of type: T.Type) -> T? {
        guard type is any RawRepresentable.Type else { return nil }
        switch MemoryLayout<T>.size {
        case 0: return unsafeBitCast((), to: T.self)
        case 1: return unsafeBitCast(UInt8(0), to: T.self)
        default: return nil
        }
    }
}

private struct ProbeKeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let mode: SchemaProbe.Mode
    var codingPath: [any CodingKey] { [] }
    var allKeys: [Key] { [] }

    func contains(_ key: Key) -> Bool { true }

    func decodeNil(forKey key: Key) throws -> Bool { false }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        let (value, attributeType) = try Neutral.make(type, probing: mode, path: key.stringValue)
        if case .entity(let recorder) = mode { recorder.record(key.stringValue, attributeType, optional: false) }
        return value
    }

    // The primitive overloads have default implementations (contains + decodeNil + decode) that would hide the
    // optionality from the probe: answer them all here.
    func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? { try probeOptional(type, key) }
    func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? { try probeOptional(type, key) }
    func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? { try probeOptional(type, key) }
    func decodeIfPresent(_ type: Float.Type, forKey key: Key) throws -> Float? { try probeOptional(type, key) }
    func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? { try probeOptional(type, key) }
    func decodeIfPresent(_ type: Int8.Type, forKey key: Key) throws -> Int8? { try probeOptional(type, key) }
    func decodeIfPresent(_ type: Int16.Type, forKey key: Key) throws -> Int16? { try probeOptional(type, key) }
    func decodeIfPresent(_ type: Int32.Type, forKey key: Key) throws -> Int32? { try probeOptional(type, key) }
    func decodeIfPresent(_ type: Int64.Type, forKey key: Key) throws -> Int64? { try probeOptional(type, key) }
    func decodeIfPresent(_ type: UInt.Type, forKey key: Key) throws -> UInt? { try probeOptional(type, key) }
    func decodeIfPresent(_ type: UInt8.Type, forKey key: Key) throws -> UInt8? { try probeOptional(type, key) }
    func decodeIfPresent(_ type: UInt16.Type, forKey key: Key) throws -> UInt16? { try probeOptional(type, key) }
    func decodeIfPresent(_ type: UInt32.Type, forKey key: Key) throws -> UInt32? { try probeOptional(type, key) }
    func decodeIfPresent(_ type: UInt64.Type, forKey key: Key) throws -> UInt64? { try probeOptional(type, key) }

    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? { try probeOptional(type, key) }

    private func probeOptional<T: Decodable>(_ type: T.Type, _ key: Key) throws -> T? {
        if case .entity(let recorder) = mode {
            let attributeType: AttributeType
            if let special = Neutral.special(type) {
                attributeType = special.1
            } else {
                let shape = ValueShape()
                _ = try? T(from: SchemaProbe(mode: .value(shape)))
                attributeType = shape.type ?? .codable
            }
            recorder.record(key.stringValue, attributeType, optional: true)
        }
        return nil
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws
        -> KeyedDecodingContainer<NestedKey>
    {
        try unsupportedNesting(key)
        return KeyedDecodingContainer(ProbeKeyedContainer<NestedKey>(mode: .filler))
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try unsupportedNesting(key)
        return EmptyUnkeyedContainer()
    }

    func superDecoder() throws -> any Decoder {
        try unsupportedNesting(nil)
        return SchemaProbe(mode: .filler)
    }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        try unsupportedNesting(key)
        return SchemaProbe(mode: .filler)
    }

    private func unsupportedNesting(_ key: Key?) throws {
        if case .entity = mode {
            throw PersistenceError(
                .invalidSchema,
                "an entity's init(from:) may not open nested containers (at '\(key?.stringValue ?? "super")'); "
                    + "wrap nested data in its own Codable type")
        }
    }
}

private struct ProbeSingleValueContainer: SingleValueDecodingContainer {
    let mode: SchemaProbe.Mode
    var codingPath: [any CodingKey] { [] }

    func decodeNil() -> Bool { false }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        let (value, attributeType) = try Neutral.make(type, probing: .filler, path: "\(T.self)")
        if case .value(let shape) = mode, shape.type == nil { shape.type = attributeType }
        return value
    }
}

private struct EmptyUnkeyedContainer: UnkeyedDecodingContainer {
    var codingPath: [any CodingKey] { [] }
    var count: Int? { 0 }
    var isAtEnd: Bool { true }
    var currentIndex: Int { 0 }

    private func end() -> DecodingError {
        DecodingError.valueNotFound(Any.self, .init(codingPath: [], debugDescription: "probe container is empty"))
    }

    mutating func decodeNil() throws -> Bool { throw end() }
    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { throw end() }
    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws
        -> KeyedDecodingContainer<NestedKey>
    { throw end() }
    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer { throw end() }
    mutating func superDecoder() throws -> any Decoder { throw end() }
}
