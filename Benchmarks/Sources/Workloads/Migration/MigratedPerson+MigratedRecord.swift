import PersistenceCore
import RawSQLite

/// M2's change, the same on every backend: the app's migration block.
extension MigratedPerson: MigratedRecord {
    static var workload: String { "M2" }
    static let version2 = Model(version: 2, entities: [MigratedPerson.self])

    /// Renames `bio` to `about`; `karma` is added with its declared default around the block.
    static func configure(_ builder: inout some MigratingDatabaseBuilder) {
        builder.migrationBlock = { migration, oldSchemaVersion in
            if oldSchemaVersion < 2 {
                try migration.renameProperty(onType: "Person", from: "bio", to: "about")
            }
        }
    }

    static func migrated(from person: Person) -> MigratedPerson? { MigratedPerson(migrating: person) }

    /// The version-1 record it was migrated from (``karma`` aside, checked on its own), as the generator's
    /// checksum hashes it.
    func add(to checksum: inout Checksum) { checksum.add(original) }

    static func encode(_ person: MigratedPerson, into buffer: inout [UInt8]) {
        PersonCodec.encode(person, into: &buffer)
    }

    static func decode(id: Int64, _ bytes: UnsafeRawBufferPointer) throws -> MigratedPerson {
        try PersonCodec.decodeMigrated(id: id, bytes)
    }

    /// `bio` renamed `about`, `karma` added.
    static let rebuiltTable = RebuiltPersonTable(
        definition: """
            CREATE TABLE "Person_new" ("id" INTEGER NOT NULL PRIMARY KEY, "name" TEXT NOT NULL,
                "email" TEXT NOT NULL, "age" INTEGER NOT NULL, "score" REAL NOT NULL, "about" TEXT NOT NULL,
                "karma" INTEGER NOT NULL)
            """,
        columns: #""id", "name", "email", "age", "score", "about", "karma""#,
        selection: #""id", "name", "email", "age", "score", "bio", \#(defaultKarma)"#,
        goneColumn: "bio")

    static func read(_ statement: OpaquePointer, _ verify: Verifier) throws -> MigratedPerson {
        try RawSQLiteConnection.expectIntegers(statement, [(3, "age"), (6, "karma")], verify)
        return MigratedPerson(
            id: sqlite3_column_int64(statement, 0), name: RawSQLiteConnection.text(statement, 1),
            email: RawSQLiteConnection.text(statement, 2), age: Int(sqlite3_column_int64(statement, 3)),
            score: sqlite3_column_double(statement, 4), about: RawSQLiteConnection.text(statement, 5),
            karma: Int(sqlite3_column_int64(statement, 6)))
    }
}
