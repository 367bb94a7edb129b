package import Foundation
package import PersistenceCore

/// The backend's decoders of bytes read from disk, reachable from the fuzz target and the reliability tests
/// (`package`: not for users).
///
/// Each function is the code a store runs on bytes from its file, and each either returns or throws a
/// ``PersistenceError``: a fuzzer feeds them arbitrary bytes and counts anything else as a bug.
package enum StoredBytes {
    /// A record's values from its (decrypted) bytes, as ``RecordCodec`` decodes them.
    package static func record(_ bytes: Data) throws -> [Value] { try RecordCodec.decode(bytes) }

    /// A record's bytes, as ``RecordCodec`` writes them.
    package static func encodeRecord(_ values: [Value]) -> Data { Data(RecordCodec.encode(values)) }

    /// A primary key's value from its LMDB key bytes, as ``KeyCodec`` decodes them.
    package static func key(_ bytes: Data, as type: AttributeType) throws -> Value {
        try KeyCodec.decode(bytes, as: type)
    }

    /// A primary key's LMDB key bytes.
    package static func encodeKey(_ value: Value) throws -> Data { try KeyCodec.encode(value) }

    /// A number of the meta database (format version, schema version, nonce counter) from its bytes.
    package static func metadataNumber(_ bytes: Data) throws -> UInt64 { try StoreMetadata.number(from: bytes) }

    /// The key derivation record's parameters, checked as opening a store checks them before running scrypt.
    ///
    /// Mirrors `LMDBBuilder`'s reading of the record: JSON that does not decode is `corrupt`, an unknown
    /// algorithm `unsupportedFormatVersion`, parameters out of range or a short salt `corrupt`.
    package static func keyDerivationRecord(_ bytes: Data) throws -> KeyDerivation {
        let record: KeyDerivationRecord
        do {
            record = try JSONDecoder().decode(KeyDerivationRecord.self, from: bytes)
        } catch {
            throw PersistenceError(.corrupt, "the store's key derivation record is damaged")
        }
        guard record.algorithm == KeyDerivationRecord.scryptAlgorithm else {
            throw PersistenceError(.unsupportedFormatVersion, "the store uses an unknown key derivation")
        }
        do {
            try record.parameters.validate()
        } catch {
            throw PersistenceError(.corrupt, "the store's key derivation record is damaged")
        }
        guard record.salt.count >= 16 else {
            throw PersistenceError(.corrupt, "the store's key derivation record is damaged")
        }
        return record.parameters
    }

    /// A well-formed key derivation record's bytes, as a new store writes them (a fuzzing seed).
    package static func encodeKeyDerivationRecord(parameters: KeyDerivation, salt: Data, keyCheck: Data) throws
        -> Data
    {
        try JSONEncoder().encode(
            KeyDerivationRecord(
                algorithm: KeyDerivationRecord.scryptAlgorithm, parameters: parameters, salt: salt, keyCheck: keyCheck))
    }

    /// A wrapped key record (the `keyWrap` of formats 2 and 3), read and unlocked with `passphrase` as opening a store
    /// does — through the same ``WrappedKeyRecord/unlock(passphrase:portableAES:)`` — when its derivation cost is the
    /// cheapest (a fuzzer can't afford 64 MiB per input); a costlier one is only decoded and its parameters checked.
    package static func wrappedKeyRecord(_ bytes: Data, passphrase: String) throws {
        guard let record = try? JSONDecoder().decode(WrappedKeyRecord.self, from: bytes) else {
            throw PersistenceError(.corrupt, "the store's wrapped key record is damaged")
        }
        let cheapest =
            switch record.parameters.function {
            case .scrypt(let logN, let blockSize, let parallelism): logN <= 10 && blockSize <= 8 && parallelism <= 1
            case .argon2id(let iterations, let memoryKiB): iterations <= 2 && memoryKiB <= 1024
            }
        guard cheapest else {
            do {
                try record.parameters.validate()
            } catch {
                throw PersistenceError(.corrupt, "the store's wrapped key record is damaged")
            }
            return
        }
        _ = try record.unlock(passphrase: passphrase)
    }

    /// A well-formed wrapped key record's bytes for `passphrase`, as a new store writes it (format 3), at a cheap
    /// Argon2id cost: 1 pass over 64 KiB (a fuzzing seed).
    package static func encodeWrappedKeyRecord(passphrase: String) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return try encoder.encode(
            WrappedKeyRecord.wrapping(
                StoreKeys.random(cipher: .preferred, indexHashing: .blake2b), passphrase: passphrase,
                parameters: .argon2id(iterations: 1, memoryKiB: 64)))
    }

    /// Seals and opens records with one store's keys, as an encrypted store's ``ValueSealer`` does.
    package struct Sealer: Sendable {
        private let sealer: ValueSealer

        /// Derives keys from a passphrase with a fixed salt (slow with strong parameters: use cheap ones), for
        /// values sealed as a format-1 store seals them (AES-256-GCM).
        package init(passphrase: String, parameters: KeyDerivation) throws {
            sealer = ValueSealer(
                keys: try StoreKeys.derive(
                    passphrase: passphrase, salt: Data(repeating: 7, count: 32), parameters: parameters))
        }

        /// A record's sealed bytes, authenticating `authenticated` (the entity and the record's key in a store).
        package func seal(_ values: [Value], authenticating authenticated: Data) throws -> Data {
            try authenticated.withUnsafeBytes { try sealer.seal(values, authenticating: $0) { Nonce.random() } }
        }

        /// A record's values from sealed bytes: authentication, then decoding, as reading a record does.
        package func open(_ sealed: Data, authenticating authenticated: Data) throws -> [Value] {
            try sealed.withUnsafeBytes { sealed in
                try authenticated.withUnsafeBytes { try sealer.open(sealed, authenticating: $0) }
            }
        }
    }
}
