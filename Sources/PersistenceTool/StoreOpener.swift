import Foundation
package import PersistenceCommands
package import PersistenceCore
@_spi(PersistenceBackend) package import PersistenceEngine
package import PersistenceLMDB
import PersistencePostgres
import PersistenceSQLite

/// Opens stores for the commands: read-only through their stored schema, asking for a passphrase only when the store
/// turns out to be encrypted.
package struct StoreOpener: Sendable {
    /// Where the source's passphrase comes from; `nil`: ask on the terminal when the store is encrypted.
    package var passphrase: SecretSource?

    /// Whether an encrypted store without a passphrase source is asked for one on the terminal (else it is
    /// `wrongPassphrase`).
    package var prompts = true

    /// The semaphore prefix LMDB stores are opened with: ``lmdbSemaphorePrefix`` unless set.
    package var semaphorePrefix = Self.lmdbSemaphorePrefix

    /// `PERSISTENCE_LMDB_SEMAPHORE_PREFIX`: the app group of an app that opens its LMDB store with
    /// `LMDBBuilder.semaphorePrefix` (Apple's platforms, and the vendored LMDB). When the tool is the first process to
    /// open such a store, LMDB names the store's semaphores after it, so the app, opening the store meanwhile in its
    /// sandbox, can use them; without it the app can't open the store until the tool has closed it. `nil` when unset.
    package static var lmdbSemaphorePrefix: String? {
        ProcessInfo.processInfo.environment["PERSISTENCE_LMDB_SEMAPHORE_PREFIX"]
    }

    package init(passphrase: SecretSource? = nil) { self.passphrase = passphrase }

    /// Opens plain stores only: an encrypted one is `wrongPassphrase`, never a prompt.
    package static var withoutPrompt: StoreOpener {
        var opener = StoreOpener()
        opener.prompts = false
        return opener
    }

    /// Opens the store `locator` names, read-only: nothing is written, and no file is made beside a store's file.
    /// - Throws: ``PersistenceError/Code/permissionDenied`` for a file (or a directory on its path) this process may
    ///   not read, on every backend; what the backend's opening throws.
    package func open(_ locator: StoreLocator) throws -> any StoredStore {
        if let file = locator.file { try StoreAccess.checkReadable(file) }
        switch locator.backend {
        case .sqlite:
            return try SQLiteStoredStore(file: locator.requiredFile)
        case .lmdb:
            let file = try locator.requiredFile
            if let passphrase {
                return try LMDBStoredStore(
                    file: file, passphrase: try passphrase.read(label: "Passphrase of \(file.path)"),
                    semaphorePrefix: semaphorePrefix)
            }
            do {
                return try LMDBStoredStore(file: file, passphrase: nil, semaphorePrefix: semaphorePrefix)
            } catch let error as PersistenceError where error.code == .wrongPassphrase && prompts {
                // Encrypted: now it is worth asking.
                return try LMDBStoredStore(
                    file: file, passphrase: try SecretSource.prompt.read(label: "Passphrase of \(file.path)"),
                    semaphorePrefix: semaphorePrefix)
            }
        case .postgres:
            return try PostgresStoredStore(
                url: locator.url ?? "", password: try SecretSource.serverPassword(passphrase),
                schema: locator.schema ?? "public")
        }
    }
}

/// What a new store is made with: its place and, for an encrypted LMDB store, its passphrase and key derivation.
package struct StoreDestination: Sendable {
    package var locator: StoreLocator
    /// The new LMDB store's passphrase; `nil` makes a plain (unencrypted) LMDB store.
    package var passphrase: SecretSource?
    package var keyDerivation: KeyDerivation = .rfc9106

    package init(_ locator: StoreLocator, passphrase: SecretSource?) {
        self.locator = locator
        self.passphrase = passphrase
    }

    /// Starts the new store for `layouts` at `schemaVersion`.
    package func writer(layouts: [RecordLayout], schemaVersion: Int) throws -> any StoredStoreWriter {
        switch locator.backend {
        case .sqlite:
            guard passphrase == nil else {
                throw PersistenceError(
                    .invalidArgument, "SQLite stores aren't encrypted: a passphrase for \(locator) would be ignored")
            }
            return try SQLiteStoredStoreWriter(
                file: locator.requiredFile, layouts: layouts, schemaVersion: schemaVersion)
        case .lmdb:
            let file = try locator.requiredFile
            let secret = try passphrase?.readNew(label: "New passphrase of \(file.path)")
            return try LMDBStoredStoreWriter(
                file: file, layouts: layouts, schemaVersion: schemaVersion, passphrase: secret,
                keyDerivation: keyDerivation)
        case .postgres:
            // The destination's "passphrase" options give the server's password here.
            return try PostgresStoredStoreWriter(
                url: locator.url ?? "", password: try SecretSource.serverPassword(passphrase),
                schema: locator.schema ?? "public", layouts: layouts, schemaVersion: schemaVersion)
        }
    }
}
