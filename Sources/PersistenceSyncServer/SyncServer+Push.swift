import Foundation
@_spi(PersistenceBackend) import PersistenceCore
import PersistencePostgres
import PersistenceSQL
public import PersistenceSync

extension SyncServer {
    /// Applies a client's push in one transaction: each outbox sequence the client pushed before is skipped
    /// (`SyncPushResult.Kind.alreadyApplied`), each change made on the server's current version of its record is
    /// applied, and each other one is settled by its entity's ``ConflictPolicy``.
    ///
    /// The batch is applied set-based: the stored records and their versions read in a statement per entity, the
    /// decisions made in memory (a merge policy's block runs once per change), the records written in a multi-row
    /// statement per entity; a write the store refuses (a unique index, a missing reference) makes the batch's writes
    /// go again one by one, so that only that change is rejected.
    /// - Throws: `unknownEntity` or `invalidValue` for a change the
    ///   server's model can't hold (nothing of the push is applied); what the store throws.
    /// - Parameters:
    ///   - push: The client's batch.
    ///   - access: What the client may sync (the HTTP handler's authentication decides; the direct transport's
    ///     clients are trusted with everything). A change to a record outside the push's scopes — before or after
    ///     it — is rejected, and comes back as a deletion (the client holds no such record).
    /// - Throws: `unauthorized` for scopes `access` doesn't permit,
    ///   `updateRequired` for a client of an older model.
    public func push(_ push: SyncPush, access: SyncAccess = .everything) async throws -> SyncPushResult {
        try checkModelVersion(push.modelVersion)
        let batch = PushBatch(
            push: push, scopes: try ResolvedScopes(push.scopes, access: access, definitions: self.scopes),
            entities: entities, policies: policies)
        // Records decoded before the transaction. A batch that runs no delete rule locks what it reads and refers to,
        // and runs at once with other pushes. One that does runs serializable, and pushes take turns (a lock of the
        // store's): they'd read and write the same index pages, so concurrent serializable ones would nearly all fail
        // each other.
        guard !batch.locksRows else {
            return try await collisionRetries.run {
                try await database.writeLockingRows { context in try batch.apply(in: context) }
            }
        }
        let key = pushLockKey
        return try await collisionRetries.run {
            try await database.write(takingTurnsOn: key) { context in try batch.apply(in: context) }
        }
    }
}
