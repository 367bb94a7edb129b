extension DatabaseContext {
    /// Some attributes of the records matching a query, decoded into a lighter `Decodable` type whose coding keys
    /// name them — a list screen's rows without each record's large fields.
    ///
    /// ```swift
    /// struct OrderRow: Decodable { var id: Int64; var totalCents: Int64 }
    /// let rows = try context.recover(OrderRow.self, from: Order.self, sortedBy: [.descending("placedAt")], limit: 50)
    /// ```
    ///
    /// SQLite and PostgreSQL select only those columns; LMDB reads whole records (a record is one value) and hands
    /// over those attributes.
    ///
    /// Each of the type's attributes must be one of the entity's, of the same kind (an `Int` reads an `Int64`
    /// attribute); it may be optional where the entity's isn't, not the other way round.
    /// - Throws: ``PersistenceError/Code/unknownAttribute`` for an attribute the entity lacks,
    ///   ``PersistenceError/Code/typeMismatch`` for one of another kind or a required one the entity may leave `nil`,
    ///   before anything is read; what the query throws.
    public func recover<P: Decodable, E: Entity>(
        _ projection: P.Type, from type: E.Type, where condition: Condition? = nil, sortedBy sort: [Sort] = [],
        limit: Int? = nil, offset: Int = 0
    ) throws -> [P] {
        guard let access = self as? any RecordValueAccess else {
            throw PersistenceError(.backend, "\(Swift.type(of: self)) can't read projections")
        }
        let layout = try SchemaCache.layout(for: E.self)
        let attributes = try EntityDescription.probedAttributes(of: P.self)
        let positions = try attributes.map { attribute in
            let position = try layout.requirePosition(of: attribute.name)
            let stored = layout.entity.attributes[position]
            guard stored.type.storageClass == attribute.type.storageClass,
                stored.type != .codable || attribute.type == .codable
            else {
                throw PersistenceError(
                    .typeMismatch,
                    "\(P.self).\(attribute.name) is a \(attribute.type.rawValue), '\(layout.entity.name).\(attribute.name)' a \(stored.type.rawValue)"
                )
            }
            guard attribute.isOptional || !stored.isOptional else {
                throw PersistenceError(
                    .typeMismatch,
                    "\(P.self).\(attribute.name) is required, but '\(layout.entity.name).\(attribute.name)' may be nil")
            }
            return position
        }
        let reader = RecordReader(
            layout: RecordLayout(
                EntityDescription(unchecked: layout.entity.name, attributes: attributes, primaryKey: "", indexes: [])))
        var rows: [P] = []
        let query = Query(where: condition, sortedBy: sort, limit: limit, offset: offset)
        try project(access, E.self, query, positions) { values in rows.append(try reader.decode(P.self, from: values)) }
        return rows
    }

    private func project<E: Entity>(
        _ access: any RecordValueAccess, _ type: E.Type, _ query: Query, _ positions: [Int],
        _ body: ([Value]) throws -> Void
    ) throws {
        try access.forEachRecordValues(type, query: query, attributes: positions, body)
    }
}

extension Database {
    /// Some attributes of the matching records, decoded into a lighter type, in one read (see
    /// ``DatabaseContext/recover(_:from:where:sortedBy:limit:offset:)``).
    public func recover<P: Decodable & Sendable, E: Entity>(
        _ projection: P.Type, from type: E.Type, where condition: Condition? = nil, sortedBy sort: [Sort] = [],
        limit: Int? = nil, offset: Int = 0
    ) throws -> [P] {
        try read { context in
            try context.recover(projection, from: type, where: condition, sortedBy: sort, limit: limit, offset: offset)
        }
    }
}
