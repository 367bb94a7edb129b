/// What an alias names, as a backend stores it: an entity and the primary keys of one record or of an ordered list.
///
/// Users set and read aliases through ``DatabaseContext/setAlias(_:to:)-(_,E)`` and
/// ``DatabaseContext/alias(_:as:)``; backends store this value under the alias's name in the same transaction
/// as the data (see `setAliasTarget(_:named:)`).
public struct AliasTarget: Sendable, Hashable {
    /// The entity name of the records.
    public var entity: String
    /// The records' primary keys, as stored; one for a single-record alias.
    public var keys: [Value]
    /// Whether the alias names an ordered list (possibly of one record, or empty) rather than one record.
    public var isList: Bool

    /// Creates a target.
    public init(entity: String, keys: [Value], isList: Bool) {
        self.entity = entity
        self.keys = keys
        self.isList = isList
    }

    /// The longest alias name, in UTF-8 bytes.
    public static let maximumNameLength = 255

    /// Checks an alias name: not empty, at most ``maximumNameLength`` UTF-8 bytes, no NUL character.
    /// - Throws: ``PersistenceError/Code/invalidName``.
    public static func validate(name: String) throws {
        guard !name.isEmpty, name.utf8.count <= maximumNameLength, !name.utf8.contains(0) else {
            throw PersistenceError(
                .invalidName,
                "an alias name must be 1 to \(maximumNameLength) UTF-8 bytes long, without NUL characters")
        }
    }
}
