internal import CLMDB
public import Foundation
@_spi(PersistenceBackend) import PersistenceCore
@_spi(PersistenceBackend) import PersistenceEngine

extension LMDBBuilder {
    /// Whether the store's file exists.
    /// - Throws: `PersistenceError/Code/invalidName` or `PersistenceError/Code/directoryNotFound`, as ``create()``.
    public func storeExists() throws -> Bool {
        FileManager.default.fileExists(atPath: try validated().file.path)
    }

    /// The schema versions of the migration ``create()`` would run — the stored version, and ``schemaVersion`` —
    /// read from the store's metadata without running it or writing anything (no passphrase is needed); `nil` when
    /// there is no store or it is at this version with this schema.
    /// - Throws: What ``create()`` would throw before migrating: `PersistenceError/Code/migrationRequired` for a
    ///   changed schema at the same version, `PersistenceError/Code/invalidConfiguration` for a store of a newer
    ///   version, `PersistenceError/Code/corrupt`, `PersistenceError/Code/unsupportedFormatVersion`.
    public func pendingMigration() throws -> ClosedRange<Int>? {
        let (layouts, file) = try validated()
        guard FileManager.default.fileExists(atPath: file.path) else { return nil }
        let registration = StoreFiles.register(file)
        defer { registration.end() }
        let (environment, shared) = try openEnvironment(layouts, file)
        defer { try? EnvironmentRegistry.release(environment, closing: false) }
        return try StoreOpening(
            builder: self, environment: environment, layouts: layouts, isShared: shared, registration: registration
        ).pendingMigration()
    }

    /// Copies the store with `mdb_env_copy2` — the last committed snapshot, byte for byte, sealed values included (no
    /// key is needed or used) — to `<destination>/<databaseName>.lmdb`, a store of the same version and passphrase
    /// this builder opens with ``directory`` set to `destination`. The copy is written under a temporary name, synced
    /// and then named; other processes, and this process's databases of the store, may go on writing meanwhile.
    /// - Throws: `PersistenceError/Code/notFound` when there is no store; `PersistenceError/Code/invalidArgument`
    ///   when the destination holds a store of that name; `PersistenceError/Code/storageFull` or
    ///   `PersistenceError/Code/ioFailure`, with nothing left of the copy.
    public func copyStore(into destination: URL) throws {
        let (layouts, file) = try validated()
        guard FileManager.default.fileExists(atPath: file.path) else {
            throw PersistenceError(.notFound, "no LMDB store at \(file.path)")
        }
        let target = try StoreLocation(name: databaseName, directory: destination).file(extension: "lmdb")
        guard !FileManager.default.fileExists(atPath: target.path) else {
            throw PersistenceError(.invalidArgument, "\(target.path) exists: a copy never replaces a store")
        }
        let registration = StoreFiles.register(file)
        defer { registration.end() }
        let (environment, _) = try openEnvironment(layouts, file)
        defer { try? EnvironmentRegistry.release(environment, closing: false) }
        let temporary = NewStoreFile.temporary(for: target)
        defer { LMDBStoredStore.removeCopy(temporary) }
        try LMDBError.check(
            mdb_env_copy2(environment.handle, temporary.path, 0), "could not copy \(file.path)")
        try LMDBStoredStore.syncCopy(temporary, like: file)
        try NewStoreFile.moveIntoPlace(temporary, to: target)
    }
}
