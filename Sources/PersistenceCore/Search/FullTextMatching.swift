/// One posting a storage read: a record holding a token, its length, and the token's positions in it (computed only
/// when a phrase needs them).
@_spi(PersistenceBackend) public struct FullTextPosting {
    @_spi(PersistenceBackend) public var key: Value
    @_spi(PersistenceBackend) public var length: Int
    /// How many times the record holds the token.
    @_spi(PersistenceBackend) public var frequency: Int
    /// The token's positions, increasing (``FullTextDocument/termPositions()``).
    @_spi(PersistenceBackend) public var positions: () throws -> [Int]

    @_spi(PersistenceBackend) public init(
        key: Value, length: Int, frequency: Int, positions: @escaping () throws -> [Int]
    ) {
        self.key = key
        self.length = length
        self.frequency = frequency
        self.positions = positions
    }
}

/// How the core matches a plan against an inverted index a storage keeps (token → the records holding it, with
/// positions): the one matcher of the backends that keep postings (LMDB, PostgreSQL) and of the scan every other
/// backend gets, so that each counts what BM25 needs in the same way as SQLite's FTS5.
@_spi(PersistenceBackend) public enum FullTextMatching {
    /// Matches `plan` against postings read by `postings` (each posting of the token, or of every token beginning
    /// with it when `prefix`), in an index of `statistics` records and tokens.
    @_spi(PersistenceBackend) public static func matches(
        _ plan: FullTextPlan, statistics: (documents: Int, tokens: Int),
        postings: (_ token: String, _ prefix: Bool, _ visit: (FullTextPosting) throws -> Void) throws -> Void
    ) throws -> FullTextMatches {
        guard !plan.phrases.isEmpty else { return .none }
        var lengths: [Value: Int] = [:]
        var frequencies: [[Value: Int]] = []
        for phrase in plan.phrases {
            var found: [Value: Int] = [:]
            if phrase.tokens.count == 1 {
                try postings(phrase.tokens[0], phrase.isPrefix) { posting in
                    found[posting.key, default: 0] += posting.frequency
                    lengths[posting.key] = posting.length
                }
            } else {
                var tokenPositions: [[Value: [Int]]] = []
                for (offset, token) in phrase.tokens.enumerated() {
                    let prefix = phrase.isPrefix && offset == phrase.tokens.count - 1
                    var positions: [Value: [Int]] = [:]
                    // Only records that hold the tokens before this one can hold the phrase.
                    let previous = tokenPositions.last
                    try postings(token, prefix) { posting in
                        guard previous == nil || previous?[posting.key] != nil else { return }
                        positions[posting.key, default: []] += try posting.positions()
                        lengths[posting.key] = posting.length
                    }
                    if prefix {
                        for (key, list) in positions { positions[key] = list.sorted() }
                    }
                    tokenPositions.append(positions)
                }
                for (key, starts) in tokenPositions[0] {
                    var count = 0
                    starting: for start in starts {
                        for offset in 1..<tokenPositions.count {
                            guard let list = tokenPositions[offset][key], contains(list, start + offset) else {
                                continue starting
                            }
                        }
                        count += 1
                    }
                    if count > 0 { found[key] = count }
                }
            }
            frequencies.append(found)
        }
        let smallest = frequencies.indices.min { frequencies[$0].count < frequencies[$1].count } ?? 0
        var documents: [FullTextMatches.Document] = []
        candidates: for (key, _) in frequencies[smallest] {
            var counts: [Int] = []
            counts.reserveCapacity(frequencies.count)
            for phrase in frequencies {
                guard let count = phrase[key] else { continue candidates }
                counts.append(count)
            }
            documents.append(FullTextMatches.Document(key: key, length: lengths[key] ?? 0, frequencies: counts))
        }
        return FullTextMatches(
            documentCount: statistics.documents, totalLength: statistics.tokens,
            documentFrequencies: frequencies.map(\.count), documents: documents)
    }

    /// Matches `plan` against `documents` — every record of the entity, read by a scan: what a backend that keeps no
    /// index searches through.
    package static func matches(_ plan: FullTextPlan, documents: [FullTextDocument]) throws -> FullTextMatches {
        var postings: [String: [(index: Int, positions: [Int])]] = [:]
        var tokens = 0
        for (index, document) in documents.enumerated() {
            tokens += document.length
            for (term, positions) in document.termPositions() { postings[term, default: []].append((index, positions)) }
        }
        let terms = postings.keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        return try matches(plan, statistics: (documents.count, tokens)) { token, prefix, visit in
            let matching = prefix ? terms.filter { $0.utf8.starts(with: token.utf8) } : [token]
            for term in matching {
                for posting in postings[term] ?? [] {
                    let document = documents[posting.index]
                    try visit(
                        FullTextPosting(
                            key: document.key, length: document.length, frequency: posting.positions.count,
                            positions: { posting.positions }))
                }
            }
        }
    }

    /// Whether the increasing `list` holds `value`.
    private static func contains(_ list: [Int], _ value: Int) -> Bool {
        var low = 0
        var high = list.count
        while low < high {
            let middle = (low + high) / 2
            if list[middle] < value { low = middle + 1 } else { high = middle }
        }
        return low < list.count && list[low] == value
    }
}
