@_spi(PersistenceBackend) public import PersistenceCore
@_spi(PersistenceBackend) import PersistenceEngine

extension SQLiteDatabase {
    /// Checks the whole store in one read transaction and reports every problem found; changes nothing.
    ///
    /// It checks:
    ///
    /// - **The file**: SQLite's `PRAGMA integrity_check` (pages, b-trees, indexes against their tables, `NOT NULL`
    ///   constraints); each message it reports is an `engineIntegrity` problem. A damaged page met while reading
    ///   is one too.
    /// - **The schema**: the metadata table holds the format version, the model version and a schema equal to the
    ///   model; each entity's table exists with one column per attribute, of the declared type, `NOT NULL` where
    ///   the attribute is not optional, keyed by the primary key; each declared index exists, on the same columns
    ///   and equally unique. Indexes the model does not declare are ignored unless they are unique (they then
    ///   refuse writes the model allows), and so are tables it does not declare.
    /// - **Every row**: each value fits its attribute's declared type — storage class, `NULL` only where
    ///   optional, booleans 0 or 1, 16-byte UUIDs, parseable URLs and JSON — so the row decodes as the entity. SQLite
    ///   columns accept any value, so raw SQL can store what the entity can't read; this finds it by primary key.
    /// - **Relationships**: every non-`nil` foreign key names a stored record of its target; one that doesn't is a
    ///   `danglingReference` (left by a `noAction` delete rule or raw SQL).
    ///
    /// Memory does not grow with the number of rows. SQLite checks index entries itself, so the report's
    /// ``VerificationReport/indexEntriesChecked`` is 0.
    ///
    /// - Throws: `PersistenceError` when the read transaction can't run; a file too damaged to open fails earlier,
    ///   at `SQLiteBuilder.create()`, with `corrupt`.
    public func verify() throws -> VerificationReport {
        var finished: VerificationReport?
        do {
            return try read { context in
                var verifier = SQLiteVerifier(connection: context.storage.connection, mappings: mappings.all)
                var report = try verifier.run()
                finished = report
                try context.verifyReferencesAndFullTextIndexes(into: &report)
                finished = report
                return report
            }
        } catch let error as PersistenceError where error.code == .corrupt {
            // After meeting a damaged page SQLite may fail to end the read transaction too (it is rolled back
            // instead); the damage is in the report already, which is complete.
            guard let finished else { throw error }
            return finished
        }
    }

    /// Checks the whole store, as the synchronous `verify()` does, on a thread off the cooperative pool.
    public func verify() async throws -> VerificationReport {
        try await runner.read { try self.verify() }
    }
}
