extension PersonCodec {
    /// Appends the value bytes of a version-2 record to `buffer` (emptied first, its capacity kept): the version-1
    /// layout — `about` where `bio` was, the encoding being positional — then `karma`, 8 bytes little-endian.
    @inline(__always)
    static func encode(_ person: MigratedPerson, into buffer: inout [UInt8]) {
        buffer.removeAll(keepingCapacity: true)
        append(UInt64(bitPattern: Int64(person.age)), to: &buffer)
        append(person.score.bitPattern, to: &buffer)
        for text in [person.name, person.email, person.about] {
            var text = text
            text.withUTF8 { bytes in
                append(UInt32(bytes.count), to: &buffer)
                buffer.append(contentsOf: bytes)
            }
        }
        append(UInt64(bitPattern: Int64(person.karma)), to: &buffer)
    }

    /// The version-2 record `id` whose value bytes are `bytes`.
    @inline(__always)
    static func decodeMigrated(id: Int64, _ bytes: UnsafeRawBufferPointer) throws -> MigratedPerson {
        var reader = Reader(bytes: bytes)
        let age = try reader.integer(UInt64.self)
        let score = try reader.integer(UInt64.self)
        let name = try reader.text()
        let email = try reader.text()
        let about = try reader.text()
        let karma = try reader.integer(UInt64.self)
        guard reader.offset == bytes.count else { throw Malformed() }
        return MigratedPerson(
            id: id, name: name, email: email, age: Int(Int64(bitPattern: age)), score: Double(bitPattern: score),
            about: about, karma: Int(Int64(bitPattern: karma)))
    }
}
