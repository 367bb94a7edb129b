import PersistenceCore

/// How an encrypted LMDB store turns a passphrase into its keys: the scrypt cost parameters.
///
/// scrypt is memory-hard: each guess at the passphrase costs an attacker `128 × N × r × p` bytes of memory
/// and the matching time, which is what makes offline guessing expensive. The parameters are stored in the
/// store's meta database next to the salt, so a store always reopens with the parameters it was created with.
///
/// Use ``owasp`` unless you have measured a reason not to. Values below ``owasp`` are meant for tests and
/// low-power devices: they make opening faster and equally make every guess at the passphrase cheaper,
/// weakening the protection against guessing.
///
/// ```swift
/// let derivation = KeyDerivation.owasp  // N = 2^17, r = 8, p = 1: about 128 MiB per derivation
/// let forTests = KeyDerivation.scrypt(logN: 10, blockSize: 8, parallelism: 1)
/// ```
public struct KeyDerivation: Sendable, Hashable, Codable {
    /// The base-2 logarithm of scrypt's CPU/memory cost `N` (`N = 1 << logN`).
    ///
    /// Stored as the exponent because scrypt requires `N` to be a power of two.
    public let logN: UInt8
    /// scrypt's block size `r`; memory and time grow linearly with it.
    public let blockSize: Int
    /// scrypt's parallelization parameter `p`; time grows linearly with it.
    public let parallelism: Int

    /// The OWASP Password Storage Cheat Sheet's scrypt recommendation: `N = 2^17`, `r = 8`, `p = 1`
    /// (128 MiB of memory per derivation).
    public static let owasp = KeyDerivation(logN: 17, blockSize: 8, parallelism: 1)

    /// scrypt with explicit cost parameters.
    ///
    /// Values below ``owasp`` are for tests and low-power devices and weaken protection against guessing.
    /// The values are checked when the store is opened, not here.
    ///
    /// - Parameters:
    ///   - logN: The base-2 logarithm of the cost `N`, from 10 to 22.
    ///   - blockSize: The block size `r`, from 1 to 16.
    ///   - parallelism: The parallelization `p`, from 1 to 16.
    /// - Returns: The key derivation description.
    public static func scrypt(logN: UInt8, blockSize: Int, parallelism: Int) -> KeyDerivation {
        KeyDerivation(logN: logN, blockSize: blockSize, parallelism: parallelism)
    }

    /// scrypt's cost `N`; only meaningful after ``validate()`` has passed.
    var rounds: Int { 1 << Int(logN) }

    /// Checks that the parameters are within the bounds this library accepts.
    ///
    /// The bounds keep a derivation between a fraction of a millisecond and a few gigabytes, so a damaged or
    /// hostile meta record cannot make opening a store allocate without limit. They also enforce RFC 7914's
    /// `N < 2^(128 × r / 8)`, which only matters for block sizes below 4.
    ///
    /// - Throws: ``PersistenceError`` with code `.invalidConfiguration` when a parameter is out of range.
    func validate() throws {
        guard (10...22).contains(logN) else {
            throw PersistenceError(
                .invalidConfiguration,
                "scrypt logN must be from 10 to 22 (N = 1024 to 4194304), not \(logN)"
            )
        }
        // Above 16, swift-crypto's memory allowance for BoringSSL's scrypt is too small with parallelism 1.
        guard (1...16).contains(blockSize) else {
            throw PersistenceError(.invalidConfiguration, "scrypt block size must be from 1 to 16, not \(blockSize)")
        }
        guard (1...16).contains(parallelism) else {
            throw PersistenceError(.invalidConfiguration, "scrypt parallelism must be from 1 to 16, not \(parallelism)")
        }
        // RFC 7914 section 2: N must be less than 2^(128 * r / 8).
        guard Int(logN) < 16 * blockSize else {
            throw PersistenceError(
                .invalidConfiguration,
                "scrypt logN \(logN) is too large for block size \(blockSize) (RFC 7914 needs N < 2^(16 × r))"
            )
        }
    }
}
