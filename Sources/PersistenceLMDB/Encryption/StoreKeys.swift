internal import CSodium
import Crypto
import Foundation
import PersistenceCore

/// The keys of an encrypted store, kept apart so values, index hashes and the key check never share a key:
///
/// - `valueKey` seals values with the store's ``ValueCipher``,
/// - `indexKey` hashes index keys with the store's ``IndexHashing``, so an index reveals equality but not values,
/// - `checkKey` computes a format-1 store's key check, which tells a wrong passphrase apart from a damaged value.
///
/// Where they come from depends on the store's format (see ``StoreKeyRecord``). In format 1, scrypt turns the
/// passphrase into a master key and HKDF-SHA256 splits it into the three keys
/// (``derive(passphrase:salt:parameters:)``). From format 2 on they are random (``random(cipher:indexHashing:)``)
/// and stored only wrapped under a key derived from the passphrase (``WrappedKeyRecord``); a format-1 store's derived
/// keys are wrapped as they are when its passphrase changes, so its values and index keys stay valid.
///
/// **Memory.** The keys, AES-GCM's precomputed key schedule and the index hash's pre-keyed state live in one
/// ``SecureMemory`` region (guard pages, no core dumps, no swap where allowed), set up once per open database so no
/// value pays for key set-up; it is zeroed and freed when the last holder lets go — the database when it closes, or
/// the last transaction under way then. A store moved to a CPU without AES instructions opens through swift-crypto's
/// portable AES-GCM, whose key copy swift-crypto keeps in its own zeroed-on-free memory.
///
/// The keys leave this type only through ``withMaterial(_:)``, to be wrapped, and neither its description nor its
/// mirror shows them.
final class StoreKeys: Sendable {
    let cipher: ValueCipher
    let indexHashing: IndexHashing
    private let memory: SecureMemory
    private let engine: Engine
    private let hashStateOffset: Int

    private enum Engine: Sendable {
        /// libsodium's AES-256-GCM with the precomputed state at ``aesStateOffset``.
        case sodiumAES
        /// swift-crypto's AES-256-GCM, where libsodium has none for this CPU.
        case portableAES(SymmetricKey)
        /// libsodium's XChaCha20-Poly1305 with the value key.
        case xchacha
    }

    // Domain-separation labels: changing one changes every key or hash derived with it, so they carry a version.
    private static let valueKeyInfo = Data("persistence.lmdb.values.v1".utf8)
    private static let indexKeyInfo = Data("persistence.lmdb.index.v1".utf8)
    private static let checkKeyInfo = Data("persistence.lmdb.keycheck.v1".utf8)
    private static let keyCheckMessage = Data("persistence.lmdb.key-check.v1".utf8)

    private static let subkeyByteCount = 32
    /// The byte count of ``withMaterial(_:)``: the value, index and check keys, 32 bytes each, in that order.
    static let materialByteCount = 3 * subkeyByteCount
    /// Where the AES-GCM state starts: after the keys, on a 64-byte boundary.
    private static let aesStateOffset = SecureMemory.alignedByteCount(materialByteCount)

    /// The keys from `material` (value, index and check key, 32 bytes each), with the algorithms of their store.
    ///
    /// - Parameter portableAES: Use swift-crypto's AES-GCM even where libsodium has it (tests of the fallback).
    /// - Throws: ``PersistenceError`` with code `.invalidConfiguration` when `material` is not 96 bytes or the key
    ///   memory cannot be set up.
    init(
        material: UnsafeRawBufferPointer, cipher: ValueCipher, indexHashing: IndexHashing, portableAES: Bool = false
    ) throws {
        guard material.count == Self.materialByteCount, let materialBase = material.baseAddress else {
            throw PersistenceError(.invalidConfiguration, "store keys need \(Self.materialByteCount) bytes")
        }
        try Sodium.ready()
        let sodiumAES = cipher == .aes256gcm && !portableAES && Sodium.hasHardwareAESGCM
        let hashStateOffset =
            Self.aesStateOffset + (sodiumAES ? SecureMemory.alignedByteCount(crypto_aead_aes256gcm_statebytes()) : 0)
        let hashStateBytes =
            switch indexHashing {
            case .hmacSHA256: crypto_auth_hmacsha256_statebytes()
            case .blake2b: crypto_generichash_statebytes()
            }
        let memory = try SecureMemory(byteCount: hashStateOffset + hashStateBytes)
        memory.base.copyMemory(from: materialBase, byteCount: material.count)
        let base = memory.base.assumingMemoryBound(to: UInt8.self)
        let indexKey = base + Self.subkeyByteCount
        switch indexHashing {
        case .hmacSHA256:
            let state = (memory.base + hashStateOffset).assumingMemoryBound(to: crypto_auth_hmacsha256_state.self)
            crypto_auth_hmacsha256_init(state, indexKey, Self.subkeyByteCount)
        case .blake2b:
            persistence_blake2b_init(
                memory.base + hashStateOffset, indexKey, Self.subkeyByteCount, IndexHashing.outputByteCount)
        }
        if sodiumAES {
            let state = (memory.base + Self.aesStateOffset).assumingMemoryBound(to: crypto_aead_aes256gcm_state.self)
            crypto_aead_aes256gcm_beforenm(state, base)
            engine = .sodiumAES
        } else if cipher == .aes256gcm {
            engine = .portableAES(SymmetricKey(data: UnsafeRawBufferPointer(start: base, count: Self.subkeyByteCount)))
        } else {
            engine = .xchacha
        }
        self.cipher = cipher
        self.indexHashing = indexHashing
        self.memory = memory
        self.hashStateOffset = hashStateOffset
    }

    /// What tests observe of the key memory: whether it was wiped when the keys were let go.
    package var memoryProbe: KeyMemoryProbe { memory.probe }

    /// Derives a format-1 store's keys from its passphrase; slow by design (see ``KeyDerivation``).
    ///
    /// The passphrase is normalized to Unicode NFC first (see ``PassphraseKey/normalized(_:)``).
    ///
    /// - Parameters:
    ///   - passphrase: The user's passphrase; must not be empty.
    ///   - salt: The store's salt from its ``KeyDerivationRecord``; at least 16 bytes.
    ///   - parameters: The parameters from the store's ``KeyDerivationRecord``.
    /// - Returns: The store's keys (AES-256-GCM values, HMAC-SHA256 index keys, as format 1 has them).
    /// - Throws: ``PersistenceError`` with code `.invalidConfiguration` when the passphrase is empty, the salt is
    ///   too short, the parameters are out of range, or the derivation fails (for example, for lack of memory).
    static func derive(passphrase: String, salt: Data, parameters: KeyDerivation) throws -> StoreKeys {
        let masterKey = try PassphraseKey.derive(passphrase: passphrase, salt: salt, parameters: parameters)
        return try withUnsafeTemporaryAllocation(byteCount: materialByteCount, alignment: 16) { material in
            defer { SecretBytes.zero(material) }
            for (index, info) in [valueKeyInfo, indexKeyInfo, checkKeyInfo].enumerated() {
                let subkey = HKDF<SHA256>.deriveKey(
                    inputKeyMaterial: masterKey, salt: salt, info: info, outputByteCount: subkeyByteCount)
                subkey.withUnsafeBytes {
                    UnsafeMutableRawBufferPointer(rebasing: material[(index * subkeyByteCount)...]).copyMemory(from: $0)
                }
            }
            return try StoreKeys(
                material: UnsafeRawBufferPointer(material), cipher: .aes256gcm, indexHashing: .hmacSHA256)
        }
    }

    /// New random keys for a new store, from libsodium's secure generator.
    static func random(cipher: ValueCipher, indexHashing: IndexHashing, portableAES: Bool = false) throws
        -> StoreKeys
    {
        try Sodium.ready()
        return try withUnsafeTemporaryAllocation(byteCount: materialByteCount, alignment: 16) { material in
            defer { SecretBytes.zero(material) }
            if let base = material.baseAddress { randombytes_buf(base, material.count) }
            return try StoreKeys(
                material: UnsafeRawBufferPointer(material), cipher: cipher, indexHashing: indexHashing,
                portableAES: portableAES)
        }
    }

    /// Runs `body` with the keys' bytes (value, index, check key), to wrap them; the bytes are valid only inside
    /// `body`, which must not copy them anywhere that outlives it.
    func withMaterial<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try body(UnsafeRawBufferPointer(start: memory.base, count: Self.materialByteCount))
    }

    /// The check key as swift-crypto wants it, for a format-1 key check.
    private var checkKey: SymmetricKey {
        SymmetricKey(
            data: UnsafeRawBufferPointer(start: memory.base + 2 * Self.subkeyByteCount, count: Self.subkeyByteCount))
    }

    /// The value stored as ``KeyDerivationRecord/keyCheck``: HMAC-SHA256 of a fixed label under the check key.
    ///
    /// It is derived through its own HKDF label, so publishing it reveals nothing about the value or index keys.
    func keyCheckValue() -> Data {
        Data(HMAC<SHA256>.authenticationCode(for: Self.keyCheckMessage, using: checkKey))
    }

    /// Whether a stored key check was made with these keys, i.e. whether the passphrase is right.
    ///
    /// The comparison takes the same time wherever the values differ, so it does not leak how close a guess was.
    /// - Parameter keyCheck: The ``KeyDerivationRecord/keyCheck`` read from the store.
    func verifies(keyCheck: Data) -> Bool {
        HMAC<SHA256>.isValidAuthenticationCode(keyCheck, authenticating: Self.keyCheckMessage, using: checkKey)
    }

    /// The byte count of a sealed value of `plaintextCount` bytes.
    func sealedByteCount(_ plaintextCount: Int) -> Int {
        cipher.nonceByteCount + plaintextCount + ValueCipher.tagByteCount
    }

    /// Encrypts and authenticates a value with the store's cipher.
    ///
    /// - Parameters:
    ///   - plaintext: The value's bytes.
    ///   - aad: Bytes that are authenticated but not stored, such as the value's table and key; opening with
    ///     different bytes fails, which is what detects a value moved to another record.
    ///   - nonce: A nonce from the store's ``NonceSequence``; it must never have been used before.
    /// - Returns: `nonce || ciphertext || tag (16 bytes)`.
    /// - Throws: ``PersistenceError`` with code `.invalidValue` when the value cannot be sealed.
    func seal(_ plaintext: UnsafeRawBufferPointer, authenticating aad: UnsafeRawBufferPointer, nonce: Nonce) throws
        -> Data
    {
        try withSealed(plaintext, authenticating: aad, nonce: nonce) { Data($0) }
    }

    /// ``seal(_:authenticating:nonce:)`` into temporary memory (on the stack when small) that `body` reads: a
    /// write hands the bytes to LMDB, which copies them, without a `Data` per record.
    func withSealed<R>(
        _ plaintext: UnsafeRawBufferPointer, authenticating aad: UnsafeRawBufferPointer, nonce: Nonce,
        _ body: (UnsafeRawBufferPointer) throws -> R
    ) throws -> R {
        try withUnsafeTemporaryAllocation(byteCount: sealedByteCount(plaintext.count), alignment: 16) { output in
            guard seal(plaintext, authenticating: aad, nonce: nonce, into: output) == 0 else {
                throw PersistenceError(.invalidValue, "a value could not be encrypted")
            }
            return try body(UnsafeRawBufferPointer(output))
        }
    }

    /// Seals into `output`, exactly ``sealedByteCount(_:)`` bytes; returns 0 on success.
    private func seal(
        _ plaintext: UnsafeRawBufferPointer, authenticating aad: UnsafeRawBufferPointer, nonce: Nonce,
        into output: UnsafeMutableRawBufferPointer
    ) -> Int32 {
        let nonceCount = cipher.nonceByteCount
        guard let outputBase = output.baseAddress, output.count == sealedByteCount(plaintext.count) else { return -1 }
        nonce.write(to: UnsafeMutableRawBufferPointer(start: outputBase, count: nonceCount))
        let out = outputBase.assumingMemoryBound(to: UInt8.self)
        let npub = UnsafePointer(out)
        let message = plaintext.baseAddress?.assumingMemoryBound(to: UInt8.self)
        let ad = aad.baseAddress?.assumingMemoryBound(to: UInt8.self)
        switch engine {
        case .sodiumAES:
            return crypto_aead_aes256gcm_encrypt_afternm(
                out + nonceCount, nil, message, UInt64(plaintext.count), ad, UInt64(aad.count), nil, npub, aesState)
        case .xchacha:
            return crypto_aead_xchacha20poly1305_ietf_encrypt(
                out + nonceCount, nil, message, UInt64(plaintext.count), ad, UInt64(aad.count), nil, npub, valueKey)
        case .portableAES(let key):
            do {
                let nonceBytes = UnsafeRawBufferPointer(start: outputBase, count: nonceCount)
                let box = try AES.GCM.seal(
                    plaintext, using: key, nonce: AES.GCM.Nonce(data: nonceBytes), authenticating: aad)
                box.ciphertext.copyBytes(
                    to: UnsafeMutableRawBufferPointer(start: outputBase + nonceCount, count: plaintext.count))
                box.tag.copyBytes(
                    to: UnsafeMutableRawBufferPointer(
                        start: outputBase + nonceCount + plaintext.count, count: ValueCipher.tagByteCount))
                return 0
            } catch {
                return -1
            }
        }
    }

    /// Authenticates and decrypts a value sealed by ``seal(_:authenticating:nonce:)`` and runs `body` with its bytes,
    /// which are valid only inside `body`.
    ///
    /// Every failure — too short, a changed bit, a different `aad`, another key — is reported the same way, so
    /// the error says nothing about the bytes. Errors `body` throws pass through unchanged.
    ///
    /// - Throws: ``PersistenceError`` with code `.authenticationFailed` when the value does not authenticate.
    func open<R>(
        _ sealed: UnsafeRawBufferPointer, authenticating aad: UnsafeRawBufferPointer,
        _ body: (UnsafeRawBufferPointer) throws -> R
    ) throws -> R {
        let nonceCount = cipher.nonceByteCount
        guard sealed.count >= nonceCount + ValueCipher.tagByteCount, let input = sealed.baseAddress else {
            throw Self.authenticationFailed()
        }
        if case .portableAES(let key) = engine {
            let opened: Data
            do {
                let box = try AES.GCM.SealedBox(combined: Data(sealed))
                opened = try AES.GCM.open(box, using: key, authenticating: aad)
            } catch {
                throw Self.authenticationFailed()
            }
            return try opened.withUnsafeBytes(body)
        }
        let plaintextCount = sealed.count - nonceCount - ValueCipher.tagByteCount
        let npub = input.assumingMemoryBound(to: UInt8.self)
        let ciphertext = npub + nonceCount
        let ad = aad.baseAddress?.assumingMemoryBound(to: UInt8.self)
        return try withUnsafeTemporaryAllocation(byteCount: max(plaintextCount, 1), alignment: 16) { buffer in
            guard let outBase = buffer.baseAddress else { throw Self.authenticationFailed() }
            let out = outBase.assumingMemoryBound(to: UInt8.self)
            let cipherCount = UInt64(sealed.count - nonceCount)
            let result =
                if case .xchacha = engine {
                    crypto_aead_xchacha20poly1305_ietf_decrypt(
                        out, nil, nil, ciphertext, cipherCount, ad, UInt64(aad.count), npub, valueKey)
                } else {
                    crypto_aead_aes256gcm_decrypt_afternm(
                        out, nil, nil, ciphertext, cipherCount, ad, UInt64(aad.count), npub, aesState)
                }
            guard result == 0 else { throw Self.authenticationFailed() }
            return try body(UnsafeRawBufferPointer(start: buffer.baseAddress, count: plaintextCount))
        }
    }

    private static func authenticationFailed() -> PersistenceError {
        PersistenceError(
            .authenticationFailed,
            "a stored value failed authentication: it was altered, moved or written with another key")
    }

    /// The keyed hash of index key bytes under the index key (32 bytes), from the pre-keyed state.
    ///
    /// Indexes store this instead of the value, so equality lookups work while the index reveals nothing but
    /// which records share a value. The full 32 bytes are kept so distinct values practically never collide.
    func indexHash(_ bytes: UnsafeRawBufferPointer) -> Data {
        withIndexHash(bytes) { Data($0) }
    }

    /// Calls `body` with the index hash of `bytes`, in temporary memory valid only during the call.
    func withIndexHash<R>(_ bytes: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        let stateBytes = memory.byteCount - hashStateOffset
        let message = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self)
        return try withUnsafeTemporaryAllocation(byteCount: stateBytes + IndexHashing.outputByteCount, alignment: 64) {
            scratch in
            // A non-empty allocation always has an address.
            let stateBase = scratch.baseAddress.unsafelyUnwrapped
            let output = UnsafeMutableRawBufferPointer(
                start: stateBase + stateBytes, count: IndexHashing.outputByteCount)
            let out = output.baseAddress.unsafelyUnwrapped.assumingMemoryBound(to: UInt8.self)
            stateBase.copyMemory(from: memory.base + hashStateOffset, byteCount: stateBytes)
            switch indexHashing {
            case .hmacSHA256:
                let typed = stateBase.assumingMemoryBound(to: crypto_auth_hmacsha256_state.self)
                crypto_auth_hmacsha256_update(typed, message, UInt64(bytes.count))
                crypto_auth_hmacsha256_final(typed, out)
            case .blake2b:
                persistence_blake2b_update(stateBase, message, UInt64(bytes.count))
                persistence_blake2b_final(stateBase, out, IndexHashing.outputByteCount)
            }
            // The keyed state is as secret as the key; the hash is stored anyway.
            sodium_memzero(stateBase, stateBytes)
            return try body(UnsafeRawBufferPointer(output))
        }
    }

    private var valueKey: UnsafePointer<UInt8> { UnsafePointer(memory.base.assumingMemoryBound(to: UInt8.self)) }

    private var aesState: UnsafePointer<crypto_aead_aes256gcm_state> {
        UnsafePointer((memory.base + Self.aesStateOffset).assumingMemoryBound(to: crypto_aead_aes256gcm_state.self))
    }
}

// Keys must never end up in logs, so printing, debugging and reflection show nothing of them.
extension StoreKeys: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// A placeholder that shows no key material.
    var description: String { "StoreKeys(redacted)" }
    /// A placeholder that shows no key material.
    var debugDescription: String { description }
    /// An empty mirror, so `dump` and debuggers show no key material.
    var customMirror: Mirror { Mirror(self, children: [:]) }
}
