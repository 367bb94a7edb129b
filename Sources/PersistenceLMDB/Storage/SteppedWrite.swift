internal import CLMDB
import Foundation
@_spi(PersistenceBackend) import PersistenceCore
import Synchronization

/// A write made of several transactions, for work too large for one: a migration. LMDB keeps every page a write
/// transaction changes in memory until it commits, so one transaction over a whole store needs memory in proportion
/// to it; here each step commits what was written so far and begins the next transaction, and the map grows between
/// steps — only there: `mdb_env_set_mapsize` remaps the file, so no transaction or cursor of this process may be open
/// then, and committing a step ends every cursor of its transaction. The work calls
/// ``stepIfDue(before:beforeStep:beforeCommit:)`` before each write; a step closes no cursor itself, so a walk over a
/// database keeps one only until a step is due (``Walk``).
///
/// A step is due when it has written enough to bound memory, or when the next write might not fit what is left of the
/// map: steps are sized to the map, so a small map grows several times during the work instead of filling (which
/// would throw `storageFull` and make the caller run the whole work again).
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
    /// What ended the write: a step that failed to commit or to begin the next. Rethrown by every later call
    /// (``checkUsable()``), so code that caught it can't go on writing in a transaction that has ended.
    private var failure: (any Error)?
    /// The bytes of map free when the step under way began.
    private var room: Int
    /// The map's page size.
    private let pageSize: Int

    /// A step commits once its writes reach this many puts or this many bytes of map (``WriteDemand/mapBytes``): the
    /// pages a transaction changes stay in memory until it commits, and index entries land on pages of their own.
    static let maximumPuts = 8_192
    static let maximumBytes = 8 << 20

    fileprivate init(environment: Environment, instrumentation: Instrumentation, commitsSteps: Bool) throws {
        self.environment = environment
        self.instrumentation = instrumentation
        self.commitsSteps = commitsSteps
        transaction = try Self.begin(environment)
        do {
            (room, pageSize) = try environment.freeBytesAndPageSize()
        } catch {
            transaction.abort()
            environment.growth.unlock()
            throw error
        }
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

    /// Commits the step under way and begins the next (``step(beforeCommit:reserving:)``) when it has written
    /// ``maximumPuts`` or ``maximumBytes``, or when a write of `bytes` more might not fit in half of what was free
    /// when it began — counting, at worst, a page copied for every write besides what it stores. Call it before each
    /// write, with no cursor of ``transaction`` open. Does nothing when steps don't commit.
    /// `beforeStep` runs when a step is due, before it commits: it closes the cursors still open (``Walk/park()``).
    func stepIfDue(
        before bytes: Int, beforeStep: () -> Void = {}, beforeCommit: (Transaction) throws -> Void
    ) throws {
        try checkUsable()
        guard commitsSteps else { return }
        let demand = transaction.demand
        var next = WriteDemand()
        next.record(key: 0, value: bytes)
        let (needed, overflow) = demand.worstCaseBytes(pageSize: pageSize)
            .addingReportingOverflow(next.worstCaseBytes(pageSize: pageSize))
        guard
            overflow || needed > room / 2 || demand.puts >= Self.maximumPuts || demand.mapBytes >= Self.maximumBytes
        else { return }
        beforeStep()
        try step(beforeCommit: beforeCommit, reserving: next.worstCaseBytes(pageSize: pageSize))
    }

    /// Commits the current transaction — after `beforeCommit` wrote what must go with it — and begins the next,
    /// growing the map between them when less than half of it is free, or less than twice `bytes`. Does nothing when
    /// steps don't commit.
    /// - Throws: `storageFull` when the step filled the map (nothing of it is committed; the map has grown);
    ///   `backend` when a cursor of the transaction is open (a programmer error: committing would end it, and
    ///   growing the map would leave it reading pages no longer mapped).
    private func step(beforeCommit: (Transaction) throws -> Void, reserving bytes: Int) throws {
        guard commitsSteps else { return }
        guard transaction.openCursors == 0 else {
            throw PersistenceError(
                .backend, "a step of a stepped write was due while a cursor of its transaction was open")
        }
        do {
            try commit(beforeCommit)
            let (twice, overflow) = bytes.multipliedReportingOverflow(by: 2)
            try environment.growAheadOfNeed(
                reservingMultipleOfUsed: 0, reservingBytes: overflow ? .max : twice, instrumentation: instrumentation)
            transaction = try Self.begin(environment)
            isOpen = true
            room = try environment.freeBytesAndPageSize().free
        } catch {
            failure = error
            throw error
        }
    }

    /// Throws what ended the write early, if anything did: call before using ``transaction``.
    func checkUsable() throws {
        if let failure { throw failure }
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
                // `body` may have caught a step's failure: what it wrote since is lost with that step.
                try write.checkUsable()
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
