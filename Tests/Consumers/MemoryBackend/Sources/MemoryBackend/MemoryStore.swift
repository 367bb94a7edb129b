import Foundation
@_spi(PersistenceBackend) import PersistenceCore
@_spi(PersistenceBackend) import PersistenceEngine
import Synchronization

/// One committed version of a store: its tables and aliases. Immutable once published, so a read keeps the
/// version it began with for as long as it runs, whatever commits meanwhile.
struct MemorySnapshot: Sendable {
    /// Each entity's table, at the slot the store gave its name (``MemoryStore/attach(_:)``).
    var tables: [MemoryTable] = []
    /// What each alias names.
    var aliases: [String: AliasTarget] = [:]
}

/// A store in this process's memory, shared by every ``MemoryDatabase`` opened on its name and directory: its
/// committed version, the lock its writes take turns on, and where its commits are published.
final class MemoryStore: Sendable {
    /// The store's name, for messages.
    let name: String
    /// The latest committed version: a transaction copies it when it begins; a write publishes its own when it
    /// commits.
    private let committed = Mutex(MemorySnapshot())
    /// The slot of each entity's table in a snapshot, by entity name; slots are only ever added.
    private let slots = Mutex<[String: Int]>([:])
    /// One write at a time, for every database on the store; a write begun inside another on the same thread throws
    /// `nestedTransaction` rather than wait for itself.
    let writer = WriterLock()
    /// Where commits are published: shared by the store's databases, so each hears the others' commits at once.
    let observationHub = ObservationHub()

    init(name: String) { self.name = name }

    /// The latest committed version.
    var snapshot: MemorySnapshot { committed.withLock { $0 } }

    /// Publishes a write's version as the committed one; only under ``writer``.
    func publish(_ snapshot: MemorySnapshot) { committed.withLock { $0 = snapshot } }

    /// The slots of the tables of `layouts`' entities, adding empty tables for entities the store doesn't have.
    /// - Throws: `migrationRequired` when the store holds an entity with other attributes (this backend doesn't
    ///   migrate), `uniqueViolation` when the records break a unique index the model adds, `nestedTransaction` inside
    ///   a write of the store on this thread.
    func attach(_ layouts: [RecordLayout]) throws -> [Int] {
        try writer.withLock {
            var snapshot = self.snapshot
            var slots = self.slots.withLock { $0 }
            var result: [Int] = []
            for layout in layouts {
                let name = layout.entity.name
                guard let slot = slots[name] else {
                    slots[name] = snapshot.tables.count
                    result.append(snapshot.tables.count)
                    snapshot.tables.append(MemoryTable(layout))
                    continue
                }
                guard snapshot.tables[slot].fits(layout) else {
                    throw PersistenceError(
                        .migrationRequired,
                        "the store '\(self.name)' holds '\(name)' records with other attributes; the in-memory "
                            + "backend doesn't migrate")
                }
                snapshot.tables[slot] = try snapshot.tables[slot].indexed(as: layout)
                result.append(slot)
            }
            self.slots.withLock { [slots] in $0 = slots }
            publish(snapshot)
            return result
        }
    }
}

/// The stores of this process, by directory and name, with how many open databases hold each.
///
/// A store lives until it is deleted — or, when its directory is given, until that directory is gone and no database
/// holds it: a temporary directory's stores go with it, as a file backend's files do.
enum MemoryStores {
    /// Where a store is: its directory's path (empty for none) and its name.
    struct Key: Hashable {
        let directory: String
        let name: String
    }

    private struct Entry {
        let store: MemoryStore
        var users: Int
    }

    private static let entries = Mutex<[Key: Entry]>([:])

    /// The key of the store named `name` in `directory`.
    /// - Throws: `invalidName` for a name a file backend would refuse, `directoryNotFound` for a missing directory.
    static func key(name: String, directory: URL?) throws -> Key {
        try StoreLocation.validate(name: name)
        return Key(directory: try path(of: directory), name: name)
    }

    /// The path that stands for `directory` in keys: symbolic links resolved, so one directory is one namespace.
    /// - Throws: `directoryNotFound` when the directory doesn't exist.
    static func path(of directory: URL?) throws -> String {
        guard let directory else { return "" }
        let resolved = directory.standardizedFileURL.resolvingSymlinksInPath()
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: resolved.path, isDirectory: &isDirectory), isDirectory.boolValue
        else {
            throw PersistenceError(.directoryNotFound, "the directory \(resolved.path) does not exist")
        }
        return resolved.path
    }

    /// The store at `key`, created empty when there is none, held by one more database until ``release(_:)``.
    static func open(_ key: Key) -> MemoryStore {
        entries.withLock { entries in
            prune(&entries)
            if var entry = entries[key] {
                entry.users += 1
                entries[key] = entry
                return entry.store
            }
            let store = MemoryStore(name: key.name)
            entries[key] = Entry(store: store, users: 1)
            return store
        }
    }

    /// One database fewer holds the store at `key`.
    static func release(_ key: Key) {
        entries.withLock { entries in
            guard var entry = entries[key] else { return }
            entry.users -= 1
            entries[key] = entry
        }
    }

    /// The names of the stores in `directory`, sorted.
    static func names(in directory: URL?) throws -> [String] {
        let path = try path(of: directory)
        return entries.withLock { entries in
            prune(&entries)
            return entries.keys.filter { $0.directory == path }.map(\.name).sorted()
        }
    }

    /// Forgets the store named `name` in `directory`, with its data; whether there was one.
    /// - Throws: `storeInUse` while a database holds it, with nothing deleted.
    static func delete(named name: String, in directory: URL?) throws -> Bool {
        let key = try key(name: name, directory: directory)
        return try entries.withLock { entries in
            guard let entry = entries[key] else { return false }
            guard entry.users == 0 else {
                throw PersistenceError(.storeInUse, "the store '\(name)' is open in this process: close it first")
            }
            entries[key] = nil
            return true
        }
    }

    /// Forgets the stores no database holds whose directory is gone: nothing can name them again.
    private static func prune(_ entries: inout [Key: Entry]) {
        for (key, entry) in entries
        where entry.users == 0 && !key.directory.isEmpty && !FileManager.default.fileExists(atPath: key.directory) {
            entries[key] = nil
        }
    }
}
