internal import CLMDB
import Foundation
import PersistenceCore

/// One start-up's migration, inside the write transaction that opens the store: what the migration code has done
/// to each entity so far, and the pass that finishes it (``finish()``). Nothing is committed here — the opening
/// transaction commits all of it, or none.
///
/// **How old and new values live side by side.** The migration code sees every record twice: as it was stored
/// (`old`, read-only) and in the new schema (`new`). Records are streamed, never held in memory, so while the
/// code runs an entity's records are stored in one of three forms (``Form``), the same for every record of the
/// entity: as stored before (old layout); *working* — the new values followed by the old ones, or only the new
/// values for an object created by the migration; or in the new layout. The first enumeration of an entity moves
/// it from the old form to the working form as it visits each record; ``finish()`` writes every record in the new
/// layout. Records are sealed with the store's key and fresh nonces in every form.
final class MigrationRun {
    /// How an entity's records are stored at this point of the migration.
    enum Form {
        /// As before the migration: old layout.
        case old
        /// New values, then old values (none for objects created by the migration).
        case working
        /// New layout: an added entity, or one whose data the migration deleted.
        case new
    }

    /// One entity of the old or the new schema, or both.
    final class EntityPass {
        let name: String
        /// The stored schema's layout; `nil` for an added entity.
        let old: RecordLayout?
        /// The current layout; `nil` for a removed entity.
        let new: RecordLayout?
        /// Where the entity's records and indexes live (in the new layout when there is one).
        let store: EntityStore
        var form: Form
        /// Old attribute names by new name (`renameProperty`).
        var renamed: [String: String] = [:] {
            didSet { mapping = Self.mapping(old, new, renamed) }
        }
        /// How an old record becomes a new one without code (`nil` unless the entity is in both schemas).
        private(set) var mapping: RecordMapping?
        /// Whether the migration code created or deleted records (so every index is rebuilt).
        var membershipChanged = false
        /// Whether the records moved from the entity's previous name (so every index is rebuilt).
        var moved = false
        /// Attributes the migration code set on some record (so indexes on them are rebuilt).
        var changedAttributes: Set<String> = []
        /// Whether the migration code changed records (so they are checked and rewritten).
        var touched: Bool { membershipChanged || !changedAttributes.isEmpty }
        /// Records stored before the migration.
        var recordsBefore = 0
        /// Records written in the new layout by ``MigrationRun/finish(meta:)``.
        var recordsRewritten = 0
        /// Whether an enumeration of this entity is under way.
        var isEnumerating = false
        /// Keys of objects created during the enumeration under way: it doesn't visit them.
        var createdDuringEnumeration: Set<Data> = []

        init(name: String, old: RecordLayout?, new: RecordLayout?, store: EntityStore) {
            self.name = name
            self.old = old
            self.new = new
            self.store = store
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

    let transaction: Transaction
    let environment: Environment
    let sealer: ValueSealer
    /// The difference between the stored schema — with the model's declared renames applied — and the model.
    let difference: SchemaDifference
    /// The declared renames applied, one clause each (`entity 'Tag' renamed 'Label'`, `'Contact.handle' renamed
    /// 'nickname'`).
    let renameClauses: [String]
    let progress: MigrationProgressHandler?
    private(set) var nonces: NonceSequence
    private(set) var entities: [String: EntityPass] = [:]
    /// Entity names: the stored schema's, then the current model's added ones.
    private(set) var order: [String] = []
    /// Stored names of entities the model renamed (``Entity/previousName``), by their previous name: the migration
    /// block may name them either way.
    private var previousNames: [String: String] = [:]

    /// Prepares the migration of `stored` to `current`: applies the model's declared renames as the SQL backends do
    /// (``MigrationStepPlan/continuedSource(of:in:destinationNames:)``, ``MigrationStepPlan/renames(of:from:)``) —
    /// a renamed entity's records move to its new databases, sealed for its new name —, drops index databases the
    /// model no longer has, and opens every entity's databases.
    init(
        stored: [EntityDescription], current: [RecordLayout], transaction: Transaction, environment: Environment,
        sealer: ValueSealer, nonceCounter: UInt64, progress: MigrationProgressHandler?
    ) throws {
        self.transaction = transaction
        self.environment = environment
        self.sealer = sealer
        self.progress = progress
        nonces = NonceSequence(startingAt: nonceCounter)
        let sources = Dictionary(stored.map { ($0.name, RecordLayout($0)) }, uniquingKeysWith: { first, _ in first })
        let currentNames = Set(current.map(\.entity.name))
        // Which model entity continues each stored entity: the one of its name, or the one declaring it its previous
        // name. Records move rather than copy, so one stored entity can't continue as two.
        var continuedBy: [String: RecordLayout] = [:]
        for layout in current {
            guard
                let source = MigrationStepPlan.continuedSource(of: layout, in: sources, destinationNames: currentNames)
            else { continue }
            if let other = continuedBy[source.entity.name] {
                throw PersistenceError(
                    .invalidSchema,
                    "'\(other.entity.name)' and '\(layout.entity.name)' both declare the stored entity "
                        + "'\(source.entity.name)' as theirs; on LMDB one entity's records can continue as one entity only "
                        + "(copy them in a migration block instead)")
            }
            continuedBy[source.entity.name] = layout
        }
        var renamedStored: [EntityDescription] = []
        var renameClauses: [String] = []
        var attributeRenames: [String: [String: String]] = [:]
        for entity in stored {
            guard let new = continuedBy[entity.name], let old = sources[entity.name] else {
                renamedStored.append(entity)
                continue
            }
            let renames = MigrationStepPlan.renames(of: new, from: old)
            attributeRenames[entity.name] = renames
            renameClauses += MigrationStepPlan.renameClauses(of: new, from: old, renames)
            renamedStored.append(MigrationStepPlan.renamed(entity, to: new.entity.name, renames))
        }
        difference = SchemaDifference(stored: renamedStored, current: current.map(\.entity))
        self.renameClauses = renameClauses

        // Index databases are named after entity, attributes and uniqueness: one the model doesn't name is gone or
        // changed. Those it still names are kept, and rebuilt at the end if their entries may differ.
        let currentIndexes = Set(
            current.flatMap { layout in layout.entity.indexes.map { $0.name(in: layout.entity.name) } })
        for entity in stored {
            for index in entity.indexes where !currentIndexes.contains(index.name(in: entity.name)) {
                try environment.dropDatabase(named: "index:" + index.name(in: entity.name), in: transaction)
            }
        }
        for entity in stored where entities[entity.name] == nil {
            let old = RecordLayout(entity)
            let new = continuedBy[entity.name]
            let pass = EntityPass(
                name: new?.entity.name ?? entity.name, old: old, new: new, store: try store(for: new ?? old))
            pass.renamed = attributeRenames[entity.name] ?? [:]
            if pass.name != entity.name {
                try moveRecords(of: entity, to: pass)
                previousNames[entity.name] = pass.name
            }
            try self.add(pass)
        }
        for layout in current where entities[layout.entity.name] == nil {
            try self.add(EntityPass(name: layout.entity.name, old: nil, new: layout, store: store(for: layout)))
        }
    }

    /// Moves the records of a renamed entity to its new name's database, each sealed for the new name (a sealed
    /// record authenticates its entity), and deletes the old database. Its indexes are rebuilt at the end.
    private func moveRecords(of entity: EntityDescription, to pass: EntityPass) throws {
        var recordsOnly = entity
        recordsOnly.indexes = []
        let source = try EntityStore(
            layout: RecordLayout(recordsOnly), environment: environment, transaction: transaction)
        try transaction.forEach(source.dbi) { keyBytes, stored in
            let key = Data(keyBytes)
            let values = try sealer.open(stored, entity: source, key: keyBytes)
            let sealed = try sealer.seal(values, entity: pass.store, key: key) { try nonces.next() }
            try transaction.put(pass.store.dbi, key, sealed)
            return true
        }
        try environment.dropDatabase(named: "entity:" + entity.name, in: transaction)
        pass.moved = true
    }

    private func add(_ pass: EntityPass) throws {
        if pass.old != nil { pass.recordsBefore = try transaction.count(pass.store.dbi) }
        entities[pass.name] = pass
        order.append(pass.name)
    }

    private func store(for layout: RecordLayout) throws -> EntityStore {
        try EntityStore(layout: layout, environment: environment, transaction: transaction)
    }

    /// The entity named `name`, in the old schema or the new.
    func pass(_ name: String) throws -> EntityPass {
        guard let pass = entities[name] ?? previousNames[name].flatMap({ entities[$0] }) else {
            throw PersistenceError(.unknownEntity, "neither the stored schema nor the model has an entity '\(name)'")
        }
        return pass
    }

    // MARK: - Reading and writing records in their current form

    /// The old and new values of a stored record of `pass`, in the entity's current form.
    func values(
        of stored: UnsafeRawBufferPointer, key: UnsafeRawBufferPointer, in pass: EntityPass
    ) throws -> (old: [Value]?, new: [Value]?) {
        let values = try sealer.open(stored, entity: pass.store, key: key)
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

    /// The next nonce of the migration's writes.
    func nextNonce() throws -> Nonce { try nonces.next() }

    /// Stores a record of `pass` in `form` (the working form keeps the old values after the new).
    func put(new: [Value], old: [Value]?, key: Data, in pass: EntityPass, form: Form) throws {
        let values = form == .working ? new + (old ?? []) : new
        let sealed = try sealer.seal(values, entity: pass.store, key: key) { try nonces.next() }
        try transaction.put(pass.store.dbi, key, sealed)
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
        }
        // An entity in the old form moves to the working form record by record.
        let target: Form = pass.new == nil ? .old : (pass.form == .old ? .working : pass.form)
        let total = try transaction.count(pass.store.dbi)
        var completed = 0
        try report(pass, .enumerating, 0, total)
        try transaction.forEach(pass.store.dbi) { keyBytes, stored in
            let key = Data(keyBytes)
            guard !pass.createdDuringEnumeration.contains(key) else { return true }
            let (old, new) = try values(of: stored, key: keyBytes, in: pass)
            switch try body(old, new, key) {
            case .delete:
                try transaction.delete(pass.store.dbi, key)
                pass.membershipChanged = true
            case .store(let values):
                try put(new: values, old: old, key: key, in: pass, form: target)
            case .unchanged:
                if target != pass.form, let new { try put(new: new, old: old, key: key, in: pass, form: target) }
            }
            completed += 1
            try report(pass, .enumerating, completed, total)
            return true
        }
        if completed != total { try report(pass, .enumerating, completed, completed) }
        pass.form = target
    }

    /// What an enumeration does with a record after the migration code saw it.
    enum EnumerationResult {
        case unchanged
        case store([Value])
        case delete
    }

    /// Stores an object created by the migration code; its values are in the new layout and already checked.
    func create(_ values: [Value], in pass: EntityPass) throws -> Data {
        let key = try KeyCodec.recordKey(
            values[pass.store.layout.primaryKeyIndex], of: pass.name, maximumSize: environment.maximumKeySize)
        if pass.form == .old && !pass.isEnumerating { try convertToWorkingForm(pass) }
        // Created objects have no old values: in the working form too they are only their new values.
        let sealed = try sealer.seal(values, entity: pass.store, key: key) { try nonces.next() }
        guard try transaction.put(pass.store.dbi, key, sealed, flags: MDB_NOOVERWRITE) else {
            throw PersistenceError(.duplicateKey, "a '\(pass.name)' record has that primary key")
        }
        if pass.isEnumerating { pass.createdDuringEnumeration.insert(key) }
        pass.membershipChanged = true
        return key
    }

    /// Rewrites an object created earlier by the migration code.
    func update(created values: [Value], key: Data, in pass: EntityPass) throws {
        try put(new: values, old: nil, key: key, in: pass, form: pass.form == .old ? .working : pass.form)
    }

    /// Deletes the record stored under `key`; whether there was one.
    @discardableResult
    func delete(key: Data, in pass: EntityPass) throws -> Bool {
        let deleted = try transaction.delete(pass.store.dbi, key)
        if deleted { pass.membershipChanged = true }
        return deleted
    }

    /// Deletes every record of `pass`; its objects created later are in the new layout. Whether there were any.
    func deleteData(_ pass: EntityPass) throws -> Bool {
        guard !pass.isEnumerating else {
            throw PersistenceError(.invalidArgument, "'\(pass.name)' can't lose its data while it is enumerated")
        }
        let hadData = try transaction.count(pass.store.dbi) > 0
        try transaction.empty(pass.store.dbi)
        if pass.new != nil { pass.form = .new }
        pass.membershipChanged = true
        return hadData
    }

    /// Moves every record of an entity in the old form to the working form, so that objects created in it can be
    /// told from old ones.
    private func convertToWorkingForm(_ pass: EntityPass) throws {
        try enumerate(pass) { _, _, _ in .unchanged }
    }
}
