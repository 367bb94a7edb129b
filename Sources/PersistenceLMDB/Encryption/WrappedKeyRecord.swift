import Crypto
import Foundation
import PersistenceCore

/// What a format-2 or format-3 encrypted store keeps in its meta database under `keyWrap`: its data keys, wrapped
/// under a key derived from the passphrase. The layout below is format 2's (scrypt only); format 3's additions, which
/// new stores use (Argon2id by default), follow it.
///
/// **Why two levels.** The data keys (value, index and check key, see ``StoreKeys``) seal every value and hash
/// every index key. Deriving them straight from the passphrase, as format 1 does, would mean re-encrypting the
/// whole store to change the passphrase; wrapping them means a change rewrites this one record, in one
/// transaction, so a crash leaves either the old record or the new one — exactly one working passphrase.
///
/// **Layout.** The meta database's `format` key holds `2` (8 bytes, big-endian), and `keyWrap` holds this record as
/// JSON with sorted keys; byte fields are base64:
///
/// ```json
/// {"algorithm": "scrypt",
///  "parameters": {"blockSize": 8, "logN": 17, "parallelism": 1},
///  "passphraseCheck": "<32 bytes>",
///  "salt": "<32 bytes>",
///  "wrappedKeys": "<124 bytes>"}
/// ```
///
/// - `algorithm`, `parameters`, `salt`: scrypt and its cost parameters and salt (a new random salt at every
///   change), giving a 32-byte master key from the NFC-normalized UTF-8 passphrase.
/// - HKDF-SHA256 (salt: `salt`) splits the master key into the wrapping key (info `persistence.lmdb.kek.wrap.v2`)
///   and the check key (info `persistence.lmdb.kek.check.v2`).
/// - `passphraseCheck`: HMAC-SHA256 of `persistence.lmdb.passphrase-check.v2` under the check key. A mismatch is
///   `wrongPassphrase`.
/// - `wrappedKeys`: AES-256-GCM under the wrapping key, authenticated data `persistence.lmdb.wrapped-keys.v2`:
///   `nonce (12) || ciphertext (96) || tag (16)`. The plaintext is the value key, the index key and the check key,
///   32 bytes each. A record whose check passes but whose keys fail to open is `corrupt`.
///
/// A format-1 store (`keyDerivation`: a ``KeyDerivationRecord``, keys derived from the passphrase) becomes format 2
/// when its passphrase changes: its derived keys are wrapped as they are, `keyDerivation` is deleted and `format`
/// set to 2 in the same transaction, so no value or index key is rewritten.
///
/// **Format 3** (new stores, and any store whose passphrase changes) keeps the same record with two more fields,
/// `cipher` (``ValueCipher``: `aes-256-gcm` or `xchacha20-poly1305`) and `indexHash` (``IndexHashing``:
/// `hmac-sha256` or `blake2b-256`), and allows `algorithm` `argon2id` with `parameters`
/// `{"function": "argon2id", "iterations": t, "memoryKiB": m}` (Argon2id v1.3, one lane, salt: the first 16 bytes
/// of `salt`). The wrap's authenticated data is `persistence.lmdb.wrapped-keys.v3|<cipher>|<indexHash>`, so a
/// record edited to name other algorithms does not unwrap. A format-2 record has neither field: AES-256-GCM and
/// HMAC-SHA256.
struct WrappedKeyRecord: Codable, Sendable, Hashable {
    /// The key derivation function: ``KeyDerivationRecord/scryptAlgorithm`` or, from format 3,
    /// ``KeyDerivationRecord/argon2idAlgorithm``; always the one `parameters` name.
    var algorithm: String
    /// The cost parameters of the key-encryption key.
    var parameters: KeyDerivation
    /// The random salt of the key-encryption key's derivation and HKDF.
    var salt: Data
    /// ``KeyEncryptionKey/passphraseCheck()``, compared on open to detect a wrong passphrase.
    var passphraseCheck: Data
    /// The data keys sealed by ``KeyEncryptionKey/wrap(_:)``.
    var wrappedKeys: Data
    /// The values' cipher; `nil` in format 2 (AES-256-GCM).
    var cipher: ValueCipher?
    /// The index keys' hash; `nil` in format 2 (HMAC-SHA256).
    var indexHash: IndexHashing?

    /// The cipher and index hash a format-3 record names, `nil` for a format-2 record (or a damaged mix).
    var suite: (ValueCipher, IndexHashing)? {
        guard let cipher, let indexHash else { return nil }
        return (cipher, indexHash)
    }

    /// Wraps `keys` under a key derived from `passphrase` with a new random salt, as a format-3 record; slow by
    /// design.
    ///
    /// - Throws: ``PersistenceError`` with code `.invalidConfiguration` for an empty passphrase or parameters out
    ///   of range.
    static func wrapping(_ keys: StoreKeys, passphrase: String, parameters: KeyDerivation) throws -> WrappedKeyRecord {
        let salt = KeyDerivationRecord.newSalt()
        let kek = try KeyEncryptionKey.derive(passphrase: passphrase, salt: salt, parameters: parameters)
        return WrappedKeyRecord(
            algorithm: parameters.algorithmName, parameters: parameters, salt: salt,
            passphraseCheck: kek.passphraseCheck(), wrappedKeys: try kek.wrap(keys), cipher: keys.cipher,
            indexHash: keys.indexHashing)
    }

    /// The data keys, if `passphrase` is the store's; slow by design.
    ///
    /// - Parameter portableAES: Open AES-GCM values with swift-crypto even where libsodium could (tests).
    /// - Throws: ``PersistenceError`` — `wrongPassphrase` when the passphrase check fails, `corrupt` when the
    ///   record's parameters or salt are unusable or the wrapped keys do not open, `unsupportedFormatVersion` for
    ///   an unknown algorithm, `invalidConfiguration` for an empty passphrase.
    func unlock(passphrase: String, portableAES: Bool = false) throws -> StoreKeys {
        guard algorithm == parameters.algorithmName else {
            throw PersistenceError(.unsupportedFormatVersion, "the store uses an unknown key derivation")
        }
        _ = try PassphraseKey.normalized(passphrase)
        let kek: KeyEncryptionKey
        do {
            kek = try KeyEncryptionKey.derive(passphrase: passphrase, salt: salt, parameters: parameters)
        } catch let error as PersistenceError where error.code == .invalidConfiguration {
            // The passphrase is not empty, so bad parameters or salt come from the file, not from the caller.
            throw PersistenceError(.corrupt, "the store's wrapped key record is damaged: \(error.message)")
        }
        guard kek.verifies(passphraseCheck: passphraseCheck) else {
            throw PersistenceError(.wrongPassphrase, "the passphrase does not open this store")
        }
        return try kek.unwrap(wrappedKeys, suite: suite, portableAES: portableAES)
    }
}
