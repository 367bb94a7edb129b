/// A secondary index or unique constraint over one or more attributes of an entity.
///
/// ```swift
/// static let indexes: [Index] = [.on("name"), .on("lastName", "firstName"), .unique("email")]
/// ```
public struct Index: Sendable, Hashable, Codable {
    /// The indexed attributes, in key order.
    public var attributes: [String]
    /// Whether two records may not share the same indexed values.
    public var isUnique: Bool

    /// Creates an index.
    public init(attributes: [String], isUnique: Bool) {
        self.attributes = attributes
        self.isUnique = isUnique
    }

    /// An index that speeds up lookups and sorts on the attributes.
    public static func on(_ attributes: String...) -> Index { Index(attributes: attributes, isUnique: false) }

    /// A unique constraint (with its index): no two records may have equal values in these attributes.
    /// Records whose value is `nil` never collide.
    public static func unique(_ attributes: String...) -> Index { Index(attributes: attributes, isUnique: true) }

    /// A stable name for the index, derived from the entity and attributes.
    public func name(in entity: String) -> String {
        (isUnique ? "unique_" : "index_") + entity + "_" + attributes.joined(separator: "_")
    }
}
