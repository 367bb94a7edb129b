import Foundation
import RawLMDB

/// RS1's raw LMDB baseline: the C API as a careful C programmer would use it — records keyed by the UUID's 16 bytes,
/// a hand-written encoding (age, then the first name's length and bytes, then the surname), and for the index the
/// environment's sorted-duplicates database of `firstName → id`, filled by one pass over the records. Without the
/// index, a fetch compares each record's name bytes and decodes only the matches.
final class RawSuiteLMDBStore: SuiteUsersStore {
    private var environment: RawLMDBEnvironment?
    private var users: [SuiteUserRow] = []
    /// Whether the index database is kept up to date (after ``addIndex(_:)``, and in a reopened indexed store).
    private var indexed: Bool

    init(directory: URL, indexed: Bool = false) throws {
        environment = try RawLMDBEnvironment(path: directory.appendingPathComponent("raw.lmdb").path)
        self.indexed = indexed
    }

    private func open() throws -> RawLMDBEnvironment {
        guard let environment else { throw RawLMDBError(code: EINVAL, context: "the environment is closed") }
        return environment
    }

    func prepare(_ users: [SuiteUserRow]) { self.users = users }

    func insert() throws {
        let environment = try open()
        var buffer: [UInt8] = []
        buffer.reserveCapacity(64)
        try environment.write { transaction in
            for user in users {
                Self.encode(user, into: &buffer)
                try Self.put(transaction, environment.dbi, key: user.id, value: buffer, flags: MDB_NOOVERWRITE)
            }
        }
        users = []
    }

    func fetch(named name: String) throws -> [SuiteUserRow] {
        let environment = try open()
        var users: [SuiteUserRow] = []
        try environment.read { transaction in
            if indexed {
                for id in try Self.ids(named: name, transaction, environment.indexDBI) {
                    users.append(Self.decode(id: id, try Self.get(id, transaction, environment.dbi)))
                }
            } else {
                let wanted = Array(name.utf8)
                try RawLMDBEnvironment.forEach(in: transaction, environment.dbi) { key, value in
                    if Self.hasName(wanted, value) { users.append(Self.decode(id: UUID(bytesAt: key.mv_data), value)) }
                }
            }
        }
        users.sort { $0.age < $1.age }
        return users
    }

    func addIndex(_ directory: URL) throws -> any SuiteUsersStore {
        let environment = try open()
        try environment.write { transaction in
            try RawLMDBEnvironment.forEach(in: transaction, environment.dbi) { key, value in
                let name = Self.nameBytes(value)
                var indexKey = MDB_val(
                    mv_size: name.count, mv_data: UnsafeMutableRawPointer(mutating: name.baseAddress))
                var id = key
                try RawLMDBError.check(mdb_put(transaction, environment.indexDBI, &indexKey, &id, 0), "mdb_put")
            }
        }
        indexed = true
        return self
    }

    func rename(_ name: String, to newName: String) throws -> Int {
        let environment = try open()
        return try environment.write { transaction in
            let ids = try Self.ids(named: name, transaction, environment.indexDBI)
            var buffer: [UInt8] = []
            for id in ids {
                var user = Self.decode(id: id, try Self.get(id, transaction, environment.dbi))
                user.firstName = newName
                Self.encode(user, into: &buffer)
                try Self.put(transaction, environment.dbi, key: id, value: buffer, flags: 0)
                try Self.index(transaction, environment.indexDBI, name: name, id: id, delete: true)
                try Self.index(transaction, environment.indexDBI, name: newName, id: id, delete: false)
            }
            return ids.count
        }
    }

    func deleteAll() throws -> Int {
        let environment = try open()
        return try environment.write { transaction in
            var stat = MDB_stat()
            try RawLMDBError.check(mdb_stat(transaction, environment.dbi, &stat), "mdb_stat")
            try RawLMDBError.check(mdb_drop(transaction, environment.dbi, 0), "mdb_drop")
            try RawLMDBError.check(mdb_drop(transaction, environment.indexDBI, 0), "mdb_drop")
            return Int(stat.ms_entries)
        }
    }

    func close() throws { environment = nil }

    // MARK: The encoding and the C calls

    private static func encode(_ user: SuiteUserRow, into buffer: inout [UInt8]) {
        buffer.removeAll(keepingCapacity: true)
        withUnsafeBytes(of: Int64(user.age).littleEndian) { buffer.append(contentsOf: $0) }
        let name = user.firstName.utf8
        withUnsafeBytes(of: UInt16(name.count).littleEndian) { buffer.append(contentsOf: $0) }
        buffer.append(contentsOf: name)
        buffer.append(contentsOf: user.surname.utf8)
    }

    private static func bytes(_ value: MDB_val) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: value.mv_data, count: value.mv_size)
    }

    /// The first name's bytes inside a stored value (valid while its transaction is open).
    private static func nameBytes(_ value: MDB_val) -> UnsafeRawBufferPointer {
        let bytes = bytes(value)
        let count = Int(UInt16(littleEndian: bytes.loadUnaligned(fromByteOffset: 8, as: UInt16.self)))
        return UnsafeRawBufferPointer(rebasing: bytes[10..<(10 + count)])
    }

    private static func hasName(_ name: [UInt8], _ value: MDB_val) -> Bool {
        nameBytes(value).elementsEqual(name)
    }

    private static func decode(id: UUID, _ value: MDB_val) -> SuiteUserRow {
        let bytes = bytes(value)
        let age = Int(Int64(littleEndian: bytes.loadUnaligned(as: Int64.self)))
        let name = nameBytes(value)
        let surname = UnsafeRawBufferPointer(rebasing: bytes[(10 + name.count)...])
        return SuiteUserRow(
            id: id, firstName: String(decoding: name, as: UTF8.self), surname: String(decoding: surname, as: UTF8.self),
            age: age)
    }

    /// The stored value of `id` (valid while its transaction is open).
    private static func get(_ id: UUID, _ transaction: OpaquePointer, _ dbi: MDB_dbi) throws -> MDB_val {
        var key = id.uuid
        var value = MDB_val()
        let code = withUnsafeMutableBytes(of: &key) { keyBytes in
            var keyValue = MDB_val(mv_size: 16, mv_data: keyBytes.baseAddress)
            return mdb_get(transaction, dbi, &keyValue, &value)
        }
        try RawLMDBError.check(code, "mdb_get")
        return value
    }

    private static func put(
        _ transaction: OpaquePointer, _ dbi: MDB_dbi, key: UUID, value: [UInt8], flags: Int32
    ) throws {
        var id = key.uuid
        try withUnsafeMutableBytes(of: &id) { keyBytes in
            try value.withUnsafeBytes { valueBytes in
                var keyValue = MDB_val(mv_size: 16, mv_data: keyBytes.baseAddress)
                var data = MDB_val(
                    mv_size: valueBytes.count, mv_data: UnsafeMutableRawPointer(mutating: valueBytes.baseAddress))
                try RawLMDBError.check(mdb_put(transaction, dbi, &keyValue, &data, UInt32(flags)), "mdb_put")
            }
        }
    }

    /// Adds or deletes one `name → id` entry of the index.
    private static func index(
        _ transaction: OpaquePointer, _ dbi: MDB_dbi, name: String, id: UUID, delete: Bool
    ) throws {
        var name = name
        var key = id.uuid
        try name.withUTF8 { nameBytes in
            try withUnsafeMutableBytes(of: &key) { idBytes in
                var indexKey = MDB_val(
                    mv_size: nameBytes.count, mv_data: UnsafeMutableRawPointer(mutating: nameBytes.baseAddress))
                var idValue = MDB_val(mv_size: 16, mv_data: idBytes.baseAddress)
                let code =
                    delete
                    ? mdb_del(transaction, dbi, &indexKey, &idValue) : mdb_put(transaction, dbi, &indexKey, &idValue, 0)
                try RawLMDBError.check(code, delete ? "mdb_del" : "mdb_put")
            }
        }
    }

    /// The ids the index lists under `name`.
    private static func ids(named name: String, _ transaction: OpaquePointer, _ dbi: MDB_dbi) throws -> [UUID] {
        var cursor: OpaquePointer?
        try RawLMDBError.check(mdb_cursor_open(transaction, dbi, &cursor), "mdb_cursor_open")
        defer { mdb_cursor_close(cursor) }
        var name = name
        var ids: [UUID] = []
        try name.withUTF8 { nameBytes in
            var key = MDB_val(
                mv_size: nameBytes.count, mv_data: UnsafeMutableRawPointer(mutating: nameBytes.baseAddress))
            var value = MDB_val()
            var code = mdb_cursor_get(cursor, &key, &value, MDB_SET_KEY)
            while code == MDB_SUCCESS {
                ids.append(UUID(bytesAt: value.mv_data))
                code = mdb_cursor_get(cursor, &key, &value, MDB_NEXT_DUP)
            }
            guard code == MDB_NOTFOUND else { throw RawLMDBError(code: code, context: "mdb_cursor_get") }
        }
        return ids
    }
}
