public import Foundation

/// A Swift type that converts to a stored ``Value`` the same way the entity encoder stores it.
///
/// Conditions take these as operands (`Field("age") > 30`), and primary keys conform through
/// ``PrimaryKey``. `UInt` and `UInt64` do not conform: their upper half has no `Int64` form. Compare
/// such attributes with `Int64` operands instead.
public protocol ValueConvertible: Sendable {
    /// The value as stored.
    var storedValue: Value { get }
}

extension Int: ValueConvertible {
    @inlinable
    public var storedValue: Value { .integer(Int64(self)) }
}
extension Int8: ValueConvertible {
    @inlinable
    public var storedValue: Value { .integer(Int64(self)) }
}
extension Int16: ValueConvertible {
    @inlinable
    public var storedValue: Value { .integer(Int64(self)) }
}
extension Int32: ValueConvertible {
    @inlinable
    public var storedValue: Value { .integer(Int64(self)) }
}
extension Int64: ValueConvertible {
    @inlinable
    public var storedValue: Value { .integer(self) }
}
extension UInt8: ValueConvertible {
    @inlinable
    public var storedValue: Value { .integer(Int64(self)) }
}
extension UInt16: ValueConvertible {
    @inlinable
    public var storedValue: Value { .integer(Int64(self)) }
}
extension UInt32: ValueConvertible {
    @inlinable
    public var storedValue: Value { .integer(Int64(self)) }
}
extension Bool: ValueConvertible {
    @inlinable
    public var storedValue: Value { .integer(self ? 1 : 0) }
}
extension Double: ValueConvertible {
    public var storedValue: Value { .real(canonicalForStorage) }
}
extension Float: ValueConvertible {
    public var storedValue: Value { .real(Double(self).canonicalForStorage) }
}
extension String: ValueConvertible {
    @inlinable
    public var storedValue: Value { .text(self) }
}
extension Substring: ValueConvertible {
    @inlinable
    public var storedValue: Value { .text(String(self)) }
}
extension Data: ValueConvertible {
    @inlinable
    public var storedValue: Value { .blob(self) }
}
extension Date: ValueConvertible {
    /// Seconds since 2001-01-01 00:00:00 UTC (`timeIntervalSinceReferenceDate`), which round-trips exactly.
    public var storedValue: Value { .real(timeIntervalSinceReferenceDate.canonicalForStorage) }
}
extension UUID: ValueConvertible {
    /// The 16 bytes of the UUID.
    public var storedValue: Value {
        let bytes = uuid
        return .blob(
            Data([
                bytes.0, bytes.1, bytes.2, bytes.3, bytes.4, bytes.5, bytes.6, bytes.7,
                bytes.8, bytes.9, bytes.10, bytes.11, bytes.12, bytes.13, bytes.14, bytes.15,
            ]))
    }

    /// Reads a UUID back from its 16 stored bytes.
    package init?(storedBytes data: Data) {
        guard data.count == 16 else { return nil }
        var bytes = [UInt8](repeating: 0, count: 16)
        data.copyBytes(to: &bytes, count: 16)
        self.init(
            uuid: (
                bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
            ))
    }
}
extension URL: ValueConvertible {
    /// The URL's absolute string.
    @inlinable
    public var storedValue: Value { .text(absoluteString) }
}
extension Value: ValueConvertible {
    @inlinable
    public var storedValue: Value { self }
}
extension Optional: ValueConvertible where Wrapped: ValueConvertible {
    @inlinable
    public var storedValue: Value { self?.storedValue ?? .null }
}
