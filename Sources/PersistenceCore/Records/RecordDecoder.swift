import Foundation

/// Decodes entities from values in its layout's attribute order.
package enum RecordDecoder {
    /// Decodes `type` from `values`, one per attribute of `layout`.
    package static func decode<E: Decodable>(_ type: E.Type, layout: RecordLayout, values: [Value]) throws -> E {
        let reader = RecordReader(layout: layout)
        reader.values = values
        return try reader.decode(type)
    }

    /// A primary key from its stored value.
    package static func primaryKey<ID: Decodable>(_ type: ID.Type, from value: Value, layout: RecordLayout) throws
        -> ID
    {
        let position = layout.primaryKeyIndex
        return try Self.value(
            ID.self, from: value, as: layout.types[position], name: layout.names[position], layout: layout)
    }

    static func mismatch(_ layout: RecordLayout, _ name: String, _ found: Value, _ expected: Any.Type)
        -> PersistenceError
    {
        let what = found.isNull ? "null" : "a stored \(found.storageClassName)"
        return PersistenceError(
            .typeMismatch, "attribute '\(name)' of entity '\(layout.entity.name)' holds \(what), not \(expected)")
    }

    /// Reads a non-primitive `Decodable` from the value an attribute stores.
    static func value<T: Decodable>(
        _ type: T.Type, from value: Value, as attributeType: AttributeType, name: String, layout: RecordLayout
    ) throws -> T {
        func fail() -> PersistenceError { mismatch(layout, name, value, T.self) }
        switch type {
        case is Date.Type:
            guard case .real(let seconds) = value, let date = Date(timeIntervalSinceReferenceDate: seconds) as? T
            else {
                if case .integer(let seconds) = value,
                    let date = Date(timeIntervalSinceReferenceDate: Double(seconds)) as? T
                {
                    return date
                }
                throw fail()
            }
            return date
        case is UUID.Type:
            guard case .blob(let data) = value, let uuid = UUID(storedBytes: data) as? T else { throw fail() }
            return uuid
        case is URL.Type:
            guard case .text(let text) = value, let url = URL(string: text) as? T else { throw fail() }
            return url
        case is Data.Type:
            guard case .blob(let data) = value, let typed = data as? T else { throw fail() }
            return typed
        case is Vector.Type:
            guard case .blob(let data) = value, let vector = Vector(storedBytes: data) as? T else { throw fail() }
            return vector
        default:
            break
        }
        if attributeType == .codable {
            guard case .blob(let data) = value else { throw fail() }
            do {
                return try JSONDecoder().decode(T.self, from: data)
            } catch {
                throw PersistenceError(
                    .typeMismatch,
                    "attribute '\(name)' of entity '\(layout.entity.name)' holds JSON that doesn't decode")
            }
        }
        do {
            return try T(from: SingleValueReader(value: value, name: name, layout: layout))
        } catch let error as PersistenceError {
            throw error
        } catch {
            // A raw-value enum refuses an unknown raw value with a DecodingError that quotes the value: say which
            // attribute failed, never what it held.
            throw PersistenceError(
                .typeMismatch,
                "attribute '\(name)' of entity '\(layout.entity.name)' holds a value that is not a valid \(T.self)")
        }
    }

    static func float(_ value: Value, _ name: String, _ layout: RecordLayout) throws -> Float {
        let double = try double(value, name, layout)
        let float = Float(double)
        // Finite doubles beyond Float's range would become infinity: refuse them as integers out of range are.
        guard float.isFinite || !double.isFinite else { throw mismatch(layout, name, value, Float.self) }
        return float
    }

    static func integer<T: FixedWidthInteger>(_ value: Value, _ name: String, _ layout: RecordLayout) throws -> T {
        guard case .integer(let integer) = value, let typed = T(exactly: integer) else {
            throw mismatch(layout, name, value, T.self)
        }
        return typed
    }

    static func double(_ value: Value, _ name: String, _ layout: RecordLayout) throws -> Double {
        switch value {
        case .real(let real): return real
        case .integer(let integer): return Double(integer)
        default: throw mismatch(layout, name, value, Double.self)
        }
    }

    static func string(_ value: Value, _ name: String, _ layout: RecordLayout) throws -> String {
        guard case .text(let text) = value else { throw mismatch(layout, name, value, String.self) }
        return text
    }

    static func bool(_ value: Value, _ name: String, _ layout: RecordLayout) throws -> Bool {
        guard case .integer(let integer) = value, integer == 0 || integer == 1 else {
            throw mismatch(layout, name, value, Bool.self)
        }
        return integer == 1
    }
}

/// Decodes many records of one layout, one after another: a query makes one and reuses it for every row, so a
/// record costs no decoder state of its own.
///
/// Not thread-safe, and not reentrant across records: decode one record at a time.
@_documentation(visibility: internal) public final class RecordReader {
    @usableFromInline package let layout: RecordLayout
    /// The values of the record to decode next, in layout order. A backend refills it for each record, keeping
    /// its capacity, so reading a row allocates no array.
    ///
    /// Exclusivity is unchecked here and on `next`: only the backend between records and the one record's
    /// decoder touch them, never overlapping, and the dynamic check would cost as much as reading the value.
    @exclusivity(unchecked) @usableFromInline package var values: [Value] = []
    /// Where the next attribute probably is: synthesized `init(from:)` decodes in declaration order.
    @exclusivity(unchecked) @usableFromInline var next = 0
    /// The backend's row while `Codable` decodes one record from it in place (`nil` otherwise: a finished query's
    /// statement isn't kept alive by a reader).
    ///
    /// Here rather than in the decoder and its keyed container: the standard library copies the container for
    /// every value it decodes, and a container of one reference copies with one retain, where one that also
    /// carried the row cost ~200 instructions an attribute in copies and destroys (measured).
    @exclusivity(unchecked) var codableRow: (any RecordRow)?

    package init(layout: RecordLayout) { self.layout = layout }

    /// Lets a backend refill ``values`` in place for the next record.
    ///
    /// Backends go through here rather than passing `&reader.values`: an access from another module is checked
    /// dynamically despite `@exclusivity(unchecked)` (measured: one `swift_beginAccess` per record), one from this
    /// module is not.
    @_spi(PersistenceBackend) public func refill<R>(_ body: (inout [Value]) throws -> R) rethrows -> R {
        try body(&values)
    }

    /// Decodes one record from `values` through `Decodable`.
    @inline(__always)
    package func decode<E: Decodable>(_ type: E.Type) throws -> E {
        try decodeWithCodable(type)
    }

    /// Decodes one record from `values` through `Decodable`, even for an ``Entity`` (its default `init(record:)`).
    ///
    /// - Parameter row: The backend's current row when the record is read in place; `nil` for ``values``.
    @inline(__always)
    package func decodeWithCodable<E: Decodable>(_ type: E.Type, in row: (any RecordRow)? = nil) throws -> E {
        next = 0
        codableRow = row
        defer { codableRow = nil }
        return try E(from: EntityDecoder(reader: self))
    }

    /// Decodes one record from `values` through the entity's ``Entity/init(record:)`` — its own, or the default
    /// that goes through `Decodable`.
    @inline(__always)
    package func decode<E: Entity>(_ type: E.Type) throws -> E {
        next = 0
        return try E(record: AttributeReader(self, row: nil))
    }

    /// Decodes one entity straight from a backend's current row, whose columns are the layout's attributes in
    /// order: no array of values in between.
    ///
    /// The row travels with the ``AttributeReader`` (and `Codable`'s decoder) as a constant, not in a property of
    /// this shared reader: each read then borrows it where a property would be retained and released per read.
    @inline(__always)
    package func decode<E: Entity>(_ type: E.Type, in row: any RecordRow) throws -> E {
        next = 0
        return try E(record: AttributeReader(self, row: row))
    }

    /// Decodes one record from `values`.
    @inline(__always)
    package func decode<E: Decodable>(_ type: E.Type, from values: [Value]) throws -> E {
        self.values = values
        return try decode(type)
    }

    /// Decodes one entity from `values`.
    @inline(__always)
    package func decode<E: Entity>(_ type: E.Type, from values: [Value]) throws -> E {
        self.values = values
        return try decode(type)
    }

    /// The value a key names, in the record being decoded.
    @inline(__always)
    fileprivate func value(_ name: String, in row: (any RecordRow)?) throws -> Value {
        try value(at: position(name), in: row)
    }

    /// The value at a position of the record being decoded: from the backend's row when it is read in place.
    @inlinable @inline(__always)
    package func value(at position: Int, in row: (any RecordRow)?) -> Value {
        if let row { return row.value(at: position) }
        return values[position]
    }

    /// The value of an attribute, in the record being decoded (for ``AttributeReader``).
    ///
    /// An entity's own `init(record:)` reads each attribute once, nearly always in declaration order: the name is
    /// compared with the next attribute's only (an equal name compares in one step), and hashed when that misses.
    @inlinable
    package func attribute(_ name: String, in row: (any RecordRow)?) throws -> Value {
        try value(at: advance(name), in: row)
    }

    /// The position of an attribute an entity's own `init(record:)` reads, moving past it.
    @inlinable @inline(__always)
    func advance(_ name: String) throws -> Int {
        let guess = next
        if guess < layout.names.count, layout.names[guess] == name {
            next = guess + 1
            return guess
        }
        guard let position = layout.position(of: name) else { throw noAttribute(name) }
        next = position + 1
        return position
    }

    /// Reads an attribute as a stored attribute type: straight from the backend's row for text, integers, reals and
    /// booleans when it is read in place (specialized away for the type asked), through its ``Value`` otherwise.
    @inlinable
    package func read<T: StoredAttribute>(_ name: String, as type: T.Type, in row: (any RecordRow)?) throws
        -> ColumnRead<T>
    {
        try read(at: advance(name), as: type, in: row)
    }

    /// ``read(_:as:in:)`` at a known position.
    @inlinable @inline(__always)
    func read<T: StoredAttribute>(at position: Int, as type: T.Type, in row: (any RecordRow)?) -> ColumnRead<T> {
        if let read = row?.typedRead(at: position, as: type) { return read }
        let value = value(at: position, in: row)
        if value.isNull { return .null }
        guard let typed = T(storedValue: value) else { return .mismatch }
        return .value(typed)
    }

    /// The error for an attribute whose stored value isn't a `type` (out of line: only failures build it).
    @usableFromInline
    func mismatch(_ name: String, _ type: Any.Type, in row: (any RecordRow)?) -> PersistenceError {
        let found = layout.position(of: name).map { value(at: $0, in: row) } ?? .null
        return RecordDecoder.mismatch(layout, name, found, type)
    }

    /// The position of an attribute, for ``AttributeReader``'s reads that aren't a stored value (its JSON ones).
    @inlinable
    package func attributePosition(_ name: String) throws -> Int {
        guard let position = layout.position(of: name, expected: next) else { throw noAttribute(name) }
        next = position + 1
        return position
    }

    // Typed reads for the keyed decoder, here rather than in its methods: these aren't generic over its key type,
    // so they compile to specialized code.
    fileprivate func isNull(_ name: String, in row: (any RecordRow)?) throws -> Bool {
        try value(name, in: row).isNull
    }
    fileprivate func float(_ name: String, in row: (any RecordRow)?) throws -> Float {
        try RecordDecoder.float(value(name, in: row), name, layout)
    }
    fileprivate func integer<T: FixedWidthInteger>(_ name: String, in row: (any RecordRow)?) throws -> T {
        try RecordDecoder.integer(value(name, in: row), name, layout)
    }

    /// A non-optional attribute of a stored attribute type (the conversions are `Codable`'s: see
    /// ``StoredAttribute``).
    @inline(__always)
    fileprivate func stored<T: StoredAttribute>(_ name: String, _ type: T.Type, in row: (any RecordRow)?) throws -> T {
        guard case .value(let typed) = try read(at: position(name), as: T.self, in: row) else {
            throw mismatch(name, T.self, in: row)
        }
        return typed
    }

    /// `decodeIfPresent` of a stored attribute type in one look-up: `nil` for a stored `nil` and for a name the
    /// record has no attribute of (what `contains` then `decodeNil` would say).
    @inline(__always)
    fileprivate func storedIfPresent<T: StoredAttribute>(_ name: String, _ type: T.Type, in row: (any RecordRow)?)
        throws -> T?
    {
        guard let position = presentPosition(name) else { return nil }
        switch read(at: position, as: T.self, in: row) {
        case .value(let typed): return typed
        case .null: return nil
        case .mismatch: throw mismatch(name, T.self, in: row)
        }
    }

    /// `decodeIfPresent` of any other `Decodable`, in one look-up.
    fileprivate func decodableIfPresent<T: Decodable>(_ type: T.Type, _ name: String, in row: (any RecordRow)?)
        throws -> T?
    {
        guard let position = presentPosition(name) else { return nil }
        let value = value(at: position, in: row)
        if value.isNull { return nil }
        return try RecordDecoder.value(T.self, from: value, as: layout.types[position], name: name, layout: layout)
    }

    /// The position of a key's attribute, or `nil` when the record has none.
    @inline(__always)
    fileprivate func presentPosition(_ name: String) -> Int? {
        guard let position = layout.position(of: name, expected: next) else { return nil }
        next = position + 1
        return position
    }

    fileprivate func decodable<T: Decodable>(_ type: T.Type, _ name: String, in row: (any RecordRow)?) throws -> T {
        let position = try position(name)
        return try RecordDecoder.value(
            T.self, from: value(at: position, in: row), as: layout.types[position], name: name, layout: layout)
    }

    /// The position of a key's attribute, trying the one after the last first.
    @inlinable
    package func position(_ name: String) throws -> Int {
        // The next attribute first (declaration order: equal names compare in one step, where a comparison that
        // fails costs a call); then the last one (decodeIfPresent asks decodeNil then decode for the same key);
        // then the hash.
        let guess = next
        let names = layout.names
        if guess < names.count, names[guess] == name {
            next = guess + 1
            return guess
        }
        if guess > 0, guess <= names.count, names[guess - 1] == name { return guess - 1 }
        guard let position = layout.positions[name] else { throw noAttribute(name) }
        next = position + 1
        return position
    }

    /// The error for a name the record has no attribute of (out of line: the inlined lookup stays small).
    @usableFromInline
    func noAttribute(_ name: String) -> PersistenceError {
        PersistenceError(.typeMismatch, "entity '\(layout.entity.name)' stores no attribute '\(name)'")
    }
}

private struct EntityDecoder: Decoder {
    let reader: RecordReader
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(EntityKeyedDecoder<Key>(reader: reader))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        throw PersistenceError(.invalidSchema, "an entity must decode from a keyed container")
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        throw PersistenceError(.invalidSchema, "an entity must decode from a keyed container")
    }
}

/// A struct over the shared reader: creating one per record allocates nothing beyond the container's box.
private struct EntityKeyedDecoder<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let reader: RecordReader
    /// The backend's current row when the record is read in place.
    var row: (any RecordRow)? { reader.codableRow }
    var layout: RecordLayout { reader.layout }
    var codingPath: [any CodingKey] { [] }
    var allKeys: [Key] { layout.names.compactMap { Key(stringValue: $0) } }

    func contains(_ key: Key) -> Bool { layout.position(of: key.stringValue, expected: reader.next) != nil }

    func decodeNil(forKey key: Key) throws -> Bool { try reader.isNull(key.stringValue, in: row) }
    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool {
        try reader.stored(key.stringValue, Bool.self, in: row)
    }
    func decode(_ type: String.Type, forKey key: Key) throws -> String {
        try reader.stored(key.stringValue, String.self, in: row)
    }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double {
        try reader.stored(key.stringValue, Double.self, in: row)
    }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try reader.float(key.stringValue, in: row) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int {
        try reader.stored(key.stringValue, Int.self, in: row)
    }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try reader.integer(key.stringValue, in: row) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try reader.integer(key.stringValue, in: row) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try reader.integer(key.stringValue, in: row) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 {
        try reader.stored(key.stringValue, Int64.self, in: row)
    }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try reader.integer(key.stringValue, in: row) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try reader.integer(key.stringValue, in: row) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try reader.integer(key.stringValue, in: row) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try reader.integer(key.stringValue, in: row) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try reader.integer(key.stringValue, in: row) }
    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try reader.decodable(T.self, key.stringValue, in: row)
    }

    // One look-up per optional attribute, where the default `decodeIfPresent` asks `contains`, `decodeNil` and
    // `decode` in turn.
    func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? {
        try reader.storedIfPresent(key.stringValue, Bool.self, in: row)
    }
    func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? {
        try reader.storedIfPresent(key.stringValue, String.self, in: row)
    }
    func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? {
        try reader.storedIfPresent(key.stringValue, Double.self, in: row)
    }
    func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? {
        try reader.storedIfPresent(key.stringValue, Int.self, in: row)
    }
    func decodeIfPresent(_ type: Int64.Type, forKey key: Key) throws -> Int64? {
        try reader.storedIfPresent(key.stringValue, Int64.self, in: row)
    }
    func decodeIfPresent(_ type: Int32.Type, forKey key: Key) throws -> Int32? {
        try reader.storedIfPresent(key.stringValue, Int32.self, in: row)
    }
    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        try reader.decodableIfPresent(T.self, key.stringValue, in: row)
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws
        -> KeyedDecodingContainer<NestedKey>
    {
        throw PersistenceError(.invalidSchema, "an entity's init(from:) may not open nested containers")
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        throw PersistenceError(.invalidSchema, "an entity's init(from:) may not open nested containers")
    }

    func superDecoder() throws -> any Decoder {
        throw PersistenceError(.invalidSchema, "an entity's init(from:) may not use a super decoder")
    }

    func superDecoder(forKey key: Key) throws -> any Decoder { try superDecoder() }
}

/// Hands one stored value to a raw-value enum or wrapper type that decodes from a single-value container.
private struct SingleValueReader: Decoder, SingleValueDecodingContainer {
    let value: Value
    let name: String
    let layout: RecordLayout
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        throw RecordDecoder.mismatch(layout, name, value, Key.self)
    }
    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        throw RecordDecoder.mismatch(layout, name, value, [Any].self)
    }
    func singleValueContainer() throws -> any SingleValueDecodingContainer { self }

    func decodeNil() -> Bool { value.isNull }
    func decode(_ type: Bool.Type) throws -> Bool { try RecordDecoder.bool(value, name, layout) }
    func decode(_ type: String.Type) throws -> String { try RecordDecoder.string(value, name, layout) }
    func decode(_ type: Double.Type) throws -> Double { try RecordDecoder.double(value, name, layout) }
    func decode(_ type: Float.Type) throws -> Float { try RecordDecoder.float(value, name, layout) }
    func decode(_ type: Int.Type) throws -> Int { try RecordDecoder.integer(value, name, layout) }
    func decode(_ type: Int8.Type) throws -> Int8 { try RecordDecoder.integer(value, name, layout) }
    func decode(_ type: Int16.Type) throws -> Int16 { try RecordDecoder.integer(value, name, layout) }
    func decode(_ type: Int32.Type) throws -> Int32 { try RecordDecoder.integer(value, name, layout) }
    func decode(_ type: Int64.Type) throws -> Int64 { try RecordDecoder.integer(value, name, layout) }
    func decode(_ type: UInt.Type) throws -> UInt { try RecordDecoder.integer(value, name, layout) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try RecordDecoder.integer(value, name, layout) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try RecordDecoder.integer(value, name, layout) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try RecordDecoder.integer(value, name, layout) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try RecordDecoder.integer(value, name, layout) }
    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try RecordDecoder.value(T.self, from: value, as: .string, name: name, layout: layout)
    }
}
