import Foundation
@_spi(PersistenceBackend) package import PersistenceCore

/// What a backend gives a migration block's run besides a step's storage: the stored records read in primary-key
/// order a page at a time, and scratch storage of its own — where the run keeps what the block wrote until the end —
/// inside the transaction that opens the store (nothing here commits).
///
/// Scratch records belong to one entity each and have a primary key, new values and, for a record the block didn't
/// create, the values it had before. They must come back exactly as they were put, whatever the entity's types (a
/// value the block hasn't converted yet is still of its old type).
package protocol MigrationScratch: AnyObject {
    /// Up to `limit` records of a stored entity whose primary keys come after `after` (from the first when `nil`),
    /// in primary-key order.
    func sourceRecords(_ layout: RecordLayout, after: Value?, limit: Int) throws -> [Record]
    /// The stored record with this primary key, or `nil`.
    func sourceRecord(_ layout: RecordLayout, key: Value) throws -> Record?
    /// The number of records of a stored entity.
    func sourceCount(_ layout: RecordLayout) throws -> Int

    /// Makes the scratch storage of `entity`, whose records have keys of `keyType`, `newCount` new values and up to
    /// `oldCount` old ones; called once per entity, before its first record is put.
    func prepare(_ entity: String, keyType: AttributeType, newCount: Int, oldCount: Int) throws
    /// Puts a scratch record of `entity`. Unless `replacing`, a record with that key is left as it is and the call
    /// returns `false`.
    func put(_ entity: String, key: Value, new: [Value], old: [Value]?, replacing: Bool) throws -> Bool
    /// Up to `limit` scratch records of `entity` whose keys come after `after` (from the first when `nil`), in key
    /// order.
    func records(_ entity: String, after: Value?, limit: Int) throws -> [MigrationScratchRecord]
    /// Deletes a scratch record; whether there was one.
    func delete(_ entity: String, key: Value) throws -> Bool
    /// The number of scratch records of `entity`.
    func count(_ entity: String) throws -> Int
    /// Deletes every scratch record of `entity`.
    func clear(_ entity: String) throws
    /// Drops the scratch storage (at the end of the run).
    func drop() throws
}

/// A record of a migration block's scratch storage.
package struct MigrationScratchRecord {
    package var key: Value
    package var new: [Value]
    /// The record's values before the migration; `nil` for an object the block created.
    package var old: [Value]?

    package init(key: Value, new: [Value], old: [Value]?) {
        self.key = key
        self.new = new
        self.old = old
    }
}

/// A migration block's run on any backend with a ``MigrationScratch`` and a ``MigrationStepBackend``: the SQL
/// backends' (LMDB has a run of its own over its databases, `MigrationRun`, with the same results).
///
/// While the block runs, the stored tables are only read. An entity's records are in one of three forms
/// (``MigrationForm``): as stored; *working*, in the scratch storage, each with its new and old values; or only new
/// values in the scratch storage (an added entity, or one whose data the block deleted). The first enumeration of an
/// entity carries its records over to the working form as it visits them. At the end (``finish(backend:)``), one
/// migration step writes the new tables: entities the block wrote or renamed attributes of from the scratch storage
/// or the stored records (checked against the model, as LMDB checks them), the others as an inferred step would.
package final class BlockMigrationRun: MigrationBlockRun {
    /// One entity, and what the block did to it.
    final class Pass: MigrationEntityState {
        let name: String
        let old: RecordLayout?
        let new: RecordLayout?
        /// The model's declared renames.
        let declaredRenames: [String: String]
        var renamed: [String: String] {
            didSet { mapping = Self.mapping(old, new, renamed) }
        }
        private(set) var mapping: RecordMapping?
        var form: MigrationForm
        var isEnumerating = false
        var changedAttributes: Set<String> = []
        var membershipChanged = false
        var touched: Bool { membershipChanged || !changedAttributes.isEmpty }
        /// Keys of objects created during the enumeration under way: it doesn't visit them.
        var createdDuringEnumeration: Set<Value> = []
        /// While the first enumeration carries the stored records over: the last key it visited.
        var carriedUpTo: Value?
        var recordsBefore = 0

        init(_ entity: MigrationEntities.Entity) {
            name = entity.name
            old = entity.old
            new = entity.new
            declaredRenames = entity.renames
            renamed = entity.renames
            form = entity.old == nil ? .new : .old
            mapping = Self.mapping(entity.old, entity.new, entity.renames)
        }

        private static func mapping(_ old: RecordLayout?, _ new: RecordLayout?, _ renamed: [String: String])
            -> RecordMapping?
        {
            guard let old, let new else { return nil }
            return RecordMapping(from: old, to: new, renamed: renamed)
        }

        /// Whether the run writes the entity's new records itself: it has records in the scratch storage, or the
        /// block renamed attributes the model doesn't declare.
        var isFilledByBlock: Bool { new != nil && (form != .old || renamed != declaredRenames) }
    }

    private let scratch: any MigrationScratch
    private let stored: [RecordLayout]
    private let current: [RecordLayout]
    private let plan: MigrationEntities
    private let progress: MigrationProgressHandler?
    private let fromVersion: Int
    private let toVersion: Int
    private var passes: [String: Pass] = [:]
    /// Entities whose scratch storage was made.
    private var prepared: Set<String> = []
    package private(set) var entityNames: [String] = []
    /// Stored names of entities the model renamed, by their previous name: the block may name them either way.
    private var previousNames: [String: String] = [:]
    /// Records read from a stored table or the scratch storage at a time.
    private static let page = 512

    package init(
        stored: [EntityDescription], current: [RecordLayout], scratch: any MigrationScratch, from fromVersion: Int,
        to toVersion: Int, progress: MigrationProgressHandler?
    ) throws {
        self.scratch = scratch
        self.stored = stored.map { RecordLayout($0) }
        self.current = current
        self.fromVersion = fromVersion
        self.toVersion = toVersion
        self.progress = progress
        plan = try MigrationEntities(stored: stored, current: current)
        for entity in plan.entities {
            let pass = Pass(entity)
            if let old = entity.old {
                pass.recordsBefore = try scratch.sourceCount(old)
                if old.entity.name != entity.name { previousNames[old.entity.name] = entity.name }
            }
            passes[entity.name] = pass
            entityNames.append(entity.name)
        }
    }

    package func entity(_ name: String) throws -> any MigrationEntityState { try pass(name) }

    private func pass(_ name: String) throws -> Pass {
        guard let pass = passes[name] ?? previousNames[name].flatMap({ passes[$0] }) else {
            throw PersistenceError(.unknownEntity, "neither the stored schema nor the model has an entity '\(name)'")
        }
        return pass
    }

    private func own(_ entity: any MigrationEntityState) throws -> Pass {
        guard let pass = entity as? Pass, passes[pass.name] === pass else {
            throw PersistenceError(.invalidArgument, "'\(entity.name)' is not an entity of this migration")
        }
        return pass
    }

    package func checkUsable() throws {}

    private func put(_ pass: Pass, key: Value, new: [Value], old: [Value]?, replacing: Bool) throws -> Bool {
        if prepared.insert(pass.name).inserted {
            // Keys carried over from the stored records are of the stored key's type; those of objects created
            // after the entity's data was deleted, of the model's.
            let layout = (pass.form == .new ? pass.new : pass.old) ?? pass.new ?? pass.old
            guard let keyType = layout.map({ $0.types[$0.primaryKeyIndex] }) else {
                throw PersistenceError(.backend, "'\(pass.name)' has no layout")
            }
            try scratch.prepare(
                pass.name, keyType: keyType, newCount: pass.new?.names.count ?? 0, oldCount: pass.old?.names.count ?? 0)
        }
        return try scratch.put(pass.name, key: key, new: new, old: old, replacing: replacing)
    }

    private func report(_ pass: Pass, _ stage: MigrationProgress.Stage, _ completed: Int, _ total: Int) throws {
        try CancellationFlag.checkCurrent()
        guard let progress, completed == 0 || completed == total || completed % 1000 == 0 else { return }
        progress(MigrationProgress(entity: pass.name, stage: stage, completed: completed, total: total))
    }

    private func scratchCount(_ pass: Pass) throws -> Int {
        prepared.contains(pass.name) ? try scratch.count(pass.name) : 0
    }

    private func scratchRecords(_ pass: Pass, after: Value?) throws -> [MigrationScratchRecord] {
        prepared.contains(pass.name) ? try scratch.records(pass.name, after: after, limit: Self.page) : []
    }

    // MARK: - What the block does

    package func enumerate(
        _ entity: any MigrationEntityState, _ body: ([Value]?, [Value]?) throws -> MigrationEnumerationResult
    ) throws {
        let pass = try own(entity)
        guard !pass.isEnumerating else {
            throw PersistenceError(
                .invalidArgument, "'\(pass.name)' is already being enumerated: enumerations of one entity can't nest")
        }
        pass.isEnumerating = true
        defer {
            pass.isEnumerating = false
            pass.createdDuringEnumeration = []
            pass.carriedUpTo = nil
        }
        if pass.form == .old, let old = pass.old {
            try carryOver(pass, old, body)
        } else {
            try enumerateScratch(pass, body)
        }
    }

    /// The first enumeration of a stored entity: each record visited goes to the working form (a removed entity's
    /// are only read).
    private func carryOver(
        _ pass: Pass, _ old: RecordLayout, _ body: ([Value]?, [Value]?) throws -> MigrationEnumerationResult
    ) throws {
        let carries = pass.new != nil
        let total = try scratch.sourceCount(old)
        var completed = 0
        try report(pass, .enumerating, 0, total)
        var after: Value?
        while true {
            let records = try scratch.sourceRecords(old, after: after, limit: Self.page)
            for record in records {
                let key = record.primaryKey
                pass.carriedUpTo = key
                let new = pass.mapping?.map(record.values)
                switch try body(record.values, new) {
                case .delete:
                    pass.membershipChanged = true
                case .store(let values):
                    if carries { _ = try put(pass, key: key, new: values, old: record.values, replacing: true) }
                case .unchanged:
                    if carries, let new {
                        _ = try put(pass, key: key, new: new, old: record.values, replacing: true)
                    }
                }
                completed += 1
                try report(pass, .enumerating, completed, total)
            }
            guard records.count == Self.page, let last = records.last else { break }
            after = last.primaryKey
        }
        if completed != total { try report(pass, .enumerating, completed, completed) }
        if carries { pass.form = .working }
    }

    /// An enumeration of an entity in the scratch storage.
    private func enumerateScratch(
        _ pass: Pass, _ body: ([Value]?, [Value]?) throws -> MigrationEnumerationResult
    ) throws {
        let total = try scratchCount(pass)
        var completed = 0
        try report(pass, .enumerating, 0, total)
        var after: Value?
        while true {
            let records = try scratchRecords(pass, after: after)
            for record in records where !pass.createdDuringEnumeration.contains(record.key) {
                switch try body(record.old, record.new) {
                case .delete:
                    _ = try scratch.delete(pass.name, key: record.key)
                    pass.membershipChanged = true
                case .store(let values):
                    _ = try put(pass, key: record.key, new: values, old: record.old, replacing: true)
                case .unchanged:
                    break
                }
                completed += 1
                try report(pass, .enumerating, completed, total)
            }
            guard records.count == Self.page, let last = records.last else { break }
            after = last.key
        }
        if completed != total { try report(pass, .enumerating, completed, completed) }
    }

    package func deleteData(_ entity: any MigrationEntityState) throws -> Bool {
        let pass = try own(entity)
        guard !pass.isEnumerating else {
            throw PersistenceError(.invalidArgument, "'\(pass.name)' can't lose its data while it is enumerated")
        }
        let hadData =
            try pass.form == .old ? (pass.old.map { try scratch.sourceCount($0) } ?? 0) > 0 : scratchCount(pass) > 0
        if pass.new != nil {
            if prepared.contains(pass.name) { try scratch.clear(pass.name) }
            pass.form = .new
        }
        pass.membershipChanged = true
        return hadData
    }

    package func create(_ values: [Value], in entity: any MigrationEntityState) throws {
        let pass = try own(entity)
        let key = values[pass.new?.primaryKeyIndex ?? 0]
        if pass.form == .old && !pass.isEnumerating { try enumerate(pass) { _, _ in .unchanged } }
        // While the stored records are being carried over, those not reached yet are only in the stored table.
        if pass.form == .old, let old = pass.old,
            pass.carriedUpTo.map({ Value.compare($0, key) == .orderedAscending }) ?? true,
            try scratch.sourceRecord(old, key: key) != nil
        {
            throw PersistenceError(.duplicateKey, "a '\(pass.name)' record has that primary key")
        }
        guard try put(pass, key: key, new: values, old: nil, replacing: false) else {
            throw PersistenceError(.duplicateKey, "a '\(pass.name)' record has that primary key")
        }
        if pass.isEnumerating { pass.createdDuringEnumeration.insert(key) }
        pass.membershipChanged = true
    }

    package func update(created values: [Value], in entity: any MigrationEntityState) throws {
        let pass = try own(entity)
        _ = try put(pass, key: values[pass.new?.primaryKeyIndex ?? 0], new: values, old: nil, replacing: true)
    }

    package func delete(created primaryKey: Value, in entity: any MigrationEntityState) throws {
        let pass = try own(entity)
        if prepared.contains(pass.name), try scratch.delete(pass.name, key: primaryKey) {
            pass.membershipChanged = true
        }
    }

    // MARK: - The end

    /// Writes the new tables in one migration step on the storage `backend` gives for its plan, and returns the
    /// migration's report (one `mapped` step, as on LMDB). The scratch storage is dropped.
    package func finish(backend: (MigrationStepPlan) throws -> any MigrationStepBackend) throws -> MigrationReport {
        let filled = Set(passes.values.filter(\.isFilledByBlock).map(\.name))
        for name in entityNames { try checkPrimaryKey(try pass(name)) }
        let step = try MigrationStepPlan(
            fromVersion: fromVersion, toVersion: toVersion, source: stored, destination: current, mapping: nil,
            filledByBlock: filled)
        var fills: [String: MigrationStepRunner.Fill] = [:]
        for name in filled {
            let pass = try pass(name)
            fills[name] = { insert in try self.fill(pass, insert) }
        }
        let storage = try backend(step)
        let stepReport = try MigrationStepRunner(backend: storage, plan: step, progress: progress, fills: fills).run()
        // The runner moves the aliases of entities it copied by inference; those the block's run wrote, here.
        for name in filled.sorted() {
            guard let old = try pass(name).old?.entity.name, old != name else { continue }
            try step.failing("renaming the aliases of '\(old)' to '\(name)'") {
                try storage.renameAliasTargets(from: old, to: name)
            }
        }
        if !prepared.isEmpty { try scratch.drop() }
        return MigrationReport(
            fromVersion: fromVersion, toVersion: toVersion,
            changes: stepReport.changes.map { "\(fromVersion) → \(toVersion): \($0)" }, entities: stepReport.entities,
            steps: [stepReport])
    }

    /// Inserts every record of a filled entity in the new layout, checked against the model.
    private func fill(_ pass: Pass, _ insert: ([Value]) throws -> Void) throws {
        guard let new = pass.new else { return }
        let change = plan.difference.changedEntities.first { $0.name == pass.name }
        let total = try pass.form == .old ? (pass.old.map { try scratch.sourceCount($0) } ?? 0) : scratchCount(pass)
        var completed = 0
        try report(pass, .rewriting, 0, total)
        func write(_ values: [Value]) throws {
            try insert(try new.conformingMigrated(values, change: change))
            completed += 1
            try report(pass, .rewriting, completed, total)
        }
        var after: Value?
        if pass.form == .old, let old = pass.old, let mapping = pass.mapping {
            while true {
                let records = try scratch.sourceRecords(old, after: after, limit: Self.page)
                for record in records { try write(mapping.map(record.values)) }
                guard records.count == Self.page, let last = records.last else { break }
                after = last.primaryKey
            }
        } else {
            while true {
                let records = try scratchRecords(pass, after: after)
                for record in records { try write(record.new) }
                guard records.count == Self.page, let last = records.last else { break }
                after = last.key
            }
        }
        if completed != total { try report(pass, .rewriting, completed, completed) }
    }

    /// A primary key can't change under stored records: their keys are its values (LMDB's rule, kept everywhere).
    private func checkPrimaryKey(_ pass: Pass) throws {
        guard let old = pass.old, let new = pass.new, pass.form != .new else { return }
        let newKey = new.entity.primaryKey
        let source = pass.renamed[newKey] ?? newKey
        guard source != old.entity.primaryKey || old.entity.primaryKeyAttribute?.type != new.types[new.primaryKeyIndex]
        else { return }
        let records = try pass.form == .old ? scratch.sourceCount(old) : scratchCount(pass)
        guard records > 0 else { return }
        throw PersistenceError(
            .migrationFailed,
            "the primary key of '\(pass.name)' changed from '\(old.entity.primaryKey)' to '\(newKey)' and the entity "
                + "has records; delete its data in the migration block (deleteData(forType:)) and create the "
                + "objects anew")
    }
}
