internal import CLMDB
import Foundation
@_spi(PersistenceBackend) import PersistenceCore

/// One start-up's migration: what the migration code has done to each entity so far, and the pass that finishes it
/// (``finish()``).
///
/// **Nothing the store reads changes until the end.** The stored databases are only read; everything the migration
/// writes goes to databases of its own, its *shadows* (`<logical name>@<token>`, see ``DatabaseNames``), in steps of a
/// ``SteppedWrite`` that commit as they go — so memory stays bounded whatever the store's size — and the caller
/// switches to them in one last small step (``switchedNames()``). A failure, a cancellation or a crash before the
/// switch leaves the store as it was, with shadows that are dropped (at once, or by the next open).
///
/// **Steps come at writes.** A step may commit before any write (``prepareWrite(_:)``), inside the migration code's
/// closures too, and the map grows between steps; so no cursor stays open across a step: walks copy each record out,
/// and a step closes their cursors first — each then seeks its next record by key (``scan(_:_:)``, ``Walk``). A
/// cursor kept open would belong to a committed transaction and read pages the growth unmapped.
///
/// **How old and new values live side by side.** The migration code sees every record twice: as it was stored
/// (`old`, read-only) and in the new schema (`new`). Records are streamed, never held in memory, so while the
/// code runs an entity's records are in one of three forms (``Form``), the same for every record of the entity: as
/// stored before (old layout, in the stored database); *working* — in the shadow, the new values followed by the old
/// ones, or only the new values for an object created by the migration; or in the new layout, in the shadow. The
/// first enumeration of an entity moves it from the old form to the working form as it visits each record;
/// ``finish()`` writes every record in the new layout. Records are sealed with the store's key and fresh nonces in
/// every form, for the entity's new name.
final class MigrationRun {
    /// How an entity's records are stored at this point of the migration.
    typealias Form = MigrationForm

    /// One entity of the old or the new schema, or both.
    final class EntityPass: MigrationEntityState {
        let name: String
        /// The stored schema's layout; `nil` for an added entity.
        let old: RecordLayout?
        /// The current layout; `nil` for a removed entity.
        let new: RecordLayout?
        /// The stored entity's databases, read only (`nil` for an added entity).
        let live: EntityStore?
        /// The migration's own databases for the entity, in the new layout: made at the first write.
        var shadow: EntityStore?
        var form: Form
        /// Old attribute names by new name (declared, or `renameProperty`).
        var renamed: [String: String] = [:] {
            didSet { mapping = Self.mapping(old, new, renamed) }
        }
        /// How an old record becomes a new one without code (`nil` unless the entity is in both schemas).
        private(set) var mapping: RecordMapping?
        /// Whether the migration code created or deleted records (so every index is rebuilt).
        var membershipChanged = false
        /// Attributes the migration code set on some record (so indexes on them are rebuilt).
        var changedAttributes: Set<String> = []
        /// Whether the migration code changed records (so they are checked and rewritten).
        var touched: Bool { membershipChanged || !changedAttributes.isEmpty }
        /// Whether the entity was renamed (its records are sealed for its new name, and every index is rebuilt).
        var moved: Bool { old.map { $0.entity.name != name } ?? false }
        /// Records stored before the migration.
        var recordsBefore = 0
        /// Records written in the new layout by ``MigrationRun/finish()``.
        var recordsRewritten = 0
        /// Whether an enumeration of this entity is under way.
        var isEnumerating = false
        /// Keys of objects created during the enumeration under way: it doesn't visit them.
        var createdDuringEnumeration: Set<Data> = []
        /// While the first enumeration carries the stored records over to the shadow: the last key it visited. A
        /// stored record with a later key is not in the shadow yet.
        var carriedUpTo: Data?
        /// Whether the shadow's records replace the stored ones at the switch (set by ``MigrationRun/finish()``).
        var replacesRecords = false
        /// The indexes rebuilt into the shadow's databases by ``MigrationRun/finish()``; the others keep theirs.
        var rebuiltIndexes: Set<Index> = []
        /// Whether the migration code deleted the entity's stored data (`deleteData`).
        var dataDeleted = false

        /// Where the entity's records are in their current form.
        var source: EntityStore? { form == .old ? live : shadow }

        init(name: String, old: RecordLayout?, new: RecordLayout?, live: EntityStore?) {
            self.name = name
            self.old = old
            self.new = new
            self.live = live
            form = old == nil ? .new : .old
            mapping = Self.mapping(old, new, [:])
        }

        private static func mapping(_ old: RecordLayout?, _ new: RecordLayout?, _ renamed: [String: String])
            -> RecordMapping?
        {
            guard let old, let new else { return nil }
            return RecordMapping(from: old, to: new, renamed: renamed)
        }
    }

    /// What the migration writes with.
    let writer: MigrationWriter
    var write: SteppedWrite { writer.write }
    var transaction: Transaction { writer.transaction }
    var environment: Environment { writer.environment }
    var sealer: ValueSealer { writer.sealer }
    /// The stored databases' names.
    let names: DatabaseNames
    /// The difference between the stored schema — with the model's declared renames applied — and the model.
    let difference: SchemaDifference
    /// The declared renames applied, one clause each (`entity 'Tag' renamed 'Label'`, `'Contact.handle' renamed
    /// 'nickname'`).
    let renameClauses: [String]
    let progress: MigrationProgressHandler?
    private(set) var entities: [String: EntityPass] = [:]
    /// Entity names: the stored schema's, then the current model's added ones.
    private(set) var order: [String] = []
    /// Stored names of entities the model renamed (``Entity/previousName``), by their previous name: the migration
    /// block may name them either way.
    private var previousNames: [String: String] = [:]

    /// Prepares the migration of `stored` to `current`, applying the model's declared renames as the SQL backends do
    /// (``MigrationRules/continuedSource(of:in:destinationNames:)``, ``MigrationRules/renames(of:from:)``),
    /// and opens the stored entities' databases.
    init(
        stored: [EntityDescription], current: [RecordLayout], writer: MigrationWriter, names: DatabaseNames,
        progress: MigrationProgressHandler?
    ) throws {
        self.writer = writer
        self.names = names
        self.progress = progress
        let plan = try MigrationEntities(stored: stored, current: current)
        difference = plan.difference
        renameClauses = plan.renameClauses
        for entity in plan.entities {
            let live = try entity.old.map { old in
                try EntityStore(
                    layout: old, names: names.physical, environment: writer.environment,
                    transaction: writer.transaction)
            }
            let pass = EntityPass(name: entity.name, old: entity.old, new: entity.new, live: live)
            pass.renamed = entity.renames
            if let old = entity.old?.entity.name, old != entity.name { previousNames[old] = entity.name }
            try add(pass)
        }
    }

    /// The migration's own databases for `pass`, made at the first write: records and every index of the new
    /// layout, under the shadow names, sealed for the entity's new name.
    func shadowStore(_ pass: EntityPass) throws -> EntityStore {
        if let shadow = pass.shadow { return shadow }
        guard let layout = pass.new else {
            throw PersistenceError(.unknownEntity, "the model has no entity '\(pass.name)' to write objects of")
        }
        let shadow = try EntityStore(
            layout: layout, names: { self.writer.ownName($0) }, environment: environment, transaction: transaction)
        pass.shadow = shadow
        return shadow
    }

    func prepareWrite(_ bytes: Int) throws { try writer.prepareWrite(bytes) }

    func scan(_ dbi: MDB_dbi, _ body: (_ key: Data, _ stored: Data) throws -> Bool) throws {
        try writer.scan(dbi, body)
    }

    private func add(_ pass: EntityPass) throws {
        if let live = pass.live { pass.recordsBefore = try transaction.count(live.dbi) }
        entities[pass.name] = pass
        order.append(pass.name)
    }

    /// The entity named `name`, in the old schema or the new.
    func pass(_ name: String) throws -> EntityPass {
        guard let pass = entities[name] ?? previousNames[name].flatMap({ entities[$0] }) else {
            throw PersistenceError(.unknownEntity, "neither the stored schema nor the model has an entity '\(name)'")
        }
        return pass
    }

    // MARK: - Reading and writing records in their current form

    /// The old and new values of a record of `pass` stored in `store` (its ``EntityPass/source``), in the entity's
    /// current form.
    func values(
        of stored: Data, key: Data, in pass: EntityPass, from store: EntityStore
    ) throws -> (old: [Value]?, new: [Value]?) {
        let values = try stored.withUnsafeBytes { stored in
            try key.withUnsafeBytes { key in try sealer.open(stored, entity: store, key: key) }
        }
        let oldCount = pass.old?.names.count ?? 0
        let newCount = pass.new?.names.count ?? 0
        switch pass.form {
        case .old where values.count == oldCount:
            return (values, pass.mapping?.map(values))
        case .working where values.count == newCount + oldCount:
            return (Array(values[newCount...]), Array(values[..<newCount]))
        case .working where values.count == newCount, .new where values.count == newCount:
            return (nil, values)
        default:
            throw PersistenceError(.corrupt, "a stored '\(pass.name)' record has the wrong shape")
        }
    }

    /// Stores a record of `pass` in its shadow, in `form` (the working form keeps the old values after the new).
    func put(new: [Value], old: [Value]?, key: Data, in pass: EntityPass, form: Form, flags: Int32 = 0) throws
        -> Bool
    {
        let shadow = try shadowStore(pass)
        return try writer.put(form == .working ? new + (old ?? []) : new, key: key, in: shadow, flags: flags)
    }

    /// Reports progress every 1,000 records, and at the start and end of a pass.
    /// Between records, also stops when the task awaiting an async `open()` was cancelled (the migration then rolls
    /// back whole).
    func report(_ pass: EntityPass, _ stage: MigrationProgress.Stage, _ completed: Int, _ total: Int) throws {
        try CancellationFlag.checkCurrent()
        guard let progress, completed == 0 || completed == total || completed % 1000 == 0 else { return }
        progress(MigrationProgress(entity: pass.name, stage: stage, completed: completed, total: total))
    }

    // MARK: - What the migration code does

    /// Calls `body` with each record of `pass` that exists when the enumeration begins, as old values (`nil` for
    /// objects created by the migration) and new values (`nil` for a removed entity). `body` returns the new
    /// values to store, or `nil` to delete the record; `.unchanged` leaves the stored record as it is.
    func enumerate(_ pass: EntityPass, _ body: ([Value]?, [Value]?, Data) throws -> EnumerationResult) throws {
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
        // An entity in the old form moves to the working form, into its shadow, record by record; a removed one is
        // only read.
        let target: Form = pass.new == nil ? .old : (pass.form == .old ? .working : pass.form)
        let carriesOver = target != pass.form
        guard let source = pass.source else {
            // An added entity the migration hasn't written to: no records.
            try report(pass, .enumerating, 0, 0)
            pass.form = target
            return
        }
        if carriesOver { _ = try shadowStore(pass) }
        let total = try transaction.count(source.dbi)
        var completed = 0
        try report(pass, .enumerating, 0, total)
        try scan(source.dbi) { key, stored in
            if carriesOver { pass.carriedUpTo = key }
            guard !pass.createdDuringEnumeration.contains(key) else { return true }
            let (old, new) = try values(of: stored, key: key, in: pass, from: source)
            switch try body(old, new, key) {
            case .delete:
                // A stored record is deleted by not being carried over.
                if !carriesOver && pass.form != .old {
                    try prepareWrite(key.count)
                    try transaction.delete(source.dbi, key)
                }
                pass.membershipChanged = true
            case .store(let values):
                _ = try put(new: values, old: old, key: key, in: pass, form: target)
            case .unchanged:
                if carriesOver, let new { _ = try put(new: new, old: old, key: key, in: pass, form: target) }
            }
            completed += 1
            try report(pass, .enumerating, completed, total)
            return true
        }
        if completed != total { try report(pass, .enumerating, completed, completed) }
        pass.form = target
    }

    typealias EnumerationResult = MigrationEnumerationResult

    /// Stores an object created by the migration code; its values are in the new layout and already checked.
    func create(_ values: [Value], in pass: EntityPass) throws -> Data {
        let key = try KeyCodec.recordKey(
            values[pass.new?.primaryKeyIndex ?? 0], of: pass.name, maximumSize: environment.maximumKeySize)
        if pass.form == .old && !pass.isEnumerating { try convertToWorkingForm(pass) }
        // While the stored records are being carried over, those not reached yet are only in the stored database.
        if pass.form == .old, let live = pass.live, pass.carriedUpTo.map({ $0.lexicographicallyPrecedes(key) }) ?? true,
            try transaction.get(live.dbi, key) != nil
        {
            throw PersistenceError(.duplicateKey, "a '\(pass.name)' record has that primary key")
        }
        // Created objects have no old values: in the working form too they are only their new values.
        guard try put(new: values, old: nil, key: key, in: pass, form: .new, flags: MDB_NOOVERWRITE) else {
            throw PersistenceError(.duplicateKey, "a '\(pass.name)' record has that primary key")
        }
        if pass.isEnumerating { pass.createdDuringEnumeration.insert(key) }
        pass.membershipChanged = true
        return key
    }

    /// Rewrites an object created earlier by the migration code.
    func update(created values: [Value], key: Data, in pass: EntityPass) throws {
        _ = try put(new: values, old: nil, key: key, in: pass, form: .new)
    }

    /// Deletes an object created by the migration code; whether there was one.
    @discardableResult
    func delete(key: Data, in pass: EntityPass) throws -> Bool {
        guard let shadow = pass.shadow else { return false }
        try prepareWrite(key.count)
        let deleted = try transaction.delete(shadow.dbi, key)
        if deleted { pass.membershipChanged = true }
        return deleted
    }

    /// Deletes every record of `pass`; its objects created later are in the new layout. Whether there were any.
    func deleteData(_ pass: EntityPass) throws -> Bool {
        guard !pass.isEnumerating else {
            throw PersistenceError(.invalidArgument, "'\(pass.name)' can't lose its data while it is enumerated")
        }
        let hadData = try pass.source.map { try transaction.count($0.dbi) > 0 } ?? false
        if pass.new != nil {
            try transaction.empty(try shadowStore(pass).dbi)
            pass.form = .new
        }
        pass.membershipChanged = true
        pass.dataDeleted = true
        return hadData
    }

    /// Moves every record of an entity in the old form to the working form, so that objects created in it can be
    /// told from old ones.
    private func convertToWorkingForm(_ pass: EntityPass) throws {
        try enumerate(pass) { _, _, _ in .unchanged }
    }
}

extension MigrationRun: MigrationBlockRun {
    var entityNames: [String] { order }

    func entity(_ name: String) throws -> any MigrationEntityState { try pass(name) }

    /// The run's own state of an entity ``entity(_:)`` gave.
    private func own(_ entity: any MigrationEntityState) throws -> EntityPass {
        guard let pass = entity as? EntityPass, entities[pass.name] === pass else {
            throw PersistenceError(.invalidArgument, "'\(entity.name)' is not an entity of this migration")
        }
        return pass
    }

    func enumerate(
        _ entity: any MigrationEntityState, _ body: ([Value]?, [Value]?) throws -> MigrationEnumerationResult
    ) throws {
        try enumerate(own(entity)) { old, new, _ in try body(old, new) }
    }

    func deleteData(_ entity: any MigrationEntityState) throws -> Bool { try deleteData(own(entity)) }

    func create(_ values: [Value], in entity: any MigrationEntityState) throws {
        _ = try create(values, in: own(entity))
    }

    func update(created values: [Value], in entity: any MigrationEntityState) throws {
        let pass = try own(entity)
        try update(created: values, key: key(of: values, in: pass), in: pass)
    }

    func delete(created primaryKey: Value, in entity: any MigrationEntityState) throws {
        let pass = try own(entity)
        try delete(
            key: KeyCodec.recordKey(primaryKey, of: pass.name, maximumSize: environment.maximumKeySize), in: pass)
    }

    func checkUsable() throws { try write.checkUsable() }

    /// The record key of an object of the new layout.
    private func key(of values: [Value], in pass: EntityPass) throws -> Data {
        try KeyCodec.recordKey(
            values[pass.new?.primaryKeyIndex ?? 0], of: pass.name, maximumSize: environment.maximumKeySize)
    }
}
