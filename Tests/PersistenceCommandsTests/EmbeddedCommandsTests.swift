import Foundation
import PersistenceCommands
import PersistenceCore
import PersistenceLMDB
import PersistenceSQLite
import PersistenceTestProcesses
import PersistenceTesting
import Testing

/// The commands an app embeds (PersistenceCommands), through the example app `NotesStore` run as a process: a
/// version-1 notes store rehearsed, migrated, verified and exported with the app's version-2 model and migrations.
@Suite(.serialized)
struct EmbeddedCommandsTests {
    static let notes = BuiltBinary("NotesStore")
    static let passphrase = "correct horse battery staple"
    static let environment = ["NOTES_TEST_PASSPHRASE": passphrase]

    /// The backends `NotesStore` has a file-store command group for, with their store's file extension.
    enum Backend: String, CaseIterable, Sendable {
        case sqlite, lmdb

        var passphraseArguments: [String] {
            self == .lmdb ? ["--passphrase-env", "NOTES_TEST_PASSPHRASE"] : []
        }
    }

    /// What `migrate --json` prints.
    typealias Outcome = MigrationOutcome

    /// A version-1 store of `count` notes in `directory`.
    static func seed(_ backend: Backend, in directory: URL, count: Int = 300) throws -> String {
        let store = directory.appendingPathComponent("Notes.\(backend.rawValue)").path
        let seeded = try notes.run(
            ["seed", backend.rawValue, store, "--count", String(count)] + backend.passphraseArguments,
            environment: environment)
        #expect(seeded.status == 0, "\(seeded.errors)")
        return store
    }

    /// Every file of `directory` with its bytes — but an LMDB lock file's: it is the environment's reader table,
    /// which every process that opens the store writes (its name is kept).
    static func snapshot(_ directory: URL) throws -> [String: Data] {
        var files: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.path) {
            files[name] =
                name.hasSuffix("-lock") ? Data() : try Data(contentsOf: directory.appendingPathComponent(name))
        }
        return files
    }

    func run(_ backend: Backend, _ arguments: [String]) throws -> BuiltBinary.Result {
        try Self.notes.run(
            [backend.rawValue] + arguments + backend.passphraseArguments, environment: Self.environment)
    }

    @Test(arguments: Backend.allCases)
    func dryRunRehearsesOnACopyAndLeavesTheStoreUntouched(_ backend: Backend) throws {
        try withTemporaryDirectory { directory in
            let stores = directory.appendingPathComponent("stores")
            let work = directory.appendingPathComponent("work")
            try FileManager.default.createDirectory(at: stores, withIntermediateDirectories: false)
            try FileManager.default.createDirectory(at: work, withIntermediateDirectories: false)
            let store = try Self.seed(backend, in: stores, count: 300)
            let before = try Self.snapshot(stores)

            let result = try run(backend, ["migrate", store, "--dry-run", "--json", "--work-directory", work.path])
            #expect(result.status == 0, "\(result.errors)")
            let outcome = try JSONDecoder().decode(Outcome.self, from: Data(result.output.utf8))
            #expect(outcome.mode == .rehearsal && outcome.needed)
            #expect(outcome.fromVersion == 1 && outcome.toVersion == 2)
            #expect(outcome.steps.map(\.kind) == ["mapped"])
            let note = outcome.steps.first?.entities.first { $0.name == "Note" }
            #expect(note?.recordsBefore == 300 && note?.recordsAfter == 300 && note?.recordsRewritten == 300)
            #expect(outcome.steps.first?.changes.contains("'Note.words' added") == true)
            #expect(outcome.verification?.isSound == true && outcome.verification?.recordsChecked == 300)

            // Byte for byte as it was, no file added or removed, and the copy gone.
            #expect(try Self.snapshot(stores) == before)
            #expect(try FileManager.default.contentsOfDirectory(atPath: work.path).isEmpty)
            // Still version 1: the commands that must not migrate refuse it.
            #expect(try run(backend, ["verify", store]).status == 78)
        }
    }

    @Test(arguments: Backend.allCases)
    func migratesThenVerifiesAndExportsWhatTheAppReads(_ backend: Backend) throws {
        try withTemporaryDirectory { directory in
            let store = try Self.seed(backend, in: directory, count: 250)
            let exportFile = directory.appendingPathComponent("notes.jsonl")

            // Before the migration: verify and export refuse (78) and make nothing.
            let refused = try run(backend, ["export", store, "-o", exportFile.path])
            #expect(refused.status == 78 && refused.errors.contains("run `migrate` first"), "\(refused.errors)")
            #expect(!FileManager.default.fileExists(atPath: exportFile.path))

            let migrated = try run(backend, ["migrate", store])
            #expect(migrated.status == 0, "\(migrated.errors)")
            #expect(migrated.output.contains("migrated") && migrated.output.contains("Note 250 → 250 records"))
            let again = try run(backend, ["migrate", store])
            #expect(again.status == 0 && again.output.contains("nothing to migrate"), "\(again.output)")

            let verified = try run(backend, ["verify", store, "--json"])
            #expect(verified.status == 0, "\(verified.errors)")
            let report = try JSONDecoder().decode(VerificationReport.self, from: Data(verified.output.utf8))
            #expect(report.isSound && report.recordsChecked == 250)

            let exported = try run(backend, ["export", store, "--entity", "Note", "-o", exportFile.path])
            #expect(exported.status == 0, "\(exported.errors)")
            let lines = try String(contentsOf: exportFile, encoding: .utf8).split(separator: "\n")
            #expect(lines.count == 251)
            // The mapping's word count, as the app's v2 type reads it ("café" and "naïve" are words too).
            #expect(
                lines.contains {
                    $0 == #"{"entity":"Note","record":{"id":5,"title":"Note 5","body":"word0 word1 word2 word3 "#
                        + #"word4 café naïve","words":7,"pinned":false}}"#
                })
            let csv = try run(backend, ["export", store, "--format", "csv", "--entity", "Note"])
            #expect(csv.status == 0 && csv.output.hasPrefix("id,title,body,words,pinned\n1,Note 1,word0,1,false"))

            // Bad usage: an entity the model doesn't have, CSV of several entities.
            #expect(try run(backend, ["export", store, "--entity", "Nope"]).status == 64)
            #expect(try run(backend, ["export", store, "--format", "csv"]).status == 64)
            // Every message names the store, never the passphrase.
            for result in [refused, migrated, again, verified, exported, csv] {
                #expect(!result.output.contains(Self.passphrase) && !result.errors.contains(Self.passphrase))
            }
        }
    }

    @Test func aWrongOrMissingPassphraseIsRefusedAndChangesNothing() throws {
        try withTemporaryDirectory { directory in
            let store = try Self.seed(.lmdb, in: directory)
            let before = try Self.snapshot(directory)
            let wrong = try Self.notes.run(
                ["lmdb", "migrate", store, "--passphrase-env", "WRONG"], environment: ["WRONG": "not it"])
            #expect(wrong.status == 77, "\(wrong.errors)")
            let missing = try Self.notes.run(["lmdb", "migrate", store])
            #expect(missing.status == 77 && missing.errors.contains("--passphrase-env"), "\(missing.errors)")
            #expect(try Self.snapshot(directory)["Notes.lmdb"] == before["Notes.lmdb"])
        }
    }

    @Test(arguments: Backend.allCases)
    func noStoreIsNotFoundAndNothingIsMade(_ backend: Backend) throws {
        try withTemporaryDirectory { directory in
            let store = directory.appendingPathComponent("Missing.\(backend.rawValue)").path
            for command in ["migrate", "verify", "export"] {
                let result = try run(backend, [command, store])
                #expect(result.status == 66, "\(command): \(result.errors)")
            }
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)
            // A locator of no known backend is bad usage.
            #expect(try run(backend, ["migrate", directory.appendingPathComponent("Notes.txt").path]).status == 64)
        }
    }

    @Test func aDamagedStoreIsReportedWithoutTakingTheCommandDown() throws {
        try withTemporaryDirectory { directory in
            let store = try Self.seed(.sqlite, in: directory, count: 2_000)
            #expect(try run(.sqlite, ["migrate", store]).status == 0)
            // Overwrite the middle of the file: pages of records and of the index.
            let handle = try FileHandle(forUpdating: URL(fileURLWithPath: store))
            let size = try handle.seekToEnd()
            try handle.seek(toOffset: size / 2)
            try handle.write(contentsOf: Data(repeating: 0xA5, count: 8_192))
            try handle.close()
            let result = try run(.sqlite, ["verify", store])
            #expect([1, 2, 65].contains(result.status), "\(result.status) \(result.output) \(result.errors)")
        }
    }
}
