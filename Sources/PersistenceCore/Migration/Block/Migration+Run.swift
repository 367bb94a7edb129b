extension Migration {
    /// Runs a migration block once, on a backend's run: what it throws comes out as ``blockFailed(_:from:to:)``
    /// says, except the cancellation of the task awaiting an async `open()`.
    package static func run(_ block: MigrationBlock, on run: any MigrationBlockRun, from old: Int, to new: Int) throws {
        let migration = Migration(run: run, oldSchemaVersion: old, newSchemaVersion: new)
        defer { migration.close() }
        do {
            try block(migration, old)
        } catch let cancellation as CancellationError where CancellationFlag.current?.isCancelled == true {
            // The awaiting task was cancelled: not a failure of the migration code (which, throwing
            // CancellationError of its own accord, still fails as migrationFailed).
            throw cancellation
        } catch {
            throw blockFailed(error, from: old, to: new)
        }
    }

    /// What `create()` throws for an error of the migration block: `migrationFailed` keeping the cause, except
    /// `storageFull` (the store is unchanged and, on LMDB, the map grown: opening again can succeed), a conflict and a
    /// server's dropped connection.
    static func blockFailed(_ error: any Error, from old: Int, to new: Int) -> PersistenceError {
        let step = "the migration block failed migrating schema version \(old) to \(new)"
        guard let cause = error as? PersistenceError else {
            return PersistenceError(
                .migrationFailed, step + ": it threw \(type(of: error)); nothing was changed", underlyingError: error)
        }
        if [.storageFull, .conflict, .connectionLost].contains(cause.code) { return cause }
        var wrapped = PersistenceError(
            .migrationFailed, step + ": " + cause.message + "; nothing was changed", nativeCode: cause.nativeCode,
            nativeMessage: cause.nativeMessage, underlyingError: cause)
        if cause.code == .migrationFailed { wrapped.underlyingError = cause.underlyingError ?? cause }
        return wrapped
    }
}

extension RecordLayout {
    /// The values as the new schema stores them, or `migrationFailed` naming the first attribute that refuses its
    /// value (by storage class, never the value).
    package func conformingMigrated(_ values: [Value], change: SchemaDifference.EntityChange?) throws -> [Value] {
        let layout = self
        var conformed = values
        for (position, attribute) in layout.entity.attributes.enumerated() {
            if let value = attribute.conforming(values[position]) {
                conformed[position] = value
                continue
            }
            let name = "'\(layout.entity.name).\(attribute.name)'"
            if let retyped = change?.retypedAttributes.first(where: { $0.name == attribute.name }) {
                throw PersistenceError(
                    .migrationFailed,
                    "\(name) changed type from \(retyped.from.rawValue) to \(retyped.to.rawValue) and a record still "
                        + "holds \(values[position].storageClassName); convert it in the migration block "
                        + "(enumerateObjects)")
            }
            if values[position].isNull {
                throw PersistenceError(
                    .migrationFailed,
                    "\(name) is not optional and a record holds nil after the migration; declare a default in "
                        + "defaultValues or set it in the migration block")
            }
            throw PersistenceError(
                .migrationFailed,
                "\(name) is declared \(attribute.type.rawValue) and a record holds "
                    + "\(values[position].storageClassName) after the migration")
        }
        return conformed
    }
}
