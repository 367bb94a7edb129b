import Foundation
import PersistenceCore

/// Reads fuzz input bytes as choices: it never fails, it returns zeros once the bytes run out.
struct ByteReader {
    private let bytes: [UInt8]
    private var offset = 0

    init(_ bytes: some Collection<UInt8>) { self.bytes = Array(bytes) }

    var isAtEnd: Bool { offset >= bytes.count }

    mutating func byte() -> UInt8 {
        guard offset < bytes.count else { return 0 }
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func bytes(_ count: Int) -> [UInt8] { (0..<count).map { _ in byte() } }

    mutating func uint64() -> UInt64 { bytes(8).reduce(0) { $0 << 8 | UInt64($1) } }

    /// A value chosen by the bytes: any storage class, edge cases often, and sometimes one that fits `type`.
    mutating func value(for type: AttributeType) -> Value {
        switch byte() % 7 {
        case 0: return .null
        case 1: return .integer(integer())
        case 2: return .real(real())
        case 3: return .text(String(decoding: bytes(Int(byte() % 24)), as: UTF8.self))
        case 4: return .blob(Data(bytes(Int(byte() % 24))))
        default: return plausible(for: type)
        }
    }

    private mutating func integer() -> Int64 {
        let edges: [Int64] = [0, 1, -1, 2, 127, 128, -129, .max, .min, Int64(Int32.max) + 1]
        let choice = byte()
        return choice < 160 ? edges[Int(choice) % edges.count] : Int64(bitPattern: uint64())
    }

    private mutating func real() -> Double {
        let edges: [Double] = [0, -0.0, 1.5, .nan, .infinity, -.infinity, .greatestFiniteMagnitude, 1e300, 3.5e38]
        let choice = byte()
        return choice < 160 ? edges[Int(choice) % edges.count] : Double(bitPattern: uint64())
    }

    /// A value of the type's storage class, so decoding gets past the first type check.
    private mutating func plausible(for type: AttributeType) -> Value {
        switch type {
        case .bool: return .integer(Int64(byte() % 3))
        case .integer: return .integer(integer())
        case .double, .date: return .real(real())
        case .string, .url:
            let samples = ["small", "large", "https://example.com/a", "", "not a url \u{0}", "é"]
            return .text(samples[Int(byte()) % samples.count])
        case .uuid: return .blob(Data(bytes(Int(byte() % 3) == 0 ? 15 : 16)))
        case .data: return .blob(Data(bytes(Int(byte() % 8))))
        case .codable:
            let samples = [#"{"count":1,"names":["a"]}"#, "[1,2,3]", "{}", "null", #"{"count":"x"}"#, "[", ""]
            return .blob(Data(samples[Int(byte()) % samples.count].utf8))
        }
    }
}
