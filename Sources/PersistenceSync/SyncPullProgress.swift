import Foundation
import PersistenceCore

/// Where a pull under way stands: written to the client's journal record in the same local transaction as each page
/// it applies (`SyncClientState.pull`), so that a pull cut short — a lost connection, a killed process, a restarting
/// server — goes on after its last applied page rather than from the start, and never applies a page twice or skips
/// one.
///
/// Everything in it is the server's durable data (log positions and transaction ids), never a server's memory: any
/// server process, restarted or not, answers the next page from it.
struct SyncPullProgress: Codable, Sendable, Equatable {
    /// Which pull it is.
    enum Kind: String, Codable, Sendable {
        /// The scopes whole, then a sweep of what didn't come: a first sync, a dropped scope, a resync.
        case resync
        /// The records of scopes added to those the store holds.
        case addedScopes
        /// Every change since the store's cursor.
        case changes
    }

    /// A pulled record's reference to a record not stored yet, checked once the last page is in.
    struct Reference: Codable, Sendable, Equatable {
        var source: String
        var sourceKey: Value
        var foreignKey: String
        var target: String
        var key: Value

        init(_ reference: DanglingReference) {
            source = reference.source
            sourceKey = reference.sourceKey
            foreignKey = reference.foreignKey
            target = reference.target
            key = reference.key
        }
    }

    var kind: Kind
    /// The client's model version when the pull began: a store migrated since starts over.
    var modelVersion: Int
    /// The scopes the pull asks for (`SyncScopes.text(of:)`).
    var scopes: String
    /// The cursor the pull's requests carry.
    var cursor: Int64
    /// Where the last applied page ended: the next page starts after it.
    var after: SyncPosition
    /// The lowest cursor the applied pages gave: the one the store keeps once the pull ends. It is the first page's
    /// snapshot horizon, so a change committed while the pull was under way (even one with a lower log position than
    /// a page already applied) is in the next pull.
    var horizon: Int64
    /// The first page's purge epoch.
    var purgeEpoch: Int64
    /// A resync's: whether the store held synced records when it began (only then does it sweep).
    var sweeps: Bool
    /// References to records a later page may bring.
    var references: [Reference]

    /// Whether this progress is that of the pull described, so that the pull goes on from it.
    func continues(_ kind: Kind, modelVersion: Int, scopes: String, cursor: Int64) -> Bool {
        self.kind == kind && self.modelVersion == modelVersion && self.scopes == scopes && self.cursor == cursor
    }

    /// The progress a client's journal record holds; `nil` when none, or one this version can't read (the pull then
    /// starts over, which is always safe).
    static func stored(in client: SyncClientState) -> SyncPullProgress? {
        guard let text = client.pull else { return nil }
        return try? JSONDecoder().decode(SyncPullProgress.self, from: Data(text.utf8))
    }

    /// The progress as the journal keeps it.
    func text() throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return String(decoding: try encoder.encode(self), as: UTF8.self)
    }
}
