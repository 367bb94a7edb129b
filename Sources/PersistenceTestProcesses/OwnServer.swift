package import Foundation
import PersistenceCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A PostgreSQL server of a test's own (`scripts/postgres-server.sh` on a free port), so that restarting it disturbs
/// no other test; stopped and removed by ``stop()``. The PostgreSQL and sync suites' restart tests use it.
package final class OwnServer: Sendable {
    package let directory: URL
    package let url: String
    private let port: String
    private static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("scripts/postgres-server.sh")

    package init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("own-postgres-\(UUID().uuidString)")
        port = String(try Self.freePort())
        let (status, output) = try Self.run(["start", directory.path], port: port)
        guard status == 0 else { throw PersistenceError(.unreachable, "the test's own server did not start") }
        url = output.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Starts a fast restart (open connections dropped) and returns its process, running.
    package func restart() throws -> Process {
        let process = Self.process(["restart", directory.path], port: port)
        try process.run()
        return process
    }

    package func stop() {
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
