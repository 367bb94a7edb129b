public import Foundation
public import PersistenceCore

/// A backend under test: tells the conformance suite how to open a database.
///
/// ```swift
/// struct SQLiteConformance: ConformanceBackend {
///     func open(entities: [any Entity.Type], in directory: URL) throws -> SQLiteDatabase {
///         var builder = SQLiteBuilder(databaseName: "Conformance", entities: entities)
///         builder.directory = directory
///         return try builder.create()
///     }
/// }
/// ```
public protocol ConformanceBackend: Sendable {
    /// The database type the backend makes.
    associatedtype Store: Database

    /// Opens (creating when needed) a database of these entity types whose files live in `directory`.
    ///
    /// Opening again in the same directory, after the previous database was released, must reach the same data.
    func open(entities: [any Entity.Type], in directory: URL) throws -> Store
}
