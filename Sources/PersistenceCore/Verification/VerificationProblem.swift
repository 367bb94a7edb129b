/// One thing ``Database/verify()-6cqst`` found wrong with a store.
///
/// A problem names where it is — the entity, the record's primary key, the attribute or index — and what is
/// wrong, never what is stored: a report can be logged or shown to support without revealing data. Primary keys
/// are the exception, as they are the only way to find the record (and LMDB stores them in plaintext anyway).
///
/// ```swift
/// for problem in try db.verify().problems where problem.kind == .indexEntryMissing {
///     print(problem)   // indexEntryMissing: Person 42, index index_Person_name: …
/// }
/// ```
public struct VerificationProblem: Sendable, Hashable, Codable, CustomStringConvertible {
    /// What kind of problem this is; an open set of static members, so backends can add their own.
    public struct Kind: Hashable, Sendable, RawRepresentable, Codable, CustomStringConvertible {
        /// The kind's stable name, for logs and matching.
        public let rawValue: String

        /// Creates a kind from its stable name.
        public init(rawValue: String) { self.rawValue = rawValue }

        /// The kind's stable name.
        public var description: String { rawValue }
    }

    /// What kind of problem this is; match on it, it is stable across backends and versions.
    public var kind: Kind
    /// The entity the problem is in, or `nil` for a problem of the whole store (its metadata, its file).
    public var entity: String?
    /// The primary key of the record concerned, as text (an integer in decimal, a string as is, a UUID in its
    /// canonical form, other bytes in hexadecimal), or `nil` when no record is concerned or its key is unreadable.
    public var primaryKey: String?
    /// The attribute concerned, if the problem is about one.
    public var attribute: String?
    /// The name of the index concerned (``Index/name(in:)``), if the problem is about one.
    public var index: String?
    /// What is wrong, for people; it names entities, attributes and indexes, never stored values.
    public var message: String

    /// Creates a problem.
    /// - Parameters:
    ///   - kind: What kind of problem this is.
    ///   - entity: The entity it is in.
    ///   - primaryKey: The record's primary key rendered as text.
    ///   - attribute: The attribute concerned.
    ///   - index: The index concerned.
    ///   - message: What is wrong; never include stored values or secrets.
    public init(
        _ kind: Kind, entity: String? = nil, primaryKey: String? = nil, attribute: String? = nil,
        index: String? = nil, message: String
    ) {
        self.kind = kind
        self.entity = entity
        self.primaryKey = primaryKey
        self.attribute = attribute
        self.index = index
        self.message = message
    }

    /// `kind: entity key, attribute a, index i: message`, leaving out the parts that are `nil`.
    public var description: String {
        var place: [String] = []
        switch (entity, primaryKey) {
        case let (entity?, key?): place.append("\(entity) \(key)")
        case let (entity?, nil): place.append(entity)
        case let (nil, key?): place.append("key \(key)")
        case (nil, nil): break
        }
        if let attribute { place.append("attribute \(attribute)") }
        if let index { place.append("index \(index)") }
        let location = place.isEmpty ? "" : ": " + place.joined(separator: ", ")
        return "\(kind)\(location): \(message)"
    }
}
