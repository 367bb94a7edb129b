import Foundation
import Testing

@testable import PersistenceLMDB

/// A store written by one build of the C libraries opens in the other, both ciphers: the system's (Debian's liblmdb
/// 0.9.24 and libsodium 1.0.18) and the vendored ones (LMDB 0.9.36 with POSIX semaphores, libsodium 1.0.20).
///
/// `make vendored-check` runs this test three times with `PERSISTENCE_CROSS_BUILD_DIRECTORY` set: in the default
/// build, in the vendored build, then in the default build again. Each run opens and checks the stores the other build
/// left there (required with `PERSISTENCE_CROSS_BUILD_EXPECT_OTHER=1`), then leaves its own. Without the variable the
/// test does nothing.
@Suite("stores cross between the system and the vendored libraries")
struct CrossBuildTests {
    static let directory = ProcessInfo.processInfo.environment["PERSISTENCE_CROSS_BUILD_DIRECTORY"]

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
