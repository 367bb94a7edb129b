import Foundation
import PersistenceCore
import Testing

/// Misuse gets typed errors, and leaves the data as it was.
enum ErrorChecks {
    static let all: [ConformanceCheck] = [
        .database("refuses entities outside the model") { try unknownEntity($0) },
        .database("refuses mistyped conditions and bad windows") { try badQueries($0) },
        .database("never puts stored values in error messages") { try noValuesInErrors($0) },
    ]

    static func unknownEntity(_ db: some Database) throws {
        expectError(.unknownEntity) { try db.create(Stranger(id: 1)) }
        expectError(.unknownEntity) { try db.recover(Stranger.self, id: 1) }
        expectError(.unknownEntity) { let _: [Stranger] = try db.recover() }
        expectError(.unknownEntity) { try db.count(Stranger.self) }
        expectError(.unknownEntity) { try db.deleteAll(Stranger.self) }
    }

    static func badQueries(_ db: some Database) throws {
        try db.create(QueryChecks.people())
        expectError(.typeMismatch) { let _: [Person] = try db.recover(where: Field("name") == 3) }
        expectError(.typeMismatch) { let _: [Person] = try db.recover(where: Field("age") == "36") }
        expectError(.typeMismatch) { let _: [Person] = try db.recover(where: Field("age").contains("3")) }
        expectError(.typeMismatch) { let _: [Person] = try db.recover(where: .comparison("age", .less, .null)) }
        expectError(.invalidValue) { let _: [Person] = try db.recover(where: Field("score") < Double.nan) }
        expectError(.invalidArgument) { let _: [Person] = try db.recover(limit: -1) }
        expectError(.invalidArgument) { let _: [Person] = try db.recover(offset: -1) }
        #expect(try db.count(Person.self) == 5)
    }

    static func noValuesInErrors(_ db: some Database) throws {
        let secret = "s3cr3t-value-\(UUID().uuidString)"
        try db.create(Person(id: 1, name: secret, email: secret))
        var messages: [String] = []
        do { try db.create(Person(id: 1, name: secret, email: "x")) } catch { messages.append("\(error)") }
        do { try db.create(Person(id: 2, name: secret, email: secret)) } catch { messages.append("\(error)") }
        do { let _: [Person] = try db.recover(where: Field("name") == 1) } catch { messages.append("\(error)") }
        #expect(messages.count == 3)
        for message in messages { #expect(!message.contains(secret), "an error message leaked a stored value") }
    }
}
