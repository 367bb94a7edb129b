import Foundation

extension RecordLayout {
    /// The values an upsert writes over a stored record whose stamp is `stored`, or `nil` when the incoming record
    /// is stale and the stored one stays.
    ///
    /// Without a stamp attribute, `values` unchanged. Otherwise an incoming `nil` stamp is replaced by the stored
    /// one; a stored `nil` stamp is older than any; else the incoming stamp must be strictly newer.
    @_spi(PersistenceBackend) public func stampedValues(_ values: [Value], over stored: Value) -> [Value]? {
        guard let stampIndex else { return values }
        let incoming = values[stampIndex]
        if incoming.isNull {
            var kept = values
            kept[stampIndex] = stored
            return kept
        }
        if stored.isNull || Value.compare(incoming, stored) == .orderedDescending { return values }
        return nil
    }
}

extension RecordLayout {
    /// Whether an incoming record's values say nothing new about a stored record: equal, except that an incoming
    /// `nil` stamp matches any stored stamp (upserting it would keep the stored one).
    package func sameRecord(_ incoming: [Value], _ stored: [Value]) -> Bool {
        guard incoming.count == stored.count else { return false }
        for index in incoming.indices where incoming[index] != stored[index] {
            guard index == stampIndex, incoming[index].isNull else { return false }
        }
        return true
    }
}
