import Crypto
import Foundation

/// What the raw LMDB baseline does to a value between encoding and storing it.
protocol ValueCipher {
    init()
    /// Calls `body` with the bytes to store for `plaintext`.
    func sealed<R>(_ plaintext: [UInt8], _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R
    /// Calls `body` with the plaintext of the stored bytes.
    func opened<R>(_ stored: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R
    /// Calls `body` with the index key stored for an indexed value.
    func indexKey<R>(_ value: String, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R
}

/// Values stored as encoded.
struct PlainValues: ValueCipher {
    @inline(__always)
    func sealed<R>(_ plaintext: [UInt8], _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R {
        try plaintext.withUnsafeBytes(body)
    }

    @inline(__always)
    func opened<R>(_ stored: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R {
        try body(stored)
    }

    /// The value's UTF-8 bytes as they are.
    @inline(__always)
    func indexKey<R>(_ value: String, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        var value = value
        return try value.withUTF8 { try body(UnsafeRawBufferPointer($0)) }
    }
}

/// The naive floor of encryption: each value sealed on its own with AES-GCM-256 (a random 12-byte nonce, the
/// 16-byte tag), under a fixed key, and each indexed value stored as its HMAC-SHA256 — no key derivation, no
/// authenticated data, each call of swift-crypto's one-shot API on its own.
struct AESGCMValues: ValueCipher {
    /// Fixed, so a store can be reopened (the benchmark's stores hold generated data, never secrets).
    private let key = SymmetricKey(data: [UInt8](repeating: 0x5A, count: 32))

    @inline(__always)
    func sealed<R>(_ plaintext: [UInt8], _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R {
        guard let combined = try AES.GCM.seal(plaintext, using: key).combined else {
            throw PersonCodec.Malformed()
        }
        return try combined.withUnsafeBytes(body)
    }

    @inline(__always)
    func opened<R>(_ stored: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R {
        try AES.GCM.open(AES.GCM.SealedBox(combined: stored), using: key).withUnsafeBytes(body)
    }

    @inline(__always)
    func indexKey<R>(_ value: String, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try HMAC<SHA256>.authenticationCode(for: Array(value.utf8), using: key).withUnsafeBytes(body)
    }
}
