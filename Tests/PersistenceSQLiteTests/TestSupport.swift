import Foundation
import PersistenceCore
import PersistenceSQLite
import PersistenceTesting
import Testing

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
