import Foundation
import GRDB
import RawSQLite

/// RS2's raw SQLite baseline: the C API on the tables ours makes (`WITHOUT ROWID`, UUIDs as 16-byte blobs, an index
/// per foreign key and per declared index), WAL and `synchronous = FULL`; conditions as SQL a careful programmer
/// writes by hand.
final class RawSuiteStudentsStore: SuiteStudentsStore {
    private let connection: RawSQLiteConnection

    init(directory: URL) throws {
        connection = try RawSQLiteConnection.durable(
            "raw.sqlite", in: directory,
            schema: """
                CREATE TABLE IF NOT EXISTS "School" ("id" BLOB NOT NULL PRIMARY KEY, "name" TEXT NOT NULL,
                    "location" TEXT NOT NULL) WITHOUT ROWID;
                CREATE INDEX IF NOT EXISTS "School_name" ON "School" ("name");
                CREATE TABLE IF NOT EXISTS "Student" ("id" BLOB NOT NULL PRIMARY KEY, "firstName" TEXT NOT NULL,
                    "surname" TEXT NOT NULL, "age" INTEGER NOT NULL, "schoolID" BLOB) WITHOUT ROWID;
                CREATE INDEX IF NOT EXISTS "Student_schoolID" ON "Student" ("schoolID");
                CREATE TABLE IF NOT EXISTS "Grade" ("id" BLOB NOT NULL PRIMARY KEY, "studentID" BLOB NOT NULL,
                    "subject" TEXT NOT NULL, "mark" TEXT NOT NULL, "examBoard" TEXT NOT NULL) WITHOUT ROWID;
                CREATE INDEX IF NOT EXISTS "Grade_subject" ON "Grade" ("subject");
                CREATE INDEX IF NOT EXISTS "Grade_mark" ON "Grade" ("mark");
                CREATE INDEX IF NOT EXISTS "Grade_studentID" ON "Grade" ("studentID");
                """)
    }

    func insert(_ input: SuiteStudentsInput) throws {
        let school = try connection.prepare(#"INSERT INTO "School" VALUES (?, ?, ?)"#)
        let student = try connection.prepare(#"INSERT INTO "Student" VALUES (?, ?, ?, ?, ?)"#)
        let grade = try connection.prepare(#"INSERT INTO "Grade" VALUES (?, ?, ?, ?, ?)"#)
        try connection.execute("BEGIN IMMEDIATE")
        for row in input.schools {
            try connection.bind(row.id, at: 1, school)
            try connection.bind(row.name, at: 2, school)
            try connection.bind(row.location, at: 3, school)
            _ = try connection.step(school)
            sqlite3_reset(school)
        }
        for row in input.students {
            try connection.bind(row.id, at: 1, student)
            try connection.bind(row.firstName, at: 2, student)
            try connection.bind(row.surname, at: 3, student)
            try connection.bind(Int64(row.age), at: 4, student)
            if let schoolID = row.schoolID {
                try connection.bind(schoolID, at: 5, student)
            } else {
                sqlite3_bind_null(student, 5)
            }
            _ = try connection.step(student)
            sqlite3_reset(student)
        }
        for row in input.grades {
            try connection.bind(row.id, at: 1, grade)
            try connection.bind(row.studentID, at: 2, grade)
            try connection.bind(row.subject.rawValue, at: 3, grade)
            try connection.bind(row.mark.rawValue, at: 4, grade)
            try connection.bind(row.examBoard.rawValue, at: 5, grade)
            _ = try connection.step(grade)
            sqlite3_reset(grade)
        }
        try connection.execute("COMMIT")
    }

    func physicsStars() throws -> [UUID] {
        try ids(
            """
            SELECT "id" FROM "Student" WHERE EXISTS (SELECT 1 FROM "Grade" WHERE "Grade"."studentID" = "Student"."id"
                AND "subject" = 'physics' AND "mark" = 'aStar')
            """)
    }

    func failMaths(at school: String) throws -> Int {
        let update = try connection.prepare(
            """
            UPDATE "Grade" SET "mark" = 'f' WHERE "subject" = 'maths' AND "studentID" IN (SELECT "Student"."id"
                FROM "Student" JOIN "School" ON "School"."id" = "Student"."schoolID" WHERE "School"."name" = ?)
            """)
        defer { sqlite3_reset(update) }
        try connection.execute("BEGIN IMMEDIATE")
        try connection.bind(school, at: 1, update)
        _ = try connection.step(update)
        let changed = Int(sqlite3_changes(connection.handle))
        try connection.execute("COMMIT")
        return changed
    }

    func grades(marked mark: SuiteMark) throws -> Set<UUID> {
        Set(try ids(#"SELECT "id" FROM "Grade" WHERE "mark" = '"# + mark.rawValue + "'"))
    }

    func deleteAllStudents() throws -> Int {
        try connection.execute("BEGIN IMMEDIATE")
        try connection.execute(#"DELETE FROM "Grade" WHERE "studentID" IN (SELECT "id" FROM "Student")"#)
        try connection.execute(#"DELETE FROM "Student""#)
        let deleted = Int(sqlite3_changes(connection.handle))
        try connection.execute("COMMIT")
        return deleted
    }

    func gradeCount() throws -> Int { try connection.integer(#"SELECT count(*) FROM "Grade""#) ?? -1 }

    func close() throws { connection.close() }

    private func ids(_ sql: String) throws -> [UUID] {
        let select = try connection.prepare(sql)
        defer { sqlite3_reset(select) }
        var ids: [UUID] = []
        while try connection.step(select) { ids.append(RawSQLiteConnection.uuid(select, 0)) }
        return ids
    }
}

/// GRDB's records of RS2, `Codable`, with associations.
struct GRDBSuiteSchool: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "School"
    var id: UUID
    var name: String
    var location: String
}

struct GRDBSuiteStudent: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "Student"
    static let school = belongsTo(GRDBSuiteSchool.self, using: ForeignKey(["schoolID"]))
    static let grades = hasMany(GRDBSuiteGrade.self, using: ForeignKey(["studentID"]))
    var id: UUID
    var firstName: String
    var surname: String
    var age: Int
    var schoolID: UUID?
}

struct GRDBSuiteGrade: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "Grade"
    static let student = belongsTo(GRDBSuiteStudent.self, using: ForeignKey(["studentID"]))
    var id: UUID
    var studentID: UUID
    var subject: String
    var mark: String
    var examBoard: String
}

/// RS2 on GRDB 7 as its documentation shows: a `DatabasePool`, `Codable` records with associations, foreign keys
/// with SQLite's `ON DELETE CASCADE` (GRDB turns foreign keys on).
final class GRDBSuiteStudentsStore: SuiteStudentsStore {
    private let pool: DatabasePool

    init(directory: URL) throws {
        pool = try DatabasePool.durable(at: directory.appendingPathComponent("grdb.sqlite"))
        try pool.write { db in
            try db.create(table: "School", options: [.ifNotExists, .withoutRowID]) { table in
                table.primaryKey("id", .blob)
                table.column("name", .text).notNull().indexed()
                table.column("location", .text).notNull()
            }
            try db.create(table: "Student", options: [.ifNotExists, .withoutRowID]) { table in
                table.primaryKey("id", .blob)
                table.column("firstName", .text).notNull()
                table.column("surname", .text).notNull()
                table.column("age", .integer).notNull()
                table.column("schoolID", .blob).indexed().references("School", onDelete: .setNull)
            }
            try db.create(table: "Grade", options: [.ifNotExists, .withoutRowID]) { table in
                table.primaryKey("id", .blob)
                table.column("studentID", .blob).notNull().indexed().references("Student", onDelete: .cascade)
                table.column("subject", .text).notNull().indexed()
                table.column("mark", .text).notNull().indexed()
                table.column("examBoard", .text).notNull()
            }
        }
    }

    func insert(_ input: SuiteStudentsInput) throws {
        try pool.write { db in
            for row in input.schools {
                try GRDBSuiteSchool(id: row.id, name: row.name, location: row.location).insert(db)
            }
            for row in input.students {
                try GRDBSuiteStudent(
                    id: row.id, firstName: row.firstName, surname: row.surname, age: row.age, schoolID: row.schoolID
                ).insert(db)
            }
            for row in input.grades {
                try GRDBSuiteGrade(
                    id: row.id, studentID: row.studentID, subject: row.subject.rawValue, mark: row.mark.rawValue,
                    examBoard: row.examBoard.rawValue
                ).insert(db)
            }
        }
    }

    func physicsStars() throws -> [UUID] {
        try pool.read { db in
            // `having(association.isEmpty == false)` groups every student's grades (10 s for 5,000 students):
            // a required join with `distinct()` is GRDB's fast way to ask "has such a grade".
            let stars = GRDBSuiteStudent.grades.filter(Column("subject") == "physics" && Column("mark") == "aStar")
            return try GRDBSuiteStudent.joining(required: stars).distinct().fetchAll(db).map(\.id)
        }
    }

    func failMaths(at school: String) throws -> Int {
        try pool.write { db in
            let students = GRDBSuiteGrade.student.joining(
                required: GRDBSuiteStudent.school.filter(Column("name") == school))
            let grades = try GRDBSuiteGrade.filter(Column("subject") == "maths").joining(required: students)
                .fetchAll(db)
            for var grade in grades {
                grade.mark = SuiteMark.f.rawValue
                try grade.update(db)
            }
            return grades.count
        }
    }

    func grades(marked mark: SuiteMark) throws -> Set<UUID> {
        try pool.read { db in
            Set(try GRDBSuiteGrade.filter(Column("mark") == mark.rawValue).fetchAll(db).map(\.id))
        }
    }

    func deleteAllStudents() throws -> Int { try pool.write { db in try GRDBSuiteStudent.deleteAll(db) } }

    func gradeCount() throws -> Int { try pool.read { db in try GRDBSuiteGrade.fetchCount(db) } }

    func close() throws { try pool.close() }
}
