import Foundation
import PersistenceTestProcesses
import PersistenceTesting
import Synchronization
import Testing

@testable import PersistenceLMDB

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Several processes on one store, in either build: the system's liblmdb, which locks with robust process-shared
/// mutexes, and the vendored LMDB, which locks with POSIX semaphores as on Apple's platforms. A POSIX semaphore isn't
/// given back when its holder dies, so the vendored LMDB guards each with a lock the kernel drops at death
/// (`Sources/CLMDBVendored/README.md`); without that, the kills below leave every other process's next write (or
/// read) waiting for ever, and the tests fail at their watchdog instead of hanging.
@Suite("several processes on one LMDB store")
struct MultiProcessTests {
    /// How long a worker that should finish at once may take before it counts as hung: minutes, since a loaded
    /// machine can be slow to start a process, while a lock left by a dead holder waits for ever.
    static let watchdog: Duration = .seconds(120)

    /// A store of ticks in a directory of its own, and how the workers open it.
    struct Store {
        let directory: URL
        let encrypted: Bool
        /// The semaphore prefix in the vendored build (so the test finds LMDB's semaphores by name), none otherwise.
        let prefix: String?

        init(_ directory: URL, encrypted: Bool) {
            self.directory = directory
            self.encrypted = encrypted
            prefix = PlatformOptionsTests.isVendored ? "mp\(UInt32.random(in: 0...UInt32.max))" : nil
        }

        static let passphrase = "several processes, one store"

        var builder: LMDBBuilder {
            var builder =
                encrypted
                ? LMDBBuilder(databaseName: "Ticks", passphrase: Self.passphrase, entities: [Tick.self])
                : LMDBBuilder.unencrypted(databaseName: "Ticks", entities: [Tick.self])
            builder.directory = directory
            builder.keyDerivation = testKeyDerivation
            builder.semaphorePrefix = prefix
            return builder
        }

        var environment: [String: String] {
            var environment: [String: String] = [:]
            if encrypted { environment["LMDB_WORKER_PASSPHRASE"] = Self.passphrase }
            if let prefix { environment["LMDB_WORKER_PREFIX"] = prefix }
            return environment
        }

        /// Starts `LMDBWorker` with `arguments` after the command and the directory.
        func worker(_ command: String, _ arguments: String..., input: Bool = false) throws -> Watched {
            Watched(
                try WorkerProcess(
                    [command, directory.path] + arguments,
                    errorFile: directory.appendingPathComponent("\(command)-\(UUID().uuidString).stderr"),
                    binary: .lmdb, environment: environment, input: input))
        }
    }

    /// A worker process under a watchdog: killed, and marked hung, when it is still running ``watchdog`` after it
    /// started — so that a lock left held fails the test instead of hanging it.
    final class Watched: @unchecked Sendable {
        let worker: WorkerProcess
        /// Whether it ended (killed by the test, or read to its end), and whether the watchdog killed it.
        private let state = Mutex<(ended: Bool, hung: Bool)>((false, false))

        init(_ worker: WorkerProcess) {
            self.worker = worker
            let seconds = Int(MultiProcessTests.watchdog.components.seconds)
            DispatchQueue.global().asyncAfter(deadline: .now() + .seconds(seconds)) { [self] in
                let running = state.withLock { state in
                    guard !state.ended else { return false }
                    state.hung = true
                    return true
                }
                if running { self.worker.kill() }
            }
        }

        var hung: Bool { state.withLock { $0.hung } }
        var errors: String { worker.errors }
        func send(_ line: String) { worker.send(line) }
        func closeInput() { worker.closeInput() }

        /// The next line it writes; throws when it ended instead (the watchdog's kill among the causes).
        func nextLine(sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
            try #require(
                worker.nextLine(), "the worker ended\(hung ? " at its watchdog: a lock left held" : ""): \(errors)",
                sourceLocation: sourceLocation)
        }

        /// Kills it with -9 and waits for it to end.
        @discardableResult
        func kill() -> WorkerProcess.Termination {
            state.withLock { $0.ended = true }
            worker.kill()
            return worker.wait()
        }

        /// Reads its output to its end; throws when the watchdog had to kill it (a lock left held) or it failed.
        func finish(_ what: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> [String] {
            let lines = worker.remainingLines()
            let termination = worker.wait()
            state.withLock { $0.ended = true }
            try #require(
                !hung, "\(what) was still waiting after \(MultiProcessTests.watchdog): a lock left held",
                sourceLocation: sourceLocation)
            try #require(
                termination == .exit(0), "\(what) ended \(termination): \(errors)", sourceLocation: sourceLocation)
            return lines
        }

        /// Everything it writes until killed: after `lines` lines (or its end) and `microseconds` more.
        func linesUntilKilled(after lines: Int, pause microseconds: UInt32) -> [String] {
            var seen: [String] = []
            while seen.count < lines, let line = worker.nextLine() { seen.append(line) }
            usleep(microseconds)
            kill()
            return seen + worker.remainingLines()
        }
    }

    /// The last `committed N` of a writer's lines (0 for none).
    static func lastCommitted(_ lines: [String]) -> Int64 {
        lines.compactMap { $0.hasPrefix("committed ") ? Int64($0.dropFirst("committed ".count)) : nil }.max() ?? 0
    }

    @Test(
        "writers in four processes at once: every commit stored, readers in other processes see them",
        arguments: [false, true])
    func severalWriters(encrypted: Bool) throws {
        try withTemporaryDirectory { directory in
            let store = Store(directory, encrypted: encrypted)
            let db = try store.builder.create()
            defer { try? db.close() }
            try db.create(Tick(writer: 0, sequence: 1))
            let perWriter: Int64 = 60
            let workers = try (1...3).map { try store.worker("write", "\($0)", "\(perWriter)") }
            // This process writes too, while they do.
            for sequence in 1...perWriter { try db.write { try $0.create(Tick(writer: 9, sequence: sequence)) } }
            for (index, worker) in workers.enumerated() {
                #expect(Self.lastCommitted(try worker.finish("writer \(index + 1)")) == perWriter)
            }
            let expected = 1 + 4 * Int(perWriter)
            #expect(try db.count(Tick.self) == expected)
            for writer in Int64(1)...3 {
                let ticks = try db.read { try $0.recover(Tick.self).filter { $0.writer == writer } }
                #expect(ticks.map(\.sequence).sorted() == Array(1...perWriter))
            }
            #expect(try store.worker("read").finish("a reader") == ["count \(expected)"])
            #expect(try db.verify().isSound)
        }
    }

    @Test(
        "a writer killed with -9 inside its transaction: readers go on meanwhile, the next writer in any process goes on after",
        arguments: [false, true])
    func writerKilledInsideItsTransaction(encrypted: Bool) throws {
        try withTemporaryDirectory { directory in
            let store = Store(directory, encrypted: encrypted)
            // This process keeps the store open throughout, so the lock file stays live (the case an app and its
            // extensions share): nothing is reset by a fresh open.
            let db = try store.builder.create()
            defer { try? db.close() }
            try db.create(Tick(writer: 0, sequence: 1))
            var expected = 1
            // A reader in another process, opened before any writer stalls (opening a store may write).
            let reader = try store.worker("reader", input: true)
            defer { reader.kill() }
            try #require(try reader.nextLine() == "open")
            for round in Int64(1)...3 {
                let stalled = try store.worker("stall")
                try #require(try stalled.nextLine() == "writing")
                // The writer holds LMDB's writer lock: readers, here and in the other process, read all the same.
                #expect(try db.count(Tick.self) == expected)
                reader.send("count")
                #expect(try reader.nextLine() == "count \(expected)")
                #expect(stalled.kill() == .signal(SIGKILL))
                // Another process writes after the holder died (this one only once it has: a write here that
                // waited for ever could not be stopped), then this one.
                #expect(Self.lastCommitted(try store.worker("write", "\(round)", "3").finish("the next writer")) == 3)
                try db.create(Tick(writer: 10, sequence: round))
                expected += 4
                #expect(try db.count(Tick.self) == expected)
                #expect(try db.recover(Tick.self, id: -1) == nil, "the killed write's record was stored")
                reader.send("count")
                #expect(try reader.nextLine() == "count \(expected)")
            }
            reader.closeInput()
            #expect(try reader.finish("the reader").isEmpty)
            #expect(try db.verify().isSound)
        }
    }

    @Test("kill -9 of writers at random moments: the next writer always goes on, every acknowledged commit is stored")
    func writersKilledAtRandom() throws {
        try withTemporaryDirectory { directory in
            let store = Store(directory, encrypted: true)
            let db = try store.builder.create()
            defer { try? db.close() }
            var generator = SystemRandomNumberGenerator()
            var acknowledged: [Int64: Int64] = [:]
            for writer in Int64(1)...8 {
                let worker = try store.worker("write", "\(writer)", "100000")
                let lines = worker.linesUntilKilled(
                    after: Int.random(in: 0...4, using: &generator),
                    pause: UInt32.random(in: 0..<20_000, using: &generator))
                try #require(!worker.hung, "writer \(writer) waited on a lock a killed writer left held")
                acknowledged[writer] = Self.lastCommitted(lines)
            }
            // A last writer in another process, then this one: neither waits on a lock a killed writer held.
            #expect(Self.lastCommitted(try store.worker("write", "9", "2").finish("the last writer")) == 2)
            try db.create(Tick(writer: 10, sequence: 1))
            let ticks: [Tick] = try db.recover(Tick.self)
            for (writer, last) in acknowledged {
                let stored = ticks.filter { $0.writer == writer }.map(\.sequence).sorted()
                // Every acknowledged commit, and at most the one whose acknowledgement the kill cut off.
                #expect(stored == (0..<stored.count).map { Int64($0) + 1 }, "writer \(writer): \(stored)")
                #expect(stored.count == Int(last) || stored.count == Int(last) + 1, "writer \(writer): \(stored.count)")
            }
            #expect(try db.verify().isSound)
        }
    }

    #if os(Linux)
        @Test(
            "a process that died holding one of LMDB's semaphores stops no one (vendored: POSIX semaphores)",
            .enabled(if: PlatformOptionsTests.isVendored), arguments: ["MDBr", "MDBw"])
        func deadSemaphoreHolder(kind: String) throws {
            try withTemporaryDirectory { directory in
                let store = Store(directory, encrypted: false)
                let db = try store.builder.create()
                defer { try? db.close() }
                try db.create(Tick(writer: 0, sequence: 1))
                let prefix = try #require(store.prefix)
                let name = try #require(
                    (try FileManager.default.contentsOfDirectory(atPath: "/dev/shm"))
                        .filter { $0.hasPrefix("sem.\(prefix).\(kind)") }.first.map { "/" + $0.dropFirst(4) })
                // A holder that dies between taking the semaphore and giving it back: no transaction of its own,
                // just the lock (the reader table's: claiming a reader slot; the writer's: a write).
                let holder = Watched(
                    try WorkerProcess(
                        ["take-semaphore", name], errorFile: directory.appendingPathComponent("holder.stderr"),
                        binary: .lmdb))
                try #require(try holder.nextLine() == "taken")
                #expect(Environment.semaphoreValue(named: name) == 0)
                holder.kill()
                #expect(try store.worker("read").finish("a reader") == ["count 1"])
                #expect(Self.lastCommitted(try store.worker("write", "1", "2").finish("a writer")) == 2)
                #expect(try db.count(Tick.self) == 3)
                try db.create(Tick(writer: 2, sequence: 1))
                #expect(Environment.semaphoreValue(named: name) == 1, "the semaphore is free again")
            }
        }
    #endif
}
