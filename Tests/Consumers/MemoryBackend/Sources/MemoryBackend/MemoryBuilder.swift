public import Foundation
@_spi(PersistenceBackend) public import PersistenceCore

/// Makes a ``MemoryDatabase``: a store of `model` in this process's memory, found again by its name (and directory)
/// for as long as the process runs.
///
/// ```swift
/// let db = try MemoryBuilder(databaseName: "Preview", model: AppModel.current).create()
/// try db.create(User(id: 1, name: "Ada", email: nil))
/// ```
public struct MemoryBuilder: DatabaseBuilder {
    /// The store's name: opening the same name again reaches the same data. Checked as a file backend checks it.
    public var databaseName: String
    /// The entities the database reads and writes, and its will-commit hooks.
    public var model: Model
    /// A namespace for the store's name: an existing directory, whose stores are forgotten once it is removed and no
    /// database holds them (tests give each their temporary directory). `nil` (the default): the process's own.
    public var directory: URL?

    /// A builder of the store named `databaseName` holding `model`'s entities.
    public init(databaseName: String, model: Model) {
        self.databaseName = databaseName
        self.model = model
    }

    /// Checks the name, the directory and the model, then opens the store (creating it empty when it is new).
    /// - Throws: `invalidName`, `directoryNotFound`; `invalidSchema`, `unknownAttribute` or `unknownEntity` for a
    ///   model whose entities or relationships don't fit together; `migrationRequired` when the store holds an
    ///   entity of the model with other attributes (this backend doesn't migrate).
    public func create() throws -> MemoryDatabase {
        let key = try MemoryStores.key(name: databaseName, directory: directory)
        let graph = try ModelGraph(model: model)
        let store = MemoryStores.open(key)
        let slots: [Int]
        do {
            slots = try store.attach(graph.layouts)
        } catch {
            MemoryStores.release(key)
            throw error
        }
        return MemoryDatabase(name: databaseName, key: key, store: store, graph: graph, slots: slots, model: model)
    }
}
