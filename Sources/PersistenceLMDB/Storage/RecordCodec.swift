import Foundation
import PersistenceCore

/// The bytes of one record: its values in layout order, each a tag byte and a payload.
///
/// Format 1: a varint count, then per value `0` null · `1` + 8-byte little-endian integer · `2` + 8-byte
/// little-endian IEEE double · `3` + varint length + UTF-8 · `4` + varint length + bytes. The count lets a record
/// written by an older schema be read for migration.
enum RecordCodec {
    static func encode(_ values: [Value]) -> [UInt8] {
        // Bytes, not Data: appending to Data goes through checks per call that cost more than the bytes.
        var out: [UInt8] = []
        out.reserveCapacity(values.reduce(1) { $0 + encodedSizeBound($1) })
        appendVarint(UInt64(values.count), to: &out)
        for value in values {
            switch value {
            case .null:
                out.append(0)
            case .integer(let integer):
                out.append(1)
                withUnsafeBytes(of: integer.littleEndian) { out.append(contentsOf: $0) }
            case .real(let real):
                out.append(2)
                // Canonical: records written from dynamic values (and the index keys built from them) hold -0.0
                // as 0.0 too.
                withUnsafeBytes(of: real.canonicalForStorage.bitPattern.littleEndian) { out.append(contentsOf: $0) }
            case .text(let text):
                out.append(3)
                appendVarint(UInt64(text.utf8.count), to: &out)
                out.append(contentsOf: text.utf8)
            case .blob(let data):
                out.append(4)
                appendVarint(UInt64(data.count), to: &out)
                out.append(contentsOf: data)
            }
        }
        return out
    }

    /// At most how many bytes a value takes encoded (tag, length varint, payload).
    private static func encodedSizeBound(_ value: Value) -> Int {
        switch value {
        case .null: 1
        case .integer, .real: 9
        case .text(let text): 11 + text.utf8.count
        case .blob(let data): 11 + data.count
        }
    }

    /// The values of a record; a damaged record is a ``PersistenceError/Code/corrupt`` error, never a crash.
    static func decode(_ data: Data) throws -> [Value] {
        try data.withUnsafeBytes { try decode($0) }
    }

    /// The values of a record from bytes in place.
    static func decode(_ bytes: UnsafeRawBufferPointer) throws -> [Value] {
        var values: [Value] = []
        try decode(bytes, into: &values)
        return values
    }

    /// Replaces `values` with the values of a record from bytes in place, keeping the array's storage: a reader
    /// that decodes record after record allocates no array per record.
    static func decode(_ bytes: UnsafeRawBufferPointer, into values: inout [Value]) throws {
        var reader = Reader(bytes: bytes)
        let count = try reader.varint()
        guard count <= UInt64(bytes.count) else { throw damaged() }
        values.removeAll(keepingCapacity: true)
        values.reserveCapacity(Int(count))
        for _ in 0..<count {
            switch try reader.byte() {
            case 0: values.append(.null)
            case 1: values.append(.integer(Int64(littleEndian: try reader.fixed())))
            case 2: values.append(.real(Double(bitPattern: UInt64(littleEndian: try reader.fixed()))))
            case 3: values.append(.text(String(decoding: try reader.slice(), as: UTF8.self)))
            case 4: values.append(.blob(Data(try reader.slice())))
            default: throw damaged()
            }
        }
        guard reader.isAtEnd else { throw damaged() }
    }

    private static func appendVarint(_ value: UInt64, to out: inout [UInt8]) {
        var value = value
        while value >= 0x80 {
            out.append(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        out.append(UInt8(value))
    }

    static func damaged() -> PersistenceError { PersistenceError(.corrupt, "a stored record is damaged") }

    private struct Reader {
        let bytes: UnsafeRawBufferPointer
        var offset = 0

        var isAtEnd: Bool { offset == bytes.count }

        mutating func byte() throws -> UInt8 {
            guard offset < bytes.count else { throw damaged() }
            defer { offset += 1 }
            return bytes[offset]
        }

        mutating func varint() throws -> UInt64 {
            var result: UInt64 = 0
            for shift in stride(from: 0, to: 64, by: 7) {
                let next = try byte()
                result |= UInt64(next & 0x7F) << UInt64(shift)
                if next < 0x80 { return result }
            }
            throw damaged()
        }

        mutating func fixed<T: FixedWidthInteger>() throws -> T {
            let size = MemoryLayout<T>.size
            guard bytes.count - offset >= size else { throw damaged() }
            var value = T.zero
            let source = UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + size)])
            withUnsafeMutableBytes(of: &value) { $0.copyMemory(from: source) }
            offset += size
            return value
        }

        mutating func slice() throws -> UnsafeRawBufferPointer.SubSequence {
            let length = try varint()
            guard length <= UInt64(bytes.count - offset) else { throw damaged() }
            defer { offset += Int(length) }
            return bytes[offset..<(offset + Int(length))]
        }
    }
}
