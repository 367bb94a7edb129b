public import Foundation

/// An attribute type an entity's own ``Entity/init(record:)`` reads and ``Entity/encode(to:)-(AttributeWriter)``
/// writes: it converts to its stored ``Value`` (``ValueConvertible``) and back.
///
/// The conversions are the ones `Codable` entities get, so a store written by one path reads with the other.
public protocol StoredAttribute: ValueConvertible {
    /// The value read back from its stored form; `nil` when the stored value is of another kind or out of range
    /// (the reader then throws ``PersistenceError/Code/typeMismatch``).
    init?(storedValue: Value)
}

extension StoredAttribute where Self: FixedWidthInteger {
    /// An integer that fits this type exactly.
    @inlinable
    public init?(storedValue: Value) {
        guard case .integer(let integer) = storedValue, let typed = Self(exactly: integer) else { return nil }
        self = typed
    }
}

extension Int: StoredAttribute {}
extension Int8: StoredAttribute {}
extension Int16: StoredAttribute {}
extension Int32: StoredAttribute {}
extension Int64: StoredAttribute {}
extension UInt8: StoredAttribute {}
extension UInt16: StoredAttribute {}
extension UInt32: StoredAttribute {}

extension Bool: StoredAttribute {
    /// The integer 0 or 1.
    @inlinable
    public init?(storedValue: Value) {
        guard case .integer(let integer) = storedValue, integer == 0 || integer == 1 else { return nil }
        self = integer == 1
    }
}

extension Double: StoredAttribute {
    /// A real, or an integer as the same number.
    @inlinable
    public init?(storedValue: Value) {
        switch storedValue {
        case .real(let real): self = real
        case .integer(let integer): self = Double(integer)
        default: return nil
        }
    }
}

extension Float: StoredAttribute {
    /// A real or an integer within `Float`'s range.
    @inlinable
    public init?(storedValue: Value) {
        guard let double = Double(storedValue: storedValue) else { return nil }
        let float = Float(double)
        // Finite doubles beyond Float's range would become infinity: refuse them as integers out of range are.
        guard float.isFinite || !double.isFinite else { return nil }
        self = float
    }
}

extension String: StoredAttribute {
    @inlinable
    public init?(storedValue: Value) {
        guard case .text(let text) = storedValue else { return nil }
        self = text
    }
}

extension Data: StoredAttribute {
    @inlinable
    public init?(storedValue: Value) {
        guard case .blob(let data) = storedValue else { return nil }
        self = data
    }
}

extension Date: StoredAttribute {
    /// Seconds since 2001-01-01 00:00:00 UTC, a real (or an integer).
    @inlinable
    public init?(storedValue: Value) {
        guard let seconds = Double(storedValue: storedValue) else { return nil }
        self.init(timeIntervalSinceReferenceDate: seconds)
    }
}

extension UUID: StoredAttribute {
    /// Its 16 stored bytes.
    public init?(storedValue: Value) {
        guard case .blob(let data) = storedValue else { return nil }
        self.init(storedBytes: data)
    }
}

extension URL: StoredAttribute {
    /// Its absolute string.
    public init?(storedValue: Value) {
        guard case .text(let text) = storedValue else { return nil }
        self.init(string: text)
    }
}
