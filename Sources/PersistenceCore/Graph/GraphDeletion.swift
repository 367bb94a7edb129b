/// One delete and everything its rules reach, decided before anything changes: every record `cascade` reaches (to
/// any depth; each record once, so cycles end), then `deny` (refusing with nothing changed) and `nullify` over what
/// remains; only then are references set to `nil` and records deleted.
struct GraphDeletion<Access: RecordValueAccess> {
    /// How many foreign-key values one lookup of referring records binds.
    static var lookupBatch: Int { 500 }

    let access: Access
    let graph: ModelGraph
    let root: Int
    let rootKeys: [Value]
    /// The primary keys of the records to delete, by entity position, as a set and in the order found.
    private var doomed: [Set<Value>]
    private var order: [[Value]]
    /// Cascades to entities nothing depends on (``ModelGraph/sweepable``): deleted by their foreign key's values,
    /// unread.
    private var sweeps: [(referrer: ModelGraph.Referrer, keys: [Value])] = []
    /// What the deletion did, per entity, once ``run()`` returned.
    private(set) var report = DeletionReport()

    /// A deletion of the `root` entity's records with these primary keys, all stored (the result counts each once).
    init(_ access: Access, root: Int, keys: [Value]) {
        self.access = access
        graph = access.graph
        self.root = root
        rootKeys = keys
        doomed = Array(repeating: [], count: graph.types.count)
        order = Array(repeating: [], count: graph.types.count)
    }

    /// Applies the rules and deletes; returns how many of the root keys were deleted.
    mutating func run() throws -> Int {
        let roots = doom(rootKeys, at: root)
        guard !roots.isEmpty else { return 0 }
        // `closedBy`: the foreign key of a self-referring cascade whose closure gave the keys, which holds all they
        // reach through it.
        var pending: [(position: Int, keys: [Value], closedBy: Int?)] = [(root, roots, nil)]
        // Everything `cascade` reaches.
        while let (position, keys, closedBy) = pending.popLast() {
            for referrer in graph.referrers[position] where referrer.rule == .cascade {
                if referrer.source == position, referrer.foreignKey == closedBy { continue }
                if graph.sweepable[referrer.source] {
                    sweeps.append((referrer, keys))
                    continue
                }
                var found: [Value] = []
                if referrer.source == position, try closure(of: referrer, from: keys, into: &found) {
                    // Every level at once; what else refers to the records found is still to be followed.
                    let fresh = doom(found, at: position)
                    if !fresh.isEmpty { pending.append((position, fresh, referrer.foreignKey)) }
                    continue
                }
                let sourceKey = graph.layouts[referrer.source].primaryKeyIndex
                try forEachReferring(referrer, to: keys) { values in
                    found.append(values[sourceKey])
                }
                let fresh = doom(found, at: referrer.source)
                if !fresh.isEmpty { pending.append((referrer.source, fresh, nil)) }
            }
        }
        // What the other rules do to the records that stay.
        var nullified: [Int: [Value: [Value]]] = [:]
        for position in doomed.indices where !order[position].isEmpty {
            for referrer in graph.referrers[position] where referrer.rule == .deny || referrer.rule == .nullify {
                let sourceKey = graph.layouts[referrer.source].primaryKeyIndex
                try forEachReferring(referrer, to: order[position]) { values in
                    let key = values[sourceKey]
                    guard !doomed[referrer.source].contains(key) else { return }
                    if referrer.rule == .deny {
                        throw PersistenceError(
                            .deleteDenied,
                            "'\(graph.layouts[referrer.source].entity.name)' records refer to a '\(graph.layouts[position].entity.name)' record to delete through '\(referrer.name)', whose delete rule is deny"
                        )
                    }
                    var record = nullified[referrer.source]?[key] ?? values
                    record[referrer.foreignKey] = .null
                    nullified[referrer.source, default: [:]][key] = record
                }
            }
        }
        for (source, records) in nullified.sorted(by: { $0.key < $1.key }) {
            for values in records.values {
                try CancellationFlag.checkCurrent()
                try replace(graph.types[source], values)
            }
            report.nullified[graph.layouts[source].entity.name] = records.count
        }
        for sweep in sweeps {
            let source = sweep.referrer.source
            try forEachBatch(of: sweep.keys, attribute: attribute(of: sweep.referrer)) { condition in
                try CancellationFlag.checkCurrent()
                report.countDeleted(
                    try deleteMatching(graph.types[source], condition), of: graph.layouts[source].entity.name)
            }
        }
        for position in order.indices {
            try Self.inBatches(order[position]) { batch in
                try CancellationFlag.checkCurrent()
                let count = try delete(graph.types[position], batch)
                report.countDeleted(count, of: graph.layouts[position].entity.name)
            }
        }
        return roots.count
    }

    /// The keys among `keys` not yet doomed, which are now.
    private mutating func doom(_ keys: [Value], at position: Int) -> [Value] {
        var fresh: [Value] = []
        for key in keys where doomed[position].insert(key).inserted {
            fresh.append(key)
        }
        order[position].append(contentsOf: fresh)
        return fresh
    }

    /// The records a self-referring cascade reaches from `keys`, at any depth, in ``lookupBatch``-key lookups of the
    /// backend's (one statement each on SQL); `false` when the backend has none (then the walk goes level by level).
    private func closure(of referrer: ModelGraph.Referrer, from keys: [Value], into found: inout [Value]) throws
        -> Bool
    {
        var answered = true
        try Self.inBatches(keys) { batch in
            guard answered,
                let reached = try referringClosure(graph.types[referrer.source], batch, referrer.foreignKey)
            else {
                answered = false
                return
            }
            found.append(contentsOf: reached)
        }
        return answered
    }

    private func referringClosure<T: Entity>(_ type: T.Type, _ keys: [Value], _ foreignKey: Int) throws -> [Value]? {
        try access.referringClosure(type, to: keys, foreignKey: foreignKey)
    }

    /// Calls `body` with each record whose foreign key of `referrer` names one of `keys`.
    private func forEachReferring(
        _ referrer: ModelGraph.Referrer, to keys: [Value], _ body: ([Value]) throws -> Void
    ) throws {
        try forEachBatch(of: keys, attribute: attribute(of: referrer)) { condition in
            try visit(graph.types[referrer.source], condition, body)
        }
    }

    /// The name of a referrer's foreign key.
    private func attribute(of referrer: ModelGraph.Referrer) -> String {
        graph.layouts[referrer.source].names[referrer.foreignKey]
    }

    /// Calls `body` with conditions matching `attribute` to `keys`, ``lookupBatch`` keys at a time.
    private func forEachBatch(of keys: [Value], attribute: String, _ body: (Condition) throws -> Void) throws {
        try Self.inBatches(keys) { batch in
            try body(batch.count == 1 ? .comparison(attribute, .equal, batch[0]) : .oneOf(attribute, batch))
        }
    }

    /// Calls `body` with `keys` in order, ``lookupBatch`` at a time: what one statement binds.
    private static func inBatches(_ keys: [Value], _ body: ([Value]) throws -> Void) throws {
        var start = keys.startIndex
        while start < keys.endIndex {
            let end = min(start + lookupBatch, keys.endIndex)
            try body(Array(keys[start..<end]))
            start = end
        }
    }

    private func visit<T: Entity>(_ type: T.Type, _ condition: Condition, _ body: ([Value]) throws -> Void) throws {
        try access.forEachRecordValues(type, where: condition, body)
    }

    private func replace<T: Entity>(_ type: T.Type, _ values: [Value]) throws {
        try access.replaceRecord(type, values: values)
    }

    private func deleteMatching<T: Entity>(_ type: T.Type, _ condition: Condition) throws -> Int {
        try access.deleteRecords(type, where: condition)
    }

    private func delete<T: Entity>(_ type: T.Type, _ keys: [Value]) throws -> Int {
        try access.deleteRecords(type, keys: keys)
    }
}
