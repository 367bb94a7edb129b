import Foundation
import Workloads

/// Y1–Y3: sync between embedded stores and a PostgreSQL server, `runs` times each, the implementations' order
/// rotating every round, each run's stores in a fresh folder; every run is verified record by record.
struct SyncHarness {
    let runs: Int
    let scratch: ScratchDirectory
    let server: PostgresServer

    private var rotation: RotatingMeasurement { RotatingMeasurement(runs: runs, scratch: scratch) }

    /// Y1: the first sync of `records` records into each embedded store.
    func measureInitialSync(records: Int) throws -> [ResultRow] {
        let workload = try InitialSyncWorkload(records: records, server: server)
        let subjects = InitialSyncWorkload.Subject.allCases
        let times = try rotation.rotate(
            workload: InitialSyncWorkload.workload, subjects: subjects.map(\.rawValue), seconds: { $0 },
            run: { index, folder in try workload.run(subjects[index], directory: folder) })
        let medians = times.map(median)
        return subjects.indices.map { index in
            let raw = subjects.firstIndex(of: subjects[index].raw).map { medians[$0] }
            return ResultRow(
                workload: InitialSyncWorkload.workload, implementation: subjects[index].rawValue,
                medianSeconds: medians[index], operations: records, ratioVsRaw: raw.map { medians[index] / $0 },
                records: records)
        }
    }

    /// Y2: `commits` records, each from a write on one device to the value of an observer on another.
    func measureLatency(commits: Int) throws -> [ResultRow] {
        let subjects = SyncLatencyWorkload.Subject.allCases
        let runs = try rotation.rotate(
            workload: SyncLatencyWorkload.workload, subjects: subjects.map(\.rawValue),
            seconds: { median($0.fromStart) },
            run: { index, folder in
                try SyncLatencyWorkload.run(subjects[index], commits: commits, server: server, directory: folder)
            })
        return zip(subjects, runs).map { subject, runs in
            let latency = DeliveryLatency(
                fromStart: runs.flatMap(\.fromStart), fromReturn: runs.flatMap(\.fromReturn),
                writes: runs.flatMap(\.writes))
            return ResultRow(
                workload: SyncLatencyWorkload.workload, implementation: subject.rawValue,
                medianSeconds: latency.medianSeconds, operations: latency.commits, latency: latency)
        }
    }

    /// Y4: a first sync of `records` records over a slow link, uninterrupted and dropped every 2 seconds (the binary
    /// wire form), and uninterrupted in JSON.
    func measureResumedSync(records: Int) throws -> [ResultRow] {
        let workload = try ResumedSyncWorkload(records: records, server: server)
        let subjects = ResumedSyncWorkload.Subject.allCases
        let runs = try rotation.rotate(
            workload: ResumedSyncWorkload.workload, subjects: subjects.map(\.rawValue), seconds: \.seconds,
            run: { index, folder in try workload.run(subjects[index], directory: folder) })
        let bytes = runs.map { median($0.map { Double($0.bytes) }) }
        let uninterrupted = bytes[subjects.firstIndex(of: .uninterrupted) ?? 0]
        return subjects.indices.map { index in
            ResultRow(
                workload: ResumedSyncWorkload.workload, implementation: subjects[index].rawValue,
                medianSeconds: median(runs[index].map(\.seconds)), operations: records,
                transfer: TransferFigures(
                    bytes: Int(bytes[index]), cuts: Int(median(runs[index].map { Double($0.cuts) })),
                    retransferredPercent: subjects[index] == .cut ? (bytes[index] / uninterrupted - 1) * 100 : nil))
        }
    }

    /// Y3: ten devices pushing `records` records between them at once.
    func measurePushThroughput(records: Int) throws -> [ResultRow] {
        let subjects = PushThroughputWorkload.Subject.allCases
        return try rotation.measure(
            workload: PushThroughputWorkload.workload, subjects: subjects.map(\.rawValue), operations: records,
            targets: [:]
        ) { index, folder in
            try PushThroughputWorkload.run(subjects[index], records: records, server: server, directory: folder)
        }
    }
}
