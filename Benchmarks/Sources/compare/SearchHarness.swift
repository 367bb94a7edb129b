import Foundation
import Workloads

/// F1: each implementation stores and indexes the corpus once (timed: the build), then answers every query `runs`
/// times, the implementations' order rotating; the median of the runs' totals is the query time. Ours' answers are
/// verified to be the same records in the same order on every backend (raw FTS5's relevance is its own).
struct FullTextHarness {
    let documents: Int
    let runs: Int
    let scratch: ScratchDirectory
    let server: PostgresServer?

    func measure() throws -> [ResultRow] {
        let workload = FullTextSubject.workload
        let corpus = SearchCorpus(count: documents)
        progress(
            "\(workload): \(documents.grouped) documents, \(corpus.tokens.grouped) words, \(corpus.queries.count) queries"
        )
        let subjects = FullTextSubject.allCases.filter { $0 != .oursPostgres || server != nil }
        var stores: [any FullTextSearching] = []
        var builds: [Double] = []
        var sizes: [Int] = []
        for subject in subjects {
            let folder = try scratch.fresh("\(workload)-\(subject.rawValue)")
            let store = try subject.open(in: folder, server: server)
            let seconds = try InstructionLabel.measuring(workload + "-build", subject.rawValue) {
                try subject.build(store, corpus.documents)
            }
            let size = try store.size()
            progress("\(workload) \(subject.rawValue): built in \(seconds.secondsText) s, \(size / 1_048_576) MiB")
            stores.append(store)
            builds.append(seconds)
            sizes.append(size)
        }
        // Every ours answers alike; raw FTS5 answers too (its own relevance).
        var answers: [[Int64]]? = nil
        for (subject, store) in zip(subjects, stores) {
            let found = try subject.verifiedAnswers(corpus.queries, on: store, matching: answers)
            if subject != .raw, answers == nil { answers = found }
        }
        var times = Array(repeating: [Double](), count: subjects.count)
        for round in 0..<runs {
            var line: [String] = []
            for offset in subjects.indices {
                let index = (offset + round) % subjects.count
                let store = stores[index]
                let seconds = try InstructionLabel.measuring(workload, subjects[index].rawValue) {
                    try subjects[index].answer(corpus.queries, on: store)
                }
                times[index].append(seconds)
                line.append("\(subjects[index].rawValue) \(seconds.secondsText) s")
            }
            progress("\(workload) run \(round + 1)/\(runs): " + line.joined(separator: " · "))
        }
        let medians = times.map(median)
        let raw = subjects.firstIndex(of: .raw).map { medians[$0] }
        return subjects.indices.map { index in
            ResultRow(
                workload: workload, implementation: subjects[index].rawValue, medianSeconds: medians[index],
                operations: corpus.queries.count, ratioVsRaw: raw.map { medians[index] / $0 },
                target: subjects[index] == .ours ? Target.fullText : nil, secondsBeforePass: builds[index],
                records: documents, fileBytes: sizes[index])
        }
    }
}
