/// A dynamic record: the values of one entity instance, by attribute.
///
/// Backends store records, and migrations work on them when the Swift type that wrote the data no longer exists.
///
/// ```swift
/// var record = try Record(encoding: user)
/// try record.set("name", to: .text("Jane"))
/// let jane: User = try record.decode()
/// ```
public struct Record: Sendable, Hashable {
    /// The record's shape.
    public let layout: RecordLayout
    /// The values in the layout's attribute order.
    public var values: [Value]

    /// Creates a record from values in the layout's attribute order.
    /// - Throws: ``PersistenceError/Code/invalidArgument`` when there is not exactly one value per attribute.
    public init(layout: RecordLayout, values: [Value]) throws {
        guard values.count == layout.names.count else {
            throw PersistenceError(
                .invalidArgument,
                "entity '\(layout.entity.name)' has \(layout.names.count) attributes, \(values.count) values were given"
            )
        }
        self.layout = layout
        self.values = values
    }

    /// Creates a record of all-`nil` values.
    public init(layout: RecordLayout) {
        self.layout = layout
        values = Array(repeating: .null, count: layout.names.count)
    }

    /// Encodes an entity into a record.
    /// - Throws: ``PersistenceError`` — ``PersistenceError/Code/invalidValue`` for unstorable values.
    public init<E: Entity>(encoding entity: E) throws {
        let layout = try SchemaCache.layout(for: E.self)
        try self.init(layout: layout, values: RecordWriter(layout: layout).encode(entity))
    }

    /// Decodes an entity from this record.
    /// - Throws: ``PersistenceError`` — ``PersistenceError/Code/typeMismatch`` when a value does not fit.
    public func decode<E: Entity>(as type: E.Type = E.self) throws -> E {
        try RecordReader(layout: layout).decode(E.self, from: values)
    }

    /// The value of an attribute, or `nil` when the entity has no such attribute.
    public subscript(_ name: String) -> Value? {
        layout.position(of: name).map { values[$0] }
    }

    /// The value of an attribute.
    /// - Throws: ``PersistenceError/Code/unknownAttribute`` when the entity has no such attribute.
    public func value(of name: String) throws -> Value {
        try values[layout.requirePosition(of: name)]
    }

    /// Sets the value of an attribute.
    /// - Throws: ``PersistenceError/Code/unknownAttribute`` when the entity has no such attribute.
    public mutating func set(_ name: String, to value: Value) throws {
        try values[layout.requirePosition(of: name)] = value
    }

    /// Sets the value of an attribute to a Swift value, stored the way entities store it (`nil` for `nil`):
    /// `try record.set("age", to: 42)`.
    /// - Throws: ``PersistenceError/Code/unknownAttribute`` when the entity has no such attribute.
    public mutating func set(_ name: String, to value: some ValueConvertible) throws {
        try set(name, to: value.storedValue)
    }

    /// The primary key's value.
    public var primaryKey: Value { values[layout.primaryKeyIndex] }

    public static func == (lhs: Record, rhs: Record) -> Bool {
        (lhs.layout === rhs.layout || lhs.layout.names == rhs.layout.names) && lhs.values == rhs.values
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(layout.names)
        hasher.combine(values)
    }
}
