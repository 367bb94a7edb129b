import Foundation
import PersistenceCore
import Testing

/// Conditions through relationships (``Related``): "departments with an employee who …", "employees whose
/// department is …", counts of related records, nested and negated — each compared with the same answer computed in
/// Swift over every record, on every backend, in queries, counts, deletes, aggregates, eager loading and
/// observation.
enum RelationshipQueryChecks {
    typealias G = GraphFixtures

    static let all: [ConformanceCheck] = [
        RelationshipChecks.examples("answers conditions on related records as Swift computes them over all records") {
            try answers($0)
        },
        RelationshipChecks.examples("counts, deletes, aggregates and loads children by conditions on related records") {
            try otherReads($0)
        },
        RelationshipChecks.examples("refuses unknown relationships, attributes and operands inside related conditions")
        {
            try refusals($0)
        },
        RelationshipChecks.examples("observes a query on related records: a write to the related entity re-runs it") {
            try await observed($0)
        },
    ]

    /// The records of the examples, generated: departments (one empty), employees in them or none with managers,
    /// owners with dogs, authors with text keys that need quoting, and their books.
    struct Graph {
        var departments: [G.Department] = []
        var employees: [G.Employee] = []
        var owners: [G.Owner] = []
        var dogs: [G.Dog] = []
        var authors: [G.Author] = []
        var books: [G.Book] = []

        init(seed: UInt64) {
            var random = SeededGenerator(seed: seed)
            let names = ["Ada", "Alan", "Grace", "Edsger", "Barbara", "Ken", "Anita", "Niklaus"]
            departments = ["Sales", "R&D", "Ops", "Legal", "Empty"].enumerated().map {
                G.Department(id: Int64($0.offset + 1), name: $0.element)
            }
            for id in 1...60 {
                let department: Int64? =
                    Int.random(in: 0..<6, using: &random) == 0 ? nil : Int64.random(in: 1...4, using: &random)
                // Managers come first: each employee's manager has a smaller id (or none).
                let manager: Int64? =
                    id > 3 && Bool.random(using: &random)
                    ? Int64.random(in: 1..<Int64(min(id, 12)), using: &random) : nil
                employees.append(
                    G.Employee(
                        id: Int64(id), name: names[Int.random(in: 0..<names.count, using: &random)],
                        departmentID: department, managerID: manager))
            }
            for index in 0..<6 {
                let owner = G.Owner(
                    id: UUID(uuid: (UInt8(index), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1)), name: "o\(index)")
                owners.append(owner)
                for dog in 0..<(index % 4) {
                    dogs.append(
                        G.Dog(
                            id: UUID(uuid: (UInt8(index), UInt8(dog), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2)),
                            name: ["Rex", "Fido", "Lassie"][dog], ownerID: owner.id))
                }
            }
            authors = ["it's", "\"quoted\"", "café", "", "; DROP TABLE \"Book\"; --"].map {
                G.Author(id: $0, name: "n\($0.count)")
            }
            for (index, author) in authors.enumerated() where index != 2 {
                for book in 0...index {
                    books.append(G.Book(id: Int64(index * 10 + book), authorID: author.id, title: "t\(book)"))
                }
            }
        }

        func write(to db: some Database) throws {
            try db.write { context in
                try context.create(departments)
                try context.create(employees)
                try context.create(owners)
                try context.create(dogs)
                try context.create(authors)
                try context.create(books)
            }
        }

        func employees(of department: G.Department) -> [G.Employee] {
            employees.filter { $0.departmentID == department.id }
        }

        func department(of employee: G.Employee) -> G.Department? {
            departments.first { $0.id == employee.departmentID }
        }

        func manager(of employee: G.Employee) -> G.Employee? {
            employees.first { $0.id == employee.managerID }
        }

        func reports(of employee: G.Employee) -> [G.Employee] {
            employees.filter { $0.managerID == employee.id }
        }
    }

    /// A condition and what it means, computed in Swift.
    struct Case<E: Entity>: @unchecked Sendable {
        let label: String
        let condition: Condition
        let holds: (E) -> Bool
    }

    static func departmentCases(_ graph: Graph) -> [Case<G.Department>] {
        [
            Case(
                label: "an employee named A…",
                condition: Related("employees").contains(where: Field("name").hasPrefix("A"))
            ) {
                graph.employees(of: $0).contains { $0.name.hasPrefix("A") }
            },
            Case(label: "no employees", condition: Related("employees").isEmpty) { graph.employees(of: $0).isEmpty },
            Case(label: "some employee", condition: Related("employees").exists) { !graph.employees(of: $0).isEmpty },
            Case(label: ">= 15 employees", condition: Related("employees").count >= 15) {
                graph.employees(of: $0).count >= 15
            },
            Case(label: "!= 0 employees", condition: Related("employees").count != 0) {
                !graph.employees(of: $0).isEmpty
            },
            Case(label: "< 12 employees", condition: Related("employees").count < 12) {
                graph.employees(of: $0).count < 12
            },
            Case(
                label: "exactly 2 without a manager",
                condition: Related("employees").count(where: Field("managerID") == nil) == 2
            ) {
                graph.employees(of: $0).count { $0.managerID == nil } == 2
            },
            Case(
                label: "<= 3 without a manager",
                condition: Related("employees").count(where: Field("managerID") == nil) <= 3
            ) {
                graph.employees(of: $0).count { $0.managerID == nil } <= 3
            },
            Case(
                label: "an employee with two reports",
                condition: Related("employees").contains(where: Related("reports").count >= 2)
            ) {
                graph.employees(of: $0).contains { graph.reports(of: $0).count >= 2 }
            },
            Case(
                label: "name not Ops and not every employee managed",
                condition: Field("name") != "Ops"
                    && !(Related("employees").count(where: Field("managerID") == nil) == 0)
            ) {
                $0.name != "Ops" && graph.employees(of: $0).contains { $0.managerID == nil }
            },
            Case(label: "Legal or empty", condition: Field("name") == "Legal" || Related("employees").isEmpty) {
                $0.name == "Legal" || graph.employees(of: $0).isEmpty
            },
        ]
    }

    static func employeeCases(_ graph: Graph) -> [Case<G.Employee>] {
        [
            Case(label: "in Sales", condition: Related("department").matches(Field("name") == "Sales")) {
                graph.department(of: $0)?.name == "Sales"
            },
            Case(label: "in a department", condition: Related("department").exists) { graph.department(of: $0) != nil },
            Case(label: "in none", condition: Related("department").isEmpty) { graph.department(of: $0) == nil },
            Case(label: "not in R&D", condition: !Related("department").matches(Field("name") == "R&D")) {
                graph.department(of: $0)?.name != "R&D"
            },
            Case(
                label: "whose manager is in R&D",
                condition: Related("manager").matches(Related("department").matches(Field("name") == "R&D"))
            ) { graph.manager(of: $0).flatMap { graph.department(of: $0) }?.name == "R&D" },
            Case(label: "with reports", condition: Related("reports").exists) { !graph.reports(of: $0).isEmpty },
            Case(
                label: "with > 2 reports named A…",
                condition: Related("reports").count(where: Field("name").hasPrefix("A")) > 0
            ) {
                graph.reports(of: $0).contains { $0.name.hasPrefix("A") }
            },
            Case(
                label: "a colleague-manager: managed by someone in the same-named department",
                condition: Related("manager").matches(Related("reports").count >= 3) && Field("id") > 10
            ) { employee in
                employee.id > 10 && graph.manager(of: employee).map { graph.reports(of: $0).count >= 3 } == true
            },
        ]
    }

    static func answers(_ db: some Database) throws {
        let graph = Graph(seed: 30)
        try graph.write(to: db)
        for test in departmentCases(graph) {
            let found = try db.recover(G.Department.self, where: test.condition, sortedBy: [.ascending("id")])
            #expect(found == graph.departments.filter(test.holds), "\(test.label)")
        }
        for test in employeeCases(graph) {
            let found = try db.recover(G.Employee.self, where: test.condition, sortedBy: [.descending("name")])
            let expected = graph.employees.filter(test.holds).sorted {
                $0.name.utf8.elementsEqual($1.name.utf8)
                    ? $0.id < $1.id : !$0.name.utf8.lexicographicallyPrecedes($1.name.utf8)
            }
            #expect(found.map(\.id) == expected.map(\.id), "\(test.label)")
        }
        // UUID keys, a required to-one, a per-value limit beside the condition.
        let owners = try db.recover(G.Owner.self, where: Related("dogs").count(where: Field("name") != "Rex") >= 1)
        #expect(
            owners.map(\.id)
                == graph.owners.filter { owner in graph.dogs.contains { $0.ownerID == owner.id && $0.name != "Rex" } }
                .map(\.id))
        let dogs = try db.recover(G.Dog.self, where: Related("owner").matches(Field("name").in(["o2", "o3"])))
        let ownersNamed = Set(graph.owners.filter { ["o2", "o3"].contains($0.name) }.map(\.id))
        #expect(Set(dogs.map(\.id)) == Set(graph.dogs.filter { ownersNamed.contains($0.ownerID) }.map(\.id)))
        // Text keys that need quoting name their records exactly.
        for author in graph.authors {
            let books = try db.recover(G.Book.self, where: Related("author").matches(Field("id") == author.id))
            #expect(books.map(\.id) == graph.books.filter { $0.authorID == author.id }.map(\.id), "\(author.id)")
        }
        let limited = try db.recover(
            G.Employee.self,
            query: Query(
                where: Related("department").exists, sortedBy: [.ascending("id")],
                limitPerValue: LimitPerValue("departmentID", 1)))
        let firsts = [Int64](1...4).compactMap { id in graph.employees.first { $0.departmentID == id } }
        #expect(limited.map(\.id) == firsts.map(\.id).sorted())
    }

    static func otherReads(_ db: some Database) throws {
        let graph = Graph(seed: 31)
        try graph.write(to: db)
        let inSales = Related("department").matches(Field("name") == "Sales")
        let salesCount = graph.employees.count { graph.department(of: $0)?.name == "Sales" }
        #expect(try db.count(G.Employee.self, where: inSales) == salesCount)
        // Aggregates over the same condition, grouped.
        let rows = try db.aggregate(
            G.Employee.self, [.count], where: Related("reports").exists, groupedBy: ["departmentID"])
        var expected: [Int64?: Int] = [:]
        for employee in graph.employees where !graph.reports(of: employee).isEmpty {
            expected[employee.departmentID, default: 0] += 1
        }
        #expect(rows.count == expected.count)
        for row in rows {
            let department: Int64? = if case .integer(let id)? = row["departmentID"] { id } else { nil }
            #expect(
                row["count"] == .integer(Int64(expected[department] ?? -1)),
                "department \(String(describing: department))")
        }
        // Children loaded alongside, filtered by their own relationships.
        let loaded = try db.recover(
            G.Department.self, sortedBy: [.ascending("id")],
            including: .many("employees", G.Employee.self, where: Related("reports").exists))
        for department in loaded {
            #expect(
                department.related.map(\.id)
                    == graph.employees(of: department.entity).filter { !graph.reports(of: $0).isEmpty }.map(\.id))
        }
        // Deleting by a related condition follows the delete rules: employees of Sales go, their reports'
        // manager is nullified (Employee.manager's default rule).
        let deleted = try db.delete(G.Employee.self, where: inSales)
        #expect(deleted == salesCount)
        #expect(try db.count(G.Employee.self, where: inSales) == 0)
        #expect(try db.count(G.Employee.self) == graph.employees.count - salesCount)
        let gone = Set(graph.employees.filter { graph.department(of: $0)?.name == "Sales" }.map(\.id))
        let left = try db.recover(G.Employee.self)
        #expect(left.allSatisfy { $0.managerID.map { !gone.contains($0) } ?? true })
        // Departments left without employees, deleted by condition (nothing refers to them then).
        let empty = graph.departments.filter { department in
            !graph.employees.contains { $0.departmentID == department.id && !gone.contains($0.id) }
        }
        #expect(try db.delete(G.Department.self, where: Related("employees").isEmpty) == empty.count)
        #expect(try db.verify().isSound)
    }

    static func refusals(_ db: some Database) throws {
        let graph = Graph(seed: 32)
        try graph.write(to: db)
        expectError(.unknownAttribute) { try db.recover(G.Department.self, where: Related("staff").exists) }
        expectError(.unknownAttribute) {
            try db.recover(G.Department.self, where: Related("\"; DROP TABLE \"Employee\"; --").exists)
        }
        // Inside, names and operands are the related entity's.
        expectError(.unknownAttribute) {
            try db.recover(G.Department.self, where: Related("employees").contains(where: Field("title") == "x"))
        }
        expectError(.typeMismatch) {
            try db.recover(G.Department.self, where: Related("employees").contains(where: Field("name") > 3))
        }
        expectError(.unknownAttribute) {
            try db.count(
                G.Employee.self, where: Related("department").matches(Related("employees").matches(Field("x") == 1)))
        }
        // A relationship's name isn't an attribute, nor an attribute's a relationship.
        expectError(.unknownAttribute) { try db.recover(G.Employee.self, where: Field("department") == 1) }
        expectError(.unknownAttribute) { try db.recover(G.Employee.self, where: Related("departmentID").exists) }
        #expect(try db.count(G.Employee.self) == graph.employees.count)
    }

    static func observed(_ db: some Database) async throws {
        try db.create([G.Department(id: 1, name: "Sales"), G.Department(id: 2, name: "Ops")])
        var values = db.observe(G.Department.self, where: Related("employees").count >= 2).makeAsyncIterator()
        #expect(try await values.next()?.isEmpty == true)
        try await db.write { context in
            try context.create([
                G.Employee(id: 1, name: "Ada", departmentID: 2), G.Employee(id: 2, name: "Alan", departmentID: 2),
            ])
        }
        #expect(try await values.next()?.map(\.id) == [2])
        // Moving one employee away: the department no longer matches, though no department changed.
        try await db.write { try $0.update(G.Employee(id: 2, name: "Alan", departmentID: 1)) }
        #expect(try await values.next()?.isEmpty == true)
    }
}
