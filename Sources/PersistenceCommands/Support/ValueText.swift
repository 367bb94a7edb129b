import Foundation
package import PersistenceCore

/// How the store tool writes an attribute's stored value as text, and reads it back, exactly.
///
/// | attribute type | stored | JSON | CSV |
/// |---|---|---|---|
/// | bool | integer 0/1 | `true` / `false` | `true` / `false` |
/// | integer | integer | number | digits |
/// | double | real | number (shortest form that reads back the same bits, `-0.0` kept); `"Infinity"`, `"-Infinity"` | the same text |
/// | date | real, seconds since 2001-01-01 00:00 UTC | number | the same text |
/// | string, url | text | string (any Unicode, NUL included) | field |
/// | uuid | 16-byte blob | `"E621E1F8-C36C-495A-93FC-0C247A3E6E5F"` | the same text |
/// | data | blob | base64 string | the same text |
/// | codable | blob of JSON | the JSON as a string | the same text |
///
/// `nil` is JSON `null` and an empty unquoted CSV field (an empty string is a quoted `""`). NaN is refused: a store
/// holds no NaN.
package enum ValueText {
    /// A JSON scalar, as read from a line of an export.
    package enum Scalar: Decodable, Sendable, Equatable {
        case null
        case bool(Bool)
        /// A number, as a `Double` and, when it is a whole number an `Int64` holds, exactly as that `Int64`: an
        /// integer attribute reads every digit, a double one keeps `-0.0`.
        case number(Double?, exactly: Int64?)
        case string(String)

        package init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if container.decodeNil() {
                self = .null
            } else if let number = try? container.decode(Double.self) {
                // Numbers first, then strings, then booleans: each failed try costs an error, and numbers and
                // strings are what records mostly hold. A whole number is also read exactly, as an `Int64`.
                let whole = number.rounded(.towardZero) == number
                self = .number(number, exactly: whole ? try? container.decode(Int64.self) : nil)
            } else if let string = try? container.decode(String.self) {
                self = .string(string)
            } else if let bool = try? container.decode(Bool.self) {
                self = .bool(bool)
            } else if let integer = try? container.decode(Int64.self) {
                self = .number(nil, exactly: integer)
            } else {
                throw DecodingError.dataCorruptedError(
                    in: container, debugDescription: "a record's value is a number, string, boolean or null")
            }
        }
    }

    // MARK: Writing

    /// The JSON text of a stored value of `attribute`.
    /// - Throws: ``PersistenceError/Code/corrupt`` for a value the attribute can't hold (what `verify` reports).
    package static func json(_ value: Value, of attribute: AttributeDescription) throws -> String {
        if case .null = value { return "null" }
        switch (attribute.type, value) {
        case (.bool, .integer(let integer)) where integer == 0 || integer == 1:
            return integer == 1 ? "true" : "false"
        case (.string, .text(let text)), (.url, .text(let text)):
            return quoted(text)
        case (.double, _), (.date, _), (.integer, _), (.uuid, _), (.data, _), (.codable, _):
            let text = try plain(value, of: attribute)
            return isNumber(attribute.type, text) ? text : quoted(text)
        default:
            throw mismatch(value, attribute)
        }
    }

    /// The CSV field text of a stored value (`nil` for `nil`: an empty unquoted field).
    package static func csv(_ value: Value, of attribute: AttributeDescription) throws -> String? {
        if case .null = value { return nil }
        if attribute.type == .bool {
            guard case .integer(let integer) = value, integer == 0 || integer == 1 else {
                throw mismatch(value, attribute)
            }
            return integer == 1 ? "true" : "false"
        }
        return try plain(value, of: attribute)
    }

    /// The text of a non-`nil`, non-boolean value, unquoted.
    private static func plain(_ value: Value, of attribute: AttributeDescription) throws -> String {
        switch (attribute.type, value) {
        case (.integer, .integer(let integer)):
            return String(integer)
        case (.double, .real(let real)), (.date, .real(let real)):
            guard !real.isNaN else { throw mismatch(value, attribute) }
            if real.isInfinite { return real < 0 ? "-Infinity" : "Infinity" }
            return "\(real)"
        case (.string, .text(let text)), (.url, .text(let text)):
            return text
        case (.uuid, .blob(let bytes)) where bytes.count == 16:
            return bytes.withUnsafeBytes { UUID(uuid: $0.loadUnaligned(as: uuid_t.self)).uuidString }
        case (.data, .blob(let bytes)):
            return bytes.base64EncodedString()
        case (.codable, .blob(let bytes)):
            guard let json = String(data: bytes, encoding: .utf8) else { throw mismatch(value, attribute) }
            return json
        default:
            throw mismatch(value, attribute)
        }
    }

    private static func isNumber(_ type: AttributeType, _ text: String) -> Bool {
        switch type {
        case .integer: true
        case .double, .date: !text.hasSuffix("Infinity")
        default: false
        }
    }

    /// A JSON string literal: quotes, backslashes and control characters escaped, everything else as is.
    package static func quoted(_ text: String) -> String {
        // Most text needs no escape: copied whole, not scalar by scalar.
        if !text.utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) {
            return "\"" + text + "\""
        }
        var out = "\""
        out.reserveCapacity(text.utf8.count + 2)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20:
                out +=
                    "\\u" + String(repeating: "0", count: 4 - String(scalar.value, radix: 16).count)
                    + String(scalar.value, radix: 16)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }

    // MARK: Reading

    /// The stored value of `attribute` a JSON scalar stands for.
    /// - Throws: ``PersistenceError/Code/invalidValue`` naming the attribute for a value of the wrong kind.
    package static func value(_ scalar: Scalar, of attribute: AttributeDescription) throws -> Value {
        let value: Value?
        switch (attribute.type, scalar) {
        case (_, .null): value = .null
        case (.bool, .bool(let bool)): value = .integer(bool ? 1 : 0)
        case (.integer, .number(_, let integer?)): value = .integer(integer)
        case (.double, .number(let number?, _)), (.date, .number(let number?, _)): value = .real(number)
        case (.string, .string(let text)), (.url, .string(let text)), (.uuid, .string(let text)),
            (.data, .string(let text)), (.codable, .string(let text)):
            value = try self.value(text: text, of: attribute)
        case (.double, .string(let text)) where text.hasSuffix("Infinity"),
            (.date, .string(let text)) where text.hasSuffix("Infinity"):
            // JSON has no infinities: they are written as strings.
            value = try self.value(text: text, of: attribute)
        default: value = nil
        }
        guard let value, attribute.accepts(value) else { throw refused(scalar, attribute) }
        return value
    }

    /// The stored value of `attribute` a text (a CSV field, a JSON string) stands for; `nil` for `nil`.
    package static func value(text: String, of attribute: AttributeDescription) throws -> Value {
        let value: Value?
        switch attribute.type {
        case .bool: value = text == "true" ? .integer(1) : text == "false" ? .integer(0) : nil
        case .integer: value = Int64(text).map(Value.integer)
        case .double, .date:
            switch text {
            case "Infinity": value = .real(.infinity)
            case "-Infinity": value = .real(-.infinity)
            default: value = Double(text).flatMap { $0.isNaN ? nil : .real($0) }
            }
        case .string, .url: value = .text(text)
        case .uuid: value = UUID(uuidString: text).map { uuid in withUnsafeBytes(of: uuid.uuid) { .blob(Data($0)) } }
        case .data: value = Data(base64Encoded: text).map(Value.blob)
        case .codable: value = .blob(Data(text.utf8))
        }
        guard let value, attribute.accepts(value) else { throw refused(.string(text), attribute) }
        return value
    }

    private static func mismatch(_ value: Value, _ attribute: AttributeDescription) -> PersistenceError {
        PersistenceError(
            .corrupt, "'\(attribute.name)' holds a \(value.storageClassName) value its type \(attribute.type) can't be")
    }

    private static func refused(_ scalar: Scalar, _ attribute: AttributeDescription) -> PersistenceError {
        let kind: String =
            switch scalar {
            case .null: "null"
            case .bool: "a boolean"
            case .number: "a number"
            case .string: "a string"
            }
        let optional = attribute.isOptional ? "optional " : ""
        return PersistenceError(
            .invalidValue, "'\(attribute.name)' (\(optional)\(attribute.type.rawValue)) can't hold \(kind) of that form"
        )
    }
}
