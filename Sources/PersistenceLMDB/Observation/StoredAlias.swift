import Foundation
import PersistenceCore

/// How an alias is stored in the named database `aliases`: the key is the index hash of the alias name (a keyed hash
/// when the store is encrypted, so names don't show), the value the record codec's encoding of `[entity, isList,
/// keys…]`, sealed like a record (authenticating `NUL "alias" NUL` and the key) when the store is encrypted.
///
/// One place for the context, which reads and writes aliases, and for a migration, which rewrites the targets of an
/// entity it renames.
enum StoredAlias {
    static let databaseName = "aliases"
    private static let authenticationPrefix = Array("\u{0}alias\u{0}".utf8)

    /// The key of the alias named `name`.
    static func key(of name: String, _ sealer: ValueSealer) -> Data { sealer.indexKey([.text(name)]) }

    /// The target stored at `key`.
    /// - Throws: `corrupt` naming `name` (or "an alias") for a value that isn't an alias target.
    static func open(_ stored: UnsafeRawBufferPointer, key: Data, _ sealer: ValueSealer, name: String? = nil) throws
        -> AliasTarget
    {
        let values = try withAuthenticatedData(key) { try sealer.open(stored, authenticating: $0) }
        guard values.count >= 2, case .text(let entity) = values[0], case .integer(let list) = values[1] else {
            throw PersistenceError(.corrupt, "the stored alias \(name.map { "'\($0)'" } ?? "") is damaged")
        }
        return AliasTarget(entity: entity, keys: Array(values[2...]), isList: list != 0)
    }

    /// The stored value of `target` at `key`, sealed with fresh nonces when the store is encrypted.
    static func seal(_ target: AliasTarget, key: Data, _ sealer: ValueSealer, nonce: () throws -> Nonce) throws -> Data
    {
        let values = [Value.text(target.entity), .integer(target.isList ? 1 : 0)] + target.keys
        return try withAuthenticatedData(key) { try sealer.seal(values, authenticating: $0, nonce: nonce) }
    }

    private static func withAuthenticatedData<R>(_ key: Data, _ body: (UnsafeRawBufferPointer) throws -> R) throws
        -> R
    {
        try Data(authenticationPrefix + key).withUnsafeBytes(body)
    }
}
