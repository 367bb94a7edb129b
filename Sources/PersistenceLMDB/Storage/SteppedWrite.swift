internal import CLMDB
import Foundation
import PersistenceCore
import Synchronization

/// A write made of several transactions, for work too large for one: a migration. LMDB keeps every page a write
/// transaction changes in memory until it commits, so one transaction over a whole store needs memory in proportion
/// to it; here each ``step(beforeCommit:)`` commits what was written so far and begins the next transaction, and the
/// map grows between steps.
///
/// Atomicity is the caller's: a stepped write commits as it goes, so it must write only where nothing reads until a
/// last small step makes its work visible (a migration's shadow databases, then the switch of ``DatabaseNames``) —
/// and discard what it wrote when it fails. The caller holds the environment's ``Environment/writer``.
final class SteppedWrite {
    private let environment: Environment
    private let instrumentation: Instrumentation
    /// Whether steps commit; `false` keeps everything in one transaction, which ``Environment/writeInSteps`` rolls
    /// back at the end (a dry run).
    let commitsSteps: Bool
    /// The transaction of the current step.
    private(set) var transaction: Transaction
    /// How many steps committed.
    private(set) var stepsCommitted = 0
    /// Whether a step's transaction is open (and the growth lock held shared).
    private var isOpen = true

    fileprivate init(environment: Environment, instrumentation: Instrumentation, commitsSteps: Bool) throws {
        self.environment = environment
        self.instrumentation = instrumentation
        self.commitsSteps = commitsSteps
        transaction = try Self.begin(environment)
    }

    /// Begins a write transaction with the growth lock held shared (released when it ends), adopting a map another
    /// process grew.
    private static func begin(_ environment: Environment) throws -> Transaction {
        while true {
            environment.growth.lockShared()
            do {
                try environment.checkOpen()
                let transaction = try Transaction(environment: environment, readOnly: false)
                environment.noticeExternalCommits(lastCommitted: transaction.id - 1)
                return transaction
            } catch is LMDBError.MapResized {
                environment.growth.unlock()
                try environment.adoptResizedMap()
            } catch {
                environment.growth.unlock()
                throw error
            }
        }
    }

    /// Commits the current transaction — after `beforeCommit` wrote what must go with it — and begins the next,
    /// growing the map between them when less than half of it is free. Does nothing when steps don't commit.
    /// - Throws: `storageFull` when the step filled the map (nothing of it is committed; the map has grown).
    func step(beforeCommit: (Transaction) throws -> Void) throws {
        guard commitsSteps else { return }
        try commit(beforeCommit)
        try environment.growAheadOfNeed(reservingMultipleOfUsed: 0, instrumentation: instrumentation)
        transaction = try Self.begin(environment)
        isOpen = true
    }

    /// Commits the current transaction and ends the write (the growth lock released).
    fileprivate func commit(_ beforeCommit: (Transaction) throws -> Void) throws {
        guard isOpen else { return }
        isOpen = false
        defer { environment.growth.unlock() }
        do {
            try beforeCommit(transaction)
            if transaction.sawMapFull { throw LMDBError.MapFull(demand: transaction.demand) }
            let id = transaction.id
            try transaction.commit()
            environment.lastTransactionID.store(id, ordering: .relaxed)
            stepsCommitted += 1
        } catch {
            transaction.abort()
            if transaction.sawMapFull { throw LMDBError.MapFull(demand: transaction.demand) }
            throw error
        }
    }

    /// Rolls the current transaction back and ends the write.
    fileprivate func abort() {
        guard isOpen else { return }
        isOpen = false
        transaction.abort()
        environment.growth.unlock()
    }
}

extension Environment {
    /// Runs `body` in a ``SteppedWrite``: its last step commits when `body` returns (or, when steps don't commit,
    /// rolls back); when `body` throws, the current step rolls back — steps committed before stay committed, for the
    /// caller to discard. A step that filled the map throws `storageFull`, the map grown for the next attempt.
    /// The caller holds ``writer``.
    func writeInSteps<R>(
        commitsSteps: Bool, instrumentation: Instrumentation, beforeEachCommit: (Transaction) throws -> Void,
        _ body: (SteppedWrite) throws -> R
    ) throws -> R {
        do {
            try growAheadOfNeed(reservingMultipleOfUsed: 0, instrumentation: instrumentation)
            let write = try SteppedWrite(
                environment: self, instrumentation: instrumentation, commitsSteps: commitsSteps)
            let result: R
            do {
                result = try body(write)
            } catch {
                // A step that filled the map ends the body (a read after the map filled throws): say so.
                let full = write.transaction.sawMapFull ? write.transaction.demand : nil
                write.abort()
                if let full { throw LMDBError.MapFull(demand: full) }
                throw error
            }
            if commitsSteps {
                try write.commit(beforeEachCommit)
            } else {
                write.abort()
            }
            return result
        } catch let full as LMDBError.MapFull {
            throw mapFull(full.demand, instrumentation)
        }
    }
}
