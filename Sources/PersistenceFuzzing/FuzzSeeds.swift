package import Foundation
package import PersistenceCore
import PersistenceLMDB

/// Well-formed inputs for each target — what a healthy store holds — for mutation and for libFuzzer's corpus.
package enum FuzzSeeds {
    /// Seeds for `target`, without the selector byte.
    package static func seeds(for target: FuzzTarget) -> [Data] {
        switch target {
        case .record, .sealedValue:
            let records: [[Value]] = [
                [], [.null], [.integer(-5), .real(2.5), .text("héllo"), .blob(Data([1, 2, 3])), .null],
                [.text(String(repeating: "x", count: 200)), .integer(.max)],
            ]
            if target == .record { return records.map(StoredBytes.encodeRecord) }
            return records.compactMap { try? FuzzKeys.sealer?.seal($0, authenticating: FuzzKeys.authenticated) }
        case .key:
            let keys: [Value] = [
                .integer(0), .integer(-1), .integer(.max), .text(""), .text("key"), .blob(Data(count: 16)),
            ]
            return keys.compactMap { try? StoredBytes.encodeKey($0) }
        case .keyDerivation:
            let record = try? StoredBytes.encodeKeyDerivationRecord(
                parameters: .scrypt(logN: 10, blockSize: 8, parallelism: 1), salt: Data(repeating: 9, count: 32),
                keyCheck: Data(repeating: 3, count: 32))
            return record.map { [$0] } ?? []
        case .metadataNumber:
            return [Data(count: 8), Data([0, 0, 0, 0, 0, 0, 0, 1]), Data(repeating: 0xFF, count: 8)]
        case .schema:
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            let descriptions = (try? EntityDescription(describing: FuzzRow.self)).map { [$0] } ?? []
            return [try? encoder.encode(descriptions), Data("[]".utf8)].compactMap { $0 }
        case .wrappedKeys:
            return [try? StoredBytes.encodeWrappedKeyRecord(passphrase: FuzzKeys.passphrase)].compactMap { $0 }
        case .row:
            return [Data(repeating: 5, count: 64), Data(repeating: 6, count: 64), Data((0..<128).map { UInt8($0) })]
        }
    }
}

/// Mutations of an input as a fuzzer makes them: flip a bit, set a byte, insert, delete, truncate, splice.
package enum FuzzMutator {
    package static func mutate(_ input: Data, using generator: inout SeededGenerator) -> Data {
        var bytes = [UInt8](input)
        for _ in 0...Int.random(in: 0...3, using: &generator) {
            switch Int.random(in: 0..<6, using: &generator) {
            case 0 where !bytes.isEmpty:
                bytes[Int.random(in: 0..<bytes.count, using: &generator)] ^=
                    1 << UInt8.random(in: 0..<8, using: &generator)
            case 1 where !bytes.isEmpty:
                let interesting: [UInt8] = [0, 1, 0x7F, 0x80, 0xFF, UInt8(ascii: "\""), UInt8(ascii: "{")]
                bytes[Int.random(in: 0..<bytes.count, using: &generator)] =
                    interesting.randomElement(using: &generator) ?? 0
            case 2:
                bytes.insert(
                    UInt8.random(in: 0...255, using: &generator), at: Int.random(in: 0...bytes.count, using: &generator)
                )
            case 3 where !bytes.isEmpty:
                bytes.remove(at: Int.random(in: 0..<bytes.count, using: &generator))
            case 4:
                bytes.removeLast(Int.random(in: 0...bytes.count, using: &generator))
            default:
                let start = Int.random(in: 0...bytes.count, using: &generator)
                bytes.insert(
                    contentsOf: bytes[start...].prefix(8), at: Int.random(in: 0...bytes.count, using: &generator))
            }
        }
        return Data(bytes)
    }

    /// Random bytes of a random length up to `maximum`.
    package static func random(maximum: Int, using generator: inout SeededGenerator) -> Data {
        Data(
            (0..<Int.random(in: 0...maximum, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator)
            })
    }
}
