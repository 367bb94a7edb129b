import Foundation

/// Values as a dictionary key that tells them apart as SQL does: text by its bytes (Swift's `String` equality would
/// merge composed and decomposed forms that SQL keeps apart), numbers numerically, `nil` equal to `nil`.
///
/// Groups of an aggregate, a limit per value and records loaded per parent all key by it, so they group exactly
/// as the SQL backends' `GROUP BY` and `PARTITION BY` do.
package struct ValueKey: Hashable, Sendable {
    package let values: [Value]

    package init(_ values: [Value]) { self.values = values }
    package init(_ value: Value) { values = [value] }

    package static func == (lhs: ValueKey, rhs: ValueKey) -> Bool {
        lhs.values.count == rhs.values.count
            && zip(lhs.values, rhs.values).allSatisfy { pair in
                switch pair {
                case let (.text(a), .text(b)): a.utf8.elementsEqual(b.utf8)
                default: pair.0.isNull == pair.1.isNull && Value.compare(pair.0, pair.1) == .orderedSame
                }
            }
    }

    package func hash(into hasher: inout Hasher) {
        for value in values {
            switch value {
            case .null: hasher.combine(0)
            case .integer(let integer): hasher.combine(Double(integer))
            case .real(let real): hasher.combine(real)
            case .text(let text): for byte in text.utf8 { hasher.combine(byte) }
            case .blob(let bytes): hasher.combine(bytes)
            }
        }
    }
}
