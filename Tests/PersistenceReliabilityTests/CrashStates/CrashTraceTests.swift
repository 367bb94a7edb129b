import Foundation
import PersistenceTestProcesses
import PersistenceTesting
import Testing

/// The first layer of the power-loss harness (issue 53): a worker commits under the tracing library, and every commit
/// it acknowledged must depend only on changes a sync had made durable before the acknowledgement.
@Suite("power loss: traced commits")
struct CrashTraceTests {
    /// Files a store rebuilds when it opens (SQLite's shared-memory index, LMDB's lock file): never counted.
    static func rebuilt(_ path: String) -> Bool { path.hasSuffix("-shm") || path.hasSuffix("-lock") }

    static func isAcknowledgement(_ line: String) -> Bool { line.hasPrefix("ack ") }

    /// `trace` without the syncs of files (those of directories — paths it opened as directories — kept): what a
    /// store that never synced its data would have done.
    static func withoutFileSyncs(_ trace: FileTrace) -> FileTrace {
        let directories = Set(
            trace.operations.filter { $0.kind == .open && $0.flags.contains(.directory) }.map(\.path))
        return FileTrace(operations: trace.operations.filter { !($0.kind == .sync && !directories.contains($0.path)) })
    }

    /// Runs `commit --count` for `backend` under the tracing library; its trace and acknowledgements.
    static func tracedCommits(_ backend: String, count: Int, in directory: URL) throws -> (FileTrace, [String]) {
        let library = try FileTrace.buildLibrary(into: directory)
        let traced = directory.appendingPathComponent("traced")
        // The store's directory is the app's to create (and to sync into its parent): made before tracing.
        try FileManager.default.createDirectory(
            at: traced.appendingPathComponent("store"), withIntermediateDirectories: true)
        let log = directory.appendingPathComponent("trace")
        let errorFile = directory.appendingPathComponent("commit.stderr")
        let (lines, termination) = try WorkerProcess.run(
            [
                "commit", "--backend", backend, "--directory", traced.appendingPathComponent("store").path, "--count",
                "\(count)",
            ],
            errorFile: errorFile,
            environment: FileTrace.environment(library: library, directory: traced, log: log))
        try #require(
            termination == .exit(0), "commit failed: \((try? String(contentsOf: errorFile, encoding: .utf8)) ?? "")")
        return (try FileTrace(contentsOf: log), lines)
    }

    @Test("every acknowledged commit is synced first", arguments: ["sqlite", "lmdb", "lmdb-plain"])
    func acknowledgedCommitsAreSynced(backend: String) throws {
        try withTemporaryDirectory { directory in
            let (trace, lines) = try Self.tracedCommits(backend, count: 5, in: directory)
            #expect(lines == (1...5).map { "ack \($0)" })
            // The trace saw what the worker did: its acknowledgements among the file operations, the store's writes
            // and syncs before them.
            let outputs = trace.operations.filter { $0.kind == .output }
            #expect(String(decoding: outputs.flatMap(\.data), as: UTF8.self) == lines.map { $0 + "\n" }.joined())
            #expect(trace.operations.contains { $0.kind == .write && !Self.rebuilt($0.path) })
            #expect(trace.operations.contains { $0.kind == .sync })

            let exposures = UnsyncedChanges.exposures(
                in: trace, model: .ext4Ordered, isAcknowledgement: Self.isAcknowledgement, ignoring: Self.rebuilt)
            #expect(exposures.isEmpty, "\(exposures.prefix(5))")
            // Under POSIX alone, names count only once their directory is synced: LMDB syncs the file at every
            // commit, never its directory, so the opening that creates a store syncs it.
            let posix = UnsyncedChanges.exposures(
                in: trace, model: .posix, isAcknowledgement: Self.isAcknowledgement, ignoring: Self.rebuilt)
            #expect(posix.isEmpty, "\(posix.prefix(5))")
            print(
                "reliability crash-trace \(backend): \(trace.operations.count) operations traced, "
                    + "\(outputs.count) acknowledgements, 0 exposed (ext4 data=ordered and POSIX)")
        }
    }

    /// The check is sensitive: the same trace without the syncs of the store's files exposes every acknowledged
    /// commit.
    @Test("a trace without its syncs exposes the acknowledged commits", arguments: ["sqlite", "lmdb-plain"])
    func missingSyncsAreCaught(backend: String) throws {
        try withTemporaryDirectory { directory in
            let (trace, _) = try Self.tracedCommits(backend, count: 3, in: directory)
            let unsynced = Self.withoutFileSyncs(trace)
            #expect(unsynced.operations.count < trace.operations.count)
            let exposures = UnsyncedChanges.exposures(
                in: unsynced, model: .ext4Ordered, isAcknowledgement: Self.isAcknowledgement, ignoring: Self.rebuilt)
            #expect(Set(exposures.filter { $0.kind == .write }.map(\.acknowledgement)) == ["ack 1", "ack 2", "ack 3"])
        }
    }

    /// What `ReliabilityWorker check` prints.
    struct CheckSummary: Decodable {
        var highest: Int64
        var consistent: Bool
        var problems: [String]
        var errorCode: String?
    }

    /// What the crash states of a trace came to: how many were checked, how many refused to open before any
    /// acknowledgement (nothing promised, nothing lost), and what went wrong in the others.
    struct StatesChecked {
        var states = 0
        var refusedBeforeAnyAcknowledgement = 0
        var failures: [String] = []
    }

    /// Builds every crash state of `trace` in both models and runs `ReliabilityWorker check` on each: it must open
    /// with every transaction acknowledged before the cut, at most the one in flight after them, none half applied.
    static func checkStates(of trace: FileTrace, backend: String, in directory: URL) throws -> StatesChecked {
        var cuts: [CrashStates.Cut] = []
        var seen: Set<CrashStates.State> = []
        for model in [UnsyncedChanges.Model.ext4Ordered, .posix] {
            for cut in try CrashStates.states(of: trace, model: model, ignoring: rebuilt)
            where seen.insert(cut.state).inserted {
                cuts.append(cut)
            }
        }
        var checked = StatesChecked()
        for (number, cut) in cuts.enumerated() {
            let root = directory.appendingPathComponent("state-\(number)")
            try CrashStates.materialize(cut.state, in: root)
            defer { try? FileManager.default.removeItem(at: root) }
            let errorFile = directory.appendingPathComponent("check.stderr")
            let (output, termination) = try WorkerProcess.run(
                ["check", "--backend", backend, "--directory", root.appendingPathComponent("store").path],
                errorFile: errorFile)
            checked.states += 1
            let place = "state \(number) (after \(cut.operations) operations, \(cut.choice))"
            guard termination == .exit(0), let line = output.last,
                let summary = try? JSONDecoder().decode(CheckSummary.self, from: Data(line.utf8))
            else {
                let errors = (try? String(contentsOf: errorFile, encoding: .utf8)) ?? ""
                checked.failures.append("\(place): check ended \(termination): \(errors)")
                continue
            }
            if let code = summary.errorCode {
                // Before any acknowledgement nothing was promised: a typed refusal loses nothing.
                if cut.acknowledgements == 0 {
                    checked.refusedBeforeAnyAcknowledgement += 1
                } else {
                    checked.failures.append("\(place): the store doesn't open (\(code))")
                }
            } else if !summary.consistent {
                checked.failures.append("\(place): \(summary.problems)")
            } else if summary.highest < Int64(cut.acknowledgements) || summary.highest > Int64(cut.acknowledgements) + 1
            {
                checked.failures.append("\(place): \(cut.acknowledgements) acknowledged, \(summary.highest) kept")
            }
        }
        return checked
    }

    /// Every state a power cut could leave while the worker committed — at every point of its trace, with the
    /// changes not yet synced kept, dropped or torn, in both models — opens with every transaction acknowledged
    /// before the cut, at most the one in flight after them, and none half applied.
    @Test(
        "every crash state of traced commits keeps the acknowledged ones", arguments: ["sqlite", "lmdb", "lmdb-plain"])
    func crashStatesKeepAcknowledgedCommits(backend: String) throws {
        try withTemporaryDirectory { directory in
            let commits = ReliabilitySize.crashCommits
            let (trace, lines) = try Self.tracedCommits(backend, count: commits, in: directory)
            try #require(lines.count == commits)
            let checked = try Self.checkStates(of: trace, backend: backend, in: directory)
            #expect(checked.failures.isEmpty, "\(checked.failures.prefix(5))")
            #expect(checked.states > commits * 5)
            print(
                "reliability crash-states \(backend): \(checked.states) states of \(commits) commits checked "
                    + "(\(trace.operations.count) operations traced; ext4 and POSIX), \(checked.failures.count) "
                    + "failed, \(checked.refusedBeforeAnyAcknowledgement) refused before any acknowledgement")
        }
    }

    /// The states are sensitive: the same trace without the syncs of the store's files (its directories' kept)
    /// gives states that lose acknowledged commits.
    @Test("crash states of a trace without its syncs lose acknowledged commits", arguments: ["sqlite", "lmdb-plain"])
    func crashStatesCatchMissingSyncs(backend: String) throws {
        try withTemporaryDirectory { directory in
            let (trace, _) = try Self.tracedCommits(backend, count: 2, in: directory)
            let unsynced = Self.withoutFileSyncs(trace)
            let checked = try Self.checkStates(of: unsynced, backend: backend, in: directory)
            #expect(checked.failures.contains { $0.contains("acknowledged") || $0.contains("doesn't open") })
        }
    }
}
