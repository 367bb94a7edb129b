public import Foundation
import PersistenceCore

/// The timed phases of RS2, in the order they run on one store.
public enum SuiteStudentsPhase: String, CaseIterable, Sendable {
    /// The schools, the students and their grades created in one transaction.
    case insert
    /// The students with an A* in physics (a condition through the to-many `grades`).
    case query
    /// Falconwood College's maths grades set to F in one transaction (found through the grade's student's school).
    case fail
    /// Every student deleted in one transaction, their grades with them (ours: the cascade rule).
    case deleteAll = "delete-all"
}

/// RS2, the Realm-vs-SwiftData suite's complex objects: schools, students and their grades, queried and changed
/// through relationships.
///
/// Raw SQLite is the C API on the tables ours makes, the conditions as `EXISTS` subqueries and joins, the change one
/// `UPDATE` and the delete two `DELETE`s. Ours is `@Entity` types with relationships and delete rules on SQLite, plain
/// and encrypted LMDB; GRDB `Codable` records with associations (`having`, `joining(required:)`) and SQLite's own
/// `ON DELETE CASCADE`. There is no raw LMDB row: relationships over LMDB by hand would be a small database engine of
/// their own, not a baseline.
public enum SuiteStudentsSubject: String, CaseIterable, Sendable {
    case rawSQLite = "raw-sqlite"
    case oursSQLite = "ours-sqlite"
    case grdb = "grdb"
    case oursLMDBPlain = "ours-lmdb-plain"
    case oursLMDBEncrypted = "ours-lmdb-encrypted"

    /// The workload id; each phase's rows are `RS2/<phase>`.
    public static let workload = "RS2"

    /// Whether ratios to raw SQLite mean something for this implementation (the SQLite ones).
    public var onSQLite: Bool { self == .rawSQLite || self == .oursSQLite || self == .grdb }

    /// Runs every phase on a new store in `directory`, checking each phase's result.
    public func run(_ input: SuiteStudentsInput, directory: URL) throws -> SuiteRun {
        let verify = Verifier(workload: Self.workload, implementation: rawValue)
        var run = SuiteRun()
        func timed<R>(_ phase: SuiteStudentsPhase, _ body: () throws -> R) throws -> R {
            let (result, seconds) = try InstructionLabel.measuring("\(Self.workload)/\(phase.rawValue)", rawValue) {
                try Stopwatch.time(body)
            }
            run.seconds[phase.rawValue] = seconds
            return result
        }
        var store = try open(directory)
        try timed(.insert) { try store.insert(input) }
        let stars = try timed(.query) { try store.physicsStars() }
        try verify.expect(stars.count == input.physicsStars.count, "\(stars.count) students with A* in physics")
        try verify.expect(Set(stars) == input.physicsStars, "not the students with an A* in physics")
        let failed = try timed(.fail) { try store.failMaths(at: SuiteStudentsInput.cheatingSchool) }
        try verify.expect(failed == input.cheatingGrades.count, "failed \(failed) grades")
        try verify.expect(try store.grades(marked: .f).isSuperset(of: input.cheatingGrades), "a grade wasn't failed")
        try store.close()
        run.fileBytes = try SuiteUsersSubject.bytes(in: directory)
        store = try open(directory)
        let deleted = try timed(.deleteAll) { try store.deleteAllStudents() }
        try verify.expect(deleted == input.students.count, "deleted \(deleted) students")
        try verify.expect(try store.gradeCount() == 0, "grades outlived their students")
        try store.close()
        return run
    }

    private func open(_ directory: URL) throws -> any SuiteStudentsStore {
        switch self {
        case .rawSQLite: try RawSuiteStudentsStore(directory: directory)
        case .oursSQLite: try OursSuiteStudentsStore(.sqlite, directory: directory)
        case .grdb: try GRDBSuiteStudentsStore(directory: directory)
        case .oursLMDBPlain: try OursSuiteStudentsStore(.lmdbPlain, directory: directory)
        case .oursLMDBEncrypted: try OursSuiteStudentsStore(.lmdbEncrypted, directory: directory)
        }
    }
}

/// What RS2 asks of each implementation's store.
protocol SuiteStudentsStore: AnyObject {
    func insert(_ input: SuiteStudentsInput) throws
    /// The ids of the students with an A* in physics.
    func physicsStars() throws -> [UUID]
    /// Sets the maths grades of the students of the school named `school` to F; returns how many.
    func failMaths(at school: String) throws -> Int
    /// The ids of the grades with this mark (to check the change; not timed).
    func grades(marked mark: SuiteMark) throws -> Set<UUID>
    /// Deletes every student, and so their grades; returns how many students.
    func deleteAllStudents() throws -> Int
    /// How many grades are stored (to check the delete; not timed).
    func gradeCount() throws -> Int
    func close() throws
}

/// Ours: `@Entity` types with relationships and delete rules; conditions through relationships (`Related`).
final class OursSuiteStudentsStore: SuiteStudentsStore {
    private let db: any PersistenceCore.Database

    init(_ backend: OursGraphStore, directory: URL) throws {
        db = try backend.open(directory, [SuiteSchool.self, SuiteStudent.self, SuiteGrade.self])
    }

    func insert(_ input: SuiteStudentsInput) throws {
        try db.write { context in
            try context.create(input.schools)
            try context.create(input.students)
            try context.create(input.grades)
        }
    }

    func physicsStars() throws -> [UUID] {
        let star = Field("subject") == SuiteSubject.physics && Field("mark") == SuiteMark.aStar
        return try db.read { context in
            try context.recover(SuiteStudent.self, query: Query(where: Related("grades").contains(where: star)))
        }.map(\.id)
    }

    func failMaths(at school: String) throws -> Int {
        let cheating =
            Field("subject") == SuiteSubject.maths
            && Related("student").matches(Related("school").matches(Field("name") == school))
        return try db.write { context in
            let grades = try context.recover(SuiteGrade.self, query: Query(where: cheating))
            for var grade in grades {
                grade.mark = .f
                try context.update(grade)
            }
            return grades.count
        }
    }

    func grades(marked mark: SuiteMark) throws -> Set<UUID> {
        Set(try db.read { try $0.recover(SuiteGrade.self, query: Query(where: Field("mark") == mark)) }.map(\.id))
    }

    func deleteAllStudents() throws -> Int { try db.write { context in try context.deleteAll(SuiteStudent.self) } }

    func gradeCount() throws -> Int { try db.read { context in try context.count(SuiteGrade.self) } }

    func close() throws { try db.close() }
}
