import PersistenceCore

/// How an encrypted LMDB store turns a passphrase into the key that unlocks its data keys: Argon2id (the default)
/// or scrypt, with their cost parameters.
///
/// Both are memory-hard: each guess at the passphrase costs an attacker the memory and time below, which is what
/// makes offline guessing expensive. The function and its parameters are stored in the store's meta database next to
/// the salt, so a store always reopens with what it was created with (or last given by
/// ``LMDBDatabase/changePassphrase(from:to:keyDerivation:)-3vte``).
///
/// | preset | function | memory | passes | derivation here¹ |
/// |---|---|---|---|---|
/// | ``rfc9106`` (default) | Argon2id | 64 MiB | 3 | ~0.12 s |
/// | ``owaspMinimum`` | Argon2id | 19 MiB | 2 | ~0.03 s |
/// | ``sensitive`` | Argon2id | 1 GiB | 4 | ~2.5 s |
/// | ``owaspScrypt`` | scrypt N = 2^17, r = 8 | 128 MiB | — | ~0.3 s |
///
/// ¹ One core of a 2020s x86-64 server; a phone is slower. Values below ``owaspMinimum`` are for tests and
/// low-power devices: they make opening faster and equally make every guess at the passphrase cheaper.
///
/// ```swift
/// builder.keyDerivation = .rfc9106                                    // the default
/// builder.keyDerivation = .argon2id(iterations: 1, memoryKiB: 64)     // tests only
/// ```
public struct KeyDerivation: Sendable, Hashable, Codable {
    /// The function and its cost parameters.
    enum Function: Sendable, Hashable {
        /// Argon2id version 1.3 (RFC 9106) with one lane, through libsodium.
        case argon2id(iterations: Int, memoryKiB: Int)
        /// scrypt (RFC 7914), `N = 2^logN`.
        case scrypt(logN: UInt8, blockSize: Int, parallelism: Int)
    }

    let function: Function

    init(function: Function) {
        self.function = function
    }

    /// RFC 9106's second recommended option, the default: Argon2id, 3 passes over 64 MiB, one lane.
    public static let rfc9106 = argon2id(iterations: 3, memoryKiB: 64 * 1024)
    /// The OWASP Password Storage Cheat Sheet's smallest Argon2id setting: 2 passes over 19 MiB.
    public static let owaspMinimum = argon2id(iterations: 2, memoryKiB: 19 * 1024)
    /// For data that warrants seconds at every open: Argon2id, 4 passes over 1 GiB (libsodium's "sensitive").
    public static let sensitive = argon2id(iterations: 4, memoryKiB: 1024 * 1024)
    /// The OWASP Password Storage Cheat Sheet's scrypt setting: `N = 2^17`, `r = 8`, `p = 1` (128 MiB), the
    /// default before Argon2id.
    public static let owaspScrypt = scrypt(logN: 17, blockSize: 8, parallelism: 1)
    /// scrypt `N = 2^17`, `r = 8`, `p = 1`; the default before Argon2id.
    @available(*, deprecated, renamed: "owaspScrypt", message: "Argon2id (rfc9106) is the default now")
    public static let owasp = owaspScrypt

    /// Argon2id with explicit costs; one lane (libsodium's Argon2 is single-lane).
    ///
    /// The values are checked when the store is opened, not here.
    /// - Parameters:
    ///   - iterations: Passes over the memory, from 1 to 32.
    ///   - memoryKiB: Memory in KiB, from 8 (tests only) to 4 GiB (4,194,304).
    public static func argon2id(iterations: Int, memoryKiB: Int) -> KeyDerivation {
        KeyDerivation(function: .argon2id(iterations: iterations, memoryKiB: memoryKiB))
    }

    /// scrypt with explicit cost parameters.
    ///
    /// The values are checked when the store is opened, not here.
    /// - Parameters:
    ///   - logN: The base-2 logarithm of the cost `N`, from 10 to 22.
    ///   - blockSize: The block size `r`, from 1 to 16.
    ///   - parallelism: The parallelization `p`, from 1 to 16.
    public static func scrypt(logN: UInt8, blockSize: Int, parallelism: Int) -> KeyDerivation {
        KeyDerivation(function: .scrypt(logN: logN, blockSize: blockSize, parallelism: parallelism))
    }

    /// The name a key record gives the function under `algorithm`.
    var algorithmName: String {
        switch function {
        case .argon2id: KeyDerivationRecord.argon2idAlgorithm
        case .scrypt: KeyDerivationRecord.scryptAlgorithm
        }
    }

    /// Checks that the parameters are within the bounds this library accepts.
    ///
    /// The bounds keep a derivation between a fraction of a millisecond and a few gigabytes, so a damaged or
    /// hostile meta record cannot make opening a store allocate without limit. For scrypt they also enforce
    /// RFC 7914's `N < 2^(128 × r / 8)`, which only matters for block sizes below 4.
    ///
    /// - Throws: ``PersistenceError`` with code `.invalidConfiguration` when a parameter is out of range.
    func validate() throws {
        switch function {
        case .argon2id(let iterations, let memoryKiB):
            guard (1...32).contains(iterations) else {
                throw PersistenceError(
                    .invalidConfiguration, "Argon2id iterations must be from 1 to 32, not \(iterations)")
            }
            guard (8...4 << 20).contains(memoryKiB) else {
                throw PersistenceError(
                    .invalidConfiguration, "Argon2id memory must be from 8 KiB to 4 GiB, not \(memoryKiB) KiB")
            }
        case .scrypt(let logN, let blockSize, let parallelism):
            guard (10...22).contains(logN) else {
                throw PersistenceError(
                    .invalidConfiguration,
                    "scrypt logN must be from 10 to 22 (N = 1024 to 4194304), not \(logN)"
                )
            }
            // Above 16, swift-crypto's memory allowance for BoringSSL's scrypt is too small with parallelism 1.
            guard (1...16).contains(blockSize) else {
                throw PersistenceError(
                    .invalidConfiguration, "scrypt block size must be from 1 to 16, not \(blockSize)")
            }
            guard (1...16).contains(parallelism) else {
                throw PersistenceError(
                    .invalidConfiguration, "scrypt parallelism must be from 1 to 16, not \(parallelism)")
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

    // MARK: Codable

    // Stored as `{"function": "argon2id", "iterations": 3, "memoryKiB": 65536}` or
    // `{"function": "scrypt", "logN": 17, "blockSize": 8, "parallelism": 1}`; records written before Argon2id have
    // no `function` and are scrypt.
    private enum CodingKeys: String, CodingKey {
        case function, iterations, memoryKiB, logN, blockSize, parallelism
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let name = try container.decodeIfPresent(String.self, forKey: .function) ?? KeyDerivationRecord.scryptAlgorithm
        switch name {
        case KeyDerivationRecord.argon2idAlgorithm:
            function = .argon2id(
                iterations: try container.decode(Int.self, forKey: .iterations),
                memoryKiB: try container.decode(Int.self, forKey: .memoryKiB))
        case KeyDerivationRecord.scryptAlgorithm:
            function = .scrypt(
                logN: try container.decode(UInt8.self, forKey: .logN),
                blockSize: try container.decode(Int.self, forKey: .blockSize),
                parallelism: try container.decode(Int.self, forKey: .parallelism))
        default:
            throw DecodingError.dataCorruptedError(
                forKey: .function, in: container, debugDescription: "unknown key derivation function")
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        switch function {
        case .argon2id(let iterations, let memoryKiB):
            try container.encode(KeyDerivationRecord.argon2idAlgorithm, forKey: .function)
            try container.encode(iterations, forKey: .iterations)
            try container.encode(memoryKiB, forKey: .memoryKiB)
        case .scrypt(let logN, let blockSize, let parallelism):
            // No `function`: the records of formats 1 and 2 read it as scrypt, byte for byte as they were written.
            try container.encode(logN, forKey: .logN)
            try container.encode(blockSize, forKey: .blockSize)
            try container.encode(parallelism, forKey: .parallelism)
        }
    }
}

extension KeyDerivation: CustomStringConvertible {
    /// The function and its costs, e.g. `Argon2id(t = 3, m = 65536 KiB)`.
    public var description: String {
        switch function {
        case .argon2id(let iterations, let memoryKiB): "Argon2id(t = \(iterations), m = \(memoryKiB) KiB)"
        case .scrypt(let logN, let blockSize, let parallelism):
            "scrypt(N = 2^\(logN), r = \(blockSize), p = \(parallelism))"
        }
    }
}
