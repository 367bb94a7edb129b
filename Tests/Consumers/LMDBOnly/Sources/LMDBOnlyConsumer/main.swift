import Foundation
import PersistenceLMDB  // brings PersistenceCore with it

/// An entity defined by the consumer, as an app would.
struct Note: Entity, Equatable {
    var id: Int64
    var title: String
    var body: String?
    var createdAt: Date
    static let indexes: [Index] = [.on("title")]
}

/// A distinctive text to look for in the store's file: it must be stored, and never in plaintext.
let secretText = "LMDBOnly consumer: plaintext that must never reach the disk 7f3a9c"

/// An encrypted store in `directory`. The cheap key derivation keeps this check quick; apps keep the default,
/// `KeyDerivation.rfc9106`.
func builder(in directory: URL) -> LMDBBuilder {
    var builder = LMDBBuilder(databaseName: "Consumer", passphrase: "consumer passphrase", entities: [Note.self])
    builder.directory = directory
    builder.keyDerivation = .argon2id(iterations: 1, memoryKiB: 64)
    return builder
}

/// Creates an encrypted store in a fresh temporary directory, writes one note, reads it back there and after
/// reopening, and checks that the file holds no plaintext of it. Returns what went wrong, or `nil`.
func check() throws -> String? {
    let directory = FileManager.default.temporaryDirectory
        .appendingPathComponent("persistence-consumer-\(UUID().uuidString)", isDirectory: true)
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }

    let note = Note(id: 1, title: "Hello", body: secretText, createdAt: Date(timeIntervalSinceReferenceDate: 8e8))
    let file: URL
    do {
        let db = try builder(in: directory).create()
        guard db.isEncrypted else { return "the store is not encrypted" }
        try db.create(note)
        let byID = try db.recover(Note.self, id: 1)
        let byTitle: [Note] = try db.recover(key: "title", value: "Hello")
        guard byID == note, byTitle == [note] else { return "the note read back differs from the one written" }
        file = db.fileURL
    }
    // A second open checks the passphrase again (deriving the key anew) and reads what the first one committed.
    let reopened = try builder(in: directory).create()
    guard try reopened.recover(Note.self, id: 1) == note else { return "the note differs after reopening" }

    let bytes = try Data(contentsOf: file)
    guard bytes.range(of: Data(secretText.utf8)) == nil else { return "the store file holds the note in plaintext" }
    return nil
}

do {
    if let failure = try check() {
        print("FAIL: \(failure)")
        exit(1)
    }
    print("OK")
} catch {
    print("FAIL: \(error)")
    exit(1)
}
