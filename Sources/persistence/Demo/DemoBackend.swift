import Foundation
import PersistenceCore
import PersistenceLMDB
import PersistencePostgres
import PersistenceSQLite

/// The one place the demo names a storage backend.
///
/// Everything in `ShopFlow` is generic over `some Database`. Per backend, this file only builds the database and
/// adds one step that shows what is the backend's own: raw SQL for SQLite, encryption at rest for LMDB, many writers
/// for PostgreSQL.
enum DemoBackend: String, CaseIterable, Sendable {
    case sqlite
    case lmdb
    case postgres

    /// The backend's name, for the output.
    var name: String {
        switch self {
        case .sqlite: "SQLite"
        case .lmdb: "LMDB (encrypted)"
        case .postgres: "PostgreSQL"
        }
    }

    /// Opens the shop's database in `directory` (PostgreSQL: on the server `postgresURL` names), runs the generic
    /// flow on it, then the backend's own steps.
    func run(in directory: URL, postgresURL: String?, console: Console) async throws {
        console.note("Persistence demo on \(name)")
        switch self {
        case .sqlite:
            let db = try SQLiteDemo.makeDatabase(in: directory)
            console.note("store: \(db.fileURL?.path ?? "(in memory)")")
            try await ShopFlow(db: db, console: console, now: Date()).run()
            try SQLiteDemo.showRawSQL(db, console: console)
            try PerUserStoreDemo.run(in: directory, console: console) { name in
                var builder = SQLiteBuilder(databaseName: name, model: ShopModel.current)
                builder.directory = directory
                return try builder.create()
            }
            try SQLiteMigrationDemo.run(in: directory, console: console)
        case .lmdb:
            let db = try LMDBDemo.makeDatabase(in: directory, console: console)
            try await ShopFlow(db: db, console: console, now: Date()).run()
            try LMDBDemo.showEncryptionAtRest(db, console: console)
            try LMDBDemo.showWrongPassphrase(db, in: directory, console: console)
            try PerUserStoreDemo.run(in: directory, console: console) { name in
                var builder = LMDBBuilder(databaseName: name, passphrase: LMDBDemo.passphrase, model: ShopModel.current)
                builder.directory = directory
                return try builder.create()
            }
            try LMDBMigrationDemo.run(in: directory, passphrase: LMDBDemo.passphrase, console: console)
        case .postgres:
            let builder = try PostgresDemo.builder(url: postgresURL)
            // A fresh store each run: the demo's schema is dropped first.
            try builder.deleteStore()
            let db = try builder.create()
            console.note("store: schema \"\(builder.schema)\" in database \"\(builder.database)\" on \(builder.host)")
            try await ShopFlow(db: db, console: console, now: Date()).run()
            try PostgresDemo.showRawSQL(db, console: console)
            try PostgresDemo.showConflict(builder, db, console: console)
            try await SyncDemo.run(builder, in: directory, console: console)
            try db.close()
            try builder.deleteStore()
            console.note("the demo's schema was dropped from the server")
        }
    }
}

// MARK: - SQLite

private enum SQLiteDemo {
    static func makeDatabase(in directory: URL) throws -> SQLiteDatabase {
        var builder = SQLiteBuilder(databaseName: "Shop", model: ShopModel.current)
        builder.directory = directory
        return try builder.create()
    }

    /// The backend's own access, in the same transaction as typed operations: raw SQL with bound arguments.
    static func showRawSQL(_ database: SQLiteDatabase, console: Console) throws {
        console.step("Raw SQL through SQLiteContext, inside a read block")
        // Identifiers are quoted: "Order" is an SQL keyword. Values are bound to `?`, never spliced into the text.
        let sql = """
            SELECT c."name" AS name, count(o."id") AS orders, coalesce(sum(o."totalCents"), 0) AS spent
            FROM "Customer" AS c LEFT JOIN "Order" AS o ON o."customerID" = c."id"
            GROUP BY c."id" ORDER BY spent DESC, c."id" LIMIT ?
            """
        let (rows, typedCount) = try database.read { context in
            // Raw SQL and typed operations see the same snapshot.
            (try context.rows(sql, [.integer(3)]), try context.count(Customer.self))
        }
        console.detail("top \(rows.count) of \(typedCount) customers by spend:")
        for row in rows {
            let name = row["name"].map(Console.show) ?? "?"
            let orders = row["orders"].map(Console.show) ?? "?"
            let spent: String
            if case .integer(let cents)? = row["spent"] { spent = Console.money(cents) } else { spent = "?" }
            console.detail("  \(name): spent \(spent) in \(orders) order(s)")
        }
        try console.check(rows.count == min(3, typedCount), "the SQL query returned \(rows.count) rows")
    }
}

// MARK: - LMDB

enum LMDBDemo {
    /// The demo's made-up passphrase. A real app never hard-codes one: it gets it from the user, or from the
    /// platform's secret store (the Keychain on Apple platforms).
    static let passphrase = "demo only: correct horse battery staple"

    static func builder(in directory: URL, passphrase: String) -> LMDBBuilder {
        // `keyDerivation` stays at its default, KeyDerivation.rfc9106 (Argon2id, 3 passes over 64 MiB).
        var builder = LMDBBuilder(databaseName: "Shop", passphrase: passphrase, model: ShopModel.current)
        builder.directory = directory
        return builder
    }

    static func makeDatabase(in directory: URL, console: Console) throws -> LMDBDatabase {
        let clock = ContinuousClock()
        let start = clock.now
        let db = try builder(in: directory, passphrase: passphrase).create()
        let elapsed = clock.now - start
        console.note("store: \(db.fileURL.path)")
        console.note(
            "passphrase: \"\(passphrase)\" (hard-coded for the demo; a real app gets it from the user or the "
                + "keychain)")
        console.note(
            "opened in \(seconds(elapsed)), most of it Argon2id deriving the key (KeyDerivation.rfc9106: 64 MiB, "
                + "slow on purpose, so every guess at the passphrase is too)")
        #if DEBUG
            console.note(
                "  (this is a debug build, whose crypto code is not optimized: a release build opens about 10× faster)")
        #endif
        return db
    }

    /// Shows that the store's file holds no customer data in plaintext, while the API reads it back.
    static func showEncryptionAtRest(_ db: LMDBDatabase, console: Console) throws {
        console.step("Encryption at rest: the store file holds no customer's email or name in plaintext")
        let customers: [Customer] = try db.recover()
        let file = try Data(contentsOf: db.fileURL)
        console.detail("\(db.fileURL.lastPathComponent): \(file.count) bytes; isEncrypted: \(db.isEncrypted)")
        let searched = customers.flatMap { [$0.email, $0.name] }
        let found = searched.filter { file.range(of: Data($0.utf8)) != nil }
        console.detail(
            "searched the file's bytes for the \(customers.count) customers' emails and names: "
                + (found.isEmpty ? "none found" : "found \(found)"))

        // With the passphrase, the same data is one indexed lookup away; the index holds a keyed digest.
        let ada: [Customer] = try db.recover(key: "email", value: "ada@example.com")
        console.detail("through the API: recover(key: \"email\", value: \"ada@example.com\") -> \(ada.map(\.name))")
        try console.check(db.isEncrypted && !customers.isEmpty, "the store should be encrypted and hold customers")
        try console.check(found.isEmpty, "the store file holds \(found.count) of the values in plaintext")
        try console.check(ada.map(\.id) == [1], "the email index should find Ada")

        // Honest about the limits: names and keys are metadata LMDB needs in the clear.
        let entityName = file.range(of: Data("Customer".utf8)) != nil
        console.detail(
            "not encrypted, by design: primary keys, entity and attribute names (\"Customer\" in the file: "
                + "\(entityName ? "yes" : "no")), record counts and sizes, and access patterns")
    }

    /// Shows that a wrong passphrase is a typed error at `create()`, even while the store is open, and changes
    /// nothing.
    static func showWrongPassphrase(_ db: LMDBDatabase, in directory: URL, console: Console) throws {
        console.step("A wrong passphrase is refused at create(), even while the store is open in this process")
        let before = try Data(contentsOf: db.fileURL)
        let wrong = builder(in: directory, passphrase: "demo only: correct horse battery stapler")
        do {
            _ = try wrong.create()
            throw DemoError.unexpected("a wrong passphrase opened the store")
        } catch let error as PersistenceError where error.code == .wrongPassphrase {
            console.detail("a second builder with a wrong passphrase: create() threw \(error)")
        }
        let after = try Data(contentsOf: db.fileURL)
        let customers = try db.count(Customer.self)
        console.detail("file unchanged: \(before == after); the open database still reads \(customers) customers")
        try console.check(before == after, "a refused passphrase changed the store file")
        try console.check(customers == 5, "expected 5 customers after the refused open")
    }

    /// A duration as seconds with two decimals, such as `0.42 s`.
    static func seconds(_ duration: Duration) -> String {
        String(format: "%.2f s", duration.seconds)
    }
}
