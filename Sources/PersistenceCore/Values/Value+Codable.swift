import Foundation

/// A value as JSON (the sync protocol's wire form): `null`, or an object with one member named by the storage class —
/// `{"i": 42}`, `{"r": 1.5}`, `{"t": "text"}`, `{"b": "<base64>"}` — so that no value is read back as another class.
/// JSON has no infinities: a real that is one is the string `"Infinity"` or `"-Infinity"` (`{"r": "-Infinity"}`).
extension Value: Codable {
    private enum StorageKey: String, CodingKey {
        case integer = "i"
        case real = "r"
        case text = "t"
        case blob = "b"
    }

    private static let infinity = "Infinity"

    public init(from decoder: any Decoder) throws {
        if let single = try? decoder.singleValueContainer(), single.decodeNil() {
            self = .null
            return
        }
        let container = try decoder.container(keyedBy: StorageKey.self)
        guard container.allKeys.count == 1, let key = container.allKeys.first else {
            throw DecodingError.dataCorrupted(
                .init(codingPath: decoder.codingPath, debugDescription: "a value has exactly one storage class"))
        }
        switch key {
        case .integer: self = .integer(try container.decode(Int64.self, forKey: key))
        case .real:
            let real: Double
            if let number = try? container.decode(Double.self, forKey: key) {
                real = number
            } else {
                switch try container.decode(String.self, forKey: key) {
                case Self.infinity: real = .infinity
                case "-" + Self.infinity: real = -.infinity
                default:
                    throw DecodingError.dataCorruptedError(
                        forKey: key, in: container, debugDescription: "a real is a number, Infinity or -Infinity")
                }
            }
            guard !real.isNaN else {
                throw DecodingError.dataCorruptedError(
                    forKey: key, in: container, debugDescription: "a stored real is never NaN")
            }
            self = .real(real.canonicalForStorage)
        case .text: self = .text(try container.decode(String.self, forKey: key))
        case .blob: self = .blob(try container.decode(Data.self, forKey: key))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .null:
            var single = encoder.singleValueContainer()
            try single.encodeNil()
        case .integer(let value):
            var container = encoder.container(keyedBy: StorageKey.self)
            try container.encode(value, forKey: .integer)
        case .real(let value):
            var container = encoder.container(keyedBy: StorageKey.self)
            if value.isInfinite {
                try container.encode(value < 0 ? "-" + Self.infinity : Self.infinity, forKey: .real)
            } else {
                try container.encode(value, forKey: .real)
            }
        case .text(let value):
            var container = encoder.container(keyedBy: StorageKey.self)
            try container.encode(value, forKey: .text)
        case .blob(let value):
            var container = encoder.container(keyedBy: StorageKey.self)
            try container.encode(value, forKey: .blob)
        }
    }
}
