import Foundation
import Workloads

/// G1 (cascade delete) and A1 (aggregates): every implementation runs the workload `runs` times, the order rotating
/// every round, each run in a fresh folder and verified; the rows hold the medians.
struct GraphHarness {
    let runs: Int
    let scratch: ScratchDirectory

    /// G1: one author with `descendants` posts and comments deleted by cascade.
    func measureCascade(descendants: Int) throws -> [ResultRow] {
        let input = CascadeInput(descendants: descendants)
        progress("G1: deleting 1 author with \(input.deleted - 1) descendants")
        return try measure(
            workload: CascadeSubject.workload, subjects: CascadeSubject.allCases.map(\.rawValue),
            operations: input.deleted, target: .cascade
        ) { index, folder in
            try CascadeSubject.allCases[index].run(input, directory: folder)
        }
    }

    /// A1: three aggregate queries over `records` sales.
    func measureAggregates(records: Int) throws -> [ResultRow] {
        let input = AggregateInput(count: records)
        progress("A1: three aggregate queries over \(input.sales.count) records")
        return try measure(
            workload: AggregateSubject.workload, subjects: AggregateSubject.allCases.map(\.rawValue),
            operations: input.sales.count, target: .aggregates
        ) { index, folder in
            try AggregateSubject.allCases[index].run(input, directory: folder)
        }
    }

    /// E1: `authors` authors with 10 posts each, loaded with their 3 latest posts.
    func measureEagerLoading(authors: Int) throws -> [ResultRow] {
        let input = EagerLoadInput(authors: authors, postsPerAuthor: 10, limit: 3)
        progress("E1: \(input.authors.count) authors with their 3 latest of 10 posts each")
        return try measure(
            workload: EagerLoadSubject.workload, subjects: EagerLoadSubject.allCases.map(\.rawValue),
            operations: input.authors.count, target: .eagerLoading
        ) { index, folder in
            try EagerLoadSubject.allCases[index].run(input, directory: folder)
        }
    }

    private func measure(
        workload: String, subjects: [String], operations: Int, target: Target, run: (Int, URL) throws -> Double
    ) throws -> [ResultRow] {
        try RotatingMeasurement(runs: runs, scratch: scratch).measure(
            workload: workload, subjects: subjects, operations: operations, targets: ["ours": target], run: run)
    }
}
