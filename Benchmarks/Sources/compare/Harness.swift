import Foundation
import Workloads

/// Runs each workload `runs` times per implementation, rotating the order every round so no implementation
/// always goes first (cold caches) or last (a warm, busy machine), each run on a fresh store in a fresh folder.
struct Harness {
    let runs: Int
    let scratch: ScratchDirectory

    /// An implementation of a workload: its name and one timed run in a given empty folder.
    private struct Contender {
        var name: String
        var run: (URL) throws -> Double
    }

    func measure(_ workload: SQLiteWorkload, dataset: Dataset) throws -> [ResultRow] {
        func contender<S: SQLiteSubject>(_ subject: S.Type) -> Contender {
            Contender(name: S.implementation) { try workload.run(S.self, dataset: dataset, directory: $0) }
        }
        let medians = try rotate(
            workload.rawValue,
            [contender(RawSQLiteSubject.self), contender(OursSQLiteSubject.self), contender(GRDBSubject.self)])
        return rows(
            workload.rawValue, medians, operations: workload.operations(in: dataset),
            reference: GRDBSubject.implementation,
            target: (OursSQLiteSubject.implementation, Target.sqlite(workload)))
    }

    func measure(_ workload: LMDBWorkload, dataset: Dataset) throws -> [ResultRow] {
        func contender<S: LMDBSubject>(_ subject: S.Type) -> Contender {
            Contender(name: S.implementation) { try workload.run(S.self, dataset: dataset, directory: $0) }
        }
        // Opening a raw store is the same with or without AES-GCM (a key in memory), so K has no such row.
        let contenders =
            workload == .k
            ? [
                contender(RawLMDBPlainSubject.self), contender(OursPlainLMDBSubject.self),
                contender(OursEncryptedLMDBSubject.self),
            ]
            : [
                contender(RawLMDBPlainSubject.self), contender(RawLMDBSealedSubject.self),
                contender(OursEncryptedLMDBSubject.self), contender(OursPlainLMDBSubject.self),
            ]
        let medians = try rotate(workload.rawValue, contenders)
        return rows(
            workload.rawValue, medians, operations: workload.operations(in: dataset),
            reference: workload == .k ? nil : RawLMDBSealedSubject.implementation,
            target: Target.lmdb(workload).map { (OursEncryptedLMDBSubject.implementation, $0) })
    }

    /// A P workload: raw postgres-nio and ours on the server, each run on fresh schemas (the folder goes unused).
    func measure(_ workload: PostgresWorkload, inputs: PostgresInputs, server: PostgresServer) throws -> [ResultRow] {
        func contender<S: PostgresSubject>(_ subject: S.Type) -> Contender {
            Contender(name: S.implementation) { _ in try workload.run(S.self, inputs: inputs, server: server) }
        }
        let medians = try rotate(
            workload.rawValue, [contender(RawPostgresSubject.self), contender(OursPostgresSubject.self)])
        return rows(
            workload.rawValue, medians, operations: workload.operations(in: inputs), reference: nil,
            target: (OursPostgresSubject.implementation, Target.postgres(workload)))
    }

    /// The median seconds of each contender, in the contenders' order.
    private func rotate(_ workload: String, _ contenders: [Contender]) throws -> [(name: String, median: Double)] {
        var times = Array(repeating: [Double](), count: contenders.count)
        for round in 0..<runs {
            var line: [String] = []
            for offset in contenders.indices {
                let index = (offset + round) % contenders.count
                let folder = try scratch.fresh("\(workload)-\(contenders[index].name)")
                let seconds = try InstructionLabel.measuring(workload, contenders[index].name) {
                    try contenders[index].run(folder)
                }
                try? FileManager.default.removeItem(at: folder)
                times[index].append(seconds)
                line.append("\(contenders[index].name) \(seconds.secondsText) s")
            }
            progress("\(workload) run \(round + 1)/\(runs): " + line.joined(separator: " · "))
        }
        return zip(contenders, times).map { ($0.name, median($1)) }
    }

    private func rows(
        _ workload: String, _ medians: [(name: String, median: Double)], operations: Int, reference: String?,
        target: (implementation: String, target: Target)?
    ) -> [ResultRow] {
        let raw = medians.first { $0.name == "raw" }?.median
        let referenceMedian = reference.flatMap { name in medians.first { $0.name == name }?.median }
        return medians.map { name, median in
            ResultRow(
                workload: workload, implementation: name, medianSeconds: median, operations: operations,
                ratioVsRaw: raw.map { median / $0 }, ratioVsReference: referenceMedian.map { median / $0 },
                target: target?.implementation == name ? target?.target : nil)
        }
    }
}
