/// The inputs of one run, generated once before any timing, and the results each workload must produce.
public struct Dataset: Sendable {
    public let generator: PersonGenerator
    /// Records 1…N, in id order.
    public let people: [Person]
    /// The ids of the random point lookups (S3, L4).
    public let lookupIDs: [Int64]
    /// The names of the lookups by name (S4).
    public let lookupNames: [String]
    /// The records of S7, each inserted in its own transaction into an empty store.
    public let singleInserts: [Person]

    /// Every record, as stored.
    public let allChecksum: Checksum
    /// Every record, after S5's update.
    public let updatedChecksum: Checksum
    /// What the point lookups find.
    public let lookupChecksum: Checksum
    /// What the lookups by name find.
    public let nameLookupChecksum: Checksum
    /// What S7 stores.
    public let singleInsertChecksum: Checksum

    /// - Parameters:
    ///   - count: N, the number of records.
    ///   - lookups: How many point lookups (S3, L4).
    ///   - nameLookups: How many lookups by name (S4).
    ///   - singleInserts: How many single-insert transactions (S7); at most `count`.
    public init(count: Int, lookups: Int, nameLookups: Int = 1000, singleInserts: Int = 1000) {
        let generator = PersonGenerator(count: count)
        self.generator = generator
        people = Array(generator.people)
        lookupIDs = generator.randomIDs(lookups)
        let nameNumbers = generator.randomNameNumbers(nameLookups)
        lookupNames = nameNumbers.map { generator.name(number: $0) }
        self.singleInserts = Array(people.prefix(singleInserts))

        // The expectations come from the generator, never from a store.
        allChecksum = Checksum(people)
        updatedChecksum = Checksum(people.lazy.map(\.updated))
        lookupChecksum = Checksum(lookupIDs.lazy.map { generator.person(id: $0) })
        nameLookupChecksum = Checksum(
            nameNumbers.lazy.flatMap { generator.ids(withNameNumber: $0) }.map { generator.person(id: $0) })
        singleInsertChecksum = Checksum(self.singleInserts)
    }
}
