public import PersistenceCore
public import PersistenceSync

/// A scope the server offers: its name, its entity, and the condition its parameters make.
///
/// ```swift
/// let scopes = [
///     SyncScopeDefinition("projects", of: Project.self) { parameters in
///         Field("ownerID") == (parameters["user"] ?? .null)
///     }
/// ]
/// ```
public struct SyncScopeDefinition: Sendable {
    /// The name clients subscribe by.
    public let name: String
    let entity: String
    let condition: @Sendable (_ parameters: [String: Value]) throws -> Condition?

    /// A scope of `entity`'s records: those for which `condition` — made from a subscription's parameters — holds;
    /// every record when it returns `nil`.
    public init<E: Entity>(
        _ name: String, of entity: E.Type,
        where condition: @escaping @Sendable (_ parameters: [String: Value]) throws -> Condition?
    ) {
        self.name = name
        self.entity = E.entityName
        self.condition = condition
    }
}

/// What a client may sync, as the server's authentication decides for a request: everything (a trusted client), or
/// only the scope subscriptions it lists.
public struct SyncAccess: Sendable, Hashable {
    let allowed: Set<SyncScope>?

    /// Any scope, or the whole store.
    public static let everything = SyncAccess(allowed: nil)

    /// Only these scope subscriptions (name and parameters both).
    public static func only(_ scopes: Set<SyncScope>) -> SyncAccess { SyncAccess(allowed: scopes) }

    /// Whether a client may subscribe to these scopes (`nil`: the whole store).
    func permits(_ scopes: [SyncScope]?) -> Bool {
        guard let allowed else { return true }
        guard let scopes else { return false }
        return scopes.allSatisfy(allowed.contains)
    }
}

/// What a request's scopes make readable and writable: per entity, the records for which a condition holds (`nil`:
/// all of them); an entity that isn't listed isn't synced at all. `nil` as a whole: the whole store.
struct ResolvedScopes {
    let conditions: [String: Condition?]?

    init(_ scopes: [SyncScope]?, access: SyncAccess, definitions: [String: SyncScopeDefinition]) throws {
        guard access.permits(scopes) else {
            throw PersistenceError(.unauthorized, "the client may not sync the scopes it asked for")
        }
        guard let scopes else {
            conditions = nil
            return
        }
        var conditions: [String: Condition?] = [:]
        for scope in scopes {
            guard let definition = definitions[scope.name] else {
                throw PersistenceError(.invalidArgument, "the server declares no scope named '\(scope.name)'")
            }
            let condition = try definition.condition(scope.parameters)
            switch (conditions[definition.entity], condition) {
            case (.none, _): conditions[definition.entity] = condition
            case (.some(.none), _), (_, .none): conditions[definition.entity] = .some(nil)
            case (.some(.some(let earlier)), .some(let later)): conditions[definition.entity] = earlier || later
            }
        }
        self.conditions = conditions
    }

    /// Whether the entity is synced, and which of its records: `.some(nil)` for all.
    func condition(for entity: String) -> Condition?? {
        guard let conditions else { return .some(nil) }
        return conditions[entity]
    }
}
