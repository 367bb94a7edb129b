import Foundation
import PersistenceCore

/// Runs one planned step of a mapping-model migration on the writer connection, inside the transaction that opens
/// the store (nothing here commits).
///
/// Every destination entity whose table changes gets a new table, `persistence_new_<entity>`, without indexes;
/// inferred copies fill it with one `INSERT … SELECT` when no value needs checking, mappings row by row (rows are
/// streamed through one statement, so memory doesn't grow with the table). Then custom policies fix references and
/// finish; then the source tables not kept are dropped, the new tables renamed, and indexes built — SQLite's
/// documented way to change a table, all in the one transaction.
final class SQLiteMigrationStep {
    let connection: Connection
    let plan: MigrationStepPlan
    let progress: MigrationProgressHandler?
    /// Tables of the step's destination entities: the new table, or the kept source table.
    private(set) var destinationTables: [String: TableMapping] = [:]
    /// Tables of the step's source entities.
    private(set) var sourceTables: [String: TableMapping] = [:]
    /// Each destination entity's insert statement, prepared for this step only.
    private var inserts: [String: Statement] = [:]
    /// The custom mapping whose first stage is running, when its policy fixes references afterwards.
    private var trackedMapping: Int?
    private var tracking: Statement?
    /// The mapping code's context; closed when the step ends.
    private(set) lazy var context = MappingContext(
        store: self, sourceVersion: plan.fromVersion, destinationVersion: plan.toVersion)
    private var rewritten: [String: Int] = [:]

    static let createdTable = "persistence_migration_created"

    init(connection: Connection, plan: MigrationStepPlan, progress: MigrationProgressHandler?) {
        self.connection = connection
        self.plan = plan
        self.progress = progress
        for (index, layout) in plan.source.enumerated() {
            sourceTables[layout.entity.name] = TableMapping(index: -1 - index, layout: layout)
        }
        for (index, destination) in plan.destinations.enumerated() {
            destinationTables[destination.name] = TableMapping(
                index: -1 - index, layout: destination.layout,
                table: destination.keptSource == nil ? Self.newTable(destination.name) : nil)
        }
    }

    static func newTable(_ entity: String) -> String { "persistence_new_" + entity }

    private var stepRange: ClosedRange<Int> { plan.fromVersion...plan.toVersion }

    /// Runs the step; returns what it did.
    func run() throws -> MigrationReport.Step {
        defer { context.close() }
        var before: [String: Int] = [:]
        for layout in plan.source { before[layout.entity.name] = try count(quote(layout.entity.name)) }
        for destination in plan.destinations where destination.keptSource == nil {
            try connection.execute(
                TableMapping.tableSQL(destination.layout.entity, table: quote(Self.newTable(destination.name))))
        }
        // Stage 1: every new table filled, inferred copies first, then the mappings in their order.
        for destination in plan.destinations {
            guard let source = destination.inferredSource, let mapping = destination.inferredMapping else { continue }
            try failing("the inferred copy of '\(source.entity.name)' to '\(destination.name)'") {
                try copy(source, to: destination.layout, mapping: mapping, total: before[source.entity.name] ?? 0)
            }
        }
        let tracksCreated = plan.mappings.contains { $0.policy?.fixReferences != nil }
        if tracksCreated {
            try connection.execute(
                "CREATE TEMP TABLE \(quote(Self.createdTable)) (mapping INTEGER NOT NULL, entity TEXT NOT NULL, key)")
            tracking = try Statement(
                db: connection.handle,
                sql: "INSERT INTO temp.\(quote(Self.createdTable)) (mapping, entity, key) VALUES (?, ?, ?)",
                persistent: false)
        }
        for (index, mapping) in plan.mappings.enumerated() {
            try failing(describe(mapping)) {
                try createDestinationRecords(mapping, index: index, before: before)
            }
        }
        // Stages 2 and 3.
        for (index, mapping) in plan.mappings.enumerated() {
            guard let fix = mapping.policy?.fixReferences else { continue }
            try failing("fixing references of " + describe(mapping)) { try fixReferences(index, mapping, fix) }
        }
        for mapping in plan.mappings {
            guard let finish = mapping.policy?.finish else { continue }
            try failing("finishing " + describe(mapping)) { try finish(context) }
        }
        tracking = nil
        if tracksCreated { try connection.execute("DROP TABLE temp.\(quote(Self.createdTable))") }
        inserts.removeAll()
        try failing("replacing the tables and building indexes") { try replaceTables() }

        var entities: [MigrationReport.EntityCounts] = []
        for layout in plan.source {
            let name = layout.entity.name
            let after = plan.destinations.contains { $0.name == name } ? try count(quote(name)) : 0
            entities.append(
                MigrationReport.EntityCounts(
                    name: name, recordsBefore: before[name] ?? 0, recordsAfter: after,
                    recordsRewritten: rewritten[name] ?? 0))
        }
        for destination in plan.destinations where before[destination.name] == nil {
            entities.append(
                MigrationReport.EntityCounts(
                    name: destination.name, recordsBefore: 0, recordsAfter: try count(quote(destination.name)),
                    recordsRewritten: rewritten[destination.name] ?? 0))
        }
        return MigrationReport.Step(
            fromVersion: plan.fromVersion, toVersion: plan.toVersion, kind: plan.kind, changes: plan.changes,
            entities: entities)
    }

    private func describe(_ mapping: EntityMapping) -> String {
        "the \(mapping.kind.rawValue) mapping of '\(mapping.sourceEntity ?? "—")' to '\(mapping.destinationEntity ?? "—")'"
    }

    /// Runs `body`, naming the step and `what` in an error it throws (keeping the error as the cause).
    private func failing(_ what: String, _ body: () throws -> Void) throws {
        do {
            try body()
        } catch let error as PersistenceError {
            if error.code == .storageFull { throw error }
            throw PersistenceError(
                .migrationFailed,
                "migration step \(plan.fromVersion) → \(plan.toVersion) failed in \(what): \(error.message)",
                nativeCode: error.nativeCode, nativeMessage: error.nativeMessage,
                underlyingError: error.underlyingError ?? error)
        } catch let cancellation as CancellationError where CancellationFlag.current?.isCancelled == true {
            // The awaiting task was cancelled: not a failure of the migration code (which, throwing
            // CancellationError of its own accord, still fails as migrationFailed).
            throw cancellation
        } catch {
            throw PersistenceError(
                .migrationFailed,
                "migration step \(plan.fromVersion) → \(plan.toVersion) failed in \(what): it threw \(type(of: error))",
                underlyingError: error)
        }
    }

    private func count(_ table: String) throws -> Int {
        guard case .integer(let count)? = try connection.scalar("SELECT count(*) FROM \(table)") else { return 0 }
        return Int(count)
    }

    private func report(_ entity: String, _ stage: MigrationProgress.Stage, _ completed: Int, _ total: Int) {
        progress?(MigrationProgress(entity: entity, stage: stage, completed: completed, total: total, step: stepRange))
    }

    // MARK: - Stage 1

    /// An inferred copy: one `INSERT … SELECT` when every value keeps its type, else row by row with checks.
    private func copy(_ source: RecordLayout, to destination: RecordLayout, mapping: RecordMapping, total: Int) throws {
        let name = destination.entity.name
        let retyped = zip(mapping.sources, destination.types).contains { position, type in
            position.map { source.types[$0] != type } ?? false
        }
        guard !retyped else {
            try stream(source, entity: name, stage: .rewriting) { record in
                var values = mapping.map(record.values)
                for (position, attribute) in destination.entity.attributes.enumerated() {
                    values[position] = try attribute.storedMigrationValue(values[position], in: name)
                }
                try insertChecked(values, into: destination)
            }
            return
        }
        report(name, .rewriting, 0, total)
        var arguments: [Value] = []
        let fallbacks = mapping.map(Array(repeating: .null, count: source.names.count))
        let expressions = zip(mapping.sources, fallbacks).map { position, fallback -> String in
            guard let position else {
                guard !fallback.isNull else { return "NULL" }
                arguments.append(fallback)
                return "?"
            }
            let column = quote(source.names[position])
            guard !fallback.isNull else { return column }
            arguments.append(fallback)
            return "coalesce(\(column), ?)"
        }
        let target = try table(destination.entity.name, source: false)
        let statement = try Statement(
            db: connection.handle,
            sql: "INSERT INTO \(target.table) (\(target.columns)) SELECT \(expressions.joined(separator: ", ")) "
                + "FROM \(quote(source.entity.name))",
            persistent: false)
        try statement.bind(arguments)
        try statement.run()
        rewritten[name, default: 0] += connection.changes
        report(name, .rewriting, total, total)
    }

    /// Calls `body` with each record of a source entity, reporting progress every 1,000.
    private func stream(
        _ source: RecordLayout, entity: String, stage: MigrationProgress.Stage, _ body: (Record) throws -> Void
    ) throws {
        let total = try count(quote(source.entity.name))
        report(entity, stage, 0, total)
        let columns = source.names.map(quote).joined(separator: ", ")
        let statement = try Statement(
            db: connection.handle, sql: "SELECT \(columns) FROM \(quote(source.entity.name))", persistent: false)
        var record = Record(layout: source)
        var completed = 0
        while try statement.step() {
            // A cancelled async open() stops between records; the migration's transaction rolls back.
            try CancellationFlag.checkCurrent()
            statement.readRow(into: &record.values)
            try body(record)
            completed += 1
            if completed % 1000 == 0 { report(entity, stage, completed, total) }
        }
        if completed % 1000 != 0 || completed == 0 { report(entity, stage, completed, total) }
    }

    private func createDestinationRecords(_ mapping: EntityMapping, index: Int, before: [String: Int]) throws {
        guard let sourceName = mapping.sourceEntity, let source = sourceTables[sourceName]?.layout else { return }
        let progressName = mapping.destinationEntity ?? sourceName
        switch mapping.kind {
        case .add, .remove:
            return
        case .custom:
            if let create = mapping.policy?.createDestinationRecords {
                trackedMapping = mapping.policy?.fixReferences == nil ? nil : index
                defer { trackedMapping = nil }
                try stream(source, entity: progressName, stage: .mapping) { record in
                    try create(MappingSource(record: record, context: context), context)
                }
                return
            }
            trackedMapping = mapping.policy?.fixReferences == nil ? nil : index
        case .copy, .transform:
            break
        }
        defer { trackedMapping = nil }
        guard let destinationName = mapping.destinationEntity,
            let destination = destinationTables[destinationName]?.layout
        else { return }
        let inferred = RecordMapping(
            from: source, to: destination,
            renamed: MigrationStepPlan.renames(of: destination, from: source))
        let closures: [AttributeMapping?] = destination.names.map { mapping.attributeMappings[$0] }
        let attributes = destination.entity.attributes
        try stream(source, entity: progressName, stage: .mapping) { record in
            var values = inferred.map(record.values)
            let mappingSource = MappingSource(record: record, context: context)
            for position in values.indices {
                if let closure = closures[position] { values[position] = try closure.value(for: mappingSource) }
                values[position] = try attributes[position].storedMigrationValue(values[position], in: destinationName)
            }
            try insertChecked(values, into: destination)
            if trackedMapping != nil { try track(Record(layout: destination, values: values)) }
        }
    }

    /// Inserts values already checked against the destination's attributes.
    func insertChecked(_ values: [Value], into layout: RecordLayout) throws {
        let name = layout.entity.name
        let statement: Statement
        if let prepared = inserts[name] {
            statement = prepared
        } else {
            let target = try table(name, source: false)
            statement = try Statement(db: connection.handle, sql: target.sql(.insert), persistent: false)
            inserts[name] = statement
        }
        defer { statement.reset() }
        for (offset, value) in values.enumerated() { try statement.bind(value, at: Int32(offset + 1)) }
        _ = try statement.step()
        rewritten[name, default: 0] += 1
    }

    /// Records that the custom mapping under way created `record`, for its stage 2.
    func track(_ record: Record) throws {
        guard let trackedMapping, let tracking else { return }
        defer { tracking.reset() }
        try tracking.bind([.integer(Int64(trackedMapping)), .text(record.entityName), record.primaryKey])
        _ = try tracking.step()
    }

    // MARK: - Stage 2

    private func fixReferences(
        _ index: Int, _ mapping: EntityMapping, _ fix: (inout Record, MappingContext) throws -> Void
    ) throws {
        let progressName = mapping.destinationEntity ?? mapping.sourceEntity ?? ""
        guard
            case .integer(let total)? = try connection.scalar(
                "SELECT count(*) FROM temp.\(quote(Self.createdTable)) WHERE mapping = ?", [.integer(Int64(index))])
        else { return }
        report(progressName, .fixingReferences, 0, Int(total))
        let created = try Statement(
            db: connection.handle,
            sql: "SELECT entity, key FROM temp.\(quote(Self.createdTable)) WHERE mapping = ? ORDER BY rowid",
            persistent: false)
        try created.bind([.integer(Int64(index))])
        var completed = 0
        while try created.step() {
            guard case .text(let entity) = created.column(0), let layout = destinationTables[entity]?.layout,
                var record = try record(layout, source: false, key: created.column(1))
            else { continue }
            let key = record.primaryKey
            try fix(&record, context)
            guard record.primaryKey == key else {
                throw PersistenceError(
                    .invalidArgument, "fixReferences changed the primary key of a '\(entity)' record; it can't")
            }
            try context.update(record)
            completed += 1
            if completed % 1000 == 0 { report(progressName, .fixingReferences, completed, Int(total)) }
        }
        if completed % 1000 != 0 || completed == 0 { report(progressName, .fixingReferences, completed, Int(total)) }
    }

    // MARK: - The end of the step

    /// Drops the source tables not kept, gives the new tables their entities' names, and builds indexes.
    private func replaceTables() throws {
        for source in plan.droppedSources {
            try connection.execute("DROP TABLE \(quote(source.entity.name))")
        }
        for destination in plan.destinations {
            let entity = destination.layout.entity
            guard let kept = destination.keptSource?.entity else {
                try connection.execute(
                    "ALTER TABLE \(quote(Self.newTable(destination.name))) RENAME TO \(quote(destination.name))")
                for sql in TableMapping.indexSQL(entity.indexes, of: entity) { try connection.execute(sql) }
                continue
            }
            let old = Set(kept.indexes)
            let new = Set(entity.indexes)
            for index in kept.indexes where !new.contains(index) {
                try connection.execute("DROP INDEX IF EXISTS \(quote(index.name(in: entity.name)))")
            }
            for sql in TableMapping.indexSQL(entity.indexes.filter { !old.contains($0) }, of: entity) {
                try connection.execute(sql)
            }
        }
    }

    /// The table of an entity of the step's source or destination.
    func table(_ entity: String, source: Bool) throws -> TableMapping {
        guard let mapping = source ? sourceTables[entity] : destinationTables[entity] else {
            throw PersistenceError(
                .unknownEntity, "the migration step has no \(source ? "source" : "destination") entity '\(entity)'")
        }
        return mapping
    }
}
