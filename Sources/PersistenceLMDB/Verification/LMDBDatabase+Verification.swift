@_spi(PersistenceBackend) public import PersistenceCore
@_spi(PersistenceBackend) import PersistenceEngine

extension LMDBDatabase {
    /// Checks the whole store in one read transaction and reports every problem found; changes nothing.
    ///
    /// It checks, streaming (memory does not grow with the number of records):
    ///
    /// - **Records**: each authenticates (encrypted stores) and decodes, has one value per attribute, its
    ///   primary-key attribute equals the key it is stored under, and each value fits its attribute's declared type
    ///   (storage class, `nil` only where optional).
    /// - **Indexes**: each record has its entry in every index (records whose indexed value is `nil` have none, by
    ///   design); each entry points at an existing record whose index key, recomputed from its values, is the
    ///   entry's key; no two records share a unique index's values.
    /// - **Metadata**: the format version, the schema (equal to the model's) and the schema version are present
    ///   and readable; an encrypted store also has its key-derivation record, whose key check matches the keys
    ///   the store was opened with, and a nonce counter ahead of every nonce its records use (behind it, new writes
    ///   could reuse a nonce).
    /// - **Relationships**: every non-`nil` foreign key names a stored record of its target; one that doesn't is a
    ///   `danglingReference` (left by a `noAction` delete rule or raw keys).
    /// - **Named databases**: an `entity:` or `index:` database the model does not declare is a
    ///   `schemaMismatch`; other names are ignored, so later versions may keep their own databases.
    ///
    /// LMDB trusts its page structure: damage there can make the engine report `corrupt` (reported here as
    /// `engineIntegrity`) or, in the worst case, crash the process. Verify a file from an untrusted source in a
    /// separate process before opening it in the app.
    ///
    /// - Throws: `PersistenceError` when the read transaction can't run.
    public func verify() throws -> VerificationReport {
        try read { context in
            var verifier = LMDBVerifier(
                transaction: context.transaction, stores: stores.all, sealer: try sealer, metaDBI: metaDBI)
            var report = try verifier.run()
            try context.verifyReferencesAndFullTextIndexes(into: &report)
            return report
        }
    }

    /// Checks the whole store, as the synchronous `verify()` does, on a thread off the cooperative pool.
    public func verify() async throws -> VerificationReport {
        try await runner.read { try self.verify() }
    }
}
