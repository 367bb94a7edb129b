import CLMDB
import Foundation
import PersistenceCore
import PersistenceLMDB
import PersistenceTestProcesses

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `LMDBWorker`: another process on an LMDB store, for the LMDB suite's multi-process tests (several writers, a writer
/// killed with -9 inside its transaction, readers in other processes). It depends on the LMDB backend alone, so the
/// vendored configuration (`Tests/Vendored`: LMDB's POSIX semaphores, what Apple's platforms lock with) builds and runs
/// it as the default build does.
///
///     LMDBWorker write <directory> <writer> <count>   commits `count` ticks, each in its own write; `committed N`
///                                                     after each commit returns
///     LMDBWorker stall <directory>                    begins a write, stores tick -1 in it, prints `writing` and
///                                                     waits there for ever (to be killed)
///     LMDBWorker read <directory>                     prints `count N`: the ticks stored
///     LMDBWorker reader <directory>                   opens the store, prints `open`, then `count N` for each
///                                                     line of its standard input, until it ends (opening may
///                                                     write: a reader opened first reads while another writes)
///     LMDBWorker take-semaphore <name>                takes the named POSIX semaphore, prints `taken`, waits for
///                                                     ever: a process that dies holding one of LMDB's semaphores
///
/// The store is `Ticks.lmdb` in the directory: encrypted with `LMDB_WORKER_PASSPHRASE` when set (the test creates it
/// first, so its key derivation is the store's), plain otherwise; `LMDB_WORKER_PREFIX` sets the semaphore prefix.
/// Errors go to standard error with exit status 1.
@main
enum LMDBWorker {
    static func main() {
        let arguments = Array(CommandLine.arguments.dropFirst())
        do {
            try run(arguments)
        } catch {
            FileHandle.standardError.write(Data("LMDBWorker \(arguments): \(error)\n".utf8))
            exit(1)
        }
    }

    struct Usage: Error, CustomStringConvertible {
        var description: String {
            "usage: LMDBWorker write <directory> <writer> <count> | stall <directory> | read <directory> "
                + "| reader <directory> | take-semaphore <name>"
        }
    }

    static func run(_ arguments: [String]) throws {
        guard let command = arguments.first, arguments.count >= 2 else { throw Usage() }
        if command == "take-semaphore" { return try takeSemaphore(arguments[1]) }
        let db = try Tick.builder(directory: URL(fileURLWithPath: arguments[1])).create()
        defer { try? db.close() }
        switch command {
        case "write":
            guard arguments.count == 4, let writer = Int64(arguments[2]), let count = Int64(arguments[3]) else {
                throw Usage()
            }
            for sequence in 1...max(1, count) {
                try db.write { try $0.create(Tick(writer: writer, sequence: sequence)) }
                line("committed \(sequence)")
            }
        case "stall":
            try db.write { context in
                try context.create(Tick(id: -1, writer: -1, sequence: -1))
                line("writing")
                while true { pause() }
            }
        case "read":
            line("count \(try db.read { try $0.count(Tick.self) })")
        case "reader":
            line("open")
            while readLine() != nil { line("count \(try db.read { try $0.count(Tick.self) })") }
        default:
            throw Usage()
        }
    }

    /// Takes the named semaphore and never gives it back.
    static func takeSemaphore(_ name: String) throws {
        let code = persistence_semaphore_take(name)
        guard code == 0 else { throw POSIXError(POSIXErrorCode(rawValue: code) ?? .EINVAL) }
        line("taken")
        while true { pause() }
    }

    /// Writes `text` and a newline to standard output at once: the test reads it while this process runs.
    static func line(_ text: String) {
        FileHandle.standardOutput.write(Data((text + "\n").utf8))
    }
}

extension Tick {
    /// The store in `directory`, as `LMDB_WORKER_PASSPHRASE` and `LMDB_WORKER_PREFIX` say.
    static func builder(directory: URL) -> LMDBBuilder {
        let environment = ProcessInfo.processInfo.environment
        var builder =
            if let passphrase = environment["LMDB_WORKER_PASSPHRASE"] {
                LMDBBuilder(databaseName: "Ticks", passphrase: passphrase, entities: [Tick.self])
            } else {
                LMDBBuilder.unencrypted(databaseName: "Ticks", entities: [Tick.self])
            }
        builder.directory = directory
        builder.semaphorePrefix = environment["LMDB_WORKER_PREFIX"]
        return builder
    }
}
