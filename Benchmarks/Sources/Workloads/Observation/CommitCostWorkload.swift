public import Foundation
import PersistenceCore

/// O1: what live observers of another entity cost a commit.
///
/// One store per run, written one `Person` per write transaction (`db.write { … }`, the synchronous API) in blocks:
/// a block of commits with no observer, one with ``observers`` observations of ``Note`` made by `observe(Note.self)`,
/// one with as many made by `changes(of: Note.self)`, and again, the variants taking turns block after block (the
/// order rotating) so that the drift of a disk that syncs at every commit spreads evenly over them. The observers
/// of a block are started before it — each iterated by a task that has received its first value and waits for the
/// next — and stopped after it. Every block starts after the same short pause; each commit is timed on its own, and
/// nothing else is.
public enum CommitCostWorkload {
    public static let workload = "O1"
    /// How many observations of ``Note`` are live during an observed block.
    public static let observers = 100
    /// Blocks per variant in a run (fewer when there are fewer commits).
    static let blocks = 10
    /// The pause before each block, in seconds.
    static let pause = 0.005

    /// What observes the store during a block.
    public enum Variant: CaseIterable, Sendable {
        /// No observer.
        case unobserved
        /// ``CommitCostWorkload/observers`` iterated `observe(Note.self)` sequences.
        case values
        /// ``CommitCostWorkload/observers`` iterated `changes(of: Note.self)` sequences: while one is live, every
        /// write transaction records the primary keys it changes.
        case changes

        /// The implementation name of its rows: the backend's, then the observers.
        public func implementation(_ backend: ObservationBackend) -> String {
            switch self {
            case .unobserved: backend.rawValue
            case .values: "\(backend.rawValue)+\(CommitCostWorkload.observers)-values"
            case .changes: "\(backend.rawValue)+\(CommitCostWorkload.observers)-changes"
            }
        }

        /// How many observers are live during its blocks.
        public var observers: Int { self == .unobserved ? 0 : CommitCostWorkload.observers }

        var kind: ParkedObservers.Kind? {
            switch self {
            case .unobserved: nil
            case .values: .values
            case .changes: .changes
            }
        }
    }

    /// Runs the workload once on `backend`, in a new store in `directory` (which must be empty): `commits` commits
    /// per variant, the variants' order in each block rotated by `round`. Returns the seconds of each commit
    /// (the `write` call), by variant in ``Variant/allCases`` order, in the order they ran.
    /// - Throws: ``VerificationError`` when the stored records are wrong, or an observer of ``Note`` failed, was
    ///   woken by a commit of `Person`, or outlived its cancellation; the store's errors.
    public static func run(_ backend: ObservationBackend, commits: Int, round: Int, directory: URL) throws -> [[Double]]
    {
        let verify = Verifier(workload: workload, implementation: backend.rawValue)
        let generator = PersonGenerator(count: commits * Variant.allCases.count)
        return try backend.withStore(in: directory) { db in
            try measure(db, commits: commits, round: round, generator: generator, verify: verify)
        }
    }

    private static func measure<D: Database>(
        _ db: D, commits: Int, round: Int, generator: PersonGenerator, verify: Verifier
    ) throws -> [[Double]] {
        let variants = Variant.allCases
        var seconds = Array(repeating: [Double](), count: variants.count)
        for index in variants.indices { seconds[index].reserveCapacity(commits) }
        let clock = ContinuousClock()
        var nextID: Int64 = 1
        let blocks = min(Self.blocks, commits)
        for block in 0..<blocks {
            // The run's commits spread evenly over the blocks.
            let size = Int64(commits * (block + 1) / blocks - commits * block / blocks)
            for offset in variants.indices {
                let index = (offset + block + round) % variants.count
                let people = (nextID..<nextID + size).map { generator.person(id: $0) }
                nextID += size
                let observers = try variants[index].kind.map {
                    try ParkedObservers.start($0, count: Self.observers, on: db, verify: verify)
                }
                // Every block starts after the same pause, observed or not: the observers' tasks are parked by now.
                Thread.sleep(forTimeInterval: Self.pause)
                for person in people {
                    let start = clock.now
                    try db.write { context in try context.create(person) }
                    seconds[index].append(start.duration(to: clock.now).seconds)
                }
                try observers?.stop()
            }
        }
        let stored = try db.readBack()
        try verify.expect(stored.people, equals: generator.checksum(), "stored records")
        try verify.expect(stored.notes == 0, "\(stored.notes) notes stored, expected none")
        return seconds
    }
}
