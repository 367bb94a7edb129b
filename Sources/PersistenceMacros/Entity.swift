import PersistenceCore

/// Writes an entity's `init(record:)` and `encode(to:)`
/// from its stored properties, and adds the `Entity` conformance: the speed of hand-written record code without
/// writing it.
///
/// ```swift
/// import PersistenceCore
/// import PersistenceMacros
///
/// @Entity
/// struct Order: Codable {
///     var id: Int64
///     var customerID: Int64
///     var placedAt: Date
///     var status: Status           // a String enum: stored by its raw value
///     var address: Address?        // a nested Codable value: stored as JSON, as Codable stores it
///     static let indexes: [Index] = [.on("customerID")]
/// }
/// ```
///
/// The entity stays a plain `Codable` struct — its schema still comes from `Codable`, and records are identical to
/// those a `Codable`-only or hand-written version of the struct stores, so either reads the other's. The generated
/// code reads and writes each attribute by name, in declaration order, with no keyed containers: about what a
/// hand-written version costs (see the README's performance section).
///
/// It honours `CodingKeys` (renamed attributes; properties left out are not stored), skips computed and `static`
/// properties and `let`s with a value, and keeps the struct's memberwise initializer (the members go in an
/// extension). Compile-time errors name what can't be stored: a type other than a struct, no `id`, only computed
/// properties, a `lazy` property, a property wrapper, stored properties inside `#if`, a function, tuple, metatype or
/// existential type, or a type with its own `Codable` implementation (which may store differently). Declarations
/// the entity makes — indexes, defaults, previous names, a stamp, relationships — work as on any entity, and those
/// written as array literals of string names are checked at compile time too, as the store would check them when it
/// opens: an index or foreign key naming no stored attribute, a relationship name already taken, `nullify` on a
/// required foreign key, a foreign key of a type no primary key has, and the inverse of a relationship of the entity
/// to itself. (Inverses in other entities are checked when the store opens.)
@attached(
    extension, conformances: PersistenceCore.Entity, names: named(init(record:)), named(encode(to:))
)
public macro Entity() = #externalMacro(module: "PersistenceMacrosPlugin", type: "EntityMacro")
