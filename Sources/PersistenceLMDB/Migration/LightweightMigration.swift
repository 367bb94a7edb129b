internal import CLMDB
import Foundation
import PersistenceCore

/// Brings a store written with an older schema version up to the current model without user code, inside the
/// write transaction that opens the store: all of it commits, or nothing does.
///
/// What it does alone: creates added entities, deletes removed entities' data, drops removed attributes from every
/// stored record, writes `nil` (or the declared ``Entity/defaultValues`` default) into added attributes, fills
/// `nil`s of attributes that are no longer optional with their default, and drops, creates and rebuilds indexes.
/// What it refuses, before any change, with `migrationFailed` naming entity and attribute: a changed type, a new
/// non-optional attribute or an attribute no longer optional with no default, a changed primary key.
struct LightweightMigration {
    let difference: SchemaDifference
    /// The current model's layouts (with their declared defaults), by entity name.
    let current: [String: RecordLayout]

    init(stored: [EntityDescription], current layouts: [RecordLayout]) {
        difference = SchemaDifference(stored: stored, current: layouts.map(\.entity))
        current = Dictionary(layouts.map { ($0.entity.name, $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// What blocks the migration, by names only; empty when it can run.
    var blockers: [String] {
        var blockers: [String] = []
        for change in difference.changedEntities {
            guard let layout = current[change.name] else { continue }
            func hasDefault(_ attribute: String) -> Bool {
                layout.position(of: attribute).flatMap { layout.defaults[$0] } != nil
            }
            for retyped in change.retypedAttributes {
                blockers.append(
                    "'\(change.name).\(retyped.name)' changed type from \(retyped.from.rawValue) to "
                        + "\(retyped.to.rawValue); converting it needs a migration block")
            }
            for attribute in change.addedAttributes where !attribute.isOptional && !hasDefault(attribute.name) {
                blockers.append(
                    "'\(change.name).\(attribute.name)' was added, is not optional and has no default "
                        + "(declare one in defaultValues)")
            }
            for attribute in change.nowRequired where !hasDefault(attribute) {
                blockers.append(
                    "'\(change.name).\(attribute)' is no longer optional and has no default for records holding nil")
            }
            if change.primaryKeyChanged { blockers.append("the primary key of '\(change.name)' changed") }
        }
        return blockers
    }

    /// Runs the migration in `transaction`, sealing rewritten records with `sealer` and fresh nonces.
    func run(_ transaction: Transaction, environment: Environment, sealer: ValueSealer, meta: MDB_dbi) throws {
        let blockers = blockers
        guard blockers.isEmpty else {
            throw PersistenceError(.migrationFailed, "the store can't be migrated: " + blockers.joined(separator: "; "))
        }
        var nonces = NonceSequence(startingAt: try StoreMetadata.readNumber(.nonceCounter, meta, transaction) ?? 0)
        for entity in difference.removedEntities {
            try environment.dropDatabase(named: "entity:" + entity.name, in: transaction)
            for index in entity.indexes {
                try environment.dropDatabase(named: "index:" + index.name(in: entity.name), in: transaction)
            }
        }
        for change in difference.changedEntities {
            guard let layout = current[change.name] else { continue }
            for index in change.removedIndexes {
                try environment.dropDatabase(named: "index:" + index.name(in: change.name), in: transaction)
            }
            let store = try EntityStore(layout: layout, environment: environment, transaction: transaction)
            for index in store.indexes { try transaction.empty(index.dbi) }
            let old = RecordLayout(change.stored)
            try rewrite(store, from: old, rewritingRecords: change.changesRecords, transaction, sealer, &nonces)
        }
        if sealer.isEncrypted { try StoreMetadata.writeNumber(.nonceCounter, nonces.counter, meta, transaction) }
    }

    /// Walks every record of `store`: re-seals it in the new layout when its attributes changed, and files it in
    /// every index (emptied before).
    private func rewrite(
        _ store: EntityStore, from old: RecordLayout, rewritingRecords: Bool, _ transaction: Transaction,
        _ sealer: ValueSealer, _ nonces: inout NonceSequence
    ) throws {
        let layout = store.layout
        // Where each new attribute comes from in the old record, or nil for an added one.
        let sources = layout.names.map { old.position(of: $0) }
        try transaction.forEach(store.dbi) { keyBytes, stored in
            let key = Data(keyBytes)
            let oldValues = try key.withUnsafeBytes { try sealer.open(stored, entity: store, key: $0) }
            guard oldValues.count == old.names.count else {
                throw PersistenceError(.corrupt, "a stored '\(layout.entity.name)' record has the wrong shape")
            }
            var values = oldValues
            if rewritingRecords {
                values = zip(sources, layout.defaults).map { source, fallback in
                    let value = source.map { oldValues[$0] } ?? .null
                    return value.isNull ? fallback ?? .null : value
                }
                let sealed = try sealer.seal(values, entity: store, key: key) { try nonces.next() }
                try transaction.put(store.dbi, key, sealed)
            }
            for index in store.indexes {
                guard let indexKey = sealer.indexKey(of: values, in: index) else { continue }
                guard try transaction.put(index.dbi, indexKey, key, flags: index.index.isUnique ? MDB_NOOVERWRITE : 0)
                else {
                    throw PersistenceError(
                        .migrationFailed,
                        "records of '\(layout.entity.name)' share values in the new unique index on "
                            + index.index.attributes.joined(separator: ", "))
                }
            }
            return true
        }
    }
}
