public import Foundation

/// Typed reads of a dynamic record's attributes by name — for migration code, which works on records whose Swift
/// type may no longer exist.
///
/// Each accessor returns `nil` for a stored `nil`, the value for a value of the matching storage class, and throws
/// ``PersistenceError/Code/unknownAttribute`` for a name the record's schema doesn't have or
/// ``PersistenceError/Code/typeMismatch`` for a value of another storage class (messages name the entity and
/// attribute, never the value).
///
/// ```swift
/// let name = try old.string("name")        // String?
/// let age = try old.int("age") ?? 0        // Int
/// ```
public protocol RecordReading {
    /// The name of the entity the record belongs to.
    var entityName: String { get }
    /// The value of an attribute.
    /// - Throws: ``PersistenceError/Code/unknownAttribute`` when the entity has no such attribute.
    func value(of name: String) throws -> Value
}

extension Record: RecordReading {
    /// The name of the entity the record belongs to.
    public var entityName: String { layout.entity.name }
}

extension RecordReading {
    /// A text attribute (`String`, `URL`, `String` enums).
    public func string(_ name: String) throws -> String? {
        try typed(name, "text") { if case .text(let text) = $0 { text } else { nil } }
    }

    /// An integer attribute (every integer type and `Int` enums).
    public func int(_ name: String) throws -> Int? {
        try int64(name).map { integer in
            guard let int = Int(exactly: integer) else {
                throw PersistenceError(.typeMismatch, "'\(entityName).\(name)' does not fit in an Int")
            }
            return int
        }
    }

    /// An integer attribute as a 64-bit integer.
    public func int64(_ name: String) throws -> Int64? {
        try typed(name, "integer") { if case .integer(let integer) = $0 { integer } else { nil } }
    }

    /// A floating-point attribute; an integer value reads as the same `Double`.
    public func double(_ name: String) throws -> Double? {
        try typed(name, "real") {
            switch $0 {
            case .real(let real): real
            case .integer(let integer): Double(integer)
            default: nil
            }
        }
    }

    /// A `Bool` attribute (stored as the integer 0 or 1).
    public func bool(_ name: String) throws -> Bool? {
        try typed(name, "boolean (0 or 1)") {
            switch $0 {
            case .integer(0): false
            case .integer(1): true
            default: nil
            }
        }
    }

    /// A `Date` attribute (stored as seconds since 2001-01-01 UTC).
    public func date(_ name: String) throws -> Date? {
        try double(name).map { Date(timeIntervalSinceReferenceDate: $0) }
    }

    /// A `Data` attribute (or any blob).
    public func data(_ name: String) throws -> Data? {
        try typed(name, "blob") { if case .blob(let data) = $0 { data } else { nil } }
    }

    /// A `UUID` attribute (stored as its 16 bytes).
    public func uuid(_ name: String) throws -> UUID? {
        try typed(name, "UUID (16 bytes)") { if case .blob(let data) = $0 { UUID(storedBytes: data) } else { nil } }
    }

    /// A `URL` attribute (stored as its absolute string).
    public func url(_ name: String) throws -> URL? {
        try typed(name, "URL") { if case .text(let text) = $0 { URL(string: text) } else { nil } }
    }

    /// A nested `Codable` attribute (stored as JSON), decoded as `type`.
    public func decode<T: Decodable>(_ name: String, as type: T.Type = T.self) throws -> T? {
        guard let json = try data(name) else { return nil }
        do {
            return try JSONDecoder().decode(T.self, from: json)
        } catch {
            throw PersistenceError(.typeMismatch, "'\(entityName).\(name)' does not decode as \(T.self)")
        }
    }

    private func typed<T>(_ name: String, _ expected: String, _ convert: (Value) -> T?) throws -> T? {
        let value = try value(of: name)
        if value.isNull { return nil }
        guard let converted = convert(value) else {
            throw PersistenceError(
                .typeMismatch, "'\(entityName).\(name)' holds \(value.storageClassName), not \(expected)")
        }
        return converted
    }
}
