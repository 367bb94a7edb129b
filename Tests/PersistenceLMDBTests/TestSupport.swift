import Foundation
import PersistenceLMDB
import Testing

/// A fresh temporary directory, removed when the body ends.
func withTemporaryDirectory<R>(_ body: (URL) throws -> R) throws -> R {
    let directory = FileManager.default.temporaryDirectory
        .appendingPathComponent("persistence-lmdb-tests-\(UUID().uuidString)", isDirectory: true)
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    return try body(directory)
}

/// Expects `body` to throw a `PersistenceError` with `code`.
func expectCode<R>(
    _ code: PersistenceError.Code, sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> R
) {
    do {
        _ = try body()
        Issue.record("expected .\(code), nothing was thrown", sourceLocation: sourceLocation)
    } catch let error as PersistenceError {
        #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
    } catch {
        Issue.record("expected .\(code), got \(error)", sourceLocation: sourceLocation)
    }
}

struct Secret: Entity, Equatable {
    var id: Int64
    var note: String
    var tag: String
    static let indexes: [Index] = [.on("tag"), .unique("note")]
}

func secrets(_ directory: URL, passphrase: String = "correct horse battery staple") -> LMDBBuilder {
    var builder = LMDBBuilder(databaseName: "Secrets", passphrase: passphrase, entities: [Secret.self])
    builder.directory = directory
    builder.keyDerivation = testKeyDerivation
    return builder
}

/// The store's data file.
func dataFile(_ directory: URL) -> URL { directory.appendingPathComponent("Secrets.lmdb") }

extension Data {
    /// Where `needle` first occurs, or `nil`.
    func offset(of needle: Data) -> Int? {
        guard !needle.isEmpty, needle.count <= count else { return nil }
        return range(of: needle).map { $0.lowerBound - startIndex }
    }
}
