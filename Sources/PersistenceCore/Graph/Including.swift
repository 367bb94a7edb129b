/// A record with the records loaded alongside it through its relationships (``Including``).
///
/// Entities stay plain values: what was loaded sits beside the record, typed by what was asked for —
/// `Loaded<Author, [Post]>`, `Loaded<Post, Author?>`, `Loaded<Author, [Loaded<Post, [Comment]>]>`.
public struct Loaded<Record: Entity, Related> {
    /// The record.
    public var entity: Record
    /// What was loaded alongside it.
    public var related: Related

    /// A record with what was loaded alongside it.
    public init(entity: Record, related: Related) {
        self.entity = entity
        self.related = related
    }
}

extension Loaded: Sendable where Related: Sendable {}
extension Loaded: Equatable where Record: Equatable, Related: Equatable {}

/// What to load alongside records of `Parent` through one of its relationships — with a filter, an order and a
/// limit per parent, and what to load alongside those in turn — in a fixed number of queries per level, whatever
/// the number of parents (no N+1).
///
/// ```swift
/// // 10 authors, each with their 3 latest published posts, each post with its comments: three queries.
/// let authors = try db.recover(
///     Author.self, sortedBy: [.ascending("name")], limit: 10,
///     including: .many(
///         "posts", Post.self, where: Field("published") == true, sortedBy: [.descending("date")], limit: 3,
///         including: .many("comments", Comment.self)))
/// for author in authors {                     // Loaded<Author, [Loaded<Post, [Comment]>]>
///     print(author.entity.name, author.related.map(\.entity.title))
/// }
/// ```
///
/// A to-many loads the records whose foreign key names each parent (`[Child]`, in the order given, then by
/// primary key); a to-one loads the record each parent's foreign key names (`Target?`: `nil` for a `nil` key, or
/// one that names no record). Per level, the related records of up to ``batchSize`` parents come in one query —
/// the per-parent limit a window function in SQL (`ROW_NUMBER() OVER (PARTITION BY …)`), a count per parent on
/// LMDB. A many-to-many loads through its links: one query for the links of the parents, one for the records they
/// name, filtered and sorted; each parent then takes its own in that order, up to the limit.
public struct Including<Parent: Entity, Related>: Sendable {
    /// How many parents' related records one query loads.
    public static var batchSize: Int { 5_000 }

    /// Loads, for each parent in order, what it relates to.
    let load: @Sendable (any RecordValueAccess, [Parent]) throws -> [Related]
    /// The entities it loads, at every level: what an observation of the graph tracks.
    let entities: [any Entity.Type]

    init(
        _ entities: [any Entity.Type], _ load: @escaping @Sendable (any RecordValueAccess, [Parent]) throws -> [Related]
    ) {
        self.entities = entities
        self.load = load
    }

    /// What loading `relationship` reads: the child entity, a many-to-many's join entity, and the entities the
    /// condition on the children reaches.
    private static func tracked<Child: Entity>(_ relationship: String, _ child: Child.Type, _ condition: Condition?)
        -> [any Entity.Type]
    {
        var types: [any Entity.Type] = [Child.self]
        if let declared = Parent.relationships.first(where: { $0.name == relationship }), declared.kind == .manyToMany {
            types.append(ManyToManyLinks.linkType(of: declared, Parent.self, Child.self))
        }
        return types + (condition?.relatedEntityTypes(of: Child.self) ?? [])
    }

    /// The records of `child` that the to-many (or many-to-many) `relationship` of `Parent` leads to, for each
    /// parent: those matching `condition`, in the order of `sort` (then primary key), at most `limit` per parent.
    public static func many<Child: Entity>(
        _ relationship: String, _ child: Child.Type = Child.self, where condition: Condition? = nil,
        sortedBy sort: [Sort] = [], limit: Int? = nil
    ) -> Including<Parent, [Child]> where Related == [Child] {
        Including(tracked(relationship, Child.self, condition)) { access, parents in
            try GraphLoader<Parent, Child>(access, relationship).many(parents, condition, sort, limit)
        }
    }

    /// The records of `child` that the to-many `relationship` of `Parent` leads to, as
    /// ``many(_:_:where:sortedBy:limit:)`` loads them, each with what `nested` loads alongside it.
    public static func many<Child: Entity, Nested>(
        _ relationship: String, _ child: Child.Type = Child.self, where condition: Condition? = nil,
        sortedBy sort: [Sort] = [], limit: Int? = nil, including nested: Including<Child, Nested>
    ) -> Including<Parent, [Loaded<Child, Nested>]> where Related == [Loaded<Child, Nested>] {
        Including(tracked(relationship, Child.self, condition) + nested.entities) {
            access, parents in
            let groups = try GraphLoader<Parent, Child>(access, relationship).many(parents, condition, sort, limit)
            var related = try nested.load(access, groups.flatMap { $0 }).makeIterator()
            return groups.map { group in
                group.compactMap { child in related.next().map { Loaded(entity: child, related: $0) } }
            }
        }
    }

    /// The record of `target` that the to-one `relationship` of `Parent` names, for each parent; `nil` where the
    /// foreign key is `nil` or names no record.
    public static func one<Target: Entity>(_ relationship: String, _ target: Target.Type = Target.self)
        -> Including<Parent, Target?> where Related == Target?
    {
        Including([Target.self]) { access, parents in
            try GraphLoader<Parent, Target>(access, relationship).one(parents)
        }
    }

    /// The record of `target` that the to-one `relationship` of `Parent` names, with what `nested` loads alongside
    /// it.
    public static func one<Target: Entity, Nested>(
        _ relationship: String, _ target: Target.Type = Target.self, including nested: Including<Target, Nested>
    ) -> Including<Parent, Loaded<Target, Nested>?> where Related == Loaded<Target, Nested>? {
        Including([Target.self] + nested.entities) { access, parents in
            let targets = try GraphLoader<Parent, Target>(access, relationship).one(parents)
            var related = try nested.load(access, targets.compactMap { $0 }).makeIterator()
            return targets.map { target in
                target.flatMap { entity in related.next().map { Loaded(entity: entity, related: $0) } }
            }
        }
    }

    /// Two relationships loaded alongside the same parents: `(first:, second:)` for each.
    ///
    /// ```swift
    /// let employees = try db.recover(
    ///     Employee.self, including: .both(.one("department", Department.self), .many("reports", Employee.self)))
    /// for employee in employees {
    ///     print(employee.entity.name, employee.related.first?.name ?? "-", employee.related.second.count)
    /// }
    /// ```
    public static func both<First, Second>(_ first: Including<Parent, First>, _ second: Including<Parent, Second>)
        -> Including<Parent, (first: First, second: Second)> where Related == (first: First, second: Second)
    {
        Including(first.entities + second.entities) { access, parents in
            zip(try first.load(access, parents), try second.load(access, parents)).map { (first: $0, second: $1) }
        }
    }
}

extension DatabaseContext {
    /// The records matching a condition, sorted and windowed, each with what `including` loads alongside it
    /// through its relationships — in a fixed number of queries per relationship level.
    ///
    /// - Throws: What ``recover(_:where:sortedBy:limit:offset:)`` throws; ``PersistenceError/Code/unknownAttribute``
    ///   for a relationship the entity doesn't declare, ``PersistenceError/Code/invalidArgument`` for one that
    ///   leads elsewhere or isn't the kind asked for.
    public func recover<E: Entity, Related>(
        _ type: E.Type = E.self, where condition: Condition? = nil, sortedBy sort: [Sort] = [], limit: Int? = nil,
        offset: Int = 0, including: Including<E, Related>
    ) throws -> [Loaded<E, Related>] {
        // Every backend of this package offers record access; a context that doesn't can't load graphs.
        guard let access = self as? any RecordValueAccess else {
            throw PersistenceError(.backend, "\(Swift.type(of: self)) can't load related records")
        }
        let parents = try recover(type, query: Query(where: condition, sortedBy: sort, limit: limit, offset: offset))
        let related = try including.load(access, parents)
        return zip(parents, related).map { Loaded(entity: $0, related: $1) }
    }
}

extension Database {
    /// The records matching a condition, each with what `including` loads alongside it, in one read (see
    /// ``DatabaseContext/recover(_:where:sortedBy:limit:offset:including:)``).
    public func recover<E: Entity, Related: Sendable>(
        _ type: E.Type = E.self, where condition: Condition? = nil, sortedBy sort: [Sort] = [], limit: Int? = nil,
        offset: Int = 0, including: Including<E, Related>
    ) throws -> [Loaded<E, Related>] {
        try read { context in
            try context.recover(
                type, where: condition, sortedBy: sort, limit: limit, offset: offset, including: including)
        }
    }
}

extension Database {
    /// Observes records with what `including` loads alongside them: the value first, then again after each committed
    /// write that changed the records' entity or any entity the graph loads — an author's new value when one of its
    /// posts changes, too (see ``ObservedValues``).
    ///
    /// ```swift
    /// for try await authors in db.observe(Author.self, including: .many("posts", Post.self, limit: 3)) {
    ///     render(authors)
    /// }
    /// ```
    public func observe<E: Entity, Related: Sendable>(
        _ type: E.Type = E.self, where condition: Condition? = nil, sortedBy sort: [Sort] = [], limit: Int? = nil,
        offset: Int = 0, including: Including<E, Related>
    ) -> ObservedValues<[Loaded<E, Related>]> {
        let related = condition?.relatedEntityTypes(of: E.self) ?? []
        return observe(tracking: [E.self] + related + including.entities) { context in
            try context.recover(
                type, where: condition, sortedBy: sort, limit: limit, offset: offset, including: including)
        }
    }
}

/// Loads the records one relationship of `Parent` leads to, for a batch of parents, through record access.
struct GraphLoader<Parent: Entity, Child: Entity> {
    let access: any RecordValueAccess
    let parentLayout: RecordLayout
    let childLayout: RecordLayout
    let relationship: Relationship

    init(_ access: any RecordValueAccess, _ name: String) throws {
        self.access = access
        parentLayout = try SchemaCache.layout(for: Parent.self)
        childLayout = try SchemaCache.layout(for: Child.self)
        let entity = parentLayout.entity.name
        guard let relationship = parentLayout.entity.relationship(named: name) else {
            throw PersistenceError(.unknownAttribute, "entity '\(entity)' declares no relationship '\(name)'")
        }
        guard relationship.target == childLayout.entity.name else {
            throw PersistenceError(
                .invalidArgument,
                "relationship '\(entity).\(name)' leads to '\(relationship.target)', not '\(childLayout.entity.name)'")
        }
        self.relationship = relationship
    }

    /// For each parent, its children through a to-many, filtered, sorted and limited per parent.
    func many(_ parents: [Parent], _ condition: Condition?, _ sort: [Sort], _ limit: Int?) throws -> [[Child]] {
        if relationship.kind == .manyToMany { return try linked(parents, condition, sort, limit) }
        guard relationship.kind == .toMany, let inverse = relationship.inverse,
            let foreignKey = childLayout.entity.relationship(named: inverse)?.foreignKey,
            let position = childLayout.position(of: foreignKey)
        else {
            throw PersistenceError(
                .invalidArgument,
                "relationship '\(parentLayout.entity.name).\(relationship.name)' is not a to-many: load it with one(_:_:)"
            )
        }
        let keys = parents.map(\.id.storedValue)
        var children: [Value: [Child]] = [:]
        let reader = RecordReader(layout: childLayout)
        for batch in Self.distinctBatches(of: keys) {
            let scope: Condition = .oneOf(foreignKey, batch)
            let query = Query(
                where: condition.map { scope && $0 } ?? scope, sortedBy: sort,
                limitPerValue: limit.map { LimitPerValue(foreignKey, $0) })
            try forEachRecord(Child.self, query) { values in
                children[values[position], default: []].append(try reader.decode(Child.self, from: values))
            }
        }
        return keys.map { children[$0] ?? [] }
    }

    /// For each parent, its records through a many-to-many: the links of a batch of parents in one query, the
    /// records they name (filtered and sorted) in another, then each parent's in that order, up to `limit`.
    func linked(_ parents: [Parent], _ condition: Condition?, _ sort: [Sort], _ limit: Int?) throws -> [[Child]] {
        if let limit, limit < 0 { throw PersistenceError(.invalidArgument, "a query's limit can't be negative") }
        let (link, near, far) = try access.graph.links(of: relationship, of: parentLayout.entity.name)
        let nearName = access.graph.layouts[link].names[near]
        let parentKeys = parents.map(\.id.storedValue)
        var linked: [Value: [Value]] = [:]
        for batch in Self.distinctBatches(of: parentKeys) {
            try forEachRecord(access.graph.types[link], Query(where: .oneOf(nearName, batch))) { values in
                linked[values[near], default: []].append(values[far])
            }
        }
        // The linked records, in the order asked for: each parent takes its own in that order.
        var rows: [[Value]] = []
        let keyName = childLayout.entity.primaryKey
        let batches = Self.distinctBatches(of: linked.values.flatMap { $0 })
        for batch in batches {
            let scope: Condition = .oneOf(keyName, batch)
            try forEachRecord(Child.self, Query(where: condition.map { scope && $0 } ?? scope, sortedBy: sort)) {
                rows.append($0)
            }
        }
        // Each batch came sorted; more than one are sorted together, as the query sorts.
        if batches.count > 1 { rows.sort(by: try Query(sortedBy: sort).resolve(in: childLayout).areInIncreasingOrder) }
        var order: [Value: Int] = [:]
        for (index, values) in rows.enumerated() { order[values[childLayout.primaryKeyIndex]] = index }
        let reader = RecordReader(layout: childLayout)
        let children = try rows.map { try reader.decode(Child.self, from: $0) }
        return parentKeys.map { key in
            let positions = (linked[key] ?? []).compactMap { order[$0] }.sorted()
            return positions.prefix(limit ?? Int.max).map { children[$0] }
        }
    }

    /// For each parent, the record its to-one's foreign key names, or `nil`.
    func one(_ parents: [Parent]) throws -> [Child?] {
        guard relationship.kind == .toOne, let foreignKey = relationship.foreignKey,
            let position = parentLayout.position(of: foreignKey)
        else {
            throw PersistenceError(
                .invalidArgument,
                "relationship '\(parentLayout.entity.name).\(relationship.name)' is not a to-one: load it with many(_:_:)"
            )
        }
        let writer = RecordWriter(layout: parentLayout)
        let references = try parents.map { try writer.encode($0)[position] }
        let keyName = childLayout.entity.primaryKey
        let keyPosition = childLayout.primaryKeyIndex
        var targets: [Value: Child] = [:]
        let reader = RecordReader(layout: childLayout)
        for batch in Self.distinctBatches(of: references.filter { !$0.isNull }) {
            try forEachRecord(Child.self, Query(where: .oneOf(keyName, batch))) { values in
                targets[values[keyPosition]] = try reader.decode(Child.self, from: values)
            }
        }
        return references.map { $0.isNull ? nil : targets[$0] }
    }

    private func forEachRecord<T: Entity>(_ type: T.Type, _ query: Query, _ body: ([Value]) throws -> Void) throws {
        try access.forEachRecordValues(type, query: query, body)
    }

    /// The distinct keys, in batches of at most ``Including/batchSize``.
    static func distinctBatches(of keys: [Value]) -> [[Value]] {
        var seen = Set<Value>()
        let distinct = keys.filter { seen.insert($0).inserted }
        let size = Including<Parent, Void>.batchSize
        return stride(from: 0, to: distinct.count, by: size).map {
            Array(distinct[$0..<Swift.min($0 + size, distinct.count)])
        }
    }
}
