internal import CSodium
import Foundation
@_spi(PersistenceBackend) import PersistenceCore

/// Turns record values into stored bytes and index keys — sealed and keyed when the store is encrypted.
///
/// Encrypted: a record is sealed with the store's ``ValueCipher`` and authenticated data
/// `entity name · 0x00 · record key`, so a value copied to another key or entity fails to open; an index key is a
/// keyed hash of the indexed values (``IndexHashing``), so it reveals nothing but equality. Unencrypted: records are
/// stored as encoded, and index keys are SHA-256 digests (fixed size, whatever the value's length).
struct ValueSealer: Sendable {
    let keys: StoreKeys?

    var isEncrypted: Bool { keys != nil }

    /// The stored bytes of a record; `nonce` is asked for only when the store is encrypted.
    func seal(_ values: [Value], entity: EntityStore, key: Data, nonce: () throws -> Nonce) throws -> Data {
        try withSealed(values, entity: entity, key: key, nonce: nonce) { Data($0) }
    }

    /// Calls `body` with the stored bytes of a record, in temporary memory valid only during the call (what a write
    /// hands to LMDB, which copies them).
    func withSealed<R>(
        _ values: [Value], entity: EntityStore, key: Data, nonce: () throws -> Nonce,
        _ body: (UnsafeRawBufferPointer) throws -> R
    ) throws -> R {
        let encoded = RecordCodec.encode(values)
        guard let keys else { return try encoded.withUnsafeBytes(body) }
        let nonce = try nonce()
        return try key.withUnsafeBytes { key in
            try entity.withAuthenticatedData(for: key) { aad in
                try encoded.withUnsafeBytes { try keys.withSealed($0, authenticating: aad, nonce: nonce, body) }
            }
        }
    }

    /// The values of a record from its stored bytes, read in place.
    func open(_ stored: UnsafeRawBufferPointer, entity: EntityStore, key: UnsafeRawBufferPointer) throws -> [Value] {
        guard keys != nil else { return try RecordCodec.decode(stored) }
        return try entity.withAuthenticatedData(for: key) { try open(stored, authenticating: $0) }
    }

    /// ``open(_:entity:key:)`` into `values`, reusing its storage.
    func open(
        _ stored: UnsafeRawBufferPointer, entity: EntityStore, key: UnsafeRawBufferPointer, into values: inout [Value]
    ) throws {
        guard let keys else { return try RecordCodec.decode(stored, into: &values) }
        try entity.withAuthenticatedData(for: key) { aad in
            try keys.open(stored, authenticating: aad) { try RecordCodec.decode($0, into: &values) }
        }
    }

    /// Calls `body` with a record's plain encoded bytes: the stored ones in place, or, when sealed, authenticated and
    /// decrypted into memory valid during the call only.
    func withPlain<R>(
        _ stored: UnsafeRawBufferPointer, entity: EntityStore, key: UnsafeRawBufferPointer,
        _ body: (UnsafeRawBufferPointer) throws -> R
    ) throws -> R {
        guard let keys else { return try body(stored) }
        return try entity.withAuthenticatedData(for: key) { aad in try keys.open(stored, authenticating: aad, body) }
    }

    /// Opens a record's stored bytes once (authenticating and decrypting them when sealed), decodes only the
    /// attributes `probe` marks and, when `condition` holds for them, the whole record into `values`: whether it
    /// did. A scan with a condition decodes in full only the records it keeps.
    func open(
        _ stored: UnsafeRawBufferPointer, entity: EntityStore, key: UnsafeRawBufferPointer,
        probing probe: inout StoredProbe, _ condition: ResolvedCondition, into values: inout [Value]
    ) throws -> Bool {
        func decode(_ plain: UnsafeRawBufferPointer) throws -> Bool {
            try RecordCodec.decode(plain, only: probe.wanted, into: &probe.values)
            // A record of another shape is damage, as a whole decode reports it: never a condition reading past it.
            guard probe.values.count == entity.layout.names.count else {
                throw PersistenceError(.corrupt, "a stored '\(entity.layout.entity.name)' record has the wrong shape")
            }
            guard condition.matches(probe.values) else { return false }
            if probe.decodesMatches { try RecordCodec.decode(plain, into: &values) }
            return true
        }
        guard let keys else { return try decode(stored) }
        return try entity.withAuthenticatedData(for: key) { aad in
            try keys.open(stored, authenticating: aad) { try decode($0) }
        }
    }

    /// The stored bytes of values, authenticating `aad` when sealed (a record's entity and key, an alias's name).
    func seal(_ values: [Value], authenticating aad: UnsafeRawBufferPointer, nonce: () throws -> Nonce) throws -> Data {
        let encoded = RecordCodec.encode(values)
        guard let keys else { return Data(encoded) }
        let nonce = try nonce()
        return try encoded.withUnsafeBytes { try keys.seal($0, authenticating: aad, nonce: nonce) }
    }

    /// The values sealed by ``seal(_:authenticating:nonce:)``.
    func open(_ stored: UnsafeRawBufferPointer, authenticating aad: UnsafeRawBufferPointer) throws -> [Value] {
        guard let keys else { return try RecordCodec.decode(stored) }
        return try keys.open(stored, authenticating: aad) { try RecordCodec.decode($0) }
    }

    func indexKey(_ values: [Value]) -> Data {
        withIndexKey(values) { Data($0) }
    }

    /// Calls `body` with the index key of `values` (in their order), in temporary memory valid only during the call.
    func withIndexKey<C: Collection<Value>, R>(_ values: C, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows
        -> R
    {
        let encoded = RecordCodec.encode(values)
        return try encoded.withUnsafeBytes { encoded in
            if let keys { return try keys.withIndexHash(encoded, body) }
            let digestBytes = Int(crypto_hash_sha256_BYTES)
            return try withUnsafeTemporaryAllocation(byteCount: digestBytes, alignment: 1) { digest in
                // A non-empty allocation always has an address.
                let out = digest.baseAddress.unsafelyUnwrapped.assumingMemoryBound(to: UInt8.self)
                _ = crypto_hash_sha256(
                    out, encoded.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(encoded.count))
                return try body(UnsafeRawBufferPointer(digest))
            }
        }
    }

    /// The key of a record's entry in `index`, or `nil` when an indexed value is `nil`: such records aren't
    /// indexed (`nil`s never collide in unique indexes, and lookups by `nil` scan).
    ///
    /// The one definition of what an index holds for a record: writes, migrations and verification all use it,
    /// so they can't drift.
    func indexKey(of values: [Value], in index: EntityStore.IndexStore) -> Data? {
        withIndexKey(of: values, in: index) { Data($0) }
    }

    /// ``indexKey(of:in:)`` in temporary memory, for `body`; `nil` (and `body` not called) when an indexed value is
    /// `nil`.
    func withIndexKey<R>(
        of values: [Value], in index: EntityStore.IndexStore, _ body: (UnsafeRawBufferPointer) throws -> R
    ) rethrows -> R? {
        let indexed = index.positions.lazy.map { values[$0] }
        guard !indexed.contains(where: \.isNull) else { return nil }
        return try withIndexKey(indexed, body)
    }
}

/// What a scan decodes of each record to test its condition: the attributes the condition reads, marked by position,
/// and an array refilled in place with their values (``ValueSealer/open(_:entity:key:probing:_:into:)``).
struct StoredProbe {
    let wanted: [Bool]
    /// Whether a record that matches is then decoded whole; not for a count, which needs only whether it matches.
    let decodesMatches: Bool
    var values: [Value] = []

    /// The probe of `condition` over records of `count` attributes.
    init(_ condition: ResolvedCondition, attributes count: Int, decodesMatches: Bool = true) {
        var wanted = [Bool](repeating: false, count: count)
        condition.markRead(in: &wanted)
        self.wanted = wanted
        self.decodesMatches = decodesMatches
    }
}

extension ResolvedCondition {
    /// Marks in `wanted` the positions of the attributes the condition reads.
    fileprivate func markRead(in wanted: inout [Bool]) {
        switch self {
        case .comparison(let at, _, _), .oneOf(let at, _), .contains(let at, _), .hasPrefix(let at, _), .isNull(let at),
            .relatedCounts(let at, _):
            if wanted.indices.contains(at) { wanted[at] = true }
        case .and(let conditions), .or(let conditions):
            for condition in conditions { condition.markRead(in: &wanted) }
        case .not(let condition):
            condition.markRead(in: &wanted)
        case .related:
            // Answered before a scan; should one remain, it reads whatever it reads: decode everything.
            wanted = [Bool](repeating: true, count: wanted.count)
        }
    }
}
