import Foundation
import PersistenceCore
import Testing

/// Relationships across model versions: declared on old records, their delete rules changed — schema changes that
/// migrate without code, on every backend.
enum RelationshipMigrationChecks {
    static let all: [MigrationConformanceCheck] = [
        MigrationConformanceCheck(
            "inferred: declares a relationship on old records, then renames it and changes its rule"
        ) {
            try declaresAndChanges($0)
        },
        MigrationConformanceCheck("inferred: declares a many-to-many on old records, adding its join entity") {
            try declaresManyToMany($0)
        },
    ]

    enum Plain {
        struct Reader: Entity, Equatable {
            var id: Int64
        }

        struct Book: Entity, Equatable {
            var id: String
        }
    }

    enum Linked {
        struct Reader: Entity, Equatable {
            var id: Int64
            static let relationships: [Relationship] = [.manyToMany("books", Book.self, inverse: "readers")]
        }

        struct Book: Entity, Equatable {
            var id: String
            static let relationships: [Relationship] = [.manyToMany("readers", Reader.self, inverse: "books")]
        }
    }

    static func declaresManyToMany(_ stores: MigrationStores) throws {
        try stores.seed("Library", Model(version: 1, entities: [Plain.Reader.self, Plain.Book.self])) { db in
            try db.create([Plain.Reader(id: 1), Plain.Reader(id: 2)])
            try db.create([Plain.Book(id: "Dune"), Plain.Book(id: "Emma")])
        }
        let v2 = Model(version: 2, entities: [Linked.Reader.self, Linked.Book.self])
        let names = v2.entities.map { $0.entityName }
        #expect(names == ["Reader", "Book", "Book_Reader"])
        let opened = try stores.open("Library", v2)
        #expect(opened.report?.steps.first?.kind == .inferred)
        let db = opened.database
        #expect(try db.link(Linked.Reader(id: 1), "books", Linked.Book(id: "Emma")))
        #expect(try db.link(Linked.Book(id: "Dune"), "readers", Linked.Reader(id: 1)))
        let readers = try db.recover(Linked.Reader.self, including: .many("books", Linked.Book.self))
        #expect(readers.map { $0.related.map(\.id) } == [["Dune", "Emma"], []])
        #expect(try db.verify().isSound)
        try db.close()
        let again = try stores.open("Library", v2)
        #expect(again.report == nil)
        #expect(try again.database.count(ManyToManyLink<Linked.Book, Linked.Reader>.self) == 2)
        try again.database.close()
    }

    enum V1 {
        struct Team: Entity, Equatable {
            var id: Int64
            var name: String
        }

        struct Player: Entity, Equatable {
            var id: Int64
            var teamID: Int64?
        }
    }

    enum V2 {
        struct Team: Entity, Equatable {
            var id: Int64
            var name: String
            static let relationships: [Relationship] = [.toMany("players", Player.self, inverse: "team")]
        }

        struct Player: Entity, Equatable {
            var id: Int64
            var teamID: Int64?
            static let relationships: [Relationship] = [
                .toOne("team", Team.self, foreignKey: "teamID", onDelete: .cascade)
            ]
        }
    }

    enum V3 {
        struct Team: Entity, Equatable {
            var id: Int64
            var name: String
        }

        struct Player: Entity, Equatable {
            var id: Int64
            var teamID: Int64?
            // Renamed from `team`, its rule changed.
            static let relationships: [Relationship] = [
                .toOne("club", Team.self, foreignKey: "teamID", onDelete: .nullify)
            ]
        }
    }

    static func declaresAndChanges(_ stores: MigrationStores) throws {
        try stores.seed("League", Model(version: 1, entities: [V1.Team.self, V1.Player.self])) { db in
            try db.create([V1.Team(id: 1, name: "Ajax"), V1.Team(id: 2, name: "Benfica")])
            // Player 3's team was never there: the old data breaks the relationship about to be declared.
            try db.create([V1.Player(id: 1, teamID: 1), V1.Player(id: 2, teamID: 2), V1.Player(id: 3, teamID: 9)])
        }
        let v2 = Model(version: 2, entities: [V2.Team.self, V2.Player.self])
        // Declaring a relationship changes the stored schema: the same version is refused, naming it.
        let refused = expectError(.migrationRequired) {
            try stores.open("League", Model(version: 1, entities: v2.entities))
        }
        #expect(refused?.message.contains("Player.team") == true, "\(String(describing: refused))")

        let opened = try stores.open("League", v2)
        #expect(opened.report?.steps.first?.kind == .inferred)
        let db = opened.database
        // Old records keep their foreign keys; the one that names no team is reported, not dropped.
        let problems = try db.verify().problems
        #expect(problems.map(\.kind) == [.danglingReference] && problems.first?.primaryKey == "3", "\(problems)")
        #expect(try opened.indexNames().contains { $0.contains("teamID") })
        try db.delete(V2.Team.self, id: 1)
        #expect(try db.recover(V2.Player.self).map(\.id) == [2, 3])
        try db.delete(V2.Player.self, id: 3)
        try db.close()

        // Renaming a relationship and changing its delete rule are schema changes too; the new name loads and the
        // new rule applies after the migration.
        let v3 = try stores.open("League", Model(version: 3, entities: [V3.Team.self, V3.Player.self]))
        let clubs = try v3.database.recover(V3.Player.self, including: .one("club", V3.Team.self))
        #expect(clubs.map { $0.related?.name } == ["Benfica"])
        try v3.database.delete(V3.Team.self, id: 2)
        #expect(try v3.database.recover(V3.Player.self) == [V3.Player(id: 2, teamID: nil)])
        #expect(try v3.database.verify().isSound)
        try v3.database.close()
        let again = try stores.open("League", Model(version: 3, entities: [V3.Team.self, V3.Player.self]))
        #expect(again.report == nil)
        try again.database.close()
    }
}
