import Foundation
public import PersistenceCore

/// F1's document: a title and a body, indexed together for full-text search.
public struct SearchDocument: Entity, Equatable {
    public var id: Int64
    public var title: String
    public var body: String

    public static let fullTextIndexes: [FullTextIndex] = [.on("title", "body")]
}

/// F1's input, generated the same way on every run: `count` documents of English-like text — words from a
/// vocabulary of 20,000 made of syllables, drawn with Zipf's law (s = 1), in sentences of 6 to 18 words — titles of
/// 4 to 10 words and bodies of 60 to 240; and the queries: words of falling frequency, two words, a phrase, a prefix.
public struct SearchCorpus: Sendable {
    public let documents: [SearchDocument]
    /// The queries, as our API takes them (words, `"phrases"`, `prefix*`); FTS5 reads the same text the same way.
    public let queries: [String]
    /// The tokens of the corpus.
    public let tokens: Int

    public init(count: Int) {
        var random = SplitMix(seed: 0x5EA2_C4)
        let syllables = [
            "ka", "lo", "mi", "ren", "sa", "to", "vel", "dan", "or", "ti", "bra", "nu", "el", "fa", "gor", "is", "pe",
            "qua", "ro", "sti", "un", "ve", "wy", "zan", "ch", "en", "lu", "mo", "ar", "de",
        ]
        var seen = Set<String>()
        var vocabulary: [String] = []
        while vocabulary.count < 20_000 {
            let length = 1 + Int(random.next() % 4)
            let word = (0..<length).map { _ in syllables[Int(random.next() % UInt64(syllables.count))] }.joined()
            if seen.insert(word).inserted { vocabulary.append(word) }
        }
        // Zipf's law: P(rank r) ∝ 1 / r.
        var cumulative: [Double] = []
        var total = 0.0
        for rank in 1...vocabulary.count {
            total += 1 / Double(rank)
            cumulative.append(total)
        }
        func word() -> String {
            let target = Double(random.next() % 1_000_000_007) / 1_000_000_007 * total
            var low = 0
            var high = cumulative.count - 1
            while low < high {
                let middle = (low + high) / 2
                if cumulative[middle] < target { low = middle + 1 } else { high = middle }
            }
            return vocabulary[low]
        }
        func text(words: Int) -> String {
            var sentences: [String] = []
            var left = words
            while left > 0 {
                let length = min(left, 6 + Int(random.next() % 13))
                left -= length
                let sentence = (0..<length).map { _ in word() }.joined(separator: " ")
                sentences.append(sentence.prefix(1).uppercased() + sentence.dropFirst() + ".")
            }
            return sentences.joined(separator: " ")
        }
        var tokens = 0
        documents = (0..<count).map { index in
            let titleWords = 4 + Int(random.next() % 7)
            let bodyWords = 60 + Int(random.next() % 181)
            tokens += titleWords + bodyWords
            return SearchDocument(id: Int64(index + 1), title: text(words: titleWords), body: text(words: bodyWords))
        }
        self.tokens = tokens
        let phrase =
            documents.first.map { document in
                document.body.split(separator: " ").prefix(2).map { $0.lowercased().filter(\.isLetter) }
            } ?? ["ka", "lo"]
        queries = [
            vocabulary[9], vocabulary[99], vocabulary[999], vocabulary[9_999], vocabulary[19], vocabulary[199],
            "\(vocabulary[4]) \(vocabulary[49])", "\(vocabulary[29]) \(vocabulary[299])",
            "\"\(phrase.joined(separator: " "))\"", String(vocabulary[39].prefix(3)) + "*",
            "\(vocabulary[14]) \(vocabulary[149]) \(vocabulary[1_499])",
        ]
    }
}

/// A small, fast, seeded generator (SplitMix64): the corpus is the same on every run and machine.
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
