internal import CLMDB
import Foundation
@_spi(PersistenceBackend) public import PersistenceCore

/// Aliases, stored as ``StoredAlias`` says.
extension LMDBStorage {
    static let aliasDatabaseName = StoredAlias.databaseName

    @_spi(PersistenceBackend) public func aliasTarget(named name: String) throws -> AliasTarget? {
        let key = StoredAlias.key(of: name, sealer)
        guard let aliasDBI, let stored = try transaction.get(aliasDBI, key) else { return nil }
        return try stored.withUnsafeBytes { try StoredAlias.open($0, key: key, sealer, name: name) }
    }

    @_spi(PersistenceBackend) public func setAliasTarget(_ target: AliasTarget?, named name: String) throws {
        let key = StoredAlias.key(of: name, sealer)
        guard let aliasDBI else { throw PersistenceError(.readOnly, "the store is read without its aliases") }
        if let target {
            try transaction.put(aliasDBI, key, StoredAlias.seal(target, key: key, sealer) { try nextNonce() })
        } else {
            try transaction.delete(aliasDBI, key)
        }
    }
}
