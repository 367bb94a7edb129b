public import Foundation

/// The SQLite workloads.
public enum SQLiteWorkload: String, CaseIterable, Sendable {
    /// Insert N records in one transaction.
    case s1 = "S1"
    /// Fetch all N records and decode them.
    case s2 = "S2"
    /// Random point lookups by id, in one read transaction.
    case s3 = "S3"
    /// Lookups by the indexed `name`, in one read transaction.
    case s4 = "S4"
    /// Update every record in one transaction.
    case s5 = "S5"
    /// Delete every record, one by one by id, in one transaction.
    case s6 = "S6"
    /// Insert records each in its own transaction (bound by fsync).
    case s7 = "S7"
    // S8, a mapping-model migration of N records, is not a case here: it compares ours with the hand-written table
    // rebuild only (no GRDB row), and every run consumes a copy of one seeded store — see `MappingMigrationSubject`.

    /// How many operations one run performs, for ops/s.
    public func operations(in dataset: Dataset) -> Int {
        switch self {
        case .s1, .s2, .s5, .s6: dataset.people.count
        case .s3: dataset.lookupIDs.count
        case .s4: dataset.lookupNames.count
        case .s7: dataset.singleInserts.count
        }
    }

    /// Runs the workload once on `subject`'s implementation, in a fresh store in `directory` (which must be
    /// empty), and returns the seconds of the timed operation alone.
    ///
    /// Stores the workload reads or changes are filled first and reopened before the timed operation, so every
    /// implementation starts from a closed file and a cold connection cache. Results are verified afterwards:
    /// changes by reopening the store and reading everything back.
    /// - Throws: ``VerificationError`` when a result is wrong; the implementation's errors.
    public func run<S: SQLiteSubject>(_ subject: S.Type, dataset: Dataset, directory: URL) throws -> Double {
        let verify = Verifier(workload: rawValue, implementation: S.implementation)
        switch self {
        case .s1:
            let records = dataset.people.map(S.Record.init)
            let seconds = try S(directory: directory).timed { try $0.insert(records) }.seconds
            try verify.expect(readBack(S.self, directory), equals: dataset.allChecksum, "stored records")
            return seconds
        case .s2:
            try fill(S.self, dataset, directory)
            let (records, seconds) = try S(directory: directory).timed { try $0.fetchAll() }
            try verify.expect(Checksum(records.lazy.map(\.person)), equals: dataset.allChecksum, "fetched records")
            return seconds
        case .s3:
            try fill(S.self, dataset, directory)
            let (records, seconds) = try S(directory: directory).timed { try $0.lookup(ids: dataset.lookupIDs) }
            try verify.expect(Checksum(records.lazy.map(\.person)), equals: dataset.lookupChecksum, "found records")
            return seconds
        case .s4:
            try fill(S.self, dataset, directory)
            let (records, seconds) = try S(directory: directory).timed { try $0.lookup(names: dataset.lookupNames) }
            try verify.expect(
                Checksum(records.lazy.map(\.person)), equals: dataset.nameLookupChecksum, "records found by name")
            return seconds
        case .s5:
            try fill(S.self, dataset, directory)
            let records = dataset.people.map { S.Record($0.updated) }
            let seconds = try S(directory: directory).timed { try $0.update(records) }.seconds
            try verify.expect(readBack(S.self, directory), equals: dataset.updatedChecksum, "updated records")
            return seconds
        case .s6:
            try fill(S.self, dataset, directory)
            let ids = dataset.people.map(\.id)
            let (deleted, seconds) = try S(directory: directory).timed { try $0.delete(ids: ids) }
            try verify.expect(deleted == ids.count, "deleted \(deleted) records, expected \(ids.count)")
            try verify.expect(readBack(S.self, directory), equals: Checksum(), "records left")
            return seconds
        case .s7:
            let records = dataset.singleInserts.map(S.Record.init)
            let seconds = try S(directory: directory).timed { try $0.insertEach(records) }.seconds
            try verify.expect(readBack(S.self, directory), equals: dataset.singleInsertChecksum, "stored records")
            return seconds
        }
    }

    /// Fills a new store with the dataset and closes it.
    private func fill<S: SQLiteSubject>(_ subject: S.Type, _ dataset: Dataset, _ directory: URL) throws {
        try S(directory: directory).insert(dataset.people.map(S.Record.init))
    }

    /// Reopens the store and checksums everything in it.
    private func readBack<S: SQLiteSubject>(_ subject: S.Type, _ directory: URL) throws -> Checksum {
        try Checksum(S(directory: directory).fetchAll().lazy.map(\.person))
    }
}

extension SQLiteSubject {
    /// Times `body` on this open store; the store closes when the caller drops it, outside the timing.
    func timed<R>(_ body: (Self) throws -> R) throws -> (result: R, seconds: Double) {
        try Stopwatch.time { try body(self) }
    }
}
