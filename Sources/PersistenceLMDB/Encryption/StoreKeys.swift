import Crypto
import Foundation
import PersistenceCore

/// The keys of one open encrypted store, obtained once from the passphrase when the store opens.
///
/// One key per purpose, so that the value cipher, the index hashes and the key check never share a key:
///
/// - `valueKey` seals values with AES-256-GCM,
/// - `indexKey` hashes index keys with HMAC-SHA256, so an index reveals equality but not values,
/// - `checkKey` computes the key check stored in the meta database, which tells a wrong passphrase apart
///   from a damaged value.
///
/// Where they come from depends on the store's format (see ``StoreKeyRecord``). In format 1, scrypt turns the
/// passphrase into a master key and HKDF-SHA256 splits it into the three keys
/// (``derive(passphrase:salt:parameters:)``). In format 2 they are random (``random()``) and stored only wrapped
/// under a key derived from the passphrase (``WrappedKeyRecord``); a format-1 store's derived keys are wrapped
/// as they are when its passphrase changes, so its values and index keys stay valid.
///
/// The keys leave this type only through ``withMaterial(_:)``, to be wrapped, and neither its description nor its
/// mirror shows them.
final class StoreKeys: Sendable {
    private let valueKey: SymmetricKey
    private let indexKey: SymmetricKey
    private let checkKey: SymmetricKey
    /// HMAC under the index key, already keyed: each index hash starts from a copy of it, which saves hashing
    /// the two key pads for every record written or looked up.
    private let keyedIndexMAC: HMAC<SHA256>

    // Domain-separation labels: changing one changes every key or hash derived with it, so they carry a version.
    private static let valueKeyInfo = Data("persistence.lmdb.values.v1".utf8)
    private static let indexKeyInfo = Data("persistence.lmdb.index.v1".utf8)
    private static let checkKeyInfo = Data("persistence.lmdb.keycheck.v1".utf8)
    private static let keyCheckMessage = Data("persistence.lmdb.key-check.v1".utf8)

    private static let subkeyByteCount = 32

    /// The keys as they are; ``derive(passphrase:salt:parameters:)``, ``random()`` and ``init(material:)`` make them.
    init(valueKey: SymmetricKey, indexKey: SymmetricKey, checkKey: SymmetricKey) {
        self.valueKey = valueKey
        self.indexKey = indexKey
        self.checkKey = checkKey
        keyedIndexMAC = HMAC<SHA256>(key: indexKey)
    }

    /// Derives a format-1 store's keys from its passphrase; slow by design (see ``KeyDerivation``).
    ///
    /// The passphrase is normalized to Unicode NFC first (see ``PassphraseKey/normalized(_:)``).
    ///
    /// - Parameters:
    ///   - passphrase: The user's passphrase; must not be empty.
    ///   - salt: The store's salt from its ``KeyDerivationRecord``; at least 16 bytes.
    ///   - parameters: The scrypt parameters from the store's ``KeyDerivationRecord``.
    /// - Returns: The store's keys.
    /// - Throws: ``PersistenceError`` with code `.invalidConfiguration` when the passphrase is empty, the salt is
    ///   too short, the parameters are out of range, or scrypt fails (for example, for lack of memory).
    static func derive(passphrase: String, salt: Data, parameters: KeyDerivation) throws -> StoreKeys {
        let masterKey = try PassphraseKey.derive(passphrase: passphrase, salt: salt, parameters: parameters)
        func subkey(_ info: Data) -> SymmetricKey {
            HKDF<SHA256>.deriveKey(
                inputKeyMaterial: masterKey,
                salt: salt,
                info: info,
                outputByteCount: subkeyByteCount
            )
        }
        return StoreKeys(
            valueKey: subkey(valueKeyInfo),
            indexKey: subkey(indexKeyInfo),
            checkKey: subkey(checkKeyInfo)
        )
    }

    /// The byte count of ``withMaterial(_:)``: the value, index and check keys, 32 bytes each, in that order.
    static let materialByteCount = 3 * subkeyByteCount

    /// New random keys, for a new store in format 2, from the system's secure generator (through `SymmetricKey`).
    static func random() -> StoreKeys {
        StoreKeys(
            valueKey: SymmetricKey(size: .bits256), indexKey: SymmetricKey(size: .bits256),
            checkKey: SymmetricKey(size: .bits256))
    }

    /// Keys from the bytes ``withMaterial(_:)`` gave, as unwrapped from a format-2 store; `nil` for any other
    /// byte count.
    convenience init?(material: Data) {
        guard material.count == Self.materialByteCount else { return nil }
        let start = material.startIndex
        func key(_ index: Int) -> SymmetricKey {
            let from = start + index * Self.subkeyByteCount
            return SymmetricKey(data: material[from..<from + Self.subkeyByteCount])
        }
        self.init(valueKey: key(0), indexKey: key(1), checkKey: key(2))
    }

    /// Runs `body` with the keys' bytes (value, index, check key), to wrap them; the bytes are valid only inside
    /// `body` and are zeroed afterwards.
    func withMaterial<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: Self.materialByteCount, alignment: 1)
        defer {
            SecretBytes.zero(buffer)
            buffer.deallocate()
        }
        for (index, key) in [valueKey, indexKey, checkKey].enumerated() {
            key.withUnsafeBytes { bytes in
                UnsafeMutableRawBufferPointer(rebasing: buffer[(index * Self.subkeyByteCount)...])
                    .copyMemory(from: bytes)
            }
        }
        return try body(UnsafeRawBufferPointer(buffer))
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

    /// Encrypts and authenticates a value with AES-256-GCM.
    ///
    /// - Parameters:
    ///   - plaintext: The value's bytes.
    ///   - aad: Bytes that are authenticated but not stored, such as the value's table and key; opening with
    ///     different bytes fails, which is what detects a value moved to another record.
    ///   - nonce: A nonce from the store's ``NonceSequence``; it must never have been used before.
    /// - Returns: `nonce (12 bytes) || ciphertext || tag (16 bytes)`.
    /// - Throws: ``PersistenceError`` with code `.invalidValue` when the value cannot be sealed.
    func seal(
        _ plaintext: some DataProtocol, authenticating aad: some DataProtocol, nonce: AES.GCM.Nonce
    ) throws -> Data {
        let combined: Data?
        do {
            combined = try AES.GCM.seal(plaintext, using: valueKey, nonce: nonce, authenticating: aad).combined
        } catch {
            throw PersistenceError(.invalidValue, "a value could not be encrypted")
        }
        // `combined` is nil only for nonces of a non-standard size, which AES.GCM.Nonce cannot have here.
        guard let combined else {
            throw PersistenceError(.invalidValue, "a value could not be encrypted")
        }
        return combined
    }

    /// Authenticates and decrypts a value sealed by ``seal(_:authenticating:nonce:)``.
    ///
    /// Every failure — too short, a changed bit, a different `aad`, another key — is reported the same way, so
    /// the error says nothing about the bytes.
    ///
    /// - Parameters:
    ///   - sealed: `nonce || ciphertext || tag` as stored.
    ///   - aad: The same bytes that were authenticated when the value was sealed.
    /// - Returns: The value's bytes.
    /// - Throws: ``PersistenceError`` with code `.authenticationFailed` when the value does not authenticate.
    func open(_ sealed: Data, authenticating aad: Data) throws -> Data {
        try sealed.withUnsafeBytes { sealed in try aad.withUnsafeBytes { try open(sealed, authenticating: $0) } }
    }

    /// Authenticates and decrypts a value from bytes in place (a record in LMDB's map).
    func open(_ sealed: UnsafeRawBufferPointer, authenticating aad: UnsafeRawBufferPointer) throws -> Data {
        do {
            // One copy into Data: swift-crypto splits a combined Data without copying, where its
            // nonce/ciphertext/tag initializer appends byte by byte from any other DataProtocol.
            let box = try AES.GCM.SealedBox(combined: Data(sealed))
            return try AES.GCM.open(box, using: valueKey, authenticating: aad)
        } catch {
            throw PersistenceError(
                .authenticationFailed,
                "a stored value failed authentication: it was altered, moved or written with another key"
            )
        }
    }

    /// The HMAC-SHA256 of index key bytes under the index key (all 32 bytes).
    ///
    /// Indexes store this instead of the value, so equality lookups work while the index reveals nothing but
    /// which records share a value. The full 32 bytes are kept so distinct values practically never collide.
    func indexHash(_ bytes: some DataProtocol) -> Data {
        var mac = keyedIndexMAC
        mac.update(data: bytes)
        return Data(mac.finalize())
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
