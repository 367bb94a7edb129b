import Foundation
import PersistenceTesting
import Testing

@testable import PersistenceLMDB

/// Records hold their values in attribute order: a model that declares the same properties in another order opens
/// with every value in its place (the records are rewritten at open), at the same schema version.
struct AttributeOrderTests {
    struct Before: Entity, Equatable {
        var id: Int64
        var first: String
        var second: String
        static var entityName: String { "Pair" }
    }

    struct After: Entity, Equatable {
        var id: Int64
        var second: String
        var first: String
        static var entityName: String { "Pair" }
    }

    @Test(arguments: [true, false])
    func reorderedPropertiesReadTheRightValues(encrypted: Bool) throws {
        try withTemporaryDirectory { directory in
            func builder(_ type: any Entity.Type) -> LMDBBuilder {
                let model = Model(version: 1, entities: [type])
                var builder =
                    encrypted
                    ? LMDBBuilder(databaseName: "Pairs", passphrase: "pairs", model: model)
                    : LMDBBuilder.unencrypted(databaseName: "Pairs", model: model)
                builder.directory = directory
                builder.keyDerivation = testKeyDerivation
                return builder
            }
            try builder(Before.self).create().create(Before(id: 1, first: "one", second: "two"))
            let db = try builder(After.self).create()
            #expect(try db.recover(After.self, id: 1) == After(id: 1, second: "two", first: "one"))
            try db.create(After(id: 2, second: "b", first: "a"))
            #expect(try db.verify().isSound)
        }
    }
}
