internal import CLMDB
public import Foundation
public import PersistenceCore

/// A database in one LMDB file, made by ``LMDBBuilder``; values sealed with AES-GCM when it has a passphrase.
///
/// Reads run concurrently with the single writer, each on a consistent snapshot. Writes are serialized and run
/// synchronously under a lock. **A write block runs exactly once**: the memory map is large by default and grows
/// ahead of need before a write begins; a write that fills it anyway is rolled back whole and throws `storageFull`
/// (nothing of it is stored, and the map has grown, so running it again can succeed) — the block is never re-run by
/// the library, so its side effects, and the elements of a single-pass sequence given to `create(_:)`, are never
/// repeated or lost. A full disk is `storageFull` too, with every committed write intact.
public final class LMDBDatabase: PersistenceCore.Database, Sendable {
    public typealias Context = LMDBContext

    /// The store's file.
    public let fileURL: URL
    let environment: Environment
    let stores: EntityStores
    let sealer: ValueSealer
    let metaDBI: MDB_dbi
    let aliasDBI: MDB_dbi
    let instrumentation: Instrumentation
    let runner = TransactionRunner(label: "persistence.lmdb")

    init(
        fileURL: URL, environment: Environment, stores: EntityStores, sealer: ValueSealer, metaDBI: MDB_dbi,
        aliasDBI: MDB_dbi, instrumentation: Instrumentation
    ) {
        self.instrumentation = instrumentation
        self.fileURL = fileURL
        self.environment = environment
        self.stores = stores
        self.sealer = sealer
        self.metaDBI = metaDBI
        self.aliasDBI = aliasDBI
    }

    /// Where commits are published to observers; shared by every database of this process on the same file.
    public var observationHub: ObservationHub { environment.observationHub }

    @discardableResult
    public func checkForExternalChanges() throws -> Bool {
        try environment.writer.withLock { try environment.checkForExternalCommits() }
    }

    /// Whether values are sealed with a key derived from a passphrase.
    public var isEncrypted: Bool { sealer.isEncrypted }

    /// The current size of the memory map in bytes (it grows as needed).
    public var mapSize: Int { environment.mapSize }

    @discardableResult
    public func read<R>(_ body: (LMDBContext) throws -> R) throws -> R {
        try instrumentation.transaction(writable: false) {
            try environment.read { transaction in
                let context = LMDBContext(
                    transaction: transaction, stores: stores, sealer: sealer, metaDBI: metaDBI, aliasDBI: aliasDBI,
                    recorder: nil, instrumentation: instrumentation)
                defer { context.expire() }
                return try body(context)
            }
        }
    }

    @discardableResult
    public func write<R>(_ body: (LMDBContext) throws -> R) throws -> R {
        try environment.writer.withLock {
            let recorder = ChangeRecorder(recordsKeys: observationHub.recordsKeys)
            let result = try instrumentation.transaction(writable: true) {
                try environment.write(instrumentation: instrumentation) { transaction in
                    let context = LMDBContext(
                        transaction: transaction, stores: stores, sealer: sealer, metaDBI: metaDBI, aliasDBI: aliasDBI,
                        recorder: recorder, instrumentation: instrumentation)
                    defer { context.expire() }
                    let result = try body(context)
                    try context.finish()
                    return result
                }
            }
            // Still under the writer lock: observers hear of commits in commit order.
            observationHub.publish(recorder)
            return result
        }
    }

    @discardableResult
    public func read<R: Sendable>(_ body: @escaping @Sendable (LMDBContext) throws -> R) async throws -> R {
        try await runner.read { try self.read(body) }
    }

    @discardableResult
    public func write<R: Sendable>(_ body: @escaping @Sendable (LMDBContext) throws -> R) async throws -> R {
        try await runner.write { try self.write(body) }
    }
}
