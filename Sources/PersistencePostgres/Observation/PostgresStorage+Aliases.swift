import Foundation
@_spi(PersistenceBackend) public import PersistenceCore
import PostgresNIO

/// Aliases in the table `persistence_aliases`, one row per alias name and position: position -1 holds the entity
/// and whether the alias is a list, positions 0… the primary keys in order, each as a tagged byte string.
extension PostgresStorage {
    @_spi(PersistenceBackend) public func aliasTarget(named name: String) throws -> AliasTarget? {
        let rows = try run(
            "SELECT position, entity, list, key FROM \(aliasTable) WHERE name = $1 ORDER BY position", [.text(name)]
        ).rows
        var target: AliasTarget?
        var values: [Value] = []
        for row in rows {
            try row.read(as: [.integer, .text, .integer, .blob], into: &values)
            if case .integer(-1) = values[0] {
                guard case .text(let entity) = values[1], case .integer(let list) = values[2] else {
                    throw PersistenceError(.corrupt, "the stored alias '\(name)' is damaged")
                }
                target = AliasTarget(entity: entity, keys: [], isList: list != 0)
            } else {
                guard target != nil, case .blob(let bytes) = values[3], let key = Self.key(from: bytes) else {
                    throw PersistenceError(.corrupt, "the stored alias '\(name)' is damaged")
                }
                target?.keys.append(key)
            }
        }
        return target
    }

    @_spi(PersistenceBackend) public func setAliasTarget(_ target: AliasTarget?, named name: String) throws {
        try run("DELETE FROM \(aliasTable) WHERE name = $1", [.text(name)])
        if let target {
            let insert = "INSERT INTO \(aliasTable) (name, position, entity, list, key) VALUES ($1, $2, $3, $4, $5)"
            let list = Value.integer(target.isList ? 1 : 0)
            try run(insert, [.text(name), .integer(-1), .text(target.entity), list, .null])
            for (position, key) in target.keys.enumerated() {
                try run(
                    insert,
                    [.text(name), .integer(Int64(position)), .text(target.entity), list, .blob(Self.bytes(of: key))])
            }
        }
    }

    private var aliasTable: String {
        PostgresSchemaStore.qualified(schema, PostgresSchemaStore.aliasTable)
    }

    /// A key as a tag byte and its bytes.
    static func bytes(of key: Value) -> Data {
        switch key {
        case .null: Data([0])
        case .integer(let integer): Data([1]) + withUnsafeBytes(of: integer.bigEndian) { Data($0) }
        case .real(let real): Data([2]) + withUnsafeBytes(of: real.bitPattern.bigEndian) { Data($0) }
        case .text(let text): Data([3]) + Data(text.utf8)
        case .blob(let blob): Data([4]) + blob
        }
    }

    /// The key `bytes(of:)` wrote, or `nil` for damaged bytes.
    static func key(from bytes: Data) -> Value? {
        guard let tag = bytes.first else { return nil }
        let payload = bytes.dropFirst()
        func number() -> UInt64? {
            guard payload.count == 8 else { return nil }
            return payload.reduce(0) { $0 << 8 | UInt64($1) }
        }
        switch tag {
        case 0: return payload.isEmpty ? .null : nil
        case 1: return number().map { .integer(Int64(bitPattern: $0)) }
        case 2: return number().map { .real(Double(bitPattern: $0)) }
        case 3: return String(validating: payload, as: UTF8.self).map { .text($0) }
        case 4: return .blob(Data(payload))
        default: return nil
        }
    }
}
