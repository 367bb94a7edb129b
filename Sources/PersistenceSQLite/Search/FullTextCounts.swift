internal import CSQLite
import PersistenceCore

/// The FTS5 auxiliary function the SQLite backend's full-text searches read their counts with, registered on every
/// connection whose SQLite has FTS5: `persistence_fulltext_counts(<table>)` gives, for each matching row, what BM25 is
/// computed from (in the core, as on every backend) — a blob of little-endian `Int64`s:
///
/// `[rows in the table, tokens in the table, rows holding each phrase…, tokens in this row, this row's occurrences of
/// each phrase…]`
///
/// The table's counts and each phrase's rows (FTS5's `xQueryPhrase`, one pass over the phrase's rows) are counted
/// once per query and kept as the query's auxiliary data; each row then costs its instances (`xInst`).
enum FullTextCounts {
    static let name = "persistence_fulltext_counts"

    /// Registers the function on `db`; `false` when its SQLite has no FTS5.
    static func register(on db: OpaquePointer) -> Bool {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(db, "SELECT fts5(?1)", -1, &statement, nil) == SQLITE_OK else { return false }
        defer { sqlite3_finalize(statement) }
        var api: UnsafeMutablePointer<fts5_api>?
        let type = UnsafeRawPointer(StaticString("fts5_api_ptr").utf8Start).assumingMemoryBound(to: CChar.self)
        let bound = withUnsafeMutablePointer(to: &api) { pointer in
            sqlite3_bind_pointer(statement, 1, pointer, type, nil) == SQLITE_OK && sqlite3_step(statement) == SQLITE_ROW
        }
        guard bound, let api, api.pointee.iVersion >= 2, let create = api.pointee.xCreateFunction else { return false }
        return create(api, name, nil, function, nil) == SQLITE_OK
    }

    private static let function:
        @convention(c) (
            UnsafePointer<Fts5ExtensionApi>?, OpaquePointer?, OpaquePointer?, Int32,
            UnsafeMutablePointer<OpaquePointer?>?
        ) -> Void = { api, fts, context, _, _ in
            guard let api = api?.pointee, let phraseCount = api.xPhraseCount?(fts).nonNegative else {
                sqlite3_result_error(context, "persistence_fulltext_counts: FTS5 lacks an API it needs", -1)
                return
            }
            let header = 2 + phraseCount
            withUnsafeTemporaryAllocation(of: Int64.self, capacity: header + 1 + phraseCount) { buffer in
                buffer.initialize(repeating: 0)
                rowCounts(api, fts, context, phraseCount, into: buffer)
            }
        }

    /// The row's counts (after the table's, counted once per query), as the function's result.
    private static func rowCounts(
        _ api: Fts5ExtensionApi, _ fts: OpaquePointer?, _ context: OpaquePointer?, _ phraseCount: Int,
        into counts: UnsafeMutableBufferPointer<Int64>
    ) {
        guard let getAuxdata = api.xGetAuxdata, let instCount = api.xInstCount, let inst = api.xInst,
            let columnSize = api.xColumnSize
        else {
            sqlite3_result_error(context, "persistence_fulltext_counts: FTS5 lacks an API it needs", -1)
            return
        }
        let header = 2 + phraseCount
        if let saved = getAuxdata(fts, 0) {
            let table = saved.assumingMemoryBound(to: Int64.self)
            for index in 0..<header { counts[index] = table[index] }
        } else {
            let rc = tableCounts(api, fts, phraseCount, into: counts)
            guard rc == SQLITE_OK else {
                sqlite3_result_error_code(context, rc)
                return
            }
            guard let saved = sqlite3_malloc64(UInt64(header * MemoryLayout<Int64>.stride)) else {
                sqlite3_result_error_nomem(context)
                return
            }
            let table = saved.bindMemory(to: Int64.self, capacity: header)
            for index in 0..<header { table[index] = counts[index] }
            _ = api.xSetAuxdata?(fts, saved, sqlite3_free)
        }
        var length: Int32 = 0
        var instances: Int32 = 0
        var rc = columnSize(fts, -1, &length)
        if rc == SQLITE_OK { rc = instCount(fts, &instances) }
        guard rc == SQLITE_OK else {
            sqlite3_result_error_code(context, rc)
            return
        }
        counts[header] = Int64(length)
        for instance in 0..<instances {
            var phrase: Int32 = 0
            var column: Int32 = 0
            var offset: Int32 = 0
            guard inst(fts, instance, &phrase, &column, &offset) == SQLITE_OK, phrase >= 0,
                Int(phrase) < phraseCount
            else { continue }
            counts[header + 1 + Int(phrase)] += 1
        }
        for index in counts.indices { counts[index] = counts[index].littleEndian }
        sqlite3_result_blob64(
            context, counts.baseAddress, UInt64(counts.count * MemoryLayout<Int64>.size), transientDestructor)
    }

    /// The table's rows and tokens, and the rows holding each phrase, into `counts[0..<2 + phrases]`.
    private static func tableCounts(
        _ api: Fts5ExtensionApi, _ fts: OpaquePointer?, _ phrases: Int, into counts: UnsafeMutableBufferPointer<Int64>
    ) -> Int32 {
        guard let rowCount = api.xRowCount, let totalSize = api.xColumnTotalSize, let queryPhrase = api.xQueryPhrase
        else { return SQLITE_ERROR }
        var rows: Int64 = 0
        var tokens: Int64 = 0
        var rc = rowCount(fts, &rows)
        if rc == SQLITE_OK { rc = totalSize(fts, -1, &tokens) }
        guard rc == SQLITE_OK else { return rc }
        counts[0] = rows
        counts[1] = tokens
        for phrase in 0..<phrases {
            var matching: Int64 = 0
            rc = withUnsafeMutablePointer(to: &matching) { pointer in
                queryPhrase(fts, Int32(phrase), pointer, countRow)
            }
            guard rc == SQLITE_OK else { return rc }
            counts[2 + phrase] = matching
        }
        return SQLITE_OK
    }

    private static let countRow:
        @convention(c) (UnsafePointer<Fts5ExtensionApi>?, OpaquePointer?, UnsafeMutableRawPointer?)
            -> Int32 = { _, _, counter in
                counter?.assumingMemoryBound(to: Int64.self).pointee += 1
                return SQLITE_OK
            }

    private static let transientDestructor = unsafeBitCast(
        OpaquePointer(bitPattern: -1), to: sqlite3_destructor_type.self)
}

extension Int32 {
    fileprivate var nonNegative: Int? { self >= 0 ? Int(self) : nil }
}
