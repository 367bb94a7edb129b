/// Literals for values, so defaults and migration code read naturally: `["karma": 0, "title": "untitled"]`.
extension Value: ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral, ExpressibleByStringLiteral,
    ExpressibleByStringInterpolation, ExpressibleByBooleanLiteral
{
    /// An ``integer(_:)``.
    public init(integerLiteral value: Int64) { self = .integer(value) }
    /// A ``real(_:)``.
    public init(floatLiteral value: Double) { self = .real(value.canonicalForStorage) }
    /// A ``text(_:)``.
    public init(stringLiteral value: String) { self = .text(value) }
    /// A ``text(_:)`` from an interpolated literal (`"note \(id)"`).
    public init(stringInterpolation: DefaultStringInterpolation) {
        self = .text(String(stringInterpolation: stringInterpolation))
    }
    /// An ``integer(_:)``, 1 for `true` and 0 for `false`, as `Bool` attributes store them.
    public init(booleanLiteral value: Bool) { self = .integer(value ? 1 : 0) }
}
