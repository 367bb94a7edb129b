import Foundation
import PersistenceCore
import PersistenceSQLite
import Testing

/// A fresh temporary directory, removed when the body ends.
func withTemporaryDirectory<R>(_ body: (URL) throws -> R) throws -> R {
    let directory = FileManager.default.temporaryDirectory
        .appendingPathComponent("persistence-sqlite-tests-\(UUID().uuidString)", isDirectory: true)
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    return try body(directory)
}

/// Expects `body` to throw a ``PersistenceError`` with `code`.
func expectCode<R>(
    _ code: PersistenceError.Code, sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> R
) {
    do {
        _ = try body()
        Issue.record("expected .\(code), nothing was thrown", sourceLocation: sourceLocation)
    } catch let error as PersistenceError {
        #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
    } catch {
        Issue.record("expected .\(code), got \(error)", sourceLocation: sourceLocation)
    }
}

/// The names in a directory, for checking that nothing was created.
func contents(of directory: URL) throws -> [String] {
    try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
}

struct Note: Entity, Equatable {
    var id: Int64
    var title: String
    var body: String?
    static let indexes: [Index] = [.on("title")]
}

struct NoteV2: Entity, Equatable {
    var id: Int64
    var title: String
    var pinned: Bool
    static var entityName: String { "Note" }
}

func builder(_ directory: URL, _ entities: [any Entity.Type] = [Note.self], name: String = "Notes") -> SQLiteBuilder {
    var builder = SQLiteBuilder(databaseName: name, entities: entities)
    builder.directory = directory
    return builder
}
