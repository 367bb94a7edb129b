import Foundation
import PersistenceCore
import Testing

@Suite("Schema difference")
struct SchemaDifferenceTests {
    struct UserV1: Entity {
        var id: Int64
        var name: String
        var age: Int?
        var nickname: String
        static var entityName: String { "User" }
        static let indexes: [Index] = [.on("name")]
    }

    struct UserV2: Entity {
        var id: Int64
        var name: String
        var age: Int
        var karma: Int
        var bio: String?
        static var entityName: String { "User" }
        static let indexes: [Index] = [.unique("name")]
        static let defaultValues: [String: Value] = ["karma": 0, "bio": "none"]
    }

    struct Post: Entity {
        var id: Int64
    }

    struct BadDefault: Entity {
        var id: Int64
        var count: Int
        static let defaultValues: [String: Value] = ["count": "many"]
    }

    struct UnknownDefault: Entity {
        var id: Int64
        static let defaultValues: [String: Value] = ["missing": 1]
    }

    func descriptions(_ types: [any Entity.Type]) throws -> [EntityDescription] {
        try Model(entities: types).layouts().map(\.entity)
    }

    @Test func findsEveryKindOfChangeByName() throws {
        let difference = try SchemaDifference(
            stored: descriptions([UserV1.self, Post.self]), current: descriptions([UserV2.self]))
        #expect(difference.removedEntities.map(\.name) == ["Post"])
        #expect(difference.addedEntities.isEmpty)
        let user = try #require(difference.changedEntities.first)
        #expect(user.addedAttributes.map(\.name) == ["karma", "bio"])
        #expect(user.removedAttributes.map(\.name) == ["nickname"])
        #expect(user.nowRequired == ["age"])
        #expect(user.addedIndexes == [.unique("name")])
        #expect(user.removedIndexes == [.on("name")])
        #expect(user.changesRecords)
        #expect(difference.summary.contains("'User.karma' added"))
        #expect(difference.summary.contains("'User.age' is no longer optional"))
        #expect(difference.summary.contains("entity 'Post' removed"))
    }

    @Test func theSameSchemaInAnotherOrderIsNoDifference() throws {
        let stored = try descriptions([UserV1.self, Post.self])
        var shuffled = stored.reversed().map { $0 }
        shuffled[1].attributes.reverse()
        #expect(SchemaDifference(stored: stored, current: shuffled).isEmpty)
    }

    @Test func defaultsAreValidatedAndKeptInTheLayout() throws {
        let layout = try #require(try Model(entities: [UserV2.self]).layouts().first)
        #expect(layout.defaults[try layout.requirePosition(of: "karma")] == .integer(0))
        #expect(layout.defaults[try layout.requirePosition(of: "name")] == nil)
        expectInvalidSchema { try Model(entities: [BadDefault.self]).layouts() }
        expectInvalidSchema { try Model(entities: [UnknownDefault.self]).layouts() }
    }

    @Test func attributesConformValuesToTheirType() {
        let real = AttributeDescription(name: "r", type: .double, isOptional: false)
        #expect(real.conforming(3) == .real(3))
        #expect(real.conforming(.null) == nil)
        #expect(real.conforming("3") == nil)
        let flag = AttributeDescription(name: "f", type: .bool, isOptional: true)
        #expect(flag.conforming(true) == .integer(1))
        #expect(flag.conforming(2) == nil)
        #expect(flag.conforming(.null) == .null)
    }

    func expectInvalidSchema(_ body: () throws -> some Any) {
        do {
            _ = try body()
            Issue.record("expected invalidSchema")
        } catch let error as PersistenceError {
            #expect(error.code == .invalidSchema)
        } catch {
            Issue.record("unexpected \(error)")
        }
    }
}
