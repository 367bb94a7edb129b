import Synchronization

/// Entity layouts derived once per type and process.
package enum SchemaCache {
    private static let layouts = Mutex<[ObjectIdentifier: RecordLayout]>([:])

    /// The layout of an entity type, deriving its description on first use.
    package static func layout<E: Entity>(for type: E.Type) throws -> RecordLayout {
        let key = ObjectIdentifier(type)
        if let cached = layouts.withLock({ $0[key] }) { return cached }
        let entity = try EntityDescription(describing: type)
        try RecordLayout.validatingDefaults(E.defaultValues, of: entity)
        try RecordLayout.validatingPreviousNames(E.previousAttributeNames, of: entity)
        try RecordLayout.validatingStamp(E.stampAttribute, of: entity)
        let layout = RecordLayout(
            entity, defaults: E.defaultValues, previousName: E.previousName.isEmpty ? nil : E.previousName,
            previousAttributeNames: E.previousAttributeNames,
            stampAttribute: E.stampAttribute.isEmpty ? nil : E.stampAttribute)
        return layouts.withLock { cache in
            if let raced = cache[key] { return raced }
            cache[key] = layout
            return layout
        }
    }
}
