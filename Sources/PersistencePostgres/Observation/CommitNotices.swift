import Foundation
import PersistenceCore
import PersistenceSQL
import PostgresNIO

/// How a store tells every server that has it open about commits, through PostgreSQL's `LISTEN`/`NOTIFY`: each table
/// of the store has a statement trigger that queues a notification on the store's channel naming the table and the
/// writer's origin. The server delivers a transaction's notifications only if it commits, one per table however many
/// statements touched it (it drops duplicates within a transaction), and none for a write that rolls back.
///
/// A trigger rather than a statement of the writer's: it costs the writer no round trip, and it also sees writes
/// made without this library — `psql`, another tool, a migration of another server.
///
/// **Only while someone listens.** A transaction that notifies takes a server-wide lock through its commit, so
/// concurrent writers would commit one at a time. The trigger therefore notifies only while a listener's lease is
/// current: a sequence of the store's (`persistence_listening`, not transactional: every transaction sees its latest
/// value) holds the time until which someone listens, and each listener renews it (see ``CommitListener``). Each run
/// of the trigger also takes a shared advisory lock of the store's until its transaction ends, so that a listener
/// that has just set the lease can find every transaction that ran the trigger before — and may not have notified —
/// and wait for them to end before it trusts notices alone.
enum CommitNotices {
    /// The session setting each of a database's connections sets at login to the database's own id; the trigger puts
    /// it in the notification, so a database's listener can tell its own commits (already published, with their
    /// keys) from other servers'.
    static let originSetting = "persistence.origin"
    /// The trigger function's and each trigger's name.
    static let triggerName = "persistence_notify"

    /// The store's channel: a stable hash of its schema name, so that any schema name makes a valid channel (at most
    /// 63 bytes, nothing to quote) and stores in other schemas of the database aren't woken.
    static func channel(schema: String) -> String {
        "persistence_" + String(UInt64(bitPattern: PostgresSchemaStore.lockKey(schema: schema)), radix: 16)
    }

    /// A notification's payload: the writer's origin (empty when the writer set none), a slash, the table's name.
    static func parse(_ payload: String) -> (origin: Substring, table: Substring)? {
        guard let slash = payload.firstIndex(of: "/") else { return nil }
        return (payload[..<slash], payload[payload.index(after: slash)...])
    }

    /// The sequence that holds until when (Unix seconds, the server's clock) someone listens.
    static let leaseSequence = "persistence_listening"
    /// The function a listener calls to renew the lease: with the owner's rights, so a role that may only read the
    /// store may observe it.
    static let leaseFunction = "persistence_renew_lease"
    /// How long a listener's lease lasts; it renews it four times as often.
    static let leaseSeconds = 60

    /// The store's advisory lock that the trigger takes shared: two 31-bit keys (the two-key form, apart from the
    /// migration lock's one-key form), from the schema name.
    static func triggerLockKeys(schema: String) -> (Int32, Int32) {
        let key = UInt64(bitPattern: PostgresSchemaStore.lockKey(schema: schema))
        return (Int32(truncatingIfNeeded: key >> 33), Int32(truncatingIfNeeded: key & 0x7fff_ffff))
    }

    /// The lease sequence's name as a string literal's content.
    private static func leaseLiteral(schema: String) -> String {
        PostgresSchemaStore.qualified(schema, leaseSequence).replacingOccurrences(of: "'", with: "''")
    }

    /// The trigger function's body for the store in `schema`.
    static func functionBody(schema: String) -> String {
        let (first, second) = triggerLockKeys(schema: schema)
        let lease = leaseLiteral(schema: schema)
        // `missing_ok`: a writer that set no origin (a tool, psql) notifies with an empty one.
        return """

            BEGIN
                PERFORM pg_catalog.pg_advisory_xact_lock_shared(\(first), \(second));
                IF coalesce(pg_catalog.pg_sequence_last_value('\(lease)'::pg_catalog.regclass), 0)
                    > extract(epoch FROM pg_catalog.clock_timestamp()) THEN
                    PERFORM pg_catalog.pg_notify(TG_ARGV[0],
                        coalesce(pg_catalog.current_setting('\(originSetting)', true), '') || '/' || TG_TABLE_NAME);
                END IF;
                RETURN NULL;
            END

            """
    }

    /// The lease function's body: sets the lease to the server's time plus ``leaseSeconds``; returns whether it had
    /// run out (or was never set).
    static func leaseFunctionBody(schema: String) -> String {
        let lease = leaseLiteral(schema: schema)
        return """

            DECLARE
                until bigint := coalesce(pg_catalog.pg_sequence_last_value('\(lease)'::pg_catalog.regclass), 0);
            BEGIN
                PERFORM pg_catalog.setval('\(lease)'::pg_catalog.regclass,
                    (extract(epoch FROM pg_catalog.clock_timestamp()) + \(leaseSeconds))::bigint);
                RETURN until < extract(epoch FROM pg_catalog.clock_timestamp());
            END

            """
    }

    /// Sets the store's lease to the server's time plus ``leaseSeconds``; returns whether it had run out (or never
    /// been set) — writers didn't notify until now.
    static func renewLease(_ connection: ServerConnection, schema: String) throws -> Bool {
        let row = try connection.run(
            "SELECT \(PostgresSchemaStore.qualified(schema, leaseFunction))()", textAsBytes: false
        ).rows.first
        return try row?.decode(Bool.self) ?? true
    }

    /// The transactions (their virtual ids) that ran the store's trigger and haven't ended: they hold its advisory
    /// lock shared until they do.
    static func runningWriters(_ connection: ServerConnection, schema: String) throws -> Set<String> {
        let (first, second) = triggerLockKeys(schema: schema)
        return Set(
            try connection.run(
                "SELECT virtualtransaction FROM pg_catalog.pg_locks WHERE locktype = 'advisory' AND granted "
                    + "AND database = (SELECT oid FROM pg_catalog.pg_database WHERE datname = current_database()) "
                    + "AND classid::int8 = $1 AND objid::int8 = $2 AND objsubid = 2",
                [.integer(Int64(first)), .integer(Int64(second))], textAsBytes: false
            ).rows.map { try $0.decode(String.self) })
    }

    /// Makes sure every table in `tables` (unqualified names in `schema`) notifies, in the transaction under way:
    /// creates the lease sequence, the function and the triggers that are missing, and replaces a function of an
    /// older version — a store made before notifications existed gains them when it opens, and a table a migration
    /// rebuilt gets its trigger back. A store that is up to date costs one catalog query in all.
    static func ensure(_ connection: ServerConnection, schema: String, tables: [String]) throws {
        // Rows: a table that has the trigger (its name, no source), or one of the two functions (name and source).
        let found = try connection.run(
            "SELECT c.relname, NULL FROM pg_catalog.pg_trigger t JOIN pg_catalog.pg_class c ON c.oid = t.tgrelid "
                + "JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND t.tgname = $2 "
                + "UNION ALL SELECT p.proname, p.prosrc FROM pg_catalog.pg_proc p JOIN pg_catalog.pg_namespace n "
                + "ON n.oid = p.pronamespace WHERE n.nspname = $1 AND p.proname IN ($2, $3)",
            [.text(schema), .text(triggerName), .text(leaseFunction)], textAsBytes: false
        ).rows.map { try $0.decode((String, String?).self) }
        let present = Set(found.filter { $0.1 == nil }.map(\.0))
        let body = functionBody(schema: schema)
        let leaseBody = leaseFunctionBody(schema: schema)
        let missing = tables.filter { !present.contains($0) }
        let current =
            found.contains { $0 == (triggerName, body) } && found.contains { $0 == (leaseFunction, leaseBody) }
        guard !missing.isEmpty || !current else { return }
        let function = PostgresSchemaStore.qualified(schema, triggerName)
        if !current {
            try connection.execute(
                "CREATE SEQUENCE IF NOT EXISTS \(PostgresSchemaStore.qualified(schema, leaseSequence))")
            // The owner's rights: a writer whose role may write the tables but not read the sequence still writes,
            // and a listener whose role may only read them still renews the lease.
            try connection.execute(
                "CREATE OR REPLACE FUNCTION \(function)() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER "
                    + "SET search_path = pg_catalog, pg_temp AS $persistence$\(body)$persistence$")
            try connection.execute(
                "CREATE OR REPLACE FUNCTION \(PostgresSchemaStore.qualified(schema, leaseFunction))() "
                    + "RETURNS boolean LANGUAGE plpgsql SECURITY DEFINER "
                    + "SET search_path = pg_catalog, pg_temp AS $persistence$\(leaseBody)$persistence$")
        }
        let channel = channel(schema: schema)
        for table in missing {
            try connection.execute(
                "CREATE TRIGGER \(quote(triggerName)) AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE "
                    + "ON \(PostgresSchemaStore.qualified(schema, table)) FOR EACH STATEMENT "
                    + "EXECUTE FUNCTION \(function)('\(channel)')")
        }
    }

    /// Drops the trigger function (with its tables' triggers, which go with the tables anyway), the lease function and
    /// sequence, when deleting a store.
    static func drop(_ connection: ServerConnection, schema: String) throws {
        try connection.execute(
            "DROP FUNCTION IF EXISTS \(PostgresSchemaStore.qualified(schema, triggerName))() CASCADE")
        try connection.execute("DROP FUNCTION IF EXISTS \(PostgresSchemaStore.qualified(schema, leaseFunction))()")
        try connection.execute("DROP SEQUENCE IF EXISTS \(PostgresSchemaStore.qualified(schema, leaseSequence))")
    }
}
