import Crypto
import Foundation
import PersistenceCore

/// The key-encryption key of a format-2 or format-3 store: derived from the passphrase, it wraps the store's data
/// keys.
///
/// The record's key derivation turns the passphrase into a master key (``PassphraseKey``): Argon2id (the default of
/// new stores) or scrypt, as ``KeyDerivation`` names it — format 2 knows scrypt only. HKDF-SHA256, salted with the
/// record's salt, splits the master key into a wrapping key (AES-256-GCM over the data keys, through swift-crypto,
/// whatever the store's value cipher) and a check key (an HMAC that tells a wrong passphrase apart from a damaged
/// record). Neither is ever stored, and the data keys it unwraps are the only thing it opens.
struct KeyEncryptionKey: Sendable {
    private let wrappingKey: SymmetricKey
    private let checkKey: SymmetricKey

    // Domain-separation labels; distinct from StoreKeys' labels, so the key-encryption key never equals a data key
    // even for a format-1 store whose passphrase and salt were reused.
    private static let wrappingKeyInfo = Data("persistence.lmdb.kek.wrap.v2".utf8)
    private static let checkKeyInfo = Data("persistence.lmdb.kek.check.v2".utf8)
    private static let checkMessage = Data("persistence.lmdb.passphrase-check.v2".utf8)
    /// The wrap's authenticated data: binds the wrapped bytes to their purpose and format, so they cannot be passed
    /// off as any other sealed value of this library, and in format 3 to the store's cipher and index hash, so a
    /// record edited to name other algorithms does not unwrap.
    static func wrapAuthenticatedData(_ suite: (ValueCipher, IndexHashing)?) -> Data {
        guard let (cipher, indexHashing) = suite else { return Data("persistence.lmdb.wrapped-keys.v2".utf8) }
        return Data("persistence.lmdb.wrapped-keys.v3|\(cipher.rawValue)|\(indexHashing.rawValue)".utf8)
    }

    /// Derives the key-encryption key; slow by design (Argon2id or scrypt, see ``KeyDerivation``).
    ///
    /// - Throws: ``PersistenceError`` with code `.invalidConfiguration` as ``PassphraseKey/derive(passphrase:salt:parameters:)``.
    static func derive(passphrase: String, salt: Data, parameters: KeyDerivation) throws -> KeyEncryptionKey {
        let master = try PassphraseKey.derive(passphrase: passphrase, salt: salt, parameters: parameters)
        func subkey(_ info: Data) -> SymmetricKey {
            HKDF<SHA256>.deriveKey(inputKeyMaterial: master, salt: salt, info: info, outputByteCount: 32)
        }
        return KeyEncryptionKey(wrappingKey: subkey(wrappingKeyInfo), checkKey: subkey(checkKeyInfo))
    }

    /// The record's ``WrappedKeyRecord/passphraseCheck``: HMAC-SHA256 of a fixed label under the check key.
    func passphraseCheck() -> Data {
        Data(HMAC<SHA256>.authenticationCode(for: Self.checkMessage, using: checkKey))
    }

    /// Whether a stored passphrase check was made by this key, in time independent of where the values differ.
    func verifies(passphraseCheck: Data) -> Bool {
        HMAC<SHA256>.isValidAuthenticationCode(passphraseCheck, authenticating: Self.checkMessage, using: checkKey)
    }

    /// Seals the data keys: `nonce (12 bytes) || ciphertext (96 bytes) || tag (16 bytes)`.
    ///
    /// The nonce is random: each key-encryption key wraps once, since every passphrase change draws a new salt.
    /// - Throws: ``PersistenceError`` with code `.invalidValue` when sealing fails.
    func wrap(_ keys: StoreKeys) throws -> Data {
        let combined: Data?
        let aad = Self.wrapAuthenticatedData((keys.cipher, keys.indexHashing))
        do {
            combined = try keys.withMaterial { material in
                try AES.GCM.seal(material, using: wrappingKey, authenticating: aad).combined
            }
        } catch {
            throw PersistenceError(.invalidValue, "the store's keys could not be wrapped")
        }
        guard let combined else { throw PersistenceError(.invalidValue, "the store's keys could not be wrapped") }
        return combined
    }

    /// Opens wrapped data keys.
    ///
    /// Call it only after ``verifies(passphraseCheck:)``: then a failure means the wrapped bytes are damaged.
    /// - Parameters:
    ///   - suite: The cipher and index hash a format-3 record names; `nil` for format 2 (AES-256-GCM, HMAC-SHA256).
    ///   - portableAES: Open AES-GCM values with swift-crypto even where libsodium could (tests of the fallback).
    /// - Throws: ``PersistenceError`` with code `.corrupt` when the bytes do not authenticate or hold no keys.
    func unwrap(_ wrapped: Data, suite: (ValueCipher, IndexHashing)?, portableAES: Bool) throws -> StoreKeys {
        var material: Data
        do {
            let box = try AES.GCM.SealedBox(combined: wrapped)
            material = try AES.GCM.open(box, using: wrappingKey, authenticating: Self.wrapAuthenticatedData(suite))
        } catch {
            throw PersistenceError(.corrupt, "the store's wrapped key record is damaged")
        }
        defer { SecretBytes.zero(&material) }
        guard material.count == StoreKeys.materialByteCount else {
            throw PersistenceError(.corrupt, "the store's wrapped key record is damaged")
        }
        let (cipher, indexHashing) = suite ?? (.aes256gcm, .hmacSHA256)
        return try material.withUnsafeBytes {
            try StoreKeys(material: $0, cipher: cipher, indexHashing: indexHashing, portableAES: portableAES)
        }
    }
}

// Keys must never end up in logs.
extension KeyEncryptionKey: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// A placeholder that shows no key material.
    var description: String { "KeyEncryptionKey(redacted)" }
    /// A placeholder that shows no key material.
    var debugDescription: String { description }
    /// An empty mirror, so `dump` and debuggers show no key material.
    var customMirror: Mirror { Mirror(self, children: [:]) }
}
