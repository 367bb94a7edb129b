import Foundation
import PersistenceCore
import PersistencePostgres
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A PostgreSQL server of a test's own (`scripts/postgres-server.sh` on a free port), so that restarting it disturbs
/// no other test; stopped and removed by ``stop()``.
final class OwnServer: Sendable {
    let directory: URL
    let url: String
    private let port: String
    private static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("scripts/postgres-server.sh")

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("own-postgres-\(UUID().uuidString)")
        port = String(try Self.freePort())
        let (status, output) = try Self.run(["start", directory.path], port: port)
        guard status == 0 else { throw PersistenceError(.unreachable, "the test's own server did not start") }
        url = output.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Starts a fast restart (open connections dropped) and returns its process, running.
    func restart() throws -> Process {
        let process = Self.process(["restart", directory.path], port: port)
        try process.run()
        return process
    }

    func stop() {
        _ = try? Self.run(["stop", directory.path], port: port)
    }

    private static func process(_ arguments: [String], port: String) -> Process {
        let process = Process()
        process.executableURL = script
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(["PERSISTENCE_POSTGRES_PORT": port]) { $1 }
        return process
    }

    private static func run(_ arguments: [String], port: String) throws -> (Int32, String) {
        let process = process(arguments, port: port)
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    /// A loopback port nothing listens on: the one the kernel gives a socket bound to port 0.
    private static func freePort() throws -> UInt16 {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw PersistenceError(.ioFailure, "no socket for a free port") }
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, length) == 0 && getsockname(descriptor, $0, &length) == 0
            }
        }
        guard bound else { throw PersistenceError(.ioFailure, "no free port") }
        return UInt16(bigEndian: address.sin_port)
    }
}

/// The retry helper against a real restart: `pg_ctl restart -m fast` in the middle of a write loop.
@Suite(.serialized)
struct RestartTests {
    @Test(.timeLimit(.minutes(3)))
    func aRestartDuringAWriteLoopFailsNoWriteAndDuplicatesNothingThroughTheRetryHelper() async throws {
        try await offPool(Self.restartDuringAWriteLoop)
    }

    static func restartDuringAWriteLoop() throws {
        let server = try OwnServer()
        defer { server.stop() }
        var builder = try PostgresBuilder(url: server.url, model: Model(entities: [Item.self]))
        builder.schema = "restart"
        let db = try builder.create()
        defer { try? db.close() }
        // Another app server on the store, which only observes: its listening connection drops with the restart.
        let observer = try builder.create()
        defer { try? observer.close() }
        let started = try db.read { try $0.scalar("SELECT pg_postmaster_start_time()::text") }
        // Upserts of the loop's own keys are idempotent: a write whose commit outcome is unknown may run again.
        var policy = RetryPolicy(maximumAttempts: 1_000, maximumDuration: .seconds(60))
        policy.retriesUnknownOutcome = true

        let clock = ContinuousClock()
        var longest = Duration.zero
        var written: Int64 = 0
        var runs = 0
        var restart: Process?
        var writtenAfterRestart = 0
        // Writes go on through the restart, and 50 more after it ended.
        while writtenAfterRestart < 50, written < 1_000_000 {
            let id = written
            let began = clock.now
            try db.write(retrying: policy) { context in
                runs += 1
                try context.upsert(Item(id: id, label: "item \(id)"))
            }
            longest = max(longest, clock.now - began)
            written += 1
            if written == 50 { restart = try server.restart() }
            if let restart, !restart.isRunning { writtenAfterRestart += 1 }
        }
        restart?.waitUntilExit()
        #expect(restart?.terminationStatus == 0)
        // The server did restart under the loop.
        #expect(try db.read { try $0.scalar("SELECT pg_postmaster_start_time()::text") } != started)
        // Every write is there exactly once, as written.
        let items = try db.recover(Item.self, sortedBy: [.ascending("id")])
        #expect(items.count == Int(written))
        #expect(
            items.enumerated().allSatisfy {
                $0.element.id == Int64($0.offset) && $0.element.label == "item \($0.offset)"
            })
        #expect(runs >= Int(written))
        // Some write waited out the server's downtime — dropped, refused, then "starting up" — retrying until it was
        // back: far longer than a write takes, or than the waits of five collision retries (≤ 15 ms) add up to.
        #expect(longest >= .milliseconds(100), "the longest write took \(longest)")

        // The observer's listener reconnected by itself, and hears the writer's commits again.
        _ = try observer.checkForExternalChanges()
        try db.write(retrying: policy) { try $0.upsert(Item(id: -1, label: "after the restart")) }
        #expect(try observer.checkForExternalChanges() == true, "the observer no longer hears the writer")
    }
}
