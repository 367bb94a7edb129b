import Foundation
import PersistenceCore
import PersistenceLMDB
import PersistenceMacros
import PersistenceSQLite
import PersistenceTesting
import Testing

/// ``AllTypes`` with `@Entity`: the generated record code stores what `Codable` stores, value for value, and the
/// two read each other's records in SQLite and LMDB (plain and encrypted) stores.
@Entity
struct MacroAllTypes: Equatable {
    typealias Mood = AllTypes.Mood
    typealias Level = AllTypes.Level
    typealias Address = AllTypes.Address

    var id: Int64
    var bool: Bool
    var int: Int
    var int8: Int8
    var int16: Int16
    var int32: Int32
    var int64: Int64
    var uint8: UInt8
    var uint16: UInt16
    var uint32: UInt32
    var uint64: UInt64
    var double: Double
    var float: Float
    var string: String
    var data: Data
    var date: Date
    var uuid: UUID
    var url: URL
    var mood: Mood
    var level: Level
    var address: Address
    var tags: [String]
    var optionalString: String?
    var optionalInt: Int?
    var optionalDouble: Double?
    var optionalData: Data?
    var optionalDate: Date?
    var optionalUUID: UUID?
    var optionalMood: Mood?
    var optionalAddress: Address?

    /// Stored under ``AllTypes``' name, so databases of either type read the other's records.
    static var entityName: String { "AllTypes" }
}

extension MacroAllTypes {
    /// The same value as an `AllTypes` (an extension: the memberwise initializer stays).
    init(_ value: AllTypes) {
        self.init(
            id: value.id, bool: value.bool, int: value.int, int8: value.int8, int16: value.int16, int32: value.int32,
            int64: value.int64, uint8: value.uint8, uint16: value.uint16, uint32: value.uint32, uint64: value.uint64,
            double: value.double, float: value.float, string: value.string, data: value.data, date: value.date,
            uuid: value.uuid, url: value.url, mood: value.mood, level: value.level, address: value.address,
            tags: value.tags, optionalString: value.optionalString, optionalInt: value.optionalInt,
            optionalDouble: value.optionalDouble, optionalData: value.optionalData, optionalDate: value.optionalDate,
            optionalUUID: value.optionalUUID, optionalMood: value.optionalMood, optionalAddress: value.optionalAddress)
    }
}

/// Renamed and left-out attributes through `CodingKeys`, a `let`, a `UInt64?`, and its `Codable`-only twin.
@Entity
struct Renamed: Equatable {
    let id: String
    var fullName: String
    var rank: UInt64?
    var cache: [Int] = []
    static let indexes: [Index] = [.on("full_name")]

    enum CodingKeys: String, CodingKey {
        case id
        case fullName = "full_name"
        case rank
    }
}

struct RenamedCodable: Entity, Equatable {
    let id: String
    var fullName: String
    var rank: UInt64?
    static var entityName: String { "Renamed" }
    static let indexes: [Index] = [.on("full_name")]

    enum CodingKeys: String, CodingKey {
        case id
        case fullName = "full_name"
        case rank
    }
}

/// No memberwise initializer to call (its own initializer, a private property): `@Entity` sets the properties.
@Entity
struct Sealed: Equatable {
    var id: Int64
    private var secret: String
    var note: String?

    init(id: Int64, secret: String, note: String? = nil) {
        self.id = id
        self.secret = secret
        self.note = note
    }
}

/// An `@Entity` with vectors, stored as ``Passage`` is.
@Entity
struct MacroPassage: Equatable {
    var id: Int64
    var lang: String
    var embedding: Vector?

    static var entityName: String { "Passage" }
    static let vectorAttributes: [VectorAttribute] = [.init("embedding", dimensions: 8)]
    static let indexes: [Index] = [.on("lang")]
}

struct EntityMacroRecordTests {
    static let values: [AllTypes] = {
        var high = AllTypes.sample(id: 1)
        high.int = .max
        high.uint64 = UInt64(Int64.max)
        high.string = "Zoë 👩‍👩‍👧 \u{0} null inside"
        high.double = -.infinity
        high.optionalString = "present"
        high.optionalInt = -7
        high.optionalDouble = -0.0
        high.optionalData = Data()
        high.optionalDate = Date(timeIntervalSinceReferenceDate: -5)
        high.optionalUUID = UUID()
        high.optionalMood = .sad
        high.optionalAddress = high.address
        return [high, AllTypes.sample(id: 2)]
    }()

    @Test func storesWhatCodableStoresValueForValue() throws {
        let codable = RecordWriter(layout: try SchemaCache.layout(for: AllTypes.self))
        let generated = RecordWriter(layout: try SchemaCache.layout(for: MacroAllTypes.self))
        for value in Self.values {
            let expected = try codable.encode(value)
            #expect(try generated.encode(MacroAllTypes(value)) == expected, "\(value.id)")
        }
        let renamed = try RecordWriter(layout: SchemaCache.layout(for: Renamed.self))
            .encode(Renamed(id: "a", fullName: "Ada", rank: 3, cache: [1]))
        let twin = try RecordWriter(layout: SchemaCache.layout(for: RenamedCodable.self))
            .encode(RenamedCodable(id: "a", fullName: "Ada", rank: 3))
        #expect(renamed == twin)
        #expect(try SchemaCache.layout(for: Renamed.self).names == ["id", "full_name", "rank"])
    }

    @Test func storesVectorsAsCodableDoesAndRefusesOtherDimensions() throws {
        let vector = Vector([1, -2, 0.5, 0, -0.0, 3e-39, 7, 8])
        let codable = try RecordWriter(layout: SchemaCache.layout(for: Passage.self))
            .encode(Passage(id: 1, lang: "en", embedding: vector))
        let writer = RecordWriter(layout: try SchemaCache.layout(for: MacroPassage.self))
        #expect(try writer.encode(MacroPassage(id: 1, lang: "en", embedding: vector)) == codable)
        #expect(throws: PersistenceError.self) {
            try writer.encode(MacroPassage(id: 2, lang: "en", embedding: Vector([1, 2])))
        }
        try withTemporaryDirectory { directory in
            var builder = SQLiteBuilder(databaseName: "Vectors", entities: [MacroPassage.self])
            builder.directory = directory
            let db = try builder.create()
            defer { try? db.close() }
            try db.create([
                MacroPassage(id: 1, lang: "en", embedding: vector), MacroPassage(id: 2, lang: "fr", embedding: nil),
            ])
            #expect(try db.recover(MacroPassage.self, id: 1)?.embedding == vector)
            let nearest = try db.nearest(
                MacroPassage.self, Query(nearest: .to(vector, in: "embedding", by: .euclidean), limit: 5))
            #expect(nearest.map(\.record.id) == [1] && nearest.first?.distance == 0)
        }
    }

    @Test func readsEntitiesWithoutAMemberwiseInitializer() throws {
        try withTemporaryDirectory { directory in
            var builder = SQLiteBuilder(databaseName: "Sealed", entities: [Sealed.self])
            builder.directory = directory
            let db = try builder.create()
            let sealed = [Sealed(id: 1, secret: "s1", note: "n"), Sealed(id: 2, secret: "s2")]
            try db.create(sealed)
            #expect(try db.recover(Sealed.self, sortedBy: [.ascending("id")]) == sealed)
            try db.close()
        }
    }

    @Test(arguments: ["sqlite", "lmdb", "lmdb-plain"])
    func readsAndWritesCodableRecords(backend: String) throws {
        try withTemporaryDirectory { directory in
            func open(_ entities: [any Entity.Type]) throws -> any Database {
                switch backend {
                case "sqlite":
                    var builder = SQLiteBuilder(databaseName: "Macro", entities: entities)
                    builder.directory = directory
                    return try builder.create()
                case "lmdb":
                    var builder = LMDBBuilder(databaseName: "Macro", passphrase: "macro", entities: entities)
                    builder.directory = directory
                    builder.keyDerivation = .argon2id(iterations: 1, memoryKiB: 64)
                    return try builder.create()
                default:
                    var builder = LMDBBuilder.unencrypted(databaseName: "Macro", model: Model(entities: entities))
                    builder.directory = directory
                    return try builder.create()
                }
            }
            do {
                let db = try open([AllTypes.self, RenamedCodable.self])
                try db.create(Self.values)
                try db.create(RenamedCodable(id: "x", fullName: "Grace", rank: nil))
                try db.close()
            }
            do {
                let db = try open([MacroAllTypes.self, Renamed.self])
                #expect(
                    try db.recover(MacroAllTypes.self, sortedBy: [.ascending("id")])
                        == Self.values.map(MacroAllTypes.init))
                #expect(
                    try db.recover(Renamed.self, where: Field("full_name") == "Grace") == [
                        Renamed(id: "x", fullName: "Grace", rank: nil)
                    ])
                var third = MacroAllTypes(AllTypes.sample(id: 3))
                third.optionalMood = .happy
                third.uint64 = 1 << 40
                try db.create(third)
                try db.create(Renamed(id: "y", fullName: "Alan", rank: 9, cache: [5]))
                // What the generated code refuses, Codable refuses too: nothing stored.
                var unsigned = MacroAllTypes(AllTypes.sample(id: 4))
                unsigned.uint64 = UInt64(Int64.max) + 1
                #expect(throws: PersistenceError.self) { try db.create(unsigned) }
                try db.close()
            }
            let db = try open([AllTypes.self, RenamedCodable.self])
            let third = try #require(try db.recover(AllTypes.self, id: 3))
            #expect(third.optionalMood == .happy && third.uint64 == 1 << 40)
            #expect(try db.recover(AllTypes.self, id: 4) == nil)
            #expect(try db.recover(RenamedCodable.self, id: "y") == RenamedCodable(id: "y", fullName: "Alan", rank: 9))
            #expect(try db.verify().isSound)
            try db.close()
        }
    }
}
