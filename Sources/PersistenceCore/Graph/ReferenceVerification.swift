extension StoreContext {
    /// Adds a ``VerificationProblem/Kind/danglingReference`` problem for each non-`nil` foreign key that names no
    /// stored record of its target — what ``DeleteRule/noAction``, raw SQL or raw keys can leave. One lookup per
    /// reference; memory does not grow with the number of records. Every backend's `verify()` ends with it.
    ///
    /// An entity whose records the report already finds damaged is skipped: its records may not read, and their
    /// damage is reported.
    @_spi(PersistenceBackend) public func verifyReferences(into report: inout VerificationReport) throws {
        guard !graph.isEmpty else { return }
        for position in graph.references.indices where !graph.references[position].isEmpty {
            let name = graph.layouts[position].entity.name
            if report.problems.contains(where: { $0.entity == name }) { continue }
            try verifyReferences(of: graph.types[position], at: position, into: &report)
        }
    }

    private func verifyReferences<T: Entity>(
        of type: T.Type, at position: Int, into report: inout VerificationReport
    ) throws {
        let layout = graph.layouts[position]
        let keyType = layout.types[layout.primaryKeyIndex]
        try forEachRecordValues(type, where: nil) { values in
            for reference in graph.references[position] {
                let key = values[reference.foreignKey]
                if key == .null { continue }
                if reference.target == position, key == values[layout.primaryKeyIndex] { continue }
                guard try !exists(graph.types[reference.target], key) else { continue }
                report.append(
                    VerificationProblem(
                        .danglingReference, entity: layout.entity.name,
                        primaryKey: values[layout.primaryKeyIndex].primaryKeyText(as: keyType),
                        attribute: layout.names[reference.foreignKey],
                        message:
                            "relationship '\(reference.name)' names a '\(graph.layouts[reference.target].entity.name)' record that doesn't exist"
                    ))
            }
        }
    }

    private func exists<T: Entity>(_ type: T.Type, _ key: Value) throws -> Bool {
        try containsRecord(type, key: key)
    }
}
