import ArgumentParser

/// `compare`: Persistence against the raw C APIs and GRDB, side by side, in one run.
@main
struct Compare: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "compare",
        abstract: "Time Persistence against raw SQLite, LMDB and postgres-nio, and GRDB, side by side, in one run.",
        discussion: """
            Workloads: S1–S7 (SQLite: raw C, ours, GRDB), S8 (a mapping-model migration of N records: on SQLite \
            ours against the table rebuild written in C, on plain and encrypted LMDB against a raw rewrite), R1 (reconciling N stored records with a snapshot: 10 % \
            changed, 5 % gone, 1 % new; ours on SQLite against the C API, ours on LMDB for information), P1–P6 \
            (PostgreSQL: ours against postgres-nio by hand, the S1–S6 operations), P7 (PostgreSQL: commits/s from \
            1, 4 and 16 concurrent writers, ours and raw), L1, L4, L5, L6 (LMDB: raw, raw + AES-GCM, ours encrypted, \
            ours plain), K (opening a store), M (memory while iterating a large store), M2 (a migration block: a renamed \
            attribute, an added one with a default, on SQLite, plain and encrypted LMDB; time and peak memory), M3 \
            (S8's mapping on plain and encrypted LMDB at 1,000,000 records: how far the heap grows), O1 (what 100 observers of another entity \
            cost a commit, SQLite and LMDB), O2 (from a commit to its observer's value), T1–T3 (the `persistence` \
            store tool's release binary as a child process: export and import, copy against S2 + L1, hash; records \
            per second and peak memory). P1–P7 run when PERSISTENCE_POSTGRES_URL names a server \
            (scripts/with-postgres.sh sets it) and are skipped with a note otherwise; T1–T3 likewise without \
            --tool-binary or PERSISTENCE_TOOL_BINARY. Every result is verified; a wrong one exits non-zero. A missed target is reported, not fatal.
            """,
        subcommands: [RunCommand.self, MemoryChildCommand.self, MigrationChildCommand.self],
        defaultSubcommand: RunCommand.self
    )
}
