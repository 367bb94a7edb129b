import Foundation
import PersistenceCore
import Testing

// MARK: - Entities

/// Every supported attribute type, non-optional then optional, in a fixed declaration order.
struct SchemaEveryType: Entity {
    enum Mood: String, Codable, Sendable, CaseIterable {
        case happy
        case sad
    }
    enum Level: Int, Codable, Sendable {
        case low = 0
        case high = 10
    }
    struct Address: Codable, Sendable, Hashable {
        var street: String
        var zip: Int
    }

    var id: Int64
    var bool: Bool
    var int: Int
    var int8: Int8
    var int16: Int16
    var int32: Int32
    var int64: Int64
    var uint: UInt
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
    var counts: [String: Int]
    var optionalBool: Bool?
    var optionalInt: Int?
    var optionalInt8: Int8?
    var optionalInt16: Int16?
    var optionalInt32: Int32?
    var optionalInt64: Int64?
    var optionalUInt: UInt?
    var optionalUInt8: UInt8?
    var optionalUInt16: UInt16?
    var optionalUInt32: UInt32?
    var optionalUInt64: UInt64?
    var optionalDouble: Double?
    var optionalFloat: Float?
    var optionalString: String?
    var optionalData: Data?
    var optionalDate: Date?
    var optionalUUID: UUID?
    var optionalURL: URL?
    var optionalMood: Mood?
    var optionalLevel: Level?
    var optionalAddress: Address?
    var optionalTags: [String]?
    var optionalCounts: [String: Int]?
}

/// A non-`CaseIterable` `String` enum that has a case whose raw value is empty: the probe decodes `""`.
struct SchemaEmptyRawCase: Entity {
    enum Kind: String, Codable, Sendable {
        case unknown = ""
        case known
    }
    var id: Int
    var kind: Kind
}

/// A non-`CaseIterable` `String` enum with no empty raw value.
struct SchemaPlainStringEnum: Entity {
    enum Color: String, Codable, Sendable {
        case red
        case green
    }
    var id: Int
    var color: Color
}

/// An `Int` enum with no zero raw value, made probe-able by `CaseIterable`.
struct SchemaIterableIntEnum: Entity {
    enum Priority: Int, Codable, Sendable, CaseIterable {
        case low = 5
        case high = 9
    }
    var id: Int
    var priority: Priority
}

/// A single-value type that rejects every neutral value the probe can offer, and is not an enum.
struct SchemaOddNumber: Codable, Sendable {
    struct NotOdd: Error {}
    var value: Int
    init(value: Int) { self.value = value }
    init(from decoder: any Decoder) throws {
        let value = try decoder.singleValueContainer().decode(Int.self)
        guard value % 2 == 1 else { throw NotOdd() }
        self.value = value
    }
    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(value)
    }
}

struct SchemaUnprobeable: Entity {
    var id: Int
    var odd: SchemaOddNumber
}

/// No attribute named `id`: the key is a computed property.
struct SchemaMissingKey: Entity {
    var key: Int64
    var id: Int64 { key }
}

/// The primary-key attribute is optional.
struct SchemaOptionalKey: Entity {
    var reference: Int64?
    var id: Int64 { reference ?? 0 }
    static var primaryKeyAttribute: String { "reference" }
}

/// The primary-key attribute is a `Double`.
struct SchemaDoubleKey: Entity {
    var score: Double
    var id: Int64 { Int64(score) }
    static var primaryKeyAttribute: String { "score" }
}

/// The primary-key attribute is a `Bool`.
struct SchemaBoolKey: Entity {
    var flag: Bool
    var id: Int { flag ? 1 : 0 }
    static var primaryKeyAttribute: String { "flag" }
}

/// The primary-key attribute is a `Date`.
struct SchemaDateKey: Entity {
    var stamp: Date
    var id: Int { 0 }
    static var primaryKeyAttribute: String { "stamp" }
}

/// `id` is an `Int64`, but the declared key attribute is a `String`.
struct SchemaMismatchedKey: Entity {
    var code: String
    var number: Int64
    var id: Int64 { number }
    static var primaryKeyAttribute: String { "code" }
}

/// An index names an attribute the entity does not have.
struct SchemaUnknownIndex: Entity {
    var id: Int
    var name: String
    static var indexes: [Index] { [.on("name"), .on("nmae")] }
}

/// A unique constraint names an attribute the entity does not have.
struct SchemaUnknownUnique: Entity {
    var id: Int
    var name: String
    static var indexes: [Index] { [.unique("name", "missing")] }
}

/// An index with no attributes at all.
struct SchemaEmptyIndex: Entity {
    var id: Int
    static var indexes: [Index] { [.on()] }
}

/// An empty entity name.
struct SchemaEmptyName: Entity {
    var id: Int
    static var entityName: String { "" }
}

/// An entity name with a NUL character.
struct SchemaNULName: Entity {
    var id: Int
    static var entityName: String { "bad\u{0}name" }
}

/// A type that decodes from an unkeyed container.
struct SchemaUnkeyed: Entity {
    var id: Int
    init(id: Int) { self.id = id }
    init(from decoder: any Decoder) throws {
        var container = try decoder.unkeyedContainer()
        id = try container.decode(Int.self)
    }
    func encode(to encoder: any Encoder) throws {
        var container = encoder.unkeyedContainer()
        try container.encode(id)
    }
}

/// A type whose `init(from:)` opens a nested keyed container.
struct SchemaNestedContainer: Entity {
    enum CodingKeys: String, CodingKey {
        case id
        case inner
    }
    enum InnerKeys: String, CodingKey {
        case value
    }
    var id: Int
    var value: Int
    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(Int.self, forKey: .id)
        value = try container.nestedContainer(keyedBy: InnerKeys.self, forKey: .inner).decode(Int.self, forKey: .value)
    }
    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        var inner = container.nestedContainer(keyedBy: InnerKeys.self, forKey: .inner)
        try inner.encode(value, forKey: .value)
    }
}

/// Custom entity name, key attribute and indexes.
struct SchemaCustomNames: Entity {
    var code: String
    var name: String
    var email: String?
    var id: String { code }
    static var entityName: String { "people" }
    static var primaryKeyAttribute: String { "code" }
    static var indexes: [Index] { [.on("name"), .unique("email"), .on("name", "email")] }
}

/// Renamed coding keys.
struct SchemaCodingKeys: Entity {
    enum CodingKeys: String, CodingKey {
        case id = "person_id"
        case fullName = "full_name"
        case age
    }
    var id: UUID
    var fullName: String
    var age: Int?
    static var primaryKeyAttribute: String { "person_id" }
}

/// Two entities that claim the same name.
struct SchemaSameNameA: Entity {
    var id: Int
    static var entityName: String { "Same" }
}

struct SchemaSameNameB: Entity {
    var id: String
    static var entityName: String { "Same" }
}

// MARK: - Tests

@Suite("Schema derivation")
struct SchemaDerivationTests {
    static let everyTypeAttributes: [AttributeDescription] = [
        AttributeDescription(name: "id", type: .integer, isOptional: false),
        AttributeDescription(name: "bool", type: .bool, isOptional: false),
        AttributeDescription(name: "int", type: .integer, isOptional: false),
        AttributeDescription(name: "int8", type: .integer, isOptional: false),
        AttributeDescription(name: "int16", type: .integer, isOptional: false),
        AttributeDescription(name: "int32", type: .integer, isOptional: false),
        AttributeDescription(name: "int64", type: .integer, isOptional: false),
        AttributeDescription(name: "uint", type: .integer, isOptional: false),
        AttributeDescription(name: "uint8", type: .integer, isOptional: false),
        AttributeDescription(name: "uint16", type: .integer, isOptional: false),
        AttributeDescription(name: "uint32", type: .integer, isOptional: false),
        AttributeDescription(name: "uint64", type: .integer, isOptional: false),
        AttributeDescription(name: "double", type: .double, isOptional: false),
        AttributeDescription(name: "float", type: .double, isOptional: false),
        AttributeDescription(name: "string", type: .string, isOptional: false),
        AttributeDescription(name: "data", type: .data, isOptional: false),
        AttributeDescription(name: "date", type: .date, isOptional: false),
        AttributeDescription(name: "uuid", type: .uuid, isOptional: false),
        AttributeDescription(name: "url", type: .url, isOptional: false),
        AttributeDescription(name: "mood", type: .string, isOptional: false),
        AttributeDescription(name: "level", type: .integer, isOptional: false),
        AttributeDescription(name: "address", type: .codable, isOptional: false),
        AttributeDescription(name: "tags", type: .codable, isOptional: false),
        AttributeDescription(name: "counts", type: .codable, isOptional: false),
        AttributeDescription(name: "optionalBool", type: .bool, isOptional: true),
        AttributeDescription(name: "optionalInt", type: .integer, isOptional: true),
        AttributeDescription(name: "optionalInt8", type: .integer, isOptional: true),
        AttributeDescription(name: "optionalInt16", type: .integer, isOptional: true),
        AttributeDescription(name: "optionalInt32", type: .integer, isOptional: true),
        AttributeDescription(name: "optionalInt64", type: .integer, isOptional: true),
        AttributeDescription(name: "optionalUInt", type: .integer, isOptional: true),
        AttributeDescription(name: "optionalUInt8", type: .integer, isOptional: true),
        AttributeDescription(name: "optionalUInt16", type: .integer, isOptional: true),
        AttributeDescription(name: "optionalUInt32", type: .integer, isOptional: true),
        AttributeDescription(name: "optionalUInt64", type: .integer, isOptional: true),
        AttributeDescription(name: "optionalDouble", type: .double, isOptional: true),
        AttributeDescription(name: "optionalFloat", type: .double, isOptional: true),
        AttributeDescription(name: "optionalString", type: .string, isOptional: true),
        AttributeDescription(name: "optionalData", type: .data, isOptional: true),
        AttributeDescription(name: "optionalDate", type: .date, isOptional: true),
        AttributeDescription(name: "optionalUUID", type: .uuid, isOptional: true),
        AttributeDescription(name: "optionalURL", type: .url, isOptional: true),
        AttributeDescription(name: "optionalMood", type: .string, isOptional: true),
        AttributeDescription(name: "optionalLevel", type: .integer, isOptional: true),
        AttributeDescription(name: "optionalAddress", type: .codable, isOptional: true),
        AttributeDescription(name: "optionalTags", type: .codable, isOptional: true),
        AttributeDescription(name: "optionalCounts", type: .codable, isOptional: true),
    ]

    @Test("Each attribute has the type and optionality of its Swift type", arguments: everyTypeAttributes)
    func attributeTypes(_ expected: AttributeDescription) throws {
        let description = try EntityDescription(describing: SchemaEveryType.self)
        let attribute = try #require(description.attribute(named: expected.name))
        #expect(attribute.type == expected.type)
        #expect(attribute.isOptional == expected.isOptional)
    }

    @Test("Attributes come in declaration order, and nothing else is described")
    func attributeOrder() throws {
        let description = try EntityDescription(describing: SchemaEveryType.self)
        #expect(description.attributes.map(\.name) == Self.everyTypeAttributes.map(\.name))
        #expect(description.attributes == Self.everyTypeAttributes)
    }

    @Test("Defaults: the type's name, \"id\" as the key, no indexes")
    func defaults() throws {
        let description = try EntityDescription(describing: SchemaEveryType.self)
        #expect(description.name == "SchemaEveryType")
        #expect(description.primaryKey == "id")
        #expect(description.primaryKeyAttribute == AttributeDescription(name: "id", type: .integer, isOptional: false))
        #expect(description.indexes.isEmpty)
    }

    @Test("A String enum with an empty raw value needs no CaseIterable")
    func emptyRawValueEnum() throws {
        let description = try EntityDescription(describing: SchemaEmptyRawCase.self)
        #expect(
            description.attribute(named: "kind") == AttributeDescription(name: "kind", type: .string, isOptional: false)
        )
    }

    @Test("A CaseIterable Int enum with no zero raw value is probed through its first case")
    func iterableIntEnum() throws {
        let description = try EntityDescription(describing: SchemaIterableIntEnum.self)
        #expect(
            description.attribute(named: "priority")
                == AttributeDescription(name: "priority", type: .integer, isOptional: false))
    }

    // Such an enum used to be an `.invalidSchema` error; `Neutral.firstRawValueCase` (EntityDescription+Derivation)
    // now probes any raw-value enum of up to 256 cases through its first case.
    @Test("A non-CaseIterable String enum without an empty case is probed through its first case")
    func plainStringEnum() throws {
        let description = try EntityDescription(describing: SchemaPlainStringEnum.self)
        #expect(
            description.attribute(named: "color")
                == AttributeDescription(name: "color", type: .string, isOptional: false))
    }

    @Test("A single-value type that rejects every neutral value can't be probed")
    func unprobeableValue() {
        let error = #expect(throws: PersistenceError.self) {
            try EntityDescription(describing: SchemaUnprobeable.self)
        }
        #expect(error?.code == .invalidSchema)
    }

    @Test(
        "Entity names the library's own tables begin with are refused, in any case",
        arguments: ["persistence_metadata", "Persistence_Notes", "PERSISTENCE_new_Item", "sqlite_stat1", "SQLite_x"])
    func reservedEntityNames(_ name: String) {
        let error = #expect(throws: PersistenceError.self) {
            try EntityDescription(
                name: name, attributes: [AttributeDescription(name: "id", type: .integer, isOptional: false)],
                primaryKey: "id")
        }
        #expect(error?.code == .invalidSchema)
        #expect(error?.message.contains("library's own tables") == true, "\(String(describing: error))")
    }

    @Test("Names that only contain a reserved prefix are entities like any other")
    func namesContainingAReservedPrefix() throws {
        for name in ["my_persistence_notes", "persistence", "sqlite", "Notes_sqlite_"] {
            _ = try EntityDescription(
                name: name, attributes: [AttributeDescription(name: "id", type: .integer, isOptional: false)],
                primaryKey: "id")
        }
    }

    static let invalidSchemaTypes: [any Entity.Type] = [
        SchemaMissingKey.self, SchemaOptionalKey.self, SchemaDoubleKey.self, SchemaBoolKey.self, SchemaDateKey.self,
        SchemaMismatchedKey.self, SchemaEmptyIndex.self, SchemaEmptyName.self, SchemaNULName.self,
        SchemaUnkeyed.self, SchemaNestedContainer.self,
    ]

    @Test("Inconsistent entity types are invalid schemas", arguments: invalidSchemaTypes)
    func invalidSchemas(_ type: any Entity.Type) {
        let error = #expect(throws: PersistenceError.self) {
            try EntityDescription(describing: type)
        }
        #expect(error?.code == .invalidSchema)
    }

    @Test(
        "An index naming an unknown attribute is an unknownAttribute error",
        arguments: [
            SchemaUnknownIndex.self as any Entity.Type, SchemaUnknownUnique.self,
        ])
    func unknownIndexAttribute(_ type: any Entity.Type) {
        let error = #expect(throws: PersistenceError.self) {
            try EntityDescription(describing: type)
        }
        #expect(error?.code == .unknownAttribute)
    }

    @Test("Custom entity name, primary key and indexes are honoured")
    func customNames() throws {
        let description = try EntityDescription(describing: SchemaCustomNames.self)
        #expect(description.name == "people")
        #expect(description.primaryKey == "code")
        #expect(description.primaryKeyAttribute?.type == .string)
        #expect(description.attribute(named: "id") == nil)
        #expect(description.attributes.map(\.name) == ["code", "name", "email"])
        #expect(description.indexes == [.on("name"), .unique("email"), .on("name", "email")])
        #expect(description.indexes.map(\.isUnique) == [false, true, false])
    }

    @Test("Custom CodingKeys name the attributes")
    func customCodingKeys() throws {
        let description = try EntityDescription(describing: SchemaCodingKeys.self)
        #expect(
            description.attributes == [
                AttributeDescription(name: "person_id", type: .uuid, isOptional: false),
                AttributeDescription(name: "full_name", type: .string, isOptional: false),
                AttributeDescription(name: "age", type: .integer, isOptional: true),
            ])
        #expect(description.attribute(named: "fullName") == nil)
        #expect(description.primaryKeyAttribute?.name == "person_id")
    }

    @Test("Index names are derived from the entity and attributes")
    func indexNames() {
        #expect(Index.on("name").name(in: "User") == "index_User_name")
        #expect(Index.unique("last", "first").name(in: "User") == "unique_User_last_first")
        #expect(Index.on("a", "b").attributes == ["a", "b"])
    }

    @Test("A description survives a JSON round trip")
    func descriptionIsCodable() throws {
        let description = try EntityDescription(describing: SchemaCustomNames.self)
        let data = try JSONEncoder().encode(description)
        #expect(try JSONDecoder().decode(EntityDescription.self, from: data) == description)
    }

    @Test("The schema cache derives a type's layout once and shares it")
    func layoutIsCached() throws {
        let first = try SchemaCache.layout(for: SchemaCustomNames.self)
        let second = try SchemaCache.layout(for: SchemaCustomNames.self)
        #expect(first === second)
        #expect(first.names == ["code", "name", "email"])
        #expect(first.types == [.string, .string, .string])
        #expect(first.primaryKeyIndex == 0)
        #expect(first.position(of: "email") == 2)
        #expect(first.position(of: "missing") == nil)
    }

    @Test("The layout's primary key index points at the key attribute, wherever it is")
    func primaryKeyIndex() throws {
        struct KeyLast: Entity {
            var name: String
            var id: Int
        }
        let layout = try SchemaCache.layout(for: KeyLast.self)
        #expect(layout.primaryKeyIndex == 1)
        let error = #expect(throws: PersistenceError.self) { try layout.requirePosition(of: "nope") }
        #expect(error?.code == .unknownAttribute)
    }

    @Test("A model refuses two entities with the same name")
    func modelDuplicateNames() throws {
        let error = #expect(throws: PersistenceError.self) {
            try Model(entities: [SchemaSameNameA.self, SchemaSameNameB.self]).layouts()
        }
        #expect(error?.code == .invalidSchema)
        let layouts = try Model(version: 3, entities: [SchemaSameNameA.self, SchemaCustomNames.self]).layouts()
        #expect(layouts.map(\.entity.name) == ["Same", "people"])
    }

    // MARK: - Hand-written descriptions

    struct ManualCase: Sendable, CustomTestStringConvertible {
        var testDescription: String
        var name: String
        var attributes: [AttributeDescription]
        var primaryKey: String
        var indexes: [Index] = []
        var code: PersistenceError.Code = .invalidSchema
    }

    static let key = AttributeDescription(name: "id", type: .integer, isOptional: false)
    static let manualFailures: [ManualCase] = [
        ManualCase(testDescription: "empty entity name", name: "", attributes: [key], primaryKey: "id"),
        ManualCase(testDescription: "no attributes", name: "E", attributes: [], primaryKey: "id"),
        ManualCase(
            testDescription: "empty attribute name", name: "E",
            attributes: [key, AttributeDescription(name: "", type: .string, isOptional: true)], primaryKey: "id"),
        ManualCase(
            testDescription: "NUL in attribute name", name: "E",
            attributes: [key, AttributeDescription(name: "a\u{0}b", type: .string, isOptional: true)],
            primaryKey: "id"),
        ManualCase(
            testDescription: "repeated attribute", name: "E",
            attributes: [key, AttributeDescription(name: "id", type: .string, isOptional: false)], primaryKey: "id"),
        ManualCase(testDescription: "missing key", name: "E", attributes: [key], primaryKey: "key"),
        ManualCase(
            testDescription: "codable key", name: "E",
            attributes: [AttributeDescription(name: "id", type: .codable, isOptional: false)], primaryKey: "id"),
        ManualCase(
            testDescription: "url key", name: "E",
            attributes: [AttributeDescription(name: "id", type: .url, isOptional: false)], primaryKey: "id"),
        ManualCase(
            testDescription: "index on unknown attribute", name: "E", attributes: [key], primaryKey: "id",
            indexes: [.on("other")], code: .unknownAttribute),
    ]

    @Test("Hand-written descriptions are validated", arguments: manualFailures)
    func manualValidation(_ test: ManualCase) {
        let error = #expect(throws: PersistenceError.self) {
            try EntityDescription(
                name: test.name, attributes: test.attributes, primaryKey: test.primaryKey, indexes: test.indexes)
        }
        #expect(error?.code == test.code)
    }

    @Test("A valid hand-written description keeps what it was given")
    func manualDescription() throws {
        let attributes = [
            AttributeDescription(name: "id", type: .uuid, isOptional: false),
            AttributeDescription(name: "name", type: .string, isOptional: true),
        ]
        let description = try EntityDescription(
            name: "E", attributes: attributes, primaryKey: "id", indexes: [.unique("name")])
        #expect(description.attributes == attributes)
        #expect(description.primaryKeyAttribute?.type == .uuid)
        #expect(description.indexes == [.unique("name")])
    }
}
