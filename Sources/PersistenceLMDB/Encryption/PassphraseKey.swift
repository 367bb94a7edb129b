import Crypto
import Foundation
import PersistenceCore
import _CryptoExtras

/// The one place a passphrase becomes key material: NFC normalization, then scrypt.
///
/// Both key formats start here. Format 1 uses the result as the master key of the store's data keys; format 2
/// uses it as the master key of the key-encryption key that wraps them (see ``WrappedKeyRecord``).
enum PassphraseKey {
    static let byteCount = 32

    /// The passphrase's bytes as they are hashed: Unicode NFC, UTF-8.
    ///
    /// A passphrase typed as composed characters ("é", U+00E9) and the same passphrase typed as decomposed ones
    /// ("e" + U+0301) are the same passphrase: keyboards and platforms differ in which form they produce, and a
    /// user cannot see the difference. Only canonical equivalence is applied: "ﬁ" and "fi" stay distinct.
    ///
    /// - Throws: ``PersistenceError`` with code `.invalidConfiguration` when the passphrase is empty.
    static func normalized(_ passphrase: String) throws -> Data {
        let normalized = passphrase.precomposedStringWithCanonicalMapping
        guard !normalized.isEmpty else {
            throw PersistenceError(.invalidConfiguration, "the passphrase is empty")
        }
        return Data(normalized.utf8)
    }

    /// scrypt of the normalized passphrase; slow by design (see ``KeyDerivation``).
    ///
    /// - Parameters:
    ///   - passphrase: The user's passphrase; must not be empty.
    ///   - salt: At least 16 bytes.
    ///   - parameters: The scrypt cost parameters.
    /// - Returns: 32 bytes of key material.
    /// - Throws: ``PersistenceError`` with code `.invalidConfiguration` when the passphrase is empty, the salt is
    ///   too short, the parameters are out of range, or scrypt fails (for example, for lack of memory).
    static func derive(passphrase: String, salt: Data, parameters: KeyDerivation) throws -> SymmetricKey {
        let bytes = try normalized(passphrase)
        // Also keeps a damaged meta record from asking scrypt for unbounded memory.
        try parameters.validate()
        // 16 bytes is the smallest salt NIST SP 800-132 allows; new stores use 32. swift-crypto also needs a
        // non-empty salt (it would trap on an empty buffer).
        guard salt.count >= 16 else {
            throw PersistenceError(
                .invalidConfiguration,
                "the key derivation salt has \(salt.count) bytes; at least 16 are needed"
            )
        }
        do {
            return try KDF.Scrypt.deriveKey(
                from: bytes,
                salt: salt,
                outputByteCount: byteCount,
                rounds: parameters.rounds,
                blockSize: parameters.blockSize,
                parallelism: parameters.parallelism
            )
        } catch {
            // swift-crypto's errors carry no input bytes, but only the parameters are named here to be sure.
            throw PersistenceError(
                .invalidConfiguration,
                "scrypt key derivation failed with N = 2^\(parameters.logN), r = \(parameters.blockSize), "
                    + "p = \(parameters.parallelism); the parameters may need more memory than is allowed"
            )
        }
    }
}
