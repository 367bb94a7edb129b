public import Foundation

/// A record type an implementation reads and writes: `Person` itself, or a library's mirror of it.
public protocol PersonRecord: Sendable {
    init(_ person: Person)
    var person: Person { get }
}

extension Person: PersonRecord {
    public init(_ person: Person) { self = person }
    public var person: Person { self }
}

/// One SQLite implementation of the S workloads: the raw C API, Persistence, or GRDB.
///
/// A subject owns one open store (`bench.sqlite`-like files in `directory`) and closes it when released. Every
/// store has the same schema — table `Person` with an `INTEGER PRIMARY KEY` id and an index on `name` — and the
/// same durability: WAL journal, `synchronous = FULL`. Each method is one workload's timed operation and nothing
/// else; the harness checks the results.
public protocol SQLiteSubject: AnyObject {
    associatedtype Record: PersonRecord

    static var implementation: String { get }

    /// Opens the store in `directory`, creating it when needed.
    init(directory: URL) throws

    /// S1: inserts every record in one transaction.
    func insert(_ records: [Record]) throws
    /// S2: every record, decoded.
    func fetchAll() throws -> [Record]
    /// S3: the record of each id that exists, in one read transaction.
    func lookup(ids: [Int64]) throws -> [Record]
    /// S4: the records with each name, through the index, in one read transaction.
    func lookup(names: [String]) throws -> [Record]
    /// S5: replaces each record (found by id) in one transaction.
    func update(_ records: [Record]) throws
    /// S6: deletes each id, one statement per id, in one transaction; returns how many records were deleted.
    func delete(ids: [Int64]) throws -> Int
    /// S7: inserts each record in a transaction of its own.
    func insertEach(_ records: [Record]) throws

    /// Not a workload: empties the store between iterations of a per-operation benchmark.
    func removeAll() throws
}
