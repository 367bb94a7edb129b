import Foundation
import Workloads

/// R1: every implementation reconciles a freshly filled store of `rows` records with the same snapshot `runs` times,
/// the order rotating every round, each run in a fresh folder; every run's counts and stored records are verified.
struct ReconcileHarness {
    let rows: Int
    let runs: Int
    let scratch: ScratchDirectory

    func measure() throws -> [ResultRow] {
        let workload = ReconcileSubject.workload
        let subjects = ReconcileSubject.allCases
        let input = ReconcileInput(generator: PersonGenerator(count: rows))
        let figures = ReconcileFigures(input)
        progress("\(workload): \(figures.description)")

        var times = Array(repeating: [Double](), count: subjects.count)
        for round in 0..<runs {
            var line: [String] = []
            for offset in subjects.indices {
                let index = (offset + round) % subjects.count
                let subject = subjects[index]
                let folder = try scratch.fresh("\(workload)-\(subject.rawValue)")
                defer { try? FileManager.default.removeItem(at: folder) }
                let seconds = try InstructionLabel.measuring(workload, subject.rawValue) {
                    try subject.run(input, directory: folder)
                }
                times[index].append(seconds)
                line.append("\(subject.rawValue) \(seconds.secondsText) s")
            }
            progress("\(workload) run \(round + 1)/\(runs): " + line.joined(separator: " · "))
        }

        let medians = times.map(median)
        let rawMedian = subjects.firstIndex(of: .raw).map { medians[$0] }
        return subjects.indices.map { index in
            ResultRow(
                workload: workload, implementation: subjects[index].rawValue, medianSeconds: medians[index],
                operations: rows, ratioVsRaw: rawMedian.map { medians[index] / $0 },
                target: subjects[index] == .ours ? Target.reconcile : nil, records: rows,
                reconcile: figures)
        }
    }
}
