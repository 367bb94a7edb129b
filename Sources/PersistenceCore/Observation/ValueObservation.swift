/// A reusable description of an observed read — what to read and what it depends on — started against a database
/// as often as needed.
///
/// An observation is a value: make it once (a property of a screen's model, a static member), then start it per use.
/// Each start is an independent observation with its own registration, reads and last value: the description holds
/// no state and never touches a database by itself.
///
/// ```swift
/// extension ValueObservation {
///     static var openTodos: ValueObservation<[Todo]> {
///         .records(Todo.self, where: Field("done") == false, sortedBy: [.ascending("due")])
///     }
/// }
///
/// // An async sequence, as `db.observe(…)` returns:
/// for try await todos in ValueObservation.openTodos.values(in: db) { render(todos) }
///
/// // Or the first value now, on the main actor, and later ones there too:
/// let token = ValueObservation.openTodos.start(in: db) { todos in render(todos) }
/// ```
///
/// Make one with ``records(_:where:sortedBy:limit:offset:)``, ``record(_:id:)``, ``alias(_:as:)``,
/// ``aliasList(_:as:)`` or, for any read, ``tracking(_:aliases:_:)-(_,_,(DatabaseContext)->Value)``; start
/// it with ``values(in:)``, ``start(in:onError:onChange:)`` or ``start(in:on:onError:onChange:)``, or hold it in a
/// ``LiveQuery``.
///
/// **What it tracks.** A read is run again after each committed write that changed records of an entity it
/// depends on, or set or removed an alias it read. The observation learns that from the read itself: every typed
/// operation of the context (records, counts, aggregates, conditions on related records, graphs loaded alongside,
/// aliases) tells it which entities it used, each time it runs — so a read that reaches another entity on some runs
/// is tracked for it on those runs. Only raw SQL can't be followed: name the entities it reads in `tracking:`
/// (``PersistenceError/Code/untrackedRead`` otherwise).
///
/// **Duplicates.** A value equal to the last one delivered is not delivered again: by default when `Value` is
/// `Equatable` (arrays and optionals of `Equatable` entities are), by your comparison with
/// ``removeDuplicates(by:)``; ``allowingDuplicates()`` delivers every value read.
public struct ValueObservation<Value: Sendable>: Sendable {
    /// The entities and aliases tracked whatever the read touches (what `tracking:` declared).
    let declared: ReadFootprint
    /// Reads one value in a read transaction.
    let read: @Sendable (any DatabaseContext) throws -> Value
    /// Whether a value read equals the last one delivered, which is then not delivered; `nil` delivers every value.
    var isDuplicate: (@Sendable (Value, Value) -> Bool)?
    /// The value delivered, from the value read and the last one read before it (a list's difference); `nil`
    /// delivers values as read.
    let reduce: (@Sendable (_ previous: Value?, _ read: Value) -> Value)?
    /// The attributes a list observation's records are sorted by, when it knows them (``records(_:query:)``): a
    /// list's difference then moves the records whose sort keys changed.
    var sortAttributes: [String] = []

    init(
        declared: ReadFootprint, reduce: (@Sendable (Value?, Value) -> Value)? = nil,
        read: @escaping @Sendable (any DatabaseContext) throws -> Value
    ) {
        self.declared = declared
        self.read = read
        isDuplicate = ValueEquality.of(Value.self)
        self.reduce = reduce
    }

    init(
        entities: [any Entity.Type], aliases: [String], read: @escaping @Sendable (any DatabaseContext) throws -> Value
    ) {
        self.init(
            declared: ReadFootprint(entities: Set(entities.map { $0.entityName }), aliases: Set(aliases)), read: read)
    }

    /// Observes any read through the typed operations every context has: `read` runs in a read transaction at
    /// start, then again after each committed write that changed what it read (see "What it tracks" above).
    ///
    /// ```swift
    /// let unread = ValueObservation.tracking { try $0.count(Message.self, where: Field("read") == false) }
    /// ```
    ///
    /// - Parameters:
    ///   - entities: Entities to track besides those the read uses — what raw SQL reads, say.
    ///   - aliases: Aliases to track besides those the read reads.
    ///   - read: The read; it runs once per value, in its own read transaction, on a thread of the database's.
    public static func tracking(
        _ entities: [any Entity.Type] = [], aliases: [String] = [],
        _ read: @escaping @Sendable (any DatabaseContext) throws -> Value
    ) -> Self {
        Self(entities: entities, aliases: aliases, read: read)
    }

    /// Observes a read through one backend's own context — raw SQL on SQLite, say — as
    /// ``tracking(_:aliases:_:)-(_,_,(DatabaseContext)->Value)`` does.
    ///
    /// ```swift
    /// let total = ValueObservation.tracking([Order.self]) { (context: SQLiteContext) in
    ///     try context.scalar("SELECT total(\"amount\") FROM \"Order\"")
    /// }
    /// ```
    ///
    /// Raw SQL can't be followed table by table: name in `entities` every entity it reads.
    /// - Throws: From the observation: ``PersistenceError/Code/typeMismatch`` when it is started on a database whose
    ///   context is not a `Context`.
    public static func tracking<Context: DatabaseContext>(
        _ entities: [any Entity.Type] = [], aliases: [String] = [],
        _ read: @escaping @Sendable (Context) throws -> Value
    ) -> Self {
        let typed: any ContextRead<Value> = TypedContextRead(read)
        return Self(entities: entities, aliases: aliases) { context in try typed.read(context) }
    }

    /// Observes the records of a type matching a condition, sorted and windowed: after each committed write that
    /// changed records of that type (or of a type a condition on related records reaches).
    ///
    /// ```swift
    /// let openTodos = ValueObservation.records(Todo.self, where: Field("done") == false, sortedBy: [.ascending("due")])
    /// ```
    public static func records<E: Entity>(
        _ type: E.Type = E.self, where condition: Condition? = nil, sortedBy sort: [Sort] = [], limit: Int? = nil,
        offset: Int = 0
    ) -> ValueObservation<[E]> where Value == [E] {
        records(type, query: Query(where: condition, sortedBy: sort, limit: limit, offset: offset))
    }

    /// Observes the records of a type matching a query.
    public static func records<E: Entity>(_ type: E.Type, query: Query) -> ValueObservation<[E]> where Value == [E] {
        var observation = ValueObservation<[E]>(
            entities: [E.self] + (query.condition?.relatedEntityTypes(of: E.self) ?? []), aliases: []
        ) { context in
            try context.recover(E.self, query: query)
        }
        observation.sortAttributes = query.sort.map(\.attribute)
        return observation
    }

    /// Observes one record by primary key: the record, each new version of it, and `nil` while there is none.
    public static func record<E: Entity>(_ type: E.Type, id: E.ID) -> ValueObservation<E?> where Value == E? {
        ValueObservation<E?>(entities: [E.self], aliases: []) { context in try context.recover(E.self, id: id) }
    }

    /// Observes the record an alias names (``DatabaseContext/alias(_:as:)``): `nil` while there is none.
    public static func alias<E: Entity>(_ name: String, as type: E.Type = E.self) -> ValueObservation<E?>
    where Value == E? {
        ValueObservation<E?>(entities: [E.self], aliases: [name]) { context in try context.alias(name, as: E.self) }
    }

    /// Observes the records a list alias names, in its order (``DatabaseContext/aliasList(_:as:)``).
    public static func aliasList<E: Entity>(_ name: String, as type: E.Type = E.self) -> ValueObservation<[E]>
    where Value == [E] {
        ValueObservation<[E]>(entities: [E.self], aliases: [name]) { context in
            try context.aliasList(name, as: E.self)
        }
    }
}

extension ValueObservation {
    /// The same observation, leaving out a value for which `isDuplicate(last, value)` is `true`, `last` being the
    /// last value delivered.
    ///
    /// ```swift
    /// let names = ValueObservation.records(User.self).removeDuplicates { $0.map(\.name) == $1.map(\.name) }
    /// ```
    public func removeDuplicates(by isDuplicate: @escaping @Sendable (Value, Value) -> Bool) -> Self {
        var observation = self
        observation.isDuplicate = isDuplicate
        return observation
    }

    /// The same observation, delivering every value read — a write that touched what the read depends on without
    /// changing its result produces a value equal to the last.
    public func allowingDuplicates() -> Self {
        var observation = self
        observation.isDuplicate = nil
        return observation
    }
}

extension ValueObservation where Value: Equatable {
    /// The same observation, leaving out a value equal to the last one delivered (what an `Equatable` value's
    /// observation does unless ``allowingDuplicates()`` said otherwise).
    public func removeDuplicates() -> Self { removeDuplicates(by: ==) }
}

/// A read through one backend's context type, behind an existential: the observation's closure then captures no
/// metatype of the context's.
private protocol ContextRead<Value>: Sendable {
    associatedtype Value
    func read(_ context: any DatabaseContext) throws -> Value
}

private struct TypedContextRead<Context: DatabaseContext, Value>: ContextRead {
    let body: @Sendable (Context) throws -> Value

    init(_ body: @escaping @Sendable (Context) throws -> Value) { self.body = body }

    func read(_ context: any DatabaseContext) throws -> Value {
        guard let typed = context as? Context else {
            throw PersistenceError(
                .typeMismatch,
                "an observation that reads through a \(Context.self) was started on a database whose context is a \(type(of: context))"
            )
        }
        return try body(typed)
    }
}
