public import Foundation
public import PersistenceCore

/// A backend under test: tells the conformance suite how to open a database.
///
/// ```swift
/// struct SQLiteConformance: ConformanceBackend {
///     func open(model: Model, in directory: URL) throws -> SQLiteDatabase {
///         var builder = SQLiteBuilder(databaseName: "Conformance", model: model)
///         builder.directory = directory
///         return try builder.create()
///     }
/// }
/// ```
public protocol ConformanceBackend: Sendable {
    /// The database type the backend makes.
    associatedtype Store: Database

    /// Opens (creating when needed) a database of `model` whose files live in `directory`: its entity types, and
    /// its will-commit hooks run in every write (the suite's checks of hooks and write options give it some).
    ///
    /// Opening again in the same directory, after the previous database was released, must reach the same data.
    func open(model: Model, in directory: URL) throws -> Store

    /// Whether the backend keeps its stores as files in the directory `open` is given (the default): the suite then
    /// also checks the files themselves — none left after a delete, unrelated files ignored, bad names refused. A
    /// server's backend says `false` and maps the directory to stores on its server.
    var storesAreFiles: Bool { get }

    /// The names of the stores `open` made in `directory`; `Store.storeNames(in:)` by default for a
    /// `FileBackedDatabase`.
    func storeNames(in directory: URL) throws -> [String]

    /// Deletes the store named `name` that `open` made in `directory`; `Store.deleteStore(named:in:)` by default for
    /// a `FileBackedDatabase`.
    func deleteStore(named name: String, in directory: URL) throws -> Bool
}

extension ConformanceBackend {
    public var storesAreFiles: Bool { true }

    /// Opens a database of a model of these entity types, version 1.
    public func open(entities: [any Entity.Type], in directory: URL) throws -> Store {
        try open(model: Model(version: 1, entities: entities), in: directory)
    }
}

extension ConformanceBackend where Store: FileBackedDatabase {
    public func storeNames(in directory: URL) throws -> [String] { try Store.storeNames(in: directory) }

    public func deleteStore(named name: String, in directory: URL) throws -> Bool {
        try Store.deleteStore(named: name, in: directory)
    }
}
