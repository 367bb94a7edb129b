import Foundation
import PersistenceCore
import Testing

/// Relationships: foreign keys checked on every write, delete rules applied inside the deleting write to any depth
/// and on cycles, dangling references reported by verify, declarations checked against the model — the same on
/// every backend.
enum RelationshipChecks {
    typealias G = GraphFixtures

    static let all: [ConformanceCheck] = [
        graph("refuses a foreign key naming no record, on create, update, upsert and batches") { try references($0) },
        graph("cascades a delete to the records that refer to it, to any depth") { try cascade($0) },
        graph("nullifies the references of a deleted record") { try nullify($0) },
        graph("denies a delete while records refer to it, changing nothing") { try deny($0) },
        graph("denies a delete a cascade would reach, two levels down, changing nothing") { try deepDeny($0) },
        graph("leaves references under noAction, and verify reports them") { try noAction($0) },
        graph("ends a cascade on a cycle and deletes a chain 200 deep") { try cycles($0) },
        graph("applies delete rules to deletes by condition, deleteAll and reconcile") { try bulk($0) },
        graph("reports what a delete's rules cascaded to and nullified, per entity") { try report($0) },
        graph("tells text keys apart by bytes: composed and decomposed é are two records") {
            try await byteKeys($0)
        },
        graph("rolls back what a cascade did when the write fails later") { try rollback($0) },
        graph("tells observers of what a cascade deleted and a nullify changed") { try await observed($0) },
        examples("models Core Data's Department and Employee") { try departments($0) },
        examples("models Realm's Person and Dog, and a required to-one") { try dogsAndBooks($0) },
        examples("deletes what nothing else depends on by its foreign key, and tells observers") {
            try await swept($0)
        },
        ConformanceCheck("refuses relationships that don't fit the model") { backend, directory in
            try await refusals(backend, directory)
        },
        graph("keeps the graph equal to a reference model over 1,200 random steps") { try randomized($0) },
    ]

    static func graph(_ name: String, _ body: @escaping @Sendable (any Database) async throws -> Void)
        -> ConformanceCheck
    {
        ConformanceCheck(name) { backend, directory in
            try await withDatabase(backend, directory, G.ruleEntities, body)
        }
    }

    static func examples(_ name: String, _ body: @escaping @Sendable (any Database) async throws -> Void)
        -> ConformanceCheck
    {
        ConformanceCheck(name) { backend, directory in
            try await withDatabase(backend, directory, G.exampleEntities, body)
        }
    }

    static func references(_ db: some Database) throws {
        try db.create(G.Parent(id: 1))
        try db.create(G.CascadeChild(id: 1, parentID: 1))
        try db.create(G.CascadeChild(id: 2, parentID: nil))
        expectError(.referenceNotFound) { try db.create(G.CascadeChild(id: 3, parentID: 99)) }
        expectError(.referenceNotFound) { try db.update(G.CascadeChild(id: 1, parentID: 99)) }
        expectError(.referenceNotFound) { try db.upsert(G.CascadeChild(id: 1, parentID: 99)) }
        expectError(.referenceNotFound) { try db.upsert(G.CascadeChild(id: 4, parentID: 99)) }
        // A batch stops at the bad record, and the write rolls back whole.
        expectError(.referenceNotFound) {
            try db.write { context throws in
                try context.create([G.CascadeChild(id: 5, parentID: 1), G.CascadeChild(id: 6, parentID: 98)])
            }
        }
        #expect(
            try db.recover(G.CascadeChild.self, sortedBy: [.ascending("id")]) == [
                G.CascadeChild(id: 1, parentID: 1), G.CascadeChild(id: 2, parentID: nil),
            ])
        // Checked at the statement: a parent created earlier in the same write counts, one created later doesn't.
        try db.write { context throws in
            try context.create(G.Parent(id: 2))
            try context.create(G.CascadeChild(id: 7, parentID: 2))
            #expect(throws: PersistenceError.self) { try context.create(G.CascadeChild(id: 8, parentID: 3)) }
            try context.create(G.Parent(id: 3))
            try context.create(G.CascadeChild(id: 8, parentID: 3))
        }
        // A record may refer to itself, and a required reference is checked like an optional one.
        try db.create(G.Node(id: "self", parentID: "self"))
        expectError(.referenceNotFound) { try db.create(G.Grandchild(id: 1, childID: 404)) }
        try db.create(G.Grandchild(id: 1, childID: 1))
        // The foreign key is an attribute like any other, and indexed.
        #expect(try db.count(G.CascadeChild.self, where: Field("parentID") == 3) == 1)
        #expect(try db.verify().isSound)
    }

    static func cascade(_ db: some Database) throws {
        try db.create([G.Parent(id: 1), G.Parent(id: 2)])
        try db.create((1...50).map { G.CascadeChild(id: $0, parentID: $0 <= 40 ? 1 : 2) })
        try db.create(G.NullifyChild(id: 1, parentID: 1))
        try db.write { context throws in
            #expect(try context.delete(G.Parent.self, id: 1))
            #expect(try context.count(G.CascadeChild.self) == 10)
        }
        #expect(try db.recover(G.CascadeChild.self).allSatisfy { $0.parentID == 2 })
        #expect(try db.recover(G.NullifyChild.self) == [G.NullifyChild(id: 1, parentID: nil)])
        #expect(try db.delete(G.Parent.self, id: 1) == false)
        // Deleting a record that has nothing referring to it deletes it alone.
        try db.create(G.Parent(id: 3))
        #expect(try db.delete(G.Parent.self, id: 3))
        #expect(try db.count(G.CascadeChild.self) == 10)
        #expect(try db.verify().isSound)
    }

    static func nullify(_ db: some Database) throws {
        try db.create([G.Parent(id: 1), G.Parent(id: 2)])
        try db.create([
            G.NullifyChild(id: 1, parentID: 1, note: "a"), G.NullifyChild(id: 2, parentID: 2, note: "b"),
            G.NullifyChild(id: 3, parentID: 1, note: "c"),
        ])
        try db.delete(G.Parent(id: 1))
        #expect(
            try db.recover(G.NullifyChild.self, sortedBy: [.ascending("id")]) == [
                G.NullifyChild(id: 1, parentID: nil, note: "a"), G.NullifyChild(id: 2, parentID: 2, note: "b"),
                G.NullifyChild(id: 3, parentID: nil, note: "c"),
            ])
        // The index on the foreign key followed.
        #expect(try db.count(G.NullifyChild.self, where: Field("parentID") == 1) == 0)
        #expect(try db.count(G.NullifyChild.self, where: Field("parentID") == nil) == 2)
        #expect(try db.verify().isSound)
    }

    static func deny(_ db: some Database) throws {
        try db.create([G.Parent(id: 1), G.Parent(id: 2)])
        try db.create(G.DenyChild(id: 1, parentID: 1))
        try db.create(G.CascadeChild(id: 1, parentID: 1))
        try db.create(G.NullifyChild(id: 1, parentID: 1))
        let error = expectError(.deleteDenied) { try db.delete(G.Parent.self, id: 1) }
        #expect(error?.message.contains("DenyChild") == true, "\(String(describing: error))")
        expectError(.deleteDenied) { try db.deleteAll(G.Parent.self) }
        // Nothing changed: not the cascade, not the nullify.
        #expect(try db.count(G.Parent.self) == 2)
        #expect(try db.recover(G.CascadeChild.self) == [G.CascadeChild(id: 1, parentID: 1)])
        #expect(try db.recover(G.NullifyChild.self) == [G.NullifyChild(id: 1, parentID: 1)])
        // Inside a write, the error can be caught and the write goes on.
        try db.write { context throws in
            #expect(throws: PersistenceError.self) { try context.delete(G.Parent.self, id: 1) }
            try context.update(G.DenyChild(id: 1, parentID: 2))
            #expect(try context.delete(G.Parent.self, id: 1))
        }
        #expect(try db.count(G.CascadeChild.self) == 0)
        expectError(.deleteDenied) { try db.delete(G.Parent.self, id: 2) }
        // Once the referring record goes, so may the parent.
        try db.delete(G.DenyChild.self, id: 1)
        #expect(try db.delete(G.Parent.self, id: 2))
    }

    static func deepDeny(_ db: some Database) throws {
        try db.create(G.Parent(id: 1))
        try db.create([G.CascadeChild(id: 1, parentID: 1), G.CascadeChild(id: 2, parentID: 1)])
        try db.create(G.NullifyChild(id: 1, parentID: 1))
        try db.create(G.Grandchild(id: 1, childID: 2))
        expectError(.deleteDenied) { try db.delete(G.Parent.self, id: 1) }
        expectError(.deleteDenied) { try db.delete(G.CascadeChild.self, id: 2) }
        #expect(try db.count(G.CascadeChild.self) == 2)
        #expect(try db.recover(G.NullifyChild.self) == [G.NullifyChild(id: 1, parentID: 1)])
        try db.delete(G.Grandchild.self, id: 1)
        try db.delete(G.Parent.self, id: 1)
        #expect(try db.count(G.CascadeChild.self) == 0)
    }

    static func noAction(_ db: some Database) throws {
        try db.create(G.Parent(id: 1))
        try db.create([G.NoActionChild(id: 1, parentID: 1), G.NoActionChild(id: 2, parentID: nil)])
        #expect(try db.delete(G.Parent.self, id: 1))
        #expect(try db.recover(G.NoActionChild.self, id: 1) == G.NoActionChild(id: 1, parentID: 1))
        let report = try db.verify()
        #expect(report.problems.count == 1, "\(report)")
        let problem = report.problems.first
        #expect(problem?.kind == .danglingReference && problem?.entity == "NoActionChild")
        #expect(problem?.primaryKey == "1" && problem?.attribute == "parentID", "\(report)")
        // Writing it again without fixing the reference is refused; fixing it is not.
        expectError(.referenceNotFound) { try db.update(G.NoActionChild(id: 1, parentID: 1)) }
        try db.update(G.NoActionChild(id: 1, parentID: nil))
        #expect(try db.verify().isSound)
    }

    static func cycles(_ db: some Database) throws {
        // a ← b ← c, then a's parent becomes c: a cycle of three.
        try db.create([G.Node(id: "a", parentID: nil), G.Node(id: "b", parentID: "a"), G.Node(id: "c", parentID: "b")])
        try db.update(G.Node(id: "a", parentID: "c"))
        try db.create(G.Node(id: "outside", parentID: nil))
        #expect(try db.delete(G.Node.self, id: "b"))
        #expect(try db.recover(G.Node.self) == [G.Node(id: "outside", parentID: nil)])
        // A chain 200 deep goes whole.
        try db.write { context throws in
            try context.create(G.Node(id: "n0", parentID: nil))
            for depth in 1..<200 { try context.create(G.Node(id: "n\(depth)", parentID: "n\(depth - 1)")) }
        }
        try db.delete(G.Node.self, id: "n0")
        #expect(try db.count(G.Node.self) == 1)
        #expect(try db.verify().isSound)
    }

    static func bulk(_ db: some Database) throws {
        try db.create((1...6).map { G.Parent(id: $0, name: $0.isMultiple(of: 2) ? "even" : "odd") })
        try db.create((1...6).map { G.CascadeChild(id: $0, parentID: $0) })
        try db.create((1...6).map { G.NullifyChild(id: $0, parentID: $0) })
        #expect(try db.delete(G.Parent.self, where: Field("name") == "even") == 3)
        #expect(try db.recover(G.CascadeChild.self).map(\.id).sorted() == [1, 3, 5])
        #expect(try db.count(G.NullifyChild.self, where: Field("parentID") == nil) == 3)
        // Reconcile's deletes follow the rules too.
        try db.write { context throws in
            try context.reconcile(G.Parent.self, with: [G.Parent(id: 1, name: "odd")])
        }
        #expect(try db.recover(G.CascadeChild.self).map(\.id) == [1])
        #expect(try db.deleteAll(G.Parent.self) == 1)
        #expect(try db.count(G.CascadeChild.self) == 0)
        #expect(try db.count(G.NullifyChild.self, where: Field("parentID") == nil) == 6)
    }

    static func report(_ db: some Database) throws {
        try db.create((1...3).map { G.Parent(id: $0, name: $0 == 3 ? "kept" : "gone") })
        try db.create((1...4).map { G.CascadeChild(id: $0, parentID: $0 <= 3 ? 1 : 2) })
        try db.create((1...3).map { G.NullifyChild(id: $0, parentID: $0) })
        let report = try db.deleteReporting(G.Parent.self, where: Field("name") == "gone")
        #expect(report.deleted == ["Parent": 2, "CascadeChild": 4])
        #expect(report.nullified == ["NullifyChild": 2])
        #expect(report.deletedCount == 6)
        #expect(try db.count(G.CascadeChild.self) == 0)
        #expect(try db.count(G.NullifyChild.self, where: Field("parentID") == nil) == 2)
        // A cascade within one entity: a tree of five goes whole and is counted whole (`delete(_:where:)` counts
        // the records the condition matched: 1).
        try db.create(
            [G.Node(id: "r", parentID: nil), G.Node(id: "a", parentID: "r"), G.Node(id: "b", parentID: "r")]
                + [G.Node(id: "a1", parentID: "a"), G.Node(id: "a2", parentID: "a")])
        #expect(try db.deleteReporting(G.Node.self, where: Field("id") == "r").deleted == ["Node": 5])
        #expect(try db.count(G.Node.self) == 0)
        // With no rule to apply: the entity's own count, nothing nullified; then nothing at all.
        let plain = try db.deleteReporting(G.NullifyChild.self)
        #expect(plain.deleted == ["NullifyChild": 3] && plain.nullified.isEmpty)
        #expect(try db.deleteReporting(G.NullifyChild.self) == DeletionReport())
        expectError(.readOnly) {
            try db.read { context throws in try context.deleteReporting(G.Parent.self, where: nil) }
        }
        #expect(try db.verify().isSound)
    }

    static func byteKeys(_ db: some Database) async throws {
        let (composed, decomposed) = ("caf\u{E9}", "cafe\u{301}")
        // Swift calls the two strings equal; the stores keep them as two keys.
        try db.create([G.Node(id: composed, parentID: nil), G.Node(id: decomposed, parentID: composed)])
        try db.create(G.Node(id: "child of decomposed", parentID: decomposed))
        var changes = db.changes(of: G.Node.self).makeAsyncIterator()
        // The cascade reaches the decomposed one through its parent, and its child in turn.
        #expect(try db.delete(G.Node.self, id: composed))
        #expect(try db.count(G.Node.self) == 0)
        #expect(await changes.next()?.deleted.count == 3)
        // Reconcile keeps both as two records, not one key twice.
        let counts = try await db.write { context in
            try context.reconcile(
                G.Node.self, with: [G.Node(id: composed, parentID: nil), G.Node(id: decomposed, parentID: nil)])
        }
        #expect(counts.inserted == 2, "\(counts)")
        #expect(try db.count(G.Node.self) == 2)
        #expect(try await db.verify().isSound)
    }

    struct Abandon: Error {}

    static func rollback(_ db: some Database) throws {
        try db.create(G.Parent(id: 1))
        try db.create(G.CascadeChild(id: 1, parentID: 1))
        try db.create(G.NullifyChild(id: 1, parentID: 1))
        #expect(throws: Abandon.self) {
            try db.write { context throws in
                try context.delete(G.Parent.self, id: 1)
                throw Abandon()
            }
        }
        // And in a savepoint that throws, the write going on.
        try db.write { context throws in
            #expect(throws: Abandon.self) {
                try context.savepoint {
                    try context.delete(G.Parent.self, id: 1)
                    throw Abandon()
                }
            }
        }
        #expect(try db.count(G.Parent.self) == 1)
        #expect(try db.recover(G.CascadeChild.self) == [G.CascadeChild(id: 1, parentID: 1)])
        #expect(try db.recover(G.NullifyChild.self) == [G.NullifyChild(id: 1, parentID: 1)])
    }

    static func observed(_ db: some Database) async throws {
        try db.create(G.Parent(id: 1))
        try db.create([G.CascadeChild(id: 1, parentID: 1), G.CascadeChild(id: 2, parentID: 1)])
        try db.create(G.NullifyChild(id: 7, parentID: 1))
        var cascaded = db.changes(of: G.CascadeChild.self).makeAsyncIterator()
        var nullified = db.changes(of: G.NullifyChild.self).makeAsyncIterator()
        try await db.write { try $0.delete(G.Parent.self, id: 1) }
        let deleted = await cascaded.next()
        #expect(deleted?.deleted.sorted() == [1, 2], "\(String(describing: deleted))")
        #expect(await nullified.next()?.updated == [7])
    }

    static func departments(_ db: some Database) throws {
        try db.create([G.Department(id: 1, name: "Engineering"), G.Department(id: 2, name: "Sales")])
        try db.create([
            G.Employee(id: 1, name: "Grace", departmentID: 1),
            G.Employee(id: 2, name: "Alan", departmentID: 1, managerID: 1),
            G.Employee(id: 3, name: "Ada", departmentID: 2, managerID: 1),
        ])
        // Both to-ones default to nullify (optional foreign keys).
        try db.delete(G.Department.self, id: 1)
        #expect(try db.recover(G.Employee.self, where: Field("departmentID") == nil).map(\.id).sorted() == [1, 2])
        try db.delete(G.Employee.self, id: 1)
        #expect(
            try db.recover(G.Employee.self, sortedBy: [.ascending("id")]) == [
                G.Employee(id: 2, name: "Alan", departmentID: nil), G.Employee(id: 3, name: "Ada", departmentID: 2),
            ])
        let description = try EntityDescription(describing: G.Employee.self)
        #expect(description.relationship(named: "department")?.deleteRule == .nullify)
        #expect(description.indexes.contains(.on("departmentID")) && description.indexes.contains(.on("managerID")))
        #expect(try db.verify().isSound)
    }

    static func dogsAndBooks(_ db: some Database) throws {
        let person = G.Owner(id: UUID(), name: "Tim")
        let other = G.Owner(id: UUID(), name: "Ann")
        try db.create([person, other])
        let rex = G.Dog(id: UUID(), name: "Rex", ownerID: person.id)
        try db.create([rex, G.Dog(id: UUID(), name: "Fido", ownerID: person.id)])
        try db.create(G.Dog(id: UUID(), name: "Lassie", ownerID: other.id))
        expectError(.referenceNotFound) { try db.create(G.Dog(id: UUID(), name: "Stray", ownerID: UUID())) }
        try db.delete(person)
        #expect(try db.recover(G.Dog.self).map(\.name) == ["Lassie"])

        // A required to-one without a rule denies.
        try db.create(G.Author(id: "le-guin", name: "Ursula"))
        try db.create(G.Book(id: 1, authorID: "le-guin", title: "The Dispossessed"))
        expectError(.deleteDenied) { try db.delete(G.Author.self, id: "le-guin") }
        expectError(.referenceNotFound) { try db.create(G.Book(id: 2, authorID: "nobody", title: "—")) }
        try db.delete(G.Book.self, id: 1)
        #expect(try db.delete(G.Author.self, id: "le-guin"))
        #expect(try db.verify().isSound)
    }

    static func swept(_ db: some Database) async throws {
        // Dogs depend on nothing else: a cascade deletes them by `ownerID` without reading them first.
        let owners = (0..<3).map { G.Owner(id: UUID(), name: "owner \($0)") }
        try db.create(owners)
        var dogs: [G.Dog] = []
        for (index, owner) in owners.enumerated() {
            for number in 0..<(index == 0 ? 1_200 : 5) {
                dogs.append(G.Dog(id: UUID(), name: "dog \(number)", ownerID: owner.id))
            }
        }
        try db.create(dogs)
        var changes = db.changes(of: G.Dog.self).makeAsyncIterator()
        #expect(try db.delete(G.Owner.self, where: Field("name") != "owner 2") == 2)
        let deleted = await changes.next()?.deleted ?? []
        let expected = dogs.filter { $0.ownerID != owners[2].id }.map(\.id)
        #expect(Set(deleted) == Set(expected) && deleted.count == expected.count)
        #expect(try db.recover(G.Dog.self).map(\.ownerID) == Array(repeating: owners[2].id, count: 5))
        #expect(try await db.verify().isSound)
    }

    static func refusals(_ backend: any ConformanceBackend, _ directory: URL) async throws {
        let refused: [(any Entity.Type, PersistenceError.Code)] = [
            (G.NullifiesRequired.self, .invalidSchema), (G.UnknownForeignKey.self, .unknownAttribute),
            (G.MistypedForeignKey.self, .invalidSchema), (G.WrongInverse.self, .invalidSchema),
            (G.NameTaken.self, .invalidSchema),
        ]
        for (entity, code) in refused {
            let error = await #expect(throws: PersistenceError.self, "\(entity)") {
                try await withDatabase(backend, directory, [G.Author.self, entity]) { _ in }
            }
            #expect(error?.code == code, "\(entity): \(String(describing: error))")
        }
        // A target outside the model.
        let error = await #expect(throws: PersistenceError.self) {
            try await withDatabase(backend, directory, [G.CascadeChild.self]) { _ in }
        }
        #expect(error?.code == .unknownEntity, "\(String(describing: error))")
    }
}
