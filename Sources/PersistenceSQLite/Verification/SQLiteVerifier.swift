import Foundation
@_spi(PersistenceBackend) import PersistenceCore
import PersistenceSQL

/// Checks one SQLite store in one read transaction: the engine's integrity check, the metadata, each entity's
/// table and indexes, then every row's values.
///
/// Rows stream through one statement per table and are checked one at a time, so memory stays flat. Statements are
/// prepared for this run only, not cached on the connection: verification runs rarely and its SQL is its own.
struct SQLiteVerifier {
    let connection: Connection
    let mappings: [TableMapping]
    private var report = VerificationReport()

    init(connection: Connection, mappings: [TableMapping]) {
        self.connection = connection
        self.mappings = mappings
    }

    mutating func run() throws -> VerificationReport {
        try engineChecked(entity: nil) { try $0.integrityCheck() }
        try engineChecked(entity: nil) { try $0.verifyMetadata() }
        for mapping in mappings {
            report.entitiesChecked += 1
            try engineChecked(entity: mapping.layout.entity.name) { verifier in
                let columns = try verifier.verifyTable(of: mapping)
                try verifier.verifyIndexes(of: mapping)
                try verifier.verifyRows(of: mapping, columns: columns)
            }
        }
        return report
    }

    private mutating func add(_ problem: VerificationProblem) { report.append(problem) }

    /// Runs one step; a `corrupt` error from SQLite (a damaged page met while reading) becomes a problem and the
    /// next step goes on.
    private mutating func engineChecked(entity: String?, _ step: (inout SQLiteVerifier) throws -> Void) throws {
        do {
            try step(&self)
        } catch let error as PersistenceError where error.code == .corrupt {
            add(VerificationProblem(.engineIntegrity, entity: entity, message: error.description))
        }
    }

    /// Calls `body` with each row of a query run for this check only.
    private static func forEachRow(
        _ connection: Connection, _ sql: String, _ arguments: [Value] = [], _ body: (Statement) throws -> Void
    ) throws {
        let statement = try Statement(db: connection.handle, sql: sql, persistent: false)
        try statement.bind(arguments)
        while try statement.step() {
            // An async verify() whose task is cancelled stops between rows.
            try CancellationFlag.checkCurrent()
            try body(statement)
        }
    }

    // MARK: - The engine

    private mutating func integrityCheck() throws {
        var messages: [String] = []
        var stopped: PersistenceError?
        do {
            // SQLite stops at 100 messages by default: enough to judge a file, and bounded.
            try Self.forEachRow(connection, "PRAGMA integrity_check") { row in
                if case .text(let message) = row.column(0) { messages.append(message) }
            }
        } catch let error as PersistenceError where error.code == .corrupt {
            // On some damage SQLite lists what it found, then fails the statement: keep both.
            stopped = error
        }
        // SQLite's messages name pages, tables, indexes and rowids, not column values.
        for message in messages where message != "ok" {
            add(VerificationProblem(.engineIntegrity, message: message))
        }
        if let stopped {
            add(VerificationProblem(.engineIntegrity, message: "the integrity check stopped: \(stopped)"))
        }
    }

    // MARK: - Metadata

    private mutating func verifyMetadata() throws {
        let table = SchemaStore.metadataTable
        let exists = try connection.scalar(
            "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = ?", [.text(table)])
        guard exists != .integer(0) else {
            add(VerificationProblem(.metadataMissing, message: "the metadata table '\(table)' is missing"))
            return
        }
        var stored: [String: Value] = [:]
        try Self.forEachRow(connection, "SELECT key, value FROM \(quote(table))") { row in
            if case .text(let key) = row.column(0) { stored[key] = row.column(1) }
        }
        for problem in VerificationProblem.metadataProblems(
            stored, formatVersion: SchemaStore.formatVersion, current: mappings.map(\.layout.entity))
        {
            add(problem)
        }
    }

    // MARK: - Tables and indexes

    /// Checks the entity's table against its description; returns the attribute positions that have a column.
    private mutating func verifyTable(of mapping: TableMapping) throws -> [Int] {
        let entity = mapping.layout.entity
        var columns: [String: CatalogColumn] = [:]
        try Self.forEachRow(
            connection, "SELECT name, type, \"notnull\", pk FROM pragma_table_info(?)", [.text(entity.name)]
        ) { row in
            guard case .text(let name) = row.column(0) else { return }
            let type = if case .text(let type) = row.column(1) { type } else { "" }
            columns[name] = CatalogColumn(
                type: type.uppercased(), notNull: row.column(2) != .integer(0), isKey: row.column(3) != .integer(0))
        }
        let (problems, present) = VerificationProblem.tableProblems(
            columns, of: entity, columnType: TableMapping.columnType)
        for problem in problems { add(problem) }
        return present
    }

    private mutating func verifyIndexes(of mapping: TableMapping) throws {
        let entity = mapping.layout.entity
        var found: [String: CatalogIndex] = [:]
        try Self.forEachRow(
            connection, "SELECT name, \"unique\" FROM pragma_index_list(?) WHERE origin = 'c'", [.text(entity.name)]
        ) { row in
            if case .text(let name) = row.column(0) {
                found[name] = CatalogIndex(isUnique: row.column(1) != .integer(0), columns: [])
            }
        }
        for name in found.keys.sorted() {
            try Self.forEachRow(connection, "SELECT name FROM pragma_index_info(?) ORDER BY seqno", [.text(name)]) {
                row in
                if case .text(let column) = row.column(0) { found[name]?.columns.append(column) }
            }
        }
        for problem in VerificationProblem.indexProblems(found, of: entity) { add(problem) }
    }

    // MARK: - Rows

    /// Checks each value of each row against its attribute, naming the row by its primary key.
    private mutating func verifyRows(of mapping: TableMapping, columns present: [Int]) throws {
        let layout = mapping.layout
        guard !present.isEmpty else { return }
        let attributes = present.map { layout.entity.attributes[$0] }
        let keyColumn = present.firstIndex(of: layout.primaryKeyIndex)
        let keyType = layout.types[layout.primaryKeyIndex]
        let sql = "SELECT \(attributes.map { quote($0.name) }.joined(separator: ", ")) FROM \(mapping.table)"
        var values: [Value] = []
        try Self.forEachRow(connection, sql) { row in
            report.recordsChecked += 1
            row.readRow(into: &values)
            let key = keyColumn.map { values[$0].primaryKeyText(as: keyType) }
            for (position, value) in zip(present, values) {
                guard let found = layout.verificationProblem(for: value, at: position) else { continue }
                add(
                    VerificationProblem(
                        found.kind, entity: layout.entity.name, primaryKey: key, attribute: layout.names[position],
                        message: found.message))
            }
        }
    }
}
