import Foundation
import PersistenceCore
import PersistenceSQLite
import Testing

struct SmokeUser: Entity, Equatable {
    enum Role: String, Codable, CaseIterable { case admin, member }
    var id: Int64
    var name: String
    var email: String?
    var role: Role
    var joined: Date
    var tags: [String]
    static let indexes: [Index] = [.on("name"), .unique("email")]
}

@Test func smoke() throws {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent(UUID().uuidString)
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: dir) }
    var builder = SQLiteBuilder(databaseName: "Smoke", entities: [SmokeUser.self])
    builder.directory = dir
    let db = try builder.create()
    let user = SmokeUser(id: 1, name: "John", email: nil, role: .admin, joined: Date(), tags: ["a", "b"])
    try db.create(user)
    let johns: [SmokeUser] = try db.recover(key: "name", value: "John")
    #expect(johns == [user])
    #expect(try db.recover(SmokeUser.self, id: 1) == user)
    #expect(throws: PersistenceError.self) { try db.create(user) }
    let found: [SmokeUser] = try db.recover(where: Field("name").hasPrefix("Jo") && Field("email") == nil)
    #expect(found.count == 1)
    #expect(try db.count(SmokeUser.self) == 1)
    print(try EntityDescription(describing: SmokeUser.self))
}
