import Foundation
import PersistenceLMDB
import PersistenceTesting
import Testing

/// Cheap key derivation for tests: the suite opens hundreds of stores. Real stores use `.rfc9106` (t = 3, 64 MiB).
let testKeyDerivation = KeyDerivation.argon2id(iterations: 1, memoryKiB: 64)

/// Opens encrypted LMDB databases for the conformance suite.
struct EncryptedLMDBConformance: ConformanceBackend {
    func open(model: Model, in directory: URL) throws -> LMDBDatabase {
        var builder = LMDBBuilder(databaseName: "Conformance", passphrase: "correct horse", model: model)
        builder.directory = directory
        builder.keyDerivation = testKeyDerivation
        return try builder.create()
    }
}

/// Opens unencrypted LMDB databases for the conformance suite.
struct PlainLMDBConformance: ConformanceBackend {
    func open(model: Model, in directory: URL) throws -> LMDBDatabase {
        var builder = LMDBBuilder.unencrypted(databaseName: "Conformance", model: model)
        builder.directory = directory
        return try builder.create()
    }
}

@Test(.timeLimit(.minutes(30)), arguments: ConformanceSuite.checks)
func encryptedConformance(_ check: ConformanceCheck) async throws {
    try await check.run(on: EncryptedLMDBConformance())
}

@Test(.timeLimit(.minutes(30)), arguments: ConformanceSuite.checks)
func plainConformance(_ check: ConformanceCheck) async throws {
    try await check.run(on: PlainLMDBConformance())
}
