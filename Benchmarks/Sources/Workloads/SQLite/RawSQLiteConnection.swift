import Foundation
import RawSQLite

/// An error the SQLite C API reported, with its extended result code and `sqlite3_errmsg`.
public struct RawSQLiteError: Error, CustomStringConvertible {
    public var code: Int32
    public var message: String
    public var context: String

    public var description: String { "SQLite: \(context): \(message) (\(code))" }

    /// The one place C result codes become errors.
    static func check(_ code: Int32, _ db: OpaquePointer?, _ context: @autoclosure () -> String) throws {
        guard code != SQLITE_OK, code != SQLITE_ROW, code != SQLITE_DONE else { return }
        let message =
            db.flatMap { sqlite3_errmsg($0) }.map { String(cString: $0) } ?? String(cString: sqlite3_errstr(code))
        throw RawSQLiteError(code: code, message: message, context: context())
    }
}

/// One connection through the SQLite C API, as a careful C programmer would use it: prepared statements reused,
/// parameters bound by index, columns read by index. Owns the `sqlite3` handle and every statement prepared on it.
final class RawSQLiteConnection {
    let handle: OpaquePointer
    private var statements: [OpaquePointer] = []

    /// `sqlite3_bind_text`'s "copy the text now" destructor.
    static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    init(path: String) throws {
        var db: OpaquePointer?
        let code = sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nil)
        // sqlite3_open_v2: "Whether or not an error occurs when it is opened, resources associated with the
        // database connection handle should be released by passing it to sqlite3_close() when it is no longer
        // required."
        guard let db else { throw RawSQLiteError(code: code, message: "no connection", context: "open \(path)") }
        do {
            try RawSQLiteError.check(code, db, "open \(path)")
            sqlite3_extended_result_codes(db, 1)
        } catch {
            sqlite3_close_v2(db)
            throw error
        }
        handle = db
    }

    private var isClosed = false

    /// Opens `file` in `directory` as the graph and suite workloads' raw stores do: WAL, `synchronous = FULL` (the
    /// library's durability), then runs `schema`.
    static func durable(_ file: String, in directory: URL, schema: String) throws -> RawSQLiteConnection {
        let connection = try RawSQLiteConnection(path: directory.appendingPathComponent(file).path)
        try connection.execute("PRAGMA journal_mode = WAL")
        try connection.execute("PRAGMA synchronous = FULL")
        try connection.execute(schema)
        return connection
    }

    deinit { close() }

    /// Finalizes every statement and closes the connection (once): SQLite checkpoints and removes the WAL as the
    /// last connection closes. Nothing may be used afterwards.
    func close() {
        guard !isClosed else { return }
        isClosed = true
        for statement in statements { sqlite3_finalize(statement) }
        statements = []
        sqlite3_close_v2(handle)
    }

    /// Runs SQL text without parameters or rows.
    func execute(_ sql: String) throws {
        try RawSQLiteError.check(sqlite3_exec(handle, sql, nil, nil, nil), handle, sql)
    }

    /// The first column of the first row of a query, as an integer.
    func integer(_ sql: String) throws -> Int? {
        var statement: OpaquePointer?
        try RawSQLiteError.check(sqlite3_prepare_v2(handle, sql, -1, &statement, nil), handle, sql)
        defer { sqlite3_finalize(statement) }
        guard let statement, try step(statement) else { return nil }
        return Int(sqlite3_column_int64(statement, 0))
    }

    /// Prepares a statement that lives as long as the connection.
    func prepare(_ sql: String) throws -> OpaquePointer {
        var statement: OpaquePointer?
        try RawSQLiteError.check(
            sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil), handle, sql)
        guard let statement else { throw RawSQLiteError(code: SQLITE_MISUSE, message: "empty SQL", context: sql) }
        statements.append(statement)
        return statement
    }

    /// Steps a statement: `true` for a row, `false` when done.
    @inline(__always)
    func step(_ statement: OpaquePointer) throws -> Bool {
        let code = sqlite3_step(statement)
        if code == SQLITE_ROW { return true }
        if code == SQLITE_DONE { return false }
        try RawSQLiteError.check(code, handle, "step")
        return false
    }

    /// Binds text by index (copied by SQLite).
    @inline(__always)
    func bind(_ text: String, at index: Int32, _ statement: OpaquePointer) throws {
        var text = text
        let code = text.withUTF8 { bytes in
            sqlite3_bind_text(statement, index, bytes.baseAddress, Int32(bytes.count), Self.transient)
        }
        try RawSQLiteError.check(code, handle, "bind")
    }

    @inline(__always)
    func bind(_ value: Int64, at index: Int32, _ statement: OpaquePointer) throws {
        try RawSQLiteError.check(sqlite3_bind_int64(statement, index, value), handle, "bind")
    }

    @inline(__always)
    func bind(_ value: Double, at index: Int32, _ statement: OpaquePointer) throws {
        try RawSQLiteError.check(sqlite3_bind_double(statement, index, value), handle, "bind")
    }

    /// Binds a UUID as its 16 bytes (the form the library stores), copied by SQLite.
    @inline(__always)
    func bind(_ id: UUID, at index: Int32, _ statement: OpaquePointer) throws {
        var bytes = id.uuid
        let code = withUnsafeBytes(of: &bytes) { raw in
            sqlite3_bind_blob(statement, index, raw.baseAddress, 16, Self.transient)
        }
        try RawSQLiteError.check(code, handle, "bind")
    }

    /// A 16-byte blob column as a UUID; the nil UUID (all zeros) for anything else, which no check accepts.
    @inline(__always)
    static func uuid(_ statement: OpaquePointer, _ index: Int32) -> UUID {
        let blob = sqlite3_column_blob(statement, index)
        return UUID(bytesAt: sqlite3_column_bytes(statement, index) == 16 ? blob : nil)
    }

    /// A text column as a `String` (UTF-8 validated, as Swift strings are).
    @inline(__always)
    static func text(_ statement: OpaquePointer, _ index: Int32) -> String {
        guard let bytes = sqlite3_column_text(statement, index) else { return "" }
        let count = Int(sqlite3_column_bytes(statement, index))
        return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    }
}
