public import Foundation

/// What a store holds of one full-text index: what it was built for, and how far the build has gone.
@_spi(PersistenceBackend) public struct FullTextIndexState: Sendable, Hashable, Codable {
    /// The ``FullTextIndexLayout/fingerprint`` of the index it was built as.
    @_spi(PersistenceBackend) public var fingerprint: String
    /// The store's schema version when the build began: a migration since then rebuilds it.
    @_spi(PersistenceBackend) public var schemaVersion: Int
    /// Whether every record is in it. While it isn't, the records up to ``builtThrough`` in primary-key order are,
    /// and so is every record written since the build began; searches read the records instead.
    @_spi(PersistenceBackend) public var isComplete: Bool
    /// The primary key of the last record the build indexed; `nil` before the first.
    @_spi(PersistenceBackend) public var builtThrough: Value?

    @_spi(PersistenceBackend) public init(
        fingerprint: String, schemaVersion: Int, isComplete: Bool, builtThrough: Value? = nil
    ) {
        self.fingerprint = fingerprint
        self.schemaVersion = schemaVersion
        self.isComplete = isComplete
        self.builtThrough = builtThrough
    }

    /// The state as JSON, for a backend's metadata.
    @_spi(PersistenceBackend) public func encoded() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return try encoder.encode(self)
    }

    /// A state a backend's metadata holds.
    /// - Throws: ``PersistenceError/Code/corrupt`` when it isn't one.
    @_spi(PersistenceBackend) public init(encoded: Data) throws {
        guard let state = try? JSONDecoder().decode(Self.self, from: encoded) else {
            throw PersistenceError(.corrupt, "the state of a full-text index is damaged")
        }
        self = state
    }
}
