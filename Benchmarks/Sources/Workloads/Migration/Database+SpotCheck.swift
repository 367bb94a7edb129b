import PersistenceCore

extension Database {
    /// Looks up a sample of migrated records by id and by the indexed `name` (which the migration kept or rebuilt)
    /// through the library, and checks them against the generator's records migrated as `Record` says. Returns how
    /// many records were checked.
    func spotCheckMigrated<Record: MigratedRecord>(
        _ type: Record.Type, generator: PersonGenerator, _ verify: Verifier
    ) throws -> Int {
        let ids = generator.randomIDs(min(100, generator.count), stream: 3)
        let nameNumbers = generator.randomNameNumbers(min(20, generator.distinctNames), stream: 4)
        return try read { context in
            var checked = 0
            for id in ids {
                let found = try context.recover(Record.self, id: id)
                try verify.expect(
                    found != nil && found == Record.migrated(from: generator.person(id: id)),
                    "record \(id) read back by id")
                checked += 1
            }
            for number in nameNumbers {
                let name = generator.name(number: number)
                let found = try context.recover(Record.self, key: "name", value: name)
                let expected = generator.ids(withNameNumber: number).compactMap {
                    Record.migrated(from: generator.person(id: $0))
                }
                try verify.expect(
                    Set(found) == Set(expected) && found.count == expected.count,
                    "records named \(name): expected \(expected.count), found \(found.count) or other records")
                checked += found.count
            }
            return checked
        }
    }
}
