import Foundation
import PersistenceCore
import PersistenceSync
import Testing

/// The binary form of the bulky sync messages: every value and shape round-trips to what JSON gives, it is smaller,
/// and damaged bytes are a typed error — never a crash, a wrong message or a huge allocation.
struct SyncBinaryWireTests {
    static let values: [Value] = [
        .null, .integer(0), .integer(-1), .integer(63), .integer(-64), .integer(64), .integer(.max), .integer(.min),
        .real(1.5), .real(-0.0), .real(.infinity), .real(-.greatestFiniteMagnitude), .real(.leastNonzeroMagnitude),
        .text(""), .text("é ' ; DROP TABLE x; --"), .text("\u{0}nul 🧪"), .text(String(repeating: "x", count: 300)),
        .blob(Data()), .blob(Data([0, 255, 128])), .blob(Data(repeating: 7, count: 200)),
    ]

    static var changes: [SyncChange] {
        var changes = values.enumerated().map { index, value in
            SyncChange(
                entity: index.isMultiple(of: 2) ? "Chore" : "Projekt ✓", key: .integer(Int64(index)),
                values: ["id": .integer(Int64(index)), "value": value, "other": .text("\(index)")],
                version: Int64(index) * 1_000_003)
        }
        changes.append(SyncChange(entity: "Chore", key: .text("gone"), values: nil, version: .max))
        changes.append(SyncChange(entity: "Memo", key: .blob(Data(repeating: 1, count: 16)), values: [:], version: 0))
        return changes
    }

    static let push = SyncPush(
        clientID: "phone-ü", modelVersion: 3,
        entries: changes.enumerated().map { SyncPush.Entry(sequence: Int64($0.offset) + 1, change: $0.element) },
        scopes: [SyncScope("project", ["id": .integer(1), "owner": .text("me")]), SyncScope("everything")])

    static let result = SyncPushResult(
        outcomes: changes.enumerated().map { index, change in
            let kinds: [SyncPushResult.Kind] = [.applied, .merged, .rejected, .alreadyApplied]
            return SyncPushResult.Outcome(
                sequence: Int64(index), entity: change.entity, key: change.key, kind: kinds[index % 4],
                current: change, reason: index.isMultiple(of: 3) ? nil : "reason \(index)")
        })

    static let pages = [
        SyncPullPage(
            changes: changes, next: SyncPosition(version: 42, entity: "Chore", key: Data([1, 2, 3])), cursor: 99,
            purgeEpoch: 2, remaining: 1_000_000),
        SyncPullPage(changes: [], next: nil, cursor: 0, purgeEpoch: 0, remaining: 0),
        SyncPullPage(changes: changes, next: nil, cursor: -5, purgeEpoch: 0, remaining: nil),
    ]

    /// What JSON gives back for a message (the binary form must give the same: JSON is the reference).
    private func viaJSON<Message: Codable>(_ message: Message) throws -> Message {
        try JSONDecoder().decode(Message.self, from: try JSONEncoder().encode(message))
    }

    private func viaBinary<Message: SyncBinaryMessage>(_ message: Message) throws -> Message {
        try Message(binary: Data(message.binaryEncoded()))
    }

    @Test func everyValueAndShapeRoundTripsAsJSONDoes() throws {
        #expect(try viaBinary(Self.push) == Self.push)
        #expect(try viaBinary(Self.push) == viaJSON(Self.push))
        let unscoped = SyncPush(clientID: "", modelVersion: -1, entries: [], scopes: nil)
        #expect(try viaBinary(unscoped) == unscoped)
        #expect(try viaBinary(Self.result) == Self.result)
        #expect(try viaBinary(Self.result) == viaJSON(Self.result))
        for page in Self.pages {
            #expect(try viaBinary(page) == page)
            #expect(try viaBinary(page) == viaJSON(page))
        }
        // -0.0 arrives as 0.0, as from JSON and as every backend stores it.
        let zero = try viaBinary(Self.pages[0]).changes[9].values?["value"]
        guard case .real(let real) = zero else {
            Issue.record("\(String(describing: zero))")
            return
        }
        #expect(real == 0 && real.sign == .plus)
    }

    @Test func aPageOfTypicalRecordsIsAFractionOfItsJSON() throws {
        let changes = (0..<1000).map { index in
            SyncChange(
                entity: "Chore", key: .text("chore-\(index)"),
                values: [
                    "id": .text("chore-\(index)"), "projectID": .integer(Int64(index % 10)),
                    "title": .text("Title number \(index)"), "done": .integer(Int64(index % 2)),
                    "revision": .integer(1),
                ], version: 1_000_000 + Int64(index))
        }
        let page = SyncPullPage(changes: changes, next: nil, cursor: 2_000_000)
        let binary = page.binaryEncoded().count
        let json = try SyncWireError.encoder().encode(page).count
        #expect(binary * 3 < json, "binary \(binary) bytes, JSON \(json)")
    }

    /// Every cut of a message, and every byte of it changed, is an error or a message — never a crash; every cut is
    /// an error.
    @Test func damagedBytesAreATypedErrorNeverACrash() throws {
        let bytes = SyncPush(
            clientID: "c", modelVersion: 1,
            entries: Array(Self.push.entries.prefix(6)), scopes: Self.push.scopes
        ).binaryEncoded()
        for length in 0..<bytes.count {
            #expect(throws: PersistenceError.self) { try SyncPush(binary: Data(bytes.prefix(length))) }
        }
        var decoded = 0
        for index in bytes.indices {
            for replacement: UInt8 in [0x00, 0x01, 0x7F, 0x80, 0xFF] where bytes[index] != replacement {
                var damaged = bytes
                damaged[index] = replacement
                do {
                    _ = try SyncPush(binary: Data(damaged))
                    decoded += 1
                } catch let error as PersistenceError {
                    #expect(error.code == .invalidValue || error.code == .updateRequired, "\(error)")
                }
            }
        }
        // Some changes only change a value: those read as a (different) message.
        #expect(decoded > 0)
        // A byte after the end, another kind of message, another version.
        #expect(throws: PersistenceError.self) { try SyncPush(binary: Data(bytes + [0])) }
        #expect(throws: PersistenceError.self) { try SyncPullPage(binary: Data(bytes)) }
        var later = bytes
        later[4] = 2
        let refusal = #expect(throws: PersistenceError.self) { try SyncPush(binary: Data(later)) }
        #expect(refusal?.code == .updateRequired)
        #expect(throws: PersistenceError.self) { try SyncPush(binary: try JSONEncoder().encode(Self.push)) }
    }

    /// Hand-made messages a writer never makes: counts beyond the bytes (no allocation for them), text that isn't
    /// UTF-8, a NaN, an attribute twice, a name beyond the table.
    @Test func hostileMessagesAreRefused() throws {
        let header: [UInt8] = Array("PSYN".utf8) + [1, 3]
        // A table of one name, "a"; a change is then its entity's index, its key, its version, its values' count + 1
        // and each value's attribute index and value; a page ends with its next position, cursor, epoch, remaining.
        let a: [UInt8] = [1, 1, UInt8(ascii: "a")]
        let nan = withUnsafeBytes(of: Double.nan.bitPattern.littleEndian) { Array($0) }
        let cases: [(String, [UInt8])] = [
            ("a huge change count", header + [0] + [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F]),
            ("a huge table", header + [0xFF, 0xFF, 0xFF, 0x7F]),
            ("a number past 64 bits", header + [0] + Array(repeating: 0xFF, count: 11)),
            ("text that isn't UTF-8", header + [1, 2, 0xC3, 0x28, 0]),
            ("a NaN", header + a + [1, 0, 1, 0, 0, 2, 0, 2] + nan + [0, 0, 0, 0]),
            ("an attribute twice", header + a + [1, 0, 1, 0, 0, 3, 0, 0, 0, 0] + [0, 0, 0, 0]),
            ("a name beyond the table", header + [0, 1, 5, 1, 0, 0, 0] + [0, 0, 0, 0]),
            ("an unknown value tag", header + a + [1, 0, 9, 0, 0] + [0, 0, 0, 0]),
        ]
        for (name, bytes) in cases {
            let error = #expect(throws: PersistenceError.self, "\(name)") { try SyncPullPage(binary: Data(bytes)) }
            #expect(error?.code == .invalidValue, "\(name): \(String(describing: error))")
        }
    }

    /// JSON has no infinities: they travel as strings, and nothing else is read as a real.
    @Test func infinitiesTravelInJSONToo() throws {
        let encoded = try SyncWireError.encoder().encode([Value.real(.infinity), .real(-.infinity), .real(2)])
        #expect(String(decoding: encoded, as: UTF8.self) == #"[{"r":"Infinity"},{"r":"-Infinity"},{"r":2}]"#)
        #expect(
            try JSONDecoder().decode([Value].self, from: encoded) == [.real(.infinity), .real(-.infinity), .real(2)])
        for json in [#"{"r":"NaN"}"#, #"{"r":"infinity"}"#, #"{"r":true}"#] {
            #expect(throws: DecodingError.self, "\(json)") {
                try JSONDecoder().decode(Value.self, from: Data(json.utf8))
            }
        }
    }

    @Test func theMediaTypesAreReadAsHTTPWritesThem() {
        #expect(SyncWireFormat(contentType: "application/vnd.persistence-sync") == .binary)
        #expect(SyncWireFormat(contentType: "Application/Vnd.Persistence-Sync; v=1") == .binary)
        #expect(SyncWireFormat(contentType: "application/json; charset=utf-8") == .json)
        #expect(SyncWireFormat(contentType: "text/plain") == nil)
        #expect(SyncWireFormat.acceptsBinary("application/json;q=0.5, application/vnd.persistence-sync"))
        #expect(!SyncWireFormat.acceptsBinary("application/json, */*"))
    }
}
