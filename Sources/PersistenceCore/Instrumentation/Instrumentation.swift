package import CoreMetrics
import Dispatch
package import Logging

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
package struct Instrumentation: Sendable {
    /// The logger, `nil` when logging is off.
    package let logger: Logger?
    private let metrics: Metrics?

    /// No logging, no metrics.
    package static let off = Instrumentation(logger: nil, metricsFactory: nil, backend: "", store: "")

    /// - Parameters:
    ///   - logger: The builder's logger; its metadata gains `persistence.backend` and `persistence.store`.
    ///   - metricsFactory: Where metrics go; `nil` records none (and reads no clock).
    ///   - backend: `sqlite`, `lmdb` or `postgres`.
    ///   - store: The store's name (the builder's database name; PostgreSQL's schema name), never a path.
    package init(logger: Logger?, metricsFactory: (any MetricsFactory)?, backend: String, store: String) {
        if var logger {
            logger[metadataKey: "persistence.backend"] = .string(backend)
            logger[metadataKey: "persistence.store"] = .string(store)
            self.logger = logger
        } else {
            self.logger = nil
        }
        metrics = metricsFactory.map { Metrics(factory: $0, backend: backend, store: store) }
    }

    /// Whether anything is recorded about transactions (so the clock is read only then).
    @inline(__always)
    private var timesTransactions: Bool { metrics != nil || logger.map { $0.logLevel <= .trace } == true }

    /// Runs a whole transaction — begin, the user's block, commit or rollback — and records whether it committed
    /// (returned) or rolled back (threw), and how long it took.
    @inline(__always)
    package func transaction<R>(writable: Bool, _ body: () throws -> R) throws -> R {
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
    package func trace(_ message: @autoclosure () -> String, entity: @autoclosure () -> String) {
        logger?.trace("\(message())", metadata: ["entity": "\(entity())"])
    }

    /// Records that the memory map grew.
    package func mapGrew(from old: Int, to new: Int) {
        logger?.info("the memory map grew", metadata: ["from_bytes": "\(old)", "to_bytes": "\(new)"])
        metrics?.mapGrowths.increment()
        metrics?.mapSize.record(new)
    }

    /// Records a migration that ran while the store opened.
    package func migrated(from old: Int, to new: Int, summary: @autoclosure () -> String) {
        logger?.info(
            "migrated the store",
            metadata: ["from_version": "\(old)", "to_version": "\(new)", "report": "\(summary())"])
        metrics?.migrations.increment()
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
