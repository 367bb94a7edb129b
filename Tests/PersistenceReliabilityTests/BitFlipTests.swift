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

/// Random single-bit flips anywhere in an encrypted LMDB file, each damaged copy opened and read back in a child
/// process: the outcomes are counted, and a read that returns other data than was written, with no error, fails.
@Suite("bit flips in an encrypted LMDB file")
struct BitFlipTests {
    /// What `ReliabilityWorker probe` prints.
    struct ProbeReport: Decodable {
        var outcome: String
        var verification: String
        var code: String?
        var detail: String?
    }

    /// The outcomes of a run, by kind.
    struct Tally: CustomStringConvertible {
        var intact = 0
        var errors: [String: Int] = [:]
        var crashes: [Int32: Int] = [:]
        var verifyProblems = 0
        /// Other data than was written for a record, with no error: never acceptable on a sealed store.
        var wrongValues: [String] = []
        /// A result set that misses records with no error, when the store was reported sound.
        var wrongAfterSound: [String] = []
        /// A result set that misses records with no error, on a store no verification looked at (a flipped index
        /// key loses its entry: only a verification can report that).
        var wrongUnverified: [String] = []
        var workerFailures: [String] = []

        var description: String {
            let errors = errors.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
            let crashes = crashes.sorted { $0.key < $1.key }.map { "signal \($0.key) \($0.value)" }
                .joined(separator: ", ")
            return "intact+correct \(intact) | typed errors \(errors.isEmpty ? "0" : errors) | crashes "
                + "\(crashes.isEmpty ? "0" : crashes) | verify reported problems \(verifyProblems) | wrong answers: "
                + "value \(wrongValues.count), after sound \(wrongAfterSound.count), unverified "
                + "\(wrongUnverified.count) | worker failures \(workerFailures.count)"
        }
    }

    /// The same flips twice: with `verify()` before the reads, as the README advises for a file one doesn't trust,
    /// and without, as an app's ordinary launch reads its own store.
    @Test("no flipped bit reads back as other data", arguments: [true, false])
    func flips(verifiesFirst: Bool) throws {
        let flips = ReliabilitySize.flips
        var generator = SeededGenerator(seed: ReliabilitySize.seed)
        let started = ContinuousClock.now
        try withTemporaryDirectory { directory in
            let original = directory.appendingPathComponent("original")
            let populate = try WorkerProcess.run(
                ["populate", "--backend", "lmdb", "--directory", original.path, "--records", "400"],
                errorFile: directory.appendingPathComponent("populate.stderr"))
            try #require(populate.termination == .exit(0), "populate failed")
            let bytes = try Data(contentsOf: original.appendingPathComponent("Reliability.lmdb"))
            try #require(!bytes.isEmpty)

            var tally = Tally()
            let copy = directory.appendingPathComponent("copy")
            for flip in 0..<flips {
                let bit = Int.random(in: 0..<(bytes.count * 8), using: &generator)
                var damaged = bytes
                damaged[damaged.startIndex + bit / 8] ^= 1 << UInt8(bit % 8)
                try? FileManager.default.removeItem(at: copy)
                try FileManager.default.createDirectory(at: copy, withIntermediateDirectories: true)
                try damaged.write(to: copy.appendingPathComponent("Reliability.lmdb"))

                let errorFile = directory.appendingPathComponent("probe.stderr")
                let (lines, termination) = try WorkerProcess.run(
                    ["probe", "--backend", "lmdb", "--directory", copy.path, "--records", "400"]
                        + (verifiesFirst ? [] : ["--skip-verify"]), errorFile: errorFile)
                let place = "flip \(flip): bit \(bit % 8) of byte \(bit / 8) (page \(bit / 8 / 4096))"
                switch termination {
                case .signal(let signal):
                    tally.crashes[signal, default: 0] += 1
                case .exit(0):
                    guard let line = lines.last,
                        let report = try? JSONDecoder().decode(ProbeReport.self, from: Data(line.utf8))
                    else {
                        tally.workerFailures.append("\(place): no report")
                        continue
                    }
                    tally.count(report, place)
                case .exit(let status):
                    let errors = (try? String(contentsOf: errorFile, encoding: .utf8)) ?? ""
                    tally.workerFailures.append("\(place): exit \(status): \(errors.prefix(300))")
                }
            }
            let mode = verifiesFirst ? "with verify()" : "without verify()"
            print(
                "reliability bit flips \(mode): \(flips) flips of a \(bytes.count)-byte encrypted LMDB file (400 "
                    + "records, one index), seed \(ReliabilitySize.seed), \(ContinuousClock.now - started): \(tally)")
            for wrong in tally.wrongUnverified.prefix(5) {
                print("reliability bit flips \(mode): unverified wrong answer, \(wrong)")
            }
            #expect(tally.wrongValues.isEmpty, "\(tally.wrongValues)")
            #expect(tally.wrongAfterSound.isEmpty, "\(tally.wrongAfterSound)")
            // Without verify(), damage the read path can't see (a flipped index key or branch-page key loses an
            // entry; README, Reliability) can still answer short: counted and printed, not failed.
            if verifiesFirst {
                #expect(tally.wrongUnverified.isEmpty, "every probe verifies first: \(tally.wrongUnverified)")
            }
            #expect(tally.workerFailures.isEmpty, "\(tally.workerFailures)")
            // A Swift runtime trap (SIGILL/SIGTRAP) is our code crashing on a damaged file; LMDB's own crashes on a
            // damaged page (SIGSEGV, SIGBUS, SIGABRT from its assertions) are counted, not failed.
            #expect(tally.crashes[SIGILL] == nil && tally.crashes[SIGTRAP] == nil, "\(tally)")
            // Most bits are in free or unused space: a run where nothing reads back intact tested nothing.
            #expect(tally.intact > 0)
        }
    }
}

extension BitFlipTests.Tally {
    mutating func count(_ report: BitFlipTests.ProbeReport, _ place: String) {
        let what = "\(place): \(report.detail ?? "")"
        switch report.outcome {
        case "intact": intact += 1
        case "error": errors[report.code ?? "unknown", default: 0] += 1
        case "verifyProblems": verifyProblems += 1
        case "wrongValue": wrongValues.append(what)
        case "wrongResult" where report.verification == "sound": wrongAfterSound.append(what)
        case "wrongResult": wrongUnverified.append(what)
        default: workerFailures.append("\(place): unknown outcome \(report.outcome)")
        }
    }
}
