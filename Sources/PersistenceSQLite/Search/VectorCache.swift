import Foundation
@_spi(PersistenceBackend) import PersistenceCore
import Synchronization

/// The stored vectors of a vector attribute, copied into memory by one nearest-neighbours query that read them all
/// and handed in place to the next ones for as long as a connection still sees the same data.
///
/// SQLite hands each row's blob through its b-tree and page cache: ranking 100,000 vectors costs about as much in
/// row stepping and page reads as in distances. The copy is kept in step with the store without trusting anything
/// of our own: an entry is valid for a connection only at the ``Stamp`` that connection had when it read or
/// checked the entry — SQLite's `PRAGMA data_version` (it changes when any other connection commits, other
/// processes too) and the connection's own count of changed rows (`sqlite3_total_changes64`, which counts its
/// writes, committed or not). An entry is built only in a read transaction (committed data), from an unconditioned
/// scan that met no value of the wrong size; another connection reuses it after its own scan found the same keys and
/// bytes. The entries together hold at most ``limit`` bytes; past that, older entries go, and an attribute whose
/// vectors alone exceed it is never copied.
final class VectorCache: Sendable {
    /// What a connection saw when it read or checked an entry.
    struct Stamp: Equatable {
        /// ``Connection/serial``: the other two are the connection's own counts.
        let connection: UInt64
        let dataVersion: Int64
        let changes: Int64
    }

    /// An attribute's vectors: `keys[i]`'s vector at bytes `i × stride ..< (i + 1) × stride`, in memory of its own
    /// that stays put while the entry lives (a scan's storage holds the entry so that its context ranks in place).
    final class Entry: @unchecked Sendable {  // immutable once built
        let keys: [Value]
        let stride: Int
        private let bytes: UnsafeMutableRawBufferPointer

        init(keys: [Value], bytes: [UInt8], stride: Int) {
            self.keys = keys
            self.stride = stride
            self.bytes = UnsafeMutableRawBufferPointer.allocate(byteCount: bytes.count, alignment: 16)
            self.bytes.copyMemory(from: UnsafeRawBufferPointer(start: bytes, count: bytes.count))
        }

        deinit { bytes.deallocate() }

        var size: Int { bytes.count + keys.count * MemoryLayout<Value>.stride }

        /// Calls `visit` with each key and its vector's bytes, in the order they were read: bytes valid while the
        /// entry lives.
        func forEach(_ visit: (Value, UnsafeRawBufferPointer, Bool) throws -> Void) rethrows {
            let all = UnsafeRawBufferPointer(bytes)
            for index in keys.indices {
                try visit(
                    keys[index], UnsafeRawBufferPointer(rebasing: all[index * stride..<(index + 1) * stride]), true)
            }
        }

        func holdsTheSame(as other: Entry) -> Bool {
            guard stride == other.stride, bytes.count == other.bytes.count, keys == other.keys else { return false }
            guard let mine = bytes.baseAddress, let theirs = other.bytes.baseAddress else { return true }
            return memcmp(mine, theirs, bytes.count) == 0
        }
    }

    private struct Slot: Hashable {
        let entity: Int
        let attribute: Int
    }

    private struct Held {
        var entry: Entry
        /// The stamp each connection last had when the entry was valid for it, by ``Connection/serial``.
        var stamps: [UInt64: Stamp]
        var lastUse: UInt64
    }

    private struct State {
        var held: [Slot: Held] = [:]
        var size = 0
        var uses: UInt64 = 0
    }

    /// The most bytes the entries hold together (keys and vectors).
    let limit: Int
    private let state = Mutex(State())

    init(limit: Int) { self.limit = limit }

    /// The vectors of the attribute at `attribute` of the entity at `entity`, when a connection at `stamp` may read
    /// them here.
    func entry(entity: Int, attribute: Int, at stamp: Stamp) -> Entry? {
        state.withLock { state in
            let slot = Slot(entity: entity, attribute: attribute)
            guard var held = state.held[slot], held.stamps[stamp.connection] == stamp else { return nil }
            state.uses &+= 1
            held.lastUse = state.uses
            state.held[slot] = held
            return held.entry
        }
    }

    /// Keeps `entry`, read by a connection at `stamp` in a read transaction: it joins the entry there when that holds
    /// the same vectors (valid for both connections), or takes its place (valid for this one only).
    func keep(_ entry: Entry, entity: Int, attribute: Int, at stamp: Stamp) {
        let size = entry.size
        guard size <= limit else { return }
        let slot = Slot(entity: entity, attribute: attribute)
        // Compared outside the lock (up to the limit's bytes): a scan on another connection never waits for it.
        let same = state.withLock { $0.held[slot]?.entry }.flatMap { $0.holdsTheSame(as: entry) ? $0 : nil }
        state.withLock { state in
            state.uses &+= 1
            if let same, var held = state.held[slot], held.entry === same {
                held.stamps[stamp.connection] = stamp
                held.lastUse = state.uses
                state.held[slot] = held
                return
            }
            if let replaced = state.held.removeValue(forKey: slot) { state.size -= replaced.entry.size }
            while state.size + size > limit,
                let oldest = state.held.min(by: { $0.value.lastUse < $1.value.lastUse })
            {
                state.held.removeValue(forKey: oldest.key)
                state.size -= oldest.value.entry.size
            }
            state.held[slot] = Held(entry: entry, stamps: [stamp.connection: stamp], lastUse: state.uses)
            state.size += size
        }
    }

    /// Drops every entry (the database closes).
    func removeAll() {
        state.withLock { $0 = State() }
    }
}

/// An entry read while a scan hands out its rows: abandoned when a value is of another size than the attribute's
/// vectors (the context reports it) or the entry would pass the cache's limit.
struct VectorCacheBuilder {
    private var keys: [Value] = []
    private var bytes: [UInt8] = []
    private let stride: Int
    private let limit: Int
    private(set) var isAbandoned = false

    init(stride: Int, limit: Int) {
        self.stride = stride
        self.limit = limit
    }

    mutating func add(key: Value, bytes vector: UnsafeRawBufferPointer) {
        guard !isAbandoned else { return }
        guard vector.count == stride,
            bytes.count + stride + (keys.count + 1) * MemoryLayout<Value>.stride <= limit
        else {
            isAbandoned = true
            keys = []
            bytes = []
            return
        }
        keys.append(key)
        bytes.append(contentsOf: vector)
    }

    /// The entry, or `nil` when abandoned.
    func build() -> VectorCache.Entry? {
        isAbandoned ? nil : VectorCache.Entry(keys: keys, bytes: bytes, stride: stride)
    }
}
