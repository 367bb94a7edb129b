internal import CLMDB
import Foundation
import PersistenceCore

/// The meta database: format version, schema, schema version, the key record, nonce counter.
///
/// Keys (UTF-8 names) and values: `format`, `schemaVersion` and `nonceCounter` are 8-byte big-endian integers;
/// `schema` is the JSON of the entities' `EntityDescription`s; an encrypted store has one key record, whose
/// kind the format decides (see ``StoreKeyRecord``): `keyDerivation` in format 1 (a ``KeyDerivationRecord``),
/// `keyWrap` in formats 2 and 3 (a ``WrappedKeyRecord``).
enum StoreMetadata {
    /// The newest format this version reads and writes; a store with a higher one is `unsupportedFormatVersion`.
    static let formatVersion: UInt64 = 4
    /// Keys derived straight from the passphrase (`keyDerivation`); also every unencrypted store.
    static let derivedKeyFormat: UInt64 = 1
    /// Random data keys wrapped under a key derived from the passphrase (`keyWrap`), AES-256-GCM and HMAC-SHA256.
    static let wrappedKeyFormat: UInt64 = 2
    /// As format 2, the record naming the values' cipher and the index hash, Argon2id allowed (`keyWrap`); new encrypted
    /// stores. (Unencrypted stores stay format 1: nothing of theirs changed.)
    static let suiteFormat: UInt64 = 3
    /// A store whose named databases a migration replaced (``DatabaseNames``): the key record is the kind its
    /// `keyFormat` (1, 2 or 3) names. Older versions refuse it rather than read the replaced databases.
    static let mappedFormat: UInt64 = 4
    static let databaseName = "meta"
    /// The formats this version reads.
    static let formats: ClosedRange<Int64> = 1...Int64(formatVersion)

    enum Key: String {
        case format, schema, schemaVersion, keyDerivation, keyWrap, nonceCounter
        /// ``DatabaseNames``; `keyFormat` in format 4.
        case databases, keyFormat
        /// The token of a migration under way (its shadow databases end in `@<token>`).
        case migration
        /// The token of the last migration that switched databases (``MigrationStamp``).
        case migrated
    }

    /// The format that decides the kind of key record: the store's format, or in format 4 its `keyFormat`.
    /// - Throws: `corrupt` for a format-4 store without a valid `keyFormat`.
    static func keyFormat(of format: UInt64, _ dbi: MDB_dbi, _ transaction: Transaction) throws -> UInt64 {
        guard format == mappedFormat else { return format }
        let keyFormat = try requiredNumber(.keyFormat, dbi, transaction)
        guard (derivedKeyFormat...suiteFormat).contains(keyFormat) else {
            throw PersistenceError(.corrupt, "the store's key format \(keyFormat) is not one this version reads")
        }
        return keyFormat
    }

    /// Makes the store format 4 — its key record's format kept as `keyFormat` — once its database names are
    /// remapped.
    static func markMapped(_ dbi: MDB_dbi, _ transaction: Transaction) throws {
        let format = try requiredNumber(.format, dbi, transaction)
        guard format != mappedFormat else { return }
        try writeNumber(.keyFormat, format, dbi, transaction)
        try writeNumber(.format, mappedFormat, dbi, transaction)
    }

    static func read(_ key: Key, _ dbi: MDB_dbi, _ transaction: Transaction) throws -> Data? {
        try transaction.get(dbi, Data(key.rawValue.utf8))
    }

    static func write(_ key: Key, _ value: Data, _ dbi: MDB_dbi, _ transaction: Transaction) throws {
        try transaction.put(dbi, Data(key.rawValue.utf8), value)
    }

    static func delete(_ key: Key, _ dbi: MDB_dbi, _ transaction: Transaction) throws {
        try transaction.delete(dbi, Data(key.rawValue.utf8))
    }

    static func readNumber(_ key: Key, _ dbi: MDB_dbi, _ transaction: Transaction) throws -> UInt64? {
        guard let data = try read(key, dbi, transaction) else { return nil }
        return try number(from: data)
    }

    /// A number every store of a format holds from its creation (the schema version; an encrypted store's nonce
    /// counter): a missing one is damage, never a default — restarting the nonce counter could reuse nonces.
    static func requiredNumber(_ key: Key, _ dbi: MDB_dbi, _ transaction: Transaction) throws -> UInt64 {
        guard let number = try readNumber(key, dbi, transaction) else {
            throw PersistenceError(.corrupt, "the store's metadata has no '\(key.rawValue)': the store is damaged")
        }
        return number
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
