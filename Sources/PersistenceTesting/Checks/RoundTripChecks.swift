import Foundation
import PersistenceCore
import Testing

/// Every attribute type survives a store and a recover, at its extremes.
enum RoundTripChecks {
    static let all: [ConformanceCheck] = [
        .database("round-trips every attribute type") { try everyType($0) },
        .database("round-trips extreme values") { try extremes($0) },
        .database("keeps nil and empty apart") { try nilVersusEmpty($0) },
        .database("round-trips 1 MB strings and blobs") { try large($0) },
        .database("refuses NaN and stores infinities") { try nanPolicy($0) },
        .database("refuses unsigned values above Int64.max") { try unsignedOverflow($0) },
        .database("round-trips text, UUID and custom-named entities' keys") { try otherKeys($0) },
        ConformanceCheck("keeps data after the database is reopened, its entities listed in any order") {
            backend, directory in
            try await reopen(backend, directory)
        },
    ]

    static func everyType(_ db: some Database) throws {
        let value = AllTypes.filled(id: 1)
        let plain = AllTypes.sample(id: 2)
        try db.create(value)
        try db.create(plain)
        #expect(try db.recover(AllTypes.self, id: 1) == value)
        #expect(try db.recover(AllTypes.self, id: 2) == plain)
    }

    static func extremes(_ db: some Database) throws {
        var low = AllTypes.sample(id: Int64.min)
        low.int = Int.min
        low.int8 = Int8.min
        low.int16 = Int16.min
        low.int32 = Int32.min
        low.int64 = Int64.min
        low.uint8 = 0
        low.uint64 = 0
        low.double = -Double.greatestFiniteMagnitude
        low.float = -Float.greatestFiniteMagnitude
        low.string = ""
        low.data = Data()
        low.date = Date.distantPast
        var high = AllTypes.sample(id: Int64.max)
        high.int = Int.max
        high.int8 = Int8.max
        high.int16 = Int16.max
        high.int32 = Int32.max
        high.int64 = Int64.max
        high.uint8 = UInt8.max
        high.uint16 = UInt16.max
        high.uint32 = UInt32.max
        high.uint64 = UInt64(Int64.max)
        high.double = Double.leastNonzeroMagnitude
        high.float = Float.leastNonzeroMagnitude
        high.string = "Zoë 👩‍👩‍👧 \u{0} null inside, 日本語, \u{301}combining"
        high.data = Data((0...255).map { UInt8($0) })
        high.date = Date(timeIntervalSinceReferenceDate: 123_456_789.123_456_789)
        high.url = URL(string: "https://example.com/a%20b?q=ü#frag") ?? high.url
        try db.create([low, high])
        #expect(try db.recover(AllTypes.self, id: Int64.min) == low)
        #expect(try db.recover(AllTypes.self, id: Int64.max) == high)
        let all: [AllTypes] = try db.recover()
        #expect(all.map(\.id) == [Int64.min, Int64.max], "records come in primary-key order")
    }

    static func nilVersusEmpty(_ db: some Database) throws {
        var empty = AllTypes.sample(id: 1)
        empty.optionalString = ""
        empty.optionalData = Data()
        empty.optionalInt = 0
        let missing = AllTypes.sample(id: 2)
        try db.create([empty, missing])
        #expect(try db.recover(AllTypes.self, id: 1)?.optionalString == "")
        #expect(try db.recover(AllTypes.self, id: 1)?.optionalData == Data())
        #expect(try db.recover(AllTypes.self, id: 1)?.optionalInt == 0)
        #expect(try db.recover(AllTypes.self, id: 2)?.optionalString == nil)
        #expect(try db.recover(AllTypes.self, id: 2)?.optionalData == nil)
        let nils: [AllTypes] = try db.recover(where: Field("optionalString") == nil)
        #expect(nils.map(\.id) == [2])
        let empties: [AllTypes] = try db.recover(where: Field("optionalString") == "")
        #expect(empties.map(\.id) == [1])
    }

    static func large(_ db: some Database) throws {
        var value = AllTypes.sample(id: 1)
        value.string = String(repeating: "ab€", count: 350_000)
        value.data = Data((0..<1_048_576).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        try db.create(value)
        let back = try db.recover(AllTypes.self, id: 1)
        #expect(back?.string == value.string)
        #expect(back?.data == value.data)
    }

    static func nanPolicy(_ db: some Database) throws {
        var nan = AllTypes.sample(id: 1)
        nan.double = .nan
        expectError(.invalidValue) { try db.create(nan) }
        var floatNaN = AllTypes.sample(id: 2)
        floatNaN.float = .nan
        expectError(.invalidValue) { try db.create(floatNaN) }
        #expect(try db.count(AllTypes.self) == 0, "nothing is stored when a value is refused")
        var infinite = AllTypes.sample(id: 3)
        infinite.double = .infinity
        infinite.float = -.infinity
        infinite.optionalDouble = -.infinity
        try db.create(infinite)
        let back = try db.recover(AllTypes.self, id: 3)
        #expect(back?.double == .infinity)
        #expect(back?.float == -.infinity)
        #expect(back?.optionalDouble == -.infinity)
        var negativeZero = AllTypes.sample(id: 4)
        negativeZero.double = -0.0
        try db.create(negativeZero)
        #expect(try db.recover(AllTypes.self, id: 4)?.double == 0)
    }

    static func unsignedOverflow(_ db: some Database) throws {
        var value = AllTypes.sample(id: 1)
        value.uint64 = UInt64(Int64.max) + 1
        expectError(.invalidValue) { try db.create(value) }
        value.uint64 = UInt64.max
        expectError(.invalidValue) { try db.upsert(value) }
        #expect(try db.count(AllTypes.self) == 0)
    }

    static func otherKeys(_ db: some Database) throws {
        let tags = ["b", "", "a", "é", "e\u{301}", "Z", "\u{0}x"].enumerated().map { Tag(id: $1, count: $0) }
        try db.create(tags)
        for tag in tags { #expect(try db.recover(Tag.self, id: tag.id) == tag) }
        let ordered: [Tag] = try db.recover()
        #expect(
            ordered.map(\.id) == tags.map(\.id).sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) },
            "text keys sort by UTF-8 bytes")
        let devices = (0..<5).map { Device(id: UUID(), label: "device \($0)") }
        try db.create(devices)
        for device in devices { #expect(try db.recover(Device.self, id: device.id) == device) }
        #expect(try db.count(Device.self) == 5)
        #expect(try db.recover(Device.self, id: UUID()) == nil)
    }

    static func reopen(_ backend: any ConformanceBackend, _ directory: URL) async throws {
        try await withDatabase(backend, directory, conformanceEntities) { db in
            try db.create(Person(id: 1, name: "Ada", email: "ada@example.com"))
            try db.create(AllTypes.sample(id: 9))
        }
        let (email, count) = try await withDatabase(backend, directory, conformanceEntities) { db in
            (try db.recover(Person.self, id: 1)?.email, try db.count(AllTypes.self))
        }
        #expect(email == "ada@example.com")
        #expect(count == 1)
        // The same model listing its entities in another order is no schema change.
        let reversed = try await withDatabase(backend, directory, conformanceEntities.reversed()) { db in
            try db.recover(Person.self, id: 1)?.email
        }
        #expect(reversed == "ada@example.com")
    }
}
