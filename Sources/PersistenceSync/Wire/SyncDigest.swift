import PersistenceContentHash
@_spi(PersistenceBackend) package import PersistenceCore

/// What a client asks to compare: the server's digest of every synced entity's records in the client's scopes.
public struct SyncDigestRequest: Sendable, Hashable, Codable {
    /// The asking client's id.
    public var clientID: String
    /// The version of the client's model.
    public var modelVersion: Int
    /// The scopes whose records the client syncs; `nil` for the whole store (a trusted client's).
    public var scopes: [SyncScope]?

    /// Creates a request.
    public init(clientID: String, modelVersion: Int, scopes: [SyncScope]? = nil) {
        self.clientID = clientID
        self.modelVersion = modelVersion
        self.scopes = scopes
    }
}

/// The digests of a store's synced content, one per entity, read in one snapshot.
public struct SyncDigest: Sendable, Hashable, Codable {
    /// Every synced entity's digest, by entity name in UTF-8 byte order; an entity outside the scopes has none of its
    /// records in its digest.
    public var entities: [SyncEntityDigest]

    /// Creates a digest.
    public init(entities: [SyncEntityDigest]) { self.entities = entities }
}

/// One entity's synced records, hashed.
///
/// The digest is the store tool's content hash (`persistence hash`) of a store that would hold only these records:
/// SHA-256 over the entity's name, primary key and attributes, then each record's values in primary-key order. It
/// is the same for the same records on every backend.
public struct SyncEntityDigest: Sendable, Hashable, Codable {
    /// The entity's name.
    public var entity: String
    /// How many records were hashed.
    public var records: Int
    /// `sha256:` and 64 hexadecimal digits.
    public var digest: String

    /// Creates an entity's digest.
    public init(entity: String, records: Int, digest: String) {
        self.entity = entity
        self.records = records
        self.digest = digest
    }
}

extension SyncEntityDigest {
    /// The digest of an entity's records, which `records` hands to its argument one at a time in primary-key order:
    /// what the client, the server and the store tool each compute.
    package static func of(
        _ layout: RecordLayout, records: (_ add: (Record) throws -> Void) throws -> Void
    ) throws -> SyncEntityDigest {
        let digest = try ContentHash.entity(layout, records: records)
        return SyncEntityDigest(entity: layout.entity.name, records: digest.records, digest: digest.digest)
    }
}
