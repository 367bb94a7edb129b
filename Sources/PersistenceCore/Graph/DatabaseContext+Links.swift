/// Writing the links of many-to-many relationships (``Relationship/manyToMany(_:_:inverse:)``).
extension DatabaseContext {
    /// Links a record to a record of a many-to-many `relationship` of its entity; returns whether the link is new
    /// (linking a linked pair again changes nothing).
    ///
    /// ```swift
    /// try db.write { context in
    ///     try context.link(post, "tags", swift)      // post.tags now holds swift, and swift.posts holds post
    /// }
    /// ```
    ///
    /// - Throws: ``PersistenceError/Code/unknownAttribute`` when the entity declares no such relationship,
    ///   ``PersistenceError/Code/invalidArgument`` when it isn't a many-to-many leading to `T`,
    ///   ``PersistenceError/Code/referenceNotFound`` when either record isn't stored.
    @discardableResult
    public func link<E: Entity, T: Entity>(_ record: E, _ relationship: String, _ target: T) throws -> Bool {
        try link(E.self, id: record.id, relationship, T.self, id: target.id)
    }

    /// Links the record of `type` with primary key `id` to the record of `targetType` with `targetID` through a
    /// many-to-many `relationship` of `type`; returns whether the link is new.
    @discardableResult
    public func link<E: Entity, T: Entity>(
        _ type: E.Type, id: E.ID, _ relationship: String, _ targetType: T.Type, id targetID: T.ID
    ) throws -> Bool {
        let declared = try manyToMany(relationship, of: E.self, to: T.self)
        if ManyToManyLinks.isSource(declared, of: E.entityName) {
            return try insertIfMissing(ManyToManyLink<E, T>(sourceID: id, targetID: targetID))
        }
        return try insertIfMissing(ManyToManyLink<T, E>(sourceID: targetID, targetID: id))
    }

    /// Removes the link between two records of a many-to-many `relationship`; returns whether there was one.
    /// - Throws: What ``link(_:_:_:)`` throws for the relationship.
    @discardableResult
    public func unlink<E: Entity, T: Entity>(_ record: E, _ relationship: String, _ target: T) throws -> Bool {
        try unlink(E.self, id: record.id, relationship, T.self, id: target.id)
    }

    /// Removes the link between the record of `type` with `id` and the record of `targetType` with `targetID`;
    /// returns whether there was one.
    @discardableResult
    public func unlink<E: Entity, T: Entity>(
        _ type: E.Type, id: E.ID, _ relationship: String, _ targetType: T.Type, id targetID: T.ID
    ) throws -> Bool {
        let declared = try manyToMany(relationship, of: E.self, to: T.self)
        if ManyToManyLinks.isSource(declared, of: E.entityName) {
            let link = ManyToManyLink<E, T>(sourceID: id, targetID: targetID)
            return try delete(ManyToManyLink<E, T>.self, id: link.id)
        }
        let link = ManyToManyLink<T, E>(sourceID: targetID, targetID: id)
        return try delete(ManyToManyLink<T, E>.self, id: link.id)
    }

    /// Creates a link unless it is stored already.
    private func insertIfMissing<Link: Entity>(_ link: Link) throws -> Bool {
        guard try recover(Link.self, id: link.id) == nil else { return false }
        try create(link)
        return true
    }

    /// The many-to-many `name` of `E`, which must lead to `T`.
    private func manyToMany<E: Entity, T: Entity>(_ name: String, of entity: E.Type, to target: T.Type) throws
        -> Relationship
    {
        guard let relationship = E.relationships.first(where: { $0.name == name }) else {
            throw PersistenceError(.unknownAttribute, "entity '\(E.entityName)' declares no relationship '\(name)'")
        }
        guard relationship.kind == .manyToMany, relationship.target == T.entityName else {
            throw PersistenceError(
                .invalidArgument,
                "relationship '\(E.entityName).\(name)' is not a many-to-many leading to '\(T.entityName)'")
        }
        return relationship
    }
}

extension Database {
    /// Links two records through a many-to-many relationship in one write (see
    /// ``DatabaseContext/link(_:_:_:)``); returns whether the link is new.
    @discardableResult
    public func link<E: Entity, T: Entity>(_ record: E, _ relationship: String, _ target: T) throws -> Bool {
        try write { try $0.link(record, relationship, target) }
    }

    /// Removes the link between two records in one write (see ``DatabaseContext/unlink(_:_:_:)``); returns whether
    /// there was one.
    @discardableResult
    public func unlink<E: Entity, T: Entity>(_ record: E, _ relationship: String, _ target: T) throws -> Bool {
        try write { try $0.unlink(record, relationship, target) }
    }
}
