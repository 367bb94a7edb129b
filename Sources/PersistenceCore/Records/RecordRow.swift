/// A backend's current row, read in place: a record reader takes attribute values straight from it, by position in
/// the record's layout, instead of from an array the backend filled first (SQLite's statement while a query decodes
/// its rows).
///
/// The typed reads let an entity's own `init(record:)` (and `@Entity`'s) take a `String` or an integer from the row
/// without a ``Value`` in between; each answers what ``StoredAttribute/init(storedValue:)`` would for the value.
@_documentation(visibility: internal) public protocol RecordRow: AnyObject {
    /// The value at `position`.
    func value(at position: Int) -> Value
    /// The text at `position`: `.null` for a stored `nil`, `.mismatch` for any other kind of value.
    func text(at position: Int) -> ColumnRead<String>
    /// The integer at `position`: `.null` for a stored `nil`, `.mismatch` for any other kind of value.
    func integer(at position: Int) -> ColumnRead<Int64>
    /// The real at `position`, or an integer as the same `Double`: `.null` for a stored `nil`, `.mismatch` for any
    /// other kind of value.
    func real(at position: Int) -> ColumnRead<Double>
}

extension RecordRow {
    /// The typed read of text, integers, reals and booleans, or `nil` for any other type (which then goes through
    /// its ``Value``).
    ///
    /// An extension of the row rather than code in the reader: called on the row, the row is borrowed for the call,
    /// where a reader holding it retained and released it around every read. Each test is on a type known at
    /// compile time in specialized code: all but one branch fold away, and the casts between identical types.
    @inlinable @inline(__always)
    func typedRead<T: StoredAttribute>(at position: Int, as type: T.Type) -> ColumnRead<T>? {
        if T.self == String.self {
            return text(at: position) as? ColumnRead<T>
        } else if T.self == Int64.self {
            return integer(at: position) as? ColumnRead<T>
        } else if T.self == Int.self {
            return integer(at: position).map { Int(exactly: $0) } as? ColumnRead<T>
        } else if T.self == Double.self {
            return real(at: position) as? ColumnRead<T>
        } else if T.self == Bool.self {
            return integer(at: position).map { $0 == 0 ? false : $0 == 1 ? true : nil } as? ColumnRead<T>
        }
        return nil
    }
}

/// What one typed read of an attribute found.
@_documentation(visibility: internal) public enum ColumnRead<T> {
    /// A value of the type asked for.
    case value(T)
    /// A stored `nil`.
    case null
    /// A value of another kind, or out of the type's range.
    case mismatch

    /// Converts the value; a failed conversion is a mismatch.
    @inlinable
    func map<U>(_ transform: (T) -> U?) -> ColumnRead<U> {
        switch self {
        case .value(let value): transform(value).map(ColumnRead<U>.value) ?? .mismatch
        case .null: .null
        case .mismatch: .mismatch
        }
    }
}
