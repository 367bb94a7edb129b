internal import CLMDB
import Foundation
import PersistenceCore

/// The meta database: format version, schema, schema version, key derivation and key check, nonce counter.
enum StoreMetadata {
    static let formatVersion: UInt64 = 1
    static let databaseName = "meta"

    enum Key: String {
        case format, schema, schemaVersion, keyDerivation, nonceCounter
    }

    static func read(_ key: Key, _ dbi: MDB_dbi, _ transaction: Transaction) throws -> Data? {
        try transaction.get(dbi, Data(key.rawValue.utf8))
    }

    static func write(_ key: Key, _ value: Data, _ dbi: MDB_dbi, _ transaction: Transaction) throws {
        try transaction.put(dbi, Data(key.rawValue.utf8), value)
    }

    static func readNumber(_ key: Key, _ dbi: MDB_dbi, _ transaction: Transaction) throws -> UInt64? {
        guard let data = try read(key, dbi, transaction) else { return nil }
        return try number(from: data)
    }

    /// A number's stored bytes: 8 bytes, big-endian; anything else is a `corrupt` error.
    static func number(from data: Data) throws -> UInt64 {
        guard data.count == 8 else { throw PersistenceError(.corrupt, "the store's metadata is damaged") }
        return data.reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
    }

    static func writeNumber(_ key: Key, _ value: UInt64, _ dbi: MDB_dbi, _ transaction: Transaction) throws {
        try write(key, withUnsafeBytes(of: value.bigEndian) { Data($0) }, dbi, transaction)
    }
}
