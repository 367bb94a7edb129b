import Foundation
import PersistenceCore
@_spi(PersistenceBackend) import PersistenceEngine
import PersistenceLMDB
import PersistenceSQLite
import PersistenceTestProcesses
import PersistenceTesting
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Read-only commands make no file beside a store, in any directory, still read a SQLite store's write-ahead log,
/// and a permission problem is 77 on every backend.
///
/// Permission bits don't stop root, so when the tests run as root the tool runs as `nobody` (`setpriv`); where it
/// can't, the permission test is skipped and says why.
@Suite(.serialized)
struct ReadOnlyAccessTests {
    /// A SQLite store and a plain LMDB store of the sample data in `directory`.
    func stores(in directory: URL) throws -> (sqlite: URL, lmdb: URL) {
        var sqlite = SQLiteBuilder(databaseName: "Shop", entities: [Gadget.self, Tag.self])
        sqlite.directory = directory
        let db = try sqlite.create()
        try db.create(StoreToolTests.gadgets)
        try db.close()
        var lmdb = LMDBBuilder.unencrypted(databaseName: "Plain", entities: [Gadget.self, Tag.self])
        lmdb.directory = directory
        let plain = try lmdb.create()
        try plain.create(StoreToolTests.gadgets)
        try plain.close()
        return (directory.appendingPathComponent("Shop.sqlite"), directory.appendingPathComponent("Plain.lmdb"))
    }

    /// Each entity's record count in `inspect --json`'s output.
    static func records(_ json: String) -> [Int] {
        let report = try? JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any]
        return (report?["entities"] as? [[String: Any]] ?? []).compactMap { $0["records"] as? Int }
    }

    static let readingCommands: [[String]] = [["inspect"], ["inspect", "--json"], ["hash"], ["export"], ["verify"]]

    @Test func readingCommandsMakeNoFileBesideAStore() throws {
        try withTemporaryDirectory { directory in
            let (sqlite, lmdb) = try stores(in: directory)
            let before = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
            for store in [sqlite, lmdb] {
                for command in Self.readingCommands {
                    let run = try Tool.run([command[0], store.path] + command.dropFirst())
                    #expect(run.status == 0, "\(command) \(store.lastPathComponent): \(run.errors)")
                    #expect(
                        try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted() == before,
                        "\(command) \(store.lastPathComponent)")
                }
            }
            #expect(try Tool.run(["stores", directory.path]).status == 0)
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted() == before)
        }
    }

    /// Commits still in the write-ahead log — an app has the store open, or was killed before a checkpoint — are
    /// read, and nothing is made beside the store.
    @Test func aWriteAheadLogWithCommitsIsRead() throws {
        try withTemporaryDirectory { directory in
            var builder = SQLiteBuilder(databaseName: "Live", entities: [Tag.self])
            builder.directory = directory
            let db = try builder.create()
            try db.create(MaintenanceCommandTests.tags(30))
            let live = directory.appendingPathComponent("Live.sqlite")
            #expect(StoredStoreSize.fileSize(URL(fileURLWithPath: live.path + "-wal")) > 0)
            // The app still has it open: its -wal and -shm are there.
            let open = try Tool.run(["inspect", live.path, "--json"])
            #expect(open.status == 0, "\(open.errors)")
            #expect(Self.records(open.output) == [30], "\(open.output)")

            // The app killed before a checkpoint: the file and its log, no -shm.
            let crashed = directory.appendingPathComponent("crashed", isDirectory: true)
            try FileManager.default.createDirectory(at: crashed, withIntermediateDirectories: false)
            let copy = crashed.appendingPathComponent("Live.sqlite")
            try FileManager.default.copyItem(at: live, to: copy)
            try FileManager.default.copyItem(atPath: live.path + "-wal", toPath: copy.path + "-wal")
            try db.close()
            let before = try FileManager.default.contentsOfDirectory(atPath: crashed.path).sorted()
            let run = try Tool.run(["inspect", copy.path, "--json"])
            #expect(run.status == 0, "\(run.errors)")
            #expect(Self.records(run.output) == [30], "\(run.output)")
            #expect(try Tool.run(["hash", copy.path]).output == (try Tool.run(["hash", live.path]).output))
            #expect(try FileManager.default.contentsOfDirectory(atPath: crashed.path).sorted() == before)
        }
    }

    @Test(
        .enabled(
            if: Unprivileged.runner() != nil,
            "permission bits don't stop root, and setpriv can't run the tool as nobody here"))
    func permissionProblemsAre77OnEveryBackendAndAReadOnlyDirectoryIsRead() throws {
        guard let runner = Unprivileged.runner() else { return }
        try withTemporaryDirectory { directory in
            // Everything the unprivileged user must reach: traversable, and the stores readable.
            try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: directory.path)
            let locked = directory.appendingPathComponent("locked", isDirectory: true)
            let readOnly = directory.appendingPathComponent("read-only", isDirectory: true)
            let files = directory.appendingPathComponent("files", isDirectory: true)
            for place in [locked, readOnly, files] {
                try FileManager.default.createDirectory(at: place, withIntermediateDirectories: false)
                _ = try stores(in: place)
            }
            defer {
                for place in [locked, readOnly] {
                    try? FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: place.path)
                }
            }
            for name in ["Shop.sqlite", "Plain.lmdb"] {
                for place in [readOnly, files] {
                    try FileManager.default.setAttributes(
                        [.posixPermissions: place == files ? 0o600 : 0o644],
                        ofItemAtPath: place.appendingPathComponent(name).path)
                }
            }
            try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: locked.path)
            try FileManager.default.setAttributes([.posixPermissions: 0o555], ofItemAtPath: readOnly.path)

            // No permission: 77 on both backends, for a directory that can't be searched and a file that can't be
            // read, and `stores` says so rather than "no stores".
            for place in [locked, files] {
                for name in ["Shop.sqlite", "Plain.lmdb"] {
                    for command in [["inspect"], ["hash"], ["export"], ["verify"]] {
                        let run = try runner.run(command + [place.appendingPathComponent(name).path])
                        #expect(
                            run.status == 77,
                            "\(command) \(place.lastPathComponent)/\(name): \(run.status) \(run.errors)")
                        #expect(run.errors.split(separator: "\n").count == 1, "\(run.errors)")
                    }
                }
            }
            let json = try runner.run(["verify", "--json", locked.appendingPathComponent("Shop.sqlite").path])
            #expect(json.status == 77, "\(json.errors)")
            let why = try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [String: Any]
            #expect(why?["exitStatus"] as? Int == 77, "\(json.output)")
            let listing = try runner.run(["stores", locked.path])
            #expect(listing.status == 77, "\(listing.status) \(listing.output) \(listing.errors)")
            #expect(!listing.output.contains("no stores"))

            // A read-only directory: every reading command reads, and makes nothing.
            let before = try FileManager.default.contentsOfDirectory(atPath: readOnly.path).sorted()
            for name in ["Shop.sqlite", "Plain.lmdb"] {
                for command in Self.readingCommands {
                    let run = try runner.run(
                        [command[0], readOnly.appendingPathComponent(name).path] + command.dropFirst())
                    #expect(run.status == 0, "\(command) \(name): \(run.status) \(run.errors)")
                }
            }
            let listed = try runner.run(["stores", readOnly.path])
            #expect(listed.status == 0 && listed.output.contains("version 1"), "\(listed.output) \(listed.errors)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: readOnly.path).sorted() == before)
        }
    }
}

/// Runs the tool as `nobody` when this process is root (permission bits don't stop root), as itself otherwise.
struct Unprivileged {
    let prefix: [String]

    /// `nil` when this process is root and `setpriv` can't run a command as `nobody`.
    static func runner() -> Unprivileged? {
        guard getuid() == 0 else { return Unprivileged(prefix: []) }
        let setpriv = ["/usr/bin/setpriv", "/bin/setpriv"].first { FileManager.default.isExecutableFile(atPath: $0) }
        guard let setpriv else { return nil }
        let runner = Unprivileged(
            prefix: [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", "--"])
        guard let probe = try? runner.run(["--help"]), probe.status == 0 else { return nil }
        return runner
    }

    /// How a run ended, and what it wrote.
    struct Result {
        var status: Int32
        var output: String
        var errors: String
    }

    func run(_ arguments: [String]) throws -> Result {
        let binary = try BuiltBinary("persistence").url().path
        guard let executable = prefix.first else {
            let run = try Tool.run(arguments)
            return Result(status: run.status, output: run.output, errors: run.errors)
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = Array(prefix.dropFirst()) + [binary] + arguments
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = FileHandle.nullDevice
        try process.run()
        // The tool's output here is small: both pipes are read after the end without filling.
        let outputData = output.fileHandleForReading.readDataToEndOfFile()
        let errorData = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Result(
            status: process.terminationStatus, output: String(decoding: outputData, as: UTF8.self),
            errors: String(decoding: errorData, as: UTF8.self))
    }
}
