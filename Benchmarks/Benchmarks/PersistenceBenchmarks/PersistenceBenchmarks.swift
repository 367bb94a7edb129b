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

private func registerSQLite<S: SQLiteSubject>(_ subject: S.Type, _ dataset: Dataset) {
    let records = dataset.people.map(S.Record.init)
    let ids = Array(dataset.lookupIDs.prefix(lookupCount))

    // Insert N in one transaction; the store is emptied outside the measurement after each iteration.
    let inserting = Fixture<S>("sqlite-insert-\(S.implementation)")
    Benchmark(
        "SQLite insert \(recordCount) in one transaction · \(S.implementation)",
        closure: { benchmark in
            guard let store = inserting.subject else { throw WrongResult(description: "no store") }
            benchmark.startMeasurement()
            try store.insert(records)
            benchmark.stopMeasurement()
            try store.removeAll()
        },
        setup: { _ = try inserting.open { try S(directory: $0) } },
        teardown: { inserting.close() })

    let reading = Fixture<S>("sqlite-read-\(S.implementation)")
    let openFilled = {
        _ = try reading.open { folder in
            try S(directory: folder).insert(records)
            return try S(directory: folder)
        }
    }
    Benchmark(
        "SQLite fetch all \(recordCount) · \(S.implementation)",
        closure: { _ in
            guard let store = reading.subject else { throw WrongResult(description: "no store") }
            let fetched = try store.fetchAll()
            try check(fetched.count == recordCount, "fetched \(fetched.count) records")
            blackHole(fetched)
        },
        setup: openFilled,
        teardown: { reading.close() })
    Benchmark(
        "SQLite \(lookupCount) point lookups · \(S.implementation)",
        closure: { _ in
            guard let store = reading.subject else { throw WrongResult(description: "no store") }
            let found = try store.lookup(ids: ids)
            try check(found.count == ids.count, "found \(found.count) of \(ids.count) records")
            blackHole(found)
        },
        setup: openFilled,
        teardown: { reading.close() })
}

private func registerLMDB<S: LMDBSubject>(_ subject: S.Type, _ dataset: Dataset) {
    let people = dataset.people
    let ids = Array(dataset.lookupIDs.prefix(lookupCount))

    let putting = Fixture<S>("lmdb-put-\(S.implementation)")
    Benchmark(
        "LMDB put \(recordCount) in one transaction · \(S.implementation)",
        closure: { benchmark in
            guard let store = putting.subject else { throw WrongResult(description: "no store") }
            benchmark.startMeasurement()
            try store.put(people)
            benchmark.stopMeasurement()
            try store.removeAll()
        },
        setup: { _ = try putting.open { try S(directory: $0) } },
        teardown: { putting.close() })

    // One open store for both read benchmarks (an encrypted open costs a key derivation).
    let reading = Fixture<S>("lmdb-read-\(S.implementation)")
    let openFilled = {
        _ = try reading.open { folder in
            let store = try S(directory: folder)
            try store.put(people)
            return store
        }
    }
    Benchmark(
        "LMDB \(lookupCount) gets · \(S.implementation)",
        closure: { _ in
            guard let store = reading.subject else { throw WrongResult(description: "no store") }
            let found = try store.get(ids: ids)
            try check(found.count == ids.count, "found \(found.count) of \(ids.count) records")
            blackHole(found)
        },
        setup: openFilled,
        teardown: { reading.close() })
    Benchmark(
        "LMDB scan \(recordCount) · \(S.implementation)",
        closure: { _ in
            guard let store = reading.subject else { throw WrongResult(description: "no store") }
            let scanned = try store.scan()
            try check(scanned.count == recordCount, "scanned \(scanned.count) records")
            blackHole(scanned)
        },
        setup: openFilled,
        teardown: { reading.close() })
}
