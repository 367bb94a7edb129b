import Foundation
import PersistenceCore

/// The bytes of one record: its values in layout order, each a tag byte and a payload.
///
/// Format 1: a varint count, then per value `0` null · `1` + 8-byte little-endian integer · `2` + 8-byte
/// little-endian IEEE double · `3` + varint length + UTF-8 · `4` + varint length + bytes. The count lets a record
/// written by an older schema be read for migration.
enum RecordCodec {
    static func encode<C: Collection<Value>>(_ values: C) -> [UInt8] {
        // Measured first, then written through a pointer into an array of exactly that size: appending byte by byte
        // (or to Data) goes through checks per call that cost more than the bytes.
        var size = varintSize(UInt64(values.count))
        for value in values { size += encodedSize(value) }
        return [UInt8](unsafeUninitializedCapacity: size) { buffer, count in
            // `size` is at least 1 (the count's varint): the buffer has an address.
            var out = ByteWriter(buffer.baseAddress.unsafelyUnwrapped)
            out.varint(UInt64(values.count))
            for value in values {
                switch value {
                case .null:
                    out.byte(0)
                case .integer(let integer):
                    out.byte(1)
                    out.fixed64(UInt64(bitPattern: integer))
                case .real(let real):
                    out.byte(2)
                    // Canonical: records written from dynamic values (and the index keys built from them) hold -0.0
                    // as 0.0 too.
                    out.fixed64(real.canonicalForStorage.bitPattern)
                case .text(var text):
                    out.byte(3)
                    out.varint(UInt64(text.utf8.count))
                    text.withUTF8 { out.bytes(UnsafeRawBufferPointer($0)) }
                case .blob(let data):
                    out.byte(4)
                    out.varint(UInt64(data.count))
                    data.withUnsafeBytes { out.bytes($0) }
                }
            }
            assert(out.offset == size, "a record's bytes were measured wrong")
            count = out.offset
        }
    }

    /// How many bytes a value takes encoded (tag, length varint, payload).
    private static func encodedSize(_ value: Value) -> Int {
        switch value {
        case .null: 1
        case .integer, .real: 9
        case .text(let text): 1 + varintSize(UInt64(text.utf8.count)) + text.utf8.count
        case .blob(let data): 1 + varintSize(UInt64(data.count)) + data.count
        }
    }

    /// How many bytes `value` takes as a varint (7 bits a byte).
    private static func varintSize(_ value: UInt64) -> Int {
        var value = value
        var size = 1
        while value >= 0x80 {
            size += 1
            value >>= 7
        }
        return size
    }

    /// Writes a record's bytes into memory measured for them (``encode(_:)``).
    private struct ByteWriter {
        let base: UnsafeMutablePointer<UInt8>
        private(set) var offset = 0

        init(_ base: UnsafeMutablePointer<UInt8>) { self.base = base }

        mutating func byte(_ byte: UInt8) {
            base[offset] = byte
            offset += 1
        }

        /// Little-endian, 8 bytes.
        mutating func fixed64(_ value: UInt64) {
            withUnsafeBytes(of: value.littleEndian) { bytes($0) }
        }

        mutating func varint(_ value: UInt64) {
            var value = value
            while value >= 0x80 {
                byte(UInt8(truncatingIfNeeded: value) | 0x80)
                value >>= 7
            }
            byte(UInt8(value))
        }

        mutating func bytes(_ bytes: UnsafeRawBufferPointer) {
            guard let source = bytes.baseAddress, !bytes.isEmpty else { return }
            (base + offset).initialize(from: source.assumingMemoryBound(to: UInt8.self), count: bytes.count)
            offset += bytes.count
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
        let stored = try reader.varint()
        guard stored <= UInt64(bytes.count) else { throw damaged() }
        let count = Int(stored)
        // Assigning in place: emptying and appending costs more than the values themselves. On a damaged record
        // the array is left part old, part new — callers throw it away with the error.
        if values.count != count { values = Array(repeating: .null, count: count) }
        for index in 0..<count { values[index] = try reader.value() }
        guard reader.isAtEnd else { throw damaged() }
    }

    /// Replaces the values at the positions `wanted` marks with a record's, from bytes in place, stepping over the
    /// others' bytes without decoding them: what a scan reads to test a condition before decoding a whole record.
    /// Positions not wanted keep what they held (`.null` in a new array). A damaged record is
    /// ``PersistenceError/Code/corrupt``, as a whole decode would find it.
    static func decode(_ bytes: UnsafeRawBufferPointer, only wanted: [Bool], into values: inout [Value]) throws {
        var reader = Reader(bytes: bytes)
        let stored = try reader.varint()
        guard stored <= UInt64(bytes.count) else { throw damaged() }
        let count = Int(stored)
        if values.count != count { values = Array(repeating: .null, count: count) }
        for index in 0..<count {
            if index < wanted.count, wanted[index] {
                values[index] = try reader.value()
            } else {
                try reader.skipValue()
            }
        }
        guard reader.isAtEnd else { throw damaged() }
    }

    /// The value at `position` of a record, from bytes in place, the values before it stepped over.
    static func value(at position: Int, in bytes: UnsafeRawBufferPointer) throws -> Value {
        var reader = try Reader(bytes: bytes, at: position)
        return try reader.value()
    }

    /// The bytes of the blob at `position` of a record, in place: `nil` for `nil`, no bytes for a value of another
    /// kind. A damaged record is ``PersistenceError/Code/corrupt``.
    static func blob(at position: Int, in bytes: UnsafeRawBufferPointer) throws -> UnsafeRawBufferPointer? {
        var reader = try Reader(bytes: bytes, at: position)
        switch try reader.byte() {
        case 0: return nil
        case 4: return try reader.slice()
        default: return UnsafeRawBufferPointer(start: nil, count: 0)
        }
    }

    static func damaged() -> PersistenceError { PersistenceError(.corrupt, "a stored record is damaged") }

    private struct Reader {
        let bytes: UnsafeRawBufferPointer
        var offset = 0

        var isAtEnd: Bool { offset == bytes.count }

        init(bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

        /// A reader at the value at `position` of a record, the values before it stepped over.
        init(bytes: UnsafeRawBufferPointer, at position: Int) throws {
            self.bytes = bytes
            let count = try varint()
            guard UInt64(position) < count else { throw damaged() }
            for _ in 0..<position { try skipValue() }
        }

        mutating func byte() throws -> UInt8 {
            guard offset < bytes.count else { throw damaged() }
            defer { offset += 1 }
            return bytes[offset]
        }

        @inline(__always)
        mutating func varint() throws -> UInt64 {
            // Lengths and counts under 128 — nearly all — are one byte.
            if offset < bytes.count, bytes[offset] < 0x80 {
                offset += 1
                return UInt64(bytes[offset - 1])
            }
            return try longVarint()
        }

        mutating func longVarint() throws -> UInt64 {
            var result: UInt64 = 0
            for shift in stride(from: 0, to: 64, by: 7) {
                let next = try byte()
                result |= UInt64(next & 0x7F) << UInt64(shift)
                if next < 0x80 { return result }
            }
            throw damaged()
        }

        /// One tagged value.
        @inline(__always)
        mutating func value() throws -> Value {
            switch try byte() {
            case 0: .null
            case 1: .integer(Int64(littleEndian: try fixed()))
            case 2: .real(Double(bitPattern: UInt64(littleEndian: try fixed())))
            case 3: .text(try slice().withMemoryRebound(to: UInt8.self) { String(decoding: $0, as: UTF8.self) })
            case 4: .blob(Data(try slice()))
            default: throw damaged()
            }
        }

        /// Steps over one tagged value, checking only that its bytes are there.
        @inline(__always)
        mutating func skipValue() throws {
            switch try byte() {
            case 0: break
            case 1, 2:
                guard bytes.count - offset >= 8 else { throw damaged() }
                offset += 8
            case 3, 4: _ = try slice()
            default: throw damaged()
            }
        }

        mutating func fixed<T: FixedWidthInteger>() throws -> T {
            let size = MemoryLayout<T>.size
            guard bytes.count - offset >= size else { throw damaged() }
            let value = bytes.loadUnaligned(fromByteOffset: offset, as: T.self)
            offset += size
            return value
        }

        @inline(__always)
        mutating func slice() throws -> UnsafeRawBufferPointer {
            let length = try varint()
            guard length <= UInt64(bytes.count - offset) else { throw damaged() }
            defer { offset += Int(length) }
            return UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + Int(length))])
        }
    }
}
