/// The type of an attribute as the schema records it, and how it is stored.
///
/// | Swift type | attribute type | stored as |
/// |---|---|---|
/// | `Bool` | ``bool`` | integer 0/1 |
/// | `Int`, `Int8`…`Int64`, `UInt8`…`UInt64`, `Int` raw-value enums | ``integer`` | integer |
/// | `Double`, `Float` | ``double`` | real (NaN is refused) |
/// | `String`, `String` raw-value enums | ``string`` | text |
/// | `Data` | ``data`` | blob |
/// | `Date` | ``date`` | real, seconds since 2001-01-01 UTC (exact round trip) |
/// | `UUID` | ``uuid`` | blob of 16 bytes |
/// | `URL` | ``url`` | text, the absolute string |
/// | any other `Codable` | ``codable`` | blob, JSON with sorted keys |
public enum AttributeType: String, Sendable, Hashable, Codable, CaseIterable {
    case bool, integer, double, string, data, date, uuid, url, codable

    /// The storage class values of this type have.
    public var storageClass: StorageClass {
        switch self {
        case .bool, .integer: .integer
        case .double, .date: .real
        case .string, .url: .text
        case .data, .uuid, .codable: .blob
        }
    }
}

/// The storage class of a non-null ``Value``.
public enum StorageClass: String, Sendable, Hashable, Codable {
    case integer, real, text, blob

    /// Whether a value of this class can be compared meaningfully with attributes of `other`'s class:
    /// integers and reals compare numerically; the rest only with their own class.
    public func isComparable(with other: StorageClass) -> Bool {
        switch (self, other) {
        case (.integer, .integer), (.integer, .real), (.real, .integer), (.real, .real): true
        default: self == other
        }
    }
}

extension Value {
    /// The storage class, or `nil` for ``Value/null``.
    public var storageClass: StorageClass? {
        switch self {
        case .null: nil
        case .integer: .integer
        case .real: .real
        case .text: .text
        case .blob: .blob
        }
    }
}

/// One attribute of an entity: its name, type and whether it may be `nil`.
public struct AttributeDescription: Sendable, Hashable, Codable {
    /// The attribute's name (its coding key).
    public var name: String
    /// The attribute's type.
    public var type: AttributeType
    /// Whether the attribute may hold `nil`.
    public var isOptional: Bool

    /// Creates an attribute description.
    public init(name: String, type: AttributeType, isOptional: Bool) {
        self.name = name
        self.type = type
        self.isOptional = isOptional
    }
}

extension AttributeDescription {
    /// `value` in the form this attribute stores, or `nil` when it doesn't fit: `nil` only in an optional attribute,
    /// the attribute's storage class otherwise — an integer is accepted by a real attribute (converted when exact),
    /// a `Bool` attribute takes only 0 and 1.
    public func conforming(_ value: Value) -> Value? {
        guard accepts(value) else { return nil }
        // An integer for a real attribute: `accepts` checked it converts exactly.
        if case .integer(let integer) = value, type.storageClass == .real { return .real(Double(integer)) }
        return value
    }

    /// Whether ``conforming(_:)`` accepts `value`. (Checked for every value an entity's own `encode(to:)` writes:
    /// it copies nothing.)
    public func accepts(_ value: Value) -> Bool {
        switch (value, type.storageClass) {
        case (.null, _): isOptional
        case (.integer(let integer), .integer): type != .bool || integer == 0 || integer == 1
        case (.integer(let integer), .real): Double(exactly: integer) != nil
        case (.real, .real), (.text, .text), (.blob, .blob): true
        default: false
        }
    }
}
