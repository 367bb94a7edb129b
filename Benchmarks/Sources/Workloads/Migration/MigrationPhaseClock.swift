import Synchronization

/// The clock of one timed S8 migration, split in three phases: before the copy of the rows (opening, planning,
/// creating the new table), the copy (the mapping pass for ours, the `INSERT … SELECT` for raw), and after it
/// (dropping the old table, renaming, building the index, the metadata, the commit).
///
/// Shared with the migration's progress handler, which is `@Sendable`: the instants are behind a `Mutex`,
/// uncontended (the handler runs on the thread that opens the store).
final class MigrationPhaseClock: Sendable {
    private struct State {
        var started: ContinuousClock.Instant?
        var copyStarted: ContinuousClock.Instant?
        var copyEnded: ContinuousClock.Instant?
    }

    private let state = Mutex(State())

    /// Marks the start of the timed operation.
    func start() {
        state.withLock { $0.started = ContinuousClock.now }
    }

    /// Marks the start of the copy of the rows, once.
    func beginCopy() {
        state.withLock { state in
            if state.copyStarted == nil { state.copyStarted = ContinuousClock.now }
        }
    }

    /// Marks the end of the copy of the rows, once.
    func endCopy() {
        state.withLock { state in
            if state.copyEnded == nil { state.copyEnded = ContinuousClock.now }
        }
    }

    /// Ends the measurement: the seconds from ``start()`` to now, and of the phase before the copy and of the copy
    /// (`nil` when they weren't marked).
    func finish() -> (seconds: Double, beforeCopy: Double?, copy: Double?) {
        let end = ContinuousClock.now
        return state.withLock { state in
            (
                Self.seconds(from: state.started, to: end) ?? 0,
                Self.seconds(from: state.started, to: state.copyStarted),
                Self.seconds(from: state.copyStarted, to: state.copyEnded)
            )
        }
    }

    private static func seconds(from start: ContinuousClock.Instant?, to end: ContinuousClock.Instant?) -> Double? {
        guard let start, let end else { return nil }
        let elapsed = start.duration(to: end)
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
    }
}
