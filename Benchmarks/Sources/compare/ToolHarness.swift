import Foundation
import Workloads

/// T1–T3: the `persistence` store tool on a store of `rows` records, run as users run it — the release binary as a
/// child process (``ToolProcess``), `--quiet`, passphrases from an environment variable — `runs` times each, every
/// result checked.
///
/// The source is the S workloads' SQLite store (`OursSQLiteSubject`), written once by the library; T3 also hashes
/// L1's encrypted LMDB store (`OursEncryptedLMDBSubject`), written once by the library. The source's content hash
/// (`persistence hash`, once, not timed) is what every import, copy and hash must reproduce.
final class ToolHarness {
    /// Names the binary when `--tool-binary` doesn't.
    static let binaryVariable = "PERSISTENCE_TOOL_BINARY"
    /// The variable the tool reads the encrypted stores' passphrase from (`--passphrase-env`,
    /// `--destination-passphrase-env`): never on its command line.
    static let passphraseVariable = "PERSISTENCE_BENCH_PASSPHRASE"

    let rows: Int
    let runs: Int
    private let scratch: ScratchDirectory
    private let tool: ToolProcess
    private let rotation: RotatingMeasurement

    /// The SQLite store every T row starts from, and its content hash; made on first use.
    private var source: (file: URL, digest: String)?
    /// L1's encrypted LMDB store of the same records, for T3; made on first use.
    private var encryptedStore: URL?
    /// The checksum of the generator's records, for the CSV export's check; computed on first use.
    private var expectedChecksum: Checksum?

    init(binary: URL, rows: Int, runs: Int, scratch: ScratchDirectory) {
        self.rows = rows
        self.runs = runs
        self.scratch = scratch
        tool = ToolProcess(
            binary: binary, environment: [Self.passphraseVariable: ToolStores.passphrase], scratch: scratch)
        rotation = RotatingMeasurement(runs: runs, scratch: scratch)
    }

    /// Runs T1, T2 or T3; `previous` holds the rows measured so far (T2 takes S2's and L1's from it when they were
    /// measured at the same N).
    func measure(_ id: WorkloadID, previous: [ResultRow]) throws -> [ResultRow] {
        switch id {
        case .t1: try measureExportAndImport()
        case .t2: try measureCopy(previous: previous)
        case .t3: try measureHash()
        default: []
        }
    }

    // MARK: - T1

    private enum Transfer: String, CaseIterable {
        case exportJSONLines = "export-jsonl"
        case exportCSV = "export-csv"
        case importSQLite = "import-sqlite"
        case importEncryptedLMDB = "import-lmdb-encrypted"
    }

    /// T1: export to JSON Lines and to CSV; import the JSON Lines into a new SQLite and a new encrypted LMDB store.
    /// The first round runs in that order, so the imports read the first JSON Lines export (kept for every round).
    private func measureExportAndImport() throws -> [ResultRow] {
        let workload = WorkloadID.t1.rawValue
        let source = try sourceStore()
        let kept = try scratch.fresh("T1-import-input")
        var exported: URL?
        let subjects = Transfer.allCases
        let results = try rotation.rotate(
            workload: workload, subjects: subjects.map(\.rawValue), seconds: \ToolProcess.Run.seconds
        ) { index, folder in
            let subject = subjects[index]
            switch subject {
            case .exportJSONLines, .exportCSV:
                let csv = subject == .exportCSV
                let file = folder.appendingPathComponent(csv ? "export.csv" : "export.jsonl")
                let run = try checked(
                    workload, subject.rawValue,
                    ["export", "sqlite:" + source.file.path, "--format", csv ? "csv" : "jsonl", "--output", file.path]
                        + (csv ? ["--entity", "Person"] : []) + ["--quiet"])
                if csv {
                    try verifyCSV(file, subject)
                } else {
                    try verifyJSONLines(file, subject)
                    if exported == nil {
                        let input = kept.appendingPathComponent("export.jsonl")
                        try FileManager.default.moveItem(at: file, to: input)
                        exported = input
                    }
                }
                return run
            case .importSQLite, .importEncryptedLMDB:
                guard let exported else {
                    throw VerificationError(
                        workload: workload, implementation: subject.rawValue, message: "no export to import")
                }
                let encrypted = subject == .importEncryptedLMDB
                let store =
                    encrypted
                    ? "lmdb:" + folder.appendingPathComponent("imported.lmdb").path
                    : "sqlite:" + folder.appendingPathComponent("imported.sqlite").path
                let run = try checked(
                    workload, subject.rawValue,
                    ["import", exported.path, store, "--quiet"]
                        + (encrypted ? ["--destination-passphrase-env", Self.passphraseVariable] : []))
                try expectDigest(
                    hash(store, encrypted: encrypted, workload, subject.rawValue), of: source.digest, workload,
                    subject.rawValue, "the imported store's content hash")
                return run
            }
        }
        try? FileManager.default.removeItem(at: kept)
        return subjects.indices.map { row(workload, subjects[$0].rawValue, results[$0]) }
    }

    /// The export has the header line, then one `Person` record line per record.
    private func verifyJSONLines(_ file: URL, _ subject: Transfer) throws {
        var lines = 0
        var malformed = 0
        var example = ""
        try FileLines.forEach(in: file) { line in
            lines += 1
            let wellFormed =
                lines == 1
                ? String(decoding: line, as: UTF8.self).contains("\"format\":\"persistence-export\"")
                : line.starts(with: "{\"entity\":\"Person\",\"record\":{".utf8)
            guard !wellFormed else { return }
            malformed += 1
            if example.isEmpty { example = "line \(lines): " + String(decoding: line.prefix(120), as: UTF8.self) }
        }
        try expect(
            lines == rows + 1, .t1, subject, "\(lines.grouped) lines, expected \(rows.grouped) records + the header")
        try expect(
            malformed == 0, .t1, subject, "\(malformed.grouped) lines aren't the header or a Person record (\(example))"
        )
    }

    /// The export has a header row of `Person`'s attributes, then one row per record: together exactly the
    /// generator's records (every field parsed back and checksummed).
    private func verifyCSV(_ file: URL, _ subject: Transfer) throws {
        let names = ["age", "bio", "email", "id", "name", "score"]
        var columns: [String: Int] = [:]
        var lines = 0
        var unreadable = 0
        var checksum = Checksum()
        try FileLines.forEach(in: file) { line in
            lines += 1
            let fields = line.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false).map {
                String(decoding: $0, as: UTF8.self)
            }
            if lines == 1 {
                columns = Dictionary(fields.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
                return
            }
            guard fields.count == names.count, let person = Self.person(fields, columns) else {
                unreadable += 1
                return
            }
            checksum.add(person)
        }
        try expect(
            columns.keys.sorted() == names, .t1, subject,
            "the header names \(columns.keys.sorted()), expected \(names)")
        try expect(
            lines == rows + 1, .t1, subject, "\(lines.grouped) lines, expected \(rows.grouped) records + the header")
        try expect(unreadable == 0, .t1, subject, "\(unreadable.grouped) rows aren't a Person's six fields")
        let expected = expectedRecords()
        try expect(checksum == expected, .t1, subject, "the rows hold \(checksum), expected \(expected)")
    }

    /// A CSV row's `Person` (the generator's texts have no commas, quotes or line breaks: no field is quoted).
    private static func person(_ fields: [String], _ columns: [String: Int]) -> Person? {
        func field(_ name: String) -> String? { columns[name].map { fields[$0] } }
        guard let id = field("id").flatMap({ Int64($0) }), let name = field("name"), let email = field("email"),
            let age = field("age").flatMap({ Int($0) }), let score = field("score").flatMap({ Double($0) }),
            let bio = field("bio")
        else { return nil }
        return Person(id: id, name: name, email: email, age: age, score: score, bio: bio)
    }

    // MARK: - T2

    /// T2: `copy` of the SQLite store into a new encrypted LMDB store, against S2 + L1; then, timed apart, the two
    /// passes over the copy that `copy` makes after writing it: `verify` and `hash`.
    private func measureCopy(previous: [ResultRow]) throws -> [ResultRow] {
        let workload = WorkloadID.t2.rawValue
        let source = try sourceStore()
        let reference = try reference(previous)
        let subject = "copy"
        let rounds = try rotation.rotate(workload: workload, subjects: [subject], seconds: \.copy.seconds) {
            _, folder -> (copy: ToolProcess.Run, verify: ToolProcess.Run, hash: ToolProcess.Run) in
            let destination = "lmdb:" + folder.appendingPathComponent("copy.lmdb").path
            let copy = try checked(
                workload, subject,
                [
                    "copy", "sqlite:" + source.file.path, destination, "--destination-passphrase-env",
                    Self.passphraseVariable, "--quiet",
                ])
            try expectDigest(copy, of: source.digest, workload, subject, "the digest copy printed")
            let verify = try checked(
                workload, "verify-copy", ["verify", destination, "--passphrase-env", Self.passphraseVariable])
            try expect(
                verify.output.contains(": sound"), .t2, "verify-copy", "verify said: \(verify.output.prefix(200))")
            let hash = try hash(destination, encrypted: true, workload, "hash-copy")
            try expectDigest(hash, of: source.digest, workload, "hash-copy", "the copy's content hash")
            return (copy: copy, verify: verify, hash: hash)
        }
        let results = rounds.first ?? []

        var copy = row(workload, subject, results.map(\.copy))
        copy.tool?.reference = reference
        copy.ratioVsReference = copy.medianSeconds / reference.seconds
        copy.target = .toolCopy
        let inProcess = { (implementation: String, seconds: Double) in
            ResultRow(
                workload: workload, implementation: implementation, medianSeconds: seconds, operations: self.rows,
                tool: ToolFigures(rows: self.rows))
        }
        return [
            copy, row(workload, "verify-copy", results.map(\.verify)), row(workload, "hash-copy", results.map(\.hash)),
            inProcess("s2-ours", reference.s2Seconds), inProcess("l1-ours-encrypted", reference.l1Seconds),
        ]
    }

    /// S2's and L1's medians for ours at N: this run's rows when they were measured at N, else measured here, the
    /// same way (`SQLiteWorkload.s2` on `OursSQLiteSubject`, `LMDBWorkload.l1` on `OursEncryptedLMDBSubject`).
    private func reference(_ previous: [ResultRow]) throws -> ToolReference {
        func measured(_ workload: String, _ implementation: String) -> Double? {
            previous.first {
                $0.workload == workload && $0.implementation == implementation && $0.operations == rows
            }?.medianSeconds
        }
        if let s2 = measured(SQLiteWorkload.s2.rawValue, OursSQLiteSubject.implementation),
            let l1 = measured(LMDBWorkload.l1.rawValue, OursEncryptedLMDBSubject.implementation)
        {
            return ToolReference(s2Seconds: s2, l1Seconds: l1, fromWorkloadRows: true)
        }
        progress("T2: S2 (ours) and L1 (ours-encrypted) at \(rows.grouped) records, the copy's reference")
        let dataset = Dataset(count: rows, lookups: 1, nameLookups: 1, singleInserts: 1)
        let workloads = ["S2 ours", "L1 ours-encrypted"]
        let times = try rotation.rotate(workload: "T2 reference", subjects: workloads, seconds: \.self) {
            index, folder in
            index == 0
                ? try SQLiteWorkload.s2.run(OursSQLiteSubject.self, dataset: dataset, directory: folder)
                : try LMDBWorkload.l1.run(OursEncryptedLMDBSubject.self, dataset: dataset, directory: folder)
        }
        return ToolReference(s2Seconds: median(times[0]), l1Seconds: median(times[1]), fromWorkloadRows: false)
    }

    // MARK: - T3

    /// T3: `hash` of the SQLite store and of the encrypted LMDB store of the same records: both must print the
    /// source's digest.
    private func measureHash() throws -> [ResultRow] {
        let workload = WorkloadID.t3.rawValue
        let source = try sourceStore()
        let lmdb = try encryptedLMDBStore()
        let subjects = ["hash-sqlite", "hash-lmdb-encrypted"]
        let results = try rotation.rotate(workload: workload, subjects: subjects, seconds: \ToolProcess.Run.seconds) {
            index, _ in
            let run =
                index == 0
                ? try hash("sqlite:" + source.file.path, encrypted: false, workload, subjects[index])
                : try hash("lmdb:" + lmdb.path, encrypted: true, workload, subjects[index])
            try expectDigest(run, of: source.digest, workload, subjects[index], "the content hash")
            return run
        }
        return subjects.indices.map { row(workload, subjects[$0], results[$0]) }
    }

    // MARK: - Stores

    /// The SQLite store of `rows` records, written by the library, and its content hash (`persistence hash`).
    private func sourceStore() throws -> (file: URL, digest: String) {
        if let source { return source }
        let folder = try scratch.fresh("T-source-sqlite")
        let started = ContinuousClock.now
        let file = try ToolStores.sqlite(in: folder, generator: PersonGenerator(count: rows))
        let written = started.duration(to: .now).seconds
        let run = try hash("sqlite:" + file.path, encrypted: false, "T", "hash-sqlite")
        guard let digest = Self.digest(in: run.output) else {
            throw VerificationError(workload: "T", implementation: "hash-sqlite", message: "no digest in \(run.output)")
        }
        progress(
            "T: the library wrote \(rows.grouped) records to SQLite in \(written.secondsText) s; "
                + "`persistence hash`: \(digest) (\(run.seconds.secondsText) s)")
        source = (file, digest)
        return (file, digest)
    }

    /// L1's encrypted LMDB store of the same `rows` records, written by the library.
    private func encryptedLMDBStore() throws -> URL {
        if let encryptedStore { return encryptedStore }
        let folder = try scratch.fresh("T-source-lmdb")
        let started = ContinuousClock.now
        let file = try ToolStores.encryptedLMDB(in: folder, generator: PersonGenerator(count: rows))
        progress(
            "T: the library wrote \(rows.grouped) records to encrypted LMDB in "
                + "\(started.duration(to: .now).seconds.secondsText) s")
        encryptedStore = file
        return file
    }

    private func expectedRecords() -> Checksum {
        if let expectedChecksum { return expectedChecksum }
        let checksum = PersonGenerator(count: rows).checksum()
        expectedChecksum = checksum
        return checksum
    }

    // MARK: - Running and checking

    /// `persistence hash STORE --quiet` (with the passphrase variable for an encrypted store), which must succeed.
    private func hash(_ store: String, encrypted: Bool, _ workload: String, _ subject: String) throws
        -> ToolProcess.Run
    {
        try checked(
            workload, subject,
            ["hash", store, "--quiet"] + (encrypted ? ["--passphrase-env", Self.passphraseVariable] : []))
    }

    /// Runs the tool; a run that doesn't exit 0 fails the workload.
    private func checked(_ workload: String, _ subject: String, _ arguments: [String]) throws -> ToolProcess.Run {
        let run = try tool.run(arguments)
        guard run.succeeded else {
            throw VerificationError(workload: workload, implementation: subject, message: run.failure)
        }
        return run
    }

    private func expectDigest(
        _ run: ToolProcess.Run, of expected: String, _ workload: String, _ subject: String, _ what: String
    ) throws {
        let found = Self.digest(in: run.output)
        guard found == expected else {
            throw VerificationError(
                workload: workload, implementation: subject,
                message: "\(what) is \(found ?? "missing"), expected the source's \(expected)")
        }
    }

    private func expect(_ condition: Bool, _ id: WorkloadID, _ subject: Transfer, _ message: String) throws {
        try expect(condition, id, subject.rawValue, message)
    }

    private func expect(_ condition: Bool, _ id: WorkloadID, _ subject: String, _ message: String) throws {
        guard condition else {
            throw VerificationError(workload: id.rawValue, implementation: subject, message: message)
        }
    }

    /// The first `sha256:` and 64 hexadecimal digits in the tool's output.
    static func digest(in output: String) -> String? {
        guard let start = output.range(of: "sha256:") else { return nil }
        let hex = output[start.upperBound...].prefix { $0.isHexDigit }
        return hex.count == 64 ? "sha256:" + hex : nil
    }

    /// A row of medians: seconds over the runs, memory the highest of any run.
    private func row(_ workload: String, _ implementation: String, _ runs: [ToolProcess.Run]) -> ResultRow {
        let highest = runs.max { $0.peakKiB < $1.peakKiB }
        return ResultRow(
            workload: workload, implementation: implementation, medianSeconds: median(runs.map(\.seconds)),
            operations: rows,
            tool: ToolFigures(
                rows: rows, peakKiB: highest?.peakKiB, peakSource: highest?.peakSource,
                anonymousPeakKiB: runs.map(\.anonymousPeakKiB).max(), filePeakKiB: runs.map(\.filePeakKiB).max()))
    }
}
