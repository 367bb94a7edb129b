internal import CLMDB
import Foundation
import PersistenceCore

/// Where one full-text index lives: three named databases and two records of the meta database.
///
/// - `fulltext:<index>:postings` — a token's key, then a document number (8 bytes, big-endian) → the record's key,
///   its length, how often it holds the token and where (positions as varint deltas), sealed when the store is
///   encrypted (authenticating the posting's key);
/// - `fulltext:<index>:documents` — a record's key → its document number, its length and its tokens' keys, sealed;
/// - `fulltext:<index>:tokens` — a token's key → the token, sealed: what a prefix search of an encrypted index
///   reads, since a token's key there is its keyed digest;
/// - meta `fulltext:<index>:state` (``FullTextIndexState``, JSON) and `fulltext:<index>:counts` (records, tokens, next
///   document number: three big-endian `UInt64`s).
///
/// A token's key is its UTF-8 bytes and a 0 byte on a plain store (so that a prefix is a range of keys), and on an
/// encrypted one the keyed digest of the index's name and the token (the index keys' keyed hash): the store holds no
/// token in plaintext, only how many records hold each digest.
struct FullTextStore: Sendable {
    let name: String
    let postings: MDB_dbi
    let documents: MDB_dbi
    let tokens: MDB_dbi

    static let prefix = "fulltext:"

    static func databaseNames(of name: String) -> [String] {
        ["postings", "documents", "tokens"].map { prefix + name + ":" + $0 }
    }

    /// The meta database's key of the index's state, and of its counts.
    static func stateKey(_ name: String) -> Data { Data((prefix + name + ":state").utf8) }
    static func countsKey(_ name: String) -> Data { Data((prefix + name + ":counts").utf8) }

    /// The index named by a meta key of its state, or `nil` for any other key.
    static func name(ofStateKey key: UnsafeRawBufferPointer) -> String? {
        let text = String(decoding: key, as: UTF8.self)
        guard text.hasPrefix(prefix), text.hasSuffix(":state") else { return nil }
        return String(text.dropFirst(prefix.count).dropLast(":state".count))
    }

    /// Opens (creating when missing) the index's databases.
    init(name: String, environment: Environment, transaction: Transaction) throws {
        self.name = name
        let names = Self.databaseNames(of: name)
        postings = try environment.database(named: names[0], flags: 0, in: transaction)
        documents = try environment.database(named: names[1], flags: 0, in: transaction)
        tokens = try environment.database(named: names[2], flags: 0, in: transaction)
    }
}

/// Positions as varint-coded deltas.
enum PositionCoding {
    static func encode(_ positions: [Int]) -> Data {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(positions.count * 2)
        var previous = 0
        for position in positions {
            var delta = UInt64(position - previous)
            previous = position
            while delta >= 0x80 {
                bytes.append(UInt8(delta & 0x7F) | 0x80)
                delta >>= 7
            }
            bytes.append(UInt8(delta))
        }
        return Data(bytes)
    }

    /// - Throws: `corrupt` for bytes that aren't increasing positions.
    static func decode(_ data: Data) throws -> [Int] {
        var positions: [Int] = []
        var value: UInt64 = 0
        var shift: UInt64 = 0
        var previous = 0
        for byte in data {
            guard shift < 35 else { throw PersistenceError(.corrupt, "a full-text posting is damaged") }
            value |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 != 0 {
                shift += 7
                continue
            }
            previous += Int(value)
            positions.append(previous)
            value = 0
            shift = 0
        }
        guard shift == 0 else { throw PersistenceError(.corrupt, "a full-text posting is damaged") }
        return positions
    }
}
