import Workloads

/// P7: for 1, 4 and 16 writers, raw and ours commit the same single-record upserts `runs` times each, the order
/// rotating every round, each run on a fresh store; every run's records are verified.
struct ConcurrentWritersHarness {
    let commits: Int
    let runs: Int
    let server: PostgresServer

    func measure() throws -> [ResultRow] {
        let workload = ConcurrentWritersWorkload(commits: commits)
        let subjects = ConcurrentWritersWorkload.Subject.allCases
        var rows: [ResultRow] = []
        for writers in ConcurrentWritersWorkload.writerCounts {
            let label = "\(ConcurrentWritersWorkload.workload)×\(writers)"
            var times = Array(repeating: [Double](), count: subjects.count)
            var retries = Array(repeating: 0, count: subjects.count)
            for round in 0..<runs {
                var line: [String] = []
                for offset in subjects.indices {
                    let index = (offset + round) % subjects.count
                    let run = try workload.run(subjects[index], writers: writers, server: server)
                    times[index].append(run.seconds)
                    retries[index] += run.retries
                    line.append("\(subjects[index].rawValue) \(run.seconds.secondsText) s")
                }
                progress("\(label) run \(round + 1)/\(runs): " + line.joined(separator: " · "))
            }
            let medians = times.map(median)
            let rawMedian = subjects.firstIndex(of: .raw).map { medians[$0] }
            rows += subjects.indices.map { index in
                ResultRow(
                    workload: ConcurrentWritersWorkload.workload, implementation: subjects[index].rawValue,
                    medianSeconds: medians[index], operations: commits,
                    ratioVsRaw: rawMedian.map { medians[index] / $0 },
                    concurrentWriters: ConcurrentWriters(writers: writers, retries: retries[index]))
            }
        }
        return rows
    }
}
