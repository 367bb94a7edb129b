@_spi(PersistenceBackend) package import PersistenceCore

/// A backend's storage for each entity of a model — SQLite's table mappings, PostgreSQL's tables, LMDB's databases
/// — looked up by entity type.
///
/// Each backend looks its storage up through a one-line accessor of its own, constrained to its `Storage`
/// (`all[try positions.position(of: type)]`): compiled in the backend's module, the array access is specialized,
/// where a generic accessor here would copy every element through its type's value witnesses.
package struct EntityLookup<Storage: Sendable>: Sendable {
    package let model: Model
    /// Where each entity type's storage is in ``all``.
    package let positions: EntityPositions
    /// Every entity's storage, in model order.
    package let all: [Storage]
    /// The model's relationships, resolved.
    package let graph: ModelGraph

    /// `storage` holds one element per entity of `model`, in model order.
    /// - Throws: What ``ModelGraph/init(model:)`` throws for relationships that don't fit the model.
    package init(model: Model, storage: [Storage]) throws {
        self.model = model
        graph = try ModelGraph(model: model)
        positions = graph.positions
        all = storage
    }

    /// The storage of a store read without its entity types (see ``ModelGraph/init(unrelated:)``): `storage` holds
    /// one element per layout, in the layouts' order.
    package init(unrelated layouts: [RecordLayout], storage: [Storage]) {
        model = Model(version: 0, entities: [])
        graph = ModelGraph(unrelated: layouts)
        positions = graph.positions
        all = storage
    }
}
