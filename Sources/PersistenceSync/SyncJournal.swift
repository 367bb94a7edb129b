import Foundation
@_spi(PersistenceBackend) public import PersistenceCore

/// What a synced store keeps of its sync beside the data: which records changed locally since they were last pushed
/// (the outbox), the server's version of each record it knows, and the client's id, outbox sequence and pull cursor.
///
/// A store is synced when its model includes the journal's entities and carries the journal as a hook
/// (`Model.synced()`). Every write transaction of such a store — whichever process runs it, whether
/// or not a sync client is attached — notes the records it changed in the journal **in the same transaction**, just
/// before it commits (the core runs the model's will-commit hooks there): a committed local write is always in the
/// outbox, and a write that rolls back leaves nothing there. The sync client pushes the journal's pending records and
/// applies pulled ones in writes with `WriteOptions.appliesRemoteChanges`, which the journal doesn't note as local
/// changes.
struct SyncJournal: WillCommitHook {
    /// Notes every record that `changes`' transaction changed as pending under one new outbox sequence, unless the
    /// transaction applied remote changes.
    /// - Throws: ``PersistenceError/Code/untrackedWrite`` when the transaction ran raw SQL that changed tables it
    ///   can't name (its changes couldn't be pushed); what `context` throws.
    func willCommit(_ changes: ChangeRecorder, in context: some DatabaseContext) throws {
        guard !changes.appliesRemoteChanges else { return }
        if changes.touchedEverything {
            throw PersistenceError(
                .untrackedWrite,
                "a synced store's write ran raw SQL: its changes can't be pushed; write through the typed API")
        }
        let changed = changes.changedKeys().filter { !SyncJournalNames.all.contains($0.entity) }
        guard !changed.isEmpty else { return }
        var client = try SyncClientState.current(in: context)
        client.lastSequence += 1
        try context.upsert(client)
        for (entity, keys) in changed {
            for key in keys {
                let id = SyncRecordState.id(entity: entity, key: key)
                var state =
                    try context.recover(SyncRecordState.self, id: id) ?? SyncRecordState(entity: entity, key: key)
                state.pending = client.lastSequence
                try context.upsert(state)
            }
        }
    }
}

extension Model {
    /// This model with the entities a synced store keeps its sync journal in: every write of a store of the model
    /// notes the records it changed, in the same transaction, for a sync client to push (`PersistenceSync`).
    ///
    /// ```swift
    /// let model = Model(version: 1, entities: [Project.self, Task.self]).synced()
    /// let database = try SQLiteBuilder(databaseName: "App", model: model).create()
    /// ```
    ///
    /// Adding the journal to an existing store's model is a migration that adds two entities; records written before
    /// aren't pending (the first sync pulls the server's and pushes only what changes afterwards).
    public func synced() -> Model {
        let names = Set(entities.map { $0.entityName })
        var model = self
        for type in [SyncRecordState.self, SyncClientState.self] as [any Entity.Type]
        where !names.contains(type.entityName) {
            model.entities.append(type)
        }
        return model.hooks.contains(where: { $0 is SyncJournal }) ? model : model.adding(SyncJournal())
    }

    /// Whether the model includes the sync journal's entities and notes writes in it (``synced()``).
    public var isSynced: Bool {
        SyncJournalNames.all.isSubset(of: Set(entities.map { $0.entityName }))
            && hooks.contains(where: { $0 is SyncJournal })
    }
}

/// The names of the sync journal's entities.
package enum SyncJournalNames {
    package static let all: Set<String> = [SyncRecordState.entityName, SyncClientState.entityName]
}
