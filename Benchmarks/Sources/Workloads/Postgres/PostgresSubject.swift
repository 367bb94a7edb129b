/// One PostgreSQL implementation of the P workloads: Persistence's backend, or postgres-nio by hand.
///
/// A subject owns its connections to one ``PostgresServer`` and closes them when released. Both keep `Person` in a
/// table of the same shape, in a PostgreSQL schema of their own: `id bigint NOT NULL PRIMARY KEY`, texts as their
/// UTF-8 in `bytea`, `age bigint`, `score double precision`, every column `NOT NULL`, and an index on `name`. Writes
/// run in one `SERIALIZABLE` transaction, reads in one `REPEATABLE READ READ ONLY` one — ours' isolation, which raw
/// asks for too, so the same work is timed. Each method is one workload's timed operation and nothing else; the
/// harness checks the results.
public protocol PostgresSubject: AnyObject {
    associatedtype Record: PersonRecord

    static var implementation: String { get }

    /// Connects; with `fresh`, first drops the subject's schema with everything in it and creates an empty table.
    init(server: PostgresServer, fresh: Bool) throws

    /// P1: inserts every record in one transaction.
    func insert(_ records: [Record]) throws
    /// P2: every record, decoded.
    func fetchAll() throws -> [Record]
    /// P3: the record of each id that exists, in one read transaction.
    func lookup(ids: [Int64]) throws -> [Record]
    /// P4: the records with each name, through the index, in one read transaction.
    func lookup(names: [String]) throws -> [Record]
    /// P5: replaces each record (found by id) in one transaction.
    func update(_ records: [Record]) throws
    /// P6: deletes each id, one statement per id, in one transaction; returns how many records were deleted.
    func delete(ids: [Int64]) throws -> Int
}
