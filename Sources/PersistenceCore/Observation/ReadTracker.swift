import Foundation
import Synchronization

/// What an observed read touched: the entity types it looked up, the aliases it read, and whether it ran raw SQL —
/// so an observation tracks what its read depends on without being told (``ValueObservation``).
///
/// Every typed read of every backend finds its entity's storage through ``EntityPositions/position(of:)``, a
/// condition on related records is resolved in the core, and aliases are read through the core's
/// ``DatabaseContext/alias(_:as:)``: those places report here, so no backend has to. Raw SQL can't be named table
/// by table; backends report that it ran (``noteRawStatement()``).
///
/// A tracker is the calling thread's for the length of one read closure (``track(_:)``). While none is installed on
/// any thread, a report costs one relaxed atomic load. Not thread-safe: one read, one thread.
package final class ReadTracker {
    private var types: [ObjectIdentifier: any Entity.Type] = [:]
    private var names: Set<String> = []
    private var aliases: Set<String> = []
    private var ranRawStatements = false

    private init() {}

    /// What the read touched so far.
    var footprint: ReadFootprint {
        var entities = names
        for type in types.values { entities.insert(type.entityName) }
        return ReadFootprint(entities: entities, aliases: aliases, ranRawStatements: ranRawStatements)
    }

    /// Runs `body` with a fresh tracker installed on the calling thread; returns its result and what it touched.
    package static func track<R>(_ body: () throws -> R) rethrows -> (value: R, footprint: ReadFootprint) {
        let tracker = ReadTracker()
        let previous = pthread_getspecific(currentTrackerKey)
        pthread_setspecific(currentTrackerKey, Unmanaged.passUnretained(tracker).toOpaque())
        activeTrackers.add(1, ordering: .relaxed)
        defer {
            activeTrackers.subtract(1, ordering: .relaxed)
            pthread_setspecific(currentTrackerKey, previous)
        }
        let value = try withExtendedLifetime(tracker) { try body() }
        return (value, tracker.footprint)
    }

    /// The tracker of the read running on the calling thread, if any.
    ///
    /// An ambient slot, not a parameter, on purpose: an observation tracks whatever the app's own read closure
    /// reads, through the ordinary context calls, which have no parameter to carry it (as SwiftUI's observation
    /// tracking works). Only reads inside `track(_:)` on this thread see one.
    private static var current: ReadTracker? {
        // Only the installing thread's own count matters here, and it sees its own increment: relaxed is enough.
        guard activeTrackers.load(ordering: .relaxed) > 0, let pointer = pthread_getspecific(currentTrackerKey) else {
            return nil
        }
        return Unmanaged<ReadTracker>.fromOpaque(pointer).takeUnretainedValue()
    }

    /// Notes that the read looked up the storage of `type`.
    @inline(__always)
    package static func noteEntity(_ type: any Entity.Type) {
        guard let tracker = current else { return }
        let id = ObjectIdentifier(type)
        if tracker.types[id] == nil { tracker.types[id] = type }
    }

    /// Notes that the read reached the records of the entity named `name` (a condition on related records).
    package static func noteEntity(named name: String) { current?.names.insert(name) }

    /// Notes that the read read the alias named `name`.
    package static func noteAlias(_ name: String) { current?.aliases.insert(name) }

    /// Notes that the read ran raw SQL, whose tables can't be named: only what the observation declares covers it.
    package static func noteRawStatement() { current?.ranRawStatements = true }
}

/// What one read touched, by entity name and alias name (see ``ReadTracker``).
package struct ReadFootprint: Sendable, Equatable {
    package var entities: Set<String> = []
    package var aliases: Set<String> = []
    package var ranRawStatements = false

    package init(entities: Set<String> = [], aliases: Set<String> = [], ranRawStatements: Bool = false) {
        self.entities = entities
        self.aliases = aliases
        self.ranRawStatements = ranRawStatements
    }

    /// Whether it names no entity and no alias.
    var isEmpty: Bool { entities.isEmpty && aliases.isEmpty }

    /// Both footprints' entities and aliases.
    func union(_ other: ReadFootprint) -> ReadFootprint {
        ReadFootprint(
            entities: entities.union(other.entities), aliases: aliases.union(other.aliases),
            ranRawStatements: ranRawStatements || other.ranRawStatements)
    }

    /// Whether every entity and alias of this one is in `other`.
    func isCovered(by other: ReadFootprint) -> Bool {
        entities.isSubset(of: other.entities) && aliases.isSubset(of: other.aliases)
    }
}

/// How many trackers are installed, on any thread: while none is, reporting costs one load.
private let activeTrackers = Atomic<Int>(0)

/// The thread-local slot of ``ReadTracker``'s current tracker.
private let currentTrackerKey: pthread_key_t = {
    var key = pthread_key_t()
    pthread_key_create(&key, nil)
    return key
}()
