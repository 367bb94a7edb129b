/// How an observation tells that a value it read equals the last one it delivered (so it isn't delivered again), and
/// that a record kept its content (so a list's difference doesn't list it as updated).
enum ValueEquality {
    /// `==` when `Value` is `Equatable` at run time — an array or optional of `Equatable` entities included, through
    /// their conditional conformances — else `nil`: values that can't be compared are all delivered.
    static func of<Value: Sendable>(_ type: Value.Type) -> (@Sendable (Value, Value) -> Bool)? {
        guard let equatable = Value.self as? any Equatable.Type else { return nil }
        let comparison = comparison(of: Value.self, as: equatable)
        return { comparison.equal($0, $1) }
    }

    /// `==` of `Equatable` `T`, which is `Value` (the caller checked), behind an existential: the closure above then
    /// holds no metatype of its own.
    private static func comparison<Value: Sendable, T: Equatable>(of value: Value.Type, as equatable: T.Type)
        -> any Comparison<Value>
    {
        EquatableComparison<Value, T>()
    }

    /// Whether two records of `E` have the same content: `==` when `E` is `Equatable`, else equal stored values
    /// (what the store would hold for each). Two records whose values can't be encoded differ.
    static func records<E: Entity>(_ type: E.Type) -> @Sendable (E, E) -> Bool {
        if let equal = of(E.self) { return equal }
        return { lhs, rhs in
            guard let layout = try? SchemaCache.layout(for: E.self),
                let left = try? RecordWriter(layout: layout).encode(lhs),
                let right = try? RecordWriter(layout: layout).encode(rhs)
            else { return false }
            return left == right
        }
    }

    /// Whether two records of `E` have the same values of `attributes` (what a list is sorted by); `nil` without
    /// attributes, or when one isn't an attribute of `E`'s. Two records whose values can't be encoded differ.
    static func sortKeys<E: Entity>(_ type: E.Type, _ attributes: [String]) -> (@Sendable (E, E) -> Bool)? {
        guard !attributes.isEmpty, let layout = try? SchemaCache.layout(for: E.self) else { return nil }
        var found: [Int] = []
        for attribute in attributes {
            guard let position = layout.position(of: attribute) else { return nil }
            found.append(position)
        }
        let positions = found
        return { lhs, rhs in
            guard let left = try? RecordWriter(layout: layout).encode(lhs),
                let right = try? RecordWriter(layout: layout).encode(rhs)
            else { return false }
            return positions.allSatisfy { left[$0] == right[$0] }
        }
    }

    /// Whether two lists hold the same records, in the same order, with the same content.
    static func lists<E: Entity>(_ type: E.Type) -> @Sendable ([E], [E]) -> Bool {
        let same = records(E.self)
        return { lhs, rhs in
            lhs.count == rhs.count && zip(lhs, rhs).allSatisfy { $0.id == $1.id && same($0, $1) }
        }
    }
}

/// Compares two values of one type.
private protocol Comparison<Compared>: Sendable {
    associatedtype Compared
    func equal(_ lhs: Compared, _ rhs: Compared) -> Bool
}

/// `==` of `Value`, which is the `Equatable` `T`, through casts that always succeed.
private struct EquatableComparison<Value, T: Equatable>: Comparison {
    func equal(_ lhs: Value, _ rhs: Value) -> Bool {
        guard let lhs = lhs as? T, let rhs = rhs as? T else { return false }
        return lhs == rhs
    }
}
