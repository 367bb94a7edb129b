import Crypto
import Foundation
import PersistenceCore

/// Produces AES-GCM nonces that are never reused under one store's key.
///
/// Each 96-bit nonce is an 8-byte big-endian counter followed by 4 random bytes. The backend persists
/// ``counter`` in the same write transaction as the values it sealed, so the counter alone guarantees that no
/// nonce repeats within the store, however many values are written. The random tail covers what the counter
/// cannot: two copies of the store file that are written independently (a restored backup, a file copied to
/// another device) continue from the same counter, and only the random bytes keep their nonces apart.
///
/// Reusing a nonce under an AES-GCM key reveals the XOR of two plaintexts and lets an attacker forge
/// authentication tags, so uniqueness here is what the whole encryption layer rests on.
struct NonceSequence: Sendable {
    /// The next unused counter value; persist it when the write transaction that used the nonces commits.
    private(set) var counter: UInt64

    /// Starts a sequence at a persisted counter value.
    /// - Parameter counter: The first counter value to use: `0` for a new store, the persisted ``counter``
    ///   otherwise.
    init(startingAt counter: UInt64) {
        self.counter = counter
    }

    /// Returns the next nonce and advances ``counter``.
    ///
    /// - Throws: ``PersistenceError`` with code `.invalidValue` when the counter is exhausted; it never wraps,
    ///   because wrapping would reuse nonces.
    mutating func next() throws -> AES.GCM.Nonce {
        // UInt64.max is never used so that `counter` can always name the next unused value.
        guard counter < UInt64.max else {
            throw PersistenceError(.invalidValue, "the store has used all of its encryption nonces")
        }
        var bytes = Data(capacity: 12)
        withUnsafeBytes(of: counter.bigEndian) { bytes.append(contentsOf: $0) }
        var generator = SystemRandomNumberGenerator()
        let tail = generator.next() as UInt32
        withUnsafeBytes(of: tail) { bytes.append(contentsOf: $0) }
        let nonce: AES.GCM.Nonce
        do {
            nonce = try AES.GCM.Nonce(data: bytes)
        } catch {
            throw PersistenceError(.invalidValue, "an encryption nonce could not be created")
        }
        counter += 1
        return nonce
    }
}
