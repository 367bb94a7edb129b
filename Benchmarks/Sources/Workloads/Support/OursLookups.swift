import PersistenceCore

/// The records with these ids, looked up one by one in one read transaction, as an app would on either backend.
func recoverEach<D: Database>(_ ids: [Int64], in db: D) throws -> [Person] {
    try db.read { context in
        var people: [Person] = []
        people.reserveCapacity(ids.count)
        for id in ids {
            if let person = try context.recover(Person.self, id: id) { people.append(person) }
        }
        return people
    }
}
