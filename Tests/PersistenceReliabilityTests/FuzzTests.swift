import Foundation
import PersistenceCore
import PersistenceFuzzing
import PersistenceLMDB
import PersistenceSQLite
import PersistenceTesting
import Testing

/// The deterministic fuzz run: every decoder that reads bytes from disk, fed random and mutated inputs from a seeded
/// generator, returns or throws a `PersistenceError` — never another error, never a crash. `make fuzz` runs the same
/// dispatch under libFuzzer.
@Suite("fuzzing the decoders of stored bytes")
struct FuzzTests {
    @Test("random and mutated inputs give typed errors", arguments: FuzzTarget.allCases)
    func typedErrorsOnly(target: FuzzTarget) throws {
        let seeds = FuzzSeeds.seeds(for: target)
        try #require(!seeds.isEmpty, "no seeds for \(target)")
        var generator = SeededGenerator(seed: ReliabilitySize.seed &+ UInt64(target.rawValue))
        var failures: [String] = []
        for number in 0..<ReliabilitySize.fuzzInputs {
            let input =
                number % 4 == 0
                ? FuzzMutator.random(maximum: 96, using: &generator)
                : FuzzMutator.mutate(seeds.randomElement(using: &generator) ?? Data(), using: &generator)
            if let failure = FuzzDispatch.run([target.rawValue] + input), failures.count < 5 {
                failures.append("input \(number): \(failure)")
            }
        }
        #expect(failures.isEmpty, "\(failures)")
    }

    @Test(
        "well-formed stored bytes decode without error",
        arguments: [FuzzTarget.record, .keyDerivation, .metadataNumber, .sealedValue, .schema, .wrappedKeys])
    func seedsDecode(target: FuzzTarget) throws {
        // The fuzz run starts from these: a decoder that refused them would leave its deeper code untried.
        for seed in FuzzSeeds.seeds(for: target) { try target.run(seed) }
    }

    @Test("every single-bit flip of a sealed value fails authentication")
    func sealedValueFlips() throws {
        for seed in FuzzSeeds.seeds(for: .sealedValue) {
            for bit in 0..<(seed.count * 8) {
                var flipped = seed
                flipped[flipped.startIndex + bit / 8] ^= 1 << UInt8(bit % 8)
                expectError(.authenticationFailed) { try FuzzTarget.sealedValue.run(flipped) }
            }
        }
    }

    @Test("a SQLite store with a damaged schema refuses to open with a typed error")
    func damagedSQLiteSchema() throws {
        var generator = SeededGenerator(seed: ReliabilitySize.seed)
        try withTemporaryDirectory { directory in
            var opened = 0
            let rounds = 40
            for round in 0..<rounds {
                var builder = SQLiteBuilder(databaseName: "Schema", entities: [SchemaProbe.self])
                builder.directory = directory.appendingPathComponent("\(round)")
                try FileManager.default.createDirectory(
                    at: try #require(builder.directory), withIntermediateDirectories: true)
                // Damage the schema through the store's own raw SQL, then open the store again.
                try builder.create().write { context in
                    guard
                        case .blob(let json)? = try context.scalar(
                            "SELECT value FROM persistence_metadata WHERE key = 'schema'")
                    else {
                        Issue.record("the store keeps no schema blob")
                        return
                    }
                    let damaged = FuzzMutator.mutate(json, using: &generator)
                    _ = try context.execute(
                        "UPDATE persistence_metadata SET value = ? WHERE key = 'schema'", [.blob(damaged)])
                }
                do {
                    _ = try builder.create()
                    opened += 1
                } catch let error as PersistenceError {
                    #expect([.corrupt, .migrationRequired].contains(error.code), "\(error)")
                } catch {
                    Issue.record("opening threw \(error), not a PersistenceError")
                }
            }
            #expect(opened < rounds, "no damaged schema was noticed")
        }
    }
}

/// The entity of the damaged-schema store.
struct SchemaProbe: Entity {
    var id: Int64
    var name: String
    static let indexes: [Index] = [.on("name")]
}
