internal import CSodium
import Foundation
import PersistenceCore
import Synchronization

/// libsodium, initialized once per process before its first use.
///
/// `sodium_init` picks the fastest implementation of each primitive for this CPU and seeds the random generator;
/// it is safe to call from several threads and more than once, but every other call must come after one.
enum Sodium {
    /// Whether `sodium_init` succeeded; it fails only when the system's random source cannot be opened.
    private static let initialized: Bool = sodium_init() >= 0

    /// Initializes libsodium if it is not yet.
    ///
    /// - Throws: ``PersistenceError`` with code `.invalidConfiguration` when libsodium cannot start (no secure
    ///   random source): nothing can be sealed then.
    static func ready() throws {
        guard initialized else {
            throw PersistenceError(.invalidConfiguration, "libsodium could not initialize (no secure random source)")
        }
    }

    /// Whether libsodium has a hardware AES-256-GCM on this CPU (AES-NI and PCLMUL on x86-64; ARM's crypto
    /// extensions from libsodium 1.0.19): its precomputed-key path is then the fastest AEAD.
    static var hasHardwareAESGCM: Bool {
        (try? ready()) != nil && crypto_aead_aes256gcm_is_available() == 1
    }

    /// `count` bytes from the system's secure random source.
    static func randomBytes(_ count: Int) throws -> [UInt8] {
        try ready()
        var bytes = [UInt8](repeating: 0, count: count)
        bytes.withUnsafeMutableBytes { buffer in
            if let base = buffer.baseAddress { randombytes_buf(base, buffer.count) }
        }
        return bytes
    }
}

/// What happened to one region of key memory, for tests: whether it was wiped, and whether every byte read zero
/// just before it was returned to the allocator (checked with `sodium_is_zero`, never by reading freed memory).
package final class KeyMemoryProbe: Sendable {
    private let state = Mutex<(wiped: Bool, zeroed: Bool)>((false, false))

    /// Whether the region has been wiped and freed.
    package var isWiped: Bool { state.withLock { $0.wiped } }
    /// Whether the region read all zeros after the wipe, just before it was freed.
    package var wasZeroWhenFreed: Bool { state.withLock { $0.zeroed } }

    fileprivate func record(zeroed: Bool) {
        state.withLock { $0 = (true, zeroed) }
    }
}

/// Key material in memory from `sodium_malloc`: guard pages on both sides, a canary, excluded from core dumps
/// (`MADV_DONTDUMP`) and locked against swapping where the system allows (`mlock`); zeroed when freed.
///
/// Freed in `deinit`, so whoever holds the last reference decides when: ``StoreKeys`` is held by the database and by
/// the transactions under way, and the database lets go of it when it closes.
final class SecureMemory: @unchecked Sendable {
    /// The region's first byte; aligned to 64 bytes (``alignedByteCount(_:)`` rounds every size to a multiple of 64,
    /// and `sodium_malloc` places the region's end at a page boundary).
    let base: UnsafeMutableRawPointer
    let byteCount: Int
    package let probe = KeyMemoryProbe()

    /// Allocates `byteCount` bytes (rounded up to a multiple of 64), zero-filled.
    ///
    /// - Throws: ``PersistenceError`` with code `.invalidConfiguration` when libsodium cannot start or the memory
    ///   cannot be allocated.
    init(byteCount: Int) throws {
        try Sodium.ready()
        let rounded = Self.alignedByteCount(byteCount)
        guard let base = sodium_malloc(rounded) else {
            throw PersistenceError(.invalidConfiguration, "could not allocate \(rounded) bytes of protected key memory")
        }
        sodium_memzero(base, rounded)
        self.base = base
        self.byteCount = rounded
    }

    /// `count` rounded up to a multiple of 64 bytes, the strictest alignment libsodium's states need.
    static func alignedByteCount(_ count: Int) -> Int { (count + 63) & ~63 }

    deinit {
        sodium_memzero(base, byteCount)
        probe.record(zeroed: sodium_is_zero(base.assumingMemoryBound(to: UInt8.self), byteCount) == 1)
        sodium_free(base)
    }
}
