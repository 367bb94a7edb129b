/// What one delete changed, per entity: the records it deleted — those it was asked for and those its delete rules
/// cascaded to — and the records whose references to them a `nullify` rule set to `nil`.
///
/// ```swift
/// let report = try db.write { try $0.deleteReporting(Customer.self, where: Field("region") == "north") }
/// print(report.deleted)      // ["Customer": 3, "Order": 12, "OrderLine": 40]
/// print(report.nullified)    // ["Invoice": 2]
/// ```
public struct DeletionReport: Sendable, Hashable, CustomStringConvertible {
    /// How many records were deleted, by entity name (entities with none are absent).
    public internal(set) var deleted: [String: Int] = [:]
    /// How many records that stay had a reference set to `nil` by a `nullify` rule, by entity name (each record
    /// counted once, however many of its references were set).
    public internal(set) var nullified: [String: Int] = [:]

    /// An empty report.
    public init() {}

    /// Every record deleted, of every entity.
    public var deletedCount: Int { deleted.values.reduce(0, +) }

    public var description: String {
        func list(_ counts: [String: Int]) -> String {
            counts.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", ")
        }
        return "deleted [\(list(deleted))], nullified [\(list(nullified))]"
    }

    /// Counts `count` more records of `entity` deleted.
    mutating func countDeleted(_ count: Int, of entity: String) {
        if count > 0 { deleted[entity, default: 0] += count }
    }
}
