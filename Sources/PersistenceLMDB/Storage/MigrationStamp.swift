internal import CLMDB
import Foundation
import PersistenceCore
import Synchronization

/// What keeps a database from using its store after another process began or finished migrating it.
///
/// A migration writes its own databases in steps that each commit and then switches to them (``DatabaseNames``),
/// dropping the ones it replaced; a database opened before holds handles of those, in the old layout. Written to
/// while a migration is under way, its records would be lost at the switch; read or written after it, LMDB would
/// look up databases that are gone (reads finding nothing, writes landing on freed pages). So every transaction
/// checks, before its block runs, that the store is still the one it opened: the metadata's `migrated` (the token of
/// the last migration that switched) is the one read at opening, and a write finds no migration under way
/// (`migration`). Only another process's commit can change either, so a transaction reads them only when one
/// committed since the last check (LMDB's transaction ids tell), and costs an atomic load otherwise.
final class MigrationStamp: Sendable {
    /// The `migrated` token the store had when this database opened.
    private let opened: Data?
    /// The store's schema version as this database opened it, for the message.
    private let schemaVersion: Int
    /// The last committed transaction up to which the store was found unchanged (for reads), and with no migration
    /// under way (for writes).
    private let readsCheckedThrough = Atomic<Int>(0)
    private let writesCheckedThrough = Atomic<Int>(0)

    /// Reads the stamp in the transaction that opens the database.
    init(_ meta: MDB_dbi, _ transaction: Transaction, schemaVersion: Int) throws {
        opened = try StoreMetadata.read(.migrated, meta, transaction)
        self.schemaVersion = schemaVersion
        let last = Self.lastCommitted(transaction)
        readsCheckedThrough.store(last, ordering: .relaxed)
        if try StoreMetadata.read(.migration, meta, transaction) == nil {
            writesCheckedThrough.store(last, ordering: .relaxed)
        }
    }

    /// The last committed transaction `transaction` sees: a read's own id, one less than a write's.
    private static func lastCommitted(_ transaction: Transaction) -> Int {
        transaction.isReadOnly ? transaction.id : transaction.id - 1
    }

    /// Checks, at the start of a transaction, that no other process migrated the store since it opened, nor (for a
    /// write) is migrating it now.
    /// - Throws: `busy` when a write finds a migration under way; `invalidConfiguration` when the store was migrated
    ///   (open it again with a builder of its new version).
    func check(_ meta: MDB_dbi, _ transaction: Transaction) throws {
        let last = Self.lastCommitted(transaction)
        let checked =
            transaction.isReadOnly
            ? readsCheckedThrough.load(ordering: .relaxed) : writesCheckedThrough.load(ordering: .relaxed)
        guard last > checked else { return }
        if try StoreMetadata.read(.migrated, meta, transaction) != opened {
            let version = try StoreMetadata.readNumber(.schemaVersion, meta, transaction).map(String.init) ?? "?"
            throw PersistenceError(
                .invalidConfiguration,
                "another process migrated the store from schema version \(schemaVersion) to \(version) since this "
                    + "database opened it; open it again with a builder of schema version \(version)")
        }
        if !transaction.isReadOnly, try StoreMetadata.read(.migration, meta, transaction) != nil {
            // Not remembered as checked: the next write looks again.
            throw PersistenceError(
                .busy, "another process is migrating the store; a write now would be lost at the migration's end")
        }
        readsCheckedThrough.store(last, ordering: .relaxed)
        if !transaction.isReadOnly { writesCheckedThrough.store(last, ordering: .relaxed) }
    }
}
