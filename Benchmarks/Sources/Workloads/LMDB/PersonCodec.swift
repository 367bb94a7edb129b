/// The raw LMDB baselines' value format: a compact hand-written encoding of a ``Person``'s fields (the id is the
/// key). Little-endian `age` and `score` (8 bytes each), then `name`, `email` and `bio`, each as a 4-byte length
/// and its UTF-8 bytes.
enum PersonCodec {
    struct Malformed: Error, CustomStringConvertible {
        var description: String { "a raw LMDB value is malformed" }
    }

    /// Appends the value bytes of `person` to `buffer` (emptied first, its capacity kept).
    @inline(__always)
    static func encode(_ person: Person, into buffer: inout [UInt8]) {
        encodeFields(
            age: person.age, score: person.score, texts: [person.name, person.email, person.bio], into: &buffer)
    }

    /// Appends the fields every version of the record has, in order, to `buffer` (emptied first, its capacity kept).
    @inline(__always)
    static func encodeFields(age: Int, score: Double, texts: [String], into buffer: inout [UInt8]) {
        buffer.removeAll(keepingCapacity: true)
        append(UInt64(bitPattern: Int64(age)), to: &buffer)
        append(score.bitPattern, to: &buffer)
        for text in texts { append(text, to: &buffer) }
    }

    /// Appends `text` as a 4-byte length and its UTF-8 bytes.
    @inline(__always)
    static func append(_ text: String, to buffer: inout [UInt8]) {
        var text = text
        text.withUTF8 { bytes in
            append(UInt32(bytes.count), to: &buffer)
            buffer.append(contentsOf: bytes)
        }
    }

    /// The record `id` whose value bytes are `bytes`.
    @inline(__always)
    static func decode(id: Int64, _ bytes: UnsafeRawBufferPointer) throws -> Person {
        var reader = Reader(bytes: bytes)
        let fields = try decodeFields(&reader)
        guard reader.offset == bytes.count else { throw Malformed() }
        return Person(
            id: id, name: fields.name, email: fields.email, age: fields.age, score: fields.score, bio: fields.text)
    }

    /// The fields every version of the record has, read in order.
    @inline(__always)
    static func decodeFields(_ reader: inout Reader) throws -> (
        age: Int, score: Double, name: String, email: String, text: String
    ) {
        let age = try reader.integer(UInt64.self)
        let score = try reader.integer(UInt64.self)
        return (
            Int(Int64(bitPattern: age)), Double(bitPattern: score), try reader.text(), try reader.text(),
            try reader.text()
        )
    }

    /// The 8-byte big-endian key of an id.
    @inline(__always)
    static func key(_ id: Int64) -> UInt64 { UInt64(bitPattern: id).bigEndian }

    /// The id of key bytes.
    @inline(__always)
    static func id(_ key: UnsafeRawBufferPointer) throws -> Int64 {
        guard key.count == 8 else { throw Malformed() }
        return Int64(bitPattern: UInt64(bigEndian: key.loadUnaligned(as: UInt64.self)))
    }

    @inline(__always)
    static func append<T: FixedWidthInteger>(_ value: T, to buffer: inout [UInt8]) {
        withUnsafeBytes(of: value.littleEndian) { buffer.append(contentsOf: $0) }
    }

    /// Reads a value's fields in order, checking every length against the bytes.
    struct Reader {
        let bytes: UnsafeRawBufferPointer
        var offset = 0

        @inline(__always)
        mutating func integer<T: FixedWidthInteger>(_ type: T.Type) throws -> T {
            guard bytes.count - offset >= MemoryLayout<T>.size else { throw Malformed() }
            defer { offset += MemoryLayout<T>.size }
            return T(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: T.self))
        }

        @inline(__always)
        mutating func text() throws -> String {
            let count = Int(try integer(UInt32.self))
            guard bytes.count - offset >= count else { throw Malformed() }
            defer { offset += count }
            return String(decoding: UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + count]), as: UTF8.self)
        }
    }
}
