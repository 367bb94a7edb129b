public import Foundation
import PersistenceCore

/// The store an embedded command works on, as the operator named it — a store's file (`Notes.sqlite`,
/// `lmdb:/data/Notes.lmdb`) or a PostgreSQL URL (`postgres://app@db.example.com/notes?schema=prod`) — and where its
/// passphrase or password comes from (`--passphrase-file`, `--passphrase-env`, the terminal; never the command line).
///
/// The app's ``StoreCommands/builder(for:)`` makes its builder from it:
///
/// ```swift
/// var builder = SQLiteBuilder(databaseName: try store.databaseName, model: Notes.model)
/// builder.directory = try store.directory
/// ```
public struct StoreAddress: Sendable, CustomStringConvertible {
    let locator: StoreLocator
    let secret: SecretSource?

    /// Parses what the operator typed.
    /// - Throws: `invalidArgument` for a locator of no known backend, or a URL holding a
    ///   password.
    init(_ text: String, secret: SecretSource?) throws {
        locator = try StoreLocator(text)
        self.secret = secret
    }

    /// `sqlite`, `lmdb` or `postgres`: what the file's extension (or the locator's prefix, or the URL) says.
    public var backend: String { locator.backend.rawValue }

    /// The store's database name — its file's name without the extension, as a builder's `databaseName`.
    /// - Throws: `invalidArgument` for a PostgreSQL store.
    public var databaseName: String {
        get throws { try locator.requiredFile.deletingPathExtension().lastPathComponent }
    }

    /// The directory of the store's file, as a builder's `directory`.
    /// - Throws: `invalidArgument` for a PostgreSQL store.
    public var directory: URL {
        get throws { try locator.requiredFile.deletingLastPathComponent() }
    }

    /// A PostgreSQL store's server URL (no password, no `schema` parameter), for `PostgresBuilder(url:model:)`.
    /// - Throws: `invalidArgument` for a store file.
    public var url: String {
        get throws {
            guard let url = locator.url else {
                throw PersistenceError(.invalidArgument, "\(locator) is a store file, not a postgres:// URL")
            }
            return url
        }
    }

    /// A PostgreSQL store's schema: the URL's `schema` parameter, `public` without one.
    public var schema: String { locator.schema ?? "public" }

    /// The store's passphrase (an encrypted LMDB store): from `--passphrase-file` or `--passphrase-env`, else asked
    /// on the terminal without echo.
    /// - Throws: `invalidArgument` for a missing file or variable or an empty passphrase;
    ///   `wrongPassphrase` when there is no terminal to ask on.
    public func passphrase() throws -> String {
        try (secret ?? .prompt).read(label: "Passphrase of \(locator)")
    }

    /// A PostgreSQL server's password: from `--passphrase-file` or `--passphrase-env`, else the `PGPASSWORD`
    /// environment variable, else `nil` (a server that trusts the connection).
    public func password() throws -> String? {
        try SecretSource.serverPassword(secret)
    }

    /// The locator, as messages name the store.
    public var description: String { locator.description }
}
