@_spi(PersistenceBackend) package import PersistenceCore

/// The storage a backend gives one step of a mapping-model migration, inside the transaction that opens the store
/// (nothing here commits). ``MigrationStepRunner`` drives it through the step's three stages.
///
/// Every destination entity whose table changes gets a new table without indexes (the backend names it); the
/// source tables stay as they were until ``replaceTables()``, which drops the source tables not kept, gives the new
/// tables their entities' names and builds indexes.
package protocol MigrationStepBackend: AnyObject {
    /// The number of rows in a source entity's table, or in a destination entity's table as the step left it.
    func count(_ layout: RecordLayout, source: Bool) throws -> Int
    /// Turns a source entity's table into a destination entity's in place, without copying its rows, when the
    /// backend can (PostgreSQL: `ALTER TABLE`); returns the number of rows it rewrote, or `nil` when it can't and
    /// the destination gets a new table. Asked only in steps without entity mappings (mapping code may read any source
    /// table as it was), for destinations inferred from a source; a destination changed in place has its indexes
    /// and its name when this returns, and ``replaceTables()`` leaves it alone.
    func alterInPlace(_ destination: MigrationStepPlan.Destination) throws -> Int?
    /// Creates the new, index-less table of a destination entity that gets one.
    func createTable(_ destination: RecordLayout) throws
    /// Fills a destination's new table from a source table in one statement: each destination column takes the
    /// source column at `columns[i].source` — or `columns[i].fallback` where that is `nil` or the source is `NULL`
    /// (`.null` for no fallback). Values keep their types. Returns the number of rows copied.
    func copyTable(from source: RecordLayout, to destination: RecordLayout, columns: [(source: Int?, fallback: Value)])
        throws -> Int
    /// Calls `body` with each record of a source entity's table, in no particular order.
    func forEachSourceRecord(_ layout: RecordLayout, _ body: (Record) throws -> Void) throws
    /// Inserts values, already checked against the destination's attributes, into its table.
    /// - Parameter deferred: Whether the backend may send the insert later, with others, before its next statement
    ///   (a record a mapping streams), or must insert it now (a record mapping code inserts, which may catch the
    ///   error).
    /// - Throws: `duplicateKey` for a key already there (when deferred, perhaps on a later call).
    func insert(_ values: [Value], into layout: RecordLayout, deferred: Bool) throws

    /// The record with this primary key, in a source table or a destination's table as the step left it.
    func record(_ layout: RecordLayout, source: Bool, key: Value) throws -> Record?
    /// The records matching a condition (all when `nil`), in primary-key order.
    func records(_ layout: RecordLayout, source: Bool, where condition: ResolvedCondition?) throws -> [Record]
    /// Replaces the destination record with the same primary key; returns whether there was one.
    func update(_ record: Record) throws -> Bool
    /// Deletes a destination record; returns whether there was one.
    func delete(_ layout: RecordLayout, key: Value) throws -> Bool

    /// Starts remembering which records custom mappings create, for their policies' `fixReferences`.
    func startTracking() throws
    /// Remembers that the custom mapping at `mapping` (its position in the step's mapping model) created a record.
    func track(mapping: Int, entity: String, key: Value) throws
    /// How many records the custom mapping at `mapping` created.
    func trackedCount(mapping: Int) throws -> Int
    /// Calls `body` with the entity and primary key of each record the custom mapping at `mapping` created, in the
    /// order it created them.
    func forEachTracked(mapping: Int, _ body: (String, Value) throws -> Void) throws
    /// Forgets the tracked records.
    func endTracking() throws

    /// Drops the source tables not kept, gives the new tables their entities' names, and builds the indexes the
    /// destination entities have and their tables don't.
    func replaceTables() throws

    /// Makes every alias naming records of entity `old` name them as entity `new`: the step renamed the entity
    /// (``Entity/previousName``), and its records kept their primary keys.
    func renameAliasTargets(from old: String, to new: String) throws
}

extension MigrationStepBackend {
    /// No change in place: every changed table is copied.
    package func alterInPlace(_ destination: MigrationStepPlan.Destination) throws -> Int? { nil }
}
