import Crypto
import Foundation
import PersistenceCore
import Testing
import _CryptoExtras

@testable import PersistenceLMDB

/// The encryption layer: key derivation, sealing, nonces and index hashes.
@Suite struct EncryptionTests {
    /// Cheap scrypt parameters so the suite stays fast; stores use ``KeyDerivation/owasp``.
    static let fast = KeyDerivation.scrypt(logN: 10, blockSize: 8, parallelism: 1)
    static let salt = Data((0..<32).map { UInt8($0) })
    static let otherSalt = Data((0..<32).map { UInt8(255 - $0) })
    /// A distinctive 64-byte plaintext, easy to search for in sealed output and error text.
    static let secret = Data("SECRET-PLAINTEXT-0123456789-abcdefghijklmnopqrstuvwxyz-ABCDEFGHI".utf8)
    static let aad = Data("users/42".utf8)

    static func keys(
        _ passphrase: String = "correct horse battery staple",
        salt: Data = salt,
        parameters: KeyDerivation = fast
    ) throws -> StoreKeys {
        try StoreKeys.derive(passphrase: passphrase, salt: salt, parameters: parameters)
    }

    /// Runs `body` and returns the ``PersistenceError`` it throws, recording an issue if it throws none.
    static func persistenceError(_ body: () throws -> Void) -> PersistenceError? {
        do {
            try body()
            Issue.record("expected a PersistenceError, got none")
            return nil
        } catch let error as PersistenceError {
            return error
        } catch {
            Issue.record("expected a PersistenceError, got \(error)")
            return nil
        }
    }

    // MARK: - Key derivation

    @Test func scryptDependencyMatchesRFC7914Vector() throws {
        // RFC 7914 section 12, third vector.
        let key = try KDF.Scrypt.deriveKey(
            from: Data("password".utf8),
            salt: Data("NaCl".utf8),
            outputByteCount: 64,
            rounds: 1024,
            blockSize: 8,
            parallelism: 16
        )
        let expected: [UInt8] = [
            0xfd, 0xba, 0xbe, 0x1c, 0x9d, 0x34, 0x72, 0x00, 0x78, 0x56, 0xe7, 0x19, 0x0d, 0x01, 0xe9, 0xfe,
            0x7c, 0x6a, 0xd7, 0xcb, 0xc8, 0x23, 0x78, 0x30, 0xe7, 0x73, 0x76, 0x63, 0x4b, 0x37, 0x31, 0x62,
            0x2e, 0xaf, 0x30, 0xd9, 0x2e, 0x22, 0xa3, 0x88, 0x6f, 0xf1, 0x09, 0x27, 0x9d, 0x98, 0x30, 0xda,
            0xc7, 0x27, 0xaf, 0xb9, 0x4a, 0x83, 0xee, 0x6d, 0x83, 0x60, 0xcb, 0xdf, 0xa2, 0xcc, 0x06, 0x40,
        ]
        #expect(key.withUnsafeBytes { Array($0) } == expected)
    }

    @Test func sameInputsDeriveSameKeys() throws {
        let first = try Self.keys()
        let second = try Self.keys()
        #expect(first.keyCheckValue() == second.keyCheckValue())
        #expect(first.keyCheckValue().count == 32)
        #expect(second.verifies(keyCheck: first.keyCheckValue()))
        #expect(first.indexHash(Self.secret) == second.indexHash(Self.secret))
        // Keys from the same inputs open each other's values.
        var nonces = NonceSequence(startingAt: 0)
        let sealed = try first.seal(Self.secret, authenticating: Self.aad, nonce: try nonces.next())
        #expect(try second.open(sealed, authenticating: Self.aad) == Self.secret)
    }

    @Test(arguments: [
        ("another passphrase", EncryptionTests.salt, EncryptionTests.fast),
        ("correct horse battery staple", EncryptionTests.otherSalt, EncryptionTests.fast),
        (
            "correct horse battery staple", EncryptionTests.salt,
            KeyDerivation.scrypt(logN: 11, blockSize: 8, parallelism: 1)
        ),
        (
            "correct horse battery staple", EncryptionTests.salt,
            KeyDerivation.scrypt(logN: 10, blockSize: 4, parallelism: 1)
        ),
        (
            "correct horse battery staple", EncryptionTests.salt,
            KeyDerivation.scrypt(logN: 10, blockSize: 8, parallelism: 2)
        ),
    ])
    func differentInputsDeriveDifferentKeys(passphrase: String, salt: Data, parameters: KeyDerivation) throws {
        let reference = try Self.keys()
        let other = try Self.keys(passphrase, salt: salt, parameters: parameters)
        #expect(reference.keyCheckValue() != other.keyCheckValue())
        #expect(!reference.verifies(keyCheck: other.keyCheckValue()))
        #expect(!other.verifies(keyCheck: reference.keyCheckValue()))
        // A value sealed under one key does not open under the other.
        var nonces = NonceSequence(startingAt: 0)
        let sealed = try reference.seal(Self.secret, authenticating: Self.aad, nonce: try nonces.next())
        let error = Self.persistenceError { _ = try other.open(sealed, authenticating: Self.aad) }
        #expect(error?.code == .authenticationFailed)
    }

    @Test func verifiesRejectsDamagedKeyChecks() throws {
        let keys = try Self.keys()
        let check = keys.keyCheckValue()
        #expect(keys.verifies(keyCheck: check))
        #expect(!keys.verifies(keyCheck: Data()))
        #expect(!keys.verifies(keyCheck: check.dropLast()))
        #expect(!keys.verifies(keyCheck: check + [0]))
        var flipped = check
        flipped[flipped.startIndex] ^= 1
        #expect(!keys.verifies(keyCheck: flipped))
    }

    @Test func composedAndDecomposedPassphrasesDeriveSameKeys() throws {
        let composed = "caf\u{E9} cr\u{E8}me"
        let decomposed = "cafe\u{301} cre\u{300}me"
        // Different bytes, same passphrase to a person.
        #expect(Array(composed.utf8) != Array(decomposed.utf8))
        let first = try Self.keys(composed)
        let second = try Self.keys(decomposed)
        #expect(first.keyCheckValue() == second.keyCheckValue())
        #expect(second.verifies(keyCheck: first.keyCheckValue()))
    }

    @Test func emptyPassphraseIsInvalidConfiguration() {
        let error = Self.persistenceError { _ = try Self.keys("") }
        #expect(error?.code == .invalidConfiguration)
    }

    @Test(arguments: [0, 1, 15])
    func shortSaltIsInvalidConfiguration(count: Int) {
        let error = Self.persistenceError { _ = try Self.keys(salt: Data(repeating: 7, count: count)) }
        #expect(error?.code == .invalidConfiguration)
    }

    @Test func outOfRangeParametersAreRejectedBeforeDeriving() {
        let error = Self.persistenceError {
            _ = try Self.keys(parameters: .scrypt(logN: 60, blockSize: 8, parallelism: 1))
        }
        #expect(error?.code == .invalidConfiguration)
    }

    @Test func largestBlockSizeDerives() throws {
        // 16 is the largest block size validate() allows: swift-crypto 4.5.2 gives BoringSSL too little memory for
        // r > 16 with p = 1 (it ignores `maxMemory`).
        let keys = try Self.keys(parameters: .scrypt(logN: 10, blockSize: 16, parallelism: 1))
        #expect(keys.keyCheckValue().count == 32)
        #expect(throws: PersistenceError.self) {
            try KeyDerivation.scrypt(logN: 10, blockSize: 17, parallelism: 1).validate()
        }
    }

    @Test func derivationErrorsDoNotContainThePassphrase() {
        let passphrase = "do-not-print-this-passphrase"
        let errors = [
            Self.persistenceError { _ = try Self.keys(passphrase, salt: Data()) },
            Self.persistenceError {
                _ = try Self.keys(passphrase, parameters: .scrypt(logN: 9, blockSize: 8, parallelism: 1))
            },
        ]
        for error in errors {
            #expect(error?.code == .invalidConfiguration)
            #expect(error.map { !$0.description.contains(passphrase) } == true)
        }
    }

    @Test func keysDescriptionShowsNoKeyMaterial() throws {
        let keys = try Self.keys()
        #expect(String(describing: keys) == "StoreKeys(redacted)")
        #expect(String(reflecting: keys) == "StoreKeys(redacted)")
        var dumped = ""
        dump(keys, to: &dumped)
        #expect(!dumped.contains("valueKey"))
        #expect(!dumped.contains("SymmetricKey"))
    }

    @Test func owaspDerivation() throws {
        // Records how long the default parameters take here; speed goals live in Benchmarks/, not in tests.
        let clock = ContinuousClock()
        var keys: StoreKeys?
        let duration = try clock.measure {
            keys = try StoreKeys.derive(passphrase: "owasp", salt: KeyDerivationRecord.newSalt(), parameters: .owasp)
        }
        print("KeyDerivation.owasp (N = 2^17, r = 8, p = 1) derived in \(duration)")
        #expect(keys?.keyCheckValue().count == 32)
    }

    // MARK: - Sealing

    @Test(arguments: [0, 5, 1_000_000])
    func sealOpenRoundTrip(count: Int) throws {
        let keys = try Self.keys()
        var generator = SystemRandomNumberGenerator()
        let plaintext = Data((0..<count).map { _ in UInt8.random(in: .min ... .max, using: &generator) })
        var nonces = NonceSequence(startingAt: 0)
        let sealed = try keys.seal(plaintext, authenticating: Self.aad, nonce: try nonces.next())
        #expect(sealed.count == 12 + count + 16)
        #expect(try keys.open(sealed, authenticating: Self.aad) == plaintext)
    }

    @Test func sealedOutputStartsWithItsNonce() throws {
        let keys = try Self.keys()
        var nonces = NonceSequence(startingAt: 0)
        let nonce = try nonces.next()
        let sealed = try keys.seal(Self.secret, authenticating: Self.aad, nonce: nonce)
        #expect(sealed.prefix(12) == Data(nonce))
    }

    @Test func everySingleBitFlipFailsAuthentication() throws {
        let keys = try Self.keys()
        var nonces = NonceSequence(startingAt: 0)
        let sealed = try keys.seal(Data("small".utf8), authenticating: Self.aad, nonce: try nonces.next())
        var failures = 0
        for byte in 0..<sealed.count {
            for bit in 0..<8 {
                var damaged = sealed
                damaged[damaged.startIndex + byte] ^= UInt8(1) << bit
                let error = Self.persistenceError { _ = try keys.open(damaged, authenticating: Self.aad) }
                if error?.code == .authenticationFailed { failures += 1 }
            }
        }
        #expect(failures == sealed.count * 8)
    }

    @Test func wrongAdditionalDataFailsAuthentication() throws {
        let keys = try Self.keys()
        var nonces = NonceSequence(startingAt: 0)
        let sealed = try keys.seal(Self.secret, authenticating: Self.aad, nonce: try nonces.next())
        for aad in [Data(), Data("users/43".utf8), Self.aad + [0]] {
            let error = Self.persistenceError { _ = try keys.open(sealed, authenticating: aad) }
            #expect(error?.code == .authenticationFailed)
        }
    }

    @Test func truncatedInputFailsAuthentication() throws {
        let keys = try Self.keys()
        var nonces = NonceSequence(startingAt: 0)
        let sealed = try keys.seal(Self.secret, authenticating: Self.aad, nonce: try nonces.next())
        for count in 0..<28 {
            let error = Self.persistenceError { _ = try keys.open(sealed.prefix(count), authenticating: Self.aad) }
            #expect(error?.code == .authenticationFailed, "\(count) bytes")
        }
        // Dropping the last byte of a real value also fails.
        let error = Self.persistenceError { _ = try keys.open(sealed.dropLast(), authenticating: Self.aad) }
        #expect(error?.code == .authenticationFailed)
    }

    @Test func sealedOutputDoesNotContainThePlaintext() throws {
        #expect(Self.secret.count == 64)
        let keys = try Self.keys()
        var nonces = NonceSequence(startingAt: 0)
        let sealed = try keys.seal(Self.secret, authenticating: Self.aad, nonce: try nonces.next())
        #expect(sealed.range(of: Self.secret) == nil)
        // Not even an 8-byte piece of it survives.
        for start in stride(from: 0, to: 56, by: 8) {
            #expect(sealed.range(of: Self.secret[start..<start + 8]) == nil)
        }
    }

    @Test func errorDescriptionsDoNotContainThePlaintext() throws {
        let keys = try Self.keys()
        var nonces = NonceSequence(startingAt: 0)
        let sealed = try keys.seal(Self.secret, authenticating: Self.aad, nonce: try nonces.next())
        let text = String(decoding: Self.secret, as: UTF8.self)
        var damaged = sealed
        damaged[damaged.endIndex - 1] ^= 0x80
        let errors = [
            Self.persistenceError { _ = try keys.open(damaged, authenticating: Self.aad) },
            Self.persistenceError { _ = try keys.open(sealed, authenticating: Self.secret) },
            Self.persistenceError { _ = try keys.open(Self.secret.prefix(20), authenticating: Self.aad) },
        ]
        for error in errors {
            let description = error.map { String(describing: $0) } ?? ""
            #expect(error?.code == .authenticationFailed)
            #expect(!description.contains(text))
            #expect(!description.contains("SECRET"))
        }
    }

    // MARK: - Nonces

    @Test func hundredThousandNoncesAreDistinct() throws {
        var nonces = NonceSequence(startingAt: 0)
        var seen = Set<Data>()
        for expectedCounter in UInt64(0)..<100_000 {
            let nonce = Data(try nonces.next())
            #expect(nonce.count == 12)
            seen.insert(nonce)
            if expectedCounter.isMultiple(of: 9_999) {
                // The first 8 bytes are the big-endian counter.
                #expect(nonce.prefix(8) == withUnsafeBytes(of: expectedCounter.bigEndian) { Data($0) })
            }
        }
        #expect(seen.count == 100_000)
        #expect(nonces.counter == 100_000)
    }

    @Test func persistedCounterContinuesUniqueness() throws {
        var first = NonceSequence(startingAt: 0)
        var seen = Set<Data>()
        var prefixes = Set<Data>()
        for _ in 0..<1_000 {
            let nonce = Data(try first.next())
            seen.insert(nonce)
            prefixes.insert(nonce.prefix(8))
        }
        #expect(first.counter == 1_000)
        // A reopened store continues from the persisted counter.
        var reopened = NonceSequence(startingAt: first.counter)
        for _ in 0..<1_000 {
            let nonce = Data(try reopened.next())
            #expect(seen.insert(nonce).inserted)
            #expect(prefixes.insert(nonce.prefix(8)).inserted)
        }
        #expect(reopened.counter == 2_000)
    }

    @Test func independentCopiesDifferInTheRandomTail() throws {
        var original = NonceSequence(startingAt: 500)
        var copy = NonceSequence(startingAt: 500)
        var tails = Set<Data>()
        for _ in 0..<64 {
            let a = Data(try original.next())
            let b = Data(try copy.next())
            #expect(a.prefix(8) == b.prefix(8))
            tails.insert(a.suffix(4))
            tails.insert(b.suffix(4))
        }
        // 128 random 32-bit tails: a collision is possible but vanishingly rare (about 2^-19).
        #expect(tails.count >= 127)
    }

    @Test func counterDoesNotWrap() throws {
        var last = NonceSequence(startingAt: UInt64.max - 1)
        let nonce = Data(try last.next())
        #expect(nonce.prefix(8) == Data(repeating: 0xff, count: 7) + [0xfe])
        #expect(last.counter == UInt64.max)
        let error = Self.persistenceError { _ = try last.next() }
        #expect(error?.code == .invalidValue)
        #expect(last.counter == UInt64.max)

        var exhausted = NonceSequence(startingAt: UInt64.max)
        #expect(Self.persistenceError { _ = try exhausted.next() }?.code == .invalidValue)
    }

    // MARK: - Index hashes

    @Test func indexHashIsDeterministicPerKey() throws {
        let keys = try Self.keys()
        let other = try Self.keys("another passphrase")
        let value = Data("alice@example.com".utf8)
        #expect(keys.indexHash(value) == keys.indexHash(value))
        #expect(keys.indexHash(value).count == 32)
        #expect(keys.indexHash(value) != other.indexHash(value))
        #expect(keys.indexHash(value) != keys.indexHash(Data("bob@example.com".utf8)))
        #expect(keys.indexHash(Data()) != keys.indexHash(Data([0])))
        // The index hash is keyed: it is not the plain SHA-256 of the value.
        #expect(keys.indexHash(value) != Data(SHA256.hash(data: value)))
        #expect(keys.indexHash(value).range(of: value) == nil)
    }

    // MARK: - Parameters and records

    @Test(arguments: [
        KeyDerivation.owasp,
        .scrypt(logN: 10, blockSize: 8, parallelism: 1),
        .scrypt(logN: 22, blockSize: 16, parallelism: 16),
        .scrypt(logN: 15, blockSize: 1, parallelism: 1),
        .scrypt(logN: 10, blockSize: 1, parallelism: 16),
    ])
    func validParametersPass(parameters: KeyDerivation) throws {
        try parameters.validate()
    }

    @Test(arguments: [
        KeyDerivation.scrypt(logN: 9, blockSize: 8, parallelism: 1),
        .scrypt(logN: 23, blockSize: 8, parallelism: 1),
        .scrypt(logN: 0, blockSize: 8, parallelism: 1),
        .scrypt(logN: 255, blockSize: 8, parallelism: 1),
        .scrypt(logN: 14, blockSize: 0, parallelism: 1),
        .scrypt(logN: 14, blockSize: 33, parallelism: 1),
        .scrypt(logN: 14, blockSize: -1, parallelism: 1),
        .scrypt(logN: 14, blockSize: 8, parallelism: 0),
        .scrypt(logN: 14, blockSize: 8, parallelism: 17),
        .scrypt(logN: 14, blockSize: 8, parallelism: -4),
        // RFC 7914: N < 2^(16 r), so r = 1 allows at most logN 15.
        .scrypt(logN: 16, blockSize: 1, parallelism: 1),
    ])
    func invalidParametersAreRejected(parameters: KeyDerivation) {
        let error = Self.persistenceError { try parameters.validate() }
        #expect(error?.code == .invalidConfiguration)
    }

    @Test func owaspMatchesTheCheatSheet() {
        #expect(KeyDerivation.owasp == .scrypt(logN: 17, blockSize: 8, parallelism: 1))
        #expect(KeyDerivation.owasp.rounds == 131_072)
    }

    @Test func recordJSONRoundTrip() throws {
        let keys = try Self.keys()
        let record = KeyDerivationRecord(
            algorithm: KeyDerivationRecord.scryptAlgorithm,
            parameters: Self.fast,
            salt: Self.salt,
            keyCheck: keys.keyCheckValue()
        )
        let json = try JSONEncoder().encode(record)
        let decoded = try JSONDecoder().decode(KeyDerivationRecord.self, from: json)
        #expect(decoded == record)
        #expect(decoded.algorithm == "scrypt")
        #expect(keys.verifies(keyCheck: decoded.keyCheck))
        // The record's contents derive the same keys again.
        let again = try StoreKeys.derive(
            passphrase: "correct horse battery staple",
            salt: decoded.salt,
            parameters: decoded.parameters
        )
        #expect(again.verifies(keyCheck: decoded.keyCheck))
    }

    @Test func newSaltsAreRandom32Bytes() {
        let salts = (0..<100).map { _ in KeyDerivationRecord.newSalt() }
        #expect(salts.allSatisfy { $0.count == 32 })
        #expect(Set(salts).count == 100)
    }
}
