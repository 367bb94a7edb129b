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

/// kill -9 at random moments while a child process migrates a store from schema version 1 to 2 (a rename, a String →
/// Int conversion — in a migration block on encrypted LMDB, in a mapping model on SQLite, whose backup is made first —
/// an added attribute with a default, an index dropped and one built): after every kill the store opens either fully
/// old or fully migrated — every record, the index and the integrity check right for that version — never a mix. On
/// LMDB also from a 1 MiB map that the migration outgrows several times, its block creating a record per record it
/// enumerates: the map grows between the migration's steps while the enumeration goes on.
@Suite("kill -9 during a migration")
struct MigrationKillTests {
    struct Summary: Decodable {
        var state: String
        var records: Int
        var consistent: Bool
        var errorCode: String?
    }

    /// Records in the store migrated: `RELIABILITY_MIGRATION_RECORDS` on LMDB (5,000 by default), 100,000 on SQLite
    /// (`RELIABILITY_SQLITE_MIGRATION_RECORDS`).
    static func records(_ backend: String) -> Int {
        let variable = backend == "sqlite" ? "RELIABILITY_SQLITE_MIGRATION_RECORDS" : "RELIABILITY_MIGRATION_RECORDS"
        return ProcessInfo.processInfo.environment[variable].flatMap { Int($0) }
            ?? (backend == "sqlite" ? 100_000 : 5_000)
    }

    @Test("the store is fully old or fully migrated after every kill", arguments: ["lmdb", "sqlite"])
    func killLoop(backend: String) throws {
        try killLoop(backend: backend, kills: max(50, ReliabilitySize.kills), records: Self.records(backend))
    }

    /// The same loop with each backend's other form of migration: a mapping model on encrypted LMDB, a migration block
    /// on SQLite (`RELIABILITY_MIGRATION_RECORDS` records on both).
    @Test(
        "the store is fully old or fully migrated after every kill, each backend migrating the other way",
        arguments: ["lmdb", "sqlite"])
    func killLoopOfTheOtherForm(backend: String) throws {
        try killLoop(
            backend: backend, kills: ReliabilitySize.kills, records: Self.records("lmdb"), options: ["--swapped"])
    }

    /// Records in the LMDB store migrated from a small map: `RELIABILITY_GROWTH_MIGRATION_RECORDS` (2,000 by default).
    static var growthRecords: Int {
        ProcessInfo.processInfo.environment["RELIABILITY_GROWTH_MIGRATION_RECORDS"].flatMap { Int($0) } ?? 2_000
    }

    @Test("the store is fully old or fully migrated after every kill of a migration that grows the map")
    func killLoopWhileTheMapGrows() throws {
        try killLoop(backend: "lmdb", kills: ReliabilitySize.kills, records: Self.growthRecords, options: ["--grows"])
    }

    /// Seeds a store of `records`, migrates a copy once to the end, then `kills` times migrates a fresh copy and kills
    /// the worker at a random moment, checking the store after each kill; `options` go to every `migrate` but the seed.
    private func killLoop(backend: String, kills: Int, records: Int, options: [String] = []) throws {
        let file = backend == "sqlite" ? "Reliability.sqlite" : "Reliability.lmdb"
        var generator = SeededGenerator(seed: ReliabilitySize.seed &+ 131)
        try withTemporaryDirectory { directory in
            let seeded = directory.appendingPathComponent("seeded")
            let (_, made) = try WorkerProcess.run(
                ["migrate", "--backend", backend, "--directory", seeded.path, "--seed", String(records)],
                errorFile: directory.appendingPathComponent("seed.stderr"))
            try #require(made == .exit(0))
            let store = directory.appendingPathComponent("store")

            // One migration to the end: how long it takes, so that the kills land before, during and after it.
            try fresh(store, from: seeded, file)
            let started = Date()
            let (lines, finished) = try WorkerProcess.run(
                ["migrate", "--backend", backend, "--directory", store.path] + options,
                errorFile: directory.appendingPathComponent("full.stderr"))
            let duration = Date().timeIntervalSince(started)
            try #require(finished == .exit(0) && lines.last == "migrated \(records)", "\(lines)")
            try #require(try check(backend, store, directory, -1, options).state == "new")

            var outcomes: [String: Int] = [:]
            for round in 0..<kills {
                try fresh(store, from: seeded, file)
                let worker = try WorkerProcess(
                    ["migrate", "--backend", backend, "--directory", store.path] + options,
                    errorFile: directory.appendingPathComponent("migrate-\(round).stderr"))
                // Up to 1.2 × a whole run: most kills land inside the migration's transaction.
                usleep(UInt32.random(in: 0..<UInt32(max(1_000, duration * 1_200_000)), using: &generator))
                worker.kill()
                let output = worker.remainingLines()
                let termination = worker.wait()
                let summary = try check(backend, store, directory, round, options)
                try #require(
                    summary.consistent && summary.records == records,
                    "round \(round): \(summary) after \(termination), worker said \(output): \(worker.errors)")
                // A kill during SQLite's backup leaves a temporary copy of the user's data: the check's open removes
                // it (a copy is `.<store>.v1.sqlite-backup.<UUID>.partial`, with its journal).
                let leftovers = try FileManager.default.contentsOfDirectory(atPath: store.path).filter {
                    $0.contains(".partial")
                }
                try #require(leftovers.isEmpty, "round \(round): a partial copy survived an open: \(leftovers)")
                if summary.state == "old" {
                    try #require(!output.contains { $0.hasPrefix("migrated") }, "an acknowledged migration was lost")
                }
                // An encrypted store holds no value in plaintext, whatever the kill interrupted (every note begins
                // "note <id> ").
                if backend == "lmdb" {
                    let bytes = try Data(contentsOf: store.appendingPathComponent(file))
                    try #require(
                        bytes.range(of: Data("note 1".utf8)) == nil, "round \(round): a value is on disk in plaintext")
                }
                outcomes[summary.state, default: 0] += 1
            }
            #expect(outcomes.keys.allSatisfy { ["old", "new"].contains($0) })
            print(
                "reliability kill -9 during \(backend) migrations\(options.isEmpty ? "" : " " + options.joined()): \(kills) kills of a \(records)-record migration "
                    + "(\(Int(duration * 1000)) ms uninterrupted), \(outcomes["old", default: 0]) fully old, "
                    + "\(outcomes["new", default: 0]) fully migrated, never mixed")
        }
    }

    /// Replaces `store` with a copy of the seeded version-1 store.
    private func fresh(_ store: URL, from seeded: URL, _ file: String) throws {
        try? FileManager.default.removeItem(at: store)
        try FileManager.default.createDirectory(at: store, withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            at: seeded.appendingPathComponent(file), to: store.appendingPathComponent(file))
    }

    private func check(_ backend: String, _ store: URL, _ directory: URL, _ round: Int, _ options: [String]) throws
        -> Summary
    {
        let (lines, termination) = try WorkerProcess.run(
            ["migrate", "--backend", backend, "--directory", store.path, "--check"] + options,
            errorFile: directory.appendingPathComponent("check-\(round).stderr"))
        try #require(termination == .exit(0))
        return try JSONDecoder().decode(Summary.self, from: Data(try #require(lines.last).utf8))
    }
}
