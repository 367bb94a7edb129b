import Foundation

/// Cuts text into the tokens of a ``FullTextIndex``: the one tokenizer every backend's index is fed by, so that a
/// query matches the same records on SQLite, LMDB and PostgreSQL.
///
/// A token is folded — Unicode lowercase mapping, then without the combining accents of Latin, Greek and Cyrillic
/// letters (canonical decomposition, marks in the combining-diacritics blocks dropped, recomposed) — and at most
/// ``maximumTokenBytes`` bytes of UTF-8 (a longer word is cut at a character boundary, in documents and queries
/// alike). Tokens hold letters, digits and marks only: never a space, quote or other ASCII punctuation.
package struct FullTextAnalyzer: Sendable {
    /// The longest token, in bytes of UTF-8.
    package static let maximumTokenBytes = 128
    /// The tokenizer's rules' version: part of what an index is built for, so that a change to these rules rebuilds
    /// every index.
    package static let version = 1

    package let tokenizer: FullTextTokenizer
    /// The folded stop words.
    package let stopWords: Set<String>

    package init(_ index: FullTextIndex) {
        tokenizer = index.tokenizer
        var folded = Set<String>()
        for word in index.stopWords {
            Self.forEachWord(in: word, splittingIdeographs: index.tokenizer == .words) { range in
                if let token = Self.fold(word.unicodeScalars[range]) { folded.insert(token) }
            }
        }
        stopWords = folded
    }

    /// One token of a text: its folded text, its ordinal among the text's tokens, and where it came from (the whole
    /// word, for a trigram).
    package struct Token {
        package var text: String
        package var ordinal: Int
        package var range: Range<String.Index>
    }

    /// The tokens of `text`, in order, their ordinals counting from 0 with stop words left out.
    package func tokens(of text: String) -> [Token] {
        var tokens: [Token] = []
        var ordinal = 0
        Self.forEachWord(in: text, splittingIdeographs: tokenizer == .words) { range in
            guard let word = Self.fold(text.unicodeScalars[range]), !stopWords.contains(word) else { return }
            let stringRange = range.lowerBound..<range.upperBound
            switch tokenizer {
            case .words:
                tokens.append(Token(text: word, ordinal: ordinal, range: stringRange))
                ordinal += 1
            case .trigram:
                for gram in Self.grams(of: word, fullOnly: false) {
                    tokens.append(Token(text: gram, ordinal: ordinal, range: stringRange))
                    ordinal += 1
                }
            }
        }
        return tokens
    }

    /// The tokens' texts only (what an index stores), in order.
    package func terms(of text: String) -> [String] {
        var terms: [String] = []
        Self.forEachWord(in: text, splittingIdeographs: tokenizer == .words) { range in
            guard let word = Self.fold(text.unicodeScalars[range]), !stopWords.contains(word) else { return }
            switch tokenizer {
            case .words: terms.append(word)
            case .trigram: terms += Self.grams(of: word, fullOnly: false)
            }
        }
        return terms
    }

    /// The folded words of `text` (a query's), stop words left out.
    package func words(of text: String) -> [String] {
        var words: [String] = []
        Self.forEachWord(in: text, splittingIdeographs: tokenizer == .words) { range in
            if let word = Self.fold(text.unicodeScalars[range]), !stopWords.contains(word) { words.append(word) }
        }
        return words
    }

    /// The runs of up to three characters starting at each character of `word`; with `fullOnly`, only the runs of
    /// three (a query's).
    package static func grams(of word: String, fullOnly: Bool) -> [String] {
        let scalars = Array(word.unicodeScalars)
        let count = fullOnly ? max(0, scalars.count - 2) : scalars.count
        var grams: [String] = []
        grams.reserveCapacity(count)
        for start in 0..<count {
            var gram = String.UnicodeScalarView()
            gram.append(contentsOf: scalars[start..<min(start + 3, scalars.count)])
            grams.append(String(gram))
        }
        return grams
    }

    // MARK: - Words

    /// Calls `body` with the range of each word of `text`: a run of letters, digits and marks — each Han ideograph,
    /// hiragana or katakana character a word of its own when `splittingIdeographs`.
    static func forEachWord(
        in text: String, splittingIdeographs: Bool, _ body: (Range<String.UnicodeScalarView.Index>) -> Void
    ) {
        let scalars = text.unicodeScalars
        var start: String.UnicodeScalarView.Index?
        var index = scalars.startIndex
        while index < scalars.endIndex {
            let scalar = scalars[index]
            let next = scalars.index(after: index)
            switch kind(of: scalar, splittingIdeographs: splittingIdeographs) {
            case .word:
                if start == nil { start = index }
            case .separator:
                if let begun = start { body(begun..<index) }
                start = nil
            case .alone:
                if let begun = start { body(begun..<index) }
                start = nil
                body(index..<next)
            }
            index = next
        }
        if let begun = start { body(begun..<scalars.endIndex) }
    }

    private enum ScalarKind { case word, separator, alone }

    @inline(__always)
    private static func kind(of scalar: Unicode.Scalar, splittingIdeographs: Bool) -> ScalarKind {
        let value = scalar.value
        if value < 0x80 {
            // ASCII: letters and digits only.
            switch value {
            case 0x30...0x39, 0x41...0x5A, 0x61...0x7A: return .word
            default: return .separator
            }
        }
        if splittingIdeographs, isIdeographicOrKana(scalar) { return .alone }
        switch scalar.properties.generalCategory {
        case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter,
            .nonspacingMark, .spacingMark, .enclosingMark,
            .decimalNumber, .letterNumber, .otherNumber:
            return .word
        default:
            return .separator
        }
    }

    private static func isIdeographicOrKana(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x3040...0x309F, 0x30A0...0x30FF, 0x31F0...0x31FF, 0xFF66...0xFF9F: return true
        default: return scalar.properties.isIdeographic
        }
    }

    // MARK: - Folding

    /// A word folded: lowercase, Latin/Greek/Cyrillic accents dropped, at most ``maximumTokenBytes`` bytes; `nil`
    /// when nothing is left (a word of accents only).
    static func fold(_ word: Substring.UnicodeScalarView) -> String? {
        if word.allSatisfy({ $0.isASCII }) {
            var bytes: [UInt8] = []
            bytes.reserveCapacity(min(word.count, maximumTokenBytes))
            for scalar in word.prefix(maximumTokenBytes) {
                let byte = UInt8(scalar.value)
                bytes.append((0x41...0x5A).contains(byte) ? byte + 0x20 : byte)
            }
            return String(decoding: bytes, as: UTF8.self)
        }
        let decomposed = String(String.UnicodeScalarView(word)).lowercased().decomposedStringWithCanonicalMapping
        var kept = String.UnicodeScalarView()
        for scalar in decomposed.unicodeScalars where !isFoldedAccent(scalar) { kept.append(scalar) }
        let folded = String(kept).precomposedStringWithCanonicalMapping
        guard !folded.isEmpty else { return nil }
        return truncated(folded)
    }

    /// The combining diacritics that accent Latin, Greek and Cyrillic letters — not the marks other scripts write
    /// their vowels with, which are kept.
    private static func isFoldedAccent(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x0300...0x036F, 0x1AB0...0x1AFF, 0x1DC0...0x1DFF, 0x20D0...0x20FF, 0xFE20...0xFE2F: true
        default: false
        }
    }

    private static func truncated(_ token: String) -> String {
        guard token.utf8.count > maximumTokenBytes else { return token }
        var kept = String.UnicodeScalarView()
        var bytes = 0
        for scalar in token.unicodeScalars {
            let length = UTF8.width(scalar)
            guard bytes + length <= maximumTokenBytes else { break }
            kept.append(scalar)
            bytes += length
        }
        return String(kept)
    }
}
