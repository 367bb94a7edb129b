public import Foundation
@_spi(PersistenceBackend) public import PersistenceCore
@_spi(PersistenceBackend) import PersistenceEngine
import Synchronization

/// A database whose store lives in this process's memory, made by ``MemoryBuilder``: for tests and previews, and
/// the worked example of a backend written outside the library.
///
/// Reads run concurrently, each on the version of the store that was committed when it began, even while a write
/// runs. Writes take turns; each changes its own copy of the store, which becomes the committed version when the
/// write commits, and is dropped when it rolls back. Nothing is written to disk: a store lasts as long as the process
/// (or until ``deleteStore(named:in:)``), and every database opened on the same name and directory shares it.
public final class MemoryDatabase: Database, Sendable {
    public typealias Context = MemoryContext

    /// The store's name.
    public let name: String
    /// The shared store.
    let store: MemoryStore
    /// Where the store is in the process's registry.
    private let key: MemoryStores.Key
    /// The model's entities and relationships, resolved.
    let graph: ModelGraph
    /// The slot of each model entity's table in the store's snapshots, in model order.
    let slots: [Int]
    let instrumentation: Instrumentation
    private let driver: TransactionDriver
    let runner = TransactionRunner(label: "persistence.memory")
    /// The transactions under way, which `close()` waits for.
    private let gate = TransactionGate()

    init(name: String, key: MemoryStores.Key, store: MemoryStore, graph: ModelGraph, slots: [Int], model: Model) {
        self.name = name
        self.key = key
        self.store = store
        self.graph = graph
        self.slots = slots
        instrumentation = .off
        driver = TransactionDriver(instrumentation: .off, observationHub: store.observationHub, model: model)
    }

    deinit {
        // Released without close(): the store has one database fewer.
        if gate.close() { MemoryStores.release(key) }
    }

    /// Where commits are published to observers: shared by every database on the store.
    @_spi(PersistenceBackend) public var observationHub: ObservationHub { store.observationHub }

    /// Runs `body` in a read transaction on the store's latest committed version.
    @discardableResult
    public func read<R>(_ body: (MemoryContext) throws -> R) throws -> R {
        try gate.run {
            try transaction(storage(over: store.snapshot), writable: false, body)
        }
    }

    /// Runs `body` in a write transaction: committed when it returns, rolled back when it throws.
    @discardableResult
    public func write<R>(_ body: (MemoryContext) throws -> R) throws -> R {
        try write(options: [], body)
    }

    /// Runs `body` in a write transaction that treats its changes as `options` say: committed when it returns,
    /// rolled back when it throws.
    /// - Throws: `nestedTransaction` inside another write of the store on the same thread.
    @discardableResult
    public func write<R>(options: WriteOptions, _ body: (MemoryContext) throws -> R) throws -> R {
        try gate.run {
            try store.writer.withLock {
                try transaction(storage(over: store.snapshot), writable: true, options: options, body)
            }
        }
    }

    /// A storage over `snapshot` for this database's model.
    private func storage(over snapshot: MemorySnapshot) -> MemoryStorage {
        MemoryStorage(snapshot: snapshot, slots: slots, layouts: graph.layouts, instrumentation: instrumentation)
    }

    /// Runs `body` in a transaction over `storage`, through the core's `TransactionDriver`: a write's commit
    /// publishes its version of the store; its rollback drops it.
    private func transaction<R>(
        _ storage: MemoryStorage, writable: Bool, options: WriteOptions = [],
        _ body: (MemoryContext) throws -> R
    ) throws -> R {
        try driver.run(
            writable: writable, options: options, begin: {},
            commit: { if writable { store.publish(storage.snapshot) } },
            rollback: {},
            context: { recorder in
                MemoryContext(storage: storage, graph: graph, recorder: recorder, instrumentation: instrumentation)
            }, body)
    }

    @discardableResult
    public func read<R: Sendable>(_ body: @escaping @Sendable (MemoryContext) throws -> R) async throws -> R {
        try await runner.read { try self.read(body) }
    }

    @discardableResult
    public func write<R: Sendable>(_ body: @escaping @Sendable (MemoryContext) throws -> R) async throws -> R {
        try await runner.write { try self.write(body) }
    }

    @discardableResult
    public func write<R: Sendable>(
        options: WriteOptions, _ body: @escaping @Sendable (MemoryContext) throws -> R
    ) async throws -> R {
        try await runner.write { try self.write(options: options, body) }
    }

    /// Always `false`: only this process's databases can write the store, and they share its observers, who hear
    /// of each commit at once.
    /// - Throws: `closed` after `close()`.
    @discardableResult
    public func checkForExternalChanges() throws -> Bool {
        try gate.run { false }
    }

    /// Closes the database: waits for its transactions under way, then lets go of the store (which keeps its data
    /// for the next database opened on it). Later calls throw `closed`; closing again does nothing.
    /// - Throws: `nestedTransaction` when called inside one of this database's transactions.
    public func close() throws {
        guard !gate.isHeldByCurrentThread else {
            throw PersistenceError(.nestedTransaction, "a database can't be closed inside its own transaction")
        }
        if gate.close() { MemoryStores.release(key) }
    }

    /// Forgets the store named `name` in `directory` (the unnamed namespace when `nil`) with all its data.
    /// - Returns: Whether there was such a store.
    /// - Throws: `storeInUse` while a database of this process has it open, `invalidName`, `directoryNotFound`.
    @discardableResult
    public static func deleteStore(named name: String, in directory: URL? = nil) throws -> Bool {
        try MemoryStores.delete(named: name, in: directory)
    }

    /// The names of the stores in `directory` (the unnamed namespace when `nil`), sorted.
    /// - Throws: `directoryNotFound` when the directory doesn't exist.
    public static func storeNames(in directory: URL? = nil) throws -> [String] {
        try MemoryStores.names(in: directory)
    }
}

/// The transactions under way of one database: `close()` refuses new ones, then waits for these.
///
/// `@unchecked Sendable`: `active` and `isClosed` are touched only while holding `condition`'s lock.
final class TransactionGate: @unchecked Sendable {
    private let condition = NSCondition()
    private var active = 0
    private var isClosed = false
    /// How many of the database's transactions the calling thread has open.
    private let depth = ThreadCounter()

    /// Whether the calling thread is inside one of the database's transactions.
    var isHeldByCurrentThread: Bool { depth.value > 0 }

    /// Runs `body` as a transaction under way.
    /// - Throws: `closed` once the database is closed, without running `body`.
    func run<R>(_ body: () throws -> R) throws -> R {
        condition.lock()
        guard !isClosed else {
            condition.unlock()
            throw PersistenceError(.closed, "the database was closed")
        }
        active += 1
        condition.unlock()
        depth.increment()
        defer {
            depth.decrement()
            condition.lock()
            active -= 1
            if active == 0 { condition.broadcast() }
            condition.unlock()
        }
        return try body()
    }

    /// Refuses new transactions and waits for those under way to end; `false` when it was closed already.
    func close() -> Bool {
        condition.lock()
        defer { condition.unlock() }
        guard !isClosed else { return false }
        isClosed = true
        while active > 0 { condition.wait() }
        return true
    }
}
