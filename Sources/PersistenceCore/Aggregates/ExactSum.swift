/// A running sum whose partial sums never overflow, so that a sum or mean depends only on the values, never on the
/// order in which a backend reads them: only the total decides.
///
/// - Integers add up exactly in 128 bits (room for 2^64 values of `Int64`); the total is an `Int64` when it fits.
/// - `Double`s add up in two parts: values below 2^960 in magnitude as they are, larger ones scaled by 2^-64 (exact:
///   they are far from subnormal). Neither part can overflow before 2^63 values; the total is
///   `large × 2^64 + small`, which leaves `Double`'s range only when the sum itself does. Without large values the
///   result is the plain running sum, rounded as SQL's `sum` rounds it.
///
/// Every backend computes the same thing: LMDB in one pass (``ResolvedAggregateQuery/evaluate(_:)``), SQLite through
/// a registered aggregate function over this type, PostgreSQL with the same split in SQL (its integer `sum` is
/// exact `numeric` already).
///
/// The all-zero bit pattern is the empty sum, and every stored property is 8-byte aligned: SQLite keeps one in the
/// zeroed memory of `sqlite3_aggregate_context`.
package struct ExactSum: Sendable {
    /// The integers' sum, as the high and low halves of an `Int128` (an `Int128` field would need 16-byte alignment).
    private var integerHigh: Int64 = 0
    private var integerLow: UInt64 = 0
    /// The `Double`s below ``ExactSum/largeThreshold`` in magnitude.
    private var small: Double = 0
    /// The others, each times 2^-64.
    private var large: Double = 0
    /// How many values were added.
    package private(set) var count: Int64 = 0
    /// How many of them were `Double`s.
    private var reals: Int64 = 0
    /// Whether any `Double` went into ``large``.
    private var hasLarge = false

    /// 2^960: values this large or larger are summed scaled, so that up to 2^63 of them never overflow a part.
    package static let largeThreshold = Double(sign: .plus, exponent: 960, significand: 1)
    /// 2^64, the scale of the large part.
    package static let largeScale = Double(sign: .plus, exponent: 64, significand: 1)

    package init() {}

    private var integers: Int128 {
        get { Int128(integerHigh) << 64 | Int128(integerLow) }
        set {
            integerHigh = Int64(truncatingIfNeeded: newValue >> 64)
            integerLow = UInt64(truncatingIfNeeded: newValue)
        }
    }

    /// Adds an integer.
    package mutating func add(_ integer: Int64) {
        integers += Int128(integer)
        count += 1
    }

    /// Adds a `Double`.
    package mutating func add(_ real: Double) {
        if real.magnitude < Self.largeThreshold {
            small += real
        } else {
            // Also infinities and NaNs, which then make the total non-finite, as a plain sum would.
            large += real / Self.largeScale
            hasLarge = true
        }
        count += 1
        reals += 1
    }

    /// Whether only integers were added (the sum of an integer attribute).
    package var isInteger: Bool { reals == 0 }

    /// The integers' total, `nil` when it leaves `Int64`.
    package var integerTotal: Int64? { Int64(exactly: integers) }

    /// The total as a `Double`: the integers' exact sum rounded once, plus the `Double`s' parts; infinite (or NaN)
    /// only when the sum leaves `Double`'s range.
    package var realTotal: Double {
        let reals = hasLarge ? large * Self.largeScale + small : small
        guard integerHigh != 0 || integerLow != 0 else { return reals }
        return Double(integers) + reals
    }

    /// The mean of the added values (`nil` over none): the exact integer sum divided once, and for `Double`s each
    /// part divided before it's scaled back, so that a mean is finite whenever the values are (`[.max, .max]`'s
    /// is `.max`), though their sum isn't.
    package var mean: Double? {
        guard count > 0 else { return nil }
        let count = Double(count)
        var mean = small / count
        if hasLarge { mean += large / count * Self.largeScale }
        if integerHigh != 0 || integerLow != 0 { mean += Double(integers) / count }
        return mean
    }
}
