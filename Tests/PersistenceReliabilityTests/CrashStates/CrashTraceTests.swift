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
            // The files' syncs dropped, the directories' kept (those the trace opened as directories).
            let directories = Set(
                trace.operations.filter { $0.kind == .open && $0.flags.contains(.directory) }.map(\.path))
            let unsynced = FileTrace(
                operations: trace.operations.filter { !($0.kind == .sync && !directories.contains($0.path)) })
            #expect(unsynced.operations.count < trace.operations.count)
            let exposures = UnsyncedChanges.exposures(
                in: unsynced, model: .ext4Ordered, isAcknowledgement: Self.isAcknowledgement, ignoring: Self.rebuilt)
            #expect(Set(exposures.filter { $0.kind == .write }.map(\.acknowledgement)) == ["ack 1", "ack 2", "ack 3"])
        }
    }
}
