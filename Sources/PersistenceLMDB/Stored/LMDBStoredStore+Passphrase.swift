internal import CLMDB
package import Foundation
@_spi(PersistenceBackend) import PersistenceCore
@_spi(PersistenceBackend) import PersistenceEngine

extension LMDBStoredStore {
    /// What a passphrase change did, for the tool to say (never a passphrase or key).
    package struct PassphraseChange: Sendable {
        /// The store's format before and after (a format-1 or -2 store becomes format 3; format 4 stays 4).
        package var formatBefore: UInt64
        package var formatAfter: UInt64
        /// The key derivation before and after, e.g. `Argon2id(t = 3, m = 65536 KiB)`.
        package var keyDerivationBefore: String
        package var keyDerivationAfter: String
    }

    /// Changes the passphrase of the encrypted store at `file` without the app's entity types, exactly as
    /// `LMDBDatabase.changePassphrase(from:to:keyDerivation:)` does: the data keys are unwrapped with
    /// `currentPassphrase` and wrapped anew under `newPassphrase`, and that one key record is rewritten in one write
    /// transaction; no value is re-encrypted. A format-1 store (keys derived from the passphrase) or format-2 store
    /// becomes format 3, keeping its keys, cipher and index hash; a format-4 store keeps its format and records the
    /// new record's kind as its key format.
    ///
    /// Both key derivations run before the write lock is taken. Opening is an app's opening — read-write, the lock
    /// file beside the store, registered as open in this process — and writes nothing; on any error nothing of the
    /// data file has changed and `currentPassphrase` still opens it. Databases open on the store in other processes
    /// go on working (they hold the data keys, which don't change).
    ///
    /// - Parameters:
    ///   - file: The store's data file.
    ///   - currentPassphrase: The passphrase that opens the store now.
    ///   - newPassphrase: The passphrase that opens it afterwards.
    ///   - keyDerivation: The new passphrase's key derivation; `nil` keeps the store's.
    ///   - semaphorePrefix: As ``init(file:passphrase:semaphorePrefix:)``'s.
    /// - Throws: `PersistenceError` — `notFound`; `storeInUse` while this process has the store open;
    ///   `invalidSchema` for an LMDB file Persistence did not create; `invalidConfiguration` for an unencrypted
    ///   store, an empty passphrase or a key derivation out of range; `wrongPassphrase`; `corrupt`;
    ///   `unsupportedFormatVersion`; `busy` when other processes kept changing the passphrase meanwhile.
    package static func changePassphrase(
        file: URL, from currentPassphrase: String, to newPassphrase: String, keyDerivation: KeyDerivation?,
        semaphorePrefix: String? = nil
    ) throws -> PassphraseChange {
        try LMDBBuilder.validateSemaphorePrefix(semaphorePrefix)
        _ = try PassphraseKey.normalized(currentPassphrase)
        _ = try PassphraseKey.normalized(newPassphrase)
        try keyDerivation?.validate()
        let session = try MaintenanceSession(file: file, semaphorePrefix: semaphorePrefix)
        defer { session.close() }
        let environment = session.environment
        // As `LMDBDatabase.changePassphrase`: another process may change the passphrase between the check and the
        // write; the write then finds another record than the one checked, and the check starts again.
        for _ in 0..<3 {
            let (format, current) = try environment.read { transaction in
                try MaintenanceSession.keyState(file, MaintenanceSession.meta(file, transaction), transaction)
            }
            guard let current else {
                throw PersistenceError(.invalidConfiguration, "\(file.path) is not encrypted, so it has no passphrase")
            }
            let keys = try current.unlock(passphrase: currentPassphrase)
            let replacement = StoreKeyRecord.wrapped(
                try WrappedKeyRecord.wrapping(
                    keys, passphrase: newPassphrase, parameters: keyDerivation ?? current.parameters))
            let after = try environment.writer.withLock {
                try environment.write { transaction -> UInt64? in
                    let meta = try MaintenanceSession.meta(file, transaction)
                    guard try MaintenanceSession.keyState(file, meta, transaction).record == current else { return nil }
                    try replacement.write(meta, transaction)
                    return try StoreMetadata.readNumber(.format, meta, transaction)
                }
            }
            if let after {
                return PassphraseChange(
                    formatBefore: format, formatAfter: after, keyDerivationBefore: "\(current.parameters)",
                    keyDerivationAfter: "\(replacement.parameters)")
            }
        }
        throw PersistenceError(.busy, "the passphrase kept changing in another process; try again")
    }
}
