import Synchronization

/// One observation's link to the hub: remembers the last commit that concerned it (and, for a change-set
/// observation, buffers each commit's changes), and wakes the consumer waiting for the next one.
///
/// Registered when the observation is made, so a commit right after `observe(…)` returns is never missed even if
/// iteration starts later; unregistered when the observation ends (cancelled, finished, a fetch failed) or when the
/// last value holding it — the sequence and its iterator — is released.
final class ObservationSubscriber: Sendable {
    private struct State {
        /// The hub sequence number of the last commit delivered.
        var latest: UInt64 = 0
        /// Buffered change sets, oldest first (change-set observations only).
        var buffer: [CommittedChanges] = []
        /// The primary keys the buffered change sets list.
        var bufferedKeys = 0
        /// Whether the buffer overflowed into one incomplete change set the consumer hasn't taken yet.
        var overflowed = false
        var waiter: CheckedContinuation<Bool, Never>?
        var isEnded = false
        var registration: Int?
    }

    private let state = Mutex(State())
    private let hub: ObservationHub
    /// Whether each commit's changes are kept for the consumer (``Database/changes(of:)``), not only noted.
    let buffersChanges: Bool

    /// The most change sets, and the most primary keys in them, kept for a consumer that doesn't keep up. Past
    /// either, the buffer is replaced by one incomplete change set — "anything may have changed: read again" — so a
    /// consumer that never reads costs bounded memory.
    package static let bufferLimit = (changeSets: 1_000, keys: 100_000)

    init(hub: ObservationHub, entities: Set<String>, aliases: Set<String> = [], buffersChanges: Bool) {
        self.hub = hub
        self.buffersChanges = buffersChanges
        let id = hub.register(self, entities: entities, aliases: aliases)
        state.withLock { $0.registration = id }
    }

    deinit { end() }

    /// Called by the hub, under its lock, for a commit that concerns this observation.
    func deliver(_ changes: CommittedChanges, sequence: UInt64) {
        state.withLock { state in
            guard !state.isEnded else { return }
            state.latest = sequence
            if buffersChanges { Self.buffer(changes, in: &state) }
            state.waiter?.resume(returning: true)
            state.waiter = nil
        }
    }

    /// Appends a change set to the buffer, and collapses the buffer to one incomplete change set when it grows past
    /// ``bufferLimit``. Until the consumer takes that one, later commits fold into it: the consumer answers it by
    /// reading everything again, those commits included. (Any other incomplete change set — another process's
    /// commit — is buffered like the rest, and what follows it too.)
    private static func buffer(_ changes: CommittedChanges, in state: inout State) {
        if state.overflowed { return }
        state.buffer.append(changes)
        state.bufferedKeys += changes.keyCount
        if state.buffer.count > bufferLimit.changeSets || state.bufferedKeys > bufferLimit.keys {
            state.buffer = [.external]
            state.bufferedKeys = 0
            state.overflowed = true
        }
    }

    /// Subscribes to commits touching `entities` or `aliases` instead of what it subscribed to so far (an observed
    /// read reached other entities than the one before). The new registration is in place before the old one
    /// leaves, so no commit falls between them.
    func track(entities: Set<String>, aliases: Set<String>) {
        // The hub is never called under this lock: the hub calls ``deliver(_:sequence:)`` under its own.
        let id = hub.register(self, entities: entities, aliases: aliases)
        let replaced = state.withLock { state -> Int? in
            guard !state.isEnded else { return id }
            defer { state.registration = id }
            return state.registration
        }
        if let replaced { hub.unregister(replaced, buffersChanges: buffersChanges) }
    }

    /// Wakes the consumer as if the commit numbered `sequence` had concerned this observation: it may have touched
    /// what the observation began tracking only after that commit was published.
    func noteCommit(_ sequence: UInt64) {
        state.withLock { state in
            guard !state.isEnded, sequence > state.latest else { return }
            state.latest = sequence
            state.waiter?.resume(returning: true)
            state.waiter = nil
        }
    }

    /// Waits until a commit later than `seen` concerned this observation; `false` when the observation ended
    /// (its task was cancelled) instead.
    func waitForCommit(after seen: UInt64) async -> Bool {
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                state.withLock { state in
                    if state.isEnded {
                        continuation.resume(returning: false)
                    } else if state.latest > seen {
                        continuation.resume(returning: true)
                    } else {
                        state.waiter = continuation
                    }
                }
            }
        } onCancel: {
            end()
        }
    }

    /// The oldest buffered change set, waiting for one; `nil` when the observation ended.
    func nextChanges() async -> CommittedChanges? {
        enum Next {
            case changes(CommittedChanges)
            case wait(after: UInt64)
            case ended
        }
        while true {
            // The buffer and the sequence number read together: a delivery in between can't be slept through.
            let next = state.withLock { state -> Next in
                if state.isEnded { return .ended }
                guard state.buffer.isEmpty else {
                    let changes = state.buffer.removeFirst()
                    state.bufferedKeys -= changes.keyCount
                    state.overflowed = false
                    return .changes(changes)
                }
                return .wait(after: state.latest)
            }
            switch next {
            case .changes(let changes): return changes
            case .ended: return nil
            case .wait(let seen): guard await waitForCommit(after: seen) else { return nil }
            }
        }
    }

    /// Ends the observation: wakes a waiting consumer with the end, drops buffered changes, leaves the hub.
    func end() {
        let id = state.withLock { state -> Int? in
            state.isEnded = true
            state.buffer.removeAll()
            state.bufferedKeys = 0
            state.overflowed = false
            state.waiter?.resume(returning: false)
            state.waiter = nil
            defer { state.registration = nil }
            return state.registration
        }
        if let id { hub.unregister(id, buffersChanges: buffersChanges) }
    }
}
