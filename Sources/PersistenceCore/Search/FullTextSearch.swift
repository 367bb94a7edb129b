/// A full-text search in a ``Query``: the records whose ``FullTextIndex`` matches the text, ordered by relevance
/// unless the query sorts them.
///
/// ```swift
/// let query = Query(
///     where: Field("published") == true, search: .matching("\"swift concurrency\" actor*"), limit: 10)
/// let articles: [Article] = try db.recover(Article.self, query: query)
/// let hits = try db.search(Article.self, query)          // with scores and snippets
/// ```
///
/// **The text** is words, `"quoted phrases"` and prefixes (`actor*`), cut and folded as the index cuts its records'
/// text (case and accents don't matter; punctuation separates words and is otherwise ignored, so no text is ever
/// query syntax). A record matches when it has **every** word, phrase and prefix — a phrase as consecutive words of
/// one attribute; a run of words joined by punctuation (`e-mail`) is a phrase. A text without words (empty, stop
/// words only) matches no record. On a trigram index each word matches where it occurs inside a word; quotes and
/// `*` change nothing there.
///
/// **Relevance** is BM25 with k1 = 1.2 and b = 0.75 over the index's attributes taken together, each word, phrase or
/// prefix of the text a term: for a record of `length` tokens, among `N` records of `totalLength` tokens, a term it
/// holds `tf` times, found in `n` records, adds `idf · tf · 2.2 / (tf + 1.2 · (0.25 + 0.75 · length / (totalLength /
/// N)))`, with `idf = ln(1 + (N − n + 0.5) / (n + 0.5))`. Every backend computes it from the same counts in the same
/// way, and records of equal relevance come in primary-key order: the same query returns the same records in the same
/// order everywhere.
public struct FullTextSearch: Sendable, Hashable {
    /// The searched text.
    public var text: String
    /// The indexed attributes that name the index to search, or `nil` for the entity's only full-text index.
    public var attributes: [String]?
    /// With attributes, whether the index searched is the trigram one (an entity may index the same attributes
    /// both ways).
    public var tokenizer: FullTextTokenizer?

    /// Searches `text` in the entity's only full-text index, or the index over `attributes`.
    public init(_ text: String, in attributes: [String]? = nil, tokenizer: FullTextTokenizer? = nil) {
        self.text = text
        self.attributes = attributes
        self.tokenizer = tokenizer
    }

    /// Searches `text` in the entity's only full-text index.
    public static func matching(_ text: String) -> FullTextSearch { FullTextSearch(text) }

    /// Searches `text` in the entity's full-text index over exactly these attributes (with `tokenizer`, where the
    /// entity indexes them both ways).
    public static func matching(
        _ text: String, in attributes: String..., tokenizer: FullTextTokenizer? = nil
    ) -> FullTextSearch {
        FullTextSearch(text, in: attributes, tokenizer: tokenizer)
    }
}

/// A search's text as the index matches it: terms that must all match, each a phrase of tokens (one for a word),
/// the last of which may be a prefix.
@_spi(PersistenceBackend) public struct FullTextPlan: Sendable, Hashable {
    /// One term: consecutive tokens, the last of them matching any token it begins (in UTF-8 bytes) when
    /// `isPrefix`.
    @_spi(PersistenceBackend) public struct Phrase: Sendable, Hashable {
        @_spi(PersistenceBackend) public var tokens: [String]
        @_spi(PersistenceBackend) public var isPrefix: Bool

        package init(tokens: [String], isPrefix: Bool) {
            self.tokens = tokens
            self.isPrefix = isPrefix
        }
    }

    /// The terms, in the text's order; empty when the text has no words (it matches nothing).
    @_spi(PersistenceBackend) public var phrases: [Phrase]

    /// A plan of these terms.
    package init(phrases: [Phrase]) { self.phrases = phrases }

    /// The plan of `text` for an index cut by `analyzer`.
    package init(_ text: String, analyzer: FullTextAnalyzer) {
        var phrases: [Phrase] = []
        for chunk in Self.chunks(of: text) {
            switch analyzer.tokenizer {
            case .words:
                let tokens = analyzer.terms(of: chunk.text)
                if !tokens.isEmpty { phrases.append(Phrase(tokens: tokens, isPrefix: chunk.isPrefix)) }
            case .trigram:
                for word in analyzer.words(of: chunk.text) {
                    let grams = FullTextAnalyzer.grams(of: word, fullOnly: true)
                    // A word shorter than three characters begins one of the runs indexed at each character.
                    phrases.append(
                        grams.isEmpty ? Phrase(tokens: [word], isPrefix: true) : Phrase(tokens: grams, isPrefix: false))
                }
            }
        }
        self.phrases = phrases
    }

    /// The text's parts: each quoted phrase, and each run of other text between spaces; `*` right after one makes
    /// its last word a prefix.
    private static func chunks(of text: String) -> [(text: String, isPrefix: Bool)] {
        var chunks: [(text: String, isPrefix: Bool)] = []
        var current = ""
        var quoted = false
        func finish(_ isPrefix: Bool) {
            var text = current
            var prefix = isPrefix
            if text.hasSuffix("*") {
                text.removeLast()
                prefix = true
            }
            if !text.isEmpty { chunks.append((text, prefix)) }
            current = ""
        }
        var characters = text[...]
        while let character = characters.popFirst() {
            if character == "\"" {
                if quoted {
                    let prefix = characters.first == "*"
                    if prefix { characters.removeFirst() }
                    finish(prefix)
                } else {
                    finish(false)
                }
                quoted.toggle()
            } else if !quoted && character.isWhitespace {
                finish(false)
            } else {
                current.append(character)
            }
        }
        finish(false)
        return chunks
    }
}
