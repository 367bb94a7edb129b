import PersistenceCore

/// Produces value nonces that are never reused under one store's key.
///
/// Each nonce is an 8-byte big-endian counter followed by random bytes (see ``Nonce``). The backend persists
/// ``counter`` in the same write transaction as the values it sealed, so the counter alone guarantees that no nonce
/// repeats within the store, however many values are written. The random tail covers what the counter cannot: two
/// copies of the store file that are written independently (a restored backup, a file copied to another device)
/// continue from the same counter, and only the random bytes keep their nonces apart. The tail is drawn once per
/// write transaction — a system call per value would cost more than sealing it — which keeps two copies' writes
/// apart just as well: their transactions draw independently.
///
/// Reusing a nonce under an AES-GCM or XChaCha20-Poly1305 key reveals the XOR of two plaintexts and lets an attacker
/// forge authentication tags, so uniqueness here is what the whole encryption layer rests on.
struct NonceSequence: Sendable {
    /// The next unused counter value; persist it when the write transaction that used the nonces commits.
    private(set) var counter: UInt64
    private let tail: (UInt64, UInt64)

    /// Starts a sequence at a persisted counter value.
    /// - Parameter counter: The first counter value to use: `0` for a new store, the persisted ``counter``
    ///   otherwise.
    init(startingAt counter: UInt64) {
        self.counter = counter
        var generator = SystemRandomNumberGenerator()
        tail = (generator.next(), generator.next())
    }

    /// Returns the next nonce and advances ``counter``.
    ///
    /// - Throws: ``PersistenceError`` with code `.invalidValue` when the counter is exhausted; it never wraps,
    ///   because wrapping would reuse nonces.
    mutating func next() throws -> Nonce {
        // UInt64.max is never used so that `counter` can always name the next unused value.
        guard counter < UInt64.max else {
            throw PersistenceError(.invalidValue, "the store has used all of its encryption nonces")
        }
        defer { counter += 1 }
        return Nonce(counter: counter, tail: tail)
    }
}
