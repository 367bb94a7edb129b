import Foundation
@_spi(PersistenceBackend) import PersistenceCore
@_spi(PersistenceBackend) import PersistenceEngine
import PersistenceTesting
import Testing

@testable import PersistenceLMDB

/// A sealed note indexed for full-text search.
struct SealedNote: Entity, Equatable {
    var id: Int64
    var text: String
    static let fullTextIndexes: [FullTextIndex] = [.on("text")]
}

private func notes(_ directory: URL, passphrase: String? = "correct horse battery staple") -> LMDBBuilder {
    var builder =
        passphrase.map { LMDBBuilder(databaseName: "Notes", passphrase: $0, entities: [SealedNote.self]) }
        ?? LMDBBuilder.unencrypted(databaseName: "Notes", entities: [SealedNote.self])
    builder.directory = directory
    builder.keyDerivation = testKeyDerivation
    return builder
}

struct FullTextIndexTests {
    static let markers = (0..<10).map { "xylophonequartz\($0)zebra" }

    @Test func anEncryptedIndexHoldsNoTokenInPlaintextAndStillFindsPrefixes() throws {
        try withTemporaryDirectory { directory in
            do {
                let db = try notes(directory).create()
                try db.create(
                    Self.markers.enumerated().map { SealedNote(id: Int64($0.offset), text: "a \($0.element)") })
                let found = try db.recover(SealedNote.self, query: Query(search: .matching("xylophonequartz3zebra")))
                #expect(found.map(\.id) == [3])
                let prefixed = try db.recover(SealedNote.self, query: Query(search: .matching("xylophone*")))
                #expect(prefixed.count == 10)
                try db.delete(SealedNote.self, id: 4)
                #expect(try db.recover(SealedNote.self, query: Query(search: .matching("xylophone*"))).count == 9)
            }
            let raw = try Data(contentsOf: dataFile(directory, name: "Notes"))
            #expect(raw.offset(of: Data("xylophone".utf8)) == nil, "the file holds a token in plaintext")
            #expect(raw.offset(of: Data("zebra".utf8)) == nil)
        }
    }

    @Test func aPlainIndexKeepsTokensAsKeysAndRemovesThemWithTheirRecords() throws {
        try withTemporaryDirectory { directory in
            let db = try notes(directory, passphrase: nil).create()
            try db.create(Self.markers.enumerated().map { SealedNote(id: Int64($0.offset), text: $0.element) })
            let postings = try db.read { context in
                try context.transaction.count(
                    context.storage.stores.all[0].fullText["fulltext_SealedNote_text"]!.postings)
            }
            #expect(postings == 10)
            try db.write { context in _ = try context.deleteAll(SealedNote.self) }
            let left = try db.read { context in
                let store = context.storage.stores.all[0].fullText["fulltext_SealedNote_text"]!
                return try (context.transaction.count(store.postings), context.transaction.count(store.documents))
            }
            #expect(left == (0, 0))
        }
    }

    @Test func aTamperedPostingIsATypedErrorNeverAWrongAnswer() throws {
        try withTemporaryDirectory { directory in
            let db = try notes(directory).create()
            try db.create(SealedNote(id: 1, text: "tamper target"))
            try db.write { context in
                let store = context.storage.stores.all[0].fullText["fulltext_SealedNote_text"]!
                var first: (Data, Data)?
                try context.transaction.forEach(store.postings) { key, value in
                    first = (Data(key), Data(value))
                    return false
                }
                var (key, value) = try #require(first)
                value[value.count - 1] ^= 0x01
                try context.transaction.put(store.postings, key, value)
            }
            let error = #expect(throws: PersistenceError.self) {
                try db.recover(SealedNote.self, query: Query(search: .matching("tamper")))
                    + db.recover(SealedNote.self, query: Query(search: .matching("target")))
            }
            #expect(error?.code == .authenticationFailed)
        }
    }
}
