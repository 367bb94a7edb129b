import Synchronization

/// One started observation's link to its database: its registration with the hub, its read, and what it tracks —
/// what it was told to, and what its last read touched.
///
/// Made per start of a ``ValueObservation`` (``ObservedValues`` and ``ObservationToken`` each hold one), so starts
/// are independent. What happens to the values read — duplicates, differences — is the ``ObservationCursor``'s.
final class ObservationSession<Value: Sendable>: Sendable {
    private let hub: ObservationHub
    private let subscriber: ObservationSubscriber
    /// What the observation tracks whatever its read touches.
    private let declared: ReadFootprint
    /// What the hub registration covers now: `declared` and what the last read touched.
    private let tracked: Mutex<ReadFootprint>
    private let readHere: @Sendable () throws -> (value: Value, footprint: ReadFootprint)
    private let readElsewhere: @Sendable () async throws -> (value: Value, footprint: ReadFootprint)

    /// Registers with `db`'s hub for what `observation` declares: a commit from now on is never missed.
    init<D: Database>(_ observation: ValueObservation<Value>, in db: D) {
        hub = db.observationHub
        declared = observation.declared
        tracked = Mutex(observation.declared)
        subscriber = ObservationSubscriber(
            hub: hub, entities: declared.entities, aliases: declared.aliases, buffersChanges: false)
        let read = observation.read
        readHere = { try db.read { context in try ReadTracker.track { try read(context) } } }
        readElsewhere = { try await db.read { context in try ReadTracker.track { try read(context) } } }
    }

    /// Reads a value on the calling thread. Returns it with the hub's sequence number from before the read: the
    /// read saw every commit up to that one, so a commit after it wakes ``waitForCommit(after:)``.
    func readNow() throws -> (value: Value, seen: UInt64) {
        let seen = hub.sequence
        let (value, footprint) = try readHere()
        try track(footprint, seen: seen)
        return (value, seen)
    }

    /// Reads a value off the cooperative pool, as ``readNow()`` does — again, a few times, when the read failed with
    /// a retryable error (a server's serialization conflict with a concurrent write, a dropped connection): a read
    /// changes nothing, so running it again is always safe, and one collision shouldn't end an app's observation.
    func read() async throws -> (value: Value, seen: UInt64) {
        var attempt = 1
        while true {
            let seen = hub.sequence
            do {
                let (value, footprint) = try await readElsewhere()
                try track(footprint, seen: seen)
                return (value, seen)
            } catch let error as PersistenceError where error.isRetryable && attempt < Self.readAttempts {
                try await Task.sleep(for: .milliseconds(1 << attempt))
                attempt += 1
            }
        }
    }

    /// How many times an observation's read runs before a retryable error ends the observation.
    static var readAttempts: Int { 4 }

    /// Waits until a commit later than `seen` concerned the observation; `false` when it ended (or its task was
    /// cancelled) instead.
    func waitForCommit(after seen: UInt64) async -> Bool { await subscriber.waitForCommit(after: seen) }

    /// Ends the observation: leaves the hub, wakes a waiting read with the end.
    func end() { subscriber.end() }

    /// Tracks what the read touched besides what is declared, and when that grew, makes sure a commit that touched
    /// the newly tracked entities between the read's start and the new registration isn't missed.
    /// - Throws: ``PersistenceError/Code/untrackedRead`` when the read ran raw SQL and nothing is declared.
    private func track(_ footprint: ReadFootprint, seen: UInt64) throws {
        if footprint.ranRawStatements && declared.isEmpty {
            throw PersistenceError(
                .untrackedRead,
                "an observed read ran raw SQL, whose tables can't be inferred: name the entities it reads in tracking:")
        }
        var wanted = declared.union(footprint)
        wanted.ranRawStatements = false
        let grew = tracked.withLock { current -> Bool? in
            guard current != wanted else { return nil }
            defer { current = wanted }
            return !wanted.isCovered(by: current)
        }
        guard let grew else { return }
        subscriber.track(entities: wanted.entities, aliases: wanted.aliases)
        // Commits published before the registration above didn't reach this observation for what it tracks only now.
        let now = hub.sequence
        if grew && now > seen { subscriber.noteCommit(now) }
    }
}
