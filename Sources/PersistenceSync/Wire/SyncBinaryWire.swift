public import Foundation
import PersistenceCore

/// The sync protocol's compact binary form, for its bulky messages: ``SyncPush``, ``SyncPushResult`` and
/// ``SyncPullPage`` (``SyncBinaryMessage``).
///
/// Version 1, all integers as varints (7 bits a byte, low first; signed ones zigzag-coded):
/// - a header: `PSYN`, the version (`1`), the message's kind (`1` push, `2` push result, `3` pulled page);
/// - a table of names: a count, then each name's UTF-8 length and bytes. Entity, attribute and scope names are
///   written once here and referred to by their index, so a page of a thousand records of one entity names its
///   entity and attributes once;
/// - the message: changes as the entity's index, the key, the version, then `0` for a deletion or the number of
///   values plus one, each value an attribute's index and the value; a value as a tag (`0` null, `1` integer as a
///   signed varint, `2` real as 8 bytes little-endian, `3` text and `4` blob as a length and bytes).
///
/// Every length and count is checked against the bytes left, so a damaged or hostile message is an `invalidValue`
/// error, never a crash or a large allocation; text must be valid UTF-8, a real never NaN, an attribute named once
/// per change.
public enum SyncBinaryWire {
    /// The HTTP media type of the binary form.
    public static let mediaType = "application/vnd.persistence-sync"

    /// The form's version (the header's fifth byte).
    static let version: UInt8 = 1
    static let magic: [UInt8] = Array("PSYN".utf8)

    /// The message kinds the header names.
    enum Kind: UInt8 {
        case push = 1
        case pushResult = 2
        case pullPage = 3
    }

    static func damaged(_ detail: String) -> PersistenceError {
        PersistenceError(.invalidValue, "a binary sync message is damaged: \(detail)")
    }
}

/// A sync message that has a binary form (``SyncBinaryWire``).
public protocol SyncBinaryMessage: Sendable {
    /// The message in the binary form.
    func binaryEncoded() -> [UInt8]
    /// Reads a message from its binary form.
    /// - Throws: `invalidValue` for bytes that aren't a whole message of this kind.
    init(binary bytes: UnsafeRawBufferPointer) throws
}

extension SyncBinaryMessage {
    /// Reads a message from its binary form in `data`.
    /// - Throws: `invalidValue` for bytes that aren't a whole message of this kind.
    public init(binary data: Data) throws {
        self = try data.withUnsafeBytes { try Self(binary: $0) }
    }
}

extension SyncPush: SyncBinaryMessage {
    public func binaryEncoded() -> [UInt8] {
        var out = SyncBinaryWriter(capacity: 64 + entries.count * 64)
        out.string(clientID)
        out.signed(Int64(modelVersion))
        out.scopes(scopes)
        out.count(entries.count)
        for entry in entries {
            out.signed(entry.sequence)
            out.change(entry.change)
        }
        return out.message(.push)
    }

    public init(binary bytes: UnsafeRawBufferPointer) throws {
        var reader = try SyncBinaryReader(bytes, kind: .push)
        let clientID = try reader.string()
        let modelVersion = try reader.int()
        let scopes = try reader.scopes()
        let count = try reader.count()
        var entries: [Entry] = []
        entries.reserveCapacity(count)
        for _ in 0..<count {
            let sequence = try reader.signed()
            entries.append(Entry(sequence: sequence, change: try reader.change()))
        }
        try reader.finish()
        self.init(clientID: clientID, modelVersion: modelVersion, entries: entries, scopes: scopes)
    }
}

extension SyncPushResult: SyncBinaryMessage {
    public func binaryEncoded() -> [UInt8] {
        var out = SyncBinaryWriter(capacity: 16 + outcomes.count * 64)
        out.count(outcomes.count)
        for outcome in outcomes {
            out.signed(outcome.sequence)
            out.name(outcome.entity)
            out.value(outcome.key)
            out.byte(Self.code(outcome.kind))
            out.change(outcome.current)
            out.optionalString(outcome.reason)
        }
        return out.message(.pushResult)
    }

    public init(binary bytes: UnsafeRawBufferPointer) throws {
        var reader = try SyncBinaryReader(bytes, kind: .pushResult)
        let count = try reader.count()
        var outcomes: [Outcome] = []
        outcomes.reserveCapacity(count)
        for _ in 0..<count {
            let sequence = try reader.signed()
            let entity = try reader.name()
            let key = try reader.value()
            let kind = try Self.kind(try reader.byte())
            let current = try reader.change()
            outcomes.append(
                Outcome(
                    sequence: sequence, entity: entity, key: key, kind: kind, current: current,
                    reason: try reader.optionalString()))
        }
        try reader.finish()
        self.init(outcomes: outcomes)
    }

    private static func code(_ kind: Kind) -> UInt8 {
        switch kind {
        case .applied: 0
        case .merged: 1
        case .rejected: 2
        case .alreadyApplied: 3
        }
    }

    private static func kind(_ code: UInt8) throws -> Kind {
        switch code {
        case 0: .applied
        case 1: .merged
        case 2: .rejected
        case 3: .alreadyApplied
        default: throw SyncBinaryWire.damaged("an outcome of unknown kind \(code)")
        }
    }
}

extension SyncPullPage: SyncBinaryMessage {
    public func binaryEncoded() -> [UInt8] {
        var out = SyncBinaryWriter(capacity: 32 + changes.count * 64)
        out.count(changes.count)
        for change in changes { out.change(change) }
        if let next {
            out.byte(1)
            out.signed(next.version)
            out.name(next.entity)
            out.data(next.key)
        } else {
            out.byte(0)
        }
        out.signed(cursor)
        out.signed(purgeEpoch)
        out.optionalCount(remaining)
        return out.message(.pullPage)
    }

    public init(binary bytes: UnsafeRawBufferPointer) throws {
        var reader = try SyncBinaryReader(bytes, kind: .pullPage)
        let count = try reader.count()
        var changes: [SyncChange] = []
        changes.reserveCapacity(count)
        for _ in 0..<count { changes.append(try reader.change()) }
        var next: SyncPosition?
        switch try reader.byte() {
        case 0: next = nil
        case 1:
            let version = try reader.signed()
            let entity = try reader.name()
            next = SyncPosition(version: version, entity: entity, key: try reader.data())
        case let flag: throw SyncBinaryWire.damaged("a page's next position has flag \(flag)")
        }
        let cursor = try reader.signed()
        let purgeEpoch = try reader.signed()
        let remaining = try reader.optionalCount()
        try reader.finish()
        self.init(changes: changes, next: next, cursor: cursor, purgeEpoch: purgeEpoch, remaining: remaining)
    }
}
