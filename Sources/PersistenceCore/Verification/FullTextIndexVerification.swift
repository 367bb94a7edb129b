extension StoreContext {
    /// What every backend's `verify()` checks once the records themselves are checked, written once: the references
    /// (``verifyReferences(into:)``) and the full-text indexes (``RecordStorage/verifyFullTextIndexes(of:entity:into:)``).
    @_spi(PersistenceBackend) public func verifyReferencesAndFullTextIndexes(into report: inout VerificationReport)
        throws
    {
        try verifyReferences(into: &report)
        guard graph.hasFullTextIndexes else { return }
        for (position, layout) in graph.layouts.enumerated() {
            try storage.verifyFullTextIndexes(of: layout, entity: position, into: &report)
        }
    }
}

extension RecordStorage {
    /// Checks each complete full-text index of an entity against its records, the same way on every backend that
    /// keeps indexes: the records are read once and cut as the index cuts them, then each of their tokens is looked
    /// up in the index (``fullTextMatches(_:index:entity:)``, what a search reads). Reported: an index holding another
    /// number of records or tokens than the records make (``VerificationProblem/Kind/indexEntryMissing`` when it
    /// holds fewer, ``VerificationProblem/Kind/danglingIndexEntry`` when more), and tokens whose records — which
    /// ones, how often and in records how long — differ (``VerificationProblem/Kind/indexEntryMismatch``). Problems
    /// name the index, never a token or a stored value. Not seen: a token no record holds any longer, left in the
    /// index under a record that the counts and its other tokens find right.
    ///
    /// Memory grows with the number of distinct tokens, not of records: each token keeps a count and a digest of its
    /// records. An index not built, or not completely (the store tool's copies have none; an interrupted opening
    /// left one half-built), is skipped: the next opening builds it, and searches read the records meanwhile. So is
    /// an entity whose records the report already finds damaged.
    @_spi(PersistenceBackend) public func verifyFullTextIndexes(
        of layout: RecordLayout, entity position: Int, into report: inout VerificationReport
    ) throws {
        guard !layout.fullTextIndexes.isEmpty, keepsFullTextIndexes else { return }
        let entity = layout.entity.name
        if report.problems.contains(where: { $0.entity == entity }) { return }
        for index in layout.fullTextIndexes {
            guard let state = try fullTextIndexState(index, entity: position), state.isComplete,
                state.fingerprint == index.fingerprint
            else { continue }
            try verify(index, of: layout, entity: position, into: &report)
        }
    }

    private func verify(
        _ index: FullTextIndexLayout, of layout: RecordLayout, entity position: Int,
        into report: inout VerificationReport
    ) throws {
        let entity = layout.entity.name
        let primaryKey = layout.primaryKeyIndex
        var expected = FullTextIndexDigest()
        try scanValues(.selecting(nil, key: primaryKey), entity: position, attributes: nil) { values in
            expected.add(index.document(of: values, key: values[primaryKey]))
        }
        var mismatched = 0
        // What the index counts, as every search that finds a record reads it; unread when no token finds one.
        var totals: (documents: Int, tokens: Int)?
        for term in expected.terms.keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }) {
            let plan = FullTextPlan(phrases: [.init(tokens: [term], isPrefix: false)])
            let matches = try fullTextMatches(plan, index: index, entity: position)
            if totals == nil, !matches.documents.isEmpty { totals = (matches.documentCount, matches.totalLength) }
            var found = FullTextIndexDigest.Term()
            for document in matches.documents {
                found.add(key: document.key, frequency: document.frequencies.first ?? 0, length: document.length)
            }
            if matches.documentFrequencies.first != found.records || found != expected.terms[term] {
                mismatched += 1
            }
            report.indexEntriesChecked += found.records
        }
        if let totals, totals.documents != expected.documents || totals.tokens != expected.tokens {
            let fewer = totals.documents < expected.documents || totals.tokens < expected.tokens
            report.append(
                VerificationProblem(
                    fewer ? .indexEntryMissing : .danglingIndexEntry, entity: entity, index: index.name,
                    message:
                        "the full-text index counts \(totals.documents) records of \(totals.tokens) tokens; the records "
                        + "make \(expected.documents) of \(expected.tokens)"))
        }
        if mismatched > 0 {
            report.append(
                VerificationProblem(
                    .indexEntryMismatch, entity: entity, index: index.name,
                    message:
                        "\(mismatched) of the \(expected.terms.count) tokens the records hold are filed under other "
                        + "records, or with other counts, in the full-text index"))
        }
    }
}

/// What a full-text index should hold, in memory that grows with its distinct tokens: how many records and tokens,
/// and for each token, how many records hold it and a digest of which ones, how often, in records how long.
struct FullTextIndexDigest {
    /// One token's records: their number, and the sum of a digest of each (the order the index lists them in never
    /// matters).
    struct Term: Equatable {
        private(set) var records = 0
        private var digest: UInt64 = 0

        mutating func add(key: Value, frequency: Int, length: Int) {
            var hasher = Hasher()
            hasher.combine(key)
            hasher.combine(frequency)
            hasher.combine(length)
            records += 1
            digest &+= UInt64(bitPattern: Int64(hasher.finalize()))
        }
    }

    private(set) var documents = 0
    private(set) var tokens = 0
    private(set) var terms: [String: Term] = [:]

    mutating func add(_ document: FullTextDocument) {
        let length = document.length
        documents += 1
        tokens += length
        for (term, positions) in document.termPositions() {
            terms[term, default: Term()].add(key: document.key, frequency: positions.count, length: length)
        }
    }
}
