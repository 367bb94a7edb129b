import PersistenceCore

/// How far a pull has come (``SyncClient/progress``): published once per applied page.
public struct SyncProgress: Sendable, Hashable, CustomStringConvertible {
    /// What the pull brings.
    public enum Phase: String, Sendable, Hashable {
        /// The scopes' records whole: a store's first sync, or a resync.
        case wholeScopes
        /// The records of scopes the client just added.
        case addedScopes
        /// The changes since the last pull.
        case changes
    }

    /// What the pull brings.
    public var phase: Phase
    /// The changes applied so far by this pull (one cut short and resumed counts from where it went on).
    public var applied: Int
    /// What the applied changes weighed: their values' bytes (text as UTF-8, blobs as stored, 8 per number).
    public var bytes: Int
    /// At most how many changes the pull has in all, as the server counted when it started (or went on): the count
    /// takes the scopes' entities, not their conditions, so a pull of part of an entity may end below it. `nil` from a
    /// server that doesn't count.
    public var expected: Int?

    /// Creates a progress.
    public init(phase: Phase, applied: Int, bytes: Int, expected: Int?) {
        self.phase = phase
        self.applied = applied
        self.bytes = bytes
        self.expected = expected
    }

    /// `applied` of `expected`, from 0 to 1; `nil` when nothing was counted.
    public var fractionCompleted: Double? {
        guard let expected else { return nil }
        return expected <= applied ? 1 : Double(applied) / Double(expected)
    }

    public var description: String {
        let of = expected.map { " of at most \($0)" } ?? ""
        return "\(phase.rawValue): \(applied)\(of) changes, \(bytes) bytes"
    }
}

extension SyncChange {
    /// The bytes of the change's values (text as UTF-8, blobs as stored, 8 per number; none for a deletion).
    var valueBytes: Int {
        guard let values else { return 0 }
        var bytes = 0
        for value in values.values {
            switch value {
            case .integer, .real: bytes += 8
            case .text(let text): bytes += text.utf8.count
            case .blob(let data): bytes += data.count
            case .null: break
            }
        }
        return bytes
    }
}
