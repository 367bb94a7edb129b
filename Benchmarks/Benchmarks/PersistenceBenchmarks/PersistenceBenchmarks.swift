import Benchmark
import Foundation
import Workloads

// Per-operation suites with allocation counts, on the same implementations as `compare` (which prints the
// side-by-side ratios). Small N so `swift package benchmark` takes a couple of minutes.

/// Records per store.
private let recordCount = 10_000
/// Point lookups per iteration.
private let lookupCount = 1_000

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .throughput, .mallocCountTotal, .instructions],
        warmupIterations: 1,
        maxDuration: .seconds(2),
        maxIterations: 50
    )
    let dataset = Dataset(count: recordCount, lookups: lookupCount)

    registerSQLite(RawSQLiteSubject.self, dataset)
    registerSQLite(OursSQLiteSubject.self, dataset)
    registerSQLite(GRDBSubject.self, dataset)

    registerLMDB(RawLMDBPlainSubject.self, dataset)
    registerLMDB(OursEncryptedLMDBSubject.self, dataset)
    registerLMDB(OursPlainLMDBSubject.self, dataset)
}

/// A store opened once per benchmark (in `setup`) in a folder of its own, removed in `teardown`.
private final class Fixture<Subject> {
    let folder: URL
    private(set) var subject: Subject?

    init(_ name: String) {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "persistence-benchmark-\(ProcessInfo.processInfo.processIdentifier)-\(name)", isDirectory: true)
    }

    func open(_ make: (URL) throws -> Subject) throws -> Subject {
        try? FileManager.default.removeItem(at: folder)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let subject = try make(folder)
        self.subject = subject
        return subject
    }

    func close() {
        subject = nil
        try? FileManager.default.removeItem(at: folder)
    }
}

/// A benchmark result that is wrong: the benchmark reports it as an error.
private struct WrongResult: Error, CustomStringConvertible {
    var description: String
}

private func check(_ condition: Bool, _ message: @autoclosure () -> String) throws {
    guard condition else { throw WrongResult(description: message()) }
}

/// Writes a batch into an empty store, measuring the write only; the store is emptied outside the measurement.
private func registerWrite<S>(
    _ name: String, _ fixture: Fixture<S>, open: @escaping (URL) throws -> S, write: @escaping (S) throws -> Void,
    empty: @escaping (S) throws -> Void
) {
    Benchmark(
        name,
        closure: { benchmark in
            guard let store = fixture.subject else { throw WrongResult(description: "no store") }
            benchmark.startMeasurement()
            try write(store)
            benchmark.stopMeasurement()
            try empty(store)
        },
        setup: { _ = try fixture.open(open) },
        teardown: { fixture.close() })
}

/// Reads from a filled store (opened by `setup`), checking how many records came back.
private func registerRead<S, R>(
    _ name: String, _ fixture: Fixture<S>, setup: @escaping () throws -> Void, expecting count: Int,
    read: @escaping (S) throws -> [R]
) {
    Benchmark(
        name,
        closure: { _ in
            guard let store = fixture.subject else { throw WrongResult(description: "no store") }
            let records = try read(store)
            try check(records.count == count, "read \(records.count) records, expected \(count)")
            blackHole(records)
        },
        setup: setup,
        teardown: { fixture.close() })
}

private func registerSQLite<S: SQLiteSubject>(_ subject: S.Type, _ dataset: Dataset) {
    let records = dataset.people.map(S.Record.init)
    let ids = Array(dataset.lookupIDs.prefix(lookupCount))

    registerWrite(
        "SQLite insert \(recordCount) in one transaction · \(S.implementation)",
        Fixture<S>("sqlite-insert-\(S.implementation)"), open: { try S(directory: $0) },
        write: { try $0.insert(records) }, empty: { try $0.removeAll() })

    let reading = Fixture<S>("sqlite-read-\(S.implementation)")
    let openFilled = {
        _ = try reading.open { folder in
            try S(directory: folder).insert(records)
            return try S(directory: folder)
        }
    }
    registerRead(
        "SQLite fetch all \(recordCount) · \(S.implementation)", reading, setup: openFilled,
        expecting: recordCount, read: { try $0.fetchAll() })
    registerRead(
        "SQLite \(lookupCount) point lookups · \(S.implementation)", reading, setup: openFilled,
        expecting: ids.count, read: { try $0.lookup(ids: ids) })
}

private func registerLMDB<S: LMDBSubject>(_ subject: S.Type, _ dataset: Dataset) {
    let people = dataset.people
    let ids = Array(dataset.lookupIDs.prefix(lookupCount))

    registerWrite(
        "LMDB put \(recordCount) in one transaction · \(S.implementation)",
        Fixture<S>("lmdb-put-\(S.implementation)"), open: { try S(directory: $0) }, write: { try $0.put(people) },
        empty: { try $0.removeAll() })

    // One open store for both read benchmarks (an encrypted open costs a key derivation).
    let reading = Fixture<S>("lmdb-read-\(S.implementation)")
    let openFilled = {
        _ = try reading.open { folder in
            let store = try S(directory: folder)
            try store.put(people)
            return store
        }
    }
    registerRead(
        "LMDB \(lookupCount) gets · \(S.implementation)", reading, setup: openFilled, expecting: ids.count,
        read: { try $0.get(ids: ids) })
    registerRead(
        "LMDB scan \(recordCount) · \(S.implementation)", reading, setup: openFilled, expecting: recordCount,
        read: { try $0.scan() })
}
