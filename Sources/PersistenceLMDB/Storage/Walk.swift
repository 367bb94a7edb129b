internal import CLMDB
import Foundation

/// A walk over one database in key order that may span the steps of a ``SteppedWrite``: one `MDB_NEXT` a record while
/// its cursor may stay, its place found again by key (``Transaction/seek(_:after:)``) when it may not.
///
/// The cursor stays while nothing but reads happened to the database through the transaction since the last record;
/// after a change to it (``Transaction/changeCount(of:)``) the walk seeks after the last key it returned, as the
/// database is then — so a record written after that key is visited, and one deleted isn't, whatever the cursor's
/// position would say. A step's commit ends the transaction's cursors and the map may grow before the next one, so
/// whoever steps first calls ``park()`` on every walk under way.
final class Walk {
    let dbi: MDB_dbi
    private var cursor: OpaquePointer?
    /// The transaction ``cursor`` belongs to.
    private var transaction: Transaction?
    /// The database's ``Transaction/changeCount(of:)`` when the cursor last moved.
    private var changesSeen = 0
    /// The key last returned.
    private var last: Data?

    init(_ dbi: MDB_dbi) { self.dbi = dbi }

    deinit { park() }

    /// The record after the last one returned (the first, at first), copied out; `nil` past the last.
    func next(in transaction: Transaction) throws -> (key: Data, value: Data)? {
        let found: (key: Data, value: Data)?
        if let cursor, self.transaction === transaction, transaction.changeCount(of: dbi) == changesSeen {
            found = try transaction.next(cursor)
        } else {
            park()
            let cursor = try transaction.openCursor(dbi)
            self.cursor = cursor
            self.transaction = transaction
            found = try transaction.seek(cursor, after: last)
        }
        changesSeen = transaction.changeCount(of: dbi)
        if let found { last = found.key }
        return found
    }

    /// Closes the cursor, if open: the next record is then found by key.
    func park() {
        if let cursor, let transaction { transaction.closeCursor(cursor) }
        cursor = nil
        transaction = nil
    }
}
