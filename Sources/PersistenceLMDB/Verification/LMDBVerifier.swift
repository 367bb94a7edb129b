internal import CLMDB
import Foundation
@_spi(PersistenceBackend) import PersistenceCore

/// Checks one LMDB store in one read transaction: metadata, named databases, records, then index entries.
///
/// Everything streams: records and index entries are read in place through cursors and checked one at a time,
/// and each check of a record against its index entries (or of an entry against its record, when the index holds
/// more entries than its records found) is a point lookup, so memory stays flat whatever the store's size. Lookups go through the same helpers as reads and writes
/// (`ValueSealer.open`, `ValueSealer.indexKey(of:in:)`, `KeyCodec`), so verification checks what the backend
/// really reads and writes.
struct LMDBVerifier {
    let transaction: Transaction
    let stores: [EntityStore]
    let sealer: ValueSealer
    let metaDBI: MDB_dbi
    private var report = VerificationReport()
    /// The highest nonce counter a sealed record uses: the stored counter must be past it.
    private var highestNonce: UInt64?
    /// Per index database, how many records found their own entry in it (the entry the record's values make, holding
    /// the record's key): distinct entries, each one a record needs.
    private var matchedEntries: [MDB_dbi: Int] = [:]

    /// The schema the stored one must equal; `nil` for the stores' own.
    let schema: [EntityDescription]?

    /// A verifier of `stores` in `transaction`; the stored schema is checked against `schema`, or the stores' own
    /// entities when `nil` (a read-only opening passes the whole stored schema, some of whose entities may have no
    /// database to check).
    init(
        transaction: Transaction, stores: [EntityStore], sealer: ValueSealer, metaDBI: MDB_dbi,
        schema: [EntityDescription]? = nil
    ) {
        self.transaction = transaction
        self.stores = stores
        self.sealer = sealer
        self.metaDBI = metaDBI
        self.schema = schema
    }

    mutating func run() throws -> VerificationReport {
        try engineChecked(entity: nil) { try $0.verifyDatabaseNames() }
        for store in stores {
            report.entitiesChecked += 1
            try engineChecked(entity: store.layout.entity.name) { try $0.verifyRecords(of: store) }
            for index in store.indexes {
                try engineChecked(entity: store.layout.entity.name) { try $0.verifyEntries(of: index, in: store) }
            }
        }
        try engineChecked(entity: nil) { try $0.verifyMetadata() }
        return report
    }

    mutating func add(_ problem: VerificationProblem) { report.append(problem) }

    /// Runs one walk; a `corrupt` error from LMDB (a damaged page) becomes a problem and the next walk goes on.
    private mutating func engineChecked(entity: String?, _ walk: (inout LMDBVerifier) throws -> Void) throws {
        do {
            try walk(&self)
        } catch let error as PersistenceError where error.code == .corrupt {
            add(VerificationProblem(.engineIntegrity, entity: entity, message: error.description))
        }
    }

    // MARK: - Named databases

    private mutating func verifyDatabaseNames() throws {
        var expected: Set<String> = [StoreMetadata.databaseName]
        for store in stores {
            expected.insert(store.databaseName)
            for index in store.indexes { expected.insert(index.databaseName) }
        }
        // Only our own prefixes: a later version may keep other databases, and an older one must not call that
        // damage.
        for name in try transaction.databaseNames() where !expected.contains(name) {
            guard DatabaseNames.isEntityOrIndex(name) else { continue }
            add(
                VerificationProblem(
                    .schemaMismatch, message: "the store holds a database '\(name)' that the model does not declare"))
        }
    }

    // MARK: - Records

    /// Checks every record of `store` and that each has its entries in the store's indexes.
    private mutating func verifyRecords(of store: EntityStore) throws {
        let layout = store.layout
        let entity = layout.entity.name
        let keyType = layout.types[layout.primaryKeyIndex]
        try transaction.forEach(store.dbi) { key, stored in
            // An async verify() whose task is cancelled stops between records.
            try CancellationFlag.checkCurrent()
            report.recordsChecked += 1
            let keyData = Data(key)
            let keyText = Self.keyText(keyData, keyType)
            func problem(_ kind: VerificationProblem.Kind, _ message: String, attribute: String? = nil) {
                add(
                    VerificationProblem(
                        kind, entity: entity, primaryKey: keyText, attribute: attribute, message: message))
            }
            // The walk reads the leaves in order; a lookup searches from the root. A damaged key in a branch page
            // leaves the walk whole but sends a lookup elsewhere: the record is then missing from every read by key.
            if try transaction.withValue(store.dbi, keyData, { _ in () }) == nil {
                problem(.recordUnreadable, "a lookup by the record's key does not find it: a page above it is damaged")
            }
            if sealer.isEncrypted { noteNonce(of: stored) }
            let values: [Value]
            do {
                values = try sealer.open(stored, entity: store, key: key)
            } catch let error as PersistenceError where error.code == .authenticationFailed {
                problem(.authenticationFailed, "the record fails authentication: it was altered or moved")
                return true
            } catch {
                problem(.recordUnreadable, "the record's bytes do not decode")
                return true
            }
            guard values.count == layout.names.count else {
                problem(.recordUnreadable, "the record has \(values.count) values for \(layout.names.count) attributes")
                return true
            }
            if (try? KeyCodec.encode(values[layout.primaryKeyIndex])) != keyData {
                problem(.keyMismatch, "the record's primary key differs from the key it is stored under")
            }
            for (position, value) in values.enumerated() {
                if let found = layout.verificationProblem(for: value, at: position) {
                    problem(found.kind, found.message, attribute: layout.names[position])
                }
            }
            try verifyEntries(of: values, key: keyData, keyText: keyText, in: store)
            return true
        }
    }

    /// Checks that a record has its entry in each index (none where an indexed value is `nil`).
    private mutating func verifyEntries(of values: [Value], key: Data, keyText: String?, in store: EntityStore)
        throws
    {
        let entity = store.layout.entity.name
        for index in store.indexes {
            guard let indexKey = sealer.indexKey(of: values, in: index) else { continue }
            let name = index.index.name(in: entity)
            if index.index.isUnique {
                // Not sorted duplicates: the key holds one record, and a second record with the same values
                // can't have its own entry.
                switch try transaction.get(index.dbi, indexKey) {
                case nil:
                    add(
                        VerificationProblem(
                            .indexEntryMissing, entity: entity, primaryKey: keyText, index: name,
                            message: "the record has no entry in the unique index"))
                case let owner? where owner != key:
                    let ownerText = Self.keyText(owner, store.layout.types[store.layout.primaryKeyIndex]) ?? "?"
                    add(
                        VerificationProblem(
                            .uniqueViolation, entity: entity, primaryKey: keyText, index: name,
                            message: "the record holds the same values as record \(ownerText) in a unique index"))
                default:
                    matchedEntries[index.dbi, default: 0] += 1
                }
            } else if try transaction.contains(index.dbi, indexKey, key) {
                matchedEntries[index.dbi, default: 0] += 1
            } else {
                add(
                    VerificationProblem(
                        .indexEntryMissing, entity: entity, primaryKey: keyText, index: name,
                        message: "the record has no entry in the index"))
            }
        }
    }

    /// Tracks the highest counter among the nonces of sealed records (their first 8 bytes, big-endian).
    private mutating func noteNonce(of stored: UnsafeRawBufferPointer) {
        guard stored.count >= 12 else { return }
        let counter = stored.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        highestNonce = max(highestNonce ?? 0, counter)
    }

    // MARK: - Index entries

    /// Checks that every entry of `index` points at an existing record whose recomputed index key is the entry's.
    ///
    /// The records' walk found each record's own entry and counted them: those are distinct entries of the index. When
    /// the index holds exactly that many, it holds nothing else — no dangling or mismatched entry — and counting its
    /// entries is the whole check. Otherwise each entry is checked against its record (opened again) to name the
    /// extra ones.
    private mutating func verifyEntries(of index: EntityStore.IndexStore, in store: EntityStore) throws {
        var entries = 0
        try transaction.forEach(index.dbi) { _, _ in
            try CancellationFlag.checkCurrent()
            entries += 1
            return true
        }
        if entries == matchedEntries[index.dbi, default: 0] {
            report.indexEntriesChecked += entries
            return
        }
        let layout = store.layout
        let entity = layout.entity.name
        let name = index.index.name(in: entity)
        let keyType = layout.types[layout.primaryKeyIndex]
        let maximumKeySize = transaction.environment.maximumKeySize
        try transaction.forEach(index.dbi) { indexKey, recordKey in
            try CancellationFlag.checkCurrent()
            report.indexEntriesChecked += 1
            let key = Data(recordKey)
            let keyText = Self.keyText(key, keyType)
            func problem(_ kind: VerificationProblem.Kind, _ message: String) {
                add(VerificationProblem(kind, entity: entity, primaryKey: keyText, index: name, message: message))
            }
            guard (1...maximumKeySize).contains(key.count) else {
                problem(.danglingIndexEntry, "an index entry holds no valid record key")
                return true
            }
            // A record that can't be read was reported with the records; its entries can't be checked.
            let record = try transaction.withValue(store.dbi, key) { stored in
                try? sealer.open(stored, entity: store, key: recordKey)
            }
            guard let record else {
                problem(.danglingIndexEntry, "an index entry points at a record that does not exist")
                return true
            }
            guard let values = record, values.count == layout.names.count else { return true }
            if sealer.indexKey(of: values, in: index)?.elementsEqual(indexKey) != true {
                problem(.indexEntryMismatch, "an index entry points at a record whose indexed values differ")
            }
            return true
        }
    }

    // MARK: - Metadata

    private mutating func verifyMetadata() throws {
        let format = number(.format)
        if let format, format == 0 || format > StoreMetadata.formatVersion {
            metadataProblem(.metadataInvalid, "the format version \(format) is not one this version reads")
        }
        _ = number(.schemaVersion)
        verifySchema()
        // The key record the format names: `keyDerivation` (format 1) or `keyWrap` (formats 2 and 3).
        // With the format number missing (reported above), judge by the record that is there.
        let hasWrapped = try StoreMetadata.read(.keyWrap, metaDBI, transaction) != nil
        let hasDerived = try StoreMetadata.read(.keyDerivation, metaDBI, transaction) != nil
        var keyFormat = format
        if format == StoreMetadata.mappedFormat {
            keyFormat = number(.keyFormat)
            if let value = keyFormat, !(StoreMetadata.derivedKeyFormat...StoreMetadata.suiteFormat).contains(value) {
                metadataProblem(.metadataInvalid, "the key format \(value) is not one this version reads")
            }
        }
        if (try? DatabaseNames.read(metaDBI, transaction)) == nil {
            metadataProblem(.metadataInvalid, "the map of database names is unreadable")
        }
        if try StoreMetadata.read(.migration, metaDBI, transaction) != nil {
            metadataProblem(.metadataInvalid, "a migration was under way and never finished or was discarded")
        }
        let candidates =
            keyFormat.map { [$0] }
            ?? (hasWrapped
                ? [StoreMetadata.suiteFormat, StoreMetadata.wrappedKeyFormat] : [StoreMetadata.derivedKeyFormat])
        var record: StoreKeyRecord?
        if hasWrapped || hasDerived {
            let (meta, transaction) = (metaDBI, transaction)
            record = candidates.lazy.compactMap { try? StoreKeyRecord.read(format: $0, meta, transaction) }.first
            if record == nil {
                metadataProblem(.metadataInvalid, "the key record is damaged, missing or not the one its format names")
            }
        }
        guard let keys = sealer.keys else {
            if record != nil { metadataProblem(.metadataInvalid, "an unencrypted store holds a key record") }
            return
        }
        switch record {
        case .derived(let derived):
            if derived.algorithm != KeyDerivationRecord.scryptAlgorithm || !keys.verifies(keyCheck: derived.keyCheck) {
                metadataProblem(.metadataInvalid, "the key record does not match the keys the store was opened with")
            }
        case .wrapped:
            // Unlocking it needs the passphrase, which the open database no longer holds; opening checked it.
            break
        case nil:
            metadataProblem(.metadataMissing, "the key record is missing")
        }
        if let counter = number(.nonceCounter), let highestNonce, highestNonce >= counter {
            metadataProblem(
                .metadataInvalid,
                "the nonce counter is behind the nonces records use: new writes could reuse a nonce")
        }
    }

    private mutating func verifySchema() {
        guard let json = try? StoreMetadata.read(.schema, metaDBI, transaction) else {
            metadataProblem(.metadataMissing, "the stored schema is missing")
            return
        }
        guard let stored = try? JSONDecoder().decode([EntityDescription].self, from: json) else {
            metadataProblem(.metadataInvalid, "the stored schema is unreadable")
            return
        }
        let current = schema ?? stores.map(\.layout.entity)
        if stored.map(\.normalized).sorted(by: { $0.name < $1.name })
            != current.map(\.normalized).sorted(by: { $0.name < $1.name })
        {
            metadataProblem(.schemaMismatch, EntityDescription.difference(stored: stored, current: current))
        }
    }

    /// A number from the meta database; a missing or malformed one is reported and read as `nil`.
    private mutating func number(_ key: StoreMetadata.Key) -> UInt64? {
        do {
            guard let number = try StoreMetadata.readNumber(key, metaDBI, transaction) else {
                metadataProblem(.metadataMissing, "the metadata has no '\(key.rawValue)'")
                return nil
            }
            return number
        } catch {
            metadataProblem(.metadataInvalid, "the metadata's '\(key.rawValue)' is unreadable")
            return nil
        }
    }

    private mutating func metadataProblem(_ kind: VerificationProblem.Kind, _ message: String) {
        add(VerificationProblem(kind, message: message))
    }

    /// A record key as text for a report, or `nil` when it is not a valid key of the entity.
    static func keyText(_ key: Data, _ type: AttributeType) -> String? {
        guard let value = try? KeyCodec.decode(key, as: type) else { return nil }
        return value.primaryKeyText(as: type)
    }
}
