/// The PostgreSQL workloads: the SQLite rows' operations (S1–S6), against a server.
public enum PostgresWorkload: String, CaseIterable, Sendable {
    /// Insert N records in one transaction.
    case p1 = "P1"
    /// Fetch all N records and decode them.
    case p2 = "P2"
    /// Random point lookups by id, in one read transaction.
    case p3 = "P3"
    /// Lookups by the indexed `name`, in one read transaction.
    case p4 = "P4"
    /// Update every record in one transaction.
    case p5 = "P5"
    /// Delete every record, one by one by id, in one transaction.
    case p6 = "P6"
    // P7, commits per second from 1, 4 and 16 concurrent writers, is not a case here: see
    // `ConcurrentWritersWorkload`.

    /// How many operations one run performs, for ops/s.
    public func operations(in inputs: PostgresInputs) -> Int {
        switch self {
        case .p1, .p2, .p5, .p6: inputs.dataset.people.count
        case .p3: inputs.lookupIDs.count
        case .p4: inputs.dataset.lookupNames.count
        }
    }

    /// Runs the workload once on `subject`'s implementation, on a fresh store, and returns the seconds of the timed
    /// operation alone.
    ///
    /// As for SQLite, stores the workload reads or changes are filled first by one connection, which is closed, and
    /// the timed operation runs on new ones. Results are verified afterwards: changes by reading everything back on
    /// new connections.
    /// - Throws: ``VerificationError`` when a result is wrong; the implementation's errors.
    public func run<S: PostgresSubject>(_ subject: S.Type, inputs: PostgresInputs, server: PostgresServer) throws
        -> Double
    {
        let verify = Verifier(workload: rawValue, implementation: S.implementation)
        let dataset = inputs.dataset
        switch self {
        case .p1:
            let records = dataset.people.map(S.Record.init)
            let seconds = try S(server: server, fresh: true).timed { try $0.insert(records) }.seconds
            try verify.expect(readBack(S.self, server), equals: dataset.allChecksum, "stored records")
            return seconds
        case .p2:
            try fill(S.self, dataset, server)
            let (records, seconds) = try S(server: server, fresh: false).timed { try $0.fetchAll() }
            try verify.expect(Checksum(records.lazy.map(\.person)), equals: dataset.allChecksum, "fetched records")
            try verify.expect(records.map(\.person.id) == dataset.people.map(\.id), "records not in id order")
            return seconds
        case .p3:
            try fill(S.self, dataset, server)
            let (records, seconds) = try S(server: server, fresh: false).timed { try $0.lookup(ids: inputs.lookupIDs) }
            try verify.expect(Checksum(records.lazy.map(\.person)), equals: inputs.lookupChecksum, "found records")
            return seconds
        case .p4:
            try fill(S.self, dataset, server)
            let (records, seconds) = try S(server: server, fresh: false).timed {
                try $0.lookup(names: dataset.lookupNames)
            }
            try verify.expect(
                Checksum(records.lazy.map(\.person)), equals: dataset.nameLookupChecksum, "records found by name")
            return seconds
        case .p5:
            try fill(S.self, dataset, server)
            let records = dataset.people.map { S.Record($0.updated) }
            let seconds = try S(server: server, fresh: false).timed { try $0.update(records) }.seconds
            try verify.expect(readBack(S.self, server), equals: dataset.updatedChecksum, "updated records")
            return seconds
        case .p6:
            try fill(S.self, dataset, server)
            let ids = dataset.people.map(\.id)
            let (deleted, seconds) = try S(server: server, fresh: false).timed { try $0.delete(ids: ids) }
            try verify.expect(deleted == ids.count, "deleted \(deleted) records, expected \(ids.count)")
            try verify.expect(readBack(S.self, server), equals: Checksum(), "records left")
            return seconds
        }
    }

    /// Makes a fresh store holding the dataset, and disconnects.
    private func fill<S: PostgresSubject>(_ subject: S.Type, _ dataset: Dataset, _ server: PostgresServer) throws {
        try S(server: server, fresh: true).insert(dataset.people.map(S.Record.init))
    }

    /// Reconnects and checksums everything in the store.
    private func readBack<S: PostgresSubject>(_ subject: S.Type, _ server: PostgresServer) throws -> Checksum {
        try Checksum(S(server: server, fresh: false).fetchAll().lazy.map(\.person))
    }
}

/// The P workloads' inputs: the run's dataset, and P3's point lookups — fewer than S3's, each a round trip to the
/// server.
public struct PostgresInputs: Sendable {
    public let dataset: Dataset
    /// The ids of P3's point lookups, drawn from the generator (with repeats).
    public let lookupIDs: [Int64]
    /// What P3's lookups find.
    public let lookupChecksum: Checksum

    public init(dataset: Dataset, pointLookups: Int) {
        self.dataset = dataset
        let generator = dataset.generator
        lookupIDs = generator.randomIDs(pointLookups, stream: 3)
        lookupChecksum = Checksum(lookupIDs.lazy.map { generator.person(id: $0) })
    }
}

extension PostgresSubject {
    /// Times `body` on this connected subject; it disconnects when the caller drops it, outside the timing.
    func timed<R>(_ body: (Self) throws -> R) throws -> (result: R, seconds: Double) {
        try Stopwatch.time { try body(self) }
    }
}
