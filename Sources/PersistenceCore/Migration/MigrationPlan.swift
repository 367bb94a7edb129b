/// The model versions an app has shipped and the mapping models between them: how a backend with mapping-model
/// migrations (SQLite, PostgreSQL) brings a store of any older version up to the current model, step by step, at start-up.
///
/// Declare every version that was ever shipped, oldest first. Old versions are declared as their entity types, kept
/// in a namespace each, so the current code never needs them to read old data — records are read through the
/// schema stored in the file — but each step knows the schema it migrates to:
///
/// ```swift
/// enum V1 { struct Person: Entity { var id: Int64; var name: String; var age: String } }
/// enum V2 {
///     struct Person: Entity {
///         var id: Int64
///         var fullName: String                          // renamed: inferred from the declaration below
///         var age: String
///         static let previousAttributeNames = ["fullName": "name"]
///     }
/// }
/// enum V3 { struct Person: Entity { var id: Int64; var fullName: String; var age: Int } }
///
/// let plan = MigrationPlan(
///     models: [
///         Model(version: 1, entities: [V1.Person.self]),
///         Model(version: 2, entities: [V2.Person.self]),
///     ],
///     mappings: [
///         // String → Int can't be inferred: a mapping model says how.
///         MappingModel(from: 2, to: 3, [
///             .transform("Person", ["age": .value { source in Int(try source.string("age") ?? "") ?? 0 }])
///         ])
///     ])
/// var builder = SQLiteBuilder(databaseName: "App", model: Model(version: 3, entities: [V3.Person.self]))
/// builder.migrationPlan = plan
/// ```
///
/// A store at version 1 opened with version 3 runs 1 → 2 (inferred) then 2 → 3 (mapped), in one transaction. A step
/// with a ``MappingModel`` is done as the mapping says — **an explicit mapping always wins over inference** — and
/// entities it doesn't name are inferred; a step without one is inferred from the schema difference, or refused
/// before any change when the difference can't be inferred.
public struct MigrationPlan: Sendable {
    /// The models the app has shipped before the current one, oldest first. The builder's model is the last
    /// version; it may be listed here too.
    public var models: [Model]
    /// The mapping models, each for one step between two consecutive versions.
    public var mappings: [MappingModel]

    /// Creates a plan.
    /// - Parameters:
    ///   - models: The shipped models, oldest first.
    ///   - mappings: The mapping models, each between two consecutive versions of `models` (or the last of them
    ///     and the builder's model).
    public init(models: [Model], mappings: [MappingModel] = []) {
        self.models = models
        self.mappings = mappings
    }
}

/// One step of a migration chain, as a backend runs it: the source and destination versions and layouts, and the
/// mapping model given for the step.
package struct MigrationStepDefinition: Sendable {
    package let fromVersion: Int
    package let toVersion: Int
    /// The step's source layouts; `nil` for the first step, whose source is the schema stored in the file.
    package let source: [RecordLayout]?
    package let destination: [RecordLayout]
    package let mapping: MappingModel?
}

extension MigrationPlan {
    /// Checks the plan against the current model (before anything touches disk). Versions from the current one up,
    /// and mapping models into them, are not steps from an older store: they are left out (a plan can serve every
    /// version of a test or a tool).
    /// - Throws: ``PersistenceError/Code/invalidConfiguration`` for versions out of order, a version declared
    ///   twice, a mapping between versions that are not consecutive, or two mappings for one step;
    ///   ``PersistenceError/Code/invalidSchema`` for a model whose entities can't be described.
    package func validated(current: Model) throws -> [(model: Model, layouts: [RecordLayout])] {
        let models = self.models.filter { $0.version < current.version }
        var versions: [(model: Model, layouts: [RecordLayout])] = []
        for model in models {
            if let previous = versions.last, previous.model.version >= model.version {
                throw PersistenceError(
                    .invalidConfiguration,
                    "the migration plan's models must be in increasing version order; \(model.version) follows "
                        + "\(previous.model.version)")
            }
            guard !model.entities.isEmpty else {
                throw PersistenceError(
                    .invalidConfiguration, "the migration plan's version \(model.version) has no entities")
            }
            versions.append((model, try model.layouts()))
        }
        let chain = versions.map(\.model.version) + [current.version]
        var seen = Set<[Int]>()
        for mapping in mappings where mapping.destinationVersion <= current.version {
            guard seen.insert([mapping.sourceVersion, mapping.destinationVersion]).inserted else {
                throw PersistenceError(
                    .invalidConfiguration,
                    "the migration plan has two mapping models from \(mapping.sourceVersion) to "
                        + "\(mapping.destinationVersion)")
            }
            guard let at = chain.firstIndex(of: mapping.destinationVersion), at > 0,
                chain[at - 1] == mapping.sourceVersion || (at == 1 && mapping.sourceVersion < chain[0])
            else {
                throw PersistenceError(
                    .invalidConfiguration,
                    "the mapping model from \(mapping.sourceVersion) to \(mapping.destinationVersion) is not a step "
                        + "between consecutive versions of the migration plan (\(chain.map(String.init).joined(separator: ", ")))"
                )
            }
        }
        return versions
    }

    /// The steps from a store at `storedVersion` to the current model: through every declared version above the
    /// stored one.
    package func steps(
        from storedVersion: Int, declared: [(model: Model, layouts: [RecordLayout])], current: Model,
        currentLayouts: [RecordLayout]
    ) -> [MigrationStepDefinition] {
        let targets = declared.filter { $0.model.version > storedVersion } + [(current, currentLayouts)]
        var steps: [MigrationStepDefinition] = []
        var from = storedVersion
        var source: [RecordLayout]? = nil
        for target in targets {
            steps.append(
                MigrationStepDefinition(
                    fromVersion: from, toVersion: target.model.version, source: source, destination: target.layouts,
                    mapping: mappings.first {
                        $0.sourceVersion == from && $0.destinationVersion == target.model.version
                    }))
            from = target.model.version
            source = target.layouts
        }
        return steps
    }
}
