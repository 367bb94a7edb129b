internal import CLMDB
import Foundation
import PersistenceCore

/// An encrypted store's key record, as its format has it; an unencrypted store has none.
///
/// - Format 1, ``derived(_:)``: meta key `keyDerivation`, a ``KeyDerivationRecord`` (JSON). The data keys are
///   derived from the passphrase itself, so the passphrase cannot change without re-encrypting every value.
///   Stores created before format 2 have it; they keep opening unchanged.
/// - Format 2, ``wrapped(_:)``: meta key `keyWrap`, a ``WrappedKeyRecord`` (JSON). The data keys are wrapped under
///   a key derived from the passphrase, so a passphrase change rewrites this record only.
/// - Format 3, ``wrapped(_:)`` too: the record also names the values' cipher and the index keys' hash, and may use
///   Argon2id. New stores are format 3; a store of format 1 or 2 becomes format 3 when its passphrase changes (one
///   record rewritten, in one transaction: its values and index keys stay as they are, AES-256-GCM and
///   HMAC-SHA256, which the record then names). Until then it opens and is written in its own format.
///
/// A store has exactly the record its format names: any other combination is `corrupt`, so deleting a record can't
/// make an encrypted store pass for an unencrypted one, nor a format-2 store fall back to format 1.
enum StoreKeyRecord: Sendable, Hashable {
    case derived(KeyDerivationRecord)
    case wrapped(WrappedKeyRecord)

    /// The format a store with this record has.
    var format: UInt64 {
        switch self {
        case .derived: StoreMetadata.derivedKeyFormat
        case .wrapped(let record): record.suite == nil ? StoreMetadata.wrappedKeyFormat : StoreMetadata.suiteFormat
        }
    }

    /// The parameters the passphrase is derived with.
    var parameters: KeyDerivation {
        switch self {
        case .derived(let record): record.parameters
        case .wrapped(let record): record.parameters
        }
    }

    /// A new store's record (format 3): random data keys wrapped under the passphrase; slow by design.
    ///
    /// - Parameters:
    ///   - cipher: The values' cipher; `nil` picks ``ValueCipher/preferred`` for this machine.
    ///   - portableAES: Seal AES-GCM values with swift-crypto even where libsodium could (tests).
    static func new(
        passphrase: String, parameters: KeyDerivation, cipher: ValueCipher? = nil, portableAES: Bool = false
    ) throws -> (StoreKeys, StoreKeyRecord) {
        let keys = try StoreKeys.random(
            cipher: cipher ?? .preferred, indexHashing: .blake2b, portableAES: portableAES)
        return (keys, .wrapped(try WrappedKeyRecord.wrapping(keys, passphrase: passphrase, parameters: parameters)))
    }

    /// A new store's record in format 1, keys derived from the passphrase, as stores were made before format 2:
    /// only for tests of reading and upgrading such stores.
    static func newDerived(passphrase: String, parameters: KeyDerivation) throws -> (StoreKeys, StoreKeyRecord) {
        guard case .scrypt = parameters.function else {
            throw PersistenceError(.invalidConfiguration, "format-1 stores derive their keys with scrypt only")
        }
        let salt = KeyDerivationRecord.newSalt()
        let keys = try StoreKeys.derive(passphrase: passphrase, salt: salt, parameters: parameters)
        let record = KeyDerivationRecord(
            algorithm: KeyDerivationRecord.scryptAlgorithm, parameters: parameters, salt: salt,
            keyCheck: keys.keyCheckValue())
        return (keys, .derived(record))
    }

    /// The key record of a store of format `format`, or `nil` when the store is not encrypted.
    ///
    /// - Throws: ``PersistenceError`` with code `.corrupt` when the record is unreadable, missing from a format-2
    ///   store, or of the other format's kind.
    static func read(format: UInt64, _ meta: MDB_dbi, _ transaction: Transaction) throws -> StoreKeyRecord? {
        let derived = try StoreMetadata.read(.keyDerivation, meta, transaction)
        let wrapped = try StoreMetadata.read(.keyWrap, meta, transaction)
        let decoder = JSONDecoder()
        if format >= StoreMetadata.wrappedKeyFormat {
            guard derived == nil, let wrapped else {
                throw PersistenceError(.corrupt, "the store's wrapped key record is missing or doubled")
            }
            guard let record = try? decoder.decode(WrappedKeyRecord.self, from: wrapped) else {
                throw PersistenceError(.corrupt, "the store's wrapped key record is damaged")
            }
            // Format 3 names both algorithms; format 2 neither, and only knows scrypt.
            let suiteNamed = record.cipher != nil || record.indexHash != nil
            let valid =
                format == StoreMetadata.wrappedKeyFormat
                ? !suiteNamed && record.algorithm == KeyDerivationRecord.scryptAlgorithm
                : record.suite != nil
            guard valid else {
                throw PersistenceError(.corrupt, "the store's wrapped key record does not match its format \(format)")
            }
            return .wrapped(record)
        }
        guard wrapped == nil else {
            throw PersistenceError(.corrupt, "the store has a wrapped key record its format does not have")
        }
        guard let derived else { return nil }
        guard let record = try? decoder.decode(KeyDerivationRecord.self, from: derived) else {
            throw PersistenceError(.corrupt, "the store's key derivation record is damaged")
        }
        return .derived(record)
    }

    /// Writes this record and the matching format, deleting the other format's record, in `transaction`.
    func write(_ meta: MDB_dbi, _ transaction: Transaction) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        switch self {
        case .derived(let record):
            try StoreMetadata.write(.keyDerivation, encoder.encode(record), meta, transaction)
            try StoreMetadata.delete(.keyWrap, meta, transaction)
        case .wrapped(let record):
            try StoreMetadata.write(.keyWrap, encoder.encode(record), meta, transaction)
            try StoreMetadata.delete(.keyDerivation, meta, transaction)
        }
        // A format-4 store keeps its format (its databases are remapped); the record's kind is its keyFormat.
        let mapped = try StoreMetadata.readNumber(.format, meta, transaction) == StoreMetadata.mappedFormat
        try StoreMetadata.writeNumber(mapped ? .keyFormat : .format, format, meta, transaction)
    }

    /// The store's data keys, if `passphrase` is its passphrase; slow by design.
    ///
    /// - Parameter portableAES: Open AES-GCM values with swift-crypto even where libsodium could (tests).
    /// - Throws: ``PersistenceError`` — `wrongPassphrase`, `corrupt` (a damaged record),
    ///   `unsupportedFormatVersion` (an unknown key derivation), `invalidConfiguration` (an empty passphrase).
    func unlock(passphrase: String, portableAES: Bool = false) throws -> StoreKeys {
        switch self {
        case .wrapped(let record):
            return try record.unlock(passphrase: passphrase, portableAES: portableAES)
        case .derived(let record):
            guard record.algorithm == KeyDerivationRecord.scryptAlgorithm,
                record.parameters.algorithmName == record.algorithm
            else {
                throw PersistenceError(.unsupportedFormatVersion, "the store uses an unknown key derivation")
            }
            _ = try PassphraseKey.normalized(passphrase)
            let keys: StoreKeys
            do {
                keys = try StoreKeys.derive(passphrase: passphrase, salt: record.salt, parameters: record.parameters)
            } catch let error as PersistenceError where error.code == .invalidConfiguration {
                // The passphrase is not empty, so bad parameters or salt come from the file, not from the caller.
                throw PersistenceError(.corrupt, "the store's key derivation record is damaged: \(error.message)")
            }
            guard keys.verifies(keyCheck: record.keyCheck) else {
                throw PersistenceError(.wrongPassphrase, "the passphrase does not open this store")
            }
            return keys
        }
    }
}
