package import Foundation
package import PersistenceCore

/// Every supported attribute type, optional and not.
package struct AllTypes: Entity, Equatable {
    /// A `String` raw-value enum.
    package enum Mood: String, Codable, Sendable, CaseIterable { case happy, sad }
    /// An `Int` raw-value enum.
    package enum Level: Int, Codable, Sendable {
        case low = 1
        case high = 2
    }
    /// A nested value, stored as JSON.
    package struct Address: Codable, Sendable, Equatable {
        package var street: String
        package var numbers: [Int]
    }

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

    /// A value with ordinary contents and every optional `nil`.
    package static func sample(id: Int64) -> AllTypes {
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
package struct Person: Entity, Equatable {
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
}

/// An entity keyed by text.
package struct Tag: Entity, Equatable {
    package var id: String
    package var count: Int

    package init(id: String, count: Int) {
        self.id = id
        self.count = count
    }
}

/// An entity keyed by UUID, with a custom entity name.
package struct Device: Entity, Equatable {
    package var id: UUID
    package var label: String

    package init(id: UUID, label: String) {
        self.id = id
        self.label = label
    }

    package static var entityName: String { "devices" }
}

/// Edge values of every storage class, each stored twice: in an indexed attribute and in an unindexed copy, so a
/// backend's index lookups and scans can be checked against each other and against the core's semantics.
package struct EdgeValues: Entity, Equatable {
    package var id: Int64
    package var real: Double?
    package var realCopy: Double?
    package var integer: Int64?
    package var integerCopy: Int64?
    package var text: String?
    package var textCopy: String?
    package var blob: Data?
    package var blobCopy: Data?

    package init(id: Int64, real: Double? = nil, integer: Int64? = nil, text: String? = nil, blob: Data? = nil) {
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

    package static let indexes: [Index] = [.on("real"), .on("integer"), .on("text"), .on("blob")]
}

/// An article stamped by its modification date: an upsert older than the stored one is ignored.
package struct Article: Entity, Equatable {
    package var id: Int64
    package var title: String
    package var modifiedAt: Date?

    package init(id: Int64, title: String, modifiedAt: Date?) {
        self.id = id
        self.title = title
        self.modifiedAt = modifiedAt
    }

    package static let stampAttribute = "modifiedAt"
}

/// A document stamped by an increasing version number, with an index on its owner.
package struct Revision: Entity, Equatable {
    package var id: String
    package var body: String
    package var version: Int64?
    package var ownerID: Int64

    package init(id: String, body: String, version: Int64?, ownerID: Int64) {
        self.id = id
        self.body = body
        self.version = version
        self.ownerID = ownerID
    }

    package static let stampAttribute = "version"
    package static let indexes: [Index] = [.on("ownerID")]
}

/// An entity that no conformance database includes, to prove unknown entities are refused.
package struct Stranger: Entity, Equatable {
    package var id: Int64

    package init(id: Int64) { self.id = id }
}

/// The entities of the suite's databases.
let conformanceEntities: [any Entity.Type] = [
    AllTypes.self, Person.self, Tag.self, Device.self, EdgeValues.self, Article.self, Revision.self,
    HandWrittenPerson.self, MistakenRecord.self,
]
