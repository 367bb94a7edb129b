import Foundation
import PersistenceCore
import Testing

/// Full-text search: the same records, in the same order, with the same scores on every backend — matched against
/// an oracle written apart from the library (``FullTextReference``).
enum FullTextChecks {
    static let all: [ConformanceCheck] = [
        search("finds words, phrases and prefixes, ranked by BM25 as the reference ranks them") { try ranking($0) },
        search("folds case and accents, matches Chinese and Japanese as phrases of characters") { try unicode($0) },
        search("matches substrings on a trigram index, short words inside words") { try trigrams($0) },
        search("matches nothing for empty and stop-word text, and treats query syntax as words") { try hostile($0) },
        search("combines a search with conditions, sort keys, windows and a limit per value") { try combined($0) },
        search("keeps the index in step with writes, rollbacks, savepoints and deletions") { try inStep($0) },
        search("highlights matched words and cuts snippets around them") { try snippets($0) },
        search("refuses a search naming no index, or where a search can't apply") { try refusals($0) },
        search("observes a searching query like any other") { try await observed($0) },
        ConformanceCheck(
            "full-text search keeps its index across reopening"
        ) {
            backend, directory in
            try await reopened(backend, directory)
        },
    ]

    static func search(
        _ name: String, _ body: @escaping @Sendable (any Database) async throws -> Void
    ) -> ConformanceCheck {
        ConformanceCheck("full-text search " + name) { backend, directory in
            try await withDatabase(backend, directory, searchEntities, body)
        }
    }

    struct Rollback: Error {}

    static let stopWords: Set<String> = ["the", "a", "of", "and"]

    static let stories: [Story] = [
        Story(
            id: 1, title: "Swift concurrency explained",
            body: "Actors isolate state. An actor serializes access; actors are reference types."),
        Story(
            id: 2, title: "The actor model",
            body: "The actor model of computation treats actors as the universal primitives of concurrent computation.",
            section: "theory"),
        Story(
            id: 3, title: "Rust ownership",
            body: "Ownership and borrowing make Rust memory safe without a garbage collector."),
        Story(
            id: 4, title: "Swift actors in practice",
            body: "Use an actor to protect mutable state. Swift checks actor isolation at compile time.",
            published: false),
        Story(
            id: 5, title: "Garbage collection",
            body: "A garbage collector reclaims memory. Swift uses reference counting instead of a garbage collector.",
            section: "theory"),
        Story(id: 6, title: "Concurrency in Go", body: "Goroutines and channels: concurrency without actors."),
        Story(id: 7, title: "Database actors", body: nil, section: "theory"),
        Story(id: 8, title: "Memory safety", body: "Memory safety in Swift and Rust: swift checks, rust borrows."),
        Story(id: 9, title: "Actor actor actor", body: "actor", section: "theory"),
    ]

    static var reference: FullTextReference {
        FullTextReference(stories.map { ($0.id, [$0.title, $0.body]) }, stopWords: stopWords)
    }

    static func searched(_ db: some Database, _ text: String) throws -> [SearchHit<Story>] {
        try db.search(Story.self, Query(search: FullTextSearch(text, in: ["title", "body"])))
    }

    static func expectRanked(_ db: some Database, _ text: String, sourceLocation: SourceLocation = #_sourceLocation)
        throws
    {
        let hits = try searched(db, text)
        let expected = reference.search(text)
        #expect(
            hits.map(\.record.id) == expected.map(\.id), "search \(text.debugDescription)",
            sourceLocation: sourceLocation)
        for (hit, want) in zip(hits, expected) {
            #expect(
                abs(hit.score - want.score) <= 1e-9 * max(1, abs(want.score)),
                "score of \(hit.record.id) for \(text.debugDescription): \(hit.score), not \(want.score)",
                sourceLocation: sourceLocation)
        }
        let recovered = try db.recover(Story.self, query: Query(search: FullTextSearch(text, in: ["title", "body"])))
        #expect(recovered.map(\.id) == hits.map(\.record.id), sourceLocation: sourceLocation)
    }

    static func ranking(_ db: some Database) throws {
        try db.create(stories)
        let queries = [
            "actor", "actor*", "swift actor*", "\"garbage collector\"", "\"reference counting\"", "\"actor model\"",
            "concurrency", "model of computation", "\"model of computation\"", "memory", "swift", "rust borrows",
            "\"swift checks\"", "\"actors isolate\"*", "ACTORS", "act*", "actor actor", "collector memory",
            "\"state swift\"", "isolat* state",
        ]
        for query in queries { try expectRanked(db, query) }
        // A phrase never spans two attributes: the title ends "Database actors" and the body is nil; "model actor"
        // and "explained actors" join a title's last word to a body's first.
        #expect(try searched(db, "\"explained actors\"").isEmpty)
        #expect(try searched(db, "actor").map(\.record.id).first == 9, "most occurrences in the shortest story")
        // The only full-text index over one attribute pair: named by its attributes; the title's trigram index apart.
        let byTitle = try db.search(Story.self, Query(search: .matching("rren", in: "title", tokenizer: .trigram)))
        #expect(byTitle.map(\.record.id).sorted() == [1, 6])
    }

    static func unicode(_ db: some Database) throws {
        let memos = [
            Memo(id: "m1", text: "Crème brûlée au caramel"), Memo(id: "m2", text: "CRÈME fraîche"),
            Memo(id: "m3", text: "東京都に住む"), Memo(id: "m4", text: "東京タワーへ行く"),
            Memo(id: "m5", text: "Ελληνική γλώσσα"), Memo(id: "m6", text: "Straße und Strasse"),
            Memo(id: "m7", text: "naïve café"), Memo(id: "m8", text: "İstanbul"), Memo(id: "m9", text: ""),
            Memo(id: "m10", text: "Ｆｕｌｌｗｉｄｔｈ and 123 numbers 4½"),
        ]
        try db.create(memos)
        let cases: [(String, [String])] = [
            ("creme", ["m1", "m2"]), ("BRÛLÉE", ["m1"]), ("brulee caramel", ["m1"]), ("東京", ["m3", "m4"]),
            ("京都", ["m3"]), ("タワー", ["m4"]), ("ελληνικη", ["m5"]), ("ΓΛΩΣΣΑ", ["m5"]), ("NAIVE", ["m7"]),
            ("cafe", ["m7"]), ("strasse", ["m6"]), ("straße", ["m6"]), ("istanbul", ["m8"]), ("123", ["m10"]),
            ("東京 行く", ["m4"]), ("\"東京 都\"", ["m3"]), ("cr*", ["m1", "m2"]), ("fraiche*", ["m2"]),
        ]
        for (text, expected) in cases {
            let hits = try db.search(Memo.self, Query(search: .matching(text)))
            #expect(hits.map(\.record.id).sorted() == expected.sorted(), "search \(text.debugDescription)")
            #expect(zip(hits, hits.dropFirst()).allSatisfy { $0.score >= $1.score }, "ordered by relevance")
        }
        // Equal relevance: primary-key order (text keys compare by UTF-8 bytes).
        try db.create([Memo(id: "b", text: "same words"), Memo(id: "a", text: "same words")])
        #expect(try db.recover(Memo.self, query: Query(search: .matching("same"))).map(\.id) == ["a", "b"])
    }

    static func trigrams(_ db: some Database) throws {
        try db.create(stories)
        let cases: [(String, [Int64])] = [
            ("rren", [1, 6]), ("ctor", [2, 4, 7, 9]), ("go", [6]), ("CTORS", [4, 7]), ("wift ract", [4]),
            ("memory", [8]), ("ory saf", [8]), ("xyz", []), ("ab", [7]), ("a", [1, 2, 4, 5, 7, 8, 9]),
            ("\"actor model\"", [2]), ("ctor*", [2, 4, 7, 9]),
        ]
        for (text, expected) in cases {
            let hits = try db.search(Story.self, Query(search: .matching(text, in: "title", tokenizer: .trigram)))
            #expect(hits.map(\.record.id).sorted() == expected, "trigram search \(text.debugDescription)")
            #expect(zip(hits, hits.dropFirst()).allSatisfy { $0.score >= $1.score }, "ordered by relevance")
        }
    }

    static func hostile(_ db: some Database) throws {
        try db.create(stories)
        for text in ["", "   ", "\"\"", "\"", "*", "the", "THE a of", "\"the of\"", "-", "...", "\u{0}", "'"] {
            #expect(try searched(db, text).isEmpty, "search \(text.debugDescription)")
        }
        let syntax = [
            "title:actor", "NEAR(actor model)", "actor OR model", "actor AND model", "NOT actor", "^actor",
            "actor*model",
            "(actor", "actor)", "\"actor", "actor\"", "'; DROP TABLE \"Story\"; --", "actor -model", "{actor}",
            "actor:*", "@@ actor", "actor & model | rust", "a'b", "x' OR '1'='1", "%", "_", "\\",
        ]
        for text in syntax {
            // What the text's words, phrases and prefixes select, as the reference reads them: never an error,
            // never any other syntax.
            let expected = reference.search(text)
            #expect(try searched(db, text).map(\.record.id) == expected.map(\.id), "search \(text.debugDescription)")
        }
        #expect(try db.count(Story.self) == stories.count, "no statement was altered")
        let long = String(repeating: "actor ", count: 2_000)
        #expect(try searched(db, long).map(\.record.id) == reference.search("actor").map(\.id))
        let huge = String(repeating: "x", count: 5_000)
        #expect(try searched(db, huge).isEmpty)
    }

    static func combined(_ db: some Database) throws {
        try db.create(stories)
        let all = reference.search("actor*").map(\.id)
        let search = FullTextSearch("actor*", in: ["title", "body"])
        let published = Set(stories.filter(\.published).map(\.id))
        let filtered = try db.recover(Story.self, query: Query(where: Field("published") == true, search: search))
        #expect(filtered.map(\.id) == all.filter { published.contains($0) })
        let window = try db.recover(Story.self, query: Query(search: search, limit: 2, offset: 1))
        #expect(window.map(\.id) == Array(all.dropFirst().prefix(2)))
        let sorted = try db.recover(Story.self, query: Query(search: search, sortedBy: [.descending("title")]))
        let byTitle = stories.filter { all.contains($0.id) }.sorted {
            $0.title.utf8.lexicographicallyPrecedes($1.title.utf8)
        }
        #expect(sorted.map(\.id) == byTitle.reversed().map(\.id))
        let perSection = try db.recover(
            Story.self, query: Query(search: search, limitPerValue: LimitPerValue("section", 1)))
        var seen = Set<String>()
        let expected = all.filter { id in seen.insert(stories.first { $0.id == id }!.section).inserted }
        #expect(perSection.map(\.id) == expected)
        let related = try db.recover(
            Story.self, query: Query(where: Field("section") == "theory" && Field("id") != 9, search: search, limit: 1))
        #expect(related.map(\.id) == Array(all.filter { [2, 7].contains($0) }.prefix(1)))
        var iterated: [Int64] = []
        try db.forEach(Story.self, query: Query(search: search)) { iterated.append($0.id) }
        #expect(iterated == all)
        #expect(try db.recover(Story.self, query: Query(where: Field("id") > 100, search: search)).isEmpty)
    }

    static func inStep(_ db: some Database) throws {
        try db.create(stories)
        func ids(_ text: String) throws -> [Int64] { try searched(db, text).map(\.record.id).sorted() }
        try db.write { context in
            try context.create(Story(id: 20, title: "Quantum actors", body: "entanglement"))
            // The write sees its own change.
            #expect(
                try context.search(Story.self, Query(search: .matching("entanglement", in: "title", "body")))
                    .map(\.record.id) == [20])
            try context.update(Story(id: 20, title: "Quantum actors", body: "superposition"))
            #expect(
                try context.search(Story.self, Query(search: .matching("entanglement", in: "title", "body"))).isEmpty)
        }
        #expect(try ids("superposition") == [20])
        #expect(try ids("entanglement").isEmpty)
        _ = try? db.write { context in
            try context.create(Story(id: 21, title: "Lost words", body: "vanishing"))
            _ = try context.delete(Story.self, id: 1)
            throw Rollback()
        }
        #expect(try ids("vanishing").isEmpty)
        #expect(try ids("explained") == [1])
        try db.write { context in
            try context.create(Story(id: 22, title: "Kept words", body: "durable"))
            _ = try? context.savepoint {
                try context.create(Story(id: 23, title: "Savepoint words", body: "ephemeral"))
                try context.update(Story(id: 22, title: "Kept words", body: "changed"))
                #expect(
                    try context.search(Story.self, Query(search: .matching("ephemeral", in: "title", "body")))
                        .count == 1)
                throw Rollback()
            }
            #expect(try context.search(Story.self, Query(search: .matching("ephemeral", in: "title", "body"))).isEmpty)
        }
        #expect(try ids("durable") == [22])
        #expect(try ids("ephemeral").isEmpty)
        #expect(try ids("changed").isEmpty)
        try db.delete(Story.self, id: 22)
        #expect(try ids("durable").isEmpty)
        try db.delete(Story.self, where: Field("section") == "theory")
        #expect(try ids("actor*") == [1, 4, 6, 20])
        try db.upsert(Story(id: 6, title: "Concurrency in Go", body: "now about Erlang"))
        #expect(try ids("erlang") == [6])
        #expect(try ids("goroutines").isEmpty)
        try db.write { context in _ = try context.deleteAll(Story.self) }
        #expect(try ids("swift").isEmpty)
        try db.create(stories)
        try expectRanked(db, "swift actor*")
        #expect(
            try db.recover(Story.self, query: Query(search: .matching("rren", in: "title", tokenizer: .trigram)))
                .map(\.id).sorted() == [1, 6])
        let report = try db.verify()
        #expect(report.isSound, "\(report)")
    }

    static func snippets(_ db: some Database) throws {
        try db.create(stories)
        let hits = try db.search(
            Story.self, Query(search: .matching("\"garbage collector\" memory", in: "title", "body")))
        #expect(hits.map(\.record.id).sorted() == [3, 5])
        let five = try #require(hits.first { $0.record.id == 5 })
        #expect(
            five.snippet(of: "body", words: 6)
                == "A [garbage] [collector] reclaims [memory]. Swift…")
        #expect(five.snippet(of: "title") == nil, "the title holds no match")
        #expect(five.snippet(of: "section") == nil, "not an indexed attribute")
        let body = try #require(five.record.body)
        #expect(
            five.highlights(in: "body").map { String(body[$0]) } == [
                "garbage", "collector", "memory", "garbage", "collector",
            ])
        let three = try #require(hits.first { $0.record.id == 3 })
        #expect(
            three.snippet(of: "body", words: 4, opening: "<b>", closing: "</b>", ellipsis: "...")
                == "...without a <b>garbage</b> <b>collector</b>")
        let prefixed = try db.search(Story.self, Query(search: .matching("isolat*", in: "title", "body")))
        #expect(prefixed.first { $0.record.id == 4 }?.snippet(of: "body", words: 3) == "…actor [isolation] at…")
        #expect(
            prefixed.first { $0.record.id == 1 }?.snippet(of: "body", words: 30)
                == "Actors [isolate] state. An actor serializes access; actors are reference types")
        let trigram = try db.search(Story.self, Query(search: .matching("rren", in: "title", tokenizer: .trigram)))
        #expect(trigram.first { $0.record.id == 6 }?.snippet(of: "title") == "[Concurrency] in Go")
    }

    static func refusals(_ db: some Database) throws {
        try db.create(stories)
        expectError(.invalidArgument, "the entity has two full-text indexes") {
            try db.search(Story.self, Query(search: .matching("actor")))
        }
        expectError(.invalidArgument, "no index on these attributes") {
            try db.search(Story.self, Query(search: .matching("actor", in: "body")))
        }
        expectError(.invalidArgument, "no trigram index on these") {
            try db.search(Story.self, Query(search: .matching("actor", in: "title", "body", tokenizer: .trigram)))
        }
        expectError(.invalidArgument, "Person has no full-text index") {
            try db.search(Person.self, Query(search: .matching("ada")))
        }
        expectError(.invalidArgument, "a search without a search") { try db.search(Story.self, Query()) }
        expectError(.unknownAttribute) {
            try db.search(Story.self, Query(where: Field("nope") == 1, search: .matching("actor", in: "title", "body")))
        }
        expectError(.invalidArgument, "a negative limit") {
            try db.search(Story.self, Query(search: .matching("actor", in: "title", "body"), limit: -1))
        }
        #expect(try db.search(Memo.self, Query(search: .matching("x"), limit: 0)).isEmpty)
    }

    static func observed(_ db: some Database) async throws {
        try db.create(stories)
        let query = Query(search: .matching("quantum", in: "title", "body"))
        let observation = ValueObservation.tracking([Story.self]) { context in
            try context.recover(Story.self, query: query).map(\.id)
        }
        var values = observation.values(in: db).makeAsyncIterator()
        #expect(try await values.next() == [])
        try await db.write { try $0.create(Story(id: 30, title: "Quantum computing", body: nil)) }
        #expect(try await values.next() == [30])
        try await db.write { try $0.update(Story(id: 30, title: "Classical computing", body: nil)) }
        #expect(try await values.next() == [])
    }

    static func reopened(_ backend: any ConformanceBackend, _ directory: URL) async throws {
        try await withDatabase(backend, directory, searchEntities) { db in try db.create(stories) }
        try await withDatabase(backend, directory, searchEntities) { db in try expectRanked(db, "swift actor*") }
    }
}
