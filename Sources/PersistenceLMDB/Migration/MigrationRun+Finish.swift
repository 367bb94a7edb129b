internal import CLMDB
import Foundation
import PersistenceCore

extension MigrationRun {
    /// What keeps a migration without code from running, by entity and attribute names, checked before any change —
    /// the rules of an inferred step on the SQL backends (``MigrationRules/blocker(_:mapped:requiresSameTypes:)``):
    /// a type changed other than by widening, an added attribute or one no longer optional with no default, a
    /// changed primary key — in entities that have records. Empty when it can run.
    func blockersWithoutCode() throws -> [String] {
        var blockers: [String] = []
        for name in order {
            guard let pass = entities[name], let mapping = pass.mapping, let live = pass.live,
                try transaction.count(live.dbi) > 0,
                let blocker = MigrationRules.blocker(mapping, mapped: [], requiresSameTypes: true)
            else { continue }
            blockers.append(blocker)
        }
        return blockers
    }

    /// Ends the migration's work: writes into the shadows every record that changed — in the new layout, checked
    /// against the new schema — and the indexes whose entries may differ, and rewrites the aliases of renamed
    /// entities. The stored databases are untouched: ``switchedNames()`` says what replaces them. Throws
    /// `migrationFailed` naming entity and attribute for a record the new schema refuses.
    func finish() throws {
        for name in order {
            guard let pass = entities[name], let new = pass.new else { continue }
            let change = difference.changedEntities.first { $0.name == name }
            try checkPrimaryKey(pass)
            let recordsChange =
                change?.changesRecords == true || pass.mapping?.changesRecords == true || !pass.renamed.isEmpty
                || pass.moved
            let rewritesRecords = pass.form != .old || recordsChange || pass.touched
            let rebuilt = try shadowStoreIfNeeded(pass, rewritesRecords).map { shadow in
                shadow.indexes.filter { needsRebuild($0.index, of: pass, change: change) }
            }
            guard rewritesRecords || !(rebuilt ?? []).isEmpty else { continue }
            try rewrite(pass, new, change: change, recordsToo: rewritesRecords, rebuilt: rebuilt ?? [])
        }
        try renameAliasTargets()
    }

    /// The shadow of an entity the end will write to: when its records are rewritten, or an index of it may differ.
    private func shadowStoreIfNeeded(_ pass: EntityPass, _ rewritesRecords: Bool) throws -> EntityStore? {
        if rewritesRecords || pass.shadow != nil { return try shadowStore(pass) }
        guard let new = pass.new,
            new.entity.indexes.contains(where: { needsRebuild($0, of: pass, change: nil) })
                || difference.changedEntities.contains(where: { $0.name == pass.name })
        else { return nil }
        return try shadowStore(pass)
    }

    /// The stored databases' names once the migration's shadows replace them: what the switch writes. Every entity's
    /// records and indexes resolve to the database that holds them in the new schema; removed entities and indexes
    /// are gone from the map.
    func switchedNames() -> DatabaseNames {
        var switched = names
        for name in order {
            guard let pass = entities[name] else { continue }
            // What the stored entity had under its stored name, first: gone, or replaced below.
            if let old = pass.old?.entity {
                switched.remove(DatabaseNames.entity(old.name))
                for index in old.indexes { switched.remove(DatabaseNames.index(index, of: old.name)) }
            }
            guard let new = pass.new?.entity else { continue }
            let records = DatabaseNames.entity(new.name)
            if pass.replacesRecords, let shadow = pass.shadow {
                switched.map(records, to: shadow.databaseName)
            } else if let live = pass.live {
                switched.map(records, to: live.databaseName)
            }
            for index in new.indexes {
                let logical = DatabaseNames.index(index, of: new.name)
                if pass.rebuiltIndexes.contains(index),
                    let shadow = pass.shadow?.indexes.first(where: { $0.index == index })
                {
                    switched.map(logical, to: shadow.databaseName)
                } else if let live = pass.live?.indexes.first(where: { $0.index == index }) {
                    switched.map(logical, to: live.databaseName)
                }
            }
        }
        return switched
    }

    /// Makes aliases naming records of an entity the model renamed name them by its new name, as the SQL backends'
    /// migrations do (records keep their primary keys). Aliases are few: rewritten in the step under way.
    private func renameAliasTargets() throws {
        try writer.renameAliasTargets(
            entities.values.reduce(into: [String: String]()) { renamed, pass in
                if let old = pass.old?.entity.name, old != pass.name { renamed[old] = pass.name }
            })
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
                recordsAfter: try recordsAfter(pass),
                recordsRewritten: pass.recordsRewritten)
        }
        let step = MigrationReport.Step(
            fromVersion: oldVersion, toVersion: newVersion, kind: ranBlock ? .mapped : .inferred, changes: clauses,
            entities: counts)
        return MigrationReport(
            fromVersion: oldVersion, toVersion: newVersion,
            changes: clauses.map { "\(oldVersion) → \(newVersion): \($0)" }, entities: counts, steps: [step])
    }

    /// The records an entity has once the migration is switched to.
    private func recordsAfter(_ pass: EntityPass) throws -> Int {
        guard pass.new != nil else { return 0 }
        let store = pass.replacesRecords ? pass.shadow : pass.source
        return try store.map { try transaction.count($0.dbi) } ?? 0
    }

    /// A primary key can't change under stored records: their keys are its values.
    private func checkPrimaryKey(_ pass: EntityPass) throws {
        guard let old = pass.old, let new = pass.new, pass.form != .new else { return }
        let newKey = new.entity.primaryKey
        let source = pass.renamed[newKey] ?? newKey
        guard source != old.entity.primaryKey || old.entity.primaryKeyAttribute?.type != new.types[new.primaryKeyIndex]
        else { return }
        guard let source = pass.source, try transaction.count(source.dbi) > 0 else { return }
        throw PersistenceError(
            .migrationFailed,
            "the primary key of '\(pass.name)' changed from '\(old.entity.primaryKey)' to '\(newKey)' and the entity "
                + "has records; delete its data in the migration block (deleteData(forType:)) and create the "
                + "objects anew")
    }

    /// Walks every record of `pass` in its current form: writes it into the shadow in the new layout when
    /// `recordsToo`, and files it in every index of `rebuilt` (the shadow's, emptied before).
    private func rewrite(
        _ pass: EntityPass, _ layout: RecordLayout, change: SchemaDifference.EntityChange?, recordsToo: Bool,
        rebuilt: [EntityStore.IndexStore]
    ) throws {
        for index in rebuilt { try transaction.empty(index.dbi) }
        pass.rebuiltIndexes = Set(rebuilt.map(\.index))
        guard let source = pass.source else {
            // Nothing stored or written yet (an added entity): its shadow, empty, is its records.
            pass.replacesRecords = recordsToo
            return
        }
        let total = try transaction.count(source.dbi)
        var completed = 0
        try report(pass, .rewriting, 0, total)
        try scan(source.dbi) { key, stored in
            let (old, decoded) = try values(of: stored, key: key, in: pass, from: source)
            guard var values = decoded else { throw RecordCodec.damaged() }
            if recordsToo {
                values = try layout.conformingMigrated(values, change: change)
                _ = try put(new: values, old: old, key: key, in: pass, form: .new)
                pass.recordsRewritten += 1
            }
            for index in rebuilt {
                guard let indexKey = sealer.indexKey(of: values, in: index) else { continue }
                try prepareWrite(indexKey.count + key.count)
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
        if recordsToo {
            pass.form = .new
            pass.replacesRecords = true
        }
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
}
