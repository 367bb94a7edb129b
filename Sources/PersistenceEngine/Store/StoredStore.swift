package import Foundation
@_spi(PersistenceBackend) package import PersistenceCore

/// A store opened through the schema it holds, without the app's entity types: what the `persistence` tool
/// inspects, exports, hashes, verifies and copies.
///
/// Opened read-only: nothing in the store changes, not even its metadata, so a file someone sent can be looked at
/// before an app opens it. Records come as dynamic ``Record``s in the stored layout, read through the backend's
/// ``RecordStorage`` — the storage an app's context reads through — over the store's one snapshot.
package protocol StoredStore: AnyObject {
    /// The backend's name: `sqlite`, `lmdb`, `postgres`.
    var backend: String { get }
    /// What the backend says about its on-disk format and security, as label and value (never a key or
    /// passphrase): format version, cipher, key derivation, file and map sizes.
    var details: [(label: String, value: String)] { get throws }
    /// The schema version the store holds.
    var schemaVersion: Int { get }
    /// The stored layout of every entity, sorted by entity name.
    var layouts: [RecordLayout] { get }
    /// The storage that reads the records of the entity at `position` in ``layouts``, and the entity's position
    /// among the storage's; `nil` when the store has no records of it: an LMDB records database lost to damage reads
    /// as empty, as an app's opening would see it, and ``verify()`` reports it.
    /// - Throws: ``PersistenceError/Code/closed`` after ``close()``.
    func storage(for position: Int) throws -> (storage: any RecordStorage, entity: Int)?
    /// Checks every record, index entry and the metadata against the stored schema.
    func verify() throws -> VerificationReport
    /// Ends the store's use; later calls throw ``PersistenceError/Code/closed``.
    func close() throws
}

/// A new store being filled with records, all or nothing: nothing exists at its place until ``commit()``, and
/// ``discard()`` (or an error) leaves nothing behind.
package protocol StoredStoreWriter: AnyObject {
    /// Adds one record of an entity of the schema the store was created with.
    /// - Throws: ``PersistenceError`` — `duplicateKey`, `uniqueViolation`, `invalidValue` for a value the
    ///   attribute can't hold, `storageFull`.
    func insert(_ record: Record) throws
    /// Makes every inserted record durable and the store visible at its place.
    func commit() throws
    /// Drops everything inserted; the place is left as it was.
    func discard()
}

/// The records of a stored store, through its storage: written once for every backend.
extension StoredStore {
    /// The number of records of an entity.
    package func count(_ layout: RecordLayout) throws -> Int {
        guard let (storage, entity) = try storage(for: position(of: layout)) else { return 0 }
        return try storage.count(nil, entity: entity)
    }

    /// Every record of an entity, in primary-key order (``Value/compare(_:_:)``), one at a time: memory doesn't grow
    /// with the store. All entities' records are read from one snapshot.
    package func forEachRecord(_ layout: RecordLayout, _ body: (Record) throws -> Void) throws {
        let position = try position(of: layout)
        guard let (storage, entity) = try storage(for: position) else { return }
        let layout = layouts[position]
        try storage.scanValues(Query().resolve(in: layout), entity: entity, attributes: nil) { values in
            try body(Record(layout: layout, values: values))
        }
    }

    /// Whether an entity has a record with primary key `key`; `false` for a value no key can be (`nil`, another
    /// type), as damage may leave in a foreign key.
    package func contains(_ layout: RecordLayout, key: Value) throws -> Bool {
        guard let (storage, entity) = try storage(for: position(of: layout)), key != .null else { return false }
        do {
            return try storage.contains(key: key, entity: entity)
        } catch let error as PersistenceError where Self.refusesKey.contains(error.code) {
            return false
        }
    }

    /// What a storage throws for a value that can't be a primary key of the entity (a real, one too long, another
    /// type than the key's), which therefore names no record.
    private static var refusesKey: Set<PersistenceError.Code> {
        [.keyTooLarge, .invalidSchema, .typeMismatch, .invalidArgument, .invalidValue]
    }

    /// The position of `layout`'s entity in ``layouts``.
    /// - Throws: ``PersistenceError/Code/unknownEntity`` for an entity the stored schema doesn't have.
    private func position(of layout: RecordLayout) throws -> Int {
        if let position = layouts.firstIndex(where: { $0 === layout }) { return position }
        let name = layout.entity.name
        guard let position = layouts.firstIndex(where: { $0.entity.name == name }) else {
            throw PersistenceError(.unknownEntity, "the store has no entity '\(name)'")
        }
        return position
    }
}

extension StoredStore {
    /// The number of records of `layouts`' entities together (every entity's when `nil`).
    package func recordCount(of layouts: [RecordLayout]? = nil) throws -> Int {
        try (layouts ?? self.layouts).reduce(0) { try $0 + count($1) }
    }

    /// The stored layout of the entity named `name`.
    /// - Throws: ``PersistenceError/Code/unknownEntity`` naming the entities the store has.
    package func layout(named name: String) throws -> RecordLayout {
        guard let layout = layouts.first(where: { $0.entity.name == name }) else {
            let names = layouts.map(\.entity.name).joined(separator: ", ")
            throw PersistenceError(.unknownEntity, "the store has no entity '\(name)' (it has: \(names))")
        }
        return layout
    }
}

extension StoredStore {
    /// What every backend's `verify()` of a stored store checks once the records themselves are checked: the
    /// references (``verifyReferences(into:)``) and the full-text indexes, as an app's `verify()` does.
    package func verifyReferencesAndFullTextIndexes(into report: inout VerificationReport) throws {
        try verifyReferences(into: &report)
        for (position, layout) in layouts.enumerated() where !layout.fullTextIndexes.isEmpty {
            guard let (storage, entity) = try storage(for: position) else { continue }
            try storage.verifyFullTextIndexes(of: layout, entity: entity, into: &report)
        }
    }
}

extension StoredStore {
    /// Adds a ``VerificationProblem/Kind/danglingReference`` problem for each non-`nil` foreign key of a to-one
    /// relationship that names no stored record of its target (the stored schema's relationships; one lookup per
    /// reference). An entity whose records the report already finds damaged is skipped.
    package func verifyReferences(into report: inout VerificationReport) throws {
        let byName = Dictionary(layouts.map { ($0.entity.name, $0) }, uniquingKeysWith: { first, _ in first })
        for layout in layouts {
            let references: [(name: String, foreignKey: Int, target: RecordLayout)] = layout.entity.relationships
                .compactMap { relationship in
                    guard relationship.kind == .toOne, let key = relationship.foreignKey,
                        let position = layout.position(of: key), let target = byName[relationship.target]
                    else { return nil }
                    return (relationship.name, position, target)
                }
            guard !references.isEmpty, !report.problems.contains(where: { $0.entity == layout.entity.name })
            else { continue }
            let keyType = layout.types[layout.primaryKeyIndex]
            try forEachRecord(layout) { record in
                for reference in references {
                    let key = record.values[reference.foreignKey]
                    if key == .null { continue }
                    if reference.target === layout, key == record.primaryKey { continue }
                    guard try !contains(reference.target, key: key) else { continue }
                    report.append(
                        VerificationProblem(
                            .danglingReference, entity: layout.entity.name,
                            primaryKey: record.primaryKey.primaryKeyText(as: keyType),
                            attribute: layout.names[reference.foreignKey],
                            message:
                                "relationship '\(reference.name)' names a '\(reference.target.entity.name)' record that doesn't exist"
                        ))
                }
            }
        }
    }
}

/// Sizes as the store tool shows them.
package enum StoredStoreSize {
    /// The size of a file in bytes, 0 when it can't be read.
    package static func fileSize(_ file: URL) -> Int64 {
        ((try? FileManager.default.attributesOfItem(atPath: file.path))?[.size] as? NSNumber)?.int64Value ?? 0
    }

    /// `1,234,567 bytes (1.2 MiB)`.
    package static func bytes(_ count: Int64) -> String {
        let units = ["KiB", "MiB", "GiB", "TiB"]
        var scaled = Double(count)
        var unit = -1
        while scaled >= 1024, unit < units.count - 1 {
            scaled /= 1024
            unit += 1
        }
        let exact = "\(count) bytes"
        return unit < 0 ? exact : exact + " (" + String(format: "%.1f", scaled) + " \(units[unit]))"
    }
}

extension StoreGate {
    /// The stored schema's entities from its JSON, sorted by name, as layouts.
    /// - Throws: ``PersistenceError/Code/corrupt`` when the JSON isn't a schema.
    package static func storedLayouts(_ json: Data) throws -> [RecordLayout] {
        let descriptions: [EntityDescription]
        do {
            descriptions = try JSONDecoder().decode([EntityDescription].self, from: json)
        } catch {
            throw PersistenceError(.corrupt, "the stored schema is not readable", underlyingError: error)
        }
        return descriptions.sorted { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }.map { RecordLayout($0) }
    }
}

/// The file a ``StoredStoreWriter`` builds a new store in, beside its place, and the move into place at commit.
package enum NewStoreFile {
    /// Checks the place of a new store: its file ends in `.<fileExtension>`, nothing is there yet, its name is a
    /// valid store name and its directory exists and can be written.
    /// - Throws: ``PersistenceError`` — `invalidName`, `invalidArgument` (something exists there),
    ///   `directoryNotFound`, `permissionDenied`.
    package static func checkPlace(_ file: URL, fileExtension: String, backend: String) throws {
        guard file.pathExtension == fileExtension else {
            throw PersistenceError(
                .invalidName, "\(backend) store's file ends in .\(fileExtension): \(file.lastPathComponent)")
        }
        guard !FileManager.default.fileExists(atPath: file.path) else {
            throw PersistenceError(.invalidArgument, "\(file.path) exists: a new store never replaces a file")
        }
        let name = file.deletingPathExtension().lastPathComponent
        try StoreLocation.validate(name: name)
        _ = try StoreLocation(name: name, directory: file.deletingLastPathComponent())
    }

    /// `.<name>.<UUID>.<extension>-partial` beside `file`: hidden, never a store name, unique per writer.
    package static func temporary(for file: URL) -> URL {
        let name = file.deletingPathExtension().lastPathComponent
        return file.deletingLastPathComponent().appendingPathComponent(
            ".\(name).\(UUID().uuidString).\(file.pathExtension)-partial")
    }

    /// Moves the finished `temporary` file to `file` — a hard link, which fails when something appeared there
    /// meanwhile, so a store is never replaced — and removes `temporary` whatever happens.
    /// - Throws: ``PersistenceError/Code/ioFailure`` when the link fails.
    package static func moveIntoPlace(_ temporary: URL, to file: URL) throws {
        defer { try? FileManager.default.removeItem(at: temporary) }
        do {
            try FileManager.default.linkItem(at: temporary, to: file)
        } catch {
            throw PersistenceError(
                .ioFailure, "the new store could not be moved to \(file.path)", underlyingError: error)
        }
    }
}
