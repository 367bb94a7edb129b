import Foundation
import PersistenceCore

/// Entities with relationships, for the relationship checks: one parent referred to under each delete rule, a
/// self-referring tree, a required to-one, and the classic examples (Core Data's Department ⇄ Employee, Realm's
/// Person → Dog).
enum GraphFixtures {
    struct Parent: Entity, Equatable {
        var id: Int64
        var name: String
        init(id: Int64, name: String = "") {
            self.id = id
            self.name = name
        }
        static let relationships: [Relationship] = [
            .toMany("cascading", CascadeChild.self, inverse: "parent"),
            .toMany("nullifying", NullifyChild.self, inverse: "parent"),
        ]
    }

    struct CascadeChild: Entity, Equatable {
        var id: Int64
        var parentID: Int64?
        static let relationships: [Relationship] = [
            .toOne("parent", Parent.self, foreignKey: "parentID", onDelete: .cascade)
        ]
    }

    struct NullifyChild: Entity, Equatable {
        var id: Int64
        var parentID: Int64?
        var note: String
        init(id: Int64, parentID: Int64?, note: String = "") {
            self.id = id
            self.parentID = parentID
            self.note = note
        }
        static let relationships: [Relationship] = [
            .toOne("parent", Parent.self, foreignKey: "parentID", onDelete: .nullify)
        ]
    }

    struct DenyChild: Entity, Equatable {
        var id: Int64
        var parentID: Int64?
        static let relationships: [Relationship] = [
            .toOne("parent", Parent.self, foreignKey: "parentID", onDelete: .deny)
        ]
    }

    struct NoActionChild: Entity, Equatable {
        var id: Int64
        var parentID: Int64?
        static let relationships: [Relationship] = [
            .toOne("parent", Parent.self, foreignKey: "parentID", onDelete: .noAction)
        ]
    }

    /// Refers to a cascading child and denies its deletion: a deny two levels below the record deleted.
    struct Grandchild: Entity, Equatable {
        var id: Int64
        var childID: Int64
        static let relationships: [Relationship] = [
            .toOne("child", CascadeChild.self, foreignKey: "childID")
        ]
    }

    /// A tree (or, through updates, a cycle) of records of one entity, deleted by cascade.
    struct Node: Entity, Equatable {
        var id: String
        var parentID: String?
        static let relationships: [Relationship] = [
            .toOne("parent", Node.self, foreignKey: "parentID", onDelete: .cascade),
            .toMany("children", Node.self, inverse: "parent"),
        ]
    }

    static let ruleEntities: [any Entity.Type] = [
        Parent.self, CascadeChild.self, NullifyChild.self, DenyChild.self, NoActionChild.self, Grandchild.self,
        Node.self,
    ]

    // Core Data's Department ⇄ Employee.
    struct Department: Entity, Equatable {
        var id: Int64
        var name: String
        static let relationships: [Relationship] = [
            .toMany("employees", Employee.self, inverse: "department")
        ]
    }

    struct Employee: Entity, Equatable {
        var id: Int64
        var name: String
        var departmentID: Int64?
        var managerID: Int64?
        init(id: Int64, name: String, departmentID: Int64?, managerID: Int64? = nil) {
            self.id = id
            self.name = name
            self.departmentID = departmentID
            self.managerID = managerID
        }
        static let relationships: [Relationship] = [
            .toOne("department", Department.self, foreignKey: "departmentID"),
            .toOne("manager", Employee.self, foreignKey: "managerID"),
            .toMany("reports", Employee.self, inverse: "manager"),
        ]
    }

    // Realm's Person → Dog, with a required owner: a dog goes with its owner.
    struct Owner: Entity, Equatable {
        var id: UUID
        var name: String
        static let relationships: [Relationship] = [.toMany("dogs", Dog.self, inverse: "owner")]
    }

    struct Dog: Entity, Equatable {
        var id: UUID
        var name: String
        var ownerID: UUID
        static let relationships: [Relationship] = [
            .toOne("owner", Owner.self, foreignKey: "ownerID", onDelete: .cascade)
        ]
    }

    // A required to-one with its default rule (deny).
    struct Author: Entity, Equatable {
        var id: String
        var name: String
    }

    struct Book: Entity, Equatable {
        var id: Int64
        var authorID: String
        var title: String
        static let relationships: [Relationship] = [
            .toOne("author", Author.self, foreignKey: "authorID")
        ]
    }

    static let exampleEntities: [any Entity.Type] = [
        Department.self, Employee.self, Owner.self, Dog.self, Author.self, Book.self,
    ]

    // Many-to-many: students and courses (integer and text keys), and people following people.
    struct Student: Entity, Equatable {
        var id: Int64
        var name: String
        static let relationships: [Relationship] = [.manyToMany("courses", Course.self, inverse: "students")]
    }

    struct Course: Entity, Equatable {
        var id: String
        var title: String
        var credits: Int
        static let relationships: [Relationship] = [.manyToMany("students", Student.self, inverse: "courses")]
    }

    struct Person: Entity, Equatable {
        var id: Int64
        var name: String
        static let relationships: [Relationship] = [
            .manyToMany("follows", Person.self, inverse: "followers"),
            .manyToMany("followers", Person.self, inverse: "follows"),
        ]
    }

    static let manyToManyEntities: [any Entity.Type] = [Student.self, Course.self, Person.self]

    // Many-to-manys a model refuses: no inverse, its own inverse, two between the same entities.
    struct OneSided: Entity {
        var id: Int64
        static let relationships: [Relationship] = [.manyToMany("authors", Author.self, inverse: "oneSided")]
    }

    struct OwnInverse: Entity {
        var id: Int64
        static let relationships: [Relationship] = [.manyToMany("friends", OwnInverse.self, inverse: "friends")]
    }

    struct Twice: Entity {
        var id: Int64
        static let relationships: [Relationship] = [
            .manyToMany("likes", TwiceTarget.self, inverse: "likedBy"),
            .manyToMany("hides", TwiceTarget.self, inverse: "hiddenBy"),
        ]
    }

    struct TwiceTarget: Entity {
        var id: Int64
        static let relationships: [Relationship] = [
            .manyToMany("likedBy", Twice.self, inverse: "likes"),
            .manyToMany("hiddenBy", Twice.self, inverse: "hides"),
        ]
    }

    // Declarations a model refuses (with `Author`, which has no relationships of its own, as their target).
    struct NullifiesRequired: Entity {
        var id: Int64
        var authorID: String
        static let relationships: [Relationship] = [
            .toOne("author", Author.self, foreignKey: "authorID", onDelete: .nullify)
        ]
    }

    struct UnknownForeignKey: Entity {
        var id: Int64
        static let relationships: [Relationship] = [.toOne("author", Author.self, foreignKey: "authorID")]
    }

    struct MistypedForeignKey: Entity {
        var id: Int64
        var authorID: Int64?
        static let relationships: [Relationship] = [.toOne("author", Author.self, foreignKey: "authorID")]
    }

    struct WrongInverse: Entity {
        var id: Int64
        static let relationships: [Relationship] = [.toMany("authors", Author.self, inverse: "name")]
    }

    struct NameTaken: Entity {
        var id: Int64
        var authorID: String?
        static let relationships: [Relationship] = [
            .toOne("authorID", Author.self, foreignKey: "authorID")
        ]
    }
}
