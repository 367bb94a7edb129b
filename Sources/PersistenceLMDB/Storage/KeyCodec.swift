import Foundation
import PersistenceCore

/// Encodes primary keys so that LMDB's byte order equals the value order of ``Value/compare(_:_:)``.
enum KeyCodec {
    private static let textPrefix: UInt8 = 0x01

    /// The key bytes of a primary-key value.
    ///
    /// Integers: 8 bytes big-endian with the sign bit flipped, so negatives sort first. Text: a 0x01 byte, then its
    /// UTF-8 bytes — byte order is the text order, and the prefix makes the empty string a valid key (LMDB refuses
    /// zero-length keys). Blobs (UUIDs): their bytes.
    static func encode(_ value: Value) throws -> Data {
        switch value {
        case .integer(let integer):
            return withUnsafeBytes(of: (UInt64(bitPattern: integer) ^ (1 << 63)).bigEndian) { Data($0) }
        case .text(let text):
            var key = Data([textPrefix])
            key.append(contentsOf: text.utf8)
            return key
        case .blob(let data):
            return data
        case .null, .real:
            throw PersistenceError(.invalidSchema, "a primary key must be an integer, text or UUID")
        }
    }

    /// The key bytes of a record of `entity` whose primary key is `value`, checked against LMDB's key size limit.
    /// - Throws: `keyTooLarge` naming the entity, `invalidSchema` for a value that can't be a key.
    static func recordKey(_ value: Value, of entity: String, maximumSize: Int) throws -> Data {
        let key = try encode(value)
        guard !key.isEmpty, key.count <= maximumSize else {
            throw PersistenceError(
                .keyTooLarge,
                "a primary key of '\(entity)' is \(key.count) bytes; LMDB keys are 1 to \(maximumSize) bytes")
        }
        return key
    }

    /// The value of key bytes, for an attribute of `type`.
    static func decode(_ key: Data, as type: AttributeType) throws -> Value {
        switch type.storageClass {
        case .integer:
            guard key.count == 8 else { throw PersistenceError(.corrupt, "an integer key is not 8 bytes") }
            let raw = key.reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            return .integer(Int64(bitPattern: raw ^ (1 << 63)))
        case .text:
            guard key.first == textPrefix else { throw PersistenceError(.corrupt, "a text key has no prefix") }
            return .text(String(decoding: key.dropFirst(), as: UTF8.self))
        case .blob, .real:
            return .blob(key)
        }
    }
}
