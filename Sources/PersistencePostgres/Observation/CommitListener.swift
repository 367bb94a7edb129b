import Foundation
import NIOPosix
@_spi(PersistenceBackend) import PersistenceCore
@_spi(PersistenceBackend) import PersistenceEngine
import Synchronization

/// A database's ear for other servers' commits: one connection that `LISTEN`s on the store's channel (see
/// ``CommitNotices``) and publishes each commit another origin made to the database's observers as it arrives — no
/// polling, and no write of this database needed to notice it.
///
/// It starts when the database's first observation is made — listening before that observation exists, so it misses
/// nothing the observation should see — or at the first ``catchUp()``: a server that only handles requests never pays
/// for a listening connection, nor for being woken by every commit. When it can't listen at once (the server can't be
/// reached, or the observation is made on an event loop, where it must not wait), it goes on trying in the background
/// and, once it listens, tells every observer to read again.
///
/// Its own commits it ignores: they were published with their keys as they committed. A notification names the table,
/// so observers of other entities aren't woken. When the listening connection drops (a restart, a failover), the
/// listener reconnects in the background with growing waits, and once back tells every observer to read again:
/// notifications sent while it was away are lost.
///
/// Writers notify only while a listener's lease is current (see ``CommitNotices``): each listening connection sets
/// it, and a thread of the listener's renews it every quarter of its length. A transaction that ran the trigger before
/// the lease was set may not have notified: the listener finds those still running when it starts listening, waits
/// (in the background) until they end, and then tells every observer to read again. A lease that ran out before its
/// renewal (the process stalled for a minute) is handled the same way.
final class CommitListener: Sendable {
    private struct State {
        var connection: ServerConnection?
        /// Whether another origin's commit (or a reconnection) was noticed since ``catchUp()`` last said.
        var noticed = false
        var isClosed = false
        var isReconnecting = false
        /// Whether listening was asked for (``start()`` or ``catchUp()``).
        var isStarted = false
        /// Whether a connection ever listened: a later one may have missed notifications.
        var hasListened = false
        /// Whether commits may have gone unheard since observers started (a drop, or a start in the background):
        /// the next connection that listens tells observers to read again.
        var mayHaveMissed = false
        /// How many waits for writers that may not have notified are under way.
        var waits = 0
        /// Whether the thread that renews the lease runs.
        var isRenewing = false
    }

    private let state = Mutex(State())
    private let builder: PostgresBuilder
    private let channel: String
    private let origin: String
    private let entities: Set<String>
    private let hub: ObservationHub
    /// Signalled by ``close()``: the lease's renewal stops.
    private let closing = DispatchSemaphore(value: 0)

    /// A listener that hasn't started.
    /// - Parameter entities: The store's entity names (its tables'); a notice about another table (the aliases')
    ///   tells every observer to read again.
    init(builder: PostgresBuilder, origin: String, entities: Set<String>, hub: ObservationHub) {
        self.builder = builder
        channel = CommitNotices.channel(schema: builder.schema)
        self.origin = origin
        self.entities = entities
        self.hub = hub
    }

    /// Whether a connection listens now.
    var isListening: Bool { state.withLock { $0.connection.map { !$0.isClosed } ?? false } }

    /// Starts listening unless started already (cheap then: every observation calls it): on the calling thread, or
    /// in the background when that fails or the caller is an event loop.
    func start() {
        let starting = state.withLock { state -> Bool in
            guard !state.isStarted, !state.isClosed else { return false }
            state.isStarted = true
            return true
        }
        guard starting else { return }
        if MultiThreadedEventLoopGroup.currentEventLoop == nil, (try? reconnect()) != nil { return }
        state.withLock { $0.mayHaveMissed = true }
        dropped()
    }

    /// Closes the listening connection; nothing is heard afterwards.
    func close() {
        let connection = state.withLock { state -> ServerConnection? in
            state.isClosed = true
            defer { state.connection = nil }
            return state.connection
        }
        closing.signal()
        connection?.close()
    }

    /// Waits until every notification of a commit that ended before this call has been heard, then says whether any
    /// commit of another origin was heard since the last call (or the listener reconnected, and may have missed
    /// some, or waits for writers that started before it listened).
    /// - Throws: `closed` after ``close()``; what reconnecting throws while the server can't be reached.
    func catchUp() throws -> Bool {
        let connection = try state.withLock { state -> ServerConnection? in
            guard !state.isClosed else { throw closedError }
            state.isStarted = true
            return state.connection
        }
        if let connection, !connection.isClosed {
            // The server sends a listening session's pending notifications before it says it is ready again, and
            // the connection hands them over in order: once this answers, they have been published.
            try connection.execute("SELECT 1")
        } else {
            try reconnect()
        }
        return state.withLock { state in
            defer { state.noticed = false }
            return state.noticed || state.waits > 0
        }
    }

    /// A connection listening on the store's channel, reconnecting when it drops, and the writers that may not have
    /// notified: those running that ran the trigger before this connection set the lease.
    private func listeningConnection() throws -> (connection: ServerConnection, earlier: Set<String>) {
        let connection = try ServerConnection.open(builder)
        let earlier: Set<String>
        do {
            try connection.listen(channel) { [weak self] payload in self?.heard(payload) }
            _ = try CommitNotices.renewLease(connection, schema: builder.schema)
            earlier = try CommitNotices.runningWriters(connection, schema: builder.schema)
        } catch {
            connection.close()
            throw error
        }
        let closed = ObjectIdentifier(connection)
        connection.whenClosed { [weak self] in self?.dropped(closed) }
        return (connection, earlier)
    }

    /// Tells every observer to read again once none of `earlier` (writers that may not have notified) is running —
    /// on a thread of its own, as they may take long. Gives up when the connection drops: its reconnection announces.
    private func announceAfter(_ earlier: Set<String>, on connection: ServerConnection) {
        guard !earlier.isEmpty else { return }
        state.withLock { $0.waits += 1 }
        let thread = Thread { [weak self] in
            guard let self else { return }
            var running = earlier
            var pause = 0.002
            while !running.isEmpty, !state.withLock({ $0.isClosed }) {
                Thread.sleep(forTimeInterval: pause)
                pause = min(pause * 2, 0.1)
                guard let now = try? CommitNotices.runningWriters(connection, schema: builder.schema) else { break }
                running.formIntersection(now)
            }
            let ended = running.isEmpty
            state.withLock { state in
                state.waits -= 1
                if ended { state.noticed = true }
            }
            if ended { hub.publish(.external) }
        }
        thread.name = "persistence.postgres.listener-wait"
        thread.start()
    }

    /// Renews the lease every quarter of its length until the listener closes (on a thread of its own). A lease that
    /// had run out — writers stopped notifying — tells every observer to read again, and again once the writers that
    /// ran the trigger meanwhile have ended.
    private func renewLease() {
        let interval = Double(CommitNotices.leaseSeconds) / 4
        while closing.wait(timeout: .now() + interval) == .timedOut {
            guard let connection = state.withLock({ $0.connection }), !connection.isClosed else { continue }
            guard let lapsed = try? CommitNotices.renewLease(connection, schema: builder.schema), lapsed else {
                continue  // renewed, or the connection dropped: its reconnection sets the lease again
            }
            state.withLock { $0.noticed = true }
            hub.publish(.external)
            if let earlier = try? CommitNotices.runningWriters(connection, schema: builder.schema) {
                announceAfter(earlier, on: connection)
            }
        }
    }

    /// A notification (on the connection's event loop): publishes another origin's commit.
    private func heard(_ payload: String) {
        guard let (from, table) = CommitNotices.parse(payload), from != origin else { return }
        state.withLock { $0.noticed = true }
        let name = String(table)
        guard entities.contains(name) else { return hub.publish(.external) }
        var changes = ChangeSet()
        changes.isComplete = false
        hub.publish(CommittedChanges(entities: [name: changes]))
    }

    /// A listening connection closed (`closed`; `nil` for a start that must go to the background): unless the listener
    /// was closed or it was a spare one, reconnect on a thread of its own (opening a connection blocks, and this runs
    /// on an event loop).
    private func dropped(_ closed: ObjectIdentifier? = nil) {
        let start = state.withLock { state -> Bool in
            // A spare connection closed unused (another one started listening first): nothing was missed.
            if let closed, let current = state.connection, ObjectIdentifier(current) != closed, !current.isClosed {
                return false
            }
            if state.hasListened { state.mayHaveMissed = true }
            guard !state.isClosed, !state.isReconnecting else { return false }
            state.isReconnecting = true
            return true
        }
        guard start else { return }
        let thread = Thread { [weak self] in self?.reconnectInBackground() }
        thread.name = "persistence.postgres.listener"
        thread.start()
    }

    private func reconnectInBackground() {
        defer { state.withLock { $0.isReconnecting = false } }
        var wait = 0.05
        while !state.withLock({ $0.isClosed }) {
            if (try? reconnect()) != nil { return }
            Thread.sleep(forTimeInterval: wait)
            wait = min(wait * 2, 2)
        }
    }

    /// Opens a new listening connection when there is none or the one held is gone; then, when notifications may have
    /// been lost meanwhile (a drop, or observers that started before it listened), tells every observer to read again.
    private func reconnect() throws {
        let current = state.withLock { $0.connection }
        guard current == nil || current?.isClosed == true else { return }
        let (connection, earlier) = try listeningConnection()
        let kept = state.withLock { state -> (kept: Bool, announce: Bool, renew: Bool) in
            guard !state.isClosed else { return (false, false, false) }
            if let current = state.connection, !current.isClosed { return (false, false, false) }
            state.connection = connection
            let renew = !state.isRenewing
            state.isRenewing = true
            defer {
                state.hasListened = true
                state.mayHaveMissed = false
            }
            // Notifications were lost while a listening connection was down: a caller of `catchUp()` hears so.
            if state.hasListened { state.noticed = true }
            return (true, state.mayHaveMissed, renew)
        }
        guard kept.kept else { return connection.close() }
        if kept.announce { hub.publish(.external) }
        announceAfter(earlier, on: connection)
        if kept.renew {
            let thread = Thread { [weak self] in self?.renewLease() }
            thread.name = "persistence.postgres.listener-lease"
            thread.start()
        }
    }
}
