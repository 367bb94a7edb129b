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

    /// Makes sure every table in `tables` (unqualified names in `schema`) notifies, in the transaction under way:
    /// creates the function and the triggers that are missing — a store made before notifications existed gains
    /// them when it opens, and a table a migration rebuilt gets its trigger back. Tables that already notify cost one
    /// catalog query in all.
    static func ensure(_ connection: ServerConnection, schema: String, tables: [String]) throws {
        let present = Set(
            try connection.run(
                "SELECT c.relname FROM pg_catalog.pg_trigger t JOIN pg_catalog.pg_class c ON c.oid = t.tgrelid "
                    + "JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND t.tgname = $2",
                [.text(schema), .text(triggerName)], textAsBytes: false
            ).rows.map { try $0.decode(String.self) })
        let missing = tables.filter { !present.contains($0) }
        guard !missing.isEmpty else { return }
        let function = PostgresSchemaStore.qualified(schema, triggerName)
        // `missing_ok`: a writer that set no origin (a tool, psql) notifies with an empty one.
        try connection.execute(
            """
            CREATE OR REPLACE FUNCTION \(function)() RETURNS trigger LANGUAGE plpgsql AS $persistence$
            BEGIN
                PERFORM pg_notify(
                    TG_ARGV[0], coalesce(current_setting('\(originSetting)', true), '') || '/' || TG_TABLE_NAME);
                RETURN NULL;
            END
            $persistence$
            """)
        let channel = channel(schema: schema)
        for table in missing {
            try connection.execute(
                "CREATE TRIGGER \(quote(triggerName)) AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE "
                    + "ON \(PostgresSchemaStore.qualified(schema, table)) FOR EACH STATEMENT "
                    + "EXECUTE FUNCTION \(function)('\(channel)')")
        }
    }

    /// Drops the trigger function (with its tables' triggers, which go with the tables anyway), when deleting a store.
    static func drop(_ connection: ServerConnection, schema: String) throws {
        try connection.execute(
            "DROP FUNCTION IF EXISTS \(PostgresSchemaStore.qualified(schema, triggerName))() CASCADE")
    }
}
