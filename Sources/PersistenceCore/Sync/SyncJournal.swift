import Foundation

/// What a synced store keeps of its sync beside the data: which records changed locally since they were last pushed
/// (the outbox), the server's version of each record it knows, and the client's id, outbox sequence and pull cursor.
///
/// A store is synced when its model includes the journal's entities (``Model/synced()``). Every write transaction of
/// such a store — whichever process runs it, whether or not a sync client is attached — notes the records it changed
/// in the journal **in the same transaction**, just before it commits (``TransactionDriver``): a committed local write
/// is always in the outbox, and a write that rolls back leaves nothing there. The sync client (`PersistenceSync`)
/// pushes the journal's pending records and applies pulled ones, marking its own transactions so that they aren't
/// noted as local changes (``markRemoteApply()``).
package final class SyncJournal: Sendable {
    /// The names of the entities whose changes are noted: the model's, except the journal's own.
    private let synced: Set<String>

    /// The journal of a store of `model`, or `nil` when the model isn't synced.
    package init?(model: Model) {
        guard model.isSynced else { return nil }
        synced = Set(model.entities.map { $0.entityName }).subtracting(SyncJournalNames.all)
    }

    /// Notes every record that `recorder`'s transaction changed as pending under one new outbox sequence, unless the
    /// transaction applied pulled changes.
    /// - Throws: ``PersistenceError/Code/untrackedWrite`` when the transaction ran raw SQL that changed tables it
    ///   can't name (its changes couldn't be pushed); what `context` throws.
    package func note(_ recorder: ChangeRecorder, in context: some DatabaseContext) throws {
        guard !recorder.appliesRemoteChanges else { return }
        if recorder.touchedEverything {
            throw PersistenceError(
                .untrackedWrite,
                "a synced store's write ran raw SQL: its changes can't be pushed; write through the typed API")
        }
        let changed = recorder.changedKeys().filter { synced.contains($0.entity) }
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

    /// Every record the calling write transaction of a synced store changed so far, per entity (cascades of delete
    /// rules included); empty outside one.
    package static func currentChanges() -> [(entity: String, keys: [Value])] {
        ChangeRecorder.current?.changedKeys() ?? []
    }

    /// The records not stored that pulled changes of the calling write transaction referred to (see
    /// ``ChangeRecorder/danglingReferences``).
    package static func currentDanglingReferences() -> [DanglingReference] {
        ChangeRecorder.current?.danglingReferences ?? []
    }

    /// Marks the calling write transaction as one that applies pulled changes: its changes aren't noted as local.
    /// - Throws: ``PersistenceError/Code/invalidArgument`` outside a write transaction of a synced store.
    package static func markRemoteApply() throws {
        guard let recorder = ChangeRecorder.current else {
            throw PersistenceError(.invalidArgument, "pulled changes are applied only in a write of a synced store")
        }
        recorder.appliesRemoteChanges = true
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
        return model
    }

    /// Whether the model includes the sync journal's entities (``synced()``).
    public var isSynced: Bool { SyncJournalNames.all.isSubset(of: Set(entities.map { $0.entityName })) }
}

/// The names of the sync journal's entities.
package enum SyncJournalNames {
    package static let all: Set<String> = [SyncRecordState.entityName, SyncClientState.entityName]
}
