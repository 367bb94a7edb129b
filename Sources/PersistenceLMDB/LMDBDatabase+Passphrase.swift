internal import CLMDB
import Foundation
@_spi(PersistenceBackend) import PersistenceCore
@_spi(PersistenceBackend) import PersistenceEngine

extension LMDBDatabase {
    /// Changes the store's passphrase in one transaction: from the moment it commits, only `newPassphrase` opens
    /// the store.
    ///
    /// ```swift
    /// try db.changePassphrase(from: oldSecret, to: newSecret)
    /// ```
    ///
    /// The store's data keys are wrapped under a key derived from the passphrase, so a change rewrites that one
    /// record and no value: it takes two key derivations (about 0.12 s each with ``KeyDerivation/rfc9106``, done
    /// before the write lock is taken) and one small write, whatever the size of the store. The write is atomic: a
    /// crash at any point leaves exactly one of the two passphrases working, never neither. A store of an older
    /// format (1: keys derived from the passphrase; 2: scrypt only) is upgraded to format 3 in the same transaction,
    /// keeping its keys, cipher and index hash, so nothing else is rewritten.
    ///
    /// **The current passphrase is required**, as with any credential change: it is checked against the store on
    /// disk (`wrongPassphrase` when it does not open it, nothing written), so an open handle alone, left unattended
    /// in an unlocked app, cannot lock the user out of their data.
    ///
    /// **Open handles keep working.** This database, and others already open on the store in this process or in
    /// other processes, hold the data keys, which do not change: they go on reading and writing. Only opening the
    /// store again needs the new passphrase.
    ///
    /// **What a change does not do.** The data keys stay the same, so a change does not protect data from someone
    /// who already has the old passphrase *and* a copy of the store file from before the change (or, for a store
    /// created before key wrapping, the old passphrase and the current file, whose keys were derived from it).
    /// LMDB may also keep the old key record in free pages of the file until they are reused. After a leak of both
    /// passphrase and file, copy the data into a new store with a new passphrase instead.
    ///
    /// - Parameters:
    ///   - currentPassphrase: The passphrase that opens the store now; compared after Unicode NFC normalization.
    ///   - newPassphrase: Any non-empty Unicode text; normalized to NFC like every passphrase.
    ///   - keyDerivation: The key derivation for the new passphrase; `nil` keeps the store's current one.
    /// - Throws: `PersistenceError` — `invalidConfiguration` (the store is not encrypted, a passphrase is empty,
    ///   `keyDerivation` is out of range), `wrongPassphrase` (`currentPassphrase` does not open the store), `corrupt`
    ///   (a damaged key record), `busy` (the passphrase kept changing in other processes meanwhile), or an LMDB
    ///   error from the write. On any error the store is unchanged and the current passphrase still opens it.
    public func changePassphrase(
        from currentPassphrase: String, to newPassphrase: String, keyDerivation: KeyDerivation? = nil
    ) throws {
        try changePassphrase(from: currentPassphrase, to: newPassphrase, keyDerivation: keyDerivation) {}
    }

    /// Changes the store's passphrase, off Swift's cooperative thread pool; see
    /// ``changePassphrase(from:to:keyDerivation:)-3vte``.
    ///
    /// - Parameters:
    ///   - currentPassphrase: The passphrase that opens the store now.
    ///   - newPassphrase: Any non-empty Unicode text.
    ///   - keyDerivation: The key derivation for the new passphrase; `nil` keeps the store's current one.
    /// - Throws: As ``changePassphrase(from:to:keyDerivation:)-3vte``, and `CancellationError` when the task is cancelled
    ///   before the change starts.
    public func changePassphrase(
        from currentPassphrase: String, to newPassphrase: String, keyDerivation: KeyDerivation? = nil
    ) async throws {
        // The reads queue, not the serial writes queue: most of the time goes to the key derivations, before the write lock is
        // taken, and must not hold up the async writes queued behind it.
        try await runner.read {
            try self.changePassphrase(from: currentPassphrase, to: newPassphrase, keyDerivation: keyDerivation)
        }
    }

    /// ``changePassphrase(from:to:keyDerivation:)-3vte`` with a hook that runs inside the write transaction after the
    /// new key record is written and before the commit: tests throw from it to check the change is atomic.
    func changePassphrase(
        from currentPassphrase: String, to newPassphrase: String, keyDerivation: KeyDerivation?,
        beforeCommit: () throws -> Void
    ) throws {
        guard isEncrypted else {
            throw PersistenceError(.invalidConfiguration, "the store is not encrypted, so it has no passphrase")
        }
        _ = try PassphraseKey.normalized(currentPassphrase)
        _ = try PassphraseKey.normalized(newPassphrase)
        try keyDerivation?.validate()
        // Another process may change the passphrase between the check and the write: the write then sees a record
        // other than the one checked, and the check starts again against the new one.
        for _ in 0..<3 {
            let current = try currentKeyRecord()
            // Both key derivations happen here, before the write lock: writers wait only for the write itself.
            let keys = try current.unlock(passphrase: currentPassphrase)
            let replacement = try WrappedKeyRecord.wrapping(
                keys, passphrase: newPassphrase, parameters: keyDerivation ?? current.parameters)
            let committed = try environment.writer.withLock {
                try environment.write { transaction -> Bool in
                    let meta = try environment.database(named: StoreMetadata.databaseName)
                    guard try Self.keyRecord(meta, transaction) == current else { return false }
                    try StoreKeyRecord.wrapped(replacement).write(meta, transaction)
                    try beforeCommit()
                    return true
                }
            }
            if committed { return }
        }
        throw PersistenceError(.busy, "the passphrase kept changing in another process; try again")
    }

    /// The store's key record as committed now.
    private func currentKeyRecord() throws -> StoreKeyRecord {
        try environment.read { transaction in
            try Self.keyRecord(try environment.database(named: StoreMetadata.databaseName), transaction)
        }
    }

    private static func keyRecord(_ meta: MDB_dbi, _ transaction: Transaction) throws -> StoreKeyRecord {
        let format = try StoreMetadata.readNumber(.format, meta, transaction) ?? StoreMetadata.derivedKeyFormat
        guard format <= StoreMetadata.formatVersion else {
            throw PersistenceError(
                .unsupportedFormatVersion,
                "the store has format version \(format); this version of Persistence reads up to "
                    + "\(StoreMetadata.formatVersion)")
        }
        let keyFormat = try StoreMetadata.keyFormat(of: format, meta, transaction)
        guard let record = try StoreKeyRecord.read(format: keyFormat, meta, transaction) else {
            // This handle was opened with a passphrase, so the record is gone from the file.
            throw PersistenceError(.corrupt, "the store's key record is missing")
        }
        return record
    }
}
