public import Foundation

/// One LMDB implementation of the L workloads and of K: raw plain, raw + AES-GCM, Persistence encrypted or plain.
///
/// A subject owns one open store in `directory` and closes it when released. Each method is one workload's timed
/// operation; the harness checks the results.
public protocol LMDBSubject: AnyObject {
    static var implementation: String { get }

    /// Opens the store in `directory`, creating it when needed (K times this on an existing store).
    init(directory: URL) throws

    /// L1: puts every record in one transaction.
    func put(_ people: [Person]) throws
    /// L4: the record of each id that exists, in one read transaction.
    func get(ids: [Int64]) throws -> [Person]
    /// L5: the record of each id that exists, each in a read transaction of its own.
    func getEach(ids: [Int64]) throws -> [Person]
    /// L6: every record, decoded, in key order.
    func scan() throws -> [Person]

    /// Not a workload: empties the store between iterations of a per-operation benchmark.
    func removeAll() throws
}
