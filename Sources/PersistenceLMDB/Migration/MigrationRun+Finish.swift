internal import CLMDB
import Foundation
import PersistenceCore

extension MigrationRun {
    /// What keeps a migration without code from running, by entity and attribute names, checked before any change —
    /// the rules of an inferred step on the SQL backends (``MigrationStepPlan/blocker(_:mapped:requiresSameTypes:)``):
    /// a type changed other than by widening, an added attribute or one no longer optional with no default, a
    /// changed primary key — in entities that have records. Empty when it can run.
    func blockersWithoutCode() throws -> [String] {
        var blockers: [String] = []
        for name in order {
            guard let pass = entities[name], let mapping = pass.mapping, try transaction.count(pass.store.dbi) > 0,
                let blocker = MigrationStepPlan.blocker(mapping, mapped: [], requiresSameTypes: true)
            else { continue }
            blockers.append(blocker)
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
            let indexesChange = pass.store.indexes.contains { needsRebuild($0.index, of: pass, change: change) }
            guard rewritesRecords || indexesChange else { continue }
            try rewrite(pass, new, change: change, recordsToo: rewritesRecords)
        }
        try renameAliasTargets()
        if sealer.isEncrypted { try StoreMetadata.writeNumber(.nonceCounter, nonces.counter, meta, transaction) }
    }

    /// Makes aliases naming records of an entity the model renamed name them by its new name, as the SQL backends'
    /// migrations do (records keep their primary keys).
    private func renameAliasTargets() throws {
        let renamed = entities.values.reduce(into: [String: String]()) { renamed, pass in
            if let old = pass.old?.entity.name, old != pass.name { renamed[old] = pass.name }
        }
        guard !renamed.isEmpty else { return }
        let aliases = try environment.database(named: StoredAlias.databaseName, flags: 0, in: transaction)
        var rewritten: [(key: Data, target: AliasTarget)] = []
        try transaction.forEach(aliases) { keyBytes, stored in
            let key = Data(keyBytes)
            var target = try StoredAlias.open(stored, key: key, sealer)
            if let new = renamed[target.entity] {
                target.entity = new
                rewritten.append((key, target))
            }
            return true
        }
        for (key, target) in rewritten {
            try transaction.put(aliases, key, StoredAlias.seal(target, key: key, sealer) { try nextNonce() })
        }
    }

    /// The schema changes, one clause each: declared renames, then the difference.
    var clauses: [String] { renameClauses + difference.clauses }

    /// What the migration did, once ``finish(meta:)`` has run: shaped as the SQL backends' report of a one-step chain
    /// (`changes` prefixed with the versions, one step — `mapped` when a migration block ran, else `inferred`).
    func report(from oldVersion: Int, to newVersion: Int, ranBlock: Bool) throws -> MigrationReport {
        let counts = try order.compactMap { name -> MigrationReport.EntityCounts? in
            guard let pass = entities[name] else { return nil }
            return MigrationReport.EntityCounts(
                name: name, recordsBefore: pass.recordsBefore,
                recordsAfter: pass.new == nil ? 0 : try transaction.count(pass.store.dbi),
                recordsRewritten: pass.recordsRewritten)
        }
        let step = MigrationReport.Step(
            fromVersion: oldVersion, toVersion: newVersion, kind: ranBlock ? .mapped : .inferred, changes: clauses,
            entities: counts)
        return MigrationReport(
            fromVersion: oldVersion, toVersion: newVersion,
            changes: clauses.map { "\(oldVersion) → \(newVersion): \($0)" }, entities: counts, steps: [step])
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
                    let cause = PersistenceError(
                        .uniqueViolation,
                        "records of '\(pass.name)' share values in the unique index on "
                            + index.index.attributes.joined(separator: ", "))
                    throw PersistenceError(.migrationFailed, cause.message, underlyingError: cause)
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
        guard let old = pass.old, !pass.membershipChanged, !pass.moved, pass.form != .new else { return true }
        // A database the stored schema didn't have (new, changed, or named after a renamed attribute) starts empty.
        guard old.entity.indexes.contains(where: { $0.name(in: old.entity.name) == index.name(in: pass.name) }) else {
            return true
        }
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
