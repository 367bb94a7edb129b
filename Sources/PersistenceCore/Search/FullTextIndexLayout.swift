import Foundation

/// A full-text index of an entity as backends keep it: its definition, the positions of its attributes in the
/// entity's layout, its tokenizer, and the fingerprint of what it is built for.
@_spi(PersistenceBackend) public final class FullTextIndexLayout: Sendable {
    /// The declaration.
    @_spi(PersistenceBackend) public let index: FullTextIndex
    /// The index's name (``FullTextIndex/name(in:)``): unique in the store, since entity names are.
    @_spi(PersistenceBackend) public let name: String
    /// The indexed attributes' positions in the entity's layout, in the index's order.
    @_spi(PersistenceBackend) public let positions: [Int]
    /// What a stored index must have been built for to be used: the definition and the tokenizer's rules' version.
    /// A backend stores it with the index; a different one means the index is rebuilt.
    @_spi(PersistenceBackend) public let fingerprint: String
    package let analyzer: FullTextAnalyzer

    package init(_ index: FullTextIndex, entity: String, positions: [Int]) {
        self.index = index
        name = index.name(in: entity)
        self.positions = positions
        analyzer = FullTextAnalyzer(index)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let definition = (try? encoder.encode(index)).map { String(decoding: $0, as: UTF8.self) } ?? name
        fingerprint = "v\(FullTextAnalyzer.version) " + definition
    }

    /// The document a record's values make: its key and the tokens of each indexed attribute (none for `nil`).
    package func document(of values: [Value], key: Value) -> FullTextDocument {
        FullTextDocument(
            key: key,
            columns: positions.map { position in
                guard case .text(let text) = values[position] else { return [] }
                return analyzer.terms(of: text)
            })
    }
}

/// One record as a full-text index holds it.
@_spi(PersistenceBackend) public struct FullTextDocument: Sendable {
    /// The record's primary key.
    @_spi(PersistenceBackend) public var key: Value
    /// The tokens of each indexed attribute, in the index's order of attributes.
    @_spi(PersistenceBackend) public var columns: [[String]]

    package init(key: Value, columns: [[String]]) {
        self.key = key
        self.columns = columns
    }

    /// How many tokens the record has: its length, for relevance.
    @_spi(PersistenceBackend) public var length: Int { columns.reduce(0) { $0 + $1.count } }

    /// Each distinct token with its positions, in increasing order of the tokens' UTF-8 bytes. Positions count
    /// tokens through the attributes in order, one position left out between two attributes, so that no phrase
    /// matches across them.
    @_spi(PersistenceBackend) public func termPositions() -> [(term: String, positions: [Int])] {
        var positions: [String: [Int]] = [:]
        var position = 0
        for column in columns {
            for token in column {
                positions[token, default: []].append(position)
                position += 1
            }
            position += 1
        }
        return positions.map { ($0.key, $0.value) }.sorted { $0.term.utf8.lexicographicallyPrecedes($1.term.utf8) }
    }
}

/// What a full-text index found for a plan (``FullTextPlan``): the counts relevance is computed from.
@_spi(PersistenceBackend) public struct FullTextMatches: Sendable {
    /// One record that matches every term.
    @_spi(PersistenceBackend) public struct Document: Sendable {
        @_spi(PersistenceBackend) public var key: Value
        /// Its tokens.
        @_spi(PersistenceBackend) public var length: Int
        /// How many times it holds each term of the plan, in the plan's order.
        @_spi(PersistenceBackend) public var frequencies: [Int]

        @_spi(PersistenceBackend) public init(key: Value, length: Int, frequencies: [Int]) {
            self.key = key
            self.length = length
            self.frequencies = frequencies
        }
    }

    /// How many records the index holds.
    @_spi(PersistenceBackend) public var documentCount: Int
    /// How many tokens they hold.
    @_spi(PersistenceBackend) public var totalLength: Int
    /// How many records hold each term of the plan, in the plan's order (whether or not they hold the others).
    @_spi(PersistenceBackend) public var documentFrequencies: [Int]
    /// The records that hold every term, in any order.
    @_spi(PersistenceBackend) public var documents: [Document]

    @_spi(PersistenceBackend) public init(
        documentCount: Int, totalLength: Int, documentFrequencies: [Int], documents: [Document]
    ) {
        self.documentCount = documentCount
        self.totalLength = totalLength
        self.documentFrequencies = documentFrequencies
        self.documents = documents
    }

    /// Nothing matched (a plan without terms).
    package static let none = FullTextMatches(documentCount: 0, totalLength: 0, documentFrequencies: [], documents: [])

    /// The BM25 relevance of each matching record, in ``documents``' order (see ``FullTextSearch``).
    package func scores() -> [Double] {
        guard documentCount > 0, totalLength > 0 else { return documents.map { _ in 0 } }
        let k1 = 1.2
        let b = 0.75
        let count = Double(documentCount)
        let average = Double(totalLength) / count
        let idf = documentFrequencies.map { frequency in
            let n = Double(frequency)
            return log(1 + (count - n + 0.5) / (n + 0.5))
        }
        return documents.map { document in
            let norm = k1 * (1 - b + b * Double(document.length) / average)
            var score = 0.0
            for (term, frequency) in document.frequencies.enumerated() {
                let tf = Double(frequency)
                score += idf[term] * (tf * (k1 + 1)) / (tf + norm)
            }
            return score
        }
    }
}
