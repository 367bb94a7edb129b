import SwiftSyntax
import SwiftSyntaxMacroExpansion
import SwiftSyntaxMacrosGenericTestSupport
import Testing

@testable import PersistenceMacrosPlugin

/// What `@Entity` writes, and what it refuses at compile time, checked on the expansion itself.
struct EntityMacroExpansionTests {
    let macros: [String: MacroSpec] = [
        "Entity": MacroSpec(
            type: EntityMacro.self, conformances: [TypeSyntax(IdentifierTypeSyntax(name: .identifier("Entity")))])
    ]

    func expect(
        _ source: String, expands expanded: String, diagnostics: [DiagnosticSpec] = [],
        sourceLocation: Testing.SourceLocation = #_sourceLocation
    ) {
        assertMacroExpansion(
            source, expandedSource: expanded, diagnostics: diagnostics, macroSpecs: macros,
            failureHandler: { Issue.record("\($0.message)", sourceLocation: sourceLocation) })
    }

    @Test func readsAndWritesEachStoredPropertyInOrder() {
        expect(
            """
            @Entity
            struct Order {
                var id: Int64
                var placed: Date
                let note: String?
                var total: Double { 0 }
                static let indexes: [Index] = []
                var watched: Int = 0 {
                    didSet {}
                }
            }
            """,
            expands: """
                struct Order {
                    var id: Int64
                    var placed: Date
                    let note: String?
                    var total: Double { 0 }
                    static let indexes: [Index] = []
                    var watched: Int = 0 {
                        didSet {}
                    }
                }

                extension Order: Entity {
                    /// Reads the entity from a stored record, attribute by attribute (written by `@Entity`).
                    init(record: PersistenceCore.AttributeReader) throws {
                        let value0 = try record.read("id", as: PersistenceCore.AttributeReader.type(of: \\Self.id))
                        let value1 = try record.read("placed", as: PersistenceCore.AttributeReader.type(of: \\Self.placed))
                        let value2 = try record.read("note", as: PersistenceCore.AttributeReader.type(of: \\Self.note))
                        let value3 = try record.read("watched", as: PersistenceCore.AttributeReader.type(of: \\Self.watched))
                        self.init(id: value0, placed: value1, note: value2, watched: value3)
                    }

                    /// Writes the entity's attributes into a record (written by `@Entity`).
                    func encode(to record: PersistenceCore.AttributeWriter) throws {
                        try record.write(self.id, for: "id")
                        try record.write(self.placed, for: "placed")
                        try record.write(self.note, for: "note")
                        try record.write(self.watched, for: "watched")
                    }
                }
                """)
    }

    @Test func followsCodingKeysAndAccess() {
        expect(
            """
            @Entity
            public struct Person: Codable {
                public var id: UUID
                public var fullName: String
                var cache: [String] = []
                let kind = "person"
                enum CodingKeys: String, CodingKey {
                    case id
                    case fullName = "full_name"
                }
            }
            """,
            expands: """
                public struct Person: Codable {
                    public var id: UUID
                    public var fullName: String
                    var cache: [String] = []
                    let kind = "person"
                    enum CodingKeys: String, CodingKey {
                        case id
                        case fullName = "full_name"
                    }
                }

                extension Person: Entity {
                    /// Reads the entity from a stored record, attribute by attribute (written by `@Entity`).
                    public init(record: PersistenceCore.AttributeReader) throws {
                        let value0 = try record.read("id", as: PersistenceCore.AttributeReader.type(of: \\Self.id))
                        let value1 = try record.read("full_name", as: PersistenceCore.AttributeReader.type(of: \\Self.fullName))
                        self.init(id: value0, fullName: value1)
                    }

                    /// Writes the entity's attributes into a record (written by `@Entity`).
                    public func encode(to record: PersistenceCore.AttributeWriter) throws {
                        try record.write(self.id, for: "id")
                        try record.write(self.fullName, for: "full_name")
                    }
                }
                """)
    }

    /// Without a usable memberwise initializer — the struct declares its own initializer, a stored property is
    /// private, or a property that isn't stored as an attribute has no default — the properties are set one by one.
    @Test func setsPropertiesWhenThereIsNoMemberwiseInitializer() {
        let members = [
            // Its own initializer: Swift then writes no memberwise one.
            "var id: Int64\n    var name: String\n    init(id: Int64, name: String) { self.id = id; self.name = name }",
            // A private stored property: the memberwise initializer is private.
            "var id: Int64\n    private var name: String",
            // A property that isn't an attribute and has no default: the memberwise initializer needs it.
            "var id: Int64\n    var name: String\n    var cache: [String]\n"
                + "    enum CodingKeys: String, CodingKey {\n        case id, name\n    }",
        ]
        for members in members {
            let original = "struct Tag {\n    \(members)\n}"
            expect(
                "@Entity\n" + original,
                expands: original + """


                    extension Tag: Entity {
                        /// Reads the entity from a stored record, attribute by attribute (written by `@Entity`).
                        init(record: PersistenceCore.AttributeReader) throws {
                            let value0 = try record.read("id", as: PersistenceCore.AttributeReader.type(of: \\Self.id))
                            let value1 = try record.read("name", as: PersistenceCore.AttributeReader.type(of: \\Self.name))
                            self.id = value0
                            self.name = value1
                        }

                        /// Writes the entity's attributes into a record (written by `@Entity`).
                        func encode(to record: PersistenceCore.AttributeWriter) throws {
                            try record.write(self.id, for: "id")
                            try record.write(self.name, for: "name")
                        }
                    }
                    """)
        }
    }

    @Test func refusesWhatCantBeStored() {
        expect(
            """
            @Entity
            struct Broken {
                var id: Int64
                var callback: () -> Void
                var pair: (Int, Int)
                var anything: Any
                var shape: any Sendable
                var kind: Int.Type
                lazy var cached: Int = 1
            }
            """,
            expands: """
                struct Broken {
                    var id: Int64
                    var callback: () -> Void
                    var pair: (Int, Int)
                    var anything: Any
                    var shape: any Sendable
                    var kind: Int.Type
                    lazy var cached: Int = 1
                }
                """,
            diagnostics: [
                DiagnosticSpec(
                    message: "'callback' is a function, which can't be stored as an attribute", line: 4, column: 19),
                DiagnosticSpec(
                    message: "'pair' is a tuple, which can't be stored as an attribute", line: 5, column: 15),
                DiagnosticSpec(
                    message: "'anything' is an existential, which can't be stored as an attribute", line: 6, column: 19),
                DiagnosticSpec(
                    message: "'shape' is an existential, which can't be stored as an attribute", line: 7, column: 16),
                DiagnosticSpec(
                    message: "'kind' is a metatype, which can't be stored as an attribute", line: 8, column: 15),
                DiagnosticSpec(
                    message: "'cached' is lazy: an entity's stored properties are its attributes, read whole", line: 9,
                    column: 14),
            ])
    }

    @Test func refusesAClassNoIDOnlyComputedAndOwnCodable() {
        expect(
            "@Entity\nclass Box {\n    var id = 1\n}",
            expands: "class Box {\n    var id = 1\n}",
            diagnostics: [
                DiagnosticSpec(message: "@Entity applies to a struct: entities are plain values", line: 1, column: 1)
            ])
        expect(
            "@Entity\nstruct Note {\n    var text: String\n}",
            expands: "struct Note {\n    var text: String\n}",
            diagnostics: [
                DiagnosticSpec(
                    message: "an entity needs an 'id' property (its primary key, or one that returns it)", line: 2,
                    column: 8)
            ])
        expect(
            "@Entity\nstruct Derived {\n    var id: Int { 1 }\n}",
            expands: "struct Derived {\n    var id: Int { 1 }\n}",
            diagnostics: [
                DiagnosticSpec(
                    message: "an entity needs at least one stored property: this one has only computed ones", line: 2,
                    column: 8)
            ])
        let ownCodable =
            "@Entity writes the record code from the stored properties; a type with its own Codable implementation "
            + "may store differently: drop @Entity (Codable is the default) or the custom implementation"
        expect(
            "@Entity\nstruct Custom {\n    var id: Int\n    init(from decoder: any Decoder) throws { id = 1 }\n}",
            expands: "struct Custom {\n    var id: Int\n    init(from decoder: any Decoder) throws { id = 1 }\n}",
            diagnostics: [DiagnosticSpec(message: ownCodable, line: 4, column: 5)])
    }

    @Test func refusesConditionalMembersAndPropertyWrappers() {
        let wrapped =
            "a property wrapper is stored as the wrapper, not as the property's type: @Entity can't write its record "
            + "code (drop the wrapper or @Entity)"
        expect(
            "@Entity\nstruct Wrapped {\n    var id: Int\n    @Clamped var level: Int\n}",
            expands: "struct Wrapped {\n    var id: Int\n    @Clamped var level: Int\n}",
            diagnostics: [DiagnosticSpec(message: wrapped, line: 4, column: 5)])
        expect(
            "@Entity\nstruct Conditional {\n    var id: Int\n    #if DEBUG\n    var trace: String\n    #endif\n}",
            expands: "struct Conditional {\n    var id: Int\n    #if DEBUG\n    var trace: String\n    #endif\n}",
            diagnostics: [
                DiagnosticSpec(
                    message:
                        "@Entity can't see which stored properties an #if block leaves: declare them outside it, or drop @Entity",
                    line: 4, column: 5)
            ])
    }

    @Test func refusesRelationshipsAndIndexesThatDontFit() {
        expect(
            """
            @Entity
            struct Node {
                var id: Int64
                var parentID: Int64
                var score: Double?
                static let indexes: [Index] = [.on("id"), .unique("nme")]
                static let relationships: [Relationship] = [
                    .toOne("parent", Node.self, foreignKey: "parentID", onDelete: .nullify),
                    .toOne("scored", Other.self, foreignKey: "score"),
                    .toOne("missing", Other.self, foreignKey: "otherID"),
                    .toMany("children", Self.self, inverse: "parnt"),
                    .toOne("id", Other.self, foreignKey: "parentID"),
                ]
            }
            """,
            expands: """
                struct Node {
                    var id: Int64
                    var parentID: Int64
                    var score: Double?
                    static let indexes: [Index] = [.on("id"), .unique("nme")]
                    static let relationships: [Relationship] = [
                        .toOne("parent", Node.self, foreignKey: "parentID", onDelete: .nullify),
                        .toOne("scored", Other.self, foreignKey: "score"),
                        .toOne("missing", Other.self, foreignKey: "otherID"),
                        .toMany("children", Self.self, inverse: "parnt"),
                        .toOne("id", Other.self, foreignKey: "parentID"),
                    ]
                }
                """,
            diagnostics: [
                DiagnosticSpec(
                    message: "index names 'nme', which is not a stored attribute of Node (it has: id, parentID, score)",
                    line: 6, column: 55),
                DiagnosticSpec(
                    message:
                        "relationship 'Node.parent' nullifies on delete, but its foreign key 'parentID' is not optional: make it optional or choose cascade, deny or noAction",
                    line: 8, column: 49),
                DiagnosticSpec(
                    message:
                        "the foreign key 'score' of relationship 'Node.scored' must be an integer, a string or a UUID, not Double",
                    line: 9, column: 50),
                DiagnosticSpec(
                    message:
                        "relationship 'Node.missing' names foreign key 'otherID', which is not a stored attribute of Node (it has: id, parentID, score)",
                    line: 10, column: 51),
                DiagnosticSpec(
                    message: "relationship 'Node.children''s inverse 'parnt' is not a to-one of Node to itself",
                    line: 11, column: 49),
                DiagnosticSpec(
                    message:
                        "relationship 'Node.id' is unnamed or its name is taken by another attribute or relationship",
                    line: 12, column: 9),
            ])
        expect(
            """
            @Entity
            struct Folder {
                var id: String
                var parent: String?
                static let indexes: [Index] = [.on("parentID")]
                static let relationships: [Relationship] = [
                    .toOne("up", Folder.self, foreignKey: "parentID", onDelete: .nullify),
                    .toMany("children", Folder.self, inverse: "up"),
                    .toMany("files", File.self, inverse: "folder"),
                ]
                enum CodingKeys: String, CodingKey {
                    case id
                    case parent = "parentID"
                }
            }
            """,
            expands: """
                struct Folder {
                    var id: String
                    var parent: String?
                    static let indexes: [Index] = [.on("parentID")]
                    static let relationships: [Relationship] = [
                        .toOne("up", Folder.self, foreignKey: "parentID", onDelete: .nullify),
                        .toMany("children", Folder.self, inverse: "up"),
                        .toMany("files", File.self, inverse: "folder"),
                    ]
                    enum CodingKeys: String, CodingKey {
                        case id
                        case parent = "parentID"
                    }
                }

                extension Folder: Entity {
                    /// Reads the entity from a stored record, attribute by attribute (written by `@Entity`).
                    init(record: PersistenceCore.AttributeReader) throws {
                        let value0 = try record.read("id", as: PersistenceCore.AttributeReader.type(of: \\Self.id))
                        let value1 = try record.read("parentID", as: PersistenceCore.AttributeReader.type(of: \\Self.parent))
                        self.init(id: value0, parent: value1)
                    }

                    /// Writes the entity's attributes into a record (written by `@Entity`).
                    func encode(to record: PersistenceCore.AttributeWriter) throws {
                        try record.write(self.id, for: "id")
                        try record.write(self.parent, for: "parentID")
                    }
                }
                """)
    }
}
