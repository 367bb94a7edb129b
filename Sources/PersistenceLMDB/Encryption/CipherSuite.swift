import Foundation

/// The AEAD that seals an encrypted store's values, recorded in its key record (format 3; formats 1 and 2 are
/// AES-256-GCM), so a store opens with the cipher it was written with on any machine.
///
/// A value is stored as `nonce || ciphertext || tag (16 bytes)`.
enum ValueCipher: String, Sendable, Hashable, Codable, CaseIterable {
    /// AES-256-GCM, 12-byte nonces: libsodium's precomputed-key path where the CPU has AES instructions,
    /// swift-crypto's portable one elsewhere (a store moved from such a machine).
    case aes256gcm = "aes-256-gcm"
    /// XChaCha20-Poly1305 (IETF), 24-byte nonces: fast in software everywhere; new stores use it on CPUs without
    /// AES instructions.
    case xchacha20poly1305 = "xchacha20-poly1305"

    var nonceByteCount: Int {
        switch self {
        case .aes256gcm: 12
        case .xchacha20poly1305: 24
        }
    }

    static let tagByteCount = 16

    /// What a new store on this machine uses: AES-256-GCM when libsodium has it in hardware, else XChaCha20-Poly1305.
    static var preferred: ValueCipher { Sodium.hasHardwareAESGCM ? .aes256gcm : .xchacha20poly1305 }
}

/// The keyed hash that turns indexed values into index keys, recorded like ``ValueCipher``.
enum IndexHashing: String, Sendable, Hashable, Codable, CaseIterable {
    /// HMAC-SHA256 (formats 1 and 2).
    case hmacSHA256 = "hmac-sha256"
    /// Keyed BLAKE2b with a 32-byte output (format 3): one compression per short value from a pre-keyed state, about
    /// half HMAC-SHA256's cost measured here (560 ns vs 1,000 ns, 12–40-byte values, libsodium 1.0.18).
    case blake2b = "blake2b-256"

    static let outputByteCount = 32
}

/// A value's nonce: an 8-byte big-endian counter, then bytes drawn at random once per write transaction (4 for
/// AES-256-GCM, 16 for XChaCha20-Poly1305); see ``NonceSequence``.
struct Nonce: Sendable, Hashable {
    var counter: UInt64
    var tail: (UInt64, UInt64)

    /// A nonce that is entirely random, for sealing outside a store (fuzzing seeds).
    static func random() -> Nonce {
        var generator = SystemRandomNumberGenerator()
        return Nonce(counter: generator.next(), tail: (generator.next(), generator.next()))
    }

    /// Writes the nonce's first `destination.count` bytes (12 or 24).
    func write(to destination: UnsafeMutableRawBufferPointer) {
        withUnsafeBytes(of: counter.bigEndian) { counter in
            withUnsafeBytes(of: tail) { tail in
                let fromTail = destination.count - counter.count
                UnsafeMutableRawBufferPointer(rebasing: destination[..<counter.count]).copyMemory(from: counter)
                UnsafeMutableRawBufferPointer(rebasing: destination[counter.count...])
                    .copyMemory(from: UnsafeRawBufferPointer(rebasing: tail[..<fromTail]))
            }
        }
    }

    static func == (lhs: Nonce, rhs: Nonce) -> Bool {
        lhs.counter == rhs.counter && lhs.tail.0 == rhs.tail.0 && lhs.tail.1 == rhs.tail.1
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(counter)
        hasher.combine(tail.0)
        hasher.combine(tail.1)
    }
}
