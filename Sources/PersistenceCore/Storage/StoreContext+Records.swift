/// Dynamic records through the context: what sync (and any code that holds records without their Swift type)
/// reads and writes, with the checks a typed write makes, and no round trip through the entity.
extension StoreContext {
    package func recordValues<E: Entity>(_ type: E.Type, key: Value) throws -> [Value]? {
        try use(writing: false)
        let position = try position(of: E.self)
        let layout = graph.layouts[position]
        let reader = coders.reader(for: layout)
        switch try storage.read(key: key, entity: position, into: reader) {
        case .absent:
            return nil
        case .row(let row):
            defer { storage.endRead() }
            return layout.names.indices.map { row.value(at: $0) }
        case .filled:
            // The reader's array is taken: the storage fills a new one next time.
            return reader.refill { values in
                defer { values = [] }
                return values
            }
        }
    }

    package func storeRecord<E: Entity>(_ type: E.Type, values: [Value], exists: Bool) throws {
        try use(writing: true)
        let position = try position(of: E.self)
        let layout = graph.layouts[position]
        let values = try layout.checkedValues(values)
        try checkReferences(values, of: E.self)
        let key = values[layout.primaryKeyIndex]
        if exists {
            guard try storage.update(values, entity: position) else {
                throw PersistenceError(.notFound, "no \(layout.entity.name) has that primary key")
            }
            state.recorder?.record(.update, layout, key: key)
        } else {
            try storage.insert(values, entity: position)
            state.recorder?.record(.insert, layout, key: key)
        }
    }

    package func storeRecords<E: Entity>(_ type: E.Type, rows: [[Value]], exists: [Bool]) throws {
        try use(writing: true)
        guard !rows.isEmpty else { return }
        guard exists.count == rows.count else {
            throw PersistenceError(.invalidArgument, "\(rows.count) records were given with \(exists.count) flags")
        }
        let position = try position(of: E.self)
        let layout = graph.layouts[position]
        let checked = try rows.map { try layout.checkedValues($0) }
        var keys = Set<Value>(minimumCapacity: checked.count)
        for values in checked where !keys.insert(values[layout.primaryKeyIndex]).inserted {
            throw PersistenceError(
                .invalidArgument, "two '\(layout.entity.name)' records of one write have the same primary key")
        }
        try checkReferences(ofRows: checked, of: E.self)
        try storage.savepoint { try storage.put(checked, exists: exists, entity: position) }
        if let recorder = state.recorder {
            for (values, existed) in zip(checked, exists) {
                recorder.record(existed ? .update : .insert, layout, key: values[layout.primaryKeyIndex])
            }
        }
    }
}

extension RecordLayout {
    /// `values` as this layout's entity stores them, each checked as decoding the entity would check it (a UUID of
    /// 16 bytes, JSON that parses, a `Bool` of 0 or 1…), so a record written from dynamic values reads back as an
    /// entity.
    /// - Throws: ``PersistenceError/Code/invalidArgument`` for a count of values other than the attributes',
    ///   ``PersistenceError/Code/invalidValue`` naming the attribute whose value doesn't fit.
    package func checkedValues(_ values: [Value]) throws -> [Value] {
        guard values.count == names.count else {
            throw PersistenceError(
                .invalidArgument,
                "entity '\(entity.name)' has \(names.count) attributes, \(values.count) values were given")
        }
        var stored = values
        try conform(&stored)
        for (position, attribute) in entity.attributes.enumerated() {
            if let problem = attribute.verificationProblem(for: stored[position], in: entity.name) {
                throw PersistenceError(.invalidValue, problem.message)
            }
        }
        return stored
    }
}

extension RecordLayout {
    /// A record's values as this layout's entity stores them (a new store the tool fills, a synced record written):
    /// the record must have this layout's attributes, and each value must fit its attribute (an integer for a real
    /// attribute becomes the same real, as entities store it).
    /// - Throws: ``PersistenceError`` — `invalidArgument` for a record of other attributes, `invalidValue` naming
    ///   the attribute whose value doesn't fit.
    package func storedValues(of record: Record) throws -> [Value] {
        guard record.layout === self || record.layout.names == names else {
            throw PersistenceError(.invalidArgument, "a '\(entity.name)' record with other attributes than the store's")
        }
        var values = record.values
        try conform(&values)
        return values
    }

    /// Makes each of `values` (one per attribute) the value its attribute stores.
    /// - Throws: ``PersistenceError/Code/invalidValue`` naming the attribute whose value doesn't fit.
    private func conform(_ values: inout [Value]) throws {
        for (position, attribute) in entity.attributes.enumerated() {
            guard let value = attribute.conforming(values[position]) else {
                throw PersistenceError(
                    .invalidValue,
                    "'\(entity.name).\(attribute.name)' can't hold a \(values[position].storageClassName) value")
            }
            values[position] = value
        }
        try checkVectors(values)
    }
}
