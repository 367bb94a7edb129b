public import Foundation
public import PersistenceCore

/// ``AllTypes`` with its own record reading and writing (``Entity/init(record:)`` and
/// ``Entity/encode(to:)-(AttributeWriter)``) instead of `Codable`'s: the conformance suite runs entities of both
/// kinds, and the two read each other's records (same entity name, same attributes).
public struct HandWrittenAllTypes: Entity, Equatable {
    public typealias Mood = AllTypes.Mood
    public typealias Level = AllTypes.Level
    public typealias Address = AllTypes.Address

    public var id: Int64
    public var bool: Bool
    public var int: Int
    public var int8: Int8
    public var int16: Int16
    public var int32: Int32
    public var int64: Int64
    public var uint8: UInt8
    public var uint16: UInt16
    public var uint32: UInt32
    public var uint64: UInt64
    public var double: Double
    public var float: Float
    public var string: String
    public var data: Data
    public var date: Date
    public var uuid: UUID
    public var url: URL
    public var mood: Mood
    public var level: Level
    public var address: Address
    public var tags: [String]
    public var optionalString: String?
    public var optionalInt: Int?
    public var optionalDouble: Double?
    public var optionalData: Data?
    public var optionalDate: Date?
    public var optionalUUID: UUID?
    public var optionalMood: Mood?
    public var optionalAddress: Address?

    /// Stored under ``AllTypes``' name, so databases of either type read the other's records.
    public static var entityName: String { "AllTypes" }

    public init(record: AttributeReader) throws {
        id = try record.decode("id")
        bool = try record.decode("bool")
        int = try record.decode("int")
        int8 = try record.decode("int8")
        int16 = try record.decode("int16")
        int32 = try record.decode("int32")
        int64 = try record.decode("int64")
        uint8 = try record.decode("uint8")
        uint16 = try record.decode("uint16")
        uint32 = try record.decode("uint32")
        uint64 = try record.decode("uint64")
        double = try record.decode("double")
        float = try record.decode("float")
        string = try record.decode("string")
        data = try record.decode("data")
        date = try record.decode("date")
        uuid = try record.decode("uuid")
        url = try record.decode("url")
        mood = try record.decode("mood")
        level = try record.decode("level")
        address = try record.decodeJSON("address")
        tags = try record.decodeJSON("tags")
        optionalString = try record.decode("optionalString")
        optionalInt = try record.decode("optionalInt")
        optionalDouble = try record.decode("optionalDouble")
        optionalData = try record.decode("optionalData")
        optionalDate = try record.decode("optionalDate")
        optionalUUID = try record.decode("optionalUUID")
        optionalMood = try record.decode("optionalMood")
        optionalAddress = try record.decodeJSON("optionalAddress")
    }

    public func encode(to record: AttributeWriter) throws {
        try record.encode(id, for: "id")
        try record.encode(bool, for: "bool")
        try record.encode(int, for: "int")
        try record.encode(int8, for: "int8")
        try record.encode(int16, for: "int16")
        try record.encode(int32, for: "int32")
        try record.encode(int64, for: "int64")
        try record.encode(uint8, for: "uint8")
        try record.encode(uint16, for: "uint16")
        try record.encode(uint32, for: "uint32")
        try record.encode(uint64, for: "uint64")
        try record.encode(double, for: "double")
        try record.encode(float, for: "float")
        try record.encode(string, for: "string")
        try record.encode(data, for: "data")
        try record.encode(date, for: "date")
        try record.encode(uuid, for: "uuid")
        try record.encode(url, for: "url")
        try record.encode(mood, for: "mood")
        try record.encode(level, for: "level")
        try record.encodeJSON(address, for: "address")
        try record.encodeJSON(tags, for: "tags")
        try record.encode(optionalString, for: "optionalString")
        try record.encode(optionalInt, for: "optionalInt")
        try record.encode(optionalDouble, for: "optionalDouble")
        try record.encode(optionalData, for: "optionalData")
        try record.encode(optionalDate, for: "optionalDate")
        try record.encode(optionalUUID, for: "optionalUUID")
        try record.encode(optionalMood, for: "optionalMood")
        try record.encodeJSON(optionalAddress, for: "optionalAddress")
    }

    /// The same values as `value`.
    public init(_ value: AllTypes) {
        (id, bool, int, int8, int16, int32, int64) =
            (value.id, value.bool, value.int, value.int8, value.int16, value.int32, value.int64)
        (uint8, uint16, uint32, uint64, double, float) =
            (value.uint8, value.uint16, value.uint32, value.uint64, value.double, value.float)
        (string, data, date, uuid, url, mood, level, address, tags) =
            (
                value.string, value.data, value.date, value.uuid, value.url, value.mood, value.level, value.address,
                value.tags
            )
        (optionalString, optionalInt, optionalDouble, optionalData) =
            (value.optionalString, value.optionalInt, value.optionalDouble, value.optionalData)
        (optionalDate, optionalUUID, optionalMood, optionalAddress) =
            (value.optionalDate, value.optionalUUID, value.optionalMood, value.optionalAddress)
    }
}

/// ``Person`` with its own record reading and writing, under its own name: indexed, unique, queried.
public struct HandWrittenPerson: Entity, Equatable {
    public var id: Int64
    public var name: String
    public var email: String?
    public var age: Int?
    public var score: Double

    public init(id: Int64, name: String, email: String? = nil, age: Int? = nil, score: Double = 0) {
        self.id = id
        self.name = name
        self.email = email
        self.age = age
        self.score = score
    }

    public static let indexes: [Index] = [.on("name"), .unique("email")]

    public init(record: AttributeReader) throws {
        id = try record.decode("id")
        name = try record.decode("name")
        email = try record.decode("email")
        age = try record.decode("age")
        score = try record.decode("score")
    }

    public func encode(to record: AttributeWriter) throws {
        try record.encode(id, for: "id")
        try record.encode(name, for: "name")
        try record.encode(email, for: "email")
        try record.encode(age, for: "age")
        try record.encode(score, for: "score")
    }
}

/// A hand-written entity whose record code is wrong in a way chosen by `mistake`, to check that mistakes are typed
/// errors that store nothing.
public struct MistakenRecord: Entity, Equatable {
    /// What the hand-written code gets wrong.
    public enum Mistake: Int, Codable, Sendable {
        /// Writes every attribute correctly.
        case none
        /// Writes an attribute the schema doesn't have.
        case unknownAttribute
        /// Writes text into the integer attribute.
        case wrongType
        /// Writes NaN into the real attribute.
        case notANumber
        /// Reads the integer attribute as text.
        case readsWrongType
    }

    public var id: Int64
    public var count: Int
    public var ratio: Double
    public var mistake: Mistake

    public init(id: Int64, count: Int, ratio: Double, mistake: Mistake) {
        self.id = id
        self.count = count
        self.ratio = ratio
        self.mistake = mistake
    }

    public init(record: AttributeReader) throws {
        id = try record.decode("id")
        mistake = try record.decode("mistake")
        ratio = try record.decode("ratio")
        if mistake == .readsWrongType {
            let text: String = try record.decode("count")
            count = text.count
        } else {
            count = try record.decode("count")
        }
    }

    public func encode(to record: AttributeWriter) throws {
        try record.encode(id, for: "id")
        switch mistake {
        case .unknownAttribute: try record.encode(count, for: "cuont")
        case .wrongType: try record.encode("many", for: "count")
        default: try record.encode(count, for: "count")
        }
        try record.encode(mistake == .notANumber ? .nan : ratio, for: "ratio")
        try record.encode(mistake, for: "mistake")
    }
}
