@_spi(PersistenceBackend) public import PersistenceCore
@_spi(PersistenceBackend) import PersistenceEngine

extension MemoryDatabase {
    /// Checks the store in one read transaction and reports every problem found; changes nothing.
    ///
    /// It checks each record of the model's entities — one value per attribute, its primary key equal to the key it
    /// is kept under, each value fitting its attribute's declared type (the core's rules, the ones every backend
    /// checks with) — then each unique index against the records (every entry names a record holding its values,
    /// every record with non-`nil` values has its entry), then every foreign key (the core's reference check). The
    /// unique indexes are this engine's own structures, like SQLite's: their entries are not counted in
    /// `indexEntriesChecked`.
    ///
    /// - Throws: `closed` after `close()`.
    public func verify() throws -> VerificationReport {
        try read { context in
            var report = VerificationReport()
            for entity in graph.layouts.indices {
                try Self.verifyTable(
                    context.storage.table(entity), as: graph.layouts[entity], in: context, into: &report)
            }
            try context.verifyReferences(into: &report)
            return report
        }
    }

    /// Checks the store, as the synchronous `verify()` does, on a thread off the cooperative pool.
    public func verify() async throws -> VerificationReport {
        try await runner.read { try self.verify() }
    }
}

extension MemoryDatabase {
    /// Checks one table against its entity's layout: its records, then its unique indexes.
    static func verifyTable(
        _ table: MemoryTable, as layout: RecordLayout, in context: MemoryContext, into report: inout VerificationReport
    ) throws {
        let entity = layout.entity.name
        let keyType = layout.types[layout.primaryKeyIndex]
        report.entitiesChecked += 1
        for key in table.orderedKeys {
            // An async verify() whose task is cancelled stops between records.
            try context.checkCancellation()
            guard let values = table.records[key] else { continue }
            report.recordsChecked += 1
            let keyText = key.primaryKeyText(as: keyType)
            guard values.count == layout.names.count else {
                report.append(
                    VerificationProblem(
                        .recordUnreadable, entity: entity, primaryKey: keyText,
                        message: "the record has \(values.count) values for \(layout.names.count) attributes"))
                continue
            }
            if values[layout.primaryKeyIndex] != key {
                report.append(
                    VerificationProblem(
                        .keyMismatch, entity: entity, primaryKey: keyText,
                        message: "the record is kept under another primary key than the one it holds"))
            }
            for (attribute, value) in zip(layout.entity.attributes, values) {
                guard let problem = attribute.verificationProblem(for: value, in: entity) else { continue }
                report.append(
                    VerificationProblem(
                        problem.kind, entity: entity, primaryKey: keyText, attribute: attribute.name,
                        message: problem.message))
            }
            for index in table.uniques {
                guard let entry = index.entry(of: values), index.owners[entry] != key else { continue }
                report.append(
                    VerificationProblem(
                        index.owners[entry] == nil ? .indexEntryMissing : .uniqueViolation, entity: entity,
                        primaryKey: keyText, index: index.name,
                        message: "the unique index has no entry naming the record for its values"))
            }
        }
        for index in table.uniques {
            for (entry, owner) in index.owners {
                guard let values = table.records[owner], index.entry(of: values) != entry else { continue }
                report.append(
                    VerificationProblem(
                        .danglingIndexEntry, entity: entity, primaryKey: owner.primaryKeyText(as: keyType),
                        index: index.name, message: "the unique index has an entry for values its record doesn't hold"))
            }
        }
    }
}
