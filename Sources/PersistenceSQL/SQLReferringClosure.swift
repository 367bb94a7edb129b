@_spi(PersistenceBackend) import PersistenceCore

/// The statement that finds, in one round trip, every record of a table that refers through a foreign key of its
/// own table to one of some keys — or, transitively, to such a record: what a cascade on a self-referring
/// relationship (a tree, a chain) reaches, at any depth, where a walk would query once per level.
///
/// `UNION` (not `UNION ALL`) keeps each key once, so a cycle ends the recursion.
package enum SQLReferringClosure {
    /// The `WITH RECURSIVE` select of the closure's primary keys; the `seeds` keys are bound in order.
    /// - Parameters:
    ///   - table: The quoted (and, on PostgreSQL, qualified) table.
    ///   - key: The quoted primary-key column.
    ///   - foreignKey: The quoted foreign-key column, referring to `key` of the same table.
    package static func select(
        table: String, key: String, foreignKey: String, seeds: Int, dialect: SQLDialect, lateral: Bool = false
    ) -> String {
        let placeholders = (1...max(seeds, 1)).map(dialect.placeholder).joined(separator: ", ")
        // PostgreSQL plans the recursive term once, not knowing the work table holds a level's few rows: without
        // statistics (a table just filled) a join becomes a merge over the whole index per level — 67 s down a
        // chain of 20,000 where the lookups take 0.1 s. A lateral subquery fenced by `OFFSET 0` (so that it isn't
        // pulled up into a join) is one index lookup per row found. SQLite has no LATERAL, and loops over the work
        // table through the index anyway.
        let step =
            lateral
            ? "SELECT persistence_referring.\(key) FROM persistence_closure CROSS JOIN LATERAL (SELECT \(key) FROM "
                + "\(table) WHERE \(foreignKey) = persistence_closure.closure_key OFFSET 0) AS persistence_referring"
            : "SELECT persistence_referring.\(key) FROM \(table) AS persistence_referring JOIN persistence_closure "
                + "ON persistence_referring.\(foreignKey) = persistence_closure.closure_key"
        return "WITH RECURSIVE persistence_closure(closure_key) AS (SELECT \(key) FROM \(table) WHERE \(foreignKey) "
            + "IN (\(placeholders)) UNION \(step)) SELECT closure_key FROM persistence_closure"
    }
}
