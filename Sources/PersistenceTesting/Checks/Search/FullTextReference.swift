import Foundation

/// An independent statement of what a full-text search over ASCII text returns — the checks' oracle, written apart
/// from the library's own matcher: words are runs of ASCII letters and digits, lowercased; stop words are left out;
/// the title's and the body's words are one document, a phrase never spanning the two; relevance is BM25 (k1 = 1.2,
/// b = 0.75, idf = ln(1 + (N − n + 0.5) / (n + 0.5))), ties by id.
struct FullTextReference {
    struct Document {
        var id: Int64
        var columns: [[String]]
        var length: Int { columns.reduce(0) { $0 + $1.count } }
    }

    let documents: [Document]
    let stopWords: Set<String>

    init(_ texts: [(id: Int64, columns: [String?])], stopWords: Set<String>) {
        self.stopWords = stopWords
        documents = texts.map { text in
            Document(
                id: text.id,
                columns: text.columns.map { column in
                    column.map { Self.words(of: $0).filter { !stopWords.contains($0) } } ?? []
                })
        }
    }

    static func words(of text: String) -> [String] {
        text.lowercased().split { !($0.isASCII && ($0.isLetter || $0.isNumber)) }.map(String.init)
    }

    /// The ids and scores a search of `query` returns, most relevant first; `query` is words, "phrases" and `word*`.
    func search(_ query: String) -> [(id: Int64, score: Double)] {
        var terms: [(words: [String], prefix: Bool)] = []
        var rest = Substring(query)
        while let start = rest.firstIndex(where: { !$0.isWhitespace }) {
            rest = rest[start...]
            var chunk: Substring
            var prefix = false
            if rest.first == "\"" {
                let body = rest.dropFirst()
                let end = body.firstIndex(of: "\"") ?? body.endIndex
                chunk = body[..<end]
                rest = end < body.endIndex ? body[body.index(after: end)...] : ""
                if rest.first == "*" {
                    prefix = true
                    rest = rest.dropFirst()
                }
            } else {
                let end = rest.firstIndex(where: \.isWhitespace) ?? rest.endIndex
                chunk = rest[..<end]
                rest = rest[end...]
            }
            if chunk.hasSuffix("*") {
                prefix = true
                chunk = chunk.dropLast()
            }
            let words = Self.words(of: String(chunk)).filter { !stopWords.contains($0) }
            if !words.isEmpty { terms.append((words, prefix)) }
        }
        guard !terms.isEmpty else { return [] }
        func occurrences(_ term: (words: [String], prefix: Bool), in document: Document) -> Int {
            var count = 0
            for column in document.columns where column.count >= term.words.count {
                for start in 0...(column.count - term.words.count) {
                    let matches = term.words.indices.allSatisfy { offset in
                        let word = column[start + offset]
                        return term.prefix && offset == term.words.count - 1
                            ? word.hasPrefix(term.words[offset]) : word == term.words[offset]
                    }
                    if matches { count += 1 }
                }
            }
            return count
        }
        let count = Double(documents.count)
        let average = Double(documents.reduce(0) { $0 + $1.length }) / count
        let frequencies = documents.map { document in terms.map { occurrences($0, in: document) } }
        let idf = terms.indices.map { term in
            let n = Double(frequencies.filter { $0[term] > 0 }.count)
            return log(1 + (count - n + 0.5) / (n + 0.5))
        }
        var results: [(id: Int64, score: Double)] = []
        for (document, counts) in zip(documents, frequencies) where counts.allSatisfy({ $0 > 0 }) {
            let norm = 1.2 * (1 - 0.75 + 0.75 * Double(document.length) / average)
            var score = 0.0
            for (term, tf) in counts.enumerated() {
                score += idf[term] * (Double(tf) * (1.2 + 1)) / (Double(tf) + norm)
            }
            results.append((document.id, score))
        }
        return results.sorted { $0.score != $1.score ? $0.score > $1.score : $0.id < $1.id }
    }
}
