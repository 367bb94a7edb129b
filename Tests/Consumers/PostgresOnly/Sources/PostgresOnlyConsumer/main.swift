import Foundation
import PersistencePostgres  // brings PersistenceCore with it

/// An entity defined by the consumer, as an app would.
struct Note: Entity, Equatable {
    var id: Int64
    var title: String
    var body: String?
    var createdAt: Date
    static let indexes: [Index] = [.on("title")]
}

/// Opens a store in a schema of its own on the server `PERSISTENCE_POSTGRES_URL` names, writes one note, reads it
/// back, and deletes the store; false on a mismatch.
func check() throws -> Bool {
    guard let url = ProcessInfo.processInfo.environment["PERSISTENCE_POSTGRES_URL"] else {
        throw PersistenceError(.invalidConfiguration, "PERSISTENCE_POSTGRES_URL is not set")
    }
    var builder = try PostgresBuilder(url: url, model: Model(version: 1, entities: [Note.self]))
    builder.schema = "consumer_check"
    try builder.deleteStore()
    let db = try builder.create()
    let note = Note(id: 1, title: "Hello", body: nil, createdAt: Date(timeIntervalSinceReferenceDate: 800_000_000))
    try db.create(note)
    let byID = try db.recover(Note.self, id: 1)
    let byTitle: [Note] = try db.recover(key: "title", value: "Hello")
    try db.close()
    try builder.deleteStore()
    return byID == note && byTitle == [note]
}

do {
    if try check() {
        print("OK")
    } else {
        print("FAIL: the note read back differs from the one written")
        exit(1)
    }
} catch {
    print("FAIL: \(error)")
    exit(1)
}
