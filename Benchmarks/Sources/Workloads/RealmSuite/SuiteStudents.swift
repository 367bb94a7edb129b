import Foundation
import PersistenceCore
import PersistenceMacros

/// The suite's subjects, grades and exam boards (its `RealmGrade` enums), stored by raw value.
enum SuiteSubject: String, Codable, Sendable, CaseIterable {
    case maths, english, literature, physics, chemistry, biology, history, geography, french, german, music, art
    case physicalEducation, religiousStudies
}

enum SuiteMark: String, Codable, Sendable, CaseIterable {
    case aStar, a, b, c, d, e, f, u
}

enum SuiteExamBoard: String, Codable, Sendable, CaseIterable {
    case aqa, edexcel, ocr
}

/// A school of the suite's complex objects: indexed by name, as the suite's Realm model is.
@Entity
struct SuiteSchool: Equatable {
    var id: UUID
    var name: String
    var location: String
    static let entityName = "School"
    static let indexes: [Index] = [.on("name")]
    static let relationships: [Relationship] = [.toMany("students", SuiteStudent.self, inverse: "school")]
}

/// A student: a to-one to the school (nullified when the school goes) and the grades, which go with the student.
@Entity
struct SuiteStudent: Equatable {
    var id: UUID
    var firstName: String
    var surname: String
    var age: Int
    var schoolID: UUID?
    static let entityName = "Student"
    static let relationships: [Relationship] = [
        .toOne("school", SuiteSchool.self, foreignKey: "schoolID", onDelete: .nullify),
        .toMany("grades", SuiteGrade.self, inverse: "student"),
    ]
}

/// A grade: subject and mark indexed, as the suite's Realm model has them; deleted with its student.
@Entity
struct SuiteGrade: Equatable {
    var id: UUID
    var studentID: UUID
    var subject: SuiteSubject
    var mark: SuiteMark
    var examBoard: SuiteExamBoard
    static let entityName = "Grade"
    static let indexes: [Index] = [.on("subject"), .on("mark")]
    static let relationships: [Relationship] = [
        .toOne("student", SuiteStudent.self, foreignKey: "studentID", onDelete: .cascade)
    ]
}

/// RS2's data: 100 schools (the first "Falconwood College"), `count` students spread evenly over them, each with
/// grades in 5 distinct subjects (a random mark and exam board each), from a fixed seed; and what each phase must
/// find.
public struct SuiteStudentsInput: Sendable {
    /// The suite's size on SwiftData and Realm: 200,000 students (its Realm runs went to a million).
    public static let fullCount = 200_000
    /// `make compare`'s size: half the suite's, so five runs of every implementation take about 12 minutes on two
    /// cores (at the suite's size one run takes 5 minutes); `--realm-students 200000` for the suite's.
    public static let defaultCount = 100_000
    static let schoolCount = 100
    static let gradesPerStudent = 5
    static let cheatingSchool = "Falconwood College"

    let schools: [SuiteSchool]
    let students: [SuiteStudent]
    let grades: [SuiteGrade]
    /// The students with an A* in physics.
    let physicsStars: Set<UUID>
    /// The maths grades of Falconwood College's students: the ones the suite fails.
    let cheatingGrades: Set<UUID>

    public init(count: Int) {
        var generator = SplitMix64(seed: 0x5354_5544)
        func uuid() -> UUID {
            let bits = (generator.next(), generator.next())
            return withUnsafeBytes(of: bits) { UUID(uuid: $0.load(as: uuid_t.self)) }
        }
        let towns = ["Falconwood", "Eltham", "Welling", "Bexley", "Sidcup", "Lewisham", "Greenwich", "Erith"]
        schools = (0..<Self.schoolCount).map { index in
            SuiteSchool(
                id: uuid(), name: index == 0 ? Self.cheatingSchool : "School \(index)",
                location: towns[index % towns.count])
        }
        var students: [SuiteStudent] = []
        var grades: [SuiteGrade] = []
        let subjects = SuiteSubject.allCases
        for index in 0..<Swift.max(1, count) {
            let student = SuiteStudent(
                id: uuid(), firstName: "Student \(index)", surname: "Surname \(generator.next(below: 500))",
                age: 11 + generator.next(below: 7), schoolID: schools[index % schools.count].id)
            students.append(student)
            var taken = Set<Int>()
            while taken.count < Self.gradesPerStudent { taken.insert(generator.next(below: subjects.count)) }
            for subject in taken.sorted() {
                grades.append(
                    SuiteGrade(
                        id: uuid(), studentID: student.id, subject: subjects[subject],
                        mark: SuiteMark.allCases[generator.next(below: SuiteMark.allCases.count)],
                        examBoard: SuiteExamBoard.allCases[generator.next(below: SuiteExamBoard.allCases.count)]))
            }
        }
        self.students = students
        self.grades = grades
        physicsStars = Set(grades.lazy.filter { $0.subject == .physics && $0.mark == .aStar }.map(\.studentID))
        let falconwood = schools[0].id
        let atFalconwood = Set(students.lazy.filter { $0.schoolID == falconwood }.map(\.id))
        cheatingGrades = Set(
            grades.lazy.filter { $0.subject == .maths && atFalconwood.contains($0.studentID) }.map(\.id))
    }
}
