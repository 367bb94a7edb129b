/// How a record of an old layout becomes a record of a new one without migration code: each new attribute takes
/// the value of the old attribute of the same name, or of the one it was renamed from; an added attribute takes its
/// declared default (``Entity/defaultValues``) or `nil`; a `nil` in an attribute that is no longer optional takes
/// the default.
///
/// Values are moved, not converted: an attribute whose type changed keeps the old value, which
/// ``AttributeDescription/conforming(_:)`` then accepts (an integer for a double) or the migration refuses.
package struct RecordMapping: Sendable {
    /// The old layout.
    package let old: RecordLayout
    /// The new layout.
    package let new: RecordLayout
    /// For each new attribute, its position in the old layout, or `nil` when it was added.
    package let sources: [Int?]
    /// For each new attribute, what replaces a `nil` (an added attribute's default, or a required one's).
    private let fallbacks: [Value?]

    /// - Parameter renamed: Old attribute names by new name.
    package init(from old: RecordLayout, to new: RecordLayout, renamed: [String: String] = [:]) {
        self.old = old
        self.new = new
        sources = new.names.map { old.position(of: renamed[$0] ?? $0) }
        fallbacks = zip(new.entity.attributes, zip(sources, new.defaults)).map { attribute, pair in
            let (source, fallback) = pair
            return source == nil || !attribute.isOptional ? fallback : nil
        }
    }

    /// Whether the mapping changes records (as opposed to moving every value to the same place).
    package var changesRecords: Bool {
        sources.count != old.names.count || sources.enumerated().contains { $0.element != $0.offset }
            || fallbacks.contains { $0 != nil }
    }

    /// The values of `oldValues` (in the old layout's order) in the new layout's order.
    package func map(_ oldValues: [Value]) -> [Value] {
        var values: [Value] = []
        values.reserveCapacity(sources.count)
        for (source, fallback) in zip(sources, fallbacks) {
            let value = source.map { oldValues[$0] } ?? .null
            values.append(value.isNull ? fallback ?? .null : value)
        }
        return values
    }
}
