import Foundation
import PersistenceCore
import PersistencePostgres
import PersistenceSQL

/// The server's record of what changed, kept by a row trigger on each synced table in the store's schema: per record
/// (entity and key), the id of the last transaction that wrote it (its *version*: `pg_current_xact_id()`) and whether
/// that write deleted it (a tombstone). The trigger sees every write — the library's, `psql`'s, another program's.
///
/// Pulls read the log in version order. Versions are transaction ids, taken when a transaction first writes, not
/// when it commits: a pull can't stop at the highest version it saw, because a transaction with a lower one may still
/// commit. It stops at the oldest transaction still running when its snapshot was taken
/// (`pg_snapshot_xmin(pg_current_snapshot())`): every version below has committed or never will; the next pull reads
/// again from there (records read twice are applied twice, to the same state).
enum SyncLog {
    static let table = "persistence_sync_log"
    static let clientsTable = "persistence_sync_clients"
    /// One row per purge of tombstones: its number (1, 2…) and the highest version it removed.
    static let purgedTable = "persistence_sync_purged"
    static let function = "persistence_sync_log_change"
    static let trigger = "persistence_sync_log"

    /// How the trigger turns a key's JSON text into the log's bytes: big-endian 8 bytes for an integer, the stored
    /// bytes for text and blobs (stored as `bytea`).
    static func keyKind(_ layout: RecordLayout) -> String {
        layout.types[layout.primaryKeyIndex].storageClass == .integer ? "i" : "b"
    }

    /// A key's bytes in the log, as the trigger writes them.
    static func bytes(of key: Value) -> Data {
        switch key {
        case .integer(let value): withUnsafeBytes(of: value.bigEndian) { Data($0) }
        case .text(let text): Data(text.utf8)
        case .blob(let data): data
        case .real, .null: Data()
        }
    }

    /// A key from its bytes in the log, for an entity whose keys are of `layout`'s storage class.
    static func key(_ bytes: Data, of layout: RecordLayout) throws -> Value {
        switch layout.types[layout.primaryKeyIndex].storageClass {
        case .integer:
            guard bytes.count == 8 else { throw PersistenceError(.corrupt, "the sync log holds a malformed key") }
            return .integer(Int64(bigEndian: bytes.withUnsafeBytes { $0.loadUnaligned(as: Int64.self) }))
        case .text:
            guard let text = String(data: bytes, encoding: .utf8) else {
                throw PersistenceError(.corrupt, "the sync log holds a malformed key")
            }
            return .text(text)
        default: return .blob(bytes)
        }
    }

    /// The statements that create the log, the clients' table and the trigger function (idempotent).
    static func setup(schema: String) -> [String] {
        let log = quote(schema) + "." + quote(table)
        let key = { (row: String) in
            "CASE TG_ARGV[2] WHEN 'i' THEN pg_catalog.int8send((pg_catalog.to_jsonb(\(row)) ->> TG_ARGV[1])::bigint)"
                + " ELSE pg_catalog.decode(pg_catalog.substr(pg_catalog.to_jsonb(\(row)) ->> TG_ARGV[1], 3), 'hex') END"
        }
        let upsert = { (keyVariable: String, deleted: String) in
            """
                    INSERT INTO \(log) (entity, key, version, deleted, changed_at)
                    VALUES (TG_ARGV[0], \(keyVariable), pg_catalog.pg_current_xact_id()::text::bigint, \(deleted),
                        pg_catalog.now())
                    ON CONFLICT (entity, key) DO UPDATE SET version = excluded.version, deleted = excluded.deleted,
                        changed_at = excluded.changed_at;
            """
        }
        return [
            """
            CREATE TABLE IF NOT EXISTS \(log) (entity text NOT NULL, key bytea NOT NULL, version bigint NOT NULL,
                deleted boolean NOT NULL, changed_at timestamptz NOT NULL, PRIMARY KEY (entity, key))
            """,
            "CREATE INDEX IF NOT EXISTS \(quote(table + "_order")) ON \(log) (version, entity, key)",
            """
            CREATE TABLE IF NOT EXISTS \(quote(schema)).\(quote(clientsTable)) (client_id text PRIMARY KEY,
                last_sequence bigint NOT NULL, seen_at timestamptz NOT NULL)
            """,
            """
            CREATE TABLE IF NOT EXISTS \(quote(schema)).\(quote(purgedTable)) (epoch bigint PRIMARY KEY,
                version bigint NOT NULL)
            """,
            // With the owner's rights: a role that may write the tables but not the log still writes.
            """
            CREATE OR REPLACE FUNCTION \(quote(schema)).\(quote(function))() RETURNS trigger LANGUAGE plpgsql
            SECURITY DEFINER SET search_path = pg_catalog AS $body$
            DECLARE
                old_key bytea;
                new_key bytea;
            BEGIN
                -- An update that changed nothing (a push's hold on a record it refers to): no new version.
                IF TG_OP = 'UPDATE' AND OLD IS NOT DISTINCT FROM NEW THEN RETURN NULL; END IF;
                IF TG_OP <> 'INSERT' THEN old_key := \(key("OLD")); END IF;
                IF TG_OP <> 'DELETE' THEN new_key := \(key("NEW")); END IF;
                IF old_key IS NOT NULL AND old_key IS DISTINCT FROM new_key THEN
            \(upsert("old_key", "true"))
                END IF;
                IF new_key IS NOT NULL THEN
            \(upsert("new_key", "false"))
                END IF;
                RETURN NULL;
            END
            $body$
            """,
        ]
    }

    /// The statements that put the trigger on an entity's table, and log its existing records when it wasn't there.
    static func attach(schema: String, layout: RecordLayout, exists: Bool) -> [String] {
        let entity = layout.entity
        let table = quote(schema) + "." + quote(entity.name)
        let literal = { (text: String) in "'" + text.replacingOccurrences(of: "'", with: "''") + "'" }
        let kind = keyKind(layout)
        var statements = [
            """
            CREATE OR REPLACE TRIGGER \(quote(trigger)) AFTER INSERT OR UPDATE OR DELETE ON \(table)
            FOR EACH ROW EXECUTE FUNCTION \(quote(schema)).\(quote(function))(\(literal(entity.name)),
                \(literal(entity.primaryKey)), '\(kind)')
            """
        ]
        if !exists {
            let column = quote(entity.primaryKey)
            let keyBytes = kind == "i" ? "pg_catalog.int8send(\(column))" : column
            statements.append(
                """
                INSERT INTO \(quote(schema)).\(quote(SyncLog.table)) (entity, key, version, deleted, changed_at)
                SELECT \(literal(entity.name)), \(keyBytes), pg_catalog.pg_current_xact_id()::text::bigint, false,
                    pg_catalog.now() FROM \(table) ON CONFLICT DO NOTHING
                """)
        }
        return statements
    }
}
