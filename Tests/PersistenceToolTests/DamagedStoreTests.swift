import Foundation
import PersistenceCore
@_spi(PersistenceBackend) import PersistenceEngine
import PersistenceLMDB
import PersistenceTestProcesses
import PersistenceTesting
import Testing

/// A damaged LMDB file (an encrypted store cut to 64 KiB, as a failed copy leaves it) crashes the storage engine
/// when its pages are read: every command answers with an exit status and one line, never a signal or a backtrace.
@Suite(.serialized)
struct DamagedStoreTests {
    static let environment = ["DAMAGED_PASSPHRASE": "correct horse battery staple"]

    /// An encrypted LMDB store of a few hundred KiB, truncated to 64 KiB.
    func truncatedStore(in directory: URL) throws -> URL {
        var builder = LMDBBuilder(
            databaseName: "Cut", passphrase: Self.environment["DAMAGED_PASSPHRASE"] ?? "", entities: [Tag.self])
        builder.directory = directory
        builder.keyDerivation = .owaspMinimum
        let db = try builder.create()
        try db.create(MaintenanceCommandTests.tags(1_000))
        try db.close()
        let file = directory.appendingPathComponent("Cut.lmdb")
        #expect(StoredStoreSize.fileSize(file) > 65_536)
        let handle = try FileHandle(forWritingTo: file)
        try handle.truncate(atOffset: 65_536)
        try handle.close()
        return file
    }

    /// What no answer of the tool may hold: the runtime's crash report.
    static func hasNoBacktrace(_ text: String) -> Bool {
        !["Backtrac", "Crash", "💣", "Thread 0", "Fatal error"].contains { text.contains($0) }
    }

    @Test func verifyExitsTwoWithOneLineAndJSONSaysWhy() throws {
        try withTemporaryDirectory { directory in
            let store = try truncatedStore(in: directory)
            let passphrase = ["--passphrase-env", "DAMAGED_PASSPHRASE"]
            let verify = try Tool.run(["verify", store.path] + passphrase, environment: Self.environment)
            #expect(verify.status == 2, "\(verify.status) \(verify.errors)")
            #expect(Self.hasNoBacktrace(verify.errors), "\(verify.errors)")
            #expect(verify.errors.split(separator: "\n").count == 1, "\(verify.errors)")
            #expect(verify.errors.contains("could not be read"))

            let json = try Tool.run(["verify", store.path, "--json"] + passphrase, environment: Self.environment)
            #expect(json.status == 2, "\(json.status) \(json.errors)")
            let document = try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [String: Any]
            #expect(document?["checked"] as? Bool == false)
            #expect(document?["exitStatus"] as? Int == 2)
            #expect((document?["error"] as? String)?.contains("signal") == true, "\(json.output)")

            // A check that fails for a reason of its own says it in JSON too, with its status.
            let missing = try Tool.run(["verify", directory.appendingPathComponent("None.sqlite").path, "--json"])
            #expect(missing.status == 66, "\(missing.errors)")
            let why = try JSONSerialization.jsonObject(with: Data(missing.output.utf8)) as? [String: Any]
            #expect(why?["exitStatus"] as? Int == 66)
            #expect((why?["error"] as? String)?.isEmpty == false)
        }
    }

    @Test func everyCommandThatReadsItAnswersWithAStatusAndLeavesNothing() throws {
        try withTemporaryDirectory { directory in
            let store = try truncatedStore(in: directory)
            let passphrase = ["--passphrase-env", "DAMAGED_PASSPHRASE"]
            let before = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
            // `inspect` reads the metadata and the databases' counts only, which the first pages hold: it may
            // answer; it may not crash.
            for arguments in [["inspect", store.path], ["inspect", store.path, "--json"]] {
                let run = try Tool.run(arguments + passphrase, environment: Self.environment)
                #expect([0, 65].contains(run.status), "\(arguments): \(run.status) \(run.errors)")
                #expect(Self.hasNoBacktrace(run.errors), "\(arguments): \(run.errors)")
            }
            for arguments in [
                ["hash", store.path], ["export", store.path],
                ["export", store.path, "-o", directory.appendingPathComponent("out.jsonl").path],
                ["copy", store.path, directory.appendingPathComponent("Copy.sqlite").path],
                ["copy", store.path, directory.appendingPathComponent("Copy.lmdb").path],
            ] {
                let run = try Tool.run(arguments + passphrase, environment: Self.environment)
                #expect(run.status == 65, "\(arguments): \(run.status) \(run.errors)")
                #expect(Self.hasNoBacktrace(run.errors), "\(arguments): \(run.errors)")
                #expect(run.errors.split(separator: "\n").count == 1, "\(arguments): \(run.errors)")
                #expect(run.errors.hasPrefix("persistence: "), "\(arguments): \(run.errors)")
                let after = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
                #expect(after.filter { !$0.hasSuffix("-lock") } == before.filter { !$0.hasSuffix("-lock") })
            }
            // Listing the directory still lists it.
            let stores = try Tool.run(["stores", directory.path])
            #expect(stores.status == 0, "\(stores.errors)")
            #expect(stores.output.contains("Cut.lmdb"), "\(stores.output)")
            #expect(Self.hasNoBacktrace(stores.errors), "\(stores.errors)")
        }
    }
}
