package import PersistenceContentHash
@_spi(PersistenceBackend) package import PersistenceEngine

extension ContentHash {
    /// Hashes a whole store.
    /// - Parameter progress: Called after each record with the number hashed so far.
    package static func of(_ store: any StoredStore, progress: (Int) -> Void = { _ in }) throws -> String {
        var hash = ContentHash()
        for layout in store.layouts {
            try hash.begin(layout)
            try store.forEachRecord(layout) { record in
                try hash.add(record)
                progress(hash.records)
            }
            hash.end()
        }
        return hash.finish()
    }
}
