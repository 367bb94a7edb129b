import Foundation
@_spi(PersistenceBackend) import PersistenceCore
import Synchronization

/// A database's ear for other servers' commits: one connection that `LISTEN`s on the store's channel (see
/// ``CommitNotices``) and publishes each commit another origin made to the database's observers as it arrives — no
/// polling, and no write of this database needed to notice it.
///
/// Its own commits it ignores: they were published with their keys as they committed. A notification names the table,
/// so observers of other entities aren't woken. When the listening connection drops (a restart, a failover), the
/// listener reconnects in the background with growing waits, and once back tells every observer to read again:
/// notifications sent while it was away are lost.
final class CommitListener: Sendable {
    private struct State {
        var connection: ServerConnection?
        /// Whether another origin's commit (or a reconnection) was noticed since ``catchUp()`` last said.
        var noticed = false
        var isClosed = false
        var isReconnecting = false
    }

    private let state = Mutex(State())
    private let builder: PostgresBuilder
    private let channel: String
    private let origin: String
    private let entities: Set<String>
    private let hub: ObservationHub

    /// Connects and listens before returning: commits from here on are heard.
    /// - Parameter entities: The store's entity names (its tables'); a notice about another table (the aliases')
    ///   tells every observer to read again.
    init(builder: PostgresBuilder, origin: String, entities: Set<String>, hub: ObservationHub) throws {
        self.builder = builder
        channel = CommitNotices.channel(schema: builder.schema)
        self.origin = origin
        self.entities = entities
        self.hub = hub
        let connection = try listeningConnection()
        state.withLock { $0.connection = connection }
    }

    /// Closes the listening connection; nothing is heard afterwards.
    func close() {
        let connection = state.withLock { state -> ServerConnection? in
            state.isClosed = true
            defer { state.connection = nil }
            return state.connection
        }
        connection?.close()
    }

    /// Waits until every notification of a commit that ended before this call has been heard, then says whether any
    /// commit of another origin was heard since the last call (or the listener reconnected, and may have missed
    /// some).
    /// - Throws: `closed` after ``close()``; what reconnecting throws while the server can't be reached.
    func catchUp() throws -> Bool {
        let connection = try state.withLock { state -> ServerConnection? in
            guard !state.isClosed else { throw closedError }
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
            return state.noticed
        }
    }

    /// A connection listening on the store's channel, reconnecting when it drops.
    private func listeningConnection() throws -> ServerConnection {
        let connection = try ServerConnection.open(builder)
        do {
            try connection.listen(channel) { [weak self] payload in self?.heard(payload) }
        } catch {
            connection.close()
            throw error
        }
        connection.whenClosed { [weak self] in self?.dropped() }
        return connection
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

    /// The listening connection closed: unless the listener was closed, reconnect on a thread of its own (opening a
    /// connection blocks, and this runs on an event loop).
    private func dropped() {
        let start = state.withLock { state -> Bool in
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

    /// Opens a new listening connection when the one held is gone; then, since notifications sent meanwhile were
    /// lost, tells every observer to read again.
    private func reconnect() throws {
        let current = state.withLock { $0.connection }
        guard current == nil || current?.isClosed == true else { return }
        let connection = try listeningConnection()
        let kept = state.withLock { state -> Bool in
            guard !state.isClosed else { return false }
            if let current = state.connection, !current.isClosed { return false }
            state.connection = connection
            state.noticed = true
            return true
        }
        guard kept else { return connection.close() }
        hub.publish(.external)
    }
}
