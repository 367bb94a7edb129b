import Foundation

/// How big the reliability runs are: small for `make test`, `make reliability` sets the full sizes.
enum ReliabilitySize {
    /// Kills per backend (`RELIABILITY_KILLS`).
    static var kills: Int { integer("RELIABILITY_KILLS", default: 20) }
    /// Single-bit flips of the encrypted store (`RELIABILITY_FLIPS`).
    static var flips: Int { integer("RELIABILITY_FLIPS", default: 60) }
    /// Inputs per decoder in the deterministic fuzz run (`RELIABILITY_FUZZ_INPUTS`).
    static var fuzzInputs: Int { integer("RELIABILITY_FUZZ_INPUTS", default: 3000) }
    /// Commits traced per backend for the crash states (`RELIABILITY_CRASH_COMMITS`).
    static var crashCommits: Int { integer("RELIABILITY_CRASH_COMMITS", default: 3) }
    /// The seed of every random choice (`RELIABILITY_SEED`); printed with each run's figures so a failure repeats.
    static var seed: UInt64 { UInt64(ProcessInfo.processInfo.environment["RELIABILITY_SEED"] ?? "") ?? 20_261_123 }

    private static func integer(_ name: String, default value: Int) -> Int {
        ProcessInfo.processInfo.environment[name].flatMap { Int($0) }.map { max($0, 1) } ?? value
    }
}
