import Foundation
import PersistenceLMDB
import PersistenceTesting
import Testing

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
func dataFile(_ directory: URL, name: String = "Secrets") -> URL { directory.appendingPathComponent(name + ".lmdb") }

extension Data {
    /// Where `needle` first occurs, or `nil`.
    func offset(of needle: Data) -> Int? {
        guard !needle.isEmpty, needle.count <= count else { return nil }
        return range(of: needle).map { $0.lowerBound - startIndex }
    }
}
