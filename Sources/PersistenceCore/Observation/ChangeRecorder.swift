import Foundation

/// What one write transaction changed, recorded as it runs and published to observers once it commits.
///
/// A backend's write context owns one and calls it after each change it makes. It always notes which entities
/// and aliases the transaction touched (an array slot per entity, cheap enough for every write); primary keys are
/// kept only while someone observes change sets (`recordsKeys` when the transaction began), so
/// a bulk import with no such observer allocates nothing per record here.
///
/// Not thread-safe: one transaction, one thread (the writer lock's holder).
@_spi(PersistenceBackend) public final class ChangeRecorder {
    /// One entity's changes in this transaction.
    final class Log {
        let entity: String
        /// Changes in order: what happened to which primary key. Empty unless keys are recorded.
        var operations: [(kind: ChangeKind, key: Value)] = []
        /// Some change had no primary key to record (keys weren't recorded, a bulk delete).
        var isUntracked = false

        init(entity: String) { self.entity = entity }
    }

    /// Whether primary keys are recorded.
    package let recordsKeys: Bool
    private var logs: [ObjectIdentifier: Log] = [:]
    private var lastLayout: ObjectIdentifier?
    private var lastLog: Log?
    private(set) var aliases: Set<String> = []
    /// How many of each log's operations derived data (full-text indexes) has taken (``takeChangedKeys()``).
    private var taken: [ObjectIdentifier: Int] = [:]
    /// Whether derived data has been rebuilt since ``touchedEverything`` was set.
    package var rebuiltAfterEverything = false
    /// The transaction may have changed anything (raw SQL that touched tables it can't name).
    package private(set) var touchedEverything = false
    /// How the write was asked to treat its changes (``WriteOptions/appliesRemoteChanges``).
    package let options: WriteOptions
    /// References to records not stored that a write applying remote changes wrote
    /// (``WriteOptions/appliesRemoteChanges``): pages of a pull arrive in the server's change order, so a record may
    /// come before the one it refers to. The sync client checks them once the pull's last page is applied.
    package var danglingReferences: [DanglingReference] = []

    /// Starts a transaction's record; `recordsKeys` as the hub's `recordsKeys` (or the store's hooks) say when it
    /// begins.
    @usableFromInline package init(recordsKeys: Bool, options: WriteOptions = []) {
        self.recordsKeys = recordsKeys
        self.options = options
    }

    /// Whether the write applies changes that came from elsewhere (``WriteOptions/appliesRemoteChanges``).
    package var appliesRemoteChanges: Bool { options.contains(.appliesRemoteChanges) }

    /// Whether the transaction changed anything observers hear of.
    package var isEmpty: Bool {
        logs.isEmpty && aliases.isEmpty && !touchedEverything
    }

    /// Notes that the record with primary key `key` of `layout`'s entity was inserted, updated or deleted.
    @inline(__always)
    package func record(_ kind: ChangeKind, _ layout: RecordLayout, key: @autoclosure () -> Value) {
        let log = self.log(for: layout)
        if recordsKeys {
            log.operations.append((kind, key()))
        } else {
            log.isUntracked = true
        }
    }

    /// Notes that records of `layout`'s entity changed without naming which (a bulk delete that didn't list them).
    package func recordUntracked(_ layout: RecordLayout) { log(for: layout).isUntracked = true }

    /// Notes that anything may have changed.
    package func recordEverything() { touchedEverything = true }

    /// Notes that the alias named `name` was set or removed.
    package func recordAlias(_ name: String) { aliases.insert(name) }

    @inline(__always)
    private func log(for layout: RecordLayout) -> Log {
        let id = ObjectIdentifier(layout)
        if id == lastLayout, let lastLog { return lastLog }
        let log: Log
        if let existing = logs[id] {
            log = existing
        } else {
            log = Log(entity: layout.entity.name)
            logs[id] = log
        }
        lastLayout = id
        lastLog = log
        return log
    }

    /// What has been recorded so far, to go back to when a savepoint rolls back.
    package struct Mark {
        fileprivate let operations: [ObjectIdentifier: (count: Int, isUntracked: Bool)]
        fileprivate let aliases: Set<String>
        fileprivate let touchedEverything: Bool
        fileprivate let rebuiltAfterEverything: Bool
    }

    /// Marks what has been recorded so far (a savepoint begins).
    package func mark() -> Mark {
        Mark(
            operations: logs.mapValues { ($0.operations.count, $0.isUntracked) }, aliases: aliases,
            touchedEverything: touchedEverything, rebuiltAfterEverything: rebuiltAfterEverything)
    }

    /// Forgets what was recorded after `mark` (its savepoint rolled back: those changes never happened).
    package func rollBack(to mark: Mark) {
        for (id, log) in logs {
            guard let kept = mark.operations[id] else {
                logs[id] = nil
                continue
            }
            log.operations.removeSubrange(kept.count...)
            log.isUntracked = kept.isUntracked
            if let count = taken[id], count > kept.count { taken[id] = kept.count }
        }
        taken = taken.filter { logs[$0.key] != nil }
        aliases = mark.aliases
        touchedEverything = mark.touchedEverything
        rebuiltAfterEverything = mark.rebuiltAfterEverything
        lastLayout = nil
        lastLog = nil
    }

    /// Every primary key a change was recorded for, per entity, each once, in the order first changed.
    package func changedKeys() -> [(entity: String, keys: [Value])] {
        logs.values.map { log in
            var seen = Set<Value>()
            return (log.entity, log.operations.compactMap { seen.insert($0.key).inserted ? $0.key : nil })
        }
    }

    /// The primary keys changed since the last call, per entity, each once: what derived data kept in step within
    /// the transaction (full-text indexes) has yet to take in. What a savepoint that rolls back took is given again
    /// (the storage undid what was made of it).
    package func takeChangedKeys() -> [(entity: String, keys: [Value])] {
        var changed: [(entity: String, keys: [Value])] = []
        for (id, log) in logs {
            let start = taken[id] ?? 0
            guard start < log.operations.count else { continue }
            var seen = Set<Value>()
            var keys: [Value] = []
            for operation in log.operations[start...] where seen.insert(operation.key).inserted {
                keys.append(operation.key)
            }
            taken[id] = log.operations.count
            changed.append((log.entity, keys))
        }
        return changed
    }

    /// The net changes, per entity: a record inserted then updated is inserted; inserted then deleted, nothing;
    /// deleted then inserted again, updated.
    package func committedChanges() -> CommittedChanges {
        var entities: [String: ChangeSet] = [:]
        for log in logs.values {
            var set = entities[log.entity] ?? ChangeSet()
            set.merge(log.operations)
            if log.isUntracked { set.isComplete = false }
            entities[log.entity] = set
        }
        return CommittedChanges(entities: entities, aliases: aliases, everything: touchedEverything)
    }
}

/// A reference a pulled record wrote to a record not stored (``ChangeRecorder/danglingReferences``).
package struct DanglingReference: Sendable {
    /// The referring record's entity and primary key, and its foreign-key attribute.
    package let source: String, sourceKey: Value, foreignKey: String
    /// The record it refers to.
    package let target: String, key: Value
}

/// What happened to one record.
package enum ChangeKind: Sendable {
    case insert, update, delete
}
