import Foundation
import PersistenceCommands
import PersistenceCore
import PersistenceTool
import Testing

/// Every attribute type's values written as JSON and CSV text and read back to the same stored value, bit for bit.
struct ValueTextTests {
    static let samples: [(AttributeType, [Value])] = [
        (.bool, [.integer(0), .integer(1)]),
        (.integer, [.integer(0), .integer(-1), .integer(.max), .integer(.min)]),
        (
            .double,
            [
                .real(0), .real(-0.0), .real(1.5), .real(-1e-300), .real(.leastNonzeroMagnitude), .real(.infinity),
                .real(-.infinity), .real(.greatestFiniteMagnitude), .real(0.1 + 0.2),
            ]
        ),
        (.date, [.real(-5), .real(786_000_000.123_456_7)]),
        (.string, [.text(""), .text("Zoë 👩‍👩‍👧 \u{0} null, \"quoted\"\n\ttab \\ back"), .text("\u{1}\u{1F}")]),
        (.url, [.text("https://example.com/a?b=c")]),
        (.uuid, [.blob(Data((0..<16).map { UInt8($0 * 17) }))]),
        (.data, [.blob(Data()), .blob(Data([0, 255, 10, 13]))]),
        (.codable, [.blob(Data(#"{"city":"Zürich","zip":8000}"#.utf8))]),
    ]

    @Test func everyValueRoundTripsExactlyThroughJSONAndCSV() throws {
        for (type, values) in Self.samples {
            let attribute = AttributeDescription(name: "a", type: type, isOptional: true)
            for value in values + [.null] {
                let json = try ValueText.json(value, of: attribute)
                let scalar = try JSONDecoder().decode(ValueText.Scalar.self, from: Data(json.utf8))
                let back = try ValueText.value(scalar, of: attribute)
                #expect(Self.identical(back, value), "\(type) \(json)")
                if let text = try ValueText.csv(value, of: attribute) {
                    #expect(Self.identical(try ValueText.value(text: text, of: attribute), value), "\(type) \(text)")
                } else {
                    #expect(value == .null)
                }
            }
        }
    }

    @Test func refusesWhatTheAttributeCantHold() throws {
        let required = AttributeDescription(name: "n", type: .integer, isOptional: false)
        for json in ["null", "1.5", "\"7\"", "true", "1e300"] {
            let scalar = try JSONDecoder().decode(ValueText.Scalar.self, from: Data(json.utf8))
            #expect(throws: PersistenceError.self, "\(json)") { try ValueText.value(scalar, of: required) }
        }
        let real = AttributeDescription(name: "r", type: .double, isOptional: false)
        #expect(throws: PersistenceError.self) { try ValueText.value(text: "NaN", of: real) }
        #expect(throws: PersistenceError.self) { try ValueText.json(.real(.nan), of: real) }
        let uuid = AttributeDescription(name: "u", type: .uuid, isOptional: false)
        #expect(throws: PersistenceError.self) { try ValueText.value(text: "not-a-uuid", of: uuid) }
        // A stored value of the wrong class is damage, not text.
        #expect(throws: PersistenceError.self) { try ValueText.json(.text("x"), of: real) }
    }

    /// Equal including the sign of zero (`Value`'s `==` says `0.0 == -0.0`).
    static func identical(_ a: Value, _ b: Value) -> Bool {
        if case .real(let x) = a, case .real(let y) = b { return x.bitPattern == y.bitPattern }
        return a == b
    }
}
