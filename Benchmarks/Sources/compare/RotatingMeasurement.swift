import Foundation
import Workloads

/// Runs each of a workload's implementations `runs` times, the order rotating every round, each run in a fresh
/// folder (the run verifies its own result); the rows hold the medians, with ratios to the first implementation
/// (raw) and to GRDB's where there is one.
struct RotatingMeasurement {
    let runs: Int
    let scratch: ScratchDirectory

    /// `subjects[0]` is raw; `targets` are the goals of the implementations that have one.
    func measure(
        workload: String, subjects: [String], operations: Int, targets: [String: Target],
        run: (Int, URL) throws -> Double
    ) throws -> [ResultRow] {
        let times = try rotate(
            workload: workload, subjects: subjects, seconds: { $0 },
            run: { index, folder in try InstructionLabel.measuring(workload, subjects[index]) { try run(index, folder) }
            })
        let medians = times.map(median)
        let grdb = subjects.firstIndex(of: "grdb").map { medians[$0] }
        return subjects.indices.map { index in
            ResultRow(
                workload: workload, implementation: subjects[index], medianSeconds: medians[index],
                operations: operations, ratioVsRaw: medians[index] / medians[0],
                ratioVsReference: grdb.map { medians[index] / $0 }, target: targets[subjects[index]],
                records: operations)
        }
    }
}

extension RotatingMeasurement {
    /// Runs each subject `runs` times, the order rotating every round, each run in a fresh folder, printing each
    /// round's `seconds`; returns every subject's results in run order.
    func rotate<R>(
        workload: String, subjects: [String], seconds: (R) -> Double, run: (Int, URL) throws -> R
    ) throws -> [[R]] {
        var results = Array(repeating: [R](), count: subjects.count)
        for round in 0..<runs {
            var line: [String] = []
            for offset in subjects.indices {
                let index = (offset + round) % subjects.count
                let folder = try scratch.fresh("\(workload)-\(subjects[index])")
                defer { try? FileManager.default.removeItem(at: folder) }
                let result = try run(index, folder)
                results[index].append(result)
                line.append("\(subjects[index]) \(seconds(result).secondsText) s")
            }
            progress("\(workload) run \(round + 1)/\(runs): " + line.joined(separator: " · "))
        }
        return results
    }
}

/// D1: S2's read of every record by what decodes a row — hand-written record code, `@Entity`'s, `Codable`'s — beside
/// the raw C API and GRDB.
struct RecordCodeHarness {
    let runs: Int
    let scratch: ScratchDirectory

    func measure(_ dataset: Dataset) throws -> [ResultRow] {
        progress("D1: fetching \(dataset.people.count) records decoded by hand-written, @Entity and Codable code")
        return try RotatingMeasurement(runs: runs, scratch: scratch).measure(
            workload: RecordCodeSubject.workload, subjects: RecordCodeSubject.allCases.map(\.rawValue),
            operations: dataset.people.count, targets: Target.recordCode
        ) { index, folder in
            try RecordCodeSubject.allCases[index].run(dataset, directory: folder)
        }
    }
}

/// N1: Lighter's PerformanceTestSuite — Northwind's `Orders` read whole, 500 times after 10 warm-ups.
struct NorthwindHarness {
    let runs: Int
    let scratch: ScratchDirectory

    /// `fetches` timed reads (the suite's 500 by default), after as many warm-ups, up to the suite's 10.
    func measure(fetches: Int) throws -> [ResultRow] {
        let input = NorthwindInput(fetches: fetches)
        progress(
            "N1: reading \(input.orders.count) Northwind orders \(input.fetches) times (after \(input.warmUps) warm-ups)"
        )
        return try RotatingMeasurement(runs: runs, scratch: scratch).measure(
            workload: NorthwindSubject.workload, subjects: NorthwindSubject.allCases.map(\.rawValue),
            operations: input.orders.count * input.fetches, targets: Target.northwind
        ) { index, folder in
            try NorthwindSubject.allCases[index].run(input, directory: folder)
        }
    }
}
