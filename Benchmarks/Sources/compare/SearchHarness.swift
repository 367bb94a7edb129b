import Foundation
import Workloads

/// F1 and V1: each implementation stores (and indexes) its input once (timed: the build), then answers every query
/// `runs` times, the implementations' order rotating; the median of the runs' totals is the query time. Ours'
/// answers are verified to be the same records in the same order on every backend before anything is timed.
struct SearchHarness<Subject: RawRepresentable<String> & Equatable, Store> {
    let workload: String
    let subjects: [Subject]
    let raw: Subject
    let ours: Subject
    let target: Target
    let records: Int
    let queries: Int
    let scratch: ScratchDirectory
    let open: (Subject, URL) throws -> Store
    let build: (Subject, Store) throws -> Double
    let size: (Store) throws -> Int
    /// The subject's answers, checked against the first ones given (ours' first, or nil).
    let verify: (Subject, Store, [[Int64]]?) throws -> [[Int64]]
    let answer: (Subject, Store) throws -> Double

    func measure() throws -> [ResultRow] {
        var stores: [Store] = []
        var builds: [Double] = []
        var sizes: [Int] = []
        for subject in subjects {
            let folder = try scratch.fresh("\(workload)-\(subject.rawValue)")
            let store = try open(subject, folder)
            let seconds = try InstructionLabel.measuring(workload + "-build", subject.rawValue) {
                try build(subject, store)
            }
            let bytes = try size(store)
            progress("\(workload) \(subject.rawValue): built in \(seconds.secondsText) s, \(bytes / 1_048_576) MiB")
            stores.append(store)
            builds.append(seconds)
            sizes.append(bytes)
        }
        var answers: [[Int64]]? = nil
        for (subject, store) in zip(subjects, stores) where subject != raw {
            let found = try verify(subject, store, answers)
            if answers == nil { answers = found }
        }
        if let index = subjects.firstIndex(of: raw) { _ = try verify(raw, stores[index], answers) }
        var times = Array(repeating: [Double](), count: subjects.count)
        for round in 0..<runs {
            var line: [String] = []
            for offset in subjects.indices {
                let index = (offset + round) % subjects.count
                let seconds = try InstructionLabel.measuring(workload, subjects[index].rawValue) {
                    try answer(subjects[index], stores[index])
                }
                times[index].append(seconds)
                line.append("\(subjects[index].rawValue) \(seconds.secondsText) s")
            }
            progress("\(workload) run \(round + 1)/\(runs): " + line.joined(separator: " · "))
        }
        let medians = times.map(median)
        let rawMedian = subjects.firstIndex(of: raw).map { medians[$0] }
        return subjects.indices.map { index in
            ResultRow(
                workload: workload, implementation: subjects[index].rawValue, medianSeconds: medians[index],
                operations: queries, ratioVsRaw: rawMedian.map { medians[index] / $0 },
                target: subjects[index] == ours ? target : nil, secondsBeforePass: builds[index],
                records: records, fileBytes: sizes[index])
        }
    }

    let runs: Int
}

extension SearchHarness where Subject == FullTextSubject, Store == any FullTextSearching {
    /// F1: full-text search over a generated corpus.
    init(documents: Int, runs: Int, scratch: ScratchDirectory, server: PostgresServer?) {
        let corpus = SearchCorpus(count: documents)
        progress(
            "\(FullTextSubject.workload): \(documents.grouped) documents, \(corpus.tokens.grouped) words, "
                + "\(corpus.queries.count) queries")
        self.init(
            workload: FullTextSubject.workload,
            subjects: FullTextSubject.allCases.filter { $0 != .oursPostgres || server != nil }, raw: .raw,
            ours: .ours, target: .fullText, records: documents, queries: corpus.queries.count, scratch: scratch,
            open: { try $0.open(in: $1, server: server) }, build: { try $0.build($1, corpus.documents) },
            size: { try $0.size() },
            verify: { subject, store, expected in
                // Raw FTS5 ranks by its own relevance: its answers are only checked to find something.
                try subject.verifiedAnswers(corpus.queries, on: store, matching: subject == .raw ? nil : expected)
            },
            answer: { try $0.answer(corpus.queries, on: $1) }, runs: runs)
    }
}

extension SearchHarness where Subject == VectorSubject, Store == any VectorSearching {
    /// V1: exact nearest neighbours over generated embeddings.
    init(vectors: Int, runs: Int, scratch: ScratchDirectory, server: PostgresServer?) {
        let corpus = VectorCorpus(count: vectors)
        progress(
            "\(VectorSubject.workload): \(vectors.grouped) vectors of \(VectorCorpus.dimensions) dimensions, "
                + "\(corpus.queries.count) queries")
        self.init(
            workload: VectorSubject.workload,
            subjects: VectorSubject.allCases.filter { $0 != .oursPostgres || server != nil }, raw: .raw, ours: .ours,
            target: .vectors, records: vectors, queries: corpus.queries.count, scratch: scratch,
            open: { subject, folder in try subject.open(in: folder, server: server, corpus: corpus) },
            build: { try $0.build($1, corpus.records) }, size: { try $0.size() },
            verify: { try $0.verifiedAnswers(corpus.queries, on: $1, matching: $2) },
            answer: { try $0.answer(corpus.queries, on: $1) }, runs: runs)
    }
}
