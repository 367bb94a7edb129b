@_spi(PersistenceBackend) import PersistenceCore
@_spi(PersistenceBackend) import PersistenceEngine

/// Commits by other connections: SQLite's `PRAGMA data_version` on the writer connection changes whenever another
/// connection — another process, or another `SQLiteDatabase` on the same file — commits, and never for the
/// writer's own commits.
extension SQLiteDatabase {
    @discardableResult
    public func checkForExternalChanges() throws -> Bool {
        try writer.withConnection { try noticeExternalCommits($0) }
    }

    /// Compares the writer's data version with the last one seen and, when another connection committed since,
    /// tells every observer. Call under the writer lock, outside a transaction.
    @discardableResult
    func noticeExternalCommits(_ connection: Connection) throws -> Bool {
        guard watchesOtherConnections else { return false }
        let version = try connection.scalar("PRAGMA data_version")
        defer { writer.state = version }
        guard let seen = writer.state, seen != version else { return false }
        observationHub.publish(.external)
        return true
    }
}
