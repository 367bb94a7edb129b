import Foundation
import Workloads

/// O1 and O2: Persistence's observation on each backend, `runs` times, the backends' order rotating every round,
/// each run on a fresh store in a fresh folder.
struct ObservationHarness {
    let commits: Int
    let runs: Int
    let scratch: ScratchDirectory
    /// The PostgreSQL server O2's `postgres-other-server` row runs on; `nil` leaves the row out.
    var server: PostgresServer? = nil

    /// O1: each backend's commits with no observer and with observers of another entity, taking turns within each
    /// run (see ``CommitCostWorkload``). An observed variant's ratio of totals is the median of the runs' ratios to
    /// the unobserved commits of the same run; its ratio of commits divides the median commit of every run by the
    /// unobserved one.
    func measureCommitCost() throws -> [ResultRow] {
        let workload = CommitCostWorkload.workload
        let backends = ObservationBackend.allCases
        let variants = CommitCostWorkload.Variant.allCases
        // Each run's total, and every commit, by backend and variant.
        var totals = Array(repeating: Array(repeating: [Double](), count: variants.count), count: backends.count)
        var commitTimes = totals
        try eachRound(workload) { round, index, backend, folder in
            let run = try CommitCostWorkload.run(backend, commits: commits, round: round, directory: folder)
            for variant in variants.indices {
                totals[index][variant].append(run[variant].reduce(0, +))
                commitTimes[index][variant] += run[variant]
            }
            let unobserved = (total: run[0].reduce(0, +), commit: median(run[0]))
            let observed = zip(variants, run).dropFirst().map { variant, times in
                let total = times.reduce(0, +)
                return "\(variant.implementation(backend)) \(total.secondsText) s "
                    + "(\((total / unobserved.total).formatted(digits: 3))×; median commit "
                    + "\((median(times) / unobserved.commit).formatted(digits: 3))×)"
            }
            return "\(backend.rawValue) \(unobserved.total.secondsText) s, " + observed.joined(separator: ", ")
        }
        return backends.indices.flatMap { backend in
            let unobservedCommit = median(commitTimes[backend][0])
            return variants.indices.map { variant in
                let ratios = zip(totals[backend][variant], totals[backend][0]).map { $0 / $1 }
                let commit = median(commitTimes[backend][variant])
                return ResultRow(
                    workload: workload, implementation: variants[variant].implementation(backends[backend]),
                    medianSeconds: median(totals[backend][variant]), operations: commits,
                    target: variants[variant] == .unobserved ? nil : Target.observedCommits,
                    commitCost: CommitCost(
                        observers: variants[variant].observers, totalRatio: median(ratios),
                        medianCommitSeconds: commit, commitRatio: commit / unobservedCommit))
            }
        }
    }

    /// O2: on each backend, the time from each commit to the value an observer receives, over every commit of
    /// every run.
    func measureDeliveryLatency() throws -> [ResultRow] {
        let workload = DeliveryLatencyWorkload.workload
        let backends = ObservationBackend.allCases
        var results = Array(repeating: [DeliveryLatencyWorkload.Run](), count: backends.count)
        try eachRound(workload) { _, index, backend, folder in
            let run = try DeliveryLatencyWorkload.run(backend, commits: commits, directory: folder)
            results[index].append(run)
            return "\(backend.rawValue) \(median(run.fromStart).microsecondsText) µs "
                + "(p99 \(percentile(run.fromStart, 0.99).microsecondsText) µs)"
        }
        var rows = zip(backends.map(\.rawValue), results).map(Self.latencyRow)
        if let server {
            var serverRuns: [DeliveryLatencyWorkload.Run] = []
            for round in 0..<runs {
                let run = try DeliveryLatencyWorkload.runAcrossServers(server, commits: commits)
                serverRuns.append(run)
                progress(
                    "\(workload) run \(round + 1)/\(runs): \(DeliveryLatencyWorkload.otherServer) "
                        + "\(median(run.fromReturn).microsecondsText) µs after the commit returned "
                        + "(p99 \(percentile(run.fromReturn, 0.99).microsecondsText) µs)")
            }
            rows.append(Self.latencyRow(DeliveryLatencyWorkload.otherServer, serverRuns))
        }
        return rows
    }

    private static func latencyRow(_ implementation: String, _ runs: [DeliveryLatencyWorkload.Run]) -> ResultRow {
        let latency = DeliveryLatency(
            fromStart: runs.flatMap(\.fromStart), fromReturn: runs.flatMap(\.fromReturn),
            writes: runs.flatMap(\.writes))
        return ResultRow(
            workload: DeliveryLatencyWorkload.workload, implementation: implementation,
            medianSeconds: latency.medianSeconds, operations: latency.commits, latency: latency)
    }

    /// Runs `body` `runs` times on every backend, the backends' order rotating each round, each time in a fresh
    /// folder removed afterwards; prints each round's lines (what `body` returns) as progress.
    private func eachRound(
        _ workload: String, _ body: (_ round: Int, _ index: Int, ObservationBackend, URL) throws -> String
    ) throws {
        let backends = ObservationBackend.allCases
        for round in 0..<runs {
            var line: [String] = []
            for offset in backends.indices {
                let index = (offset + round) % backends.count
                let folder = try scratch.fresh("\(workload)-\(backends[index].rawValue)")
                defer { try? FileManager.default.removeItem(at: folder) }
                line.append(try body(round, index, backends[index], folder))
            }
            progress("\(workload) run \(round + 1)/\(runs): " + line.joined(separator: " · "))
        }
    }
}
