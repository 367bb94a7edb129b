extension PersonCodec {
    /// Appends the value bytes of a version-2 record to `buffer` (emptied first, its capacity kept): the version-1
    /// layout — `about` where `bio` was, the encoding being positional — then `karma`, 8 bytes little-endian.
    @inline(__always)
    static func encode(_ person: MigratedPerson, into buffer: inout [UInt8]) {
        encodeFields(
            age: person.age, score: person.score, texts: [person.name, person.email, person.about], into: &buffer)
        append(UInt64(bitPattern: Int64(person.karma)), to: &buffer)
    }

    /// The version-2 record `id` whose value bytes are `bytes`.
    @inline(__always)
    static func decodeMigrated(id: Int64, _ bytes: UnsafeRawBufferPointer) throws -> MigratedPerson {
        var reader = Reader(bytes: bytes)
        let fields = try decodeFields(&reader)
        let karma = try reader.integer(UInt64.self)
        guard reader.offset == bytes.count else { throw Malformed() }
        return MigratedPerson(
            id: id, name: fields.name, email: fields.email, age: fields.age, score: fields.score, about: fields.text,
            karma: Int(Int64(bitPattern: karma)))
    }
}
