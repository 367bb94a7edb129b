import Foundation
import PersistenceCore
import PersistenceFuzzing
import PersistenceTestProcesses
import PersistenceTesting
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// kill -9 at random moments while a child process commits numbered transactions: after each kill the store
/// reopens, every transaction is all or nothing, and no acknowledged commit is lost.
@Suite("kill -9 while committing")
struct KillTests {
    /// What `ReliabilityWorker check` prints.
    struct CheckSummary: Decodable {
        var highest: Int64
        var ledgers: Int
        var consistent: Bool
        var problems: [String]
        var errorCode: String?
    }

    @Test(
        "no acknowledged commit is lost and no transaction is half applied",
        arguments: ["sqlite", "lmdb", "lmdb-plain"])
    func killLoop(backend: String) throws {
        let kills = ReliabilitySize.kills
        var generator = SeededGenerator(seed: ReliabilitySize.seed &+ UInt64(backend.utf8.count))
        let started = ContinuousClock.now
        try withTemporaryDirectory { directory in
            let store = directory.appendingPathComponent("store").path
            let options = ["--backend", backend, "--directory", store]
            var committed: Int64 = 0
            var acknowledged: Int64 = 0
            var acknowledgements = 0
            var killedMidTransaction = 0
            for round in 0..<kills {
                let errorFile = directory.appendingPathComponent("commit-\(round).stderr")
                let worker = try WorkerProcess(
                    ["commit"] + options + ["--start", "\(committed + 1)"], errorFile: errorFile)
                // Kill after a random number of acknowledgements (0: while opening or in the first transaction),
                // then a random few milliseconds more, so the kill lands anywhere in a transaction.
                let target = Int.random(in: 0...12, using: &generator)
                var seen = 0
                while seen < target, let line = worker.nextLine() {
                    acknowledged = try acknowledgement(line, after: committed + Int64(seen))
                    seen += 1
                }
                usleep(UInt32.random(in: 0..<3000, using: &generator))
                worker.kill()
                // Acknowledgements written before the kill still count: the child reported those commits done.
                for line in worker.remainingLines() {
                    acknowledged = try acknowledgement(line, after: committed + Int64(seen))
                    seen += 1
                }
                acknowledgements += seen
                let termination = worker.wait()
                try #require(termination == .signal(SIGKILL), "the worker ended by itself: \(worker.errors)")

                let summary = try check(options, errorFile: directory.appendingPathComponent("check-\(round).stderr"))
                try #require(summary.errorCode == nil, "round \(round): the store does not reopen: \(summary)")
                try #require(summary.consistent, "round \(round): \(summary.problems)")
                try #require(summary.highest >= acknowledged, "round \(round): an acknowledged commit was lost")
                // Beyond the acknowledged ones, at most the transaction in flight when the kill came.
                #expect(summary.highest <= acknowledged + 1 && summary.highest >= committed)
                if summary.highest > max(acknowledged, committed) { killedMidTransaction += 1 }
                committed = summary.highest
                acknowledged = committed
            }
            print(
                "reliability kill -9 \(backend): \(kills) kills, \(acknowledgements) commits acknowledged, 0 lost, "
                    + "\(killedMidTransaction) commits durable before their ack, \(committed) transactions in the "
                    + "store, seed \(ReliabilitySize.seed), \(ContinuousClock.now - started)")
        }
    }

    /// The number of an `ack N` line, which must be the next transaction after `previous`.
    private func acknowledgement(_ line: String, after previous: Int64) throws -> Int64 {
        let number = try #require(line.hasPrefix("ack ") ? Int64(line.dropFirst(4)) : nil, "unexpected line: \(line)")
        #expect(number == previous + 1, "acknowledgements out of order")
        return number
    }

    private func check(_ options: [String], errorFile: URL) throws -> CheckSummary {
        let (lines, termination) = try WorkerProcess.run(["check"] + options, errorFile: errorFile)
        try #require(
            termination == .exit(0), "check failed: \((try? String(contentsOf: errorFile, encoding: .utf8)) ?? "")")
        let line = try #require(lines.last, "check printed nothing")
        return try JSONDecoder().decode(CheckSummary.self, from: Data(line.utf8))
    }
}
