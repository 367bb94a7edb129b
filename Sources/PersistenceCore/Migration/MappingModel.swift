/// How one step of a migration chain, from one model version to the next, turns source records into destination
/// records (Core Data's mapping model): a list of entity mappings.
///
/// Entities the mapping model names are migrated as it says, even where the change could be inferred — **an
/// explicit mapping always wins over inference**. Destination entities it doesn't name are inferred: copied from
/// the source entity of the same name (or of their ``Entity/previousName``), added empty when there is none.
///
/// ```swift
/// MappingModel(from: 1, to: 2, [
///     .transform("Person", [
///         "fullName": .value { source in "\(try source.string("first") ?? "") \(try source.string("last") ?? "")" },
///         "country": .value { source in
///             // A lookup in another source entity.
///             try source.context.sourceRecord("Address", id: try source.int64("addressID") ?? 0)?.string("country")
///         },
///     ]),
///     .remove("Address"),
/// ])
/// ```
public struct MappingModel: Sendable {
    /// The step's source model version.
    public var sourceVersion: Int
    /// The step's destination model version.
    public var destinationVersion: Int
    /// The entity mappings, run in this order (each one's records are created before the next begins).
    public var entityMappings: [EntityMapping]

    /// Creates the mapping model of one step.
    public init(from sourceVersion: Int, to destinationVersion: Int, _ entityMappings: [EntityMapping]) {
        self.sourceVersion = sourceVersion
        self.destinationVersion = destinationVersion
        self.entityMappings = entityMappings
    }
}

/// How the records of one source entity become records of one destination entity, in one migration step.
public struct EntityMapping: Sendable {
    /// What an entity mapping does (Core Data's mapping types).
    public enum Kind: String, Sendable, Hashable {
        /// Each source record becomes one destination record, attribute by attribute by name (declared renames
        /// and defaults apply); values must fit the destination's types.
        case copy
        /// As ``copy``, but the attributes given closures take the closures' values.
        case transform
        /// A destination entity with no source: its table starts empty (a custom policy of another mapping may fill
        /// it).
        case add
        /// A source entity with no destination: its records are dropped.
        case remove
        /// An ``EntityMigrationPolicy`` creates the destination records, then fixes references, then finishes.
        case custom
    }

    /// What the mapping does.
    public let kind: Kind
    /// The source entity's name (`nil` for ``Kind/add``, or a custom mapping with no source).
    public let sourceEntity: String?
    /// The destination entity's name (`nil` for ``Kind/remove``, or a custom mapping with no destination).
    public let destinationEntity: String?
    /// Closures for destination attributes, by name; the others are copied by name, or take their default.
    public let attributeMappings: [String: AttributeMapping]
    /// A custom mapping's stages.
    public let policy: EntityMigrationPolicy?

    private init(
        kind: Kind, source: String?, destination: String?, attributes: [String: AttributeMapping] = [:],
        policy: EntityMigrationPolicy? = nil
    ) {
        self.kind = kind
        sourceEntity = source
        destinationEntity = destination
        attributeMappings = attributes
        self.policy = policy
    }

    /// Copies each record of `source` to `destination` (the same name when `nil`), attribute by attribute by name.
    public static func copy(_ source: String, to destination: String? = nil) -> EntityMapping {
        EntityMapping(kind: .copy, source: source, destination: destination ?? source)
    }

    /// Turns each record of `source` into a record of `destination` (the same name when `nil`): the attributes in
    /// `attributes` take their closure's value, the others are copied by name or take their default.
    public static func transform(
        _ source: String, to destination: String? = nil, _ attributes: [String: AttributeMapping]
    ) -> EntityMapping {
        EntityMapping(kind: .transform, source: source, destination: destination ?? source, attributes: attributes)
    }

    /// A destination entity with no source records.
    public static func add(_ destination: String) -> EntityMapping {
        EntityMapping(kind: .add, source: nil, destination: destination)
    }

    /// Drops the records of a source entity: no destination entity takes them, even one of the same name.
    public static func remove(_ source: String) -> EntityMapping {
        EntityMapping(kind: .remove, source: source, destination: nil)
    }

    /// Hands the records of `source` to a custom policy, which creates destination records — of `destination`, of
    /// other entities, or none — then fixes references between them, then finishes.
    ///
    /// - Parameters:
    ///   - source: The source entity; `nil` for a policy that only creates records in ``EntityMigrationPolicy/finish``.
    ///   - destination: The destination entity whose table the mapping fills (it is rebuilt even when unchanged);
    ///     the policy may create records of any destination entity.
    ///   - attributes: Closures the default first stage uses (see ``EntityMigrationPolicy``).
    ///   - policy: The stages.
    public static func custom(
        _ source: String?, to destination: String?, attributes: [String: AttributeMapping] = [:],
        policy: EntityMigrationPolicy
    ) -> EntityMapping {
        EntityMapping(kind: .custom, source: source, destination: destination, attributes: attributes, policy: policy)
    }
}

/// The value of one destination attribute, computed from the source record.
///
/// ```swift
/// "fullName": .value { source in try source.string("name")?.capitalized }
/// "score": .attribute("points")          // the value of another source attribute
/// "flag": .constant(true)
/// ```
public struct AttributeMapping: Sendable {
    let body: @Sendable (MappingSource) throws -> Value

    /// A value computed by a closure over the source record.
    public init(_ body: @escaping @Sendable (MappingSource) throws -> Value) {
        self.body = body
    }

    /// A value computed by a closure over the source record, of any storable Swift type (an optional's `nil` is
    /// `nil`).
    public static func value<T: ValueConvertible>(_ body: @escaping @Sendable (MappingSource) throws -> T)
        -> AttributeMapping
    {
        AttributeMapping { try body($0).storedValue }
    }

    /// The value of a source attribute of another name.
    public static func attribute(_ name: String) -> AttributeMapping {
        AttributeMapping { try $0.value(of: name) }
    }

    /// The same value for every record.
    public static func constant(_ value: some ValueConvertible) -> AttributeMapping {
        let stored = value.storedValue
        return AttributeMapping { _ in stored }
    }

    /// The value for one source record.
    package func value(for source: MappingSource) throws -> Value { try body(source) }
}

/// A custom entity mapping's stages, as in Core Data's entity migration policy. A step runs the first stage of
/// every entity mapping, then the second of every custom one, then the third — so references can point at records
/// any mapping created.
///
/// 1. ``createDestinationRecords``, once per source record: create destination records with
///    ``MappingContext/newRecord(_:)`` and ``MappingContext/insert(_:)``. When not given, the mapping creates one
///    record of its destination entity per source record, as ``EntityMapping/transform(_:to:_:)`` does.
/// 2. ``fixReferences``, once per destination record the first stage of this mapping created: change it (the
///    primary key excepted) with the destination records of every mapping at hand.
/// 3. ``finish``, once: final work, such as records that summarize others.
///
/// ```swift
/// // Splits Person {id, name, street, city} into Person {id, name, addressID} and Address {id, street, city}.
/// let split = EntityMigrationPolicy(createDestinationRecords: { source, context in
///     var person = try context.newRecord("Person")
///     try person.set("id", to: try source["id"])
///     try person.set("name", to: try source["name"])
///     try person.set("addressID", to: try source["id"])
///     try context.insert(person)
///     var address = try context.newRecord("Address")
///     try address.set("id", to: try source["id"])
///     try address.set("street", to: try source["street"])
///     try address.set("city", to: try source["city"])
///     try context.insert(address)
/// })
/// MappingModel(from: 1, to: 2, [.custom("Person", to: "Person", policy: split)])
/// ```
///
/// Each closure runs exactly once per record (or per step), inside the migration's transaction: what it throws
/// ends the migration with the store unchanged.
public struct EntityMigrationPolicy: Sendable {
    /// Stage 1: creates the destination records of one source record.
    public var createDestinationRecords:
        (@Sendable (_ source: MappingSource, _ context: MappingContext) throws -> Void)?
    /// Stage 2: fixes one destination record this mapping created; changes to it are saved when it returns.
    public var fixReferences: (@Sendable (_ destination: inout Record, _ context: MappingContext) throws -> Void)?
    /// Stage 3: runs once after every mapping's records exist and references are fixed.
    public var finish: (@Sendable (_ context: MappingContext) throws -> Void)?

    /// Creates a policy from the stages it customizes.
    public init(
        createDestinationRecords: (@Sendable (_ source: MappingSource, _ context: MappingContext) throws -> Void)? =
            nil,
        fixReferences: (@Sendable (_ destination: inout Record, _ context: MappingContext) throws -> Void)? = nil,
        finish: (@Sendable (_ context: MappingContext) throws -> Void)? = nil
    ) {
        self.createDestinationRecords = createDestinationRecords
        self.fixReferences = fixReferences
        self.finish = finish
    }
}
