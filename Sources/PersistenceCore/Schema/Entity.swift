public import Foundation

/// A plain `Codable` value type stored by a database: one record per value, one table or named database per type.
///
/// The schema is derived from the type itself — its `Codable` conformance names the attributes and their types —
/// so there is one source of truth. Declare indexes and unique constraints on the type:
///
/// ```swift
/// struct User: Entity {
///     var id: Int64
///     var name: String
///     var email: String?
///     static let indexes: [Index] = [.on("name"), .unique("email")]
/// }
/// ```
///
/// Attribute types: `Bool`, every fixed-width integer (an unsigned value above `Int64.max` is an
/// ``PersistenceError/Code/invalidValue`` error, never a wrap), `Double`, `Float`, `String`, `Data`, `Date`,
/// `UUID`, `URL`, `Optional` of each, and `String`/`Int` raw-value enums (make a `String` enum `CaseIterable` so
/// its schema can be probed). Any other `Codable` value (a nested struct, an array, a dictionary) is stored as
/// one JSON-encoded blob attribute; it can be compared only with ``Field/isNull``.
public protocol Entity: Codable, Sendable, Identifiable where ID: PrimaryKey {
    /// The name of the entity in the store (its table or named database). Defaults to the type's name.
    static var entityName: String { get }
    /// The attribute that holds `id`. Defaults to `"id"`.
    static var primaryKeyAttribute: String { get }
    /// Secondary indexes and unique constraints. Defaults to none.
    static var indexes: [Index] { get }
    /// Relationships to other entities (or this one): to-ones held in foreign-key attributes, each with its delete
    /// rule, and the to-manys that invert them. Defaults to none. See ``Relationship``.
    ///
    /// ```swift
    /// struct Post: Entity {
    ///     var id: Int64
    ///     var authorID: Int64
    ///     var title: String
    ///     static let relationships: [Relationship] = [
    ///         .toOne("author", Author.self, foreignKey: "authorID", onDelete: .cascade)
    ///     ]
    /// }
    /// ```
    static var relationships: [Relationship] { get }
    /// Full-text indexes, searched with ``FullTextSearch`` in a ``Query``. Defaults to none.
    ///
    /// ```swift
    /// static let fullTextIndexes: [FullTextIndex] = [.on("title", "body")]
    /// ```
    static var fullTextIndexes: [FullTextIndex] { get }
    /// The attributes that hold a ``Vector`` of a fixed dimension, ranked by distance with ``NearestNeighbours`` in a
    /// ``Query``. Defaults to none.
    ///
    /// ```swift
    /// static let vectorAttributes: [VectorAttribute] = [.init("embedding", dimensions: 384)]
    /// ```
    static var vectorAttributes: [VectorAttribute] { get }
    /// The values that a migration writes into every existing record for attributes added to the entity, by
    /// attribute name. Defaults to none.
    ///
    /// A non-optional attribute added in a new schema version needs one (or a migration that fills it); an
    /// optional one is `nil` in old records unless it has one. Defaults are not part of the stored schema:
    /// declaring or changing one is not a schema change.
    ///
    /// ```swift
    /// struct User: Entity {
    ///     var id: Int64
    ///     var name: String
    ///     var karma: Int                      // added in version 2
    ///     static let defaultValues: [String: Value] = ["karma": 0]
    /// }
    /// ```
    static var defaultValues: [String: Value] { get }
    /// The entity's name in the previous model version, when this version renamed it (Core Data's renaming
    /// identifier). Defaults to `""`: not renamed. (Not an optional, so that `static let previousName = "Tag"`
    /// declares it: an optional requirement would silently keep its default for a `String` declaration.)
    ///
    /// A migration without code for the entity (an inferred SQLite or PostgreSQL step; LMDB's migration, with or
    /// without a block) moves the records of the entity named so to this one. Like
    /// defaults, it is not part of the stored schema; a name that the previous version doesn't have is ignored, so
    /// a later version may keep the declaration.
    static var previousName: String { get }
    /// Attributes this model version renamed: each attribute's name in the previous version, by its new name (Core
    /// Data's renaming identifiers). Defaults to none.
    ///
    /// A migration without code for the entity (an inferred SQLite or PostgreSQL step; LMDB's migration, with or
    /// without a block) moves each renamed attribute's values instead
    /// of dropping the old attribute and adding the new one empty. Ignored for an attribute the previous version
    /// already has by its new name — unless that attribute is renamed away in the same version, so two attributes
    /// can swap names (`["a": "b", "b": "a"]`).
    ///
    /// ```swift
    /// struct Person: Entity {
    ///     var id: Int64
    ///     var fullName: String                  // `name` in version 1
    ///     static let previousAttributeNames = ["fullName": "name"]
    /// }
    /// ```
    static var previousAttributeNames: [String: String] { get }
    /// The attribute that stamps how fresh a record is — a `Date` (a modification date) or an integer (a version
    /// that only increases) — or `""` (the default) for none.
    ///
    /// With a stamp, ``DatabaseContext/upsert(_:)-(E)`` (and batch upserts and
    /// ``DatabaseContext/reconcile(_:with:where:)``) keeps a stored record whose stamp is as new as the incoming one or
    /// newer and reports ``UpsertOutcome/ignoredAsStale``: data that arrives late from a server or another device
    /// never overwrites fresher data. An incoming `nil` stamp replaces the record but keeps the stored stamp; a
    /// stored `nil` stamp is older than any. `create` and `update` are explicit and ignore stamps. Like defaults, the
    /// stamp is not part of the stored schema.
    ///
    /// ```swift
    /// struct Article: Entity {
    ///     var id: UUID
    ///     var title: String
    ///     var modifiedAt: Date?
    ///     static let stampAttribute = "modifiedAt"
    /// }
    /// ```
    static var stampAttribute: String { get }

    /// Creates the entity from a stored record. Defaults to `Decodable`'s `init(from:)`.
    ///
    /// Write your own — or have it written — to skip `Decodable`'s keyed containers, which cost more than the rest
    /// of reading a row (see ``AttributeReader``); the schema still comes from `Codable`.
    init(record: AttributeReader) throws
    /// Writes the entity's attributes into a record to store. Defaults to `Encodable`'s `encode(to:)`.
    ///
    /// Write your own with ``init(record:)`` (see ``AttributeWriter``); the two must agree with each other and with
    /// the type's `Codable` conformance, which the conformance suite's round trips check.
    func encode(to record: AttributeWriter) throws
}

extension Entity {
    /// Decodes through `Decodable`'s `init(from:)`.
    public init(record: AttributeReader) throws {
        self = try record.reader.decodeWithCodable(Self.self, in: record.row)
    }
    /// Encodes through `Encodable`'s `encode(to:)`.
    public func encode(to record: AttributeWriter) throws {
        try record.encodeWithCodable(self)
    }

    /// The type's name, such as `"User"`.
    public static var entityName: String { String(describing: Self.self) }
    /// `"id"`.
    public static var primaryKeyAttribute: String { "id" }
    /// No indexes.
    public static var indexes: [Index] { [] }
    /// No relationships.
    public static var relationships: [Relationship] { [] }
    /// No full-text indexes.
    public static var fullTextIndexes: [FullTextIndex] { [] }
    /// No vector attributes.
    public static var vectorAttributes: [VectorAttribute] { [] }
    /// No defaults.
    public static var defaultValues: [String: Value] { [:] }
    /// Not renamed.
    public static var previousName: String { "" }
    /// No attribute renamed.
    public static var previousAttributeNames: [String: String] { [:] }
    /// No stamp.
    public static var stampAttribute: String { "" }
}

/// A type that can be an entity's primary key: integers, `String` and `UUID` conform.
///
/// Backends keep records ordered by primary key; with no sort given, queries return records in that order.
public protocol PrimaryKey: ValueConvertible, Hashable, Codable {}

extension Int: PrimaryKey {}
extension Int8: PrimaryKey {}
extension Int16: PrimaryKey {}
extension Int32: PrimaryKey {}
extension Int64: PrimaryKey {}
extension UInt8: PrimaryKey {}
extension UInt16: PrimaryKey {}
extension UInt32: PrimaryKey {}
extension String: PrimaryKey {}
extension UUID: PrimaryKey {}
