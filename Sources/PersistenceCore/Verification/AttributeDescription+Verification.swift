import Foundation

extension AttributeDescription {
    /// What is wrong with `value` as a stored value of this attribute, or `nil` when it fits the declared type.
    ///
    /// The rules are the record decoder's, checked on the dynamic value without the Swift type: what this accepts,
    /// decoding into a type of the attribute's ``AttributeType`` accepts too (integers that a narrower Swift type
    /// can't hold are the exception: the schema does not say how wide the type is). Every backend's `verify()`
    /// (SQLite, LMDB, PostgreSQL) checks records with it, so they agree on what a sound record is. Messages name the
    /// attribute and storage classes, never the value.
    @_spi(PersistenceBackend) public func verificationProblem(for value: Value, in entity: String) -> (
        kind: VerificationProblem.Kind, message: String
    )? {
        func mismatch(_ what: String) -> (VerificationProblem.Kind, String) {
            (.typeMismatch, "attribute '\(name)' of '\(entity)' holds \(what), but it is declared \(type.rawValue)")
        }
        guard !value.isNull else {
            return isOptional ? nil : (.missingValue, "non-optional attribute '\(name)' of '\(entity)' is null")
        }
        switch (type, value) {
        case (.bool, .integer(let integer)):
            return integer == 0 || integer == 1 ? nil : mismatch("an integer other than 0 or 1")
        case (.integer, .integer):
            return nil
        case (.double, .real(let real)), (.date, .real(let real)):
            return real.isNaN ? mismatch("NaN") : nil
        case (.double, .integer), (.date, .integer):
            // The decoder reads integers as doubles: SQLite may store a whole REAL that way.
            return nil
        case (.string, .text):
            return nil
        case (.url, .text(let text)):
            return URL(string: text) == nil ? mismatch("text that is not a URL") : nil
        case (.data, .blob):
            return nil
        case (.uuid, .blob(let bytes)):
            return bytes.count == 16 ? nil : mismatch("a blob of \(bytes.count) bytes, not 16")
        case (.codable, .blob(let json)):
            let parsed = try? JSONSerialization.jsonObject(with: json, options: [.fragmentsAllowed])
            return parsed == nil ? mismatch("a blob that is not JSON") : nil
        default:
            return mismatch(value.storageClassName)
        }
    }
}

extension Value {
    /// A primary key as text for a ``VerificationProblem``: an integer in decimal, text as is, a 16-byte blob of a
    /// UUID attribute as a UUID string, other bytes in hexadecimal.
    @_spi(PersistenceBackend) public func primaryKeyText(as type: AttributeType) -> String {
        switch self {
        case .null: "null"
        case .integer(let integer): String(integer)
        case .real(let real): String(real)
        case .text(let text): text
        case .blob(let bytes):
            if type == .uuid, let uuid = UUID(storedBytes: bytes) {
                uuid.uuidString
            } else {
                bytes.map { String(format: "%02x", $0) }.joined()
            }
        }
    }
}

extension RecordLayout {
    /// The problem of `value` as the value of the attribute at `position`: its kind and range
    /// (``AttributeDescription/verificationProblem(for:in:)``) and, for a vector attribute, its dimensions and
    /// elements (a vector stored before its attribute was declared one, or of other dimensions, is reported here).
    @_spi(PersistenceBackend) public func verificationProblem(for value: Value, at position: Int) -> (
        kind: VerificationProblem.Kind, message: String
    )? {
        if let found = entity.attributes[position].verificationProblem(for: value, in: entity.name) { return found }
        for vector in vectors where vector.position == position {
            if let problem = vector.problem(with: value, entity: entity.name) { return (.typeMismatch, problem) }
        }
        return nil
    }
}
