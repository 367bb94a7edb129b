/// What keeps a store's full-text indexes in step with its records, on every backend that keeps them:
///
/// - every write takes in the records it changed — before it commits (``FullTextIndexHook``), before a search in it
///   and before a savepoint — so an index never differs from the committed records, nor within a write from what it
///   wrote;
/// - opening a store builds each declared index that is missing, was built for another definition or before a
///   migration, in small writes that a later opening resumes (``Database/buildFullTextIndexes(schemaVersion:)``), and
///   drops the indexes no longer declared. Until an index is complete, searches read the records instead: slower,
///   never different.
package protocol FullTextMaintaining {
    /// Brings the indexes in step with what the write changed so far.
    func updateFullTextIndexes() throws
    /// Whether any index needs building or dropping (read in a read transaction).
    func fullTextIndexesNeedWork(schemaVersion: Int) throws -> Bool
    /// Builds one batch of one index, or drops what is no longer declared; `true` once nothing is left to do.
    func buildFullTextIndexes(schemaVersion: Int, batch: Int) throws -> Bool
    /// The names of the full-text indexes the store holds, declared or not (none where the backend keeps none).
    func storedFullTextIndexNames() throws -> Set<String>
}

/// The will-commit hook that takes a write's changes into the store's full-text indexes (a model whose entities
/// declare some carries it: ``TransactionDriver``).
package struct FullTextIndexHook: WillCommitHook {
    package init() {}

    package func willCommit(_ changes: ChangeRecorder, in context: some DatabaseContext) throws {
        try (context as? any FullTextMaintaining)?.updateFullTextIndexes()
    }
}

extension Model {
    /// Whether an entity of the model declares a full-text index.
    package var hasFullTextIndexes: Bool { entities.contains { !$0.fullTextIndexes.isEmpty } }
}

extension MigrationReport {
    /// Whether a step declared, changed or dropped a full-text index.
    package var changesFullTextIndexes: Bool {
        steps.contains { step in step.changes.contains { $0.hasPrefix(SchemaDifference.fullTextIndexClause) } }
    }
}

extension Database {
    /// Builds the full-text indexes the model declares and drops those it no longer does: nothing when all are as
    /// declared (one read), otherwise one small write per batch of records (a later opening resumes an interrupted
    /// build). Backends call it when a store opens, after any migration.
    ///
    /// A store whose model declares no full-text index, and whose opening migrated none away (`migration`), has none
    /// to build or drop: nothing is read.
    package func buildFullTextIndexes(
        schemaVersion: Int, model: Model, migration: MigrationReport?, batch: Int = 1_000
    ) throws {
        guard model.hasFullTextIndexes || migration?.changesFullTextIndexes == true else { return }
        let needsWork = try read { context in
            try (context as? any FullTextMaintaining)?.fullTextIndexesNeedWork(schemaVersion: schemaVersion) ?? false
        }
        guard needsWork else { return }
        while try !write({ context in
            try (context as? any FullTextMaintaining)?.buildFullTextIndexes(schemaVersion: schemaVersion, batch: batch)
                ?? true
        }) {}
    }
}

extension MigratingDatabase {
    /// An opening's last step on every backend, after any migration and outside the opening's transaction: builds
    /// the full-text indexes (`buildFullTextIndexes(schemaVersion:model:migration:batch:)`) and gives the
    /// open database back; when the build fails, closes the database (releasing what it holds) and throws.
    package func buildingFullTextIndexes(schemaVersion: Int, model: Model) throws -> Self {
        do {
            try buildFullTextIndexes(schemaVersion: schemaVersion, model: model, migration: migrationReport)
        } catch {
            try? close()
            throw error
        }
        return self
    }
}

extension StoreContext: FullTextMaintaining {
    package func updateFullTextIndexes() throws {
        guard graph.hasFullTextIndexes, storage.keepsFullTextIndexes, let recorder = state.recorder else { return }
        if recorder.touchedEverything && !recorder.rebuiltAfterEverything {
            // Raw SQL changed what it can't name: every index is rebuilt from the records, in this write.
            _ = recorder.takeChangedKeys()
            for (position, layout) in graph.layouts.enumerated() {
                for index in layout.fullTextIndexes {
                    guard var state = try storage.fullTextIndexState(index, entity: position) else { continue }
                    state.isComplete = false
                    state.builtThrough = nil
                    try storage.setFullTextIndexState(state, index: index, entity: position, emptying: true)
                    while try !indexBatch(index, of: position, state: &state, batch: 10_000) {}
                    try storage.setFullTextIndexState(state, index: index, entity: position, emptying: false)
                }
            }
            recorder.rebuiltAfterEverything = true
            return
        }
        for (entity, keys) in recorder.takeChangedKeys() {
            guard let position = graph.position(named: entity) else { continue }
            let layout = graph.layouts[position]
            guard !layout.fullTextIndexes.isEmpty else { continue }
            var indexes: [FullTextIndexLayout] = []
            for index in layout.fullTextIndexes where try storage.fullTextIndexState(index, entity: position) != nil {
                indexes.append(index)
            }
            guard !indexes.isEmpty else { continue }
            var documents = Array(repeating: [FullTextDocument](), count: indexes.count)
            try visitRecords(keys, of: position) { values in
                let key = values[layout.primaryKeyIndex]
                for (offset, index) in indexes.enumerated() {
                    documents[offset].append(index.document(of: values, key: key))
                }
            }
            for (offset, index) in indexes.enumerated() {
                try storage.updateFullTextIndex(index, entity: position, removing: keys, adding: documents[offset])
            }
        }
    }

    package func storedFullTextIndexNames() throws -> Set<String> {
        try use(writing: false)
        return storage.keepsFullTextIndexes ? try storage.storedFullTextIndexes() : []
    }

    package func fullTextIndexesNeedWork(schemaVersion: Int) throws -> Bool {
        guard storage.keepsFullTextIndexes else { return false }
        var declared = Set<String>()
        for (position, layout) in graph.layouts.enumerated() {
            for index in layout.fullTextIndexes {
                declared.insert(index.name)
                guard let state = try storage.fullTextIndexState(index, entity: position),
                    state.isComplete, state.fingerprint == index.fingerprint, state.schemaVersion == schemaVersion
                else { return true }
            }
        }
        return try !storage.storedFullTextIndexes().isSubset(of: declared)
    }

    package func buildFullTextIndexes(schemaVersion: Int, batch: Int) throws -> Bool {
        try use(writing: true)
        guard storage.keepsFullTextIndexes else { return true }
        var declared = Set<String>()
        for (position, layout) in graph.layouts.enumerated() {
            for index in layout.fullTextIndexes {
                declared.insert(index.name)
                var state: FullTextIndexState
                if let stored = try storage.fullTextIndexState(index, entity: position),
                    stored.fingerprint == index.fingerprint, stored.schemaVersion == schemaVersion
                {
                    state = stored
                } else {
                    state = FullTextIndexState(
                        fingerprint: index.fingerprint, schemaVersion: schemaVersion, isComplete: false)
                    try storage.setFullTextIndexState(state, index: index, entity: position, emptying: true)
                }
                guard !state.isComplete else { continue }
                _ = try indexBatch(index, of: position, state: &state, batch: batch)
                try storage.setFullTextIndexState(state, index: index, entity: position, emptying: false)
                return false
            }
        }
        for name in try storage.storedFullTextIndexes().subtracting(declared) {
            try storage.dropFullTextIndex(named: name)
        }
        return true
    }

    /// Indexes the next `batch` records after `state`'s last one, in primary-key order; `true` (and the state
    /// complete) when none is left.
    private func indexBatch(
        _ index: FullTextIndexLayout, of position: Int, state: inout FullTextIndexState, batch: Int
    ) throws -> Bool {
        let layout = graph.layouts[position]
        let primaryKey = layout.primaryKeyIndex
        let query = ResolvedQuery(
            condition: state.builtThrough.map { .comparison(primaryKey, .greater, $0) },
            sort: [(primaryKey, true)], limit: batch, offset: 0)
        var documents: [FullTextDocument] = []
        try storage.scanValues(query, entity: position, attributes: nil) { values in
            documents.append(index.document(of: values, key: values[primaryKey]))
        }
        // Replaced: a write since the build began may have indexed some of them already.
        try storage.updateFullTextIndex(
            index, entity: position, removing: documents.map(\.key), adding: documents)
        if let last = documents.last { state.builtThrough = last.key }
        state.isComplete = documents.count < batch
        return state.isComplete
    }

    /// Calls `visit` with the values of each stored record among `keys`, a few hundred keys a query.
    private func visitRecords(_ keys: [Value], of position: Int, _ visit: ([Value]) throws -> Void) throws {
        let primaryKey = graph.layouts[position].primaryKeyIndex
        var start = 0
        while start < keys.count {
            let end = min(start + 500, keys.count)
            let query = ResolvedQuery(
                condition: .oneOf(primaryKey, Array(keys[start..<end])), sort: [(primaryKey, true)], limit: nil,
                offset: 0)
            try storage.scanValues(query, entity: position, attributes: nil, visit)
            start = end
        }
    }
}
