import Foundation
import PersistenceCore
import PersistenceTesting
import Testing

@testable import PersistenceLMDB

/// Apple's rules, run on Linux: the semaphore-name prefix of an app group, the drive-cache flush after commit, the
/// small map of an app extension, and no LMDB lock held between transactions (what an app may be suspended in).
///
/// Some checks need the vendored LMDB (POSIX semaphores, as on Apple): `make vendored-check` runs them, with
/// `PERSISTENCE_EXPECT_VENDORED=1` so that a build that silently linked the system's liblmdb fails instead of
/// skipping them.
@Suite("Apple's rules on Linux")
struct PlatformOptionsTests {
    static var isVendored: Bool { Environment.supportsSemaphorePrefix }

    @Test("the build under test is the one the run expects (the vendored LMDB, or the system's)")
    func expectedBuild() {
        guard let expected = ProcessInfo.processInfo.environment["PERSISTENCE_EXPECT_VENDORED"] else { return }
        #expect(Self.isVendored == (expected == "1"))
    }

    @Test(
        "a semaphore prefix LMDB can't use is refused before anything touches disk",
        arguments: [
            "", "group.com.example.notes", "group/notes", "group\u{0}x", String(repeating: "é", count: 11),
        ])
    func refusesPrefix(_ prefix: String) throws {
        try withTemporaryDirectory { directory in
            var builder = secrets(directory)
            builder.semaphorePrefix = prefix
            let error = #expect(throws: PersistenceError.self) { try builder.create() }
            #expect(error?.code == .invalidConfiguration)
            #expect(!FileManager.default.fileExists(atPath: dataFile(directory).path))
        }
    }

    #if os(Linux) && arch(x86_64)
        /// The vendored libsodium's configuration once found no AVX on any x86_64 CPU (its CPU detection lacked
        /// XGETBV), so AES-256-GCM, which 1.0.20's AES-NI code needs AVX for, was never available and new stores
        /// took XChaCha20-Poly1305. Both builds must see what the CPU has.
        @Test("a CPU with AES-NI, PCLMUL and AVX gets AES-256-GCM for new stores, with either libsodium")
        func hardwareAESIsDetected() throws {
            let cpuinfo = try String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)
            let flags = Set(
                cpuinfo.split(separator: "\n").first { $0.hasPrefix("flags") }?.split(separator: " ").map(String.init)
                    ?? [])
            try #require(!flags.isEmpty, "no flags line in /proc/cpuinfo")
            let hasHardwareAES = flags.isSuperset(of: ["aes", "pclmulqdq", "avx"])
            #expect(ValueCipher.preferred == (hasHardwareAES ? .aes256gcm : .xchacha20poly1305), "flags: \(flags)")
        }
    #endif

    @Test("the system's liblmdb names no semaphores: a prefix is refused", .enabled(if: !isVendored))
    func systemLibraryRefusesPrefix() throws {
        try withTemporaryDirectory { directory in
            var builder = secrets(directory)
            try builder.create().close()
            let stored = #expect(throws: PersistenceError.self) {
                try LMDBStoredStore(file: dataFile(directory), passphrase: nil, semaphorePrefix: "group.notes")
            }
            #expect(stored?.code == .invalidConfiguration)
            builder.semaphorePrefix = "group.notes"
            let error = #expect(throws: PersistenceError.self) { try builder.create() }
            #expect(error?.code == .invalidConfiguration)
        }
    }

    #if os(Linux)
        @Test(
            "the vendored LMDB locks with POSIX semaphores named after the prefix, 31 bytes at most",
            .enabled(if: isVendored), arguments: [4, 20])
        func prefixedSemaphores(prefixBytes: Int) throws {
            try withTemporaryDirectory { directory in
                let prefix = uniquePrefix(bytes: prefixBytes)
                var builder = secrets(directory)
                builder.semaphorePrefix = prefix
                let db = try builder.create()
                try db.create(Secret(id: 1, note: "one", tag: "a"))
                let names = semaphores(prefix: prefix)
                #expect(names.count == 2, "a reader and a writer semaphore: \(names)")
                for name in names {
                    #expect(name.utf8.count <= 31)
                    #expect(name.hasPrefix("/\(prefix).MDBr") || name.hasPrefix("/\(prefix).MDBw"))
                }
                #expect(try db.recover(Secret.self, id: 1)?.note == "one")
                try db.close()
                #expect(semaphores(prefix: prefix).isEmpty, "the last process to close removes them")
            }
        }

        @Test(
            "the store tool's opening names the semaphores after the app's prefix when it opens first",
            .enabled(if: isVendored))
        func storedStoreTakesThePrefix() throws {
            try withTemporaryDirectory { directory in
                let prefix = uniquePrefix(bytes: 12)
                var builder = secrets(directory)
                builder.semaphorePrefix = prefix
                let db = try builder.create()
                try db.create(Secret(id: 1, note: "one", tag: "a"))
                try db.close()
                #expect(semaphores(prefix: prefix).isEmpty)

                // The tool first (read-only, as `inspect` and `export` open): the app's names.
                let stored = try LMDBStoredStore(
                    file: dataFile(directory), passphrase: "correct horse battery staple", semaphorePrefix: prefix)
                #expect(semaphores(prefix: prefix).count == 2)
                // The app opens meanwhile with the same names (LMDB takes them from the lock file) and writes.
                let app = try builder.create()
                try app.create(Secret(id: 2, note: "two", tag: "b"))
                try app.close()
                try stored.close()
                #expect(semaphores(prefix: prefix).isEmpty, "the last process to close removes them")

                let refused = #expect(throws: PersistenceError.self) {
                    try LMDBStoredStore(file: dataFile(directory), passphrase: nil, semaphorePrefix: "group/notes")
                }
                #expect(refused?.code == .invalidConfiguration)
            }
        }

        @Test(
            "no LMDB lock is held between transactions (the writer semaphore, reader slots)", .enabled(if: isVendored))
        func noLockBetweenTransactions() async throws {
            let directory = try makeDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            do {
                var builder = secrets(directory)
                let prefix = uniquePrefix(bytes: 8)
                builder.semaphorePrefix = prefix
                let db = try builder.create()
                defer { try? db.close() }
                let writer = try #require(semaphores(prefix: prefix).first { $0.contains(".MDBw") })
                let environment = try db.environment
                #expect(Environment.semaphoreValue(named: writer) == 1)
                try await db.write { context in
                    // The check can fail: inside a write, LMDB holds its writer semaphore.
                    #expect(Environment.semaphoreValue(named: writer) == 0)
                    try context.create(Secret(id: 1, note: "one", tag: "a"))
                }
                #expect(Environment.semaphoreValue(named: writer) == 1, "a write left LMDB's writer lock held")
                try await db.read { context in
                    #expect(environment.readTransactionsOfThisProcess() == 1)
                    _ = try context.recover(Secret.self, id: 1)
                }
                try await db.write { try $0.create(Secret(id: 2, note: "two", tag: "b")) }
                _ = try await db.read { try $0.count(Secret.self) }
                #expect(Environment.semaphoreValue(named: writer) == 1)
                #expect(environment.readTransactionsOfThisProcess() == 0, "a read transaction outlived its block")
            }
        }
    #endif

    /// Runs `body` on a new store holding one `Secret`, with its environment.
    private func withOneSecret(_ body: (LMDBDatabase, Environment) async throws -> Void) async throws {
        let directory = try makeDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let db = try secrets(directory).create()
        defer { try? db.close() }
        try await db.write { try $0.create(Secret(id: 1, note: "one", tag: "a")) }
        try await body(db, try db.environment)
    }

    @Test("no read transaction outlives its block (either build)")
    func noReaderBetweenTransactions() async throws {
        try await withOneSecret { db, environment in
            try await db.read { _ in #expect(environment.readTransactionsOfThisProcess() == 1) }
            _ = try await db.read { try $0.recover(Secret.self, id: 1) }
            let all: [Secret] = try db.recover(Secret.self)
            #expect(all.count == 1)
            #expect(environment.readTransactionsOfThisProcess() == 0)
        }
    }

    @Test("reads reuse a few reader slots: none per read, none holding a snapshot between reads")
    func readsReuseReaderSlots() async throws {
        try await withOneSecret { db, environment in
            for _ in 0..<200 { _ = try db.recover(Secret.self, id: 1) }
            #expect(environment.readerSlotsOfThisProcess() == (reading: 0, idle: 1), "one slot for reads in turn")
            // Reads at once take a slot each; afterwards a few stay kept, none holding a snapshot.
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<6 {
                    group.addTask { for _ in 0..<50 { _ = try await db.read { try $0.recover(Secret.self, id: 1) } } }
                }
                try await group.waitForAll()
            }
            let slots = environment.readerSlotsOfThisProcess()
            #expect(slots.reading == 0)
            #expect((1...6).contains(slots.idle), "\(slots)")
            // A write after the reads: the kept slots hold no old snapshot back, and reads see the write.
            try await db.write { try $0.update(Secret(id: 1, note: "uno", tag: "a")) }
            #expect(try db.recover(Secret.self, id: 1)?.note == "uno")
        }
    }

    @Test("fullFsync: writes commit and read back (F_FULLFSYNC after commit on Apple, nothing on Linux)")
    func fullFsync() throws {
        #if canImport(Darwin)
            #expect(Environment.hasFullFsync)
        #else
            #expect(!Environment.hasFullFsync)
        #endif
        try withTemporaryDirectory { directory in
            var builder = secrets(directory)
            builder.fullFsync = true
            let db = try builder.create()
            try db.write { context in
                for id in Int64(1)...20 { try context.create(Secret(id: id, note: "n\(id)", tag: "t")) }
            }
            try db.create(Secret(id: 21, note: "n21", tag: "t"))
            try db.close()
            let reopened = try secrets(directory).create()
            defer { try? reopened.close() }
            #expect(try reopened.count(Secret.self) == 21)
        }
    }

    @Test("an app extension's small map grows to hold more than it maps")
    func appExtensionMap() throws {
        #expect(LMDBBuilder.appExtensionMapSize == 32 << 20)
        try withTemporaryDirectory { directory in
            var builder = LMDBBuilder.unencrypted(databaseName: "Extension", entities: [Secret.self])
            builder.directory = directory
            builder.initialMapSize = LMDBBuilder.appExtensionMapSize
            let db = try builder.create()
            let blob = String(repeating: "x", count: 1 << 20)
            for id in Int64(1)...40 {
                try db.create(Secret(id: id, note: "\(id)" + blob, tag: "t"))
            }
            #expect(try db.count(Secret.self) == 40)
            try db.close()
        }
    }

    /// A temporary directory of this test's own (withTemporaryDirectory has no async form).
    private func makeDirectory() throws -> URL {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("persistence-platform-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    /// A prefix of `bytes` ASCII bytes no other test uses.
    private func uniquePrefix(bytes: Int) -> String {
        let alphabet = Array("abcdefghijklmnopqrstuvwxyz0123456789")
        var generator = SystemRandomNumberGenerator()
        return "p" + String((1..<bytes).map { _ in alphabet.randomElement(using: &generator) ?? "x" })
    }

    /// The names (`/<prefix>.MDB…`) of the POSIX semaphores with this prefix: glibc keeps them in /dev/shm as
    /// `sem.<name without its slash>`.
    private func semaphores(prefix: String) -> [String] {
        let files = (try? FileManager.default.contentsOfDirectory(atPath: "/dev/shm")) ?? []
        return files.filter { $0.hasPrefix("sem.\(prefix).MDB") }.map { "/" + $0.dropFirst("sem.".count) }
    }
}
