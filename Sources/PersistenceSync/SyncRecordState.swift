import Foundation
package import PersistenceCore

/// The sync journal's entry for one record of a synced store: the server's version of it this store last saw, and
/// whether it changed locally since (the outbox).
package struct SyncRecordState: Entity, Equatable {
    package static let entityName = "persistence_sync_records"
    /// The outbox is read by ``isPending``: an equality every backend's index answers (LMDB's indexes answer no
    /// ranges, and an encrypted store's hold keyed digests), so finding the few pending records never reads them all.
    package static let indexes: [Index] = [.on("isPending")]

    /// ``id(entity:key:)``.
    package var id: String
    /// The record's entity.
    package var entity: String
    /// The record's primary key, as ``SyncKeyText`` writes it.
    package var key: String
    /// The server's version of the record this store last applied or had acknowledged; 0 when it has none.
    package var version: Int64 = 0
    /// The outbox sequence of the newest local change not yet pushed and acknowledged; 0 when there is none.
    package var pending: Int64 = 0 {
        didSet { isPending = pending > 0 }
    }
    /// Whether ``pending`` isn't 0 (kept by it).
    package var isPending = false
    /// The client's resync generation when a pull last applied the record: a resync removes the records it didn't
    /// apply.
    package var generation: Int64 = 0

    package init(entity: String, key: Value) {
        id = Self.id(entity: entity, key: key)
        self.entity = entity
        self.key = SyncKeyText.text(of: key)
    }

    /// The entry's primary key: the entity name and the record's key, apart by a unit separator (entity names are
    /// identifiers, so it never appears in one).
    package static func id(entity: String, key: Value) -> String {
        entity + "\u{1F}" + SyncKeyText.text(of: key)
    }

    /// The record's primary key as a value.
    /// - Throws: ``PersistenceError/Code/corrupt`` when the stored text isn't a key's.
    package func keyValue() throws -> Value { try SyncKeyText.value(of: key) }

    /// The entry's values in `layout`'s order (its layout in the store's model), as the entity stores them.
    package func values(in layout: RecordLayout) -> [Value] {
        layout.names.map { name in
            switch name {
            case "id": .text(id)
            case "entity": .text(entity)
            case "key": .text(key)
            case "version": .integer(version)
            case "pending": .integer(pending)
            case "isPending": .integer(isPending ? 1 : 0)
            case "generation": .integer(generation)
            default: .null
            }
        }
    }
}

/// The sync journal's one record of the client itself: its id, the last outbox sequence it gave out, the server's
/// cursor it pulled up to, and where a pull under way stands.
package struct SyncClientState: Entity, Equatable {
    package static let entityName = "persistence_sync_client"

    /// Always 1: there is one.
    package var id: Int64 = 1
    /// The client's id, made at random the first time the store needs one; the server remembers which of its outbox
    /// sequences it applied by it.
    package var clientID: String
    /// The last outbox sequence given to a local write transaction.
    package var lastSequence: Int64 = 0
    /// The server's change cursor this store has pulled up to; 0 before the first pull.
    package var cursor: Int64 = 0
    /// The scopes the store's records are those of (as the sync client writes them); `nil` before the first pull.
    package var syncedScopes: String?
    /// The server's tombstone purges the cursor dates from (a purge after it may have removed deletions since).
    package var purgeEpoch: Int64 = 0
    /// How many times the store resynced (pulled its scopes whole and removed the records it didn't get).
    package var generation: Int64 = 0
    /// Where the pull under way stands — the sync client's progress as JSON, written in the same transaction as each
    /// page it applies — so that a pull cut short (a lost connection, a killed process) goes on after its last applied
    /// page; `nil` when no pull is under way.
    package var pull: String?

    package init(clientID: String) { self.clientID = clientID }

    /// The client's record in `context`, made (not yet written) when the store has none.
    package static func current(in context: some DatabaseContext) throws -> SyncClientState {
        try context.recover(SyncClientState.self, id: 1) ?? SyncClientState(clientID: UUID().uuidString.lowercased())
    }
}

/// A primary key as text, as the sync journal keeps it: its storage class's letter, then the value (integers in
/// decimal, text as is, blobs in lowercase hex). Primary keys are integers, text or blobs (``PrimaryKey``).
package enum SyncKeyText {
    package static func text(of key: Value) -> String {
        switch key {
        case .integer(let value): "i" + String(value)
        case .text(let value): "t" + value
        case .blob(let data): "b" + data.map { String(format: "%02x", $0) }.joined()
        case .real(let value): "r" + String(value.bitPattern)
        case .null: "n"
        }
    }

    /// - Throws: ``PersistenceError/Code/corrupt`` when `text` isn't one that ``text(of:)`` writes.
    package static func value(of text: String) throws -> Value {
        let rest = text.dropFirst()
        switch text.first {
        case "i": if let value = Int64(rest) { return .integer(value) }
        case "t": return .text(String(rest))
        case "b":
            if let data = Data(hexadecimal: rest) { return .blob(data) }
        case "r": if let bits = UInt64(rest) { return .real(Double(bitPattern: bits)) }
        case "n": if rest.isEmpty { return .null }
        default: break
        }
        throw PersistenceError(.corrupt, "the sync journal holds a key that isn't one")
    }
}

extension Data {
    /// Bytes from an even number of hexadecimal digits, or `nil`.
    package init?(hexadecimal text: some StringProtocol) {
        let digits = Array(text.utf8)
        guard digits.count.isMultiple(of: 2) else { return nil }
        var bytes = [UInt8]()
        bytes.reserveCapacity(digits.count / 2)
        var index = 0
        while index < digits.count {
            guard let high = Self.nibble(digits[index]), let low = Self.nibble(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
            index += 2
        }
        self.init(bytes)
    }

    private static func nibble(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
