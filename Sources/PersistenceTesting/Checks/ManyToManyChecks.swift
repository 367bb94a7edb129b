import Foundation
import PersistenceCore
import Testing

/// Many-to-many relationships through the join entity the model adds: linking and unlinking, deletes that take a
/// record's links with it, eager loading and conditions through the links, an entity linked with itself, and a
/// randomized run against a reference model — on every backend.
enum ManyToManyChecks {
    typealias G = GraphFixtures
    typealias Enrollment = ManyToManyLink<G.Course, G.Student>

    static let all: [ConformanceCheck] = [
        check("links and unlinks records, once per pair, and refuses what isn't stored or declared") { try links($0) },
        check("loads each side's linked records filtered, sorted and limited, as Swift computes them") {
            try loading($0)
        },
        check("loads linked records of more than one query's batch in the order asked for") { try batches($0) },
        check("answers conditions and counts through the links") { try conditions($0) },
        check("deletes a record's links with it, on either side, and tells observers") { try await deletes($0) },
        check("observes queries and graphs through links: linking re-runs them") { try await observed($0) },
        check("follows and followers: a many-to-many of an entity with itself") { try following($0) },
        check("keeps links equal to a reference model over 400 random links, unlinks and deletes") {
            try randomized($0)
        },
        ConformanceCheck("refuses many-to-manys without an inverse, their own inverse, or two between two entities") {
            backend, directory in
            try await refusals(backend, directory)
        },
    ]

    static func check(_ name: String, _ body: @escaping @Sendable (any Database) async throws -> Void)
        -> ConformanceCheck
    {
        ConformanceCheck(name) { backend, directory in
            try await withDatabase(backend, directory, G.manyToManyEntities, body)
        }
    }

    /// Students 1…12, courses with text keys, and links chosen by a seeded generator; returns the links.
    static func seed(_ db: some Database, seed: UInt64 = 7) throws -> Set<[String]> {
        var random = SeededGenerator(seed: seed)
        let students = (1...12).map { G.Student(id: Int64($0), name: "s\($0 % 5)") }
        let courses = ["math", "art", "it's", "", "café", "bio"].enumerated().map {
            G.Course(id: $0.element, title: "t\($0.offset % 3)", credits: $0.offset * 2)
        }
        var links = Set<[String]>()
        try db.write { context in
            try context.create(students)
            try context.create(courses)
            for student in students {
                for course in courses where Int.random(in: 0..<3, using: &random) == 0 {
                    try context.link(student, "courses", course)
                    links.insert([String(student.id), course.id])
                }
            }
        }
        return links
    }

    static func links(_ db: some Database) throws {
        try db.create([G.Student(id: 1, name: "Ada"), G.Student(id: 2, name: "Alan")])
        try db.create(G.Course(id: "math", title: "Mathematics", credits: 6))
        let ada = G.Student(id: 1, name: "Ada")
        let math = G.Course(id: "math", title: "Mathematics", credits: 6)
        #expect(try db.link(ada, "courses", math))
        // Once per pair, from either side.
        #expect(try !db.link(ada, "courses", math))
        #expect(try !db.link(math, "students", ada))
        #expect(try db.write { try $0.link(G.Course.self, id: "math", "students", G.Student.self, id: 2) })
        #expect(try db.count(Enrollment.self) == 2)
        #expect(try Set(db.recover(Enrollment.self).map(\.targetID)) == [1, 2])
        // Records that aren't stored, relationships that aren't declared or lead elsewhere: nothing changes.
        expectError(.referenceNotFound) { try db.link(ada, "courses", G.Course(id: "art", title: "", credits: 0)) }
        expectError(.referenceNotFound) { try db.link(G.Student(id: 9, name: ""), "courses", math) }
        expectError(.unknownAttribute) { try db.link(ada, "classes", math) }
        expectError(.invalidArgument) { try db.link(ada, "courses", G.Student(id: 2, name: "")) }
        expectError(.invalidArgument) {
            try db.link(G.Person(id: 1, name: ""), "follows", G.Student(id: 2, name: ""))
        }
        #expect(try db.count(Enrollment.self) == 2)
        #expect(try db.unlink(math, "students", ada))
        #expect(try !db.unlink(ada, "courses", math))
        #expect(
            try db.recover(G.Student.self, including: .many("courses", G.Course.self)).map(\.related.count) == [0, 1])
        #expect(try db.verify().isSound)
    }

    static func loading(_ db: some Database) throws {
        let links = try seed(db)
        let students = try db.recover(G.Student.self)
        let courses = try db.recover(G.Course.self)
        let cases: [(Condition?, [Sort], Int?)] = [
            (nil, [], nil), (Field("credits") >= 4, [.descending("credits")], 2), (nil, [.ascending("title")], 1),
            (Field("title") == "t1", [], 0),
        ]
        for (condition, sort, limit) in cases {
            let loaded = try db.recover(
                G.Student.self, sortedBy: [.descending("id")],
                including: .many("courses", G.Course.self, where: condition, sortedBy: sort, limit: limit))
            #expect(loaded.map(\.entity.id) == students.map(\.id).reversed())
            for student in loaded {
                let mine = courses.filter { links.contains([String(student.entity.id), $0.id]) }.map(\.id)
                let expected = try db.recover(
                    G.Course.self, where: condition.map { Field("id").in(mine) && $0 } ?? Field("id").in(mine),
                    sortedBy: sort, limit: limit)
                #expect(student.related == expected, "student \(student.entity.id)")
            }
        }
        // The other side, nested back again.
        let loaded = try db.recover(
            G.Course.self, including: .many("students", G.Student.self, including: .many("courses", G.Course.self)))
        for course in loaded {
            let mine = students.filter { links.contains([String($0.id), course.entity.id]) }
            #expect(course.related.map(\.entity) == mine, "course \(course.entity.id)")
            for student in course.related {
                #expect(student.related.contains(course.entity))
            }
        }
    }

    static func batches(_ db: some Database) throws {
        let count = Including<G.Student, [G.Course]>.batchSize + 300
        let courses = (0..<count).map {
            G.Course(id: String(format: "c%05d", $0), title: "", credits: ($0 * 7919) % count)
        }
        try db.write { context in
            try context.create([G.Student(id: 1, name: ""), G.Student(id: 2, name: "")])
            try context.create(courses)
            // Links written as the join entity's records: it is an entity like any other.
            try context.create(courses.map { Enrollment(sourceID: $0.id, targetID: 1) })
            try context.create(courses.prefix(10).map { Enrollment(sourceID: $0.id, targetID: 2) })
        }
        let loaded = try db.recover(
            G.Student.self,
            including: .many("courses", G.Course.self, sortedBy: [.descending("credits")], limit: 3))
        let top = courses.sorted { $0.credits > $1.credits }
        #expect(loaded.first?.related == Array(top.prefix(3)))
        #expect(loaded.last?.related == Array(courses.prefix(10).sorted { $0.credits > $1.credits }.prefix(3)))
        let all = try db.recover(
            G.Student.self, including: .many("courses", G.Course.self, sortedBy: [.ascending("credits")]))
        #expect(all.first?.related == top.reversed())
    }

    static func conditions(_ db: some Database) throws {
        let links = try seed(db)
        let allStudents = try db.recover(G.Student.self)
        let allCourses = try db.recover(G.Course.self)
        func courses(of student: G.Student) -> [G.Course] {
            allCourses.filter { links.contains([String(student.id), $0.id]) }
        }
        func students(of course: G.Course) -> [G.Student] {
            allStudents.filter { links.contains([String($0.id), course.id]) }
        }
        let studentCases: [(Condition, (G.Student) -> Bool)] = [
            (
                Related("courses").contains(where: Field("credits") >= 6),
                { courses(of: $0).contains { $0.credits >= 6 } }
            ),
            (Related("courses").isEmpty, { courses(of: $0).isEmpty }),
            (Related("courses").count >= 2, { courses(of: $0).count >= 2 }),
            (
                Related("courses").count(where: Field("title") == "t0") == 1,
                { courses(of: $0).count { $0.title == "t0" } == 1 }
            ),
            (
                Related("courses").contains(where: Related("students").count >= 5),
                { courses(of: $0).contains { students(of: $0).count >= 5 } }
            ),
            (
                !Related("courses").contains(where: Field("id") == "it's"),
                { !courses(of: $0).contains { $0.id == "it's" } }
            ),
        ]
        for (index, (condition, holds)) in studentCases.enumerated() {
            #expect(try db.recover(G.Student.self, where: condition) == allStudents.filter(holds), "case \(index)")
            #expect(try db.count(G.Student.self, where: condition) == allStudents.count(where: holds), "case \(index)")
        }
        let popular = try db.recover(G.Course.self, where: Related("students").count > 3)
        #expect(popular == allCourses.filter { students(of: $0).count > 3 })
        let rows = try db.aggregate(G.Course.self, [.sum("credits", as: "credits")], where: Related("students").exists)
        let linked = allCourses.filter { !students(of: $0).isEmpty }
        let total: Value = linked.isEmpty ? .null : .integer(Int64(linked.reduce(0) { $0 + $1.credits }))
        #expect(rows.first?["credits"] == total)
    }

    static func deletes(_ db: some Database) async throws {
        let links = try seed(db)
        var changes = db.changes(of: Enrollment.self).makeAsyncIterator()
        let art = try #require(try db.recover(G.Course.self, id: "art"))
        let artLinks = links.filter { $0[1] == "art" }.count
        #expect(try db.delete(art))
        #expect(try db.count(Enrollment.self) == links.count - artLinks)
        if artLinks > 0 {
            let change = await changes.next()
            #expect(change?.deleted.count == artLinks)
        }
        // A student's links go with the student; the courses stay.
        let one = links.filter { $0[0] == "1" && $0[1] != "art" }.count
        #expect(try db.delete(G.Student.self, id: 1))
        #expect(try db.count(Enrollment.self) == links.count - artLinks - one)
        #expect(try db.count(G.Course.self) == 5)
        // Every student, by condition: no link left, nothing dangling.
        #expect(try db.delete(G.Student.self, where: Field("id") > 0) == 11)
        #expect(try db.count(Enrollment.self) == 0)
        #expect(try await db.verify().isSound)
    }

    static func observed(_ db: some Database) async throws {
        let ada = G.Student(id: 1, name: "Ada")
        let math = G.Course(id: "math", title: "", credits: 6)
        try db.create(ada)
        try db.create(math)
        var enrolled = db.observe(G.Student.self, where: Related("courses").exists).makeAsyncIterator()
        var graph = db.observe(G.Course.self, including: .many("students", G.Student.self)).makeAsyncIterator()
        #expect(try await enrolled.next() == [])
        #expect(try await graph.next()?.first?.related == [])
        try await db.write { try $0.link(ada, "courses", math) }
        #expect(try await enrolled.next() == [ada])
        #expect(try await graph.next()?.first?.related == [ada])
    }

    static func following(_ db: some Database) throws {
        let people = (1...4).map { G.Person(id: Int64($0), name: "p\($0)") }
        try db.create(people)
        try db.write { context in
            try context.link(people[0], "follows", people[1])
            try context.link(people[0], "follows", people[2])
            try context.link(people[1], "follows", people[0])
            try context.link(people[3], "followers", people[2])  // p3 follows p4
            try context.link(people[3], "follows", people[3])  // following oneself is a link like any other
        }
        let loaded = try db.recover(
            G.Person.self,
            including: .both(.many("follows", G.Person.self), .many("followers", G.Person.self)))
        #expect(loaded.map { $0.related.first.map(\.id) } == [[2, 3], [1], [4], [4]])
        #expect(loaded.map { $0.related.second.map(\.id) } == [[2], [1], [1], [3, 4]])
        #expect(try db.recover(G.Person.self, where: Related("followers").isEmpty).isEmpty)
        #expect(try db.recover(G.Person.self, where: Related("follows").count >= 2).map(\.id) == [1])
        #expect(
            try db.recover(G.Person.self, where: Related("followers").contains(where: Field("name") == "p1")).map(\.id)
                == [2, 3])
        // Following back is a second link; deleting p1 removes both directions.
        #expect(try !db.link(people[1], "followers", people[0]))
        #expect(try db.delete(G.Person.self, id: 1))
        let left = try db.recover(G.Person.self, including: .many("followers", G.Person.self))
        #expect(left.map { $0.related.map(\.id) } == [[], [], [3, 4]])
    }

    static func randomized(_ db: some Database) throws {
        var random = SeededGenerator(seed: 400)
        // Courses by their index: "é" and "e\u{301}" are two keys to the store (bytes), one to Swift's `==`.
        let courseIDs = ["a", "b", "c", "d", "é", "e\u{301}"]
        var students = Set<Int64>()
        var courses = Set<Int>()
        var links = Set<[Int64]>()
        for step in 0..<400 {
            let student = Int64.random(in: 1...8, using: &random)
            let course = Int.random(in: 0..<courseIDs.count, using: &random)
            let courseID = courseIDs[course]
            let pair = [student, Int64(course)]
            switch Int.random(in: 0..<10, using: &random) {
            case 0..<2:
                try db.write { context in
                    if !students.contains(student) { try context.create(G.Student(id: student, name: "")) }
                    if !courses.contains(course) {
                        try context.create(G.Course(id: courseID, title: "", credits: 1))
                    }
                }
                students.insert(student)
                courses.insert(course)
            case 2..<6:
                let stored = students.contains(student) && courses.contains(course)
                do {
                    let new = try db.write {
                        try $0.link(G.Student.self, id: student, "courses", G.Course.self, id: courseID)
                    }
                    #expect(stored && new == !links.contains(pair), "step \(step)")
                    links.insert(pair)
                } catch let error as PersistenceError {
                    #expect(!stored && error.code == .referenceNotFound, "step \(step)")
                }
            case 6..<8:
                let removed = try db.write {
                    try $0.unlink(G.Course.self, id: courseID, "students", G.Student.self, id: student)
                }
                #expect(removed == (links.remove(pair) != nil), "step \(step)")
            case 8:
                #expect(try db.delete(G.Student.self, id: student) == (students.remove(student) != nil))
                links = links.filter { $0[0] != student }
            default:
                #expect(try db.delete(G.Course.self, id: courseID) == (courses.remove(course) != nil))
                links = links.filter { $0[1] != Int64(course) }
            }
            guard step % 40 == 39 else { continue }
            let loaded = try db.recover(G.Student.self, including: .many("courses", G.Course.self))
            let found = loaded.flatMap { student in
                student.related.compactMap { course in
                    courseIDs.firstIndex { $0.utf8.elementsEqual(course.id.utf8) }.map {
                        [student.entity.id, Int64($0)]
                    }
                }
            }
            #expect(Set(found) == links && found.count == links.count, "step \(step)")
            #expect(try db.count(Enrollment.self) == links.count)
        }
        #expect(try db.verify().isSound)
    }

    static func refusals(_ backend: any ConformanceBackend, _ directory: URL) async throws {
        let refused: [[any Entity.Type]] = [
            [G.Author.self, G.OneSided.self], [G.OwnInverse.self], [G.Twice.self, G.TwiceTarget.self],
        ]
        for entities in refused {
            let error = await #expect(throws: PersistenceError.self, "\(entities)") {
                try await withDatabase(backend, directory, entities) { _ in }
            }
            #expect(error?.code == .invalidSchema, "\(entities): \(String(describing: error))")
        }
    }
}
