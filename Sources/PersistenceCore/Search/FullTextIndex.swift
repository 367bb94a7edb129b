/// A full-text index over one or more text attributes of an entity: searched with ``FullTextSearch`` in an ordinary
/// ``Query``, ranked by one definition of relevance (``FullTextSearch``) that every backend computes alike.
///
/// ```swift
/// struct Article: Entity {
///     var id: Int64
///     var title: String
///     var body: String
///     static let fullTextIndexes: [FullTextIndex] = [.on("title", "body")]
/// }
/// ```
///
/// The index is part of the stored schema: declaring, changing or dropping one is a schema change (a new model or
/// schema version) that every backend migrates without code, rebuilding the index from the records.
public struct FullTextIndex: Sendable, Hashable, Codable {
    /// The indexed attributes — text (`String` or `URL`) attributes of the entity, optional or not — in order: a
    /// phrase matches within one of them, never across two.
    public var attributes: [String]
    /// How text is cut into tokens.
    public var tokenizer: FullTextTokenizer
    /// Words neither indexed nor searched (folded as every token is: "The" drops "the"). A query of stop words only
    /// matches nothing.
    public var stopWords: [String]

    /// Creates an index; ``on(_:tokenizer:stopWords:)`` reads better in a declaration.
    public init(attributes: [String], tokenizer: FullTextTokenizer = .words, stopWords: [String] = []) {
        self.attributes = attributes
        self.tokenizer = tokenizer
        self.stopWords = stopWords
    }

    /// A full-text index on the attributes.
    public static func on(
        _ attributes: String..., tokenizer: FullTextTokenizer = .words, stopWords: [String] = []
    ) -> FullTextIndex {
        FullTextIndex(attributes: attributes, tokenizer: tokenizer, stopWords: stopWords)
    }

    /// A stable name for the index, derived from the entity, the tokenizer and the attributes.
    public func name(in entity: String) -> String {
        (tokenizer == .words ? "fulltext_" : "fulltext_trigram_") + entity + "_" + attributes.joined(separator: "_")
    }

    private enum CodingKeys: String, CodingKey { case attributes, tokenizer, stopWords }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        attributes = try container.decode([String].self, forKey: .attributes)
        tokenizer = try container.decode(FullTextTokenizer.self, forKey: .tokenizer)
        stopWords = try container.decodeIfPresent([String].self, forKey: .stopWords) ?? []
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(attributes, forKey: .attributes)
        try container.encode(tokenizer, forKey: .tokenizer)
        if !stopWords.isEmpty { try container.encode(stopWords, forKey: .stopWords) }
    }
}

/// How a ``FullTextIndex`` cuts text into tokens. Both fold case (Unicode lowercase mapping) and diacritics (the
/// combining accents of Latin, Greek and Cyrillic letters: "Élan" is "elan"), and both split text at whatever is
/// not a letter, a digit or a mark.
public enum FullTextTokenizer: String, Sendable, Hashable, Codable, CaseIterable {
    /// Words: each run of letters, digits and marks is a token; each Han ideograph, hiragana and katakana character
    /// is a token of its own, so that a query in Chinese or Japanese matches as a phrase of characters.
    case words
    /// Trigrams, for substring search and for scripts written without spaces: every word is indexed as the runs of
    /// up to three characters that start at each of its characters. A query word of three characters or more
    /// matches where it occurs inside a word; a shorter one, where a word contains it.
    case trigram
}

extension EntityDescription {
    /// Checks the entity's full-text indexes against its attributes.
    /// - Throws: ``PersistenceError/Code/unknownAttribute`` for an attribute it hasn't,
    ///   ``PersistenceError/Code/invalidSchema`` for one that isn't text, an index on no attributes or naming one
    ///   twice, or two indexes with one name.
    package func validateFullTextIndexes() throws {
        var names = Set<String>()
        for index in fullTextIndexes {
            let name = index.name(in: self.name)
            guard !index.attributes.isEmpty else {
                throw PersistenceError(.invalidSchema, "a full-text index of entity '\(self.name)' names no attributes")
            }
            guard names.insert(name).inserted else {
                throw PersistenceError(
                    .invalidSchema, "entity '\(self.name)' declares the full-text index '\(name)' twice")
            }
            guard Set(index.attributes).count == index.attributes.count else {
                throw PersistenceError(
                    .invalidSchema, "the full-text index '\(name)' names an attribute twice")
            }
            for attributeName in index.attributes {
                guard let attribute = attribute(named: attributeName) else {
                    throw PersistenceError(
                        .unknownAttribute,
                        "a full-text index of entity '\(self.name)' names unknown attribute '\(attributeName)'")
                }
                guard attribute.type.storageClass == .text else {
                    throw PersistenceError(
                        .invalidSchema,
                        "the full-text index '\(name)' names '\(attributeName)' (\(attribute.type.rawValue)), "
                            + "which isn't text")
                }
            }
        }
    }
}
