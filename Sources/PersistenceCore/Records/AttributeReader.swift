import Foundation

/// The attributes of one stored record, for an entity's own ``Entity/init(record:)``: reads by name, in declaration
/// order, straight from the record's values — none of `Decodable`'s containers, no per-record allocation.
///
/// ```swift
/// struct Person: Entity {
///     var id: Int64
///     var name: String
///     var email: String?
///     var kind: Kind            // a String enum
///
///     init(record: AttributeReader) throws {
///         id = try record.decode("id")
///         name = try record.decode("name")
///         email = try record.decode("email")
///         kind = try record.decode("kind")
///     }
///     func encode(to record: AttributeWriter) throws {
///         try record.encode(id, for: "id")
///         try record.encode(name, for: "name")
///         try record.encode(email, for: "email")
///         try record.encode(kind, for: "kind")
///     }
/// }
/// ```
///
/// The schema still comes from the type's `Codable` conformance, and the stored form of each value is the one
/// `Codable` entities get, so the two paths read each other's records. Reading attributes in declaration order finds
/// each one without hashing its name. A name the schema doesn't have, or a value that doesn't fit the Swift type, is
/// ``PersistenceError/Code/typeMismatch`` naming the entity and attribute (never the value).
public struct AttributeReader {
    @usableFromInline package let reader: RecordReader
    /// The backend's current row when the record is read in place (SQLite's statement), else `nil`: the values are
    /// the reader's.
    @usableFromInline package let row: (any RecordRow)?

    package init(_ reader: RecordReader, row: (any RecordRow)?) {
        self.reader = reader
        self.row = row
    }

    /// The record's shape.
    public var layout: RecordLayout { reader.layout }

    /// The stored value of an attribute.
    @inline(__always)
    public func value(of name: String) throws -> Value { try reader.attribute(name, in: row) }

    /// A non-optional attribute; a stored `nil` is a type mismatch.
    @inlinable
    public func decode<T: StoredAttribute>(_ name: String, as type: T.Type = T.self) throws -> T {
        guard case .value(let typed) = try reader.read(name, as: T.self, in: row) else {
            throw reader.mismatch(name, T.self, in: row)
        }
        return typed
    }

    /// An optional attribute: `nil` for a stored `nil`.
    @inlinable
    public func decode<T: StoredAttribute>(_ name: String, as type: T?.Type = T?.self) throws -> T? {
        switch try reader.read(name, as: T.self, in: row) {
        case .value(let typed): return typed
        case .null: return nil
        case .mismatch: throw reader.mismatch(name, T.self, in: row)
        }
    }

    /// A raw-value enum (`String` or integer raw values).
    @inlinable
    public func decode<T: RawRepresentable>(_ name: String, as type: T.Type = T.self) throws -> T
    where T.RawValue: StoredAttribute {
        guard case .value(let raw) = try reader.read(name, as: T.RawValue.self, in: row), let typed = T(rawValue: raw)
        else {
            throw reader.mismatch(name, T.self, in: row)
        }
        return typed
    }

    /// An optional raw-value enum.
    @inlinable
    public func decode<T: RawRepresentable>(_ name: String, as type: T?.Type = T?.self) throws -> T?
    where T.RawValue: StoredAttribute {
        switch try reader.read(name, as: T.RawValue.self, in: row) {
        case .value(let raw):
            guard let typed = T(rawValue: raw) else { throw reader.mismatch(name, T.self, in: row) }
            return typed
        case .null: return nil
        case .mismatch: throw reader.mismatch(name, T.self, in: row)
        }
    }

    /// A `UInt64` attribute (stored as a non-negative 64-bit integer).
    public func decode(_ name: String, as type: UInt64.Type = UInt64.self) throws -> UInt64 {
        let value = try reader.attribute(name, in: row)
        guard case .integer(let integer) = value, let typed = UInt64(exactly: integer) else {
            throw mismatch(name, value, UInt64.self)
        }
        return typed
    }

    /// A `UInt` attribute (stored as a non-negative 64-bit integer).
    public func decode(_ name: String, as type: UInt.Type = UInt.self) throws -> UInt {
        let value = try reader.attribute(name, in: row)
        guard case .integer(let integer) = value, let typed = UInt(exactly: integer) else {
            throw mismatch(name, value, UInt.self)
        }
        return typed
    }

    /// Any other `Decodable` attribute (a nested struct, an array, a dictionary), stored as JSON.
    public func decodeJSON<T: Decodable>(_ name: String, as type: T.Type = T.self) throws -> T {
        let position = try reader.attributePosition(name)
        return try RecordDecoder.value(
            T.self, from: reader.value(at: position, in: row), as: .codable, name: name, layout: reader.layout)
    }

    /// An optional `Decodable` attribute stored as JSON: `nil` for a stored `nil`.
    public func decodeJSON<T: Decodable>(_ name: String, as type: T?.Type = T?.self) throws -> T? {
        let position = try reader.attributePosition(name)
        let value = reader.value(at: position, in: row)
        if value.isNull { return nil }
        return try RecordDecoder.value(T.self, from: value, as: .codable, name: name, layout: reader.layout)
    }

    // MARK: One name for every attribute type (what `@Entity` generates)

    /// The type of the property a key path names: lets generated code read an attribute into a local of its
    /// property's type (`try record.read("name", as: AttributeReader.type(of: \Self.name))`), so the overload of
    /// `read` is the one the property's type picks.
    @inlinable
    public static func type<Root, Property>(of keyPath: KeyPath<Root, Property>) -> Property.Type { Property.self }

    /// Reads an attribute of any type an entity can store, in the form `Codable` stores it: the overload the
    /// compiler picks for `T` — a stored attribute type directly, a raw-value enum by its raw value, `UInt64` and
    /// `UInt` checked, anything else `Decodable` as JSON. `@Entity` generates calls to it; hand-written code may
    /// call it too.
    @inlinable
    public func read<T: StoredAttribute & Decodable>(_ name: String, as type: T.Type = T.self) throws -> T {
        try decode(name, as: type)
    }

    /// Reads an optional attribute of a stored attribute type: `nil` for a stored `nil`.
    @inlinable
    public func read<T: StoredAttribute & Decodable>(_ name: String, as type: T?.Type = T?.self) throws -> T? {
        try decode(name, as: type)
    }

    /// Reads a raw-value enum.
    @inlinable
    public func read<T: RawRepresentable & Decodable>(_ name: String, as type: T.Type = T.self) throws -> T
    where T.RawValue: StoredAttribute {
        try decode(name, as: type)
    }

    /// Reads an optional raw-value enum.
    @inlinable
    public func read<T: RawRepresentable & Decodable>(_ name: String, as type: T?.Type = T?.self) throws -> T?
    where T.RawValue: StoredAttribute {
        try decode(name, as: type)
    }

    /// Reads a `UInt64`.
    public func read(_ name: String, as type: UInt64.Type = UInt64.self) throws -> UInt64 {
        try decode(name, as: type)
    }

    /// Reads an optional `UInt64`.
    public func read(_ name: String, as type: UInt64?.Type = UInt64?.self) throws -> UInt64? {
        try reader.attribute(name, in: row).isNull ? nil : decode(name, as: UInt64.self)
    }

    /// Reads a `UInt`.
    public func read(_ name: String, as type: UInt.Type = UInt.self) throws -> UInt {
        try decode(name, as: type)
    }

    /// Reads an optional `UInt`.
    public func read(_ name: String, as type: UInt?.Type = UInt?.self) throws -> UInt? {
        try reader.attribute(name, in: row).isNull ? nil : decode(name, as: UInt.self)
    }

    /// Reads any other `Decodable` attribute, stored as JSON.
    public func read<T: Decodable>(_ name: String, as type: T.Type = T.self) throws -> T {
        try decodeJSON(name, as: type)
    }

    /// Reads an optional `Decodable` attribute stored as JSON: `nil` for a stored `nil`.
    public func read<T: Decodable>(_ name: String, as type: T?.Type = T?.self) throws -> T? {
        try decodeJSON(name, as: type)
    }

    @usableFromInline
    func mismatch(_ name: String, _ value: Value, _ type: Any.Type) -> PersistenceError {
        RecordDecoder.mismatch(reader.layout, name, value, type)
    }
}

/// The attributes of one record to store, for an entity's own ``Entity/encode(to:)-(AttributeWriter)``: written by
/// name, in declaration order, straight into the record's values. Attributes not written are stored as `nil`.
///
/// A name the schema doesn't have is ``PersistenceError/Code/invalidSchema``; a value the attribute's type can't
/// hold (text for an integer attribute, NaN, an unsigned integer above `Int64.max`) is
/// ``PersistenceError/Code/invalidValue``.
public struct AttributeWriter {
    @usableFromInline let storage: EncodingStorage

    init(_ storage: EncodingStorage) { self.storage = storage }

    /// The record's shape.
    public var layout: RecordLayout { storage.layout }

    /// Writes an attribute.
    @inlinable
    public func encode<T: StoredAttribute>(_ value: T, for name: String) throws {
        try storage.storeChecked(value.storedValue, for: name)
    }

    /// Writes an optional attribute: `nil` stores `nil`.
    @inlinable
    public func encode<T: StoredAttribute>(_ value: T?, for name: String) throws {
        try storage.storeChecked(value?.storedValue ?? .null, for: name)
    }

    /// Writes a raw-value enum as its raw value.
    @inlinable
    public func encode<T: RawRepresentable>(_ value: T, for name: String) throws where T.RawValue: StoredAttribute {
        try storage.storeChecked(value.rawValue.storedValue, for: name)
    }

    /// Writes an optional raw-value enum.
    @inlinable
    public func encode<T: RawRepresentable>(_ value: T?, for name: String) throws where T.RawValue: StoredAttribute {
        try storage.storeChecked(value?.rawValue.storedValue ?? .null, for: name)
    }

    /// Writes a `UInt64`; above `Int64.max` is ``PersistenceError/Code/invalidValue``.
    public func encode(_ value: UInt64, for name: String) throws {
        try storage.storeChecked(RecordEncoder.checked(value, attribute: name), for: name)
    }

    /// Writes a `UInt`; above `Int64.max` is ``PersistenceError/Code/invalidValue``.
    public func encode(_ value: UInt, for name: String) throws {
        try storage.storeChecked(RecordEncoder.checked(value, attribute: name), for: name)
    }

    /// Writes any other `Encodable` attribute as JSON (sorted keys), as `Codable` entities store them.
    public func encodeJSON<T: Encodable>(_ value: T?, for name: String) throws {
        guard let value else { return try storage.storeChecked(.null, for: name) }
        try storage.storeChecked(RecordEncoder.value(value, as: .codable, attribute: name), for: name)
    }

    // MARK: One name for every attribute type (what `@Entity` generates)

    /// Writes an attribute of any type an entity can store, in the form `Codable` stores it (the overload the
    /// compiler picks for `T`, as `AttributeReader.read(_:as:)` reads it). `@Entity` generates calls to it.
    @inlinable
    public func write<T: StoredAttribute & Encodable>(_ value: T, for name: String) throws {
        try encode(value, for: name)
    }

    /// Writes an optional attribute of a stored attribute type: `nil` stores `nil`.
    @inlinable
    public func write<T: StoredAttribute & Encodable>(_ value: T?, for name: String) throws {
        try encode(value, for: name)
    }

    /// Writes a raw-value enum as its raw value.
    @inlinable
    public func write<T: RawRepresentable & Encodable>(_ value: T, for name: String) throws
    where T.RawValue: StoredAttribute {
        try encode(value, for: name)
    }

    /// Writes an optional raw-value enum.
    @inlinable
    public func write<T: RawRepresentable & Encodable>(_ value: T?, for name: String) throws
    where T.RawValue: StoredAttribute {
        try encode(value, for: name)
    }

    /// Writes a `UInt64`; above `Int64.max` is ``PersistenceError/Code/invalidValue``.
    public func write(_ value: UInt64, for name: String) throws { try encode(value, for: name) }

    /// Writes an optional `UInt64`.
    public func write(_ value: UInt64?, for name: String) throws {
        guard let value else { return try storage.storeChecked(.null, for: name) }
        try encode(value, for: name)
    }

    /// Writes a `UInt`; above `Int64.max` is ``PersistenceError/Code/invalidValue``.
    public func write(_ value: UInt, for name: String) throws { try encode(value, for: name) }

    /// Writes an optional `UInt`.
    public func write(_ value: UInt?, for name: String) throws {
        guard let value else { return try storage.storeChecked(.null, for: name) }
        try encode(value, for: name)
    }

    /// Writes any other `Encodable` attribute as JSON.
    public func write<T: Encodable>(_ value: T, for name: String) throws { try encodeJSON(value, for: name) }

    /// Writes an optional `Encodable` attribute as JSON: `nil` stores `nil`.
    public func write<T: Encodable>(_ value: T?, for name: String) throws { try encodeJSON(value, for: name) }

    /// Writes a stored value as it is.
    public func encode(value: Value, for name: String) throws {
        try storage.storeChecked(value, for: name)
    }
}
