public import Foundation

/// One stored value: the closed set of storage classes every backend keeps.
///
/// Entities are encoded to values attribute by attribute (see ``AttributeType`` for the mapping), backends
/// store them, and migrations read and write them without the Swift type that wrote them.
///
/// Equality and hashing compare text by its UTF-8 bytes — `"é"` composed and decomposed are different
/// values, as they are to SQLite, to LMDB's byte-ordered keys and to PostgreSQL (which stores text as its UTF-8
/// bytes). ``Value/compare(_:_:)`` orders values across storage classes the way SQLite does.
public enum Value: Sendable {
    /// No value (`nil`).
    case null
    /// A signed 64-bit integer; also holds `Bool` (0/1) and every fixed-width integer type.
    case integer(Int64)
    /// A double-precision float; also holds `Float` and `Date` (seconds since 2001-01-01). Never NaN; `-0.0` is
    /// stored as `0.0` (they are equal, so every backend indexes and reads them as one value).
    case real(Double)
    /// Unicode text; also holds `URL` and `String` raw-value enums.
    case text(String)
    /// Raw bytes; also holds `UUID` (16 bytes) and nested `Codable` values (JSON).
    case blob(Data)
}

extension Value {
    /// Whether this is ``null``.
    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// The storage class's name, for messages.
    public var storageClassName: String {
        switch self {
        case .null: "null"
        case .integer: "integer"
        case .real: "real"
        case .text: "text"
        case .blob: "blob"
        }
    }
}

extension Value: Hashable {
    public static func == (lhs: Value, rhs: Value) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): true
        case let (.integer(a), .integer(b)): a == b
        case let (.real(a), .real(b)): a == b
        case let (.text(a), .text(b)): a.utf8.elementsEqual(b.utf8)
        case let (.blob(a), .blob(b)): a == b
        default: false
        }
    }

    public func hash(into hasher: inout Hasher) {
        switch self {
        case .null:
            hasher.combine(0 as UInt8)
        case .integer(let value):
            hasher.combine(1 as UInt8)
            hasher.combine(value)
        case .real(let value):
            hasher.combine(2 as UInt8)
            hasher.combine(value)
        case .text(let value):
            hasher.combine(3 as UInt8)
            for byte in value.utf8 { hasher.combine(byte) }
        case .blob(let value):
            hasher.combine(4 as UInt8)
            hasher.combine(value)
        }
    }
}

extension Value {
    /// Orders two values the way SQLite's `ORDER BY` and comparison operators do with the binary collation:
    /// null < numbers (integers and reals compared numerically) < text (by UTF-8 bytes) < blobs (by bytes).
    ///
    /// Every backend sorts and filters in this order — LMDB with this function, SQLite and PostgreSQL in the SQL
    /// they generate — so a query returns the same records in the same order whichever backend runs it.
    public static func compare(_ lhs: Value, _ rhs: Value) -> ComparisonResult {
        switch (lhs, rhs) {
        case (.null, .null): return .orderedSame
        case (.null, _): return .orderedAscending
        case (_, .null): return .orderedDescending
        case let (.integer(a), .integer(b)): return order(a, b)
        case let (.real(a), .real(b)): return order(a, b)
        case let (.integer(a), .real(b)): return compareNumeric(a, b)
        case let (.real(a), .integer(b)): return compareNumeric(b, a).reversed
        case (.integer, _), (.real, _): return .orderedAscending
        case (_, .integer), (_, .real): return .orderedDescending
        case let (.text(a), .text(b)): return compareBytes(a.utf8, b.utf8)
        case (.text, .blob): return .orderedAscending
        case (.blob, .text): return .orderedDescending
        case let (.blob(a), .blob(b)): return compareBytes(a, b)
        }
    }

    private static func order<T: Comparable>(_ a: T, _ b: T) -> ComparisonResult {
        a < b ? .orderedAscending : (a == b ? .orderedSame : .orderedDescending)
    }

    /// Compares an integer with a double exactly, without rounding the integer to a double first.
    private static func compareNumeric(_ integer: Int64, _ real: Double) -> ComparisonResult {
        if real.isNaN { return .orderedDescending }
        if real >= 9_223_372_036_854_775_808.0 { return .orderedAscending }
        if real < -9_223_372_036_854_775_808.0 { return .orderedDescending }
        let truncated = Int64(real.rounded(.towardZero))
        if integer != truncated { return order(integer, truncated) }
        let fraction = real - real.rounded(.towardZero)
        return fraction > 0 ? .orderedAscending : (fraction < 0 ? .orderedDescending : .orderedSame)
    }

    private static func compareBytes<A: Sequence<UInt8>, B: Sequence<UInt8>>(_ a: A, _ b: B) -> ComparisonResult {
        var left = a.makeIterator()
        var right = b.makeIterator()
        while true {
            switch (left.next(), right.next()) {
            case (nil, nil): return .orderedSame
            case (nil, _): return .orderedAscending
            case (_, nil): return .orderedDescending
            case let (x?, y?) where x != y: return x < y ? .orderedAscending : .orderedDescending
            default: continue
            }
        }
    }
}

extension ComparisonResult {
    fileprivate var reversed: ComparisonResult {
        switch self {
        case .orderedAscending: .orderedDescending
        case .orderedDescending: .orderedAscending
        case .orderedSame: .orderedSame
        }
    }
}

extension Value: CustomStringConvertible {
    /// A short description of the storage class and size — never the stored content, so values can't leak
    /// into logs through string interpolation.
    public var description: String {
        switch self {
        case .null: "null"
        case .integer: "integer"
        case .real: "real"
        case .text(let text): "text(\(text.utf8.count) bytes)"
        case .blob(let data): "blob(\(data.count) bytes)"
        }
    }
}

extension Double {
    /// The form in which a real is stored and indexed: `-0.0` becomes `0.0`, every other value is itself.
    ///
    /// `-0.0 == 0.0`, so two records holding them must be found by the same equality condition; index keys are
    /// hashes of bytes, and the two differ in their sign bit. SQLite already reads `-0.0` back as `0.0`, so that is
    /// the one round-trip rule on every backend.
    @inline(__always)
    package var canonicalForStorage: Double { self == 0 ? 0 : self }
}
