internal import CSodium
import Crypto
import Foundation
import PersistenceCore
import _CryptoExtras

/// The one place a passphrase becomes key material: NFC normalization, then Argon2id or scrypt.
///
/// Every key format starts here. Format 1 (scrypt only) uses the result as the master key of the store's data keys;
/// formats 2 (scrypt only) and 3 (Argon2id or scrypt) use it as the master key of the key-encryption key that wraps
/// them (see ``WrappedKeyRecord``).
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

    /// The key derivation function of the normalized passphrase; slow by design (see ``KeyDerivation``).
    ///
    /// - Parameters:
    ///   - passphrase: The user's passphrase; must not be empty.
    ///   - salt: At least 16 bytes; Argon2id takes the first 16 (libsodium's fixed salt size).
    ///   - parameters: The function and its costs.
    /// - Returns: 32 bytes of key material.
    /// - Throws: ``PersistenceError`` with code `.invalidConfiguration` when the passphrase is empty, the salt is
    ///   too short, the parameters are out of range, or the derivation fails (for example, for lack of memory).
    static func derive(passphrase: String, salt: Data, parameters: KeyDerivation) throws -> SymmetricKey {
        let bytes = try normalized(passphrase)
        // Also keeps a damaged meta record from asking for unbounded memory.
        try parameters.validate()
        // 16 bytes is the smallest salt NIST SP 800-132 allows; new stores use 32. swift-crypto also needs a
        // non-empty salt (it would trap on an empty buffer).
        guard salt.count >= 16 else {
            throw PersistenceError(
                .invalidConfiguration,
                "the key derivation salt has \(salt.count) bytes; at least 16 are needed"
            )
        }
        switch parameters.function {
        case .argon2id(let iterations, let memoryKiB):
            return try argon2id(bytes, salt: salt, iterations: iterations, memoryKiB: memoryKiB)
        case .scrypt(let logN, let blockSize, let parallelism):
            do {
                return try KDF.Scrypt.deriveKey(
                    from: bytes, salt: salt, outputByteCount: byteCount, rounds: 1 << Int(logN), blockSize: blockSize,
                    parallelism: parallelism)
            } catch {
                // swift-crypto's errors carry no input bytes, but only the parameters are named here to be sure.
                throw PersistenceError(
                    .invalidConfiguration,
                    "scrypt key derivation failed with \(parameters); the parameters may need more memory than is "
                        + "allowed")
            }
        }
    }

    /// Argon2id version 1.3, one lane, through libsodium's `crypto_pwhash`.
    private static func argon2id(_ bytes: Data, salt: Data, iterations: Int, memoryKiB: Int) throws -> SymmetricKey {
        try Sodium.ready()
        let saltBytes = Array(salt.prefix(Int(crypto_pwhash_SALTBYTES)))
        return try withUnsafeTemporaryAllocation(byteCount: byteCount, alignment: 16) { output in
            defer { SecretBytes.zero(output) }
            guard let outputBase = output.baseAddress else {
                throw PersistenceError(.invalidConfiguration, "no memory for the derived key")
            }
            let result = bytes.withUnsafeBytes { password -> Int32 in
                // An empty passphrase still needs a valid pointer.
                password.withMemoryRebound(to: CChar.self) { chars in
                    var none: CChar = 0
                    return withUnsafePointer(to: &none) { fallback in
                        crypto_pwhash(
                            outputBase.assumingMemoryBound(to: UInt8.self), UInt64(byteCount),
                            chars.baseAddress ?? fallback, UInt64(chars.count), saltBytes,
                            UInt64(iterations), memoryKiB * 1024, crypto_pwhash_ALG_ARGON2ID13)
                    }
                }
            }
            guard result == 0 else {
                throw PersistenceError(
                    .invalidConfiguration,
                    "Argon2id key derivation failed with t = \(iterations), m = \(memoryKiB) KiB: out of memory?")
            }
            return SymmetricKey(data: UnsafeRawBufferPointer(output))
        }
    }
}
