import Foundation
@_spi(PersistenceBackend) import PersistenceCore
@_spi(PersistenceBackend) import PersistenceEngine

extension LMDBStorage {
    /// The vectors where the map holds them (a sealed record's decrypted once, in temporary memory): the condition
    /// tested on the attributes it reads, the key and the vector taken from the record's bytes without decoding the
    /// rest or copying the vector. A condition naming primary keys, or that an index answers, reads only the records
    /// it names, by key, whole.
    @_spi(PersistenceBackend) public func scanVectors(
        at attribute: Int, key: Int, where condition: ResolvedCondition?, entity: Int,
        _ visit: (Value, UnsafeRawBufferPointer, Bool) throws -> Void
    ) throws {
        let store = stores.all[entity]
        instrumentation.trace("query", entity: store.layout.entity.name)
        let condition = try condition.map { $0.isRelated ? try answeringRelated($0) : $0 }
        let whole = { (_: UnsafeRawBufferPointer, values: [Value]) throws -> Bool in
            switch values[attribute] {
            case .null: break
            case .blob(let data): try data.withUnsafeBytes { try visit(values[key], $0, false) }
            // Not bytes: no vector of any dimension, which the context reports.
            default: try visit(values[key], UnsafeRawBufferPointer(start: nil, count: 0), false)
            }
            return true
        }
        if let condition, try visitByKeys(condition, store, whole) { return }
        let attributes = store.layout.names.count
        let wanted = condition.map { StoredProbe($0, attributes: attributes, decodesMatches: false).wanted } ?? []
        var probed: [Value] = []
        // A plain record's bytes are the map's, which stay put while the transaction lasts (`visit` writes nothing);
        // a sealed one's are decrypted into memory valid during the call only.
        let lasting = !sealer.isEncrypted
        let scan = { (storedKey: UnsafeRawBufferPointer, stored: UnsafeRawBufferPointer) throws -> Bool in
            try self.cancellation?.check()
            do {
                try self.sealer.withPlain(stored, entity: store, key: storedKey) { plain in
                    if let condition {
                        try RecordCodec.decode(plain, only: wanted, into: &probed)
                        guard probed.count == attributes else { throw RecordCodec.damaged() }
                        guard condition.matches(probed) else { return }
                    }
                    guard let vector = try RecordCodec.blob(at: attribute, in: plain) else { return }
                    try visit(RecordCodec.value(at: key, in: plain), vector, lasting)
                }
            } catch let error as PersistenceError where error.code == .corrupt || error.code == .authenticationFailed {
                throw self.failure(error, of: store, key: storedKey)
            }
            return true
        }
        guard let start = condition.flatMap({ lowerBound($0, store) }) else {
            return try transaction.forEach(store.dbi, scan)
        }
        try transaction.forEach(store.dbi, from: start, scan)
    }
}
