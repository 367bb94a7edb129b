import Crypto
import Foundation

/// What a format-1 encrypted store keeps in its meta database (under `keyDerivation`, as JSON) to derive and check
/// its keys on the next open; formats 2 and 3 keep a ``WrappedKeyRecord`` instead (see ``StoreKeyRecord``).
///
/// Format 1 derives its keys with scrypt only. Argon2id, the default of new stores, exists only in format 3's
/// ``WrappedKeyRecord``; this type holds the names both functions are recorded under.
///
/// Nothing here is secret: the salt only has to be unique, and ``keyCheck`` is an HMAC that tells a wrong
/// passphrase apart from a damaged store without revealing anything about the key.
struct KeyDerivationRecord: Codable, Sendable, Hashable {
    /// The name scrypt is recorded under, in ``algorithm`` and in a ``WrappedKeyRecord``'s `algorithm`.
    static let scryptAlgorithm = "scrypt"
    /// The name Argon2id is recorded under in a format-3 ``WrappedKeyRecord``'s `algorithm`.
    static let argon2idAlgorithm = "argon2id"

    /// The key derivation function: always ``scryptAlgorithm`` in format 1.
    ///
    /// Opening a format-1 store whose record names another function is `unsupportedFormatVersion`.
    var algorithm: String
    /// The scrypt cost parameters the store was created with.
    var parameters: KeyDerivation
    /// The store's random salt, used by scrypt and as the HKDF salt.
    var salt: Data
    /// ``StoreKeys/keyCheckValue()`` for the store's keys, compared on open to detect a wrong passphrase.
    var keyCheck: Data

    /// A new random 32-byte salt.
    ///
    /// Drawn through `SymmetricKey`, which uses the system's cryptographically secure generator.
    static func newSalt() -> Data {
        SymmetricKey(size: .bits256).withUnsafeBytes { Data($0) }
    }
}
