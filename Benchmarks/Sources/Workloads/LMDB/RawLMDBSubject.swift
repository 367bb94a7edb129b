public import Foundation
import RawLMDB

/// The LMDB C API with a hand-written value encoding, plain or sealed by `Cipher`. Records are decoded back into
/// `Person`s, as the library does.
final class RawLMDBStore<Cipher: ValueCipher> {
    let environment: RawLMDBEnvironment
    let cipher = Cipher()

    init(directory: URL) throws {
        environment = try RawLMDBEnvironment(path: directory.appendingPathComponent("raw.lmdb").path)
    }

    /// Puts a stream of records in one transaction, each with its `name` index entry.
    func put(streaming people: some Sequence<Person>) throws {
        let dbi = environment.dbi
        let indexDBI = environment.indexDBI
        var buffer: [UInt8] = []
        buffer.reserveCapacity(512)
        try environment.write { transaction in
            for person in people {
                PersonCodec.encode(person, into: &buffer)
                var key = PersonCodec.key(person.id)
                try withUnsafeMutableBytes(of: &key) { keyBytes in
                    try cipher.sealed(buffer) { valueBytes in
                        var keyValue = MDB_val(mv_size: keyBytes.count, mv_data: keyBytes.baseAddress)
                        var value = MDB_val(
                            mv_size: valueBytes.count,
                            mv_data: UnsafeMutableRawPointer(mutating: valueBytes.baseAddress))
                        try RawLMDBError.check(
                            mdb_put(transaction, dbi, &keyValue, &value, UInt32(MDB_NOOVERWRITE)), "mdb_put")
                    }
                    try cipher.indexKey(person.name) { indexBytes in
                        var indexKey = MDB_val(
                            mv_size: indexBytes.count,
                            mv_data: UnsafeMutableRawPointer(mutating: indexBytes.baseAddress))
                        var idValue = MDB_val(mv_size: keyBytes.count, mv_data: keyBytes.baseAddress)
                        try RawLMDBError.check(mdb_put(transaction, indexDBI, &indexKey, &idValue, 0), "mdb_put")
                    }
                }
            }
        }
    }

    func get(ids: [Int64]) throws -> [Person] {
        let dbi = environment.dbi
        return try environment.read { transaction in
            var people: [Person] = []
            people.reserveCapacity(ids.count)
            for id in ids {
                if let person = try lookup(id, dbi, transaction) { people.append(person) }
            }
            return people
        }
    }

    /// L5: the record of each id that exists, each in a read transaction of its own.
    func getEach(ids: [Int64]) throws -> [Person] {
        let dbi = environment.dbi
        var people: [Person] = []
        people.reserveCapacity(ids.count)
        for id in ids {
            if let person = try environment.read({ try lookup(id, dbi, $0) }) { people.append(person) }
        }
        return people
    }

    /// The record of `id`, decoded, or `nil`.
    @inline(__always)
    private func lookup(_ id: Int64, _ dbi: MDB_dbi, _ transaction: OpaquePointer) throws -> Person? {
        var key = PersonCodec.key(id)
        var value = MDB_val()
        let code = withUnsafeMutableBytes(of: &key) { keyBytes in
            var keyValue = MDB_val(mv_size: keyBytes.count, mv_data: keyBytes.baseAddress)
            return mdb_get(transaction, dbi, &keyValue, &value)
        }
        if code == MDB_NOTFOUND { return nil }
        try RawLMDBError.check(code, "mdb_get")
        return try decode(id: id, value)
    }

    func scan() throws -> [Person] {
        var people: [Person] = []
        try forEach { people.append($0) }
        return people
    }

    /// Deletes every record and index entry (`mdb_drop` without deleting the databases).
    func removeAll() throws {
        let (dbi, indexDBI) = (environment.dbi, environment.indexDBI)
        try environment.write { transaction in
            try RawLMDBError.check(mdb_drop(transaction, dbi, 0), "mdb_drop")
            try RawLMDBError.check(mdb_drop(transaction, indexDBI, 0), "mdb_drop")
        }
    }

    /// Calls `body` with every record, in key order, decoding each just before.
    func forEach(_ body: (Person) throws -> Void) throws {
        let dbi = environment.dbi
        try environment.read { transaction in
            try RawLMDBEnvironment.forEach(in: transaction, dbi) { key, value in
                let id = try PersonCodec.id(UnsafeRawBufferPointer(start: key.mv_data, count: key.mv_size))
                try body(decode(id: id, value))
            }
        }
    }

    /// Opens and decodes a value while its transaction is open (LMDB's bytes are valid only until then).
    @inline(__always)
    private func decode(id: Int64, _ value: MDB_val) throws -> Person {
        try cipher.opened(UnsafeRawBufferPointer(start: value.mv_data, count: value.mv_size)) { plaintext in
            try PersonCodec.decode(id: id, plaintext)
        }
    }
}

/// Raw LMDB, values stored as encoded: the floor every LMDB ratio is taken against.
public final class RawLMDBPlainSubject: LMDBSubject {
    public static let implementation = "raw"
    let store: RawLMDBStore<PlainValues>

    public init(directory: URL) throws { store = try RawLMDBStore(directory: directory) }
    public func put(_ people: [Person]) throws { try store.put(streaming: people) }
    public func get(ids: [Int64]) throws -> [Person] { try store.get(ids: ids) }
    public func getEach(ids: [Int64]) throws -> [Person] { try store.getEach(ids: ids) }
    public func scan() throws -> [Person] { try store.scan() }
    public func removeAll() throws { try store.removeAll() }
}

/// Raw LMDB with every value sealed by AES-GCM on its own: the naive floor of encryption.
public final class RawLMDBSealedSubject: LMDBSubject {
    public static let implementation = "raw+aes-gcm"
    let store: RawLMDBStore<AESGCMValues>

    public init(directory: URL) throws { store = try RawLMDBStore(directory: directory) }
    public func put(_ people: [Person]) throws { try store.put(streaming: people) }
    public func get(ids: [Int64]) throws -> [Person] { try store.get(ids: ids) }
    public func getEach(ids: [Int64]) throws -> [Person] { try store.getEach(ids: ids) }
    public func scan() throws -> [Person] { try store.scan() }
    public func removeAll() throws { try store.removeAll() }
}
