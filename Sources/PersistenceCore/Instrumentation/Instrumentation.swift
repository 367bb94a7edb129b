public import CoreMetrics
import Dispatch
public import Logging
public import Tracing

/// A database's logger and metrics, as its builder was given them; both off by default, and then free.
///
/// Logs (swift-log): operations and transactions at `.trace` (the SQL a typed operation runs — identifiers and
/// `?` placeholders only, never a bound value; raw SQL is logged without its text, which could hold literals),
/// migrations and map growth at `.info`, a wrong passphrase at `.notice`, a stored value that fails to
/// authenticate at `.error`. Nothing logged carries a stored value, a key or a passphrase: metadata is the backend,
/// the store's name, entity and attribute names, versions, counts, sizes and durations.
///
/// Metrics (swift-metrics), each with the dimensions `backend` (`sqlite`, `lmdb`, `postgres`) and `store`:
/// - `persistence_transactions` (counter; `kind`: `read`/`write`, `outcome`: `committed`/`rolledBack`),
/// - `persistence_transaction_duration` (timer, nanoseconds; `kind`),
/// - `persistence_map_growths` (counter) and `persistence_map_size` (gauge, bytes) — LMDB,
/// - `persistence_authentication_failures` (counter; `kind`: `passphrase`/`value`) — encrypted LMDB,
/// - `persistence_migrations` (counter) — a migration that ran at open.
///
/// Spans (swift-distributed-tracing), children of the caller's span (`ServiceContext.current`, carried to the thread
/// an `async` transaction runs on): `persistence.read` and `persistence.write` around each transaction (begin, the
/// block, commit or rollback; a thrown error is recorded on the span), and `persistence.open` around opening a store,
/// which carries `persistence.migration.from_version`, `.to_version` and `.steps` and a `migrated` event when a
/// migration ran. Attributes: `db.system.name` (`sqlite`, `lmdb`, `postgresql`) and `db.namespace` (the store's
/// name) — never a value, a key or SQL with literals.
@_spi(PersistenceBackend) public struct Instrumentation: Sendable {
    /// The logger, `nil` when logging is off.
    package let logger: Logger?
    private let metrics: Metrics?
    private let tracing: Spans?

    /// No logging, no metrics, no spans.
    @_spi(PersistenceBackend) public static let off = Instrumentation(
        logger: nil, metricsFactory: nil, backend: "", system: .init(name: "", isServer: false), store: "")

    /// - Parameters:
    ///   - logger: The builder's logger; its metadata gains `persistence.backend` and `persistence.store`.
    ///   - metricsFactory: Where metrics go; `nil` records none (and reads no clock).
    ///   - backend: `sqlite`, `lmdb` or `postgres`: the `backend` of logs and metrics.
    ///   - system: What spans name the engine (OpenTelemetry's `db.system.name`) and whether it is a server.
    ///   - store: The store's name (the builder's database name; PostgreSQL's schema name), never a path.
    ///   - tracer: Where spans go; `nil` makes none.
    @_spi(PersistenceBackend) public init(
        logger: Logger?, metricsFactory: (any MetricsFactory)?, tracer: (any Tracer)? = nil, backend: String,
        system: DatabaseSystem, store: String
    ) {
        if var logger {
            logger[metadataKey: "persistence.backend"] = .string(backend)
            logger[metadataKey: "persistence.store"] = .string(store)
            self.logger = logger
        } else {
            self.logger = nil
        }
        metrics = metricsFactory.map { Metrics(factory: $0, backend: backend, store: store) }
        tracing = tracer.map { Spans(tracer: $0, system: system, store: store) }
    }

    /// Whether anything is recorded about transactions (so the clock is read only then).
    @inline(__always)
    private var timesTransactions: Bool { metrics != nil || logger.map { $0.logLevel <= .trace } == true }

    /// Runs a whole transaction — begin, the user's block, commit or rollback — and records whether it committed
    /// (returned) or rolled back (threw), and how long it took.
    @inline(__always)
    @usableFromInline package func transaction<R>(writable: Bool, _ body: () throws -> R) throws -> R {
        if let tracing {
            return try tracing.span(writable ? "persistence.write" : "persistence.read") { _ in
                try timedTransaction(writable: writable, body)
            }
        }
        return try timedTransaction(writable: writable, body)
    }

    @inline(__always)
    private func timedTransaction<R>(writable: Bool, _ body: () throws -> R) throws -> R {
        guard timesTransactions else { return try body() }
        let start = DispatchTime.now().uptimeNanoseconds
        do {
            let result = try body()
            transactionEnded(writable: writable, committed: true, startedAt: start)
            return result
        } catch {
            transactionEnded(writable: writable, committed: false, startedAt: start)
            throw error
        }
    }

    private func transactionEnded(writable: Bool, committed: Bool, startedAt start: UInt64) {
        let nanoseconds = DispatchTime.now().uptimeNanoseconds &- start
        logger?.trace(
            "\(writable ? "write" : "read") transaction \(committed ? "committed" : "rolled back")",
            metadata: ["duration_ns": "\(nanoseconds)"])
        metrics?.transactionEnded(writable: writable, committed: committed, nanoseconds: nanoseconds)
    }

    /// Logs a typed operation (its SQL, or what it does) at `.trace`.
    @inline(__always)
    @_spi(PersistenceBackend) public func trace(_ message: @autoclosure () -> String, entity: @autoclosure () -> String)
    {
        logger?.trace("\(message())", metadata: ["entity": "\(entity())"])
    }

    /// Records that the memory map grew.
    package func mapGrew(from old: Int, to new: Int) {
        logger?.info("the memory map grew", metadata: ["from_bytes": "\(old)", "to_bytes": "\(new)"])
        metrics?.mapGrowths.increment()
        metrics?.mapSize.record(new)
    }

    /// Runs the opening of a store — its migration included — in a `persistence.open` span (when tracing).
    package func opening<R>(_ body: () throws -> R) throws -> R {
        guard let tracing else { return try body() }
        return try tracing.span("persistence.open") { span in
            try Spans.$opening.withValue(span) { try body() }
        }
    }

    /// Records a migration that ran while the store opened (on the opening's span too, when tracing).
    package func migrated(from old: Int, to new: Int, steps: Int, summary: @autoclosure () -> String) {
        logger?.info(
            "migrated the store",
            metadata: ["from_version": "\(old)", "to_version": "\(new)", "report": "\(summary())"])
        metrics?.migrations.increment()
        if tracing != nil, let span = Spans.opening {
            span.attributes["persistence.migration.from_version"] = old
            span.attributes["persistence.migration.to_version"] = new
            span.attributes["persistence.migration.steps"] = steps
            span.addEvent("migrated")
        }
    }

    /// Records a failed authentication: a wrong passphrase at open, or a stored value that doesn't authenticate.
    package func authenticationFailed(passphrase: Bool, entity: String? = nil) {
        if passphrase {
            logger?.notice("a passphrase was refused")
        } else {
            logger?.error(
                "a stored value failed authentication (tampered or damaged)", metadata: ["entity": "\(entity ?? "")"])
        }
        (passphrase ? metrics?.passphraseFailures : metrics?.valueFailures)?.increment()
    }
}

/// The engine a database's spans name: what OpenTelemetry's `db.system.name` calls it, and whether it is a server
/// the process talks to (its spans are then client spans) or embedded in the process (internal spans).
@_spi(PersistenceBackend) public struct DatabaseSystem: Sendable {
    package let name: String
    package let isServer: Bool

    /// An engine named `name` (`sqlite`, `lmdb`, `postgresql`…), a server or embedded in the process.
    @_spi(PersistenceBackend) public init(name: String, isServer: Bool) {
        self.name = name
        self.isServer = isServer
    }
}

/// The tracer and what every span of one database says.
private final class Spans: Sendable {
    let tracer: any Tracer
    let system: DatabaseSystem
    let store: String
    /// The span of the opening under way on this thread (or task), which a migration's figures go to.
    @TaskLocal static var opening: (any Span)?

    init(tracer: any Tracer, system: DatabaseSystem, store: String) {
        self.tracer = tracer
        self.system = system
        self.store = store
    }

    /// Runs `body` in a span named `name` (a client span on a server, internal on an embedded store), a child of the
    /// caller's; an error `body` throws is recorded on it.
    func span<R>(_ name: String, _ body: (any Span) throws -> R) throws -> R {
        try Self.span(tracer, name, system: system, store: store, body)
    }

    /// The generic form, so that the existential tracer is opened.
    private static func span<T: Tracer, R>(
        _ tracer: T, _ name: String, system: DatabaseSystem, store: String, _ body: (any Span) throws -> R
    ) throws -> R {
        try tracer.withSpan(name, ofKind: system.isServer ? .client : .internal) { span in
            span.attributes["db.system.name"] = system.name
            span.attributes["db.namespace"] = store
            return try body(span)
        }
    }
}

/// The metric handles, made once per database.
private final class Metrics: Sendable {
    let readsCommitted: Counter
    let readsRolledBack: Counter
    let writesCommitted: Counter
    let writesRolledBack: Counter
    let readDuration: Timer
    let writeDuration: Timer
    let mapGrowths: Counter
    let mapSize: Gauge
    let migrations: Counter
    let passphraseFailures: Counter
    let valueFailures: Counter

    init(factory: any MetricsFactory, backend: String, store: String) {
        let base = [("backend", backend), ("store", store)]
        func transactions(_ kind: String, _ outcome: String) -> Counter {
            Counter(
                label: "persistence_transactions", dimensions: base + [("kind", kind), ("outcome", outcome)],
                factory: factory)
        }
        readsCommitted = transactions("read", "committed")
        readsRolledBack = transactions("read", "rolledBack")
        writesCommitted = transactions("write", "committed")
        writesRolledBack = transactions("write", "rolledBack")
        readDuration = Timer(
            label: "persistence_transaction_duration", dimensions: base + [("kind", "read")], factory: factory)
        writeDuration = Timer(
            label: "persistence_transaction_duration", dimensions: base + [("kind", "write")], factory: factory)
        mapGrowths = Counter(label: "persistence_map_growths", dimensions: base, factory: factory)
        mapSize = Gauge(label: "persistence_map_size", dimensions: base, factory: factory)
        migrations = Counter(label: "persistence_migrations", dimensions: base, factory: factory)
        passphraseFailures = Counter(
            label: "persistence_authentication_failures", dimensions: base + [("kind", "passphrase")],
            factory: factory)
        valueFailures = Counter(
            label: "persistence_authentication_failures", dimensions: base + [("kind", "value")], factory: factory)
    }

    func transactionEnded(writable: Bool, committed: Bool, nanoseconds: UInt64) {
        switch (writable, committed) {
        case (false, true): readsCommitted.increment()
        case (false, false): readsRolledBack.increment()
        case (true, true): writesCommitted.increment()
        case (true, false): writesRolledBack.increment()
        }
        (writable ? writeDuration : readDuration).recordNanoseconds(Int64(clamping: nanoseconds))
    }
}
