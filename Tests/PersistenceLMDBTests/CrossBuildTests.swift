import Foundation
import PersistenceTestProcesses
import PersistenceTesting
import Testing

@testable import PersistenceLMDB

/// A store written by one build of the C libraries opens in the other, both ciphers: the system's (Debian's liblmdb
/// 0.9.24 and libsodium 1.0.18) and the vendored ones (LMDB 0.9.36 with POSIX semaphores, libsodium 1.0.20).
///
/// `make vendored-check` runs this test three times with `PERSISTENCE_CROSS_BUILD_DIRECTORY` set: in the default
/// build, in the vendored build, then in the default build again. Each run opens and checks the stores the other build
/// left there (required with `PERSISTENCE_CROSS_BUILD_EXPECT_OTHER=1`), then leaves its own. Without the variable the
/// test does nothing. With `PERSISTENCE_CROSS_BUILD_OTHER_WORKER`, the path of the other build's `LMDBWorker`, it
/// also checks that the two builds, whose LMDBs lock differently, never share a store at the same time.
@Suite("stores cross between the system and the vendored libraries")
struct CrossBuildTests {
    static let directory = ProcessInfo.processInfo.environment["PERSISTENCE_CROSS_BUILD_DIRECTORY"]
    static let otherWorker = WorkerProcess.Binary(name: "LMDBWorker", override: "PERSISTENCE_CROSS_BUILD_OTHER_WORKER")

    @Test(
        "a store open in a process of the other build is refused with busy (the lock file's format bit), either way",
        .enabled(if: ProcessInfo.processInfo.environment[otherWorker.override] != nil))
    func liveStoreOfTheOtherBuild() throws {
        try withTemporaryDirectory { directory in
            var builder = LMDBBuilder.unencrypted(databaseName: "Ticks", entities: [Tick.self])
            builder.directory = directory
            let db = try builder.create()
            try db.create(Tick(writer: 1, sequence: 1))
            try db.close()

            // The other build holds it open: this one is refused, and leaves the other's locks alone.
            let holder = try WorkerProcess(
                ["reader", directory.path], errorFile: directory.appendingPathComponent("holder.stderr"),
                binary: Self.otherWorker, input: true)
            #expect(holder.nextLine() == "open", "\(holder.errors)")
            let refused = #expect(throws: PersistenceError.self) { try builder.create() }
            #expect(refused?.code == .busy, "\(String(describing: refused))")
            #expect(refused?.nativeCode == -30794, "MDB_VERSION_MISMATCH")
            holder.send("count")
            #expect(holder.nextLine() == "count 1")
            holder.closeInput()
            #expect(holder.wait() == .exit(0), "\(holder.errors)")

            // Closed there, it opens here; held here, the other build is refused.
            let reopened = try builder.create()
            try reopened.create(Tick(writer: 1, sequence: 2))
            let (lines, termination) = try WorkerProcess.run(
                ["read", directory.path], errorFile: directory.appendingPathComponent("read.stderr"),
                binary: Self.otherWorker)
            #expect(lines.isEmpty)
            #expect(termination == .exit(1))
            #expect(try reopened.count(Tick.self) == 2)
            try reopened.close()
            let (after, _) = try WorkerProcess.run(
                ["read", directory.path], errorFile: directory.appendingPathComponent("after.stderr"),
                binary: Self.otherWorker)
            #expect(after == ["count 2"])
        }
    }

    @Test(
        "the other build's store opens and reads back; this build's is left for it",
        .enabled(if: directory != nil), arguments: ValueCipher.allCases)
    func exchange(cipher: ValueCipher) throws {
        let root = URL(fileURLWithPath: try #require(Self.directory), isDirectory: true)
        let mine = Environment.supportsSemaphorePrefix ? "vendored" : "system"
        let other = mine == "vendored" ? "system" : "vendored"

        let theirs = root.appendingPathComponent(other).appendingPathComponent(cipher.rawValue)
        if FileManager.default.fileExists(atPath: dataFile(theirs).path) {
            let db = try secrets(theirs).create()
            try CipherSuiteTests.expectFilled(db)
            try db.close()
        } else {
            let required = ProcessInfo.processInfo.environment["PERSISTENCE_CROSS_BUILD_EXPECT_OTHER"] == "1"
            #expect(!required, "no store of the \(other) build in \(theirs.path)")
        }

        let own = root.appendingPathComponent(mine).appendingPathComponent(cipher.rawValue)
        try? FileManager.default.removeItem(at: own)
        try FileManager.default.createDirectory(at: own, withIntermediateDirectories: true)
        var builder = secrets(own)
        builder.valueCipher = cipher
        let db = try builder.create()
        try CipherSuiteTests.fill(db)
        try db.close()
    }
}
