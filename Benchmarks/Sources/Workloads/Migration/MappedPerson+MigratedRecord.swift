import PersistenceCore
import RawSQLite

/// S8's change, the same on every backend: the app's `MigrationPlan` with one mapping model.
extension MappedPerson: MigratedRecord {
    static var workload: String { "S8" }
    static let version2 = Model(version: 2, entities: [MappedPerson.self])

    /// The app's plan at version 2: version 1 as shipped, and the mapping model of the step. `email` is removed
    /// and `karma` takes its declared default without being named: only the transform needs code.
    static let plan = MigrationPlan(
        models: [Model(version: 1, entities: [Person.self])],
        mappings: [
            MappingModel(
                from: 1, to: 2,
                [
                    .transform(
                        "Person",
                        [
                            "score": .value { source in
                                guard let points = try source.double("score"),
                                    let hundredths = MappedPerson.scoreInHundredths(points)
                                else { throw UnmappableScore() }
                                return hundredths
                            }
                        ])
                ])
        ])

    /// A stored score the transform can't turn into hundredths (never one the generator makes).
    struct UnmappableScore: Error {}

    static func configure(_ builder: inout some MigratingDatabaseBuilder) {
        builder.migrationPlan = plan
    }

    static func migrated(from person: Person) -> MappedPerson? { MappedPerson(mapping: person) }

    /// Hashed over every field.
    func add(to checksum: inout Checksum) {
        var hasher = Checksum.FieldHasher()
        hasher.mix(UInt64(bitPattern: id))
        hasher.mix(name)
        hasher.mix(bio)
        hasher.mix(UInt64(bitPattern: Int64(age)))
        hasher.mix(UInt64(bitPattern: Int64(score)))
        hasher.mix(UInt64(bitPattern: Int64(karma)))
        checksum.add(hash: hasher.finalized())
    }

    /// Little-endian `age`, `score` (hundredths) and, last, `karma`, 8 bytes each around `name` and `bio` (a 4-byte
    /// length and the UTF-8 bytes each): version 1's layout without `email`.
    static func encode(_ person: MappedPerson, into buffer: inout [UInt8]) {
        buffer.removeAll(keepingCapacity: true)
        PersonCodec.append(UInt64(bitPattern: Int64(person.age)), to: &buffer)
        PersonCodec.append(UInt64(bitPattern: Int64(person.score)), to: &buffer)
        PersonCodec.append(person.name, to: &buffer)
        PersonCodec.append(person.bio, to: &buffer)
        PersonCodec.append(UInt64(bitPattern: Int64(person.karma)), to: &buffer)
    }

    static func decode(id: Int64, _ bytes: UnsafeRawBufferPointer) throws -> MappedPerson {
        var reader = PersonCodec.Reader(bytes: bytes)
        let age = try reader.integer(UInt64.self)
        let score = try reader.integer(UInt64.self)
        let name = try reader.text()
        let bio = try reader.text()
        let karma = try reader.integer(UInt64.self)
        guard reader.offset == bytes.count else { throw PersonCodec.Malformed() }
        return MappedPerson(
            id: id, name: name, age: Int(Int64(bitPattern: age)), score: Int(Int64(bitPattern: score)), bio: bio,
            karma: Int(Int64(bitPattern: karma)))
    }

    /// `score` an integer, no `email`, `karma` added.
    static let rebuiltTable = RebuiltPersonTable(
        definition: """
            CREATE TABLE "Person_new" ("id" INTEGER NOT NULL PRIMARY KEY, "name" TEXT NOT NULL, "age" INTEGER NOT NULL,
                "score" INTEGER NOT NULL, "bio" TEXT NOT NULL, "karma" INTEGER NOT NULL)
            """,
        columns: #""id", "name", "age", "score", "bio", "karma""#,
        selection: #""id", "name", "age", \#(scoreInHundredthsSQL), "bio", \#(defaultKarma)"#,
        goneColumn: "email")

    static func read(_ statement: OpaquePointer, _ verify: Verifier) throws -> MappedPerson {
        try RawSQLiteConnection.expectIntegers(statement, [(3, "score"), (5, "karma")], verify)
        return MappedPerson(
            id: sqlite3_column_int64(statement, 0), name: RawSQLiteConnection.text(statement, 1),
            age: Int(sqlite3_column_int64(statement, 2)), score: Int(sqlite3_column_int64(statement, 3)),
            bio: RawSQLiteConnection.text(statement, 4), karma: Int(sqlite3_column_int64(statement, 5)))
    }
}
