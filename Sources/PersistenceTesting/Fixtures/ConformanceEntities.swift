public import Foundation
public import PersistenceCore

/// Every supported attribute type, optional and not.
public struct AllTypes: Entity, Equatable {
    /// A `String` raw-value enum.
    public enum Mood: String, Codable, Sendable, CaseIterable { case happy, sad }
    /// An `Int` raw-value enum.
    public enum Level: Int, Codable, Sendable {
        case low = 1
        case high = 2
    }
    /// A nested value, stored as JSON.
    public struct Address: Codable, Sendable, Equatable {
        public var street: String
        public var numbers: [Int]
    }

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

    /// A value with ordinary contents and every optional `nil`.
    public static func sample(id: Int64) -> AllTypes {
        AllTypes(
            id: id, bool: true, int: 42, int8: -8, int16: 16, int32: -32, int64: 64, uint8: 8, uint16: 16,
            uint32: 32, uint64: 64, double: 3.25, float: 1.5, string: "hello", data: Data([1, 2, 3]),
            date: Date(timeIntervalSinceReferenceDate: 1_000.125), uuid: UUID(), url: URL(fileURLWithPath: "/tmp/x"),
            mood: .happy, level: .high, address: Address(street: "Main", numbers: [1, 2]), tags: ["a"],
            optionalString: nil, optionalInt: nil, optionalDouble: nil, optionalData: nil, optionalDate: nil,
            optionalUUID: nil, optionalMood: nil, optionalAddress: nil)
    }

    /// ``sample(id:)`` with every optional set.
    static func filled(id: Int64) -> AllTypes {
        var value = sample(id: id)
        value.optionalString = "present"
        value.optionalInt = 7
        value.optionalDouble = -2.5
        value.optionalData = Data([0, 255])
        value.optionalDate = Date(timeIntervalSinceReferenceDate: -5)
        value.optionalUUID = UUID()
        value.optionalMood = .sad
        value.optionalAddress = AllTypes.Address(street: "Side", numbers: [])
        return value
    }
}

/// A person, with an index on `name` and a unique `email`.
public struct Person: Entity, Equatable {
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
}

/// An entity keyed by text.
public struct Tag: Entity, Equatable {
    public var id: String
    public var count: Int

    public init(id: String, count: Int) {
        self.id = id
        self.count = count
    }
}

/// An entity keyed by UUID, with a custom entity name.
public struct Device: Entity, Equatable {
    public var id: UUID
    public var label: String

    public init(id: UUID, label: String) {
        self.id = id
        self.label = label
    }

    public static var entityName: String { "devices" }
}

/// Edge values of every storage class, each stored twice: in an indexed attribute and in an unindexed copy, so a
/// backend's index lookups and scans can be checked against each other and against the core's semantics.
public struct EdgeValues: Entity, Equatable {
    public var id: Int64
    public var real: Double?
    public var realCopy: Double?
    public var integer: Int64?
    public var integerCopy: Int64?
    public var text: String?
    public var textCopy: String?
    public var blob: Data?
    public var blobCopy: Data?

    public init(id: Int64, real: Double? = nil, integer: Int64? = nil, text: String? = nil, blob: Data? = nil) {
        self.id = id
        self.real = real
        realCopy = real
        self.integer = integer
        integerCopy = integer
        self.text = text
        textCopy = text
        self.blob = blob
        blobCopy = blob
    }

    public static let indexes: [Index] = [.on("real"), .on("integer"), .on("text"), .on("blob")]
}

/// An article stamped by its modification date: an upsert older than the stored one is ignored.
public struct Article: Entity, Equatable {
    public var id: Int64
    public var title: String
    public var modifiedAt: Date?

    public init(id: Int64, title: String, modifiedAt: Date?) {
        self.id = id
        self.title = title
        self.modifiedAt = modifiedAt
    }

    public static let stampAttribute = "modifiedAt"
}

/// A document stamped by an increasing version number, with an index on its owner.
public struct Revision: Entity, Equatable {
    public var id: String
    public var body: String
    public var version: Int64?
    public var ownerID: Int64

    public init(id: String, body: String, version: Int64?, ownerID: Int64) {
        self.id = id
        self.body = body
        self.version = version
        self.ownerID = ownerID
    }

    public static let stampAttribute = "version"
    public static let indexes: [Index] = [.on("ownerID")]
}

/// An entity that no conformance database includes, to prove unknown entities are refused.
public struct Stranger: Entity, Equatable {
    public var id: Int64

    public init(id: Int64) { self.id = id }
}

/// The entities of the suite's databases.
let conformanceEntities: [any Entity.Type] = [
    AllTypes.self, Person.self, Tag.self, Device.self, EdgeValues.self, Article.self, Revision.self,
    HandWrittenPerson.self, MistakenRecord.self,
]
