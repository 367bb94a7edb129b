import Foundation
import PersistenceSQLite  // brings PersistenceCore with it

/// An entity defined by the consumer, as an app would.
struct Note: Entity, Equatable {
    var id: Int64
    var title: String
    var body: String?
    var createdAt: Date
    static let indexes: [Index] = [.on("title")]
}

/// Creates a store in a fresh temporary directory, writes one note, reads it back; exits non-zero on a mismatch.
func check() throws -> Bool {
    let directory = FileManager.default.temporaryDirectory
        .appendingPathComponent("persistence-consumer-\(UUID().uuidString)", isDirectory: true)
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }

    var builder = SQLiteBuilder(databaseName: "Consumer", entities: [Note.self])
    builder.directory = directory
    let db = try builder.create()

    let note = Note(id: 1, title: "Hello", body: nil, createdAt: Date(timeIntervalSinceReferenceDate: 800_000_000))
    try db.create(note)
    let byID = try db.recover(Note.self, id: 1)
    let byTitle: [Note] = try db.recover(key: "title", value: "Hello")
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
