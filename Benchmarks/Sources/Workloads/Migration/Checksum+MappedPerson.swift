extension Checksum {
    /// Adds a version-2 record of S8 (``MappedPerson``), hashed over every field.
    public mutating func add(_ person: MappedPerson) {
        add(hash: Self.hash(person))
    }

    /// The checksum S8's migration must produce from the generator's records: each mapped as the mapping model
    /// maps it.
    /// - Throws: ``VerificationError`` for a generated score the transform refuses (a broken generator).
    public static func mapped(_ generator: PersonGenerator) throws -> Checksum {
        var checksum = Checksum()
        for person in generator.people {
            guard let mapped = MappedPerson(mapping: person) else {
                throw VerificationError(
                    workload: "S8", implementation: "generator",
                    message: "record \(person.id)'s score \(person.score) has no integer form in hundredths")
            }
            checksum.add(mapped)
        }
        return checksum
    }

    static func hash(_ person: MappedPerson) -> UInt64 {
        var hasher = FieldHasher()
        hasher.mix(UInt64(bitPattern: person.id))
        hasher.mix(person.name)
        hasher.mix(person.bio)
        hasher.mix(UInt64(bitPattern: Int64(person.age)))
        hasher.mix(UInt64(bitPattern: Int64(person.score)))
        hasher.mix(UInt64(bitPattern: Int64(person.karma)))
        return hasher.finalized()
    }
}
