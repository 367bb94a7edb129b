/// A record a full-text search found: the record, its relevance, and where the search's words are in its text.
///
/// ```swift
/// for hit in try db.search(Article.self, Query(search: .matching("swift actor"), limit: 10)) {
///     print(hit.score, hit.snippet(of: "body") ?? hit.record.title)   // "… a [Swift] [actor] isolates …"
/// }
/// ```
public struct SearchHit<E: Entity> {
    /// The record.
    public var record: E
    /// Its relevance (BM25, ``FullTextSearch``): higher is more relevant; the same on every backend.
    public var score: Double
    /// The indexed attributes' values, in the index's order.
    let texts: [Value]
    let highlighter: FullTextHighlighter

    /// The ranges of the indexed attribute's text that the search matched, in order and apart — each word of a
    /// matched phrase, or (on a trigram index) each word a query word occurs in. Empty for an attribute the index
    /// doesn't hold, or one without a match.
    public func highlights(in attribute: String) -> [Range<String.Index>] {
        guard let text = text(of: attribute) else { return [] }
        return highlighter.highlights(in: text)
    }

    /// A short passage of the attribute's text around its best cluster of matches, each matched word between
    /// `opening` and `closing`, with `ellipsis` where the passage cuts the text; `nil` when the attribute has no
    /// match.
    /// - Parameter words: How many words the passage holds at most.
    public func snippet(
        of attribute: String, words: Int = 12, opening: String = "[", closing: String = "]", ellipsis: String = "…"
    ) -> String? {
        guard let text = text(of: attribute) else { return nil }
        return highlighter.snippet(
            of: text, words: max(1, words), opening: opening, closing: closing, ellipsis: ellipsis)
    }

    private func text(of attribute: String) -> String? {
        guard let at = highlighter.attributes.firstIndex(of: attribute), case .text(let text) = texts[at] else {
            return nil
        }
        return text
    }
}

extension SearchHit: Sendable where E: Sendable {}

/// Finds a plan's matches in text, as the index tokenized it.
struct FullTextHighlighter: Sendable {
    let plan: FullTextPlan
    let analyzer: FullTextAnalyzer
    /// The indexed attributes' names, in the index's order.
    let attributes: [String]

    init(plan: FullTextPlan, index: FullTextIndexLayout, layout: RecordLayout) {
        self.plan = plan
        analyzer = index.analyzer
        attributes = index.index.attributes
    }

    func highlights(in text: String) -> [Range<String.Index>] {
        var ranges: [Range<String.Index>] = []
        switch analyzer.tokenizer {
        case .words:
            let tokens = analyzer.tokens(of: text)
            for phrase in plan.phrases where phrase.tokens.count <= tokens.count {
                for start in 0...(tokens.count - phrase.tokens.count) {
                    let matched = phrase.tokens.indices.allSatisfy { offset in
                        let token = tokens[start + offset]
                        // Consecutive: no stop word or attribute boundary between (ordinals count kept tokens).
                        guard token.ordinal == tokens[start].ordinal + offset else { return false }
                        let isLast = offset == phrase.tokens.count - 1
                        return phrase.isPrefix && isLast
                            ? token.text.utf8.starts(with: phrase.tokens[offset].utf8)
                            : token.text == phrase.tokens[offset]
                    }
                    if matched { ranges += tokens[start..<(start + phrase.tokens.count)].map(\.range) }
                }
            }
        case .trigram:
            let words = plan.phrases.map { phrase in
                phrase.isPrefix
                    ? Array(phrase.tokens[0].unicodeScalars)
                    : Array(phrase.tokens[0].unicodeScalars)
                        + phrase.tokens.dropFirst().compactMap(\.unicodeScalars.last)
            }
            FullTextAnalyzer.forEachWord(in: text, splittingIdeographs: false) { range in
                guard let folded = FullTextAnalyzer.fold(text.unicodeScalars[range]) else { return }
                let scalars = Array(folded.unicodeScalars)
                if words.contains(where: { Self.contains(scalars, $0) }) {
                    ranges.append(range.lowerBound..<range.upperBound)
                }
            }
        }
        ranges.sort { $0.lowerBound < $1.lowerBound }
        var merged: [Range<String.Index>] = []
        for range in ranges {
            if let last = merged.last, range.lowerBound <= last.upperBound {
                merged[merged.count - 1] = last.lowerBound..<max(last.upperBound, range.upperBound)
            } else {
                merged.append(range)
            }
        }
        return merged
    }

    func snippet(of text: String, words count: Int, opening: String, closing: String, ellipsis: String) -> String? {
        let highlights = highlights(in: text)
        guard !highlights.isEmpty else { return nil }
        var words: [Range<String.Index>] = []
        FullTextAnalyzer.forEachWord(in: text, splittingIdeographs: analyzer.tokenizer == .words) { range in
            words.append(range.lowerBound..<range.upperBound)
        }
        let matched = words.map { word in highlights.contains { $0.overlaps(word) } }
        // The window of `count` words with the most matched words (the first such).
        var best = 0
        var bestCount = -1
        var inWindow = 0
        for end in words.indices {
            if matched[end] { inWindow += 1 }
            if end >= count, matched[end - count] { inWindow -= 1 }
            let start = max(0, end - count + 1)
            if inWindow > bestCount {
                bestCount = inWindow
                best = start
            }
        }
        // Centred on the matched words it holds.
        let held = (best..<min(words.count, best + count)).filter { matched[$0] }
        if let first = held.first, let lastHeld = held.last {
            best = max(0, min((first + lastHeld) / 2 - count / 2, words.count - count))
        }
        let last = min(words.count, best + count) - 1
        guard last >= best else { return nil }
        let window = words[best].lowerBound..<words[last].upperBound
        var snippet = best > 0 ? ellipsis : ""
        var cursor = window.lowerBound
        for highlight in highlights where highlight.overlaps(window) {
            let lower = max(highlight.lowerBound, window.lowerBound)
            let upper = min(highlight.upperBound, window.upperBound)
            snippet += text[cursor..<lower] + opening + text[lower..<upper] + closing
            cursor = upper
        }
        snippet += text[cursor..<window.upperBound]
        if last < words.count - 1 { snippet += ellipsis }
        return snippet
    }

    /// Whether `scalars` holds `word` as consecutive scalars.
    private static func contains(_ scalars: [Unicode.Scalar], _ word: [Unicode.Scalar]) -> Bool {
        guard !word.isEmpty, word.count <= scalars.count else { return word.isEmpty }
        return (0...(scalars.count - word.count)).contains { start in
            scalars[start..<(start + word.count)].elementsEqual(word)
        }
    }
}
