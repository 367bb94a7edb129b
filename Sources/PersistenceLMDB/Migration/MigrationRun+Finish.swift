internal import CLMDB
import Foundation
import PersistenceCore

extension MigrationRun {
    /// What keeps a migration without code from running, by entity and attribute names, checked before any change:
    /// a changed type, a new non-optional attribute or one no longer optional with no default, a changed primary
    /// key — in entities that have records. Empty when it can run.
    func blockersWithoutCode() throws -> [String] {
        var blockers: [String] = []
        for change in difference.changedEntities {
            guard let pass = entities[change.name], let layout = pass.new,
                try transaction.count(pass.store.dbi) > 0
            else { continue }
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
                        + "(declare one in defaultValues, or set it in a migration block)")
            }
            for attribute in change.nowRequired where !hasDefault(attribute) {
                blockers.append(
                    "'\(change.name).\(attribute)' is no longer optional and has no default for records holding nil")
            }
            if change.primaryKeyChanged { blockers.append("the primary key of '\(change.name)' changed") }
        }
        return blockers
    }

    /// Ends the migration: deletes removed entities, writes every record that changed in the new layout —
    /// checked against the new schema — rebuilds the indexes of every entity that changed, and persists the nonce
    /// counter. Throws `migrationFailed` naming entity and attribute for a record the new schema refuses.
    func finish(meta: MDB_dbi) throws {
        for name in order {
            guard let pass = entities[name] else { continue }
            guard let new = pass.new else {
                try environment.dropDatabase(named: "entity:" + name, in: transaction)
                for index in pass.old?.entity.indexes ?? [] {
                    try environment.dropDatabase(named: "index:" + index.name(in: name), in: transaction)
                }
                continue
            }
            let change = difference.changedEntities.first { $0.name == name }
            try checkPrimaryKey(pass)
            let recordsChange =
                change?.changesRecords == true || pass.mapping?.changesRecords == true || !pass.renamed.isEmpty
            let rewritesRecords = pass.form == .working || (pass.form == .old && recordsChange) || pass.touched
            let indexesChange = change.map { !$0.addedIndexes.isEmpty } ?? false
            guard rewritesRecords || indexesChange else { continue }
            try rewrite(pass, new, change: change, recordsToo: rewritesRecords)
        }
        if sealer.isEncrypted { try StoreMetadata.writeNumber(.nonceCounter, nonces.counter, meta, transaction) }
    }

    /// What the migration did, once ``finish(meta:)`` has run.
    func report(from oldVersion: UInt64, to newVersion: UInt64) throws -> MigrationReport {
        MigrationReport(
            fromVersion: Int(clamping: oldVersion), toVersion: Int(clamping: newVersion), changes: difference.clauses,
            entities: try order.compactMap { name in
                guard let pass = entities[name] else { return nil }
                return MigrationReport.EntityCounts(
                    name: name, recordsBefore: pass.recordsBefore,
                    recordsAfter: pass.new == nil ? 0 : try transaction.count(pass.store.dbi),
                    recordsRewritten: pass.recordsRewritten)
            })
    }

    /// A primary key can't change under stored records: their keys are its values.
    private func checkPrimaryKey(_ pass: EntityPass) throws {
        guard let old = pass.old, let new = pass.new, pass.form != .new else { return }
        let newKey = new.entity.primaryKey
        let source = pass.renamed[newKey] ?? newKey
        guard source != old.entity.primaryKey || old.entity.primaryKeyAttribute?.type != new.types[new.primaryKeyIndex]
        else { return }
        guard try transaction.count(pass.store.dbi) > 0 else { return }
        throw PersistenceError(
            .migrationFailed,
            "the primary key of '\(pass.name)' changed from '\(old.entity.primaryKey)' to '\(newKey)' and the entity "
                + "has records; delete its data in the migration block (deleteData(forType:)) and create the "
                + "objects anew")
    }

    /// Walks every record of `pass`: writes it in the new layout when `recordsToo`, and files it in every index
    /// (emptied before).
    private func rewrite(
        _ pass: EntityPass, _ layout: RecordLayout, change: SchemaDifference.EntityChange?, recordsToo: Bool
    ) throws {
        let store = pass.store
        let rebuilt = store.indexes.filter { needsRebuild($0.index, of: pass, change: change) }
        guard recordsToo || !rebuilt.isEmpty else { return }
        for index in rebuilt { try transaction.empty(index.dbi) }
        let total = try transaction.count(store.dbi)
        var completed = 0
        try report(pass, .rewriting, 0, total)
        try transaction.forEach(store.dbi) { keyBytes, stored in
            let key = Data(keyBytes)
            let (old, decoded) = try values(of: stored, key: keyBytes, in: pass)
            guard var values = decoded else { throw RecordCodec.damaged() }
            if recordsToo {
                values = try conforming(values, layout, change: change)
                try put(new: values, old: old, key: key, in: pass, form: .new)
                pass.recordsRewritten += 1
            }
            for index in rebuilt {
                guard let indexKey = sealer.indexKey(of: values, in: index) else { continue }
                guard try transaction.put(index.dbi, indexKey, key, flags: index.index.isUnique ? MDB_NOOVERWRITE : 0)
                else {
                    throw PersistenceError(
                        .migrationFailed,
                        "records of '\(pass.name)' share values in the unique index on "
                            + index.index.attributes.joined(separator: ", "))
                }
            }
            completed += 1
            try report(pass, .rewriting, completed, total)
            return true
        }
        if completed != total { try report(pass, .rewriting, completed, completed) }
        pass.form = .new
    }

    /// Whether an index's entries may differ from what it holds: it is new or changed, records were created or
    /// deleted, or an indexed attribute's values may have changed (set by the migration code, converted to a new type,
    /// filled with a default, renamed). An index whose entries are the same is kept as it is — rebuilding it costs a
    /// keyed digest and an insert at a random place per record.
    private func needsRebuild(_ index: Index, of pass: EntityPass, change: SchemaDifference.EntityChange?) -> Bool {
        guard pass.old != nil, !pass.membershipChanged, pass.form != .new else { return true }
        guard let change else { return !Set(index.attributes).isDisjoint(with: pass.changedAttributes) }
        if change.addedIndexes.contains(index) { return true }
        var changing = pass.changedAttributes.union(change.retypedAttributes.map(\.name)).union(change.nowRequired)
        changing.formUnion(pass.renamed.keys)
        changing.formUnion(change.addedAttributes.map(\.name))
        return !Set(index.attributes).isDisjoint(with: changing)
    }

    /// The values as the new schema stores them, or `migrationFailed` naming the first attribute that refuses its
    /// value (by storage class, never the value).
    private func conforming(
        _ values: [Value], _ layout: RecordLayout, change: SchemaDifference.EntityChange?
    ) throws -> [Value] {
        var conformed = values
        for (position, attribute) in layout.entity.attributes.enumerated() {
            if let value = attribute.conforming(values[position]) {
                conformed[position] = value
                continue
            }
            let name = "'\(layout.entity.name).\(attribute.name)'"
            if let retyped = change?.retypedAttributes.first(where: { $0.name == attribute.name }) {
                throw PersistenceError(
                    .migrationFailed,
                    "\(name) changed type from \(retyped.from.rawValue) to \(retyped.to.rawValue) and a record still "
                        + "holds \(values[position].storageClassName); convert it in the migration block "
                        + "(enumerateObjects)")
            }
            if values[position].isNull {
                throw PersistenceError(
                    .migrationFailed,
                    "\(name) is not optional and a record holds nil after the migration; declare a default in "
                        + "defaultValues or set it in the migration block")
            }
            throw PersistenceError(
                .migrationFailed,
                "\(name) is declared \(attribute.type.rawValue) and a record holds "
                    + "\(values[position].storageClassName) after the migration")
        }
        return conformed
    }
}
