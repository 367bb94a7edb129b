import Synchronization

/// Where a database's commits meet its observers: every backend publishes each commit's changes here, and the
/// observations of ``Database/observe(_:where:sortedBy:limit:offset:)``, ``Database/changes(of:)`` and
/// ``Database/observeAlias(_:as:)`` subscribe here.
///
/// An embedded backend publishes while it still holds its writer lock, so subscribers hear of commits in commit order.
/// A server's writers commit concurrently: each takes a ticket just before it sends `COMMIT`
/// (``reserveTicket()``) and publishes with it (``publish(_:ticket:)``), and publications are passed on in ticket
/// order — so two writes where one could see the other's effect (it began after the other committed) reach
/// subscribers in their commit order. A publication only flags the subscribers of the entities and aliases the commit touched, so observers of other
/// types cost a commit one dictionary lookup per touched entity. Subscribers are held weakly: an observation that
/// is dropped or cancelled leaves nothing behind.
@_spi(PersistenceBackend) public final class ObservationHub: Sendable {
    private struct Registration {
        weak var subscriber: ObservationSubscriber?
        let entities: Set<String>
        let aliases: Set<String>
    }

    private struct State {
        var sequence: UInt64 = 0
        var nextID = 0
        var registrations: [Int: Registration] = [:]
        var byEntity: [String: Set<Int>] = [:]
        var byAlias: [String: Set<Int>] = [:]
        /// The next ticket a concurrent writer takes, and the next one whose publication may be passed on.
        var nextTicket: UInt64 = 0
        var nextToPublish: UInt64 = 0
        /// Publications of tickets that came before `nextToPublish` was done (`nil`: that commit failed or changed
        /// nothing).
        var held: [UInt64: CommittedChanges?] = [:]
    }

    private let state = Mutex(State())
    private let changeSubscribers = Atomic<Int>(0)
    /// Called before each subscription (a server's database starts listening for other servers' commits then).
    private let subscribed = Mutex<(@Sendable () -> Void)?>(nil)

    /// Creates a hub with no subscribers; each database (each LMDB environment) has one.
    public init() {}

    /// How many observations are subscribed: live ones, not yet cancelled, finished or dropped.
    public var subscriberCount: Int { state.withLock { $0.registrations.count } }

    /// Whether a transaction beginning now should record primary keys (someone observes change sets).
    @usableFromInline package var recordsKeys: Bool { changeSubscribers.load(ordering: .relaxed) > 0 }

    /// The number of commits published so far.
    package var sequence: UInt64 { state.withLock { $0.sequence } }

    /// Publishes what a transaction changed; call after it committed, while still holding the writer lock.
    @usableFromInline package func publish(_ recorder: ChangeRecorder) {
        guard !recorder.isEmpty else { return }
        publish(recorder.committedChanges())
    }

    /// Publishes one commit's changes to the subscribers it concerns.
    package func publish(_ changes: CommittedChanges) {
        state.withLock { state in Self.deliver(changes, in: &state) }
    }

    /// A ticket for a commit about to be sent by one of several concurrent writers: take it just before `COMMIT`,
    /// then hand it back through ``publish(_:ticket:)`` whatever happens — or every later publication waits for it.
    @usableFromInline package func reserveTicket() -> UInt64 {
        state.withLock { state in
            defer { state.nextTicket += 1 }
            return state.nextTicket
        }
    }

    /// Publishes what the commit of `ticket` changed (`nil` when the commit failed) once every earlier ticket's is
    /// published; later tickets' publications that were waiting for this one follow it.
    @usableFromInline package func publish(_ recorder: ChangeRecorder?, ticket: UInt64) {
        let changes = recorder.flatMap { $0.isEmpty ? nil : $0.committedChanges() }
        state.withLock { state in
            guard ticket == state.nextToPublish else {
                state.held[ticket] = .some(changes)
                return
            }
            if let changes { Self.deliver(changes, in: &state) }
            state.nextToPublish += 1
            while let next = state.held.removeValue(forKey: state.nextToPublish) {
                if let next { Self.deliver(next, in: &state) }
                state.nextToPublish += 1
            }
        }
    }

    /// Counts a commit and flags the subscribers it concerns. Delivered under the lock: two publications (a local
    /// commit and an external change noticed by `refresh()`) reach every subscriber in one order.
    private static func deliver(_ changes: CommittedChanges, in state: inout State) {
        state.sequence += 1
        guard !state.registrations.isEmpty else { return }
        if changes.everything {
            for registration in state.registrations.values {
                registration.subscriber?.deliver(changes, sequence: state.sequence)
            }
            return
        }
        var notified = Set<Int>()
        for entity in changes.entities.keys {
            guard let ids = state.byEntity[entity] else { continue }
            notified.formUnion(ids)
        }
        for alias in changes.aliases {
            guard let ids = state.byAlias[alias] else { continue }
            notified.formUnion(ids)
        }
        for id in notified {
            state.registrations[id]?.subscriber?.deliver(changes, sequence: state.sequence)
        }
    }

    /// Calls `action` before every subscription from now on: what it sets up (a server's database starts listening for
    /// other servers' commits) is in place before the observation exists. It runs on the thread making the observation.
    package func whenSubscribed(_ action: @escaping @Sendable () -> Void) {
        subscribed.withLock { $0 = action }
    }

    /// Subscribes to commits touching `entities` or `aliases`; returns the registration's id.
    func register(_ subscriber: ObservationSubscriber, entities: Set<String>, aliases: Set<String>) -> Int {
        subscribed.withLock { $0 }?()
        if subscriber.buffersChanges { changeSubscribers.add(1, ordering: .relaxed) }
        return state.withLock { state in
            let id = state.nextID
            state.nextID += 1
            state.registrations[id] = Registration(subscriber: subscriber, entities: entities, aliases: aliases)
            for entity in entities { state.byEntity[entity, default: []].insert(id) }
            for alias in aliases { state.byAlias[alias, default: []].insert(id) }
            return id
        }
    }

    /// Removes a registration (an observation ended or was dropped); nothing when it is gone already.
    func unregister(_ id: Int, buffersChanges: Bool) {
        let removed = state.withLock { state -> Bool in
            guard let registration = state.registrations.removeValue(forKey: id) else { return false }
            for entity in registration.entities { Self.remove(id, key: entity, from: &state.byEntity) }
            for alias in registration.aliases { Self.remove(id, key: alias, from: &state.byAlias) }
            return true
        }
        if removed && buffersChanges { changeSubscribers.subtract(1, ordering: .relaxed) }
    }

    private static func remove(_ id: Int, key: String, from map: inout [String: Set<Int>]) {
        map[key]?.remove(id)
        if map[key]?.isEmpty == true { map[key] = nil }
    }
}
