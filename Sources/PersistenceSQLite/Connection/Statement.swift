internal import CSQLite
import Foundation
import PersistenceCore

/// `SQLITE_TRANSIENT`: SQLite copies bound bytes before the bind call returns.
private let transient = unsafeBitCast(OpaquePointer(bitPattern: -1), to: sqlite3_destructor_type.self)

/// Owns one prepared statement and finalizes it.
final class Statement {
    let handle: OpaquePointer
    private let db: OpaquePointer
    let columnCount: Int32
    /// Whether a caller is stepping through the rows while other code may use the connection (see
    /// `Connection.statement(_:_:)`). Unchecked exclusivity: read on every cache hit, and a statement serves one
    /// connection's one thread.
    @exclusivity(unchecked) var isIterating = false

    /// Prepares exactly one statement.
    /// - Throws: `PersistenceError/Code/invalidStatement` when `sql` holds more than one statement.
    init(db: OpaquePointer, sql: String, persistent: Bool) throws {
        var statement: OpaquePointer?
        var tail: UnsafePointer<CChar>?
        let flags = persistent ? UInt32(SQLITE_PREPARE_PERSISTENT) : 0
        let rc = sql.withCString { sqlite3_prepare_v3(db, $0, -1, flags, &statement, &tail) }
        guard rc == SQLITE_OK else {
            // On error *ppStmt is NULL (sqlite3_prepare doc), so there is nothing to finalize.
            let error = SQLiteError.make(rc, db, context: "could not prepare a statement")
            throw PersistenceError(
                rc & 0xFF == SQLITE_ERROR ? .invalidStatement : error.code, error.message,
                nativeCode: error.nativeCode, nativeMessage: error.nativeMessage)
        }
        guard let statement else {
            throw PersistenceError(.invalidStatement, "the SQL text holds no statement")
        }
        if let tail, !String(cString: tail).allSatisfy({ $0.isWhitespace || $0 == ";" }) {
            sqlite3_finalize(statement)
            throw PersistenceError(.invalidStatement, "the SQL text holds more than one statement")
        }
        self.handle = statement
        self.db = db
        self.columnCount = sqlite3_column_count(statement)
    }

    deinit { sqlite3_finalize(handle) }

    /// Whether the statement leaves the database unchanged.
    var isReadOnly: Bool { sqlite3_stmt_readonly(handle) != 0 }

    /// Binds one value to a 1-based parameter index.
    @inline(__always)
    func bind(_ value: Value, at index: Int32) throws {
        let rc: Int32
        switch value {
        case .null:
            rc = sqlite3_bind_null(handle, index)
        case .integer(let integer):
            rc = sqlite3_bind_int64(handle, index, integer)
        case .real(let real):
            rc = sqlite3_bind_double(handle, index, real)
        case .text(var text):
            rc = text.withUTF8 { bytes in
                // An empty buffer may have no address, and a NULL pointer would bind NULL: bind "" explicitly.
                guard let base = bytes.baseAddress, !bytes.isEmpty else {
                    return sqlite3_bind_text(handle, index, "", 0, transient)
                }
                return base.withMemoryRebound(to: CChar.self, capacity: bytes.count) {
                    sqlite3_bind_text64(handle, index, $0, UInt64(bytes.count), transient, UInt8(SQLITE_UTF8))
                }
            }
        case .blob(let data):
            rc = data.withUnsafeBytes { bytes in
                guard let base = bytes.baseAddress, !bytes.isEmpty else {
                    return sqlite3_bind_zeroblob(handle, index, 0)
                }
                return sqlite3_bind_blob64(handle, index, base, UInt64(bytes.count), transient)
            }
        }
        if rc != SQLITE_OK { throw SQLiteError.make(rc, db, context: "could not bind parameter \(index)") }
    }

    /// Binds values to parameters 1…n.
    func bind(_ values: [Value]) throws {
        let expected = Int(sqlite3_bind_parameter_count(handle))
        guard values.count == expected else {
            throw PersistenceError(
                .invalidArgument, "the statement takes \(expected) arguments, \(values.count) were given")
        }
        for (offset, value) in values.enumerated() { try bind(value, at: Int32(offset + 1)) }
    }

    /// Advances; returns whether a row is available.
    @inline(__always)
    func step() throws -> Bool {
        switch sqlite3_step(handle) {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        case let rc: throw SQLiteError.make(rc, db, context: "a statement failed")
        }
    }

    /// Makes the statement ready to run again; bindings are replaced by the next run.
    @inline(__always)
    func reset() { sqlite3_reset(handle) }

    /// Runs to completion, ignoring rows.
    func run() throws {
        defer { reset() }
        while try step() {}
    }

    /// A column of the current row as SQLite's value: its type and contents are then read without the statement
    /// (`sqlite3_value_*`), one checked call per column where each `sqlite3_column_*` call checks the statement and
    /// takes its mutex again (~60 instructions each, measured).
    ///
    /// SQLite calls the value "unprotected": safe where no other thread uses the connection meanwhile, which holds
    /// for every connection here (see ``Connection``). Valid until the next step, reset or finalize.
    @inline(__always)
    private func cell(_ index: Int32) -> OpaquePointer? { sqlite3_column_value(handle, index) }

    /// The value of a column of the current row.
    @inline(__always)
    func column(_ index: Int32) -> Value {
        let cell = cell(index)
        switch sqlite3_value_type(cell) {
        case SQLITE_INTEGER:
            return .integer(sqlite3_value_int64(cell))
        case SQLITE_FLOAT:
            return .real(sqlite3_value_double(cell))
        case SQLITE_TEXT:
            return .text(Self.text(cell))
        case SQLITE_BLOB:
            guard let blob = sqlite3_value_blob(cell) else { return .blob(Data()) }
            return .blob(Data(bytes: blob, count: Int(sqlite3_value_bytes(cell))))
        default:
            return .null
        }
    }

    /// The little-endian `Int64`s of a blob column, into `integers` (emptied first; nothing for another type).
    func integers(at index: Int32, into integers: inout [Int64]) {
        integers.removeAll(keepingCapacity: true)
        let cell = cell(index)
        guard sqlite3_value_type(cell) == SQLITE_BLOB, let blob = sqlite3_value_blob(cell) else { return }
        let count = Int(sqlite3_value_bytes(cell)) / MemoryLayout<Int64>.size
        for offset in 0..<count {
            integers.append(Int64(littleEndian: blob.loadUnaligned(fromByteOffset: offset * 8, as: Int64.self)))
        }
    }

    /// The text of a value whose type is `SQLITE_TEXT`.
    @inline(__always)
    private static func text(_ cell: OpaquePointer?) -> String {
        // Ask for the text first, then its size: the documented safe order.
        guard let text = sqlite3_value_text(cell) else { return "" }
        let count = Int(sqlite3_value_bytes(cell))
        return String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self)
    }

    /// Replaces `values` with the current row's columns, keeping the array's storage.
    @inline(__always)
    func readRow(into values: inout [Value]) {
        let count = Int(columnCount)
        if values.count != count { values = Array(repeating: .null, count: count) }
        // Assigning in place: removeAll(keepingCapacity:) then appending costs more than the columns themselves.
        for index in 0..<count { values[index] = column(Int32(index)) }
    }

    /// The bytes of a blob column of the current row, in place: valid until the statement steps or resets. `nil` for
    /// NULL; no bytes for a value of another type.
    @inline(__always)
    func blob(at index: Int32) -> UnsafeRawBufferPointer? {
        let cell = cell(index)
        switch sqlite3_value_type(cell) {
        case SQLITE_NULL:
            return nil
        case SQLITE_BLOB:
            // Ask for the bytes first, then their count: the documented safe order.
            let bytes = sqlite3_value_blob(cell)
            return UnsafeRawBufferPointer(start: bytes, count: bytes == nil ? 0 : Int(sqlite3_value_bytes(cell)))
        default:
            return UnsafeRawBufferPointer(start: nil, count: 0)
        }
    }

    /// All columns of the current row, in a new array.
    func row() -> [Value] {
        var values: [Value] = []
        readRow(into: &values)
        return values
    }

    /// The result columns' names.
    var columnNames: [String] {
        (0..<columnCount).map { sqlite3_column_name(handle, $0).map { String(cString: $0) } ?? "" }
    }
}

/// The current row read in place by a record reader: the columns are the entity's attributes in layout order (a
/// `SELECT` of every column of its table), so a column's index is the attribute's position.
extension Statement: RecordRow {
    @inline(__always)
    func value(at position: Int) -> Value { column(Int32(truncatingIfNeeded: position)) }

    func text(at position: Int) -> ColumnRead<String> {
        let cell = cell(Int32(truncatingIfNeeded: position))
        switch sqlite3_value_type(cell) {
        case SQLITE_TEXT: return .value(Self.text(cell))
        case SQLITE_NULL: return .null
        default: return .mismatch
        }
    }

    func integer(at position: Int) -> ColumnRead<Int64> {
        let cell = cell(Int32(truncatingIfNeeded: position))
        switch sqlite3_value_type(cell) {
        case SQLITE_INTEGER: return .value(sqlite3_value_int64(cell))
        case SQLITE_NULL: return .null
        default: return .mismatch
        }
    }

    func real(at position: Int) -> ColumnRead<Double> {
        let cell = cell(Int32(truncatingIfNeeded: position))
        switch sqlite3_value_type(cell) {
        case SQLITE_FLOAT: return .value(sqlite3_value_double(cell))
        case SQLITE_INTEGER: return .value(Double(sqlite3_value_int64(cell)))
        case SQLITE_NULL: return .null
        default: return .mismatch
        }
    }
}
