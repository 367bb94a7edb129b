package import Foundation
import PersistenceCore
import PersistenceLMDB

/// The decoders that read bytes from disk, one per fuzz target; the first byte of a fuzz input picks one.
package enum FuzzTarget: UInt8, CaseIterable, Sendable {
    /// LMDB's record format (`RecordCodec`).
    case record
    /// LMDB's primary-key encoding (`KeyCodec`), for each attribute type.
    case key
    /// A format-1 encrypted store's key derivation record (JSON, scrypt), checked as opening checks it.
    case keyDerivation
    /// A number of LMDB's meta database (format version, schema version, nonce counter).
    case metadataNumber
    /// A sealed value: AES-256-GCM opening under format-1 keys, then the record format.
    case sealedValue
    /// The stored schema (`[EntityDescription]` as JSON), as every backend (SQLite, LMDB, PostgreSQL) reads and
    /// compares it.
    case schema
    /// Entity decoding from dynamic values of any type, as every backend decodes rows and records.
    case row
    /// The wrapped key record of formats 2 and 3 (JSON): decoded, then unlocked as opening unlocks it when its key
    /// derivation is cheap enough to fuzz (otherwise only its parameters are checked).
    case wrappedKeys

    /// The target an input's first byte picks.
    package init(selector: UInt8) {
        self = Self.allCases[Int(selector) % Self.allCases.count]
    }

    /// Runs the decoder on `payload`; it returns or throws, and anything thrown must be a `PersistenceError`.
    package func run(_ payload: Data) throws {
        switch self {
        case .record:
            _ = try StoredBytes.record(payload)
        case .key:
            for type in AttributeType.allCases { _ = try? StoredBytes.key(payload, as: type) }
            _ = try StoredBytes.key(payload, as: .integer)
        case .keyDerivation:
            _ = try StoredBytes.keyDerivationRecord(payload)
        case .metadataNumber:
            _ = try StoredBytes.metadataNumber(payload)
        case .sealedValue:
            guard let sealer = FuzzKeys.sealer else {
                throw PersistenceError(.invalidConfiguration, "the fuzz keys could not be derived")
            }
            _ = try sealer.open(payload, authenticating: FuzzKeys.authenticated)
        case .schema:
            try Self.schema(payload)
        case .row:
            try Self.row(payload)
        case .wrappedKeys:
            try StoredBytes.wrappedKeyRecord(payload, passphrase: FuzzKeys.passphrase)
        }
    }

    /// The stored schema, read as `SchemaStore` (SQLite), `PostgresSchemaStore` (PostgreSQL) and `StoreOpening`
    /// (LMDB) read it: JSON that does not decode is `corrupt`; what decodes is laid out and compared with the current
    /// model.
    private static func schema(_ payload: Data) throws {
        guard let stored = try? JSONDecoder().decode([EntityDescription].self, from: payload) else {
            throw PersistenceError(.corrupt, "the store's metadata has no readable schema")
        }
        let current = [try EntityDescription(describing: FuzzRow.self)]
        for description in stored {
            let layout = RecordLayout(description)
            _ = layout.position(of: description.primaryKey)
            for index in description.indexes {
                for attribute in index.attributes { _ = try? layout.requirePosition(of: attribute) }
            }
        }
        if stored.map(\.normalized) != current.map(\.normalized) {
            _ = EntityDescription.difference(stored: stored, current: current)
        }
        // A schema a store holds was valid when written: re-validating what decodes throws, never traps.
        for description in stored {
            _ = try EntityDescription(
                name: description.name, attributes: description.attributes, primaryKey: description.primaryKey,
                indexes: description.indexes)
        }
    }

    /// Values of any type for every attribute of ``FuzzRow``, decoded as a backend decodes a row it read.
    private static func row(_ payload: Data) throws {
        let layout = try SchemaCache.layout(for: FuzzRow.self)
        var reader = ByteReader(payload)
        let values = layout.types.map { reader.value(for: $0) }
        _ = try RecordReader(layout: layout).decode(FuzzRow.self, from: values)
    }
}

/// The keys sealed values are fuzzed under: derived once per process as a format-1 store derives them, with cheap
/// scrypt parameters (N = 2^10, the smallest accepted; r = 8, p = 1).
enum FuzzKeys {
    /// The passphrase of the fuzzed key records' seeds.
    static let passphrase = "fuzz"
    static let sealer = try? StoredBytes.Sealer(
        passphrase: "fuzz", parameters: .scrypt(logN: 10, blockSize: 8, parallelism: 1))
    /// What a record's seal authenticates in a store: `entity · 0x00 · key`.
    static let authenticated = Data("FuzzRow".utf8) + [0] + Data([0x80, 0, 0, 0, 0, 0, 0, 1])
}
