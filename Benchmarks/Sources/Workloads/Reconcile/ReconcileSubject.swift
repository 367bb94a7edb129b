public import Foundation
import PersistenceCore

/// R1: reconcile a store of N records with a snapshot of them (``ReconcileInput``): 10 % changed, 5 % gone, 1 % new.
///
/// The target compares ours on SQLite with the raw C API; ours on LMDB runs the same call on its stores, reported
/// for information (its ratio is to raw SQLite too).
public enum ReconcileSubject: String, CaseIterable, Sendable {
    /// The SQLite C API, by hand (`RawSQLiteSubject.reconcile(with:)`).
    case raw = "raw"
    /// Persistence on SQLite (WAL, `synchronous = FULL`): `context.reconcile(Person.self, with:)`, no scope.
    case ours = "ours"
    /// The same call on Persistence's unencrypted LMDB store.
    case oursLMDBPlain = "ours-lmdb-plain"
    /// The same call on Persistence's encrypted LMDB store.
    case oursLMDBEncrypted = "ours-lmdb-encrypted"

    /// The workload id of the rows.
    public static let workload = "R1"

    /// Runs R1 once in `directory` (which must be empty) and returns the seconds of the reconcile alone.
    ///
    /// The store is filled with ``ReconcileInput/stored`` and closed, then reopened (so every implementation
    /// starts from a closed file and a cold connection cache) and reconciled — the one write transaction is all
    /// that is timed. Then the counts it returned must be the input's, and the store, reopened, must hold exactly
    /// ``ReconcileInput/incoming``.
    /// - Throws: ``VerificationError`` when the counts or the stored records are wrong; the implementation's
    ///   errors.
    public func run(_ input: ReconcileInput, directory: URL) throws -> Double {
        switch self {
        case .raw: try run(RawSQLiteSubject.self, input, directory)
        case .ours: try run(OursSQLiteSubject.self, input, directory)
        case .oursLMDBPlain: try run(OursPlainLMDBSubject.self, input, directory)
        case .oursLMDBEncrypted: try run(OursEncryptedLMDBSubject.self, input, directory)
        }
    }

    private func run<S: ReconcilingStore>(_ store: S.Type, _ input: ReconcileInput, _ directory: URL) throws -> Double {
        let verify = Verifier(workload: Self.workload, implementation: rawValue)
        try S(directory: directory).fill(input.stored)
        let (counts, seconds) = try Self.reconcile(S(directory: directory), with: input.incoming)
        try verify.expect(counts == input.expected, "reconcile counted \(counts), expected \(input.expected)")
        let stored = try S(directory: directory).readBack()
        try verify.expect(
            stored.count == input.incoming.count,
            "the store holds \(stored.count) records after reconciling, expected \(input.incoming.count)")
        try verify.expect(Checksum(stored), equals: input.incomingChecksum, "records read back")
        return seconds
    }

    /// Times the reconcile on an open store, which closes when this returns, outside the timing (LMDB allows one
    /// open environment per file per process, so it must close before the store is opened again to read it back).
    private static func reconcile(_ store: some ReconcilingStore, with incoming: [Person]) throws -> (
        counts: ChangeCounts, seconds: Double
    ) {
        let (counts, seconds) = try Stopwatch.time { try store.reconcile(with: incoming) }
        return (counts, seconds)
    }
}

/// What R1 needs of an implementation: fill a store, reconcile it, read it back.
protocol ReconcilingStore: AnyObject {
    init(directory: URL) throws
    /// Writes `people` to the empty store in one transaction.
    func fill(_ people: [Person]) throws
    /// The timed operation: one transaction that makes the stored records equal to `incoming`.
    func reconcile(with incoming: [Person]) throws -> ChangeCounts
    /// Every stored record.
    func readBack() throws -> [Person]
}

extension RawSQLiteSubject: ReconcilingStore {
    func fill(_ people: [Person]) throws { try insert(people) }
    func readBack() throws -> [Person] { try fetchAll() }
}

extension OursSQLiteSubject: ReconcilingStore {
    func fill(_ people: [Person]) throws { try insert(people) }
    func readBack() throws -> [Person] { try fetchAll() }
}

extension OursPlainLMDBSubject: ReconcilingStore {
    func fill(_ people: [Person]) throws { try put(people) }
    func readBack() throws -> [Person] { try scan() }
}

extension OursEncryptedLMDBSubject: ReconcilingStore {
    func fill(_ people: [Person]) throws { try put(people) }
    func readBack() throws -> [Person] { try scan() }
}
