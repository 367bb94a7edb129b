import Foundation
import PersistenceCore
import Testing

@testable import PersistenceLMDB

@Suite("LMDB record bytes decoded into a reused array")
struct RecordCodecTests {
    static let long = String(repeating: "é", count: 200)
    static let records: [[Value]] = [
        [.integer(1), .text("Ada"), .real(2.5), .null, .blob(Data([1, 2, 3]))],
        [.integer(-9), .text("")],
        [.integer(Int64.max), .text(long), .real(-0.5), .blob(Data()), .null, .integer(300), .text("x")],
        [],
    ]

    /// The stored form, byte for byte: records and index keys (digests of these bytes) written by earlier versions
    /// must keep matching, so an encoder may change how it writes, never what.
    @Test("A record encodes to the same bytes as every earlier version wrote")
    func goldenBytes() {
        let long = String(repeating: "a", count: 130)
        let record: [Value] = [
            .null, .integer(1), .integer(-2), .real(-0.0), .real(1.5), .text("é"), .text(long), .blob(Data([9, 8])),
            .blob(Data()),
        ]
        var expected: [UInt8] = [9]
        expected += [0]
        expected += [1, 1, 0, 0, 0, 0, 0, 0, 0]
        expected += [1, 0xFE, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]
        expected += [2, 0, 0, 0, 0, 0, 0, 0, 0]  // -0.0 stored as 0.0
        expected += [2, 0, 0, 0, 0, 0, 0, 0xF8, 0x3F]
        expected += [3, 2, 0xC3, 0xA9]
        expected += [3, 0x82, 0x01] + Array(repeating: UInt8(ascii: "a"), count: 130)
        expected += [4, 2, 9, 8]
        expected += [4, 0]
        #expect(RecordCodec.encode(record) == expected)
        #expect(RecordCodec.encode([Value]()) == [0])
        let wide = [Value](repeating: .null, count: 200)
        #expect(RecordCodec.encode(wide) == [0xC8, 0x01] + Array(repeating: 0, count: 200))
    }

    @Test("Each record decodes to exactly its own values, whatever the array held before")
    func refill() throws {
        var values: [Value] = [.text("left over"), .integer(42)]
        for record in Self.records + Self.records.reversed() {
            let bytes = Data(RecordCodec.encode(record))
            try bytes.withUnsafeBytes { try RecordCodec.decode($0, into: &values) }
            #expect(values == record)
            #expect(try RecordCodec.decode(bytes) == record)
        }
    }

    @Test("Truncated, extended or mistagged bytes are corrupt, never a shorter or longer record")
    func damaged() throws {
        let bytes = RecordCodec.encode(Self.records[2])
        var damaged: [[UInt8]] = (1..<bytes.count).map { Array(bytes.prefix($0)) }
        damaged.append(bytes + [0])
        var mistagged = bytes
        mistagged[1] = 9
        damaged.append(mistagged)
        var values: [Value] = []
        for candidate in damaged {
            #expect(throws: PersistenceError.self) {
                try candidate.withUnsafeBytes { try RecordCodec.decode($0, into: &values) }
            }
            #expect((try? RecordCodec.decode(Data(candidate))) == nil)
        }
    }

    @Test("A record count past the bytes given is corrupt before any array is made")
    func hugeCount() {
        // varint 2^40 then nothing: must not try to make an array of that many values.
        let bytes: [UInt8] = [0x80, 0x80, 0x80, 0x80, 0x80, 0x20]
        var values: [Value] = []
        #expect(throws: PersistenceError.self) {
            try bytes.withUnsafeBytes { try RecordCodec.decode($0, into: &values) }
        }
    }
}
