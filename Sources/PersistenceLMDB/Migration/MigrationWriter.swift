internal import CLMDB
import Foundation
import PersistenceCore

/// What a migration on LMDB writes with, whatever its code — a migration block (``MigrationRun``) or a plan's
/// mapping-model steps (``LMDBMigrationStep``): the steps of a ``SteppedWrite``, the store's sealer and the nonces it
/// seals with, the names of the migration's own databases, and the walk over a database that a step may commit in.
final class MigrationWriter {
    /// The steps the migration writes in; ``transaction`` is the current step's.
    let write: SteppedWrite
    let environment: Environment
    let sealer: ValueSealer
    /// The migration's token: every database the migration makes has a name ending in `@<token>`, so that a failed
    /// or interrupted migration's databases can be found and dropped (see ``StoreOpening``).
    let token: String
    private(set) var nonces: NonceSequence
    /// The walks under way (``scan(_:_:)``), whose cursors a step closes first.
    private var walks: [Walk] = []

    var transaction: Transaction { write.transaction }

    init(write: SteppedWrite, environment: Environment, sealer: ValueSealer, token: String, nonceCounter: UInt64) {
        self.write = write
        self.environment = environment
        self.sealer = sealer
        self.token = token
        nonces = NonceSequence(startingAt: nonceCounter)
    }

    /// The physical name of one of the migration's own databases for `logical` (`entity:Person@<token>`), with a
    /// `tag` telling apart the databases of one logical name that a chain's steps make (`entity:Person#2@<token>`).
    func ownName(_ logical: String, tag: String? = nil) -> String {
        logical + (tag.map { "#" + $0 } ?? "") + "@" + token
    }

    /// Whether a physical name is one of this migration's own databases (which it may change and drop at will; the
    /// stored ones it only reads until the switch).
    func owns(_ physical: String) -> Bool { physical.hasSuffix("@" + token) }

    /// The next nonce of the migration's writes.
    func nextNonce() throws -> Nonce { try nonces.next() }

    /// Called before each write of about `bytes`: commits the step under way first, and grows the map, when the step
    /// has written enough or the write might not fit (``SteppedWrite/stepIfDue(before:beforeStep:beforeCommit:)``),
    /// after closing the cursors of the walks under way (``scan(_:_:)``). So a step may come at any write — inside
    /// the migration code's closures too.
    func prepareWrite(_ bytes: Int) throws {
        try write.stepIfDue(
            before: bytes, beforeStep: { for walk in walks { walk.park() } }, beforeCommit: persistNonces)
    }

    /// Writes the nonce counter the migration reached, so that nonces are never reused under the store's key — the
    /// migration's databases' pages stay in the file even when they are discarded.
    func persistNonces(_ transaction: Transaction) throws {
        guard sealer.isEncrypted else { return }
        let meta = try environment.database(named: StoreMetadata.databaseName, flags: 0, in: transaction)
        try StoreMetadata.writeNumber(.nonceCounter, nonces.counter, meta, transaction)
        environment.noteNonces(upTo: nonces.counter)
    }

    /// Calls `body` with each key and stored value of `dbi` in key order, copied out; `body` returns `false` to stop.
    ///
    /// `body` may write — to `dbi` too — and steps may commit and grow the map at any of its writes, or in a walk
    /// nested in it (a ``Walk`` keeps its cursor only while it may). A record written after the last one visited is
    /// visited; callers skip what they created themselves.
    func scan(_ dbi: MDB_dbi, _ body: (_ key: Data, _ stored: Data) throws -> Bool) throws {
        let walk = Walk(dbi)
        walks.append(walk)
        defer {
            walk.park()
            walks.removeAll { $0 === walk }
        }
        while true {
            try write.checkUsable()
            guard let (key, stored) = try walk.next(in: transaction) else { return }
            guard try body(key, stored) else { return }
        }
    }

    /// Seals `values` as a record of `store` under `key` and puts it, stepping first when due; `false` when
    /// `flags` holds `MDB_NOOVERWRITE` and the key was taken.
    func put(_ values: [Value], key: Data, in store: EntityStore, flags: Int32 = 0) throws -> Bool {
        let write = { (sealed: UnsafeRawBufferPointer) throws -> Bool in
            try self.prepareWrite(key.count + sealed.count)
            return try self.transaction.put(store.dbi, key, bytes: sealed, flags: flags)
        }
        return try sealer.withSealed(values, entity: store, key: key, nonce: { try nonces.next() }, write)
    }

    /// Rewrites the aliases naming records of the entities `renamed` maps (old name → new name), which keep their
    /// primary keys. Call it last before the switch: the stored aliases database is written in place, so the
    /// rewrites go into the transaction the switch commits in — one step is taken, if due, before the first of them
    /// and none between them — and a store is never left with its aliases renamed but its entities not.
    func renameAliasTargets(_ renamed: [String: String]) throws {
        guard !renamed.isEmpty else { return }
        let aliases = try environment.database(named: StoredAlias.databaseName, flags: 0, in: transaction)
        var rewritten: [(key: Data, sealed: Data)] = []
        try transaction.forEach(aliases) { keyBytes, stored in
            let key = Data(keyBytes)
            var target = try StoredAlias.open(stored, key: key, sealer)
            if let new = renamed[target.entity] {
                target.entity = new
                rewritten.append((key, try StoredAlias.seal(target, key: key, sealer) { try nextNonce() }))
            }
            return true
        }
        guard !rewritten.isEmpty else { return }
        try prepareWrite(rewritten.reduce(0) { $0 + $1.key.count + $1.sealed.count })
        // A step may have committed: the aliases database's handle stays valid, the transaction is the next one's.
        for (key, sealed) in rewritten { try transaction.put(aliases, key, sealed) }
    }
}
