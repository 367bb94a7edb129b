/// How an entity's records are stored at a point of a migration block's run, the same for every record of the
/// entity.
package enum MigrationForm: Sendable {
    /// As before the migration: the old layout, where the store keeps it.
    case old
    /// In the migration's own storage: the new values, then the old ones (none for objects the block created).
    case working
    /// In the migration's own storage, the new values only: an added entity, or one whose data the block deleted.
    case new
}

/// What an enumeration does with a record once the block's closure saw it.
package enum MigrationEnumerationResult {
    case unchanged
    case store([Value])
    case delete
}

/// One entity of a migration block's run — of the stored schema, of the model, or both — and what the block did to
/// it so far: what ``Migration`` checks its calls against. A backend's run keeps one per entity.
package protocol MigrationEntityState: AnyObject {
    /// The entity's name: the model's, or the stored schema's for a removed entity.
    var name: String { get }
    /// The stored schema's layout; `nil` for an added entity.
    var old: RecordLayout? { get }
    /// The model's layout; `nil` for a removed entity.
    var new: RecordLayout? { get }
    /// Old attribute names by new name (declared, or ``Migration/renameProperty(onType:from:to:)``).
    var renamed: [String: String] { get set }
    var form: MigrationForm { get }
    /// Whether an enumeration of this entity is under way.
    var isEnumerating: Bool { get }
    /// Attributes the block set on some record.
    var changedAttributes: Set<String> { get set }
    /// Whether the block changed, created or deleted records.
    var touched: Bool { get }
}

/// A backend's run of one migration block: the records of the stored schema and the model as the block sees and
/// changes them, inside the opening's migration. The run streams records and keeps what the block wrote in storage of
/// its own until the end, when the store switches to the new records at once — or, if anything failed, is left as it
/// was.
package protocol MigrationBlockRun: AnyObject {
    /// Entity names: the stored schema's, then the model's added ones.
    var entityNames: [String] { get }
    /// The entity named `name` in the stored schema or the model (a renamed entity by either name).
    /// - Throws: `unknownEntity`.
    func entity(_ name: String) throws -> any MigrationEntityState
    /// Calls `body` with each record of `entity` that exists when the enumeration begins, in primary-key order, as
    /// its old values (`nil` for objects the block created) and new values (`nil` for a removed entity).
    /// - Throws: `invalidArgument` for an enumeration nested in one of the same entity; what `body` throws.
    func enumerate(
        _ entity: any MigrationEntityState,
        _ body: (_ old: [Value]?, _ new: [Value]?) throws -> MigrationEnumerationResult
    ) throws
    /// Deletes every record of `entity`; objects created afterwards are kept. Whether there were any.
    func deleteData(_ entity: any MigrationEntityState) throws -> Bool
    /// Stores an object the block created: its values in the new layout, checked.
    /// - Throws: `duplicateKey` for a primary key a record has, `keyTooLarge`.
    func create(_ values: [Value], in entity: any MigrationEntityState) throws
    /// Rewrites an object the block created.
    func update(created values: [Value], in entity: any MigrationEntityState) throws
    /// Deletes an object the block created, by its primary key.
    func delete(created primaryKey: Value, in entity: any MigrationEntityState) throws
    /// Throws what ended the run (a failed step), so a block that caught it can't go on.
    func checkUsable() throws
}
