internal import CLMDB
import Foundation
public import PersistenceCore

/// Aliases in the named database `aliases`: the key is the index hash of the alias name (a keyed hash when the
/// store is encrypted, so names don't show), the value the record codec's encoding of `[entity, isList, keys…]`,
/// sealed like a record (authenticating `NUL "alias" NUL` and the key) when the store is encrypted.
extension LMDBContext {
    static let aliasDatabaseName = "aliases"
    private static let aliasAuthenticationPrefix = Array("\u{0}alias\u{0}".utf8)

    public func aliasTarget(named name: String) throws -> AliasTarget? {
        try use(writing: false)
        let key = sealer.indexKey([.text(name)])
        guard let stored = try transaction.get(aliasDBI, key) else { return nil }
        let values = try stored.withUnsafeBytes { stored in
            try withAuthenticatedData(key) { try sealer.open(stored, authenticating: $0) }
        }
        guard values.count >= 2, case .text(let entity) = values[0], case .integer(let list) = values[1] else {
            throw PersistenceError(.corrupt, "the stored alias '\(name)' is damaged")
        }
        return AliasTarget(entity: entity, keys: Array(values[2...]), isList: list != 0)
    }

    public func setAliasTarget(_ target: AliasTarget?, named name: String) throws {
        try use(writing: true)
        let key = sealer.indexKey([.text(name)])
        if let target {
            let values = [Value.text(target.entity), .integer(target.isList ? 1 : 0)] + target.keys
            let sealed = try withAuthenticatedData(key) { aad in
                try sealer.seal(values, authenticating: aad) { try nextNonce() }
            }
            try transaction.put(aliasDBI, key, sealed)
        } else {
            try transaction.delete(aliasDBI, key)
        }
        recorder?.recordAlias(name)
    }

    private func withAuthenticatedData<R>(_ key: Data, _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R {
        try Data(Self.aliasAuthenticationPrefix + key).withUnsafeBytes(body)
    }
}
