import Foundation
import PersistenceCore

/// How a store's synced scopes are kept in its journal: `*` for the whole server store, else the subscriptions as
/// JSON in a fixed order, so that equal sets compare equal.
package enum SyncScopes {
    static func text(of scopes: [SyncScope]?) -> String {
        guard let scopes else { return "*" }
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let items = Set(scopes).compactMap { try? encoder.encode($0) }.map { String(decoding: $0, as: UTF8.self) }
        return "[" + items.sorted().joined(separator: ",") + "]"
    }

    /// The scopes `text` keeps (``text(of:)``'s form): `nil` for the whole server store.
    /// - Throws: `corrupt` for text ``text(of:)`` doesn't write.
    package static func scopes(of text: String) throws -> [SyncScope]? {
        guard text != "*" else { return nil }
        do {
            return try JSONDecoder().decode([SyncScope].self, from: Data(text.utf8))
        } catch {
            throw PersistenceError(.corrupt, "the store's journal holds unreadable scopes", underlyingError: error)
        }
    }

    /// The scopes of `scopes` that `synced` lacks, when `scopes` only adds to it; `nil` when it drops one (or isn't a
    /// list of subscriptions on either side).
    static func added(to synced: String?, in scopes: [SyncScope]?) -> [SyncScope]? {
        guard let synced, let scopes, let old = try? Self.scopes(of: synced) else { return nil }
        let new = Set(scopes)
        guard Set(old).isSubset(of: new) else { return nil }
        return Array(new.subtracting(old))
    }
}
