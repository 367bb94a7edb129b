public import Foundation
import PersistenceLMDB
import PersistenceSQLite

/// M: iterating a large store one record at a time, and the memory it takes.
///
/// Peak memory is per process, so each measurement runs in two child processes (`compare` starts itself): one
/// fills a store from the generator's lazy sequence, the next opens it, resets the kernel's peak counter, iterates
/// every record and reports its figures as JSON. Opening is left out of the peak on purpose: the encrypted
/// store's Argon2id key derivation takes 64 MiB for a moment, whatever the store's size.
public enum MemorySubject: String, CaseIterable, Sendable, Codable {
    case sqliteRaw = "sqlite-raw"
    case sqliteOurs = "sqlite-ours"
    case lmdbRaw = "lmdb-raw"
    case lmdbOursEncrypted = "lmdb-ours-encrypted"

    /// Whether the store is memory-mapped, so that pages read count as file-backed resident memory.
    public var isMapped: Bool { self == .lmdbRaw || self == .lmdbOursEncrypted }

    /// The implementation that is the reference for this one (the raw C API on the same engine).
    public var reference: MemorySubject? {
        switch self {
        case .sqliteRaw, .lmdbRaw: nil
        case .sqliteOurs: .sqliteRaw
        case .lmdbOursEncrypted: .lmdbRaw
        }
    }

    /// Child 1: writes the generator's records, streamed, in one transaction.
    public func fill(directory: URL, generator: PersonGenerator) throws {
        switch self {
        case .sqliteRaw:
            try RawSQLiteSubject(directory: directory).insert(streaming: generator.people)
        case .sqliteOurs:
            try Self.oursSQLite(directory).write { context in try context.create(generator.people) }
        case .lmdbRaw:
            try RawLMDBStore<PlainValues>(directory: directory).put(streaming: generator.people)
        case .lmdbOursEncrypted:
            try OursEncryptedLMDBSubject(directory: directory).db.write { context in
                try context.create(generator.people)
            }
        }
    }

    /// Child 2: opens the store, then iterates every record while sampling memory.
    public func iterate(directory: URL) throws -> MemoryReport {
        var probe = MemoryProbe()
        var checksum = Checksum()
        var anonymousPeak = 0
        var filePeak = 0
        var report = MemoryReport()
        func visit(_ person: Person) {
            checksum.add(person)
            if checksum.count % 1024 == 0 {
                let sample = probe.sample()
                anonymousPeak = max(anonymousPeak, sample.anonymousKiB)
                filePeak = max(filePeak, sample.fileKiB)
            }
        }
        func measure(_ iteration: () throws -> Void) throws {
            let opened = probe.sample()
            report.openPeakKiB = opened.peakKiB
            report.baselineKiB = opened.anonymousKiB + opened.fileKiB
            report.peakWasReset = MemoryProbe.resetPeak()
            anonymousPeak = opened.anonymousKiB
            filePeak = opened.fileKiB
            report.seconds = try Stopwatch.time(iteration).seconds
            let end = probe.sample()
            report.peakKiB = end.peakKiB
            report.anonymousPeakKiB = max(anonymousPeak, end.anonymousKiB)
            report.filePeakKiB = max(filePeak, end.fileKiB)
        }

        switch self {
        case .sqliteRaw:
            let store = try RawSQLiteSubject(directory: directory)
            try measure { try store.forEach(visit) }
        case .sqliteOurs:
            let db = try Self.oursSQLite(directory)
            try measure { try db.read { context in try context.forEach(Person.self, query: Query(), visit) } }
        case .lmdbRaw:
            let store = try RawLMDBStore<PlainValues>(directory: directory)
            try measure { try store.forEach(visit) }
        case .lmdbOursEncrypted:
            let db = try OursEncryptedLMDBSubject(directory: directory).db
            try measure { try db.read { context in try context.forEach(Person.self, query: Query(), visit) } }
        }
        report.rows = checksum.count
        report.digest = String(checksum.digest, radix: 16)
        return report
    }

    private static func oursSQLite(_ directory: URL) throws -> SQLiteDatabase {
        var builder = SQLiteBuilder(databaseName: "ours", entities: [Person.self])
        builder.directory = directory
        return try builder.create()
    }
}

/// What an iterating child process reports (KiB figures from `/proc/self/status`).
public struct MemoryReport: Codable, Sendable {
    /// Records iterated, and the checksum of what they held (hex), for the parent to verify.
    public var rows = 0
    public var digest = ""
    /// How long the iteration took.
    public var seconds = 0.0
    /// Resident memory once the store was open, before iterating.
    public var baselineKiB = 0
    /// The peak resident size while opening (before the counter was reset).
    public var openPeakKiB = 0
    /// Whether the peak counter could be reset after opening; when not, ``peakKiB`` includes opening.
    public var peakWasReset = false
    /// Peak resident size during the iteration (`VmHWM`).
    public var peakKiB = 0
    /// Peak anonymous (heap) resident memory during the iteration, sampled every 1,024 records.
    public var anonymousPeakKiB = 0
    /// Peak file-backed resident memory during the iteration, sampled likewise.
    public var filePeakKiB = 0

    public init() {}

    /// The checksum the child computed.
    public var checksum: Checksum? {
        UInt64(digest, radix: 16).map { Checksum(count: rows, digest: $0) }
    }
}
