package import Foundation
package import PersistenceCore

/// ``AllTypes`` with its own record reading and writing (``Entity/init(record:)`` and
/// ``Entity/encode(to:)-(AttributeWriter)``) instead of `Codable`'s: the conformance suite runs entities of both
/// kinds, and the two read each other's records (same entity name, same attributes).
package struct HandWrittenAllTypes: Entity, Equatable {
    package typealias Mood = AllTypes.Mood
    package typealias Level = AllTypes.Level
    package typealias Address = AllTypes.Address

    package var id: Int64
    package var bool: Bool
    package var int: Int
    package var int8: Int8
    package var int16: Int16
    package var int32: Int32
    package var int64: Int64
    package var uint8: UInt8
    package var uint16: UInt16
    package var uint32: UInt32
    package var uint64: UInt64
    package var double: Double
    package var float: Float
    package var string: String
    package var data: Data
    package var date: Date
    package var uuid: UUID
    package var url: URL
    package var mood: Mood
    package var level: Level
    package var address: Address
    package var tags: [String]
    package var optionalString: String?
    package var optionalInt: Int?
    package var optionalDouble: Double?
    package var optionalData: Data?
    package var optionalDate: Date?
    package var optionalUUID: UUID?
    package var optionalMood: Mood?
    package var optionalAddress: Address?

    /// Stored under ``AllTypes``' name, so databases of either type read the other's records.
    package static var entityName: String { "AllTypes" }

    package init(record: AttributeReader) throws {
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

    package func encode(to record: AttributeWriter) throws {
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
    package init(_ value: AllTypes) {
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
package struct HandWrittenPerson: Entity, Equatable {
    package var id: Int64
    package var name: String
    package var email: String?
    package var age: Int?
    package var score: Double

    package init(id: Int64, name: String, email: String? = nil, age: Int? = nil, score: Double = 0) {
        self.id = id
        self.name = name
        self.email = email
        self.age = age
        self.score = score
    }

    package static let indexes: [Index] = [.on("name"), .unique("email")]

    package init(record: AttributeReader) throws {
        id = try record.decode("id")
        name = try record.decode("name")
        email = try record.decode("email")
        age = try record.decode("age")
        score = try record.decode("score")
    }

    package func encode(to record: AttributeWriter) throws {
        try record.encode(id, for: "id")
        try record.encode(name, for: "name")
        try record.encode(email, for: "email")
        try record.encode(age, for: "age")
        try record.encode(score, for: "score")
    }
}

/// A hand-written entity whose record code is wrong in a way chosen by `mistake`, to check that mistakes are typed
/// errors that store nothing.
package struct MistakenRecord: Entity, Equatable {
    /// What the hand-written code gets wrong.
    package enum Mistake: Int, Codable, Sendable {
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

    package var id: Int64
    package var count: Int
    package var ratio: Double
    package var mistake: Mistake

    package init(id: Int64, count: Int, ratio: Double, mistake: Mistake) {
        self.id = id
        self.count = count
        self.ratio = ratio
        self.mistake = mistake
    }

    package init(record: AttributeReader) throws {
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

    package func encode(to record: AttributeWriter) throws {
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
