internal import CLMDB
import Foundation
@_spi(PersistenceBackend) import PersistenceCore
@_spi(PersistenceBackend) import PersistenceEngine

/// Full-text indexes as inverted indexes in the store (``FullTextStore``): postings by token, each record's tokens
/// for removing it, sealed like records when the store is encrypted — tokens as keyed digests.
extension LMDBStorage {
    @_spi(PersistenceBackend) public var keepsFullTextIndexes: Bool { true }

    private func fullTextStore(_ index: FullTextIndexLayout, _ entity: Int) -> FullTextStore? {
        stores.all[entity].fullText[index.name]
    }

    @_spi(PersistenceBackend) public func fullTextIndexState(_ index: FullTextIndexLayout, entity: Int) throws
        -> FullTextIndexState?
    {
        guard fullTextStore(index, entity) != nil,
            let data = try transaction.get(metaDBI, FullTextStore.stateKey(index.name))
        else { return nil }
        return try FullTextIndexState(encoded: data)
    }

    @_spi(PersistenceBackend) public func setFullTextIndexState(
        _ state: FullTextIndexState, index: FullTextIndexLayout, entity: Int, emptying: Bool
    ) throws {
        guard let store = fullTextStore(index, entity) else {
            throw PersistenceError(.backend, "the full-text index '\(index.name)' wasn't opened with the store")
        }
        if emptying {
            for dbi in [store.postings, store.documents, store.tokens] { try transaction.empty(dbi) }
            try writeCounts(FullTextCounts(), index.name)
        }
        try transaction.put(metaDBI, FullTextStore.stateKey(index.name), state.encoded())
    }

    @_spi(PersistenceBackend) public func storedFullTextIndexes() throws -> Set<String> {
        var names = Set<String>()
        try transaction.forEach(metaDBI) { key, _ in
            if let name = FullTextStore.name(ofStateKey: key) { names.insert(name) }
            return true
        }
        return names
    }

    @_spi(PersistenceBackend) public func dropFullTextIndex(named name: String) throws {
        for database in FullTextStore.databaseNames(of: name) {
            try transaction.environment.dropDatabase(named: database, in: transaction)
        }
        try transaction.delete(metaDBI, FullTextStore.stateKey(name))
        try transaction.delete(metaDBI, FullTextStore.countsKey(name))
    }

    @_spi(PersistenceBackend) public func updateFullTextIndex(
        _ index: FullTextIndexLayout, entity: Int, removing keys: [Value], adding documents: [FullTextDocument]
    ) throws {
        guard let store = fullTextStore(index, entity) else { return }
        let entityStore = stores.all[entity]
        var counts = try readCounts(index.name)
        for key in keys {
            let recordKey = try recordKey(key, entityStore)
            let documentAAD = authenticatedData(index.name, "documents", recordKey)
            guard let sealed = try transaction.get(store.documents, recordKey) else { continue }
            let document = try sealed.withUnsafeBytes { try open($0, documentAAD) }
            guard document.count >= 2, case .integer(let number) = document[0], case .integer(let length) = document[1]
            else { throw PersistenceError(.corrupt, "a full-text index's record of a document is damaged") }
            for case .blob(let tokenKey) in document.dropFirst(2) {
                try transaction.delete(store.postings, tokenKey + Self.documentNumber(number))
                if sealer.isEncrypted, try !hasPostings(store, tokenKey) {
                    try transaction.delete(store.tokens, tokenKey)
                }
            }
            try transaction.delete(store.documents, recordKey)
            counts.documents -= 1
            counts.tokens -= Int(length)
        }
        for document in documents {
            let recordKey = try recordKey(document.key, entityStore)
            let number = counts.nextNumber
            counts.nextNumber += 1
            let length = document.length
            var tokenKeys: [Value] = [.integer(Int64(number)), .integer(Int64(length))]
            for (term, positions) in document.termPositions() {
                let tokenKey = self.tokenKey(term, index: index.name)
                tokenKeys.append(.blob(tokenKey))
                let postingKey = tokenKey + Self.documentNumber(Int64(number))
                let posting = try seal(
                    [
                        .blob(recordKey), .integer(Int64(length)), .integer(Int64(positions.count)),
                        .blob(PositionCoding.encode(positions)),
                    ], authenticatedData(index.name, "postings", postingKey))
                try transaction.put(store.postings, postingKey, posting)
                if sealer.isEncrypted, try transaction.get(store.tokens, tokenKey) == nil {
                    let sealed = try seal([.text(term)], authenticatedData(index.name, "tokens", tokenKey))
                    try transaction.put(store.tokens, tokenKey, sealed)
                }
            }
            let sealed = try seal(tokenKeys, authenticatedData(index.name, "documents", recordKey))
            try transaction.put(store.documents, recordKey, sealed)
            counts.documents += 1
            counts.tokens += length
        }
        try writeCounts(counts, index.name)
    }

    @_spi(PersistenceBackend) public func fullTextMatches(
        _ plan: FullTextPlan, index: FullTextIndexLayout, entity: Int
    ) throws -> FullTextMatches {
        guard let store = fullTextStore(index, entity) else {
            throw PersistenceError(.backend, "the full-text index '\(index.name)' wasn't opened with the store")
        }
        let layout = stores.all[entity].layout
        let keyType = layout.types[layout.primaryKeyIndex]
        instrumentation.trace("full-text search", entity: layout.entity.name)
        let counts = try readCounts(index.name)
        return try FullTextMatching.matches(plan, statistics: (counts.documents, counts.tokens)) {
            token, prefix, visit in
            func visitPostings(startingWith start: Data) throws {
                try transaction.forEach(store.postings, from: start) { key, value in
                    guard key.starts(with: start) else { return false }
                    let posting = try open(value, authenticatedData(index.name, "postings", Data(key)))
                    guard posting.count == 4, case .blob(let recordKey) = posting[0],
                        case .integer(let length) = posting[1], case .integer(let frequency) = posting[2],
                        case .blob(let positions) = posting[3]
                    else { throw PersistenceError(.corrupt, "a full-text posting is damaged") }
                    try visit(
                        FullTextPosting(
                            key: try KeyCodec.decode(recordKey, as: keyType), length: Int(length),
                            frequency: Int(frequency), positions: { try PositionCoding.decode(positions) }))
                    return true
                }
            }
            guard prefix else { return try visitPostings(startingWith: tokenKey(token, index: index.name)) }
            guard sealer.isEncrypted else {
                // Tokens' keys are their bytes: those of the tokens a prefix begins are one range.
                return try visitPostings(startingWith: Data(token.utf8))
            }
            // Digests keep no order: read every token of the index for those the prefix begins.
            var matching: [Data] = []
            try transaction.forEach(store.tokens) { key, value in
                let stored = try open(value, authenticatedData(index.name, "tokens", Data(key)))
                guard case .text(let term)? = stored.first else {
                    throw PersistenceError(.corrupt, "a full-text index's token is damaged")
                }
                if term.utf8.starts(with: token.utf8) { matching.append(Data(key)) }
                return true
            }
            for tokenKey in matching { try visitPostings(startingWith: tokenKey) }
        }
    }

    // MARK: - Parts

    /// A token's key in an index: its bytes and a 0 byte on a plain store, its keyed digest on an encrypted one.
    private func tokenKey(_ token: String, index: String) -> Data {
        guard sealer.isEncrypted else {
            var key = Data(token.utf8)
            key.append(0)
            return key
        }
        return sealer.indexKey([.text(FullTextStore.prefix + index), .text(token)])
    }

    /// Whether any posting of the token whose key is `tokenKey` is left.
    private func hasPostings(_ store: FullTextStore, _ tokenKey: Data) throws -> Bool {
        var found = false
        try transaction.forEach(store.postings, from: tokenKey) { key, _ in
            found = key.starts(with: tokenKey)
            return false
        }
        return found
    }

    private func seal(_ values: [Value], _ aad: Data) throws -> Data {
        try aad.withUnsafeBytes { try sealer.seal(values, authenticating: $0, nonce: nextNonce) }
    }

    private func open(_ bytes: UnsafeRawBufferPointer, _ aad: Data) throws -> [Value] {
        try aad.withUnsafeBytes { try sealer.open(bytes, authenticating: $0) }
    }

    /// What a sealed entry of an index authenticates besides itself: the index, the database and the entry's key.
    private func authenticatedData(_ index: String, _ database: String, _ key: Data) -> Data {
        var data = Data((FullTextStore.prefix + index + ":" + database).utf8)
        data.append(0)
        data.append(key)
        return data
    }

    private static func documentNumber(_ number: Int64) -> Data {
        withUnsafeBytes(of: UInt64(bitPattern: number).bigEndian) { Data($0) }
    }

    private struct FullTextCounts {
        var documents = 0
        var tokens = 0
        var nextNumber = 0
    }

    private func readCounts(_ name: String) throws -> FullTextCounts {
        guard let data = try transaction.get(metaDBI, FullTextStore.countsKey(name)) else { return FullTextCounts() }
        guard data.count == 24 else { throw PersistenceError(.corrupt, "a full-text index's counts are damaged") }
        let numbers = (0..<3).map { offset in
            data.dropFirst(offset * 8).prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        }
        return FullTextCounts(
            documents: Int(clamping: numbers[0]), tokens: Int(clamping: numbers[1]),
            nextNumber: Int(clamping: numbers[2]))
    }

    private func writeCounts(_ counts: FullTextCounts, _ name: String) throws {
        var data = Data()
        for number in [counts.documents, counts.tokens, counts.nextNumber] {
            withUnsafeBytes(of: UInt64(max(0, number)).bigEndian) { data.append(contentsOf: $0) }
        }
        try transaction.put(metaDBI, FullTextStore.countsKey(name), data)
    }
}
