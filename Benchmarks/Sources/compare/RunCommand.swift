import ArgumentParser
import Foundation
import Workloads

/// The default command: runs the selected workloads, prints the tables, writes the JSON.
struct RunCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run the workloads (the default command)."
    )

    @Option(
        help:
            "N: records per workload (S8 migrates N records too, R1 reconciles N, G1 cascades to N, E1 loads N / 100 authors)."
    )
    var n = 100_000

    @Option(help: "Random point lookups in S3, L4 and L5.")
    var lookups = 100_000

    @Option(help: "Random point lookups by id in P3 (each a round trip to the PostgreSQL server).")
    var postgresLookups = 10_000

    @Option(help: "Single-record commits per run in P7, spread over its 1, 4 or 16 writers.")
    var writerCommits = 2_000

    @Option(help: "Runs per workload and implementation; the table shows medians.")
    var runs = 5

    @Option(help: "Records the memory workload (M) iterates; 0 skips it.")
    var memoryRows = 1_000_000

    @Option(
        help: """
            Records the migration workloads M2 (a block on SQLite, plain and encrypted LMDB) and M3 (S8's mapping on \
            LMDB: memory) migrate; 0 skips them. M2's ours-encrypted also migrates a tenth as many.
            """)
    var migrationRows = 1_000_000

    @Option(help: "Records the aggregate workload (A1) queries; 0 skips it.")
    var aggregateRows = 1_000_000

    @Option(help: "Documents F1 indexes and searches (full-text search; 0 skips F1).")
    var searchDocuments = 100_000

    @Option(help: "Vectors of 384 dimensions V1 ranks by cosine (nearest neighbours; 0 skips V1).")
    var vectors = 100_000

    @Option(
        help: "Timed reads of the Northwind table in N1 (the suite's 500; 0 skips N1), after as many warm-ups up to 10."
    )
    var northwindFetches = NorthwindInput.fullFetches

    @Option(help: "Users in RS1, the Realm-vs-SwiftData suite (its million by default; 0 skips RS1).")
    var realmUsers = SuiteUsersInput.fullCount

    @Option(
        help: """
            Students in RS2, the suite's objects with relationships (5 grades each; the suite's 200,000 take 5 \
            minutes a run; 0 skips RS2).
            """)
    var realmStudents = SuiteStudentsInput.defaultCount

    @Option(help: "Single-record commits per run in O1 (per observer variant) and O2 (per store); 0 skips them.")
    var commits = 1000

    @Option(help: "Records Y1 syncs into each embedded store at a device's first sync; 0 skips Y1.")
    var syncRows = 1_000_000

    @Option(help: "Records Y3's ten devices push at once, between them; 0 skips Y3. (Y2 syncs --commits records.)")
    var syncPushRecords = 20_000

    @Option(help: "Records Y4 syncs over a slow link that drops every 2 seconds, and without drops; 0 skips Y4.")
    var syncResumeRecords = 200_000

    @Option(
        help: "Records in the store the `persistence` tool exports, imports, copies and hashes (T1–T3); 0 skips them.")
    var toolRows = 1_000_000

    @Option(
        help: """
            The release `persistence` binary T1–T3 run (`swift build -c release --product persistence`); \
            default: $\(ToolHarness.binaryVariable). Without either, T1–T3 are skipped.
            """)
    var toolBinary: String?

    @Option(
        help: """
            Comma-separated workload ids to run (S1–S8, D1, N1, RS1, RS2, R1, F1, V1, G1, A1, E1, P1–P7, L1, L4, L5, L6, K, M, M2, M3, O1, \
            O2, 
            Y1–Y4, T1–T3); all when omitted. \
            P1–P7 and Y1–Y4 need a PostgreSQL server: PERSISTENCE_POSTGRES_URL (scripts/with-postgres.sh sets it); T1–T3 the \
            `persistence` binary (--tool-binary).
            """)
    var only: String?

    @Option(help: "Where to write the results as JSON.")
    var json = ".benchmarks/compare.json"

    /// `--tool-binary`, else the environment variable.
    private var toolBinaryPath: String? {
        toolBinary ?? ProcessInfo.processInfo.environment[ToolHarness.binaryVariable].flatMap { $0.isEmpty ? nil : $0 }
    }

    func validate() throws {
        guard n >= 1 else { throw ValidationError("--n must be at least 1") }
        guard lookups >= 1 else { throw ValidationError("--lookups must be at least 1") }
        guard postgresLookups >= 1 else { throw ValidationError("--postgres-lookups must be at least 1") }
        guard writerCommits >= 16 else { throw ValidationError("--writer-commits must be at least 16") }
        guard runs >= 1 else { throw ValidationError("--runs must be at least 1") }
        guard memoryRows >= 0 else { throw ValidationError("--memory-rows can't be negative") }
        guard migrationRows >= 0 else { throw ValidationError("--migration-rows can't be negative") }
        guard realmUsers >= 0, realmStudents >= 0 else {
            throw ValidationError("--realm-users and --realm-students can't be negative")
        }
        guard commits >= 0 else { throw ValidationError("--commits can't be negative") }
        guard syncRows >= 0, syncPushRecords >= 0 else {
            throw ValidationError("--sync-rows and --sync-push-records can't be negative")
        }
        guard toolRows >= 0 else { throw ValidationError("--tool-rows can't be negative") }
        if let binary = toolBinaryPath, !FileManager.default.isExecutableFile(atPath: binary) {
            throw ValidationError("the tool binary \(binary) is not an executable file (--tool-binary)")
        }
        _ = try parseSelection(only)
    }

    func run() throws {
        var selection = try parseSelection(only)
        let server = PostgresServer.fromEnvironment()
        let started = ContinuousClock.now
        print("# Persistence benchmarks: ours vs raw C vs GRDB\n")
        print("Machine: \(Machine.current().description)")
        print(
            "N = \(n.grouped) records · \(lookups.grouped) point lookups · 1,000 lookups by name · "
                + "\(min(1000, n).grouped) single-insert transactions · \(commits.grouped) commits per observation "
                + "variant · \(postgresLookups.grouped) PostgreSQL point lookups · \(writerCommits.grouped) commits "
                + "per P7 writer count · \(syncRows.grouped) records in Y1 · \(syncPushRecords.grouped) in Y3 · "
                + "\(toolRows.grouped) records in T1–T3 · \(runs) runs per implementation (median)"
        )
        if toolRows == 0 {
            selection.removeAll(where: \.needsTool)
        } else if toolBinaryPath == nil, selection.contains(where: \.needsTool) {
            print(
                "\nStore tool rows (T1–T3) skipped: no `persistence` binary (pass --tool-binary PATH or set "
                    + "\(ToolHarness.binaryVariable), as `make compare` does with the release build).")
            selection.removeAll(where: \.needsTool)
        }
        if server == nil, selection.contains(where: \.needsServer) {
            print(
                "\nPostgreSQL and sync rows (P1–P7, Y1–Y4) skipped: \(PostgresServer.environmentVariable) is not set (run through "
                    + "scripts/with-postgres.sh, as `make compare` does, or set it to a server's postgres:// URL).")
            selection.removeAll(where: \.needsServer)
        }
        #if DEBUG
            print("\n**Debug build: these numbers mean nothing. Use `swift run -c release` (`make compare`).**")
        #endif

        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let needsDataset = selection.contains { $0.sqlite != nil || $0.lmdb != nil || $0.postgres != nil || $0 == .d1 }
        let dataset = needsDataset ? Dataset(count: n, lookups: lookups, singleInserts: min(1000, n)) : nil
        let harness = Harness(runs: runs, scratch: scratch)
        let toolHarness = toolBinaryPath.map {
            ToolHarness(binary: URL(fileURLWithPath: $0), rows: toolRows, runs: runs, scratch: scratch)
        }
        let postgresInputs =
            selection.contains { $0.postgres != nil }
            ? dataset.map { PostgresInputs(dataset: $0, pointLookups: postgresLookups) } : nil

        if let server, selection.contains(where: \.needsServer) {
            try PostgresTableShape.verify(on: server)
            progress("P: raw's table has the shape of ours' (columns, types, nullability, indexes)")
        }

        var rows: [ResultRow] = []
        for id in selection {
            if let workload = id.sqlite, let dataset {
                rows += try harness.measure(workload, dataset: dataset)
            } else if let workload = id.postgres, let postgresInputs, let server {
                rows += try harness.measure(workload, inputs: postgresInputs, server: server)
            } else if id == .p7, let server {
                rows += try ConcurrentWritersHarness(commits: writerCommits, runs: runs, server: server).measure()
            } else if let workload = id.lmdb, let dataset {
                rows += try harness.measure(workload, dataset: dataset)
            } else if id == .d1, let dataset {
                rows += try RecordCodeHarness(runs: runs, scratch: scratch).measure(dataset)
            } else if id == .n1, northwindFetches > 0 {
                rows += try NorthwindHarness(runs: runs, scratch: scratch).measure(fetches: northwindFetches)
            } else if id == .rs1, realmUsers > 0 {
                rows += try RealmSuiteHarness(runs: runs, scratch: scratch).measureUsers(realmUsers)
            } else if id == .rs2, realmStudents > 0 {
                rows += try RealmSuiteHarness(runs: runs, scratch: scratch).measureStudents(realmStudents)
            } else if id == .s8 {
                rows += try MappingMigrationHarness(rows: n, runs: runs, scratch: scratch).measure()
                rows += try MigrationHarness.mapping(id.rawValue, rows: n, runs: runs, scratch: scratch).measure()
            } else if id == .r1 {
                rows += try ReconcileHarness(rows: n, runs: runs, scratch: scratch).measure()
            } else if id == .f1, searchDocuments > 0 {
                rows += try SearchHarness(documents: searchDocuments, runs: runs, scratch: scratch, server: server)
                    .measure()
            } else if id == .v1, vectors > 0 {
                rows += try SearchHarness(vectors: vectors, runs: runs, scratch: scratch, server: server).measure()
            } else if id == .g1 {
                rows += try GraphHarness(runs: runs, scratch: scratch).measureCascade(descendants: n)
            } else if id == .e1 {
                rows += try GraphHarness(runs: runs, scratch: scratch).measureEagerLoading(
                    authors: Swift.max(1, n / 100))
            } else if id == .a1, aggregateRows > 0 {
                rows += try GraphHarness(runs: runs, scratch: scratch).measureAggregates(records: aggregateRows)
            } else if id == .m, memoryRows > 0 {
                rows += try MemoryHarness(rows: memoryRows, scratch: scratch).measure()
            } else if id == .m2, migrationRows > 0 {
                let harness = MigrationHarness.block(rows: migrationRows, runs: runs, scratch: scratch)
                rows += try harness.measure()
                rows.append(try harness.measureTenth())
            } else if id == .m3, migrationRows > 0 {
                rows += try MigrationHarness.mapping(id.rawValue, rows: migrationRows, runs: runs, scratch: scratch)
                    .measure()
            } else if id == .o1, commits > 0 {
                rows += try ObservationHarness(commits: commits, runs: runs, scratch: scratch).measureCommitCost()
            } else if id == .o2, commits > 0 {
                rows += try ObservationHarness(commits: commits, runs: runs, scratch: scratch, server: server)
                    .measureDeliveryLatency()
            } else if id == .y1, syncRows > 0, let server {
                rows += try SyncHarness(runs: runs, scratch: scratch, server: server).measureInitialSync(
                    records: syncRows)
            } else if id == .y2, commits > 0, let server {
                rows += try SyncHarness(runs: runs, scratch: scratch, server: server).measureLatency(commits: commits)
            } else if id == .y3, syncPushRecords > 0, let server {
                rows += try SyncHarness(runs: runs, scratch: scratch, server: server)
                    .measurePushThroughput(records: syncPushRecords)
            } else if id == .y4, syncResumeRecords > 0, let server {
                rows += try SyncHarness(runs: runs, scratch: scratch, server: server)
                    .measureResumedSync(records: syncResumeRecords)
            } else if id.needsTool, let toolHarness {
                rows += try toolHarness.measure(id, previous: rows)
            }
        }

        print("")
        print(Report(rows: rows, memoryRows: memoryRows, migrationRows: migrationRows, commits: commits).render())
        let path = URL(fileURLWithPath: json)
        try JSONReport.write(rows, to: path)
        let elapsed = started.duration(to: .now).components.seconds
        print("\nJSON: \(path.path) · wall time \(elapsed / 60) min \(elapsed % 60) s")
    }
}

/// A temporary directory for the run's stores, removed at the end; each measurement gets a fresh folder in it.
final class ScratchDirectory {
    let url: URL
    private var counter = 0

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent(
            "persistence-compare-\(ProcessInfo.processInfo.processIdentifier)-\(UUID().uuidString.prefix(8))",
            isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    /// A new empty folder.
    func fresh(_ label: String) throws -> URL {
        counter += 1
        let folder = url.appendingPathComponent("\(counter)-\(label)", isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    func remove() {
        try? FileManager.default.removeItem(at: url)
    }
}

/// Progress, on standard error so standard output holds only the report.
func progress(_ text: String) {
    FileHandle.standardError.write(Data((text + "\n").utf8))
}
