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

/// kill -9 at random moments while a child process changes an encrypted store's passphrase back and forth: after
/// each kill exactly one of the two passphrases opens the store — the last acknowledged one, or the one of the
/// change in flight — and the data is intact.
@Suite("kill -9 while changing the passphrase")
struct PassphraseKillTests {
    struct CheckSummary: Decodable {
        var highest: Int64
        var consistent: Bool
        var errorCode: String?
    }

    @Test("exactly one passphrase opens the store after every kill")
    func killLoop() throws {
        let kills = ReliabilitySize.kills
        var generator = SeededGenerator(seed: ReliabilitySize.seed &+ 97)
        let (first, second) = ("first passphrase", "second passphrase")
        try withTemporaryDirectory { directory in
            let store = directory.appendingPathComponent("store").path
            // Some data to keep intact: a store made with the first passphrase, 20 transactions.
            let (_, made) = try WorkerProcess.run(
                ["commit", "--backend", "lmdb", "--directory", store, "--passphrase", first, "--count", "20"],
                errorFile: directory.appendingPathComponent("commit.stderr"))
            try #require(made == .exit(0))
            var acknowledged = first
            var changes = 0
            var inFlightCommitted = 0
            for round in 0..<kills {
                let worker = try WorkerProcess(
                    ["rotate", "--directory", store, "--first", first, "--second", second],
                    errorFile: directory.appendingPathComponent("rotate-\(round).stderr"))
                let target = Int.random(in: 0...6, using: &generator)
                var seen = 0
                while seen < target, let line = worker.nextLine() {
                    acknowledged = try passphrase(of: line, first, second)
                    seen += 1
                }
                usleep(UInt32.random(in: 0..<4000, using: &generator))
                worker.kill()
                for line in worker.remainingLines() { acknowledged = try passphrase(of: line, first, second) }
                let termination = worker.wait()
                try #require(termination == .signal(SIGKILL), "the worker ended by itself: \(worker.errors)")
                changes += seen

                let opensWithFirst = try check(store, first, directory, round)
                let opensWithSecond = try check(store, second, directory, round)
                try #require(
                    opensWithFirst != opensWithSecond, "round \(round): \(opensWithFirst ? "both" : "neither") open")
                let working = opensWithFirst ? first : second
                if working != acknowledged { inFlightCommitted += 1 }
                acknowledged = working
            }
            print(
                "reliability kill -9 during passphrase changes: \(kills) kills, \(changes) changes acknowledged, "
                    + "\(inFlightCommitted) changes durable before their ack, never both or neither passphrase")
        }
    }

    /// The passphrase an `ack N PASSPHRASE` line names.
    private func passphrase(of line: String, _ first: String, _ second: String) throws -> String {
        let named = try #require(line.hasPrefix("ack ") ? line.split(separator: " ", maxSplits: 2).last : nil)
        try #require([first, second].contains(String(named)), "unexpected line: \(line)")
        return String(named)
    }

    /// Whether `passphrase` opens the store with all 20 transactions intact; a refusal must be `wrongPassphrase`.
    private func check(_ store: String, _ passphrase: String, _ directory: URL, _ round: Int) throws -> Bool {
        let errorFile = directory.appendingPathComponent("check-\(round).stderr")
        let (lines, termination) = try WorkerProcess.run(
            ["check", "--backend", "lmdb", "--directory", store, "--passphrase", passphrase], errorFile: errorFile)
        try #require(termination == .exit(0))
        let summary = try JSONDecoder().decode(CheckSummary.self, from: Data(try #require(lines.last).utf8))
        if let code = summary.errorCode {
            try #require(code == "wrongPassphrase", "round \(round): \(code)")
            return false
        }
        try #require(summary.consistent && summary.highest == 20, "round \(round): the data changed")
        return true
    }
}
