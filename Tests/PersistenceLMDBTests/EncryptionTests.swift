import Crypto
import Foundation
import PersistenceCore
import Testing
import _CryptoExtras

@testable import PersistenceLMDB

/// The encryption layer: key derivation, sealing, nonces and index hashes.
@Suite struct EncryptionTests {
    /// Cheap scrypt parameters so the suite stays fast (format-1 key derivation, the path tests here exercise);
    /// new stores use ``KeyDerivation/rfc9106``.
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

    /// Fixed key material (value, index and check key), for sealing tests that don't derive.
    static let material = Data((0..<StoreKeys.materialByteCount).map { UInt8(($0 * 37 + 11) & 0xff) })

    /// The ways a store seals its values.
    enum Engine: String, CaseIterable, CustomTestStringConvertible {
        /// libsodium's AES-256-GCM with a precomputed state (swift-crypto where the CPU has no AES instructions).
        case sodiumAES
        /// swift-crypto's AES-256-GCM, what a store written on an AES machine uses where libsodium has no AES.
        case portableAES
        /// libsodium's XChaCha20-Poly1305.
        case xchacha

        var cipher: ValueCipher { self == .xchacha ? .xchacha20poly1305 : .aes256gcm }
        var testDescription: String { rawValue }
    }

    static func keys(_ engine: Engine, material: Data = material, indexHashing: IndexHashing = .blake2b) throws
        -> StoreKeys
    {
        try material.withUnsafeBytes {
            try StoreKeys(
                material: $0, cipher: engine.cipher, indexHashing: indexHashing, portableAES: engine == .portableAES)
        }
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

    @Test func defaultDerivation() throws {
        // Records how long the default parameters take here; speed goals live in Benchmarks/, not in tests.
        let clock = ContinuousClock()
        var key: SymmetricKey?
        let duration = try clock.measure {
            key = try PassphraseKey.derive(
                passphrase: "rfc9106", salt: KeyDerivationRecord.newSalt(), parameters: .rfc9106)
        }
        print("KeyDerivation.rfc9106 (Argon2id t = 3, m = 64 MiB) derived in \(duration)")
        #expect(key?.bitCount == 256)
    }

    @Test func argon2idMatchesTheReferenceImplementation() throws {
        // Expected outputs from the Argon2 reference implementation's command line (Debian's `argon2` package):
        //   echo -n password | argon2 persistence-salt -id -t 2 -k 64 -p 1 -l 32 -r
        //   echo -n password | argon2 persistence-salt -id -t 3 -k 256 -p 1 -l 32 -r
        // Only the salt's first 16 bytes enter Argon2id (libsodium's salt size); the record stores 32.
        let salt = Data("persistence-salt".utf8) + Data(repeating: 0xee, count: 16)
        let vectors: [(KeyDerivation, String)] = [
            (
                .argon2id(iterations: 2, memoryKiB: 64),
                "61b00d83c3475cecf6c4e51c2d42c35263bd9df00a2180eef1494f4474a7da5d"
            ),
            (
                .argon2id(iterations: 3, memoryKiB: 256),
                "172cd92a1ecd68d37ac5740e5025237fb8ce3623a4ea029291216bfc2a4d1ddd"
            ),
        ]
        for (parameters, expected) in vectors {
            let key = try PassphraseKey.derive(passphrase: "password", salt: salt, parameters: parameters)
            #expect(key.withUnsafeBytes { Data($0) } == Self.hex(expected), "\(parameters)")
        }
    }

    @Test func argon2idInputsAllMatter() throws {
        let parameters = KeyDerivation.argon2id(iterations: 1, memoryKiB: 64)
        func derive(_ passphrase: String, _ salt: Data, _ parameters: KeyDerivation) throws -> Data {
            try PassphraseKey.derive(passphrase: passphrase, salt: salt, parameters: parameters)
                .withUnsafeBytes { Data($0) }
        }
        let reference = try derive("pass", Self.salt, parameters)
        #expect(try derive("pass", Self.salt, parameters) == reference)
        #expect(try derive("pasS", Self.salt, parameters) != reference)
        #expect(try derive("pass", Self.otherSalt, parameters) != reference)
        #expect(try derive("pass", Self.salt, .argon2id(iterations: 2, memoryKiB: 64)) != reference)
        #expect(try derive("pass", Self.salt, .argon2id(iterations: 1, memoryKiB: 72)) != reference)
        #expect(try derive("pass", Self.salt, Self.fast) != reference)
        // Composed and decomposed forms of one passphrase derive one key, as with scrypt.
        #expect(try derive("caf\u{E9}", Self.salt, parameters) == derive("cafe\u{301}", Self.salt, parameters))
    }

    // MARK: - Sealing

    @Test(arguments: Engine.allCases, [0, 5, 1_000_000])
    func sealOpenRoundTrip(engine: Engine, count: Int) throws {
        let keys = try Self.keys(engine)
        #expect(keys.cipher == engine.cipher)
        var generator = SystemRandomNumberGenerator()
        let plaintext = Data((0..<count).map { _ in UInt8.random(in: .min ... .max, using: &generator) })
        var nonces = NonceSequence(startingAt: 0)
        let sealed = try keys.seal(plaintext, authenticating: Self.aad, nonce: try nonces.next())
        #expect(sealed.count == engine.cipher.nonceByteCount + count + 16)
        #expect(try keys.open(sealed, authenticating: Self.aad) == plaintext)
    }

    @Test func libsodiumAndPortableAESOpenEachOthersValues() throws {
        // A store written where libsodium has AES in hardware opens on a machine where it hasn't, and back.
        let sodium = try Self.keys(.sodiumAES)
        let portable = try Self.keys(.portableAES)
        var nonces = NonceSequence(startingAt: 7)
        for plaintext in [Data(), Self.secret, Data(repeating: 0xa5, count: 4_097)] {
            let fromSodium = try sodium.seal(plaintext, authenticating: Self.aad, nonce: try nonces.next())
            let fromPortable = try portable.seal(plaintext, authenticating: Self.aad, nonce: try nonces.next())
            #expect(try portable.open(fromSodium, authenticating: Self.aad) == plaintext)
            #expect(try sodium.open(fromPortable, authenticating: Self.aad) == plaintext)
        }
    }

    @Test func aesAndXChaChaDoNotOpenEachOthersValues() throws {
        let aes = try Self.keys(.sodiumAES)
        let xchacha = try Self.keys(.xchacha)
        var nonces = NonceSequence(startingAt: 0)
        let sealedAES = try aes.seal(Self.secret, authenticating: Self.aad, nonce: try nonces.next())
        let sealedXChaCha = try xchacha.seal(Self.secret, authenticating: Self.aad, nonce: try nonces.next())
        #expect(
            Self.persistenceError { _ = try xchacha.open(sealedAES, authenticating: Self.aad) }?.code
                == .authenticationFailed)
        #expect(
            Self.persistenceError { _ = try aes.open(sealedXChaCha, authenticating: Self.aad) }?.code
                == .authenticationFailed)
    }

    @Test func knownAnswerAESGCM() throws {
        // NIST GCM test case 16 (gcmEncryptExtIV256): 256-bit key, 96-bit IV, 60-byte plaintext, 20 bytes of AAD;
        // checks the precomputed-state path against the standard, not only against itself.
        let key = Self.hex("feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308")
        let iv = Self.hex("cafebabefacedbaddecaf888")
        let plaintext = Self.hex(
            "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a721c3c0c95956809532fcf0e2449a6b525"
                + "b16aedf5aa0de657ba637b39")
        let aad = Self.hex("feedfacedeadbeeffeedfacedeadbeefabaddad2")
        let expected = Self.hex(
            "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa8cb08e48590dbb3da7b08b1056828838"
                + "c5f61e6393ba7a0abcc9f662" + "76fc6ece0f4e1768cddf8853bb2d551b")
        // The IV as a Nonce: counter = first 8 bytes big-endian, tail = the next 4 (little-endian in memory).
        let counter = iv.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        let tail = iv.suffix(4).withUnsafeBytes { UInt64($0.loadUnaligned(as: UInt32.self)) }
        let nonce = Nonce(counter: counter, tail: (tail, 0))
        #expect(Data(nonce) == iv)
        for engine in [Engine.sodiumAES, .portableAES] {
            let keys = try Self.keys(engine, material: key + Data(count: 64))
            let sealed = try keys.seal(plaintext, authenticating: aad, nonce: nonce)
            #expect(sealed == iv + expected, "\(engine)")
            #expect(try keys.open(sealed, authenticating: aad) == plaintext)
        }
    }

    static func hex(_ string: String) -> Data {
        var bytes = Data()
        var index = string.startIndex
        while index < string.endIndex {
            let next = string.index(index, offsetBy: 2)
            bytes.append(UInt8(string[index..<next], radix: 16) ?? 0)
            index = next
        }
        return bytes
    }

    @Test func keyMemoryIsWipedWhenTheKeysAreLetGo() throws {
        for engine in Engine.allCases {
            var keys: StoreKeys? = try Self.keys(engine)
            let probe = try #require(keys?.memoryProbe)
            #expect(!probe.isWiped)
            _ = keys?.indexHash(Self.secret)
            keys = nil
            #expect(probe.isWiped, "\(engine)")
            #expect(probe.wasZeroWhenFreed, "\(engine)")
        }
    }

    @Test(arguments: Engine.allCases)
    func sealedOutputStartsWithItsNonce(engine: Engine) throws {
        let keys = try Self.keys(engine)
        var nonces = NonceSequence(startingAt: 0)
        let nonce = try nonces.next()
        let sealed = try keys.seal(Self.secret, authenticating: Self.aad, nonce: nonce)
        #expect(sealed.prefix(engine.cipher.nonceByteCount) == Data(nonce, cipher: engine.cipher))
        #expect(sealed.count == engine.cipher.nonceByteCount + Self.secret.count + 16)
    }

    @Test(arguments: Engine.allCases)
    func everySingleBitFlipFailsAuthentication(engine: Engine) throws {
        let keys = try Self.keys(engine)
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

    @Test(arguments: Engine.allCases)
    func wrongAdditionalDataFailsAuthentication(engine: Engine) throws {
        let keys = try Self.keys(engine)
        var nonces = NonceSequence(startingAt: 0)
        let sealed = try keys.seal(Self.secret, authenticating: Self.aad, nonce: try nonces.next())
        for aad in [Data(), Data("users/43".utf8), Self.aad + [0]] {
            let error = Self.persistenceError { _ = try keys.open(sealed, authenticating: aad) }
            #expect(error?.code == .authenticationFailed)
        }
    }

    @Test(arguments: Engine.allCases)
    func truncatedInputFailsAuthentication(engine: Engine) throws {
        let keys = try Self.keys(engine)
        var nonces = NonceSequence(startingAt: 0)
        let sealed = try keys.seal(Self.secret, authenticating: Self.aad, nonce: try nonces.next())
        for count in 0..<(engine.cipher.nonceByteCount + 16) {
            let error = Self.persistenceError { _ = try keys.open(sealed.prefix(count), authenticating: Self.aad) }
            #expect(error?.code == .authenticationFailed, "\(count) bytes")
        }
        // Dropping the last byte of a real value also fails.
        let error = Self.persistenceError { _ = try keys.open(sealed.dropLast(), authenticating: Self.aad) }
        #expect(error?.code == .authenticationFailed)
    }

    @Test(arguments: Engine.allCases)
    func sealedOutputDoesNotContainThePlaintext(engine: Engine) throws {
        #expect(Self.secret.count == 64)
        let keys = try Self.keys(engine)
        var nonces = NonceSequence(startingAt: 0)
        let sealed = try keys.seal(Self.secret, authenticating: Self.aad, nonce: try nonces.next())
        #expect(sealed.range(of: Self.secret) == nil)
        // Not even an 8-byte piece of it survives.
        for start in stride(from: 0, to: 56, by: 8) {
            #expect(sealed.range(of: Self.secret[start..<start + 8]) == nil)
        }
    }

    @Test(arguments: Engine.allCases)
    func errorDescriptionsDoNotContainThePlaintext(engine: Engine) throws {
        let keys = try Self.keys(engine)
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
        // Two copies of a store continue from the same counter; each write draws its own tail, so their nonces
        // still differ. Within one write the tail is fixed and the counter keeps nonces apart.
        var tails = Set<Data>()
        for _ in 0..<64 {
            var original = NonceSequence(startingAt: 500)
            var copy = NonceSequence(startingAt: 500)
            let a = try original.next()
            let b = try copy.next()
            #expect(a.counter == b.counter)
            for cipher in ValueCipher.allCases {
                #expect(Data(a, cipher: cipher) != Data(b, cipher: cipher))
            }
            tails.insert(Data(a).suffix(4))
            tails.insert(Data(b).suffix(4))
            let next = try original.next()
            #expect(next.counter == a.counter + 1)
            #expect(Data(next, cipher: .xchacha20poly1305).suffix(16) == Data(a, cipher: .xchacha20poly1305).suffix(16))
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

    @Test(arguments: IndexHashing.allCases)
    func indexHashMatchesItsStandard(hashing: IndexHashing) throws {
        let keys = try Self.keys(.sodiumAES, indexHashing: hashing)
        let indexKey = Self.material[32..<64]
        let messages = [Data(), Data("t7".utf8), Self.secret, Data(repeating: 0x5c, count: 1_000)]
        // Keyed BLAKE2b-256 (RFC 7693) of each message under the index key, from Python's
        // `hashlib.blake2b(message, key=material[32:64], digest_size=32)`.
        let blake2b = [
            "a41f7ce142791ebe4cb1c0663a923bd024fb7f85e8cf7c106296c8036da41f54",
            "097be8e8a4c80fa634b3fc37873f718e3a444d281393f7c5ca9a3e159d5b3800",
            "a31f6be69814782563d4d39f1bb5cef4d5dfb50f50cdedaf361e756d210028ff",
            "4acc9b27797d2117fa5b61a49bc03db8ec260e97229ee214cbf7a666163ea4f8",
        ]
        for (message, blake2bHex) in zip(messages, blake2b) {
            let expected: Data =
                switch hashing {
                case .hmacSHA256:
                    Data(HMAC<SHA256>.authenticationCode(for: message, using: SymmetricKey(data: indexKey)))
                case .blake2b: Self.hex(blake2bHex)
                }
            #expect(keys.indexHash(message) == expected)
            // Hashing again from the pre-keyed state gives the same bytes: the state is copied, never consumed.
            #expect(keys.indexHash(message) == expected)
        }
    }

    // MARK: - Parameters and records

    @Test(arguments: [
        KeyDerivation.rfc9106, .owaspMinimum, .sensitive, .owaspScrypt,
        .argon2id(iterations: 1, memoryKiB: 8),
        .argon2id(iterations: 32, memoryKiB: 4 << 20),
        .scrypt(logN: 10, blockSize: 8, parallelism: 1),
        .scrypt(logN: 22, blockSize: 16, parallelism: 16),
        .scrypt(logN: 15, blockSize: 1, parallelism: 1),
        .scrypt(logN: 10, blockSize: 1, parallelism: 16),
    ])
    func validParametersPass(parameters: KeyDerivation) throws {
        try parameters.validate()
    }

    @Test(arguments: [
        KeyDerivation.argon2id(iterations: 0, memoryKiB: 65_536),
        .argon2id(iterations: 33, memoryKiB: 65_536),
        .argon2id(iterations: -1, memoryKiB: 65_536),
        .argon2id(iterations: 3, memoryKiB: 7),
        .argon2id(iterations: 3, memoryKiB: (4 << 20) + 1),
        .argon2id(iterations: 3, memoryKiB: -65_536),
        .scrypt(logN: 9, blockSize: 8, parallelism: 1),
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

    @Test func presetsMatchTheirSources() {
        // RFC 9106 section 4, second recommended option; OWASP Password Storage Cheat Sheet's minimums.
        #expect(KeyDerivation.rfc9106 == .argon2id(iterations: 3, memoryKiB: 64 * 1024))
        #expect(KeyDerivation.owaspMinimum == .argon2id(iterations: 2, memoryKiB: 19 * 1024))
        #expect(KeyDerivation.sensitive == .argon2id(iterations: 4, memoryKiB: 1024 * 1024))
        #expect(KeyDerivation.owaspScrypt == .scrypt(logN: 17, blockSize: 8, parallelism: 1))
        #expect(LMDBBuilder(databaseName: "Presets", passphrase: "p", entities: []).keyDerivation == .rfc9106)
        #expect(KeyDerivation.rfc9106.description == "Argon2id(t = 3, m = 65536 KiB)")
        #expect(KeyDerivation.owaspScrypt.description == "scrypt(N = 2^17, r = 8, p = 1)")
    }

    @Test func parametersEncodeAsStoredAndDecodeOldRecords() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let argon = try encoder.encode(KeyDerivation.argon2id(iterations: 3, memoryKiB: 65_536))
        #expect(String(decoding: argon, as: UTF8.self) == #"{"function":"argon2id","iterations":3,"memoryKiB":65536}"#)
        // scrypt encodes exactly as formats 1 and 2 wrote it, without a `function`.
        let scrypt = try encoder.encode(KeyDerivation.owaspScrypt)
        #expect(String(decoding: scrypt, as: UTF8.self) == #"{"blockSize":8,"logN":17,"parallelism":1}"#)
        let decoder = JSONDecoder()
        #expect(try decoder.decode(KeyDerivation.self, from: argon) == .rfc9106)
        #expect(try decoder.decode(KeyDerivation.self, from: scrypt) == .owaspScrypt)
        let named = Data(#"{"function":"scrypt","logN":10,"blockSize":8,"parallelism":1}"#.utf8)
        #expect(try decoder.decode(KeyDerivation.self, from: named) == Self.fast)
        for damaged in [
            #"{"function":"bcrypt","cost":12}"#, #"{"function":"argon2id","iterations":3}"#, #"{"logN":10}"#, "{}",
        ] {
            #expect(throws: DecodingError.self) { try decoder.decode(KeyDerivation.self, from: Data(damaged.utf8)) }
        }
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
