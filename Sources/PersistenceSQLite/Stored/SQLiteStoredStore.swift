package import Foundation
@_spi(PersistenceBackend) package import PersistenceCore
@_spi(PersistenceBackend) import PersistenceEngine
import PersistenceSQL

/// An SQLite store opened read-only through the schema it holds (see ``StoredStore``): one read transaction from
/// open to close, so every entity is read from one snapshot and nothing in the file changes.
package final class SQLiteStoredStore: StoredStore {
    package let backend = "sqlite"
    package let schemaVersion: Int
    package let layouts: [RecordLayout]
    /// The store's file.
    package let file: URL
    private let connection: Connection
    /// The private copy read instead of the file when its write-ahead log had to be read without a `-shm` (see
    /// ``ReadOnlyOpening``); removed with this store.
    private let copy: ReadOnlyOpening.PrivateCopy?
    private let format: Int64
    /// Each entity's table mapping, in ``layouts``' order.
    private let mappings: [TableMapping]
    /// The records, read through the storage an app's context uses, on the session's connection.
    private let storage: SQLiteStorage
    private var isOpen = true

    /// Opens the store at `file` read-only, making no file beside it (see ``ReadOnlyOpening``).
    /// - Throws: ``PersistenceError`` — `notFound` for no file, `corrupt` for a file that isn't SQLite,
    ///   `invalidSchema` for an SQLite file Persistence didn't create, `unsupportedFormatVersion` for a newer
    ///   format.
    package init(file: URL) throws {
        guard FileManager.default.fileExists(atPath: file.path) else {
            throw PersistenceError(.notFound, "no SQLite store at \(file.path)")
        }
        self.file = file
        let opened = try ReadOnlyOpening.open(file, busyTimeoutMilliseconds: 5_000)
        connection = opened.connection
        copy = opened.copy
        try connection.execute("PRAGMA query_only = 1")
        try connection.execute("BEGIN DEFERRED")
        guard let metadata = try SchemaStore.readMetadata(connection) else {
            connection.close()
            throw PersistenceError(.invalidSchema, "\(file.path) is an SQLite file Persistence did not create")
        }
        guard let format = metadata.format, (1...SchemaStore.formatVersion).contains(format) else {
            connection.close()
            throw PersistenceError(
                .unsupportedFormatVersion,
                "\(file.path) has format \(metadata.format.map(String.init) ?? "?"); this build reads 1…\(SchemaStore.formatVersion)"
            )
        }
        guard let json = metadata.schema, let version = metadata.version else {
            connection.close()
            throw PersistenceError(.corrupt, "\(file.path) has no stored schema or version")
        }
        self.format = format
        schemaVersion = version
        layouts = try StoreGate.storedLayouts(json)
        let mappings = layouts.enumerated().map { TableMapping(index: $0, layout: $1) }
        self.mappings = mappings
        storage = SQLiteStorage(
            connection: connection, mappings: EntityLookup(unrelated: layouts, storage: mappings),
            instrumentation: .off)
    }

    deinit { connection.close() }

    package var details: [(label: String, value: String)] {
        get throws {
            try checkOpen()
            let pageSize = try connection.scalar("PRAGMA page_size")
            let pages = try connection.scalar("PRAGMA page_count")
            let free = try connection.scalar("PRAGMA freelist_count")
            let journal = try connection.scalar("PRAGMA journal_mode")
            var details: [(label: String, value: String)] = [
                ("file", file.path),
                ("format", "Persistence SQLite format \(format)"),
                ("file size", StoredStoreSize.bytes(StoredStoreSize.fileSize(file))),
            ]
            if case .integer(let size)? = pageSize, case .integer(let count)? = pages {
                details.append(("pages", "\(count) of \(size) bytes"))
            }
            if case .integer(let count)? = free { details.append(("free pages", "\(count)")) }
            if case .text(let mode)? = journal {
                details.append(("journal", ReadOnlyOpening.isWriteAheadLogged(file) ? "wal" : mode))
            }
            details.append(("encryption", "none (SQLite stores are not encrypted)"))
            return details
        }
    }

    package func storage(for position: Int) throws -> (storage: any RecordStorage, entity: Int)? {
        try checkOpen()
        return (storage, position)
    }

    package func verify() throws -> VerificationReport {
        try checkOpen()
        var verifier = SQLiteVerifier(connection: connection, mappings: mappings)
        var report = try verifier.run()
        try verifyReferencesAndFullTextIndexes(into: &report)
        return report
    }

    package func close() throws {
        guard isOpen else { return }
        isOpen = false
        if !connection.isAutocommit { try? connection.execute("COMMIT") }
        connection.close()
    }

    private func checkOpen() throws {
        guard isOpen else { throw PersistenceError(.closed, "the store \(file.path) is closed") }
    }
}

/// A new SQLite store filled with records (see ``StoredStoreWriter``): written to a temporary file beside its
/// place, in one transaction, and moved into place only at ``commit()``.
package final class SQLiteStoredStoreWriter: StoredStoreWriter {
    private let file: URL
    private let temporary: URL
    private let connection: Connection
    private let mappings: [String: (TableMapping, Statement)]
    private var finished = false

    /// Starts a store at `file` holding `layouts`' entities at `schemaVersion`.
    /// - Throws: ``PersistenceError`` — `invalidArgument` when something exists at `file`, `permissionDenied`
    ///   for a directory that can't be written.
    package init(file: URL, layouts: [RecordLayout], schemaVersion: Int) throws {
        try NewStoreFile.checkPlace(file, fileExtension: "sqlite", backend: "an SQLite")
        self.file = file
        temporary = NewStoreFile.temporary(for: file)
        connection = try Connection(path: temporary.path, readOnly: false, busyTimeoutMilliseconds: 5_000)
        do {
            try connection.execute("PRAGMA journal_mode = DELETE")
            try connection.execute("BEGIN IMMEDIATE")
            try connection.execute(
                "CREATE TABLE \(quote(SchemaStore.metadataTable)) (key TEXT NOT NULL PRIMARY KEY, value)")
            var mappings: [String: (TableMapping, Statement)] = [:]
            for (index, layout) in layouts.enumerated() {
                let mapping = TableMapping(index: index, layout: layout)
                for sql in mapping.creationSQL { try connection.execute(sql) }
                mappings[layout.entity.name] = (
                    mapping, try Statement(db: connection.handle, sql: mapping.sql(.insert), persistent: true)
                )
            }
            self.mappings = mappings
            try SchemaStore.write(connection, "formatVersion", .integer(SchemaStore.formatVersion))
            try SchemaStore.write(connection, "modelVersion", .integer(Int64(schemaVersion)))
            try SchemaStore.write(connection, "schema", .blob(StoreGate.schemaJSON(layouts.map(\.entity))))
        } catch {
            connection.close()
            try? FileManager.default.removeItem(at: temporary)
            throw error
        }
    }

    deinit { discard() }

    package func insert(_ record: Record) throws {
        guard let (mapping, statement) = mappings[record.layout.entity.name] else {
            throw PersistenceError(.unknownEntity, "the new store has no entity '\(record.layout.entity.name)'")
        }
        let values = try mapping.layout.storedValues(of: record)
        defer { statement.reset() }
        try statement.bind(values)
        try statement.run()
    }

    package func commit() throws {
        guard !finished else { throw PersistenceError(.closed, "the new store is already finished") }
        finished = true
        do {
            try connection.execute("COMMIT")
            try connection.execute("PRAGMA journal_mode = WAL")
            connection.close()
            try NewStoreFile.moveIntoPlace(temporary, to: file)
        } catch {
            connection.close()
            try? FileManager.default.removeItem(at: temporary)
            throw error
        }
    }

    package func discard() {
        guard !finished else { return }
        finished = true
        connection.close()
        try? FileManager.default.removeItem(at: temporary)
        try? FileManager.default.removeItem(at: URL(fileURLWithPath: temporary.path + "-journal"))
    }
}
