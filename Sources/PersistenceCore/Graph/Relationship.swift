/// A relationship between two entities, declared on an entity type (``Entity/relationships``) and stored with the
/// schema.
///
/// A relationship is stored as a **foreign key**: an ordinary attribute of the entity on the "to-one" side that holds
/// the primary key of the record it refers to (`nil` for none when the attribute is optional). The attribute stays
/// an attribute — query it, sort by it, index it — and the library keeps the references it holds true:
///
/// - **On create, update and upsert** a non-`nil` foreign key must name a stored record of the target entity, checked
///   at the statement: otherwise ``PersistenceError/Code/referenceNotFound`` and nothing changes. (A record may
///   refer to itself.)
/// - **On delete** of a target, the to-one's ``DeleteRule`` decides what happens to the records that refer to it —
///   `cascade`, `nullify`, `deny` or `noAction` — inside the same write, to any depth, safe on cycles.
/// - ``Database/verify()-6cqst`` reports references that name no record (left by `noAction`, raw SQL or raw keys).
///
/// The to-one side declares the rule, as SQL's `FOREIGN KEY … ON DELETE` does; the other side may declare the
/// inverse to-many, to name the relationship from the parent:
///
/// ```swift
/// struct Department: Entity {
///     var id: Int64
///     var name: String
///     static let relationships: [Relationship] = [.toMany("employees", Employee.self, inverse: "department")]
/// }
///
/// struct Employee: Entity {
///     var id: Int64
///     var name: String
///     var departmentID: Int64?
///     static let relationships: [Relationship] = [
///         .toOne("department", Department.self, foreignKey: "departmentID", onDelete: .deny)
///     ]
/// }
/// ```
///
/// Core Data's "delete rule of `Department.employees`" is this library's `onDelete` of `Employee.department`.
/// A foreign-key attribute gets an index unless one of the entity's indexes begins with it already.
public struct Relationship: Sendable, Hashable, Codable {
    /// Which side of a relationship this is.
    public enum Kind: String, Sendable, Hashable, Codable {
        /// The side that holds the foreign key and refers to at most one record.
        case toOne
        /// The side whose records are referred to by any number of records of the target.
        case toMany
        /// Either side of a many-to-many: any number of records on each side, linked through a join entity the
        /// model adds (``ManyToManyLink``).
        case manyToMany
    }

    /// The relationship's name, unique among the entity's relationships and attributes.
    public var name: String
    /// Which side this is.
    public var kind: Kind
    /// The name of the entity the relationship leads to.
    public var target: String
    /// For a to-one: the attribute of this entity that holds the target's primary key. `nil` for a to-many.
    public var foreignKey: String?
    /// For a to-many: the name of the target's to-one that refers back to this entity; for a many-to-many: the
    /// target's many-to-many that leads back. `nil` for a to-one (its inverse, if any, is the to-many that names
    /// it).
    public var inverse: String?
    /// For a to-one: what happens to this entity's records when the record they refer to is deleted. `nil` for a
    /// to-many; a to-one declared without one gets ``DeleteRule/nullify`` when its foreign key is optional and
    /// ``DeleteRule/deny`` when it is required.
    public var deleteRule: DeleteRule?
    /// The target's type when the relationship was declared with it (``toOne(_:_:foreignKey:onDelete:)``,
    /// ``toMany(_:_:inverse:)``); not stored with the schema. Observations follow it to the entities a condition on
    /// related records reads.
    package var targetType: (any Entity.Type)?

    private enum CodingKeys: String, CodingKey {
        case name, kind, target, foreignKey, inverse, deleteRule
    }

    /// Creates a relationship; ``toOne(_:_:foreignKey:onDelete:)`` and ``toMany(_:_:inverse:)`` read better.
    public init(
        name: String, kind: Kind, target: String, foreignKey: String? = nil, inverse: String? = nil,
        deleteRule: DeleteRule? = nil
    ) {
        self.name = name
        self.kind = kind
        self.target = target
        self.foreignKey = foreignKey
        self.inverse = inverse
        self.deleteRule = deleteRule
    }

    /// A to-one relationship held in `foreignKey`, an attribute whose type is the target's primary-key type
    /// (optional when the relationship is).
    /// - Parameters:
    ///   - name: The relationship's name (`"author"`).
    ///   - target: The entity it refers to.
    ///   - foreignKey: The attribute holding the target's primary key (`"authorID"`).
    ///   - onDelete: What happens to a record when its target is deleted; by default `nullify` for an optional
    ///     foreign key and `deny` for a required one.
    public static func toOne<Target: Entity>(
        _ name: String, _ target: Target.Type, foreignKey: String, onDelete: DeleteRule? = nil
    ) -> Relationship {
        var relationship = Relationship(
            name: name, kind: .toOne, target: Target.entityName, foreignKey: foreignKey, deleteRule: onDelete)
        relationship.targetType = Target.self
        return relationship
    }

    /// A to-many relationship: the records of `target` whose to-one `inverse` refers to this record.
    public static func toMany<Target: Entity>(_ name: String, _ target: Target.Type, inverse: String) -> Relationship {
        var relationship = Relationship(name: name, kind: .toMany, target: Target.entityName, inverse: inverse)
        relationship.targetType = Target.self
        return relationship
    }

    /// A many-to-many relationship: any number of records of `target`, each of which may be linked to any number of
    /// records of this entity. Both entities declare it, each naming the other's as `inverse`:
    ///
    /// ```swift
    /// struct Post: Entity {
    ///     var id: Int64
    ///     static let relationships: [Relationship] = [.manyToMany("tags", Tag.self, inverse: "posts")]
    /// }
    /// struct Tag: Entity {
    ///     var id: String
    ///     static let relationships: [Relationship] = [.manyToMany("posts", Post.self, inverse: "tags")]
    /// }
    /// ```
    ///
    /// The links are records of a join entity the model adds and the library manages (``ManyToManyLink``, named
    /// `Post_Tag` here): ``DatabaseContext/link(_:_:_:)`` and ``DatabaseContext/unlink(_:_:_:)`` write them, deleting
    /// a record on either side deletes its links, and conditions (``Related``) and eager loading
    /// (``Including/many(_:_:where:sortedBy:limit:)``) go through them. Two entities have at most one many-to-many
    /// between them; one between an entity and itself has two names (`"follows"`, `"followers"`).
    public static func manyToMany<Target: Entity>(_ name: String, _ target: Target.Type, inverse: String)
        -> Relationship
    {
        var relationship = Relationship(name: name, kind: .manyToMany, target: Target.entityName, inverse: inverse)
        relationship.targetType = Target.self
        return relationship
    }

    /// Relationships are equal when their stored declarations are (the target's type is not part of it).
    public static func == (lhs: Relationship, rhs: Relationship) -> Bool {
        (lhs.name, lhs.kind, lhs.target, lhs.foreignKey, lhs.inverse, lhs.deleteRule)
            == (rhs.name, rhs.kind, rhs.target, rhs.foreignKey, rhs.inverse, rhs.deleteRule)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(name)
        hasher.combine(kind)
        hasher.combine(target)
        hasher.combine(foreignKey)
        hasher.combine(inverse)
        hasher.combine(deleteRule)
    }
}

/// What deleting a record does to the records that refer to it through a to-one relationship (SQL's `ON DELETE`,
/// Core Data's delete rule).
///
/// Rules apply inside the write that deletes, to any depth and safely on cycles; every rule's effect is decided
/// before anything is deleted, so a `deny` anywhere in the graph leaves the store unchanged.
public enum DeleteRule: String, Sendable, Hashable, Codable, CaseIterable {
    /// Delete the referring records too (and, in turn, what refers to them).
    case cascade
    /// Set the referring records' foreign key to `nil`; allowed only on an optional foreign key.
    case nullify
    /// Refuse the delete with ``PersistenceError/Code/deleteDenied`` while records refer to it (records deleted by
    /// the same delete don't count), changing nothing.
    case deny
    /// Leave the references as they are: they then name no record (``Database/verify()-6cqst`` reports them) until the
    /// app fixes them. Updating such a record without fixing its reference is
    /// ``PersistenceError/Code/referenceNotFound``.
    case noAction
}
