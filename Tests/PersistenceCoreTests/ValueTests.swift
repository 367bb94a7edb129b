import Foundation
import PersistenceCore
import Testing

/// One `Value.compare` expectation, labelled for the test report (a value's own description hides its content).
struct ValueOrderCase: Sendable, CustomTestStringConvertible {
    var label: String
    var lhs: Value
    var rhs: Value
    var expected: ComparisonResult

    var testDescription: String { label }

    init(_ label: String, _ lhs: Value, _ rhs: Value, _ expected: ComparisonResult) {
        self.label = label
        self.lhs = lhs
        self.rhs = rhs
        self.expected = expected
    }
}

extension ComparisonResult {
    /// The result of comparing the same operands the other way round.
    fileprivate var flipped: ComparisonResult {
        switch self {
        case .orderedAscending: .orderedDescending
        case .orderedDescending: .orderedAscending
        case .orderedSame: .orderedSame
        }
    }
}

@Suite("Value")
struct ValueTests {
    /// One value of each storage class and some edge values, for the property-style tests.
    static let samples: [Value] = [
        .null,
        .integer(Int64.min), .integer(-1), .integer(0), .integer(1), .integer(Int64.max),
        .real(-.infinity), .real(-1.5), .real(-0.0), .real(0.0), .real(1.0), .real(1.5),
        .real(9.223_372_036_854_775_807e18), .real(.infinity),
        .text(""), .text("A"), .text("Z"), .text("a"), .text("é"), .text("e\u{301}"), .text("a\u{0}b"),
        .text("\u{FFFF}"), .text("😀"),
        .blob(Data()), .blob(Data([0])), .blob(Data([0, 0])), .blob(Data([1])), .blob(Data([0xFF])),
    ]

    // MARK: - Order across storage classes

    static let classOrder: [ValueOrderCase] = [
        ValueOrderCase("null < integer", .null, .integer(Int64.min), .orderedAscending),
        ValueOrderCase("null < real", .null, .real(-.infinity), .orderedAscending),
        ValueOrderCase("null < text", .null, .text(""), .orderedAscending),
        ValueOrderCase("null < blob", .null, .blob(Data()), .orderedAscending),
        ValueOrderCase("integer < text", .integer(Int64.max), .text(""), .orderedAscending),
        ValueOrderCase("real < text", .real(.infinity), .text(""), .orderedAscending),
        ValueOrderCase("integer < blob", .integer(Int64.max), .blob(Data()), .orderedAscending),
        ValueOrderCase("real < blob", .real(.infinity), .blob(Data()), .orderedAscending),
        ValueOrderCase("text < blob", .text("\u{10FFFF}"), .blob(Data()), .orderedAscending),
        ValueOrderCase("null == null", .null, .null, .orderedSame),
    ]

    @Test("Storage classes order null < numbers < text < blob", arguments: classOrder)
    func storageClassOrder(_ test: ValueOrderCase) {
        #expect(Value.compare(test.lhs, test.rhs) == test.expected)
        #expect(Value.compare(test.rhs, test.lhs) == test.expected.flipped)
    }

    // MARK: - Integers against reals

    static let numericOrder: [ValueOrderCase] = [
        ValueOrderCase("1 == 1.0", .integer(1), .real(1.0), .orderedSame),
        ValueOrderCase("1 < 1.5", .integer(1), .real(1.5), .orderedAscending),
        ValueOrderCase("2 > 1.5", .integer(2), .real(1.5), .orderedDescending),
        ValueOrderCase("0 == -0.0", .integer(0), .real(-0.0), .orderedSame),
        ValueOrderCase("0 > -0.5", .integer(0), .real(-0.5), .orderedDescending),
        ValueOrderCase("-1 < -0.5", .integer(-1), .real(-0.5), .orderedAscending),
        ValueOrderCase("-1 == -1.0", .integer(-1), .real(-1.0), .orderedSame),
        // 9.223372036854775807e18 rounds to 2^63, one more than Int64.max.
        ValueOrderCase(
            "Int64.max < 9.223372036854775807e18", .integer(.max), .real(9.223_372_036_854_775_807e18),
            .orderedAscending),
        // The largest double below 2^63 is 2^63 - 1024.
        ValueOrderCase(
            "Int64.max > 2^63 - 1024", .integer(.max), .real(9_223_372_036_854_774_784.0),
            .orderedDescending),
        ValueOrderCase(
            "Int64.max - 1024 < 2^63 - 1024", .integer(.max - 1024), .real(9_223_372_036_854_774_784.0),
            .orderedAscending),
        ValueOrderCase(
            "2^63 - 1024 == 2^63 - 1024", .integer(9_223_372_036_854_774_784),
            .real(9_223_372_036_854_774_784.0), .orderedSame),
        ValueOrderCase("Int64.min == -2^63", .integer(.min), .real(-9.223_372_036_854_775_808e18), .orderedSame),
        ValueOrderCase(
            "Int64.min + 1 > -2^63", .integer(.min + 1), .real(-9.223_372_036_854_775_808e18),
            .orderedDescending),
        ValueOrderCase("Int64.min > -1e19", .integer(.min), .real(-1e19), .orderedDescending),
        ValueOrderCase("Int64.max < 1e19", .integer(.max), .real(1e19), .orderedAscending),
        ValueOrderCase("Int64.max < +infinity", .integer(.max), .real(.infinity), .orderedAscending),
        ValueOrderCase("Int64.min > -infinity", .integer(.min), .real(-.infinity), .orderedDescending),
        // 2^53 + 1 has no double: converting the integer to a double would make these equal.
        ValueOrderCase(
            "2^53 + 1 > 2^53", .integer(9_007_199_254_740_993), .real(9_007_199_254_740_992.0),
            .orderedDescending),
        ValueOrderCase(
            "2^53 + 1 < 2^53 + 2", .integer(9_007_199_254_740_993), .real(9_007_199_254_740_994.0),
            .orderedAscending),
        ValueOrderCase("reals: -0.0 == 0.0", .real(-0.0), .real(0.0), .orderedSame),
        ValueOrderCase("reals: max < infinity", .real(.greatestFiniteMagnitude), .real(.infinity), .orderedAscending),
        ValueOrderCase("integers: min < max", .integer(.min), .integer(.max), .orderedAscending),
    ]

    @Test("Integers and reals compare numerically and exactly", arguments: numericOrder)
    func numericOrdering(_ test: ValueOrderCase) {
        #expect(Value.compare(test.lhs, test.rhs) == test.expected)
        #expect(Value.compare(test.rhs, test.lhs) == test.expected.flipped)
    }

    // MARK: - Text and blobs by bytes

    static let byteOrder: [ValueOrderCase] = [
        ValueOrderCase("\"Z\" < \"a\"", .text("Z"), .text("a"), .orderedAscending),
        ValueOrderCase("\"\" < \"a\"", .text(""), .text("a"), .orderedAscending),
        ValueOrderCase("\"a\" < \"ab\"", .text("a"), .text("ab"), .orderedAscending),
        ValueOrderCase("\"a\" < \"a\\0\"", .text("a"), .text("a\u{0}"), .orderedAscending),
        ValueOrderCase("\"a\\0b\" < \"ab\"", .text("a\u{0}b"), .text("ab"), .orderedAscending),
        // Composed é is C3 A9, decomposed is 65 CC 81: canonically equivalent, but different bytes.
        ValueOrderCase("decomposed é < composed é", .text("e\u{301}"), .text("\u{E9}"), .orderedAscending),
        ValueOrderCase("\"z\" < \"é\"", .text("z"), .text("é"), .orderedAscending),
        // UTF-16 would put the surrogate pair of 😀 (D83D …) before U+FFFF; UTF-8 bytes put it after.
        ValueOrderCase("U+FFFF < 😀", .text("\u{FFFF}"), .text("😀"), .orderedAscending),
        ValueOrderCase("equal text", .text("same"), .text("same"), .orderedSame),
        ValueOrderCase("empty blob < [0]", .blob(Data()), .blob(Data([0])), .orderedAscending),
        ValueOrderCase("[0] < [0, 0]", .blob(Data([0])), .blob(Data([0, 0])), .orderedAscending),
        ValueOrderCase("[0, 0] < [1]", .blob(Data([0, 0])), .blob(Data([1])), .orderedAscending),
        ValueOrderCase("[1, 255] < [255]", .blob(Data([1, 0xFF])), .blob(Data([0xFF])), .orderedAscending),
        ValueOrderCase("equal blobs", .blob(Data([1, 2, 3])), .blob(Data([1, 2, 3])), .orderedSame),
    ]

    @Test("Text and blobs compare by bytes", arguments: byteOrder)
    func byteOrdering(_ test: ValueOrderCase) {
        #expect(Value.compare(test.lhs, test.rhs) == test.expected)
        #expect(Value.compare(test.rhs, test.lhs) == test.expected.flipped)
    }

    @Test("compare is reflexive and antisymmetric over every pair of samples")
    func compareIsAConsistentOrder() {
        for lhs in Self.samples {
            #expect(Value.compare(lhs, lhs) == .orderedSame)
            for rhs in Self.samples {
                #expect(Value.compare(lhs, rhs) == Value.compare(rhs, lhs).flipped)
            }
        }
    }

    @Test("compare is transitive over the samples")
    func compareIsTransitive() {
        let sorted = Self.samples.sorted { Value.compare($0, $1) == .orderedAscending }
        for (index, lower) in sorted.enumerated() {
            for higher in sorted[index...] {
                #expect(Value.compare(lower, higher) != .orderedDescending)
            }
        }
    }

    // MARK: - Equality and hashing

    @Test("Composed and decomposed text are different values with different hashes")
    func textEqualityIsByBytes() {
        let composed = Value.text("\u{E9}")
        let decomposed = Value.text("e\u{301}")
        #expect("\u{E9}" == "e\u{301}")  // Swift's String says equal; Value must not.
        #expect(composed != decomposed)
        #expect(Set([composed, decomposed]).count == 2)
        #expect(Value.compare(composed, decomposed) != .orderedSame)
    }

    @Test("Equality is structural: the storage class is part of the value")
    func equalityIncludesStorageClass() {
        #expect(Value.integer(1) != Value.real(1.0))
        #expect(Value.text("1") != Value.integer(1))
        #expect(Value.blob(Data("a".utf8)) != Value.text("a"))
        #expect(Value.null != Value.integer(0))
        #expect(Value.null != Value.text(""))
        #expect(Value.text("") != Value.blob(Data()))
    }

    @Test("-0.0 and 0.0 are equal and hash alike")
    func signedZeroes() {
        #expect(Value.real(-0.0) == Value.real(0.0))
        #expect(Value.real(-0.0).hashValue == Value.real(0.0).hashValue)
        #expect(Set([Value.real(-0.0), Value.real(0.0)]).count == 1)
    }

    @Test("Equal values have equal hashes; a set keeps one of each")
    func hashIsConsistentWithEquality() {
        let copies: [Value] = Self.samples.map { value in
            switch value {
            case .text(let text): .text(String(decoding: Array(text.utf8), as: UTF8.self))
            case .blob(let data): .blob(Data(Array(data)))
            default: value
            }
        }
        for (original, copy) in zip(Self.samples, copies) {
            #expect(original == copy)
            #expect(original.hashValue == copy.hashValue)
        }
        for lhs in Self.samples {
            for rhs in Self.samples where lhs == rhs {
                #expect(lhs.hashValue == rhs.hashValue)
            }
        }
        // -0.0 and 0.0 are the only equal pair among the samples.
        #expect(Set(Self.samples).count == Self.samples.count - 1)
        #expect(Set(Self.samples + copies).count == Self.samples.count - 1)
    }

    // MARK: - Properties

    @Test("isNull, storageClass and storageClassName")
    func storageClassProperties() {
        let expected: [(Value, StorageClass?, String)] = [
            (.null, nil, "null"), (.integer(0), .integer, "integer"), (.real(0), .real, "real"),
            (.text(""), .text, "text"), (.blob(Data()), .blob, "blob"),
        ]
        for (value, storageClass, name) in expected {
            #expect(value.isNull == (storageClass == nil))
            #expect(value.storageClass == storageClass)
            #expect(value.storageClassName == name)
        }
    }

    @Test("Integers compare with reals, and every other class only with itself")
    func storageClassComparability() {
        #expect(StorageClass.integer.isComparable(with: .real))
        #expect(StorageClass.real.isComparable(with: .integer))
        #expect(!StorageClass.text.isComparable(with: .blob))
        #expect(!StorageClass.integer.isComparable(with: .text))
        #expect(!StorageClass.blob.isComparable(with: .real))
        for storageClass in [StorageClass.integer, .real, .text, .blob] {
            #expect(storageClass.isComparable(with: storageClass))
        }
    }

    // MARK: - Privacy

    @Test("Descriptions show the storage class and size, never the content")
    func descriptionHidesContent() {
        let secret = "secret-text"
        let values: [Value] = [.text(secret), .blob(Data(secret.utf8))]
        for value in values {
            #expect(!"\(value)".contains(secret))
            #expect(!String(describing: value).contains(secret))
            #expect(!String(reflecting: value).contains(secret))
            #expect(!"\([value])".contains(secret))
            #expect(!"\(Optional(value) as Any)".contains(secret))
        }
        #expect(Value.text(secret).description == "text(11 bytes)")
        #expect(Value.text("é").description == "text(2 bytes)")
        #expect(Value.blob(Data(secret.utf8)).description == "blob(11 bytes)")
        #expect(!"\(Value.integer(987_654_321))".contains("987654321"))
        #expect(!"\(Value.real(12.375))".contains("12.375"))
    }

    // MARK: - ValueConvertible

    @Test("Swift values convert to the storage the encoder uses")
    func storedValues() throws {
        #expect(Int8.min.storedValue == .integer(-128))
        #expect(UInt32.max.storedValue == .integer(4_294_967_295))
        #expect(Int.max.storedValue == .integer(Int64(Int.max)))
        #expect(true.storedValue == .integer(1))
        #expect(false.storedValue == .integer(0))
        #expect(Float(1.5).storedValue == .real(1.5))
        #expect("x".storedValue == .text("x"))
        #expect("abc".dropFirst().storedValue == .text("bc"))
        #expect(Data([1, 2]).storedValue == .blob(Data([1, 2])))
        let date = Date(timeIntervalSinceReferenceDate: 12.5)
        #expect(date.storedValue == .real(12.5))
        let url = try #require(URL(string: "https://example.com/a?b=c#d"))
        #expect(url.storedValue == .text("https://example.com/a?b=c#d"))
        #expect(Optional<Int>.none.storedValue == .null)
        #expect(Optional(3).storedValue == .integer(3))
        #expect(Value.text("v").storedValue == .text("v"))
    }

    @Test("A UUID is stored as its 16 bytes and read back from them")
    func uuidBytes() throws {
        let uuid = try #require(UUID(uuidString: "00112233-4455-6677-8899-AABBCCDDEEFF"))
        let bytes = Data([
            0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xAA, 0xBB, 0xCC, 0xDD, 0xEE, 0xFF,
        ])
        #expect(uuid.storedValue == .blob(bytes))
        #expect(UUID(storedBytes: bytes) == uuid)
        #expect(UUID(storedBytes: bytes.dropLast()) == nil)
        #expect(UUID(storedBytes: bytes + [0]) == nil)
        #expect(UUID(storedBytes: Data()) == nil)
    }
}
