import Foundation
package import PersistenceCommands
import PersistenceContentHash
import PersistenceCore
@_spi(PersistenceBackend) import PersistenceEngine
package import PersistenceLMDB
import PersistenceSQLite

/// The store tool's maintenance of a store in place: `rekey` (an encrypted LMDB store's passphrase) and `compact`
/// (a store rewritten without its free space). Each says in one line what it changed; neither ever shows a
/// passphrase.
package enum StoreMaintenance {
    /// The key derivations `rekey --key-derivation` offers: the presets of ``KeyDerivation``.
    package enum KeyDerivationPreset: String, CaseIterable, Sendable {
        case rfc9106 = "rfc9106"
        case owaspMinimum = "owasp-minimum"
        case sensitive = "sensitive"
        case owaspScrypt = "owasp-scrypt"

        package var keyDerivation: KeyDerivation {
            switch self {
            case .rfc9106: .rfc9106
            case .owaspMinimum: .owaspMinimum
            case .sensitive: .sensitive
            case .owaspScrypt: .owaspScrypt
            }
        }
    }

    /// Changes an encrypted LMDB store's passphrase (see `LMDBStoredStore.changePassphrase`).
    ///
    /// Whether the store is encrypted is found out first, read-only, so a plain store is refused before any
    /// passphrase is asked for.
    /// - Parameters:
    ///   - current: Where the passphrase that opens the store now comes from.
    ///   - new: Where the new passphrase comes from (a prompt asks twice).
    ///   - keyDerivation: The new passphrase's key derivation; `nil` keeps the store's.
    /// - Returns: The line to print.
    /// - Throws: `invalidConfiguration` for an SQLite or plain LMDB store, and what the change throws.
    package static func rekey(
        _ locator: StoreLocator, current: SecretSource, new: SecretSource, keyDerivation: KeyDerivation?
    ) throws -> String {
        guard locator.backend == .lmdb, let file = locator.file as URL? else {
            throw PersistenceError(
                .invalidConfiguration, "\(locator) is not encrypted: only encrypted LMDB stores have a passphrase")
        }
        try StoreAccess.checkReadable(file)
        do {
            try LMDBStoredStore(file: file, passphrase: nil, semaphorePrefix: StoreOpener.lmdbSemaphorePrefix).close()
            throw PersistenceError(
                .invalidConfiguration, "\(locator) is not encrypted, so it has no passphrase to change")
        } catch let error as PersistenceError where error.code == .wrongPassphrase {
            // Encrypted: what rekey is for.
        }
        let oldSecret = try current.read(label: "Current passphrase of \(file.path)")
        let newSecret = try new.readNew(label: "New passphrase of \(file.path)")
        let change = try LMDBStoredStore.changePassphrase(
            file: file, from: oldSecret, to: newSecret, keyDerivation: keyDerivation,
            semaphorePrefix: StoreOpener.lmdbSemaphorePrefix)
        var line = "changed the passphrase of \(locator): key derivation \(change.keyDerivationAfter)"
        if change.keyDerivationAfter != change.keyDerivationBefore { line += " (was \(change.keyDerivationBefore))" }
        if change.formatAfter != change.formatBefore {
            line += "; format \(change.formatBefore) → \(change.formatAfter)"
        }
        return line + "; no value was re-encrypted"
    }

    /// Rewrites a store without its free space, in place, all or nothing.
    ///
    /// SQLite: `VACUUM` and a truncating checkpoint; the content hash is compared before and after. LMDB: a
    /// compacting copy checked byte for byte against the store, and — when the store is plain or `passphrase` is
    /// given — by content hash, before it replaces the store; an encrypted store without a passphrase is checked byte
    /// for byte only (its sealed values are copied as they are).
    /// - Returns: The lines to print.
    package static func compact(_ locator: StoreLocator, passphrase: SecretSource?) throws -> [String] {
        guard let file = locator.file as URL? else {
            throw PersistenceError(.invalidArgument, "\(locator) is not a file: only SQLite and LMDB stores compact")
        }
        try StoreAccess.checkReadable(file)
        switch locator.backend {
        case .sqlite:
            let before = try digest(SQLiteStoredStore(file: file))
            let compaction = try SQLiteStoredStore.compact(file: file)
            let after = try digest(SQLiteStoredStore(file: file))
            guard before == after else {
                throw PersistenceError(
                    .corrupt, "the content hash changed from \(before) to \(after) while compacting \(locator)")
            }
            var lines = [
                sizes(locator, compaction.bytesBefore, compaction.bytesAfter), "content hash \(after) unchanged",
            ]
            if !compaction.checkpointed {
                lines.append("a reader held the write-ahead log back: it empties at the next checkpoint")
            }
            return lines
        case .lmdb:
            let secret = try passphrase?.read(label: "Passphrase of \(file.path)")
            let expected: String?
            do {
                expected = try digest(LMDBStoredStore(file: file, passphrase: secret))
            } catch let error as PersistenceError where error.code == .wrongPassphrase && secret == nil {
                expected = nil
            }
            let compaction = try LMDBStoredStore.compact(file: file) { copy in
                guard let expected else { return }
                let found = try digest(LMDBStoredStore(file: copy, passphrase: secret))
                guard found == expected else {
                    // The copy holds the store byte for byte: the store changed after it was hashed.
                    throw PersistenceError(.busy, "\(locator) changed while it was being compacted: run compact again")
                }
            }
            let proof =
                expected.map { "content hash \($0) unchanged; every key and value compared byte for byte" }
                ?? "encrypted and no passphrase given: every sealed key and value compared byte for byte, "
                + "content hash not checked"
            return [sizes(locator, compaction.bytesBefore, compaction.bytesAfter), proof]
        default:
            throw PersistenceError(.invalidArgument, "\(locator) is not a file: only SQLite and LMDB stores compact")
        }
    }

    /// The content hash of a store, which is closed afterwards.
    private static func digest(_ store: any StoredStore) throws -> String {
        defer { try? store.close() }
        return try ContentHash.of(store)
    }

    private static func sizes(_ locator: StoreLocator, _ before: Int64, _ after: Int64) -> String {
        "compacted \(locator): \(StoredStoreSize.bytes(before)) → \(StoredStoreSize.bytes(after)) "
            + "(\(StoredStoreSize.bytes(max(0, before - after))) given back)"
    }
}
