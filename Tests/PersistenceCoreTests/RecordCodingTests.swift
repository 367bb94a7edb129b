import Foundation
import PersistenceCore
import Testing

// MARK: - Entities

/// Every supported attribute type, with optional twins.
struct RecordEveryType: Entity, Equatable {
    enum Mood: String, Codable, Sendable, CaseIterable {
        case happy
        case sad
    }
    enum Level: Int, Codable, Sendable, CaseIterable {
        case low = 1
        case high = 10
    }
    struct Address: Codable, Sendable, Equatable {
        // Declared out of alphabetical order, to see the stored JSON sort its keys.
        var zip: Int
        var street: String
    }

    var id: Int64 = 1
    var bool: Bool = false
    var int: Int = 0
    var int8: Int8 = 0
    var int16: Int16 = 0
    var int32: Int32 = 0
    var int64: Int64 = 0
    var uint: UInt = 0
    var uint8: UInt8 = 0
    var uint16: UInt16 = 0
    var uint32: UInt32 = 0
    var uint64: UInt64 = 0
    var double: Double = 0
    var float: Float = 0
    var text: String = ""
    var data = Data()
    var date = Date(timeIntervalSinceReferenceDate: 0)
    var uuid = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
    var url = URL(fileURLWithPath: "/")
    var mood: Mood = .happy
    var level: Level = .low
    var address = RecordEveryType.Address(zip: 0, street: "")
    var tags: [String] = []
    var counts: [String: Int] = [:]
    var optionalInt: Int?
    var optionalUInt64: UInt64?
    var optionalDouble: Double?
    var optionalFloat: Float?
    var optionalText: String?
    var optionalData: Data?
    var optionalDate: Date?
    var optionalUUID: UUID?
    var optionalURL: URL?
    var optionalMood: Mood?
    var optionalAddress: Address?
}

/// A smaller entity, to decode records of the wrong shape.
struct RecordSmall: Entity, Equatable {
    var id: Int64
    var name: String
}

/// Renamed coding keys with a string key.
struct RecordRenamed: Entity, Equatable {
    enum CodingKeys: String, CodingKey {
        case id
        case fullName = "full_name"
    }
    var id: String
    var fullName: String
}

/// A nested value that JSON can't encode when it holds a non-finite number.
struct RecordNestedNumber: Entity {
    struct Measure: Codable, Sendable {
        var value: Double
    }
    var id: Int
    var measure: Measure
}

/// A labelled sample entity, for parameterised round trips.
struct RecordSample: Sendable, CustomTestStringConvertible {
    var testDescription: String
    var entity: RecordEveryType
}

/// A labelled value that must not decode into an attribute.
struct RecordMismatch: Sendable, CustomTestStringConvertible {
    var attribute: String
    var value: Value
    var label: String
    var testDescription: String { "\(attribute) ← \(label)" }
}

// MARK: - Tests

@Suite("Record coding")
struct RecordCodingTests {
    static let fixedUUID = UUID(uuid: (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15))

    static var maximal: RecordEveryType {
        var entity = RecordEveryType()
        entity.id = .max
        entity.bool = true
        entity.int = .max
        entity.int8 = .max
        entity.int16 = .max
        entity.int32 = .max
        entity.int64 = .max
        entity.uint = UInt(Int64.max)
        entity.uint8 = .max
        entity.uint16 = .max
        entity.uint32 = .max
        entity.uint64 = UInt64(Int64.max)
        entity.double = .greatestFiniteMagnitude
        entity.float = .greatestFiniteMagnitude
        entity.text = String(repeating: "x", count: 1 << 20) + "😀"
        entity.data = Data((0..<4096).map { UInt8(truncatingIfNeeded: $0) })
        entity.date = .distantFuture
        entity.uuid = UUID(uuid: (255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255))
        entity.url = URL(string: "https://user@example.com:8443/a/b%20c?q=1&r=%C3%A9#frag") ?? entity.url
        entity.mood = .sad
        entity.level = .high
        entity.address = RecordEveryType.Address(zip: 99_999, street: "Main \"Street\" \u{0} 😀")
        entity.tags = ["a", "", "😀"]
        entity.counts = ["a": 1, "b": -2]
        entity.optionalInt = .max
        entity.optionalUInt64 = UInt64(Int64.max)
        entity.optionalDouble = .infinity
        entity.optionalFloat = .infinity
        entity.optionalText = "\u{0}"
        entity.optionalData = Data([0])
        entity.optionalDate = .distantPast
        entity.optionalUUID = fixedUUID
        entity.optionalURL = URL(fileURLWithPath: "/tmp/some dir/file.txt")
        entity.optionalMood = .happy
        entity.optionalAddress = RecordEveryType.Address(zip: 1, street: "")
        return entity
    }

    static var minimal: RecordEveryType {
        var entity = RecordEveryType()
        entity.id = .min
        entity.int = .min
        entity.int8 = .min
        entity.int16 = .min
        entity.int32 = .min
        entity.int64 = .min
        entity.double = -.infinity
        entity.float = -.greatestFiniteMagnitude
        entity.date = Date(timeIntervalSinceReferenceDate: -1_234_567.000_001)
        entity.optionalInt = .min
        entity.optionalUInt64 = 0
        entity.optionalDouble = -.infinity
        entity.optionalFloat = -.infinity
        entity.optionalText = ""
        entity.optionalData = Data()
        entity.optionalDate = Date(timeIntervalSinceReferenceDate: 0)
        entity.optionalMood = .sad
        entity.optionalAddress = RecordEveryType.Address(zip: 0, street: "")
        return entity
    }

    static var fractional: RecordEveryType {
        var entity = RecordEveryType()
        entity.id = 42
        entity.double = .leastNonzeroMagnitude
        entity.float = .leastNonzeroMagnitude
        entity.text = "Ünïcødé e\u{301} \u{E9} 👩‍👩‍👧 \u{0}\u{0} \n\t"
        entity.date = Date(timeIntervalSinceReferenceDate: 123_456_789.123_456_789)
        entity.optionalDate = Date(timeIntervalSinceReferenceDate: 0.000_000_1)
        entity.optionalDouble = 0.1
        entity.optionalFloat = 0.1
        entity.uuid = fixedUUID
        entity.url = URL(string: "mailto:someone@example.com") ?? entity.url
        return entity
    }

    static let samples: [RecordSample] = [
        RecordSample(testDescription: "defaults, all optionals nil", entity: RecordEveryType()),
        RecordSample(testDescription: "maximal values", entity: maximal),
        RecordSample(testDescription: "minimal values", entity: minimal),
        RecordSample(testDescription: "fractions and unusual text", entity: fractional),
    ]

    @Test("Entities survive encoding to a record and decoding back", arguments: samples)
    func roundTrip(_ sample: RecordSample) throws {
        let record = try Record(encoding: sample.entity)
        let decoded: RecordEveryType = try record.decode()
        #expect(decoded == sample.entity)
        #expect(decoded.date.timeIntervalSinceReferenceDate == sample.entity.date.timeIntervalSinceReferenceDate)
        #expect(decoded.text.utf8.elementsEqual(sample.entity.text.utf8))
        #expect(try Record(encoding: decoded) == record)
    }

    @Test("Dates with sub-second fractions round-trip exactly")
    func dateFractions() throws {
        let dates = [
            Date(timeIntervalSinceReferenceDate: 123_456_789.123_456_789),
            Date(timeIntervalSinceReferenceDate: -0.5),
            Date(timeIntervalSinceReferenceDate: 1e-9),
            Date(timeIntervalSince1970: 1_700_000_000.987_654_321),
            Date(),
        ]
        for date in dates {
            var entity = RecordEveryType()
            entity.date = date
            entity.optionalDate = date
            let decoded: RecordEveryType = try Record(encoding: entity).decode()
            #expect(decoded.date == date)
            #expect(decoded.optionalDate == date)
            #expect(
                decoded.date.timeIntervalSinceReferenceDate.bitPattern == date.timeIntervalSinceReferenceDate.bitPattern
            )
        }
    }

    @Test("-0.0 is stored as 0.0, the one round-trip rule of every backend")
    func negativeZero() throws {
        var entity = RecordEveryType()
        entity.double = -0.0
        entity.float = -0.0
        entity.optionalDouble = -0.0
        let record = try Record(encoding: entity)
        guard case .real(let stored) = record["double"] else {
            Issue.record("double is not stored as a real")
            return
        }
        #expect(stored == 0 && stored.sign == .plus)
        let decoded: RecordEveryType = try record.decode()
        #expect(decoded.double == 0 && decoded.double.sign == .plus)
        #expect(decoded.float == 0 && decoded.float.sign == .plus)
        #expect(decoded.optionalDouble?.sign == .plus)
        #expect((-0.0).storedValue == .real(0) && Double(-0.0).storedValue.hashValue == Value.real(0).hashValue)
    }

    @Test("nil and the empty string are different values")
    func nilIsNotEmpty() throws {
        var empty = RecordEveryType()
        empty.optionalText = ""
        empty.optionalData = Data()
        let none = RecordEveryType()
        let emptyRecord = try Record(encoding: empty)
        let noneRecord = try Record(encoding: none)
        #expect(emptyRecord["optionalText"] == .text(""))
        #expect(noneRecord["optionalText"] == .null)
        #expect(emptyRecord["optionalData"] == .blob(Data()))
        #expect(noneRecord["optionalData"] == .null)
        #expect(emptyRecord != noneRecord)
        #expect(try emptyRecord.decode(as: RecordEveryType.self).optionalText == "")
        #expect(try noneRecord.decode(as: RecordEveryType.self).optionalText == nil)
    }

    // MARK: - Storage mapping

    @Test("Each attribute type is stored in its documented storage class")
    func storageMapping() throws {
        let entity = Self.maximal
        let record = try Record(encoding: entity)
        #expect(record["id"] == .integer(.max))
        #expect(record["bool"] == .integer(1))
        #expect(try Record(encoding: RecordEveryType())["bool"] == .integer(0))
        #expect(record["int8"] == .integer(127))
        #expect(record["uint8"] == .integer(255))
        #expect(record["uint32"] == .integer(4_294_967_295))
        #expect(record["uint64"] == .integer(.max))
        #expect(record["uint"] == .integer(.max))
        #expect(record["float"] == .real(Double(Float.greatestFiniteMagnitude)))
        #expect(record["double"] == .real(.greatestFiniteMagnitude))
        #expect(record["date"] == .real(entity.date.timeIntervalSinceReferenceDate))
        #expect(record["uuid"] == .blob(Data(repeating: 0xFF, count: 16)))
        #expect(record["optionalUUID"] == .blob(Data((0..<16).map { UInt8($0) })))
        #expect(record["url"] == .text("https://user@example.com:8443/a/b%20c?q=1&r=%C3%A9#frag"))
        #expect(record["optionalURL"] == .text(entity.optionalURL?.absoluteString ?? ""))
        #expect(record["data"] == .blob(entity.data))
        #expect(record["mood"] == .text("sad"))
        #expect(record["level"] == .integer(10))
        #expect(record["optionalDouble"] == .real(.infinity))
        #expect(record["text"] == .text(entity.text))
        #expect(record.primaryKey == .integer(.max))
        #expect(record.values.count == record.layout.names.count)
    }

    @Test("Nested Codable values, arrays and dictionaries are stored as JSON blobs with sorted keys")
    func nestedAsJSON() throws {
        var entity = RecordEveryType()
        entity.address = RecordEveryType.Address(zip: 12_345, street: "Main")
        entity.tags = ["b", "a"]
        entity.counts = ["z": 1, "a": 2]
        let record = try Record(encoding: entity)
        guard case .blob(let address) = record["address"], case .blob(let tags) = record["tags"],
            case .blob(let counts) = record["counts"]
        else {
            Issue.record("nested values are not stored as blobs")
            return
        }
        #expect(String(decoding: address, as: UTF8.self) == #"{"street":"Main","zip":12345}"#)
        #expect(String(decoding: tags, as: UTF8.self) == #"["b","a"]"#)
        #expect(String(decoding: counts, as: UTF8.self) == #"{"a":2,"z":1}"#)
        #expect(try JSONDecoder().decode(RecordEveryType.Address.self, from: address) == entity.address)
    }

    @Test("Renamed coding keys are the record's attribute names")
    func renamedKeys() throws {
        let entity = RecordRenamed(id: "k", fullName: "Jane Doe")
        let record = try Record(encoding: entity)
        #expect(record.layout.names == ["id", "full_name"])
        #expect(record["full_name"] == .text("Jane Doe"))
        #expect(record["fullName"] == nil)
        #expect(try record.decode() == entity)
    }

    // MARK: - Unstorable values

    @Test("NaN and unsigned integers above Int64.max are refused")
    func unstorableValues() throws {
        var entities: [(String, RecordEveryType)] = []
        var entity = RecordEveryType()
        entity.double = .nan
        entities.append(("Double.nan", entity))
        entity = RecordEveryType()
        entity.float = .nan
        entities.append(("Float.nan", entity))
        entity = RecordEveryType()
        entity.optionalDouble = .signalingNaN
        entities.append(("Double?.signalingNaN", entity))
        entity = RecordEveryType()
        entity.optionalFloat = -.nan
        entities.append(("Float?(-nan)", entity))
        entity = RecordEveryType()
        entity.uint64 = .max
        entities.append(("UInt64.max", entity))
        entity = RecordEveryType()
        entity.uint64 = UInt64(Int64.max) + 1
        entities.append(("UInt64(Int64.max) + 1", entity))
        entity = RecordEveryType()
        entity.uint = .max
        entities.append(("UInt.max", entity))
        entity = RecordEveryType()
        entity.optionalUInt64 = .max
        entities.append(("UInt64?.max", entity))
        for (label, entity) in entities {
            let error = #expect(throws: PersistenceError.self, "\(label)") { try Record(encoding: entity) }
            #expect(error?.code == .invalidValue, "\(label)")
            #expect(error.map { !"\($0)".contains("18446744073709551615") } ?? true, "\(label)")
        }
    }

    @Test("A nested value JSON can't encode is refused", arguments: [Double.nan, .infinity, -.infinity])
    func unencodableNested(_ number: Double) {
        let entity = RecordNestedNumber(id: 1, measure: .init(value: number))
        let error = #expect(throws: PersistenceError.self) { try Record(encoding: entity) }
        #expect(error?.code == .invalidValue)
    }

    // MARK: - Type mismatches

    static let mismatches: [RecordMismatch] = [
        RecordMismatch(attribute: "int", value: .text("1"), label: "text"),
        RecordMismatch(attribute: "int", value: .null, label: "null"),
        RecordMismatch(attribute: "int", value: .real(1.0), label: "real 1.0"),
        RecordMismatch(attribute: "int", value: .blob(Data([1])), label: "blob"),
        RecordMismatch(attribute: "int8", value: .integer(300), label: "300"),
        RecordMismatch(attribute: "int8", value: .integer(-129), label: "-129"),
        RecordMismatch(attribute: "int16", value: .integer(40_000), label: "40000"),
        RecordMismatch(attribute: "int32", value: .integer(Int64(Int32.max) + 1), label: "Int32.max + 1"),
        RecordMismatch(attribute: "uint8", value: .integer(-1), label: "-1"),
        RecordMismatch(attribute: "uint8", value: .integer(256), label: "256"),
        RecordMismatch(attribute: "uint64", value: .integer(-1), label: "-1"),
        RecordMismatch(attribute: "uint", value: .integer(.min), label: "Int64.min"),
        RecordMismatch(attribute: "bool", value: .integer(2), label: "2"),
        RecordMismatch(attribute: "bool", value: .integer(-1), label: "-1"),
        RecordMismatch(attribute: "bool", value: .text("true"), label: "text"),
        RecordMismatch(attribute: "bool", value: .null, label: "null"),
        RecordMismatch(attribute: "double", value: .text("1.0"), label: "text"),
        RecordMismatch(attribute: "double", value: .null, label: "null"),
        RecordMismatch(attribute: "float", value: .blob(Data()), label: "blob"),
        RecordMismatch(attribute: "text", value: .integer(1), label: "integer"),
        RecordMismatch(attribute: "text", value: .blob(Data("x".utf8)), label: "blob"),
        RecordMismatch(attribute: "text", value: .null, label: "null"),
        RecordMismatch(attribute: "data", value: .text("x"), label: "text"),
        RecordMismatch(attribute: "data", value: .null, label: "null"),
        RecordMismatch(attribute: "date", value: .text("2020-01-01"), label: "text"),
        RecordMismatch(attribute: "date", value: .null, label: "null"),
        RecordMismatch(attribute: "uuid", value: .blob(Data(count: 15)), label: "15 bytes"),
        RecordMismatch(attribute: "uuid", value: .blob(Data(count: 17)), label: "17 bytes"),
        RecordMismatch(
            attribute: "uuid", value: .text("00010203-0405-0607-0809-0A0B0C0D0E0F"), label: "text"),
        RecordMismatch(attribute: "url", value: .integer(1), label: "integer"),
        RecordMismatch(attribute: "url", value: .text(""), label: "empty text"),
        RecordMismatch(attribute: "url", value: .null, label: "null"),
        RecordMismatch(attribute: "mood", value: .integer(0), label: "integer"),
        RecordMismatch(attribute: "mood", value: .null, label: "null"),
        RecordMismatch(attribute: "level", value: .text("1"), label: "text"),
        RecordMismatch(attribute: "address", value: .blob(Data("not json".utf8)), label: "invalid JSON"),
        RecordMismatch(attribute: "address", value: .blob(Data("[]".utf8)), label: "JSON of another shape"),
        RecordMismatch(attribute: "address", value: .text(#"{"street":"Main","zip":1}"#), label: "JSON as text"),
        RecordMismatch(attribute: "address", value: .null, label: "null"),
        RecordMismatch(attribute: "tags", value: .text("[]"), label: "text"),
        RecordMismatch(attribute: "optionalInt", value: .text("1"), label: "text"),
        RecordMismatch(attribute: "optionalUUID", value: .blob(Data([1])), label: "1 byte"),
        RecordMismatch(attribute: "optionalAddress", value: .blob(Data("{".utf8)), label: "invalid JSON"),
    ]

    @Test("A stored value of the wrong class or range is a type mismatch", arguments: mismatches)
    func typeMismatch(_ test: RecordMismatch) throws {
        var record = try Record(encoding: RecordEveryType())
        try record.set(test.attribute, to: test.value)
        let error = #expect(throws: PersistenceError.self) { try record.decode(as: RecordEveryType.self) }
        #expect(error?.code == .typeMismatch)
    }

    @Test("A record takes plain Swift values, stored as entities store them")
    func setsSwiftValues() throws {
        var record = try Record(encoding: RecordEveryType())
        let count: Int64 = 42
        let missing: Int? = nil
        try record.set("int64", to: count)
        try record.set("double", to: 2.5)
        try record.set("text", to: "plain")
        try record.set("optionalInt", to: missing)
        #expect(record["int64"] == .integer(42) && record["double"] == .real(2.5) && record["text"] == .text("plain"))
        #expect(record["optionalInt"] == .null)
        let decoded: RecordEveryType = try record.decode()
        #expect(decoded.int64 == 42 && decoded.double == 2.5 && decoded.text == "plain" && decoded.optionalInt == nil)
        #expect(throws: PersistenceError.self) { try record.set("nothing", to: 1) }
    }

    @Test("Stored integers widen to Double, Float and Date when decoded")
    func numericWidening() throws {
        var record = try Record(encoding: RecordEveryType())
        try record.set("double", to: .integer(3))
        try record.set("float", to: .integer(-2))
        try record.set("date", to: .integer(60))
        let decoded: RecordEveryType = try record.decode()
        #expect(decoded.double == 3)
        #expect(decoded.float == -2)
        #expect(decoded.date == Date(timeIntervalSinceReferenceDate: 60))
    }

    @Test(
        "A raw value with no matching enum case is a type mismatch",
        arguments: [
            RecordMismatch(attribute: "mood", value: .text("angry"), label: "unknown case"),
            RecordMismatch(attribute: "level", value: .integer(7), label: "unknown case"),
            RecordMismatch(attribute: "optionalMood", value: .text(""), label: "unknown case"),
        ])
    func unknownEnumCase(_ test: RecordMismatch) throws {
        var record = try Record(encoding: RecordEveryType())
        try record.set(test.attribute, to: test.value)
        let error = #expect(throws: PersistenceError.self) { try record.decode(as: RecordEveryType.self) }
        #expect(error?.code == .typeMismatch)
    }

    @Test("The error for an unknown enum case does not quote the stored value")
    func unknownEnumCaseIsPrivate() throws {
        var record = try Record(encoding: RecordEveryType())
        try record.set("optionalMood", to: .text("secret-text"))
        #expect(throws: (any Error).self) { try record.decode(as: RecordEveryType.self) }
        do {
            _ = try record.decode(as: RecordEveryType.self)
        } catch {
            #expect(!"\(error)".contains("secret-text"))
        }
    }

    @Test("A real that doesn't fit a Float is a type mismatch, not infinity")
    func floatOverflow() throws {
        var record = try Record(encoding: RecordEveryType())
        try record.set("float", to: .real(1e300))
        let error = #expect(throws: PersistenceError.self) { try record.decode(as: RecordEveryType.self) }
        #expect(error?.code == .typeMismatch)
    }

    @Test("A record needs exactly one value per attribute")
    func recordValueCount() throws {
        let layout = try SchemaCache.layout(for: RecordEveryType.self)
        let error = #expect(throws: PersistenceError.self) { try Record(layout: layout, values: [.null]) }
        #expect(error?.code == .invalidArgument)
    }

    @Test("Type-mismatch messages never quote the stored value")
    func mismatchMessageIsPrivate() throws {
        var record = try Record(encoding: RecordEveryType())
        try record.set("int", to: .text("secret-text"))
        let error = #expect(throws: PersistenceError.self) { try record.decode(as: RecordEveryType.self) }
        #expect(error?.code == .typeMismatch)
        #expect(error.map { !"\($0)".contains("secret-text") } ?? false)
        #expect(error.map { $0.message.contains("int") } ?? false)
    }

    @Test("Decoding a record of another entity's shape is a type mismatch")
    func wrongLayout() throws {
        let record = try Record(encoding: RecordSmall(id: 1, name: "x"))
        let error = #expect(throws: PersistenceError.self) { try record.decode(as: RecordRenamed.self) }
        #expect(error?.code == .typeMismatch)
    }

    // MARK: - Record API

    @Test(
        "Reading or setting an unknown attribute is an unknownAttribute error",
        arguments: [
            "missing", "", "ID", "full_name", "name\"; DROP TABLE x; --",
        ])
    func unknownAttribute(_ name: String) throws {
        var record = try Record(encoding: RecordSmall(id: 1, name: "x"))
        let readError = #expect(throws: PersistenceError.self) { try record.value(of: name) }
        #expect(readError?.code == .unknownAttribute)
        let writeError = #expect(throws: PersistenceError.self) { try record.set(name, to: .integer(1)) }
        #expect(writeError?.code == .unknownAttribute)
        #expect(record[name] == nil)
        #expect(record.values == [.integer(1), .text("x")])
    }

    @Test("set changes what decode returns")
    func setAndDecode() throws {
        var record = try Record(encoding: RecordSmall(id: 1, name: "John"))
        #expect(try record.value(of: "name") == .text("John"))
        try record.set("name", to: .text("Jane"))
        try record.set("id", to: .integer(7))
        #expect(try record.value(of: "name") == .text("Jane"))
        #expect(record.primaryKey == .integer(7))
        #expect(try record.decode() == RecordSmall(id: 7, name: "Jane"))
    }

    @Test("A fresh record of a layout holds nil everywhere")
    func emptyRecord() throws {
        let layout = try SchemaCache.layout(for: RecordSmall.self)
        let record = Record(layout: layout)
        #expect(record.values == [.null, .null])
        #expect(record.primaryKey == .null)
        let error = #expect(throws: PersistenceError.self) { try record.decode(as: RecordSmall.self) }
        #expect(error?.code == .typeMismatch)
    }

    @Test("Records are equal when their attribute names and values are")
    func recordEquality() throws {
        let first = try Record(encoding: RecordSmall(id: 1, name: "\u{E9}"))
        let same = try Record(encoding: RecordSmall(id: 1, name: "\u{E9}"))
        let decomposed = try Record(encoding: RecordSmall(id: 1, name: "e\u{301}"))
        let otherKey = try Record(encoding: RecordSmall(id: 2, name: "\u{E9}"))
        #expect(first == same)
        #expect(first.hashValue == same.hashValue)
        #expect(first != decomposed)
        #expect(first != otherKey)
        #expect(Set([first, same, decomposed, otherKey]).count == 3)
        let layout = try SchemaCache.layout(for: RecordSmall.self)
        let rebuilt = try Record(layout: RecordLayout(layout.entity), values: first.values)
        #expect(rebuilt == first)
        #expect(rebuilt.hashValue == first.hashValue)
        let renamed = try Record(encoding: RecordRenamed(id: "1", fullName: "\u{E9}"))
        #expect(renamed != first)
    }
}
