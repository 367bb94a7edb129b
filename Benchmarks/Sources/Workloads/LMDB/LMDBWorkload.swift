public import Foundation

/// The LMDB workloads.
public enum LMDBWorkload: String, CaseIterable, Sendable {
    /// Put N records in one transaction.
    case l1 = "L1"
    /// Random gets by id, in one read transaction.
    case l4 = "L4"
    /// Random gets by id, each in a read transaction of its own: the cost of beginning and ending a read.
    case l5 = "L5"
    /// A full scan, decoding every record.
    case l6 = "L6"
    /// Open an existing store: for an encrypted one, the Argon2id key derivation and the passphrase check.
    case k = "K"

    /// How many operations one run performs, for ops/s.
    public func operations(in dataset: Dataset) -> Int {
        switch self {
        case .l1, .l6: dataset.people.count
        case .l4, .l5: dataset.lookupIDs.count
        case .k: 1
        }
    }

    /// Runs the workload once on `subject`'s implementation, in a fresh store in `directory` (which must be
    /// empty), and returns the seconds of the timed operation alone.
    ///
    /// As for SQLite, stores are filled, closed and reopened before a timed read, and changes are verified by
    /// reopening the store and reading everything back.
    /// - Throws: ``VerificationError`` when a result is wrong; the implementation's errors.
    public func run<S: LMDBSubject>(_ subject: S.Type, dataset: Dataset, directory: URL) throws -> Double {
        let verify = Verifier(workload: rawValue, implementation: S.implementation)
        switch self {
        case .l1:
            let seconds = try Self.timed(S(directory: directory)) { try $0.put(dataset.people) }.seconds
            let stored = try Checksum(S(directory: directory).scan())
            try verify.expect(stored, equals: dataset.allChecksum, "stored records")
            return seconds
        case .l4:
            try S(directory: directory).put(dataset.people)
            let (people, seconds) = try Self.timed(S(directory: directory)) { try $0.get(ids: dataset.lookupIDs) }
            try verify.expect(Checksum(people), equals: dataset.lookupChecksum, "found records")
            return seconds
        case .l5:
            try S(directory: directory).put(dataset.people)
            let (people, seconds) = try Self.timed(S(directory: directory)) { try $0.getEach(ids: dataset.lookupIDs) }
            try verify.expect(Checksum(people), equals: dataset.lookupChecksum, "found records")
            return seconds
        case .l6:
            try S(directory: directory).put(dataset.people)
            let (people, seconds) = try Self.timed(S(directory: directory)) { try $0.scan() }
            try verify.expect(Checksum(people), equals: dataset.allChecksum, "scanned records")
            try verify.expect(people.map(\.id) == dataset.people.map(\.id), "records not in id order")
            return seconds
        case .k:
            let first = Array(dataset.people.prefix(1))
            try S(directory: directory).put(first)
            let (store, seconds) = try Stopwatch.time { try S(directory: directory) }
            try verify.expect(Checksum(store.scan()) == Checksum(first), "the reopened store lost its record")
            return seconds
        }
    }

    /// Times `body` on an open store, which closes when the caller drops the result, outside the timing (LMDB
    /// allows one open environment per file per process, so it must close before the next open).
    private static func timed<S: LMDBSubject, R>(_ store: S, _ body: (S) throws -> R) throws -> (
        result: R, seconds: Double
    ) {
        try Stopwatch.time { try body(store) }
    }
}
