package import Foundation
import PersistenceCore

/// Where a store is, in the one syntax every command takes: `sqlite:PATH`, `lmdb:PATH` (encrypted or plain, told
/// apart by the store itself), a path ending in `.sqlite` or `.lmdb`, or
/// `postgres://USER@HOST[:PORT]/DATABASE[?schema=NAME&sslmode=…]` (schema `public` by default; the password never in
/// the URL: `PGPASSWORD`, `--passphrase-file` or `--passphrase-env`).
package struct StoreLocator: Sendable, Hashable, CustomStringConvertible {
    /// The backends a locator names.
    package enum Backend: String, Sendable, Hashable, CaseIterable {
        case sqlite, lmdb, postgres
    }

    package let backend: Backend
    /// The store's file (SQLite, LMDB), or `nil` for a server's store.
    package let file: URL?
    /// The server's URL without the `schema` parameter (PostgreSQL).
    package let url: String?
    /// The PostgreSQL schema that holds the store.
    package let schema: String?

    /// Parses a locator.
    /// - Throws: ``PersistenceError/Code/invalidArgument`` for a locator of no known backend, a file that doesn't
    ///   end in the backend's extension (an app finds its store by `<name>.sqlite` / `<name>.lmdb`), or a URL with
    ///   a password in it.
    package init(_ text: String) throws {
        if text.hasPrefix("postgres://") || text.hasPrefix("postgresql://") {
            guard var components = URLComponents(string: text), components.host?.isEmpty == false else {
                throw PersistenceError(.invalidArgument, "'\(Self.redacted(text))' is not a postgres:// URL")
            }
            guard components.password == nil else {
                throw PersistenceError(
                    .invalidArgument,
                    "the password doesn't go in the URL (it would show in `ps`): use PGPASSWORD, --passphrase-file or "
                        + "--passphrase-env")
            }
            let items = components.queryItems ?? []
            schema = items.first { $0.name == "schema" }?.value ?? "public"
            let others = items.filter { $0.name != "schema" }
            components.queryItems = others.isEmpty ? nil : others
            url = components.string ?? text
            backend = .postgres
            file = nil
            return
        }
        var backend: Backend?
        var path = text
        for candidate in [Backend.sqlite, .lmdb] where text.hasPrefix(candidate.rawValue + ":") {
            backend = candidate
            path = String(text.dropFirst(candidate.rawValue.count + 1))
        }
        guard !path.isEmpty else { throw PersistenceError(.invalidArgument, "the locator '\(text)' names no file") }
        let file = URL(fileURLWithPath: path).standardizedFileURL
        let inferred = Backend(rawValue: file.pathExtension).flatMap { $0 == .postgres ? nil : $0 }
        guard let resolved = backend ?? inferred else {
            throw PersistenceError(
                .invalidArgument,
                "'\(text)' names no backend: write sqlite:PATH, lmdb:PATH or postgres://…, or a path ending in .sqlite "
                    + "or .lmdb")
        }
        guard file.pathExtension == resolved.rawValue else {
            throw PersistenceError(
                .invalidArgument, "a \(resolved.rawValue) store's file ends in .\(resolved.rawValue): \(file.path)")
        }
        self.backend = resolved
        self.file = file
        url = nil
        schema = nil
    }

    package var description: String {
        if let file { return "\(backend.rawValue):\(file.path)" }
        return "\(url ?? "postgres://") schema \(schema ?? "public")"
    }

    /// The store's file, for the file backends' openers.
    package var requiredFile: URL {
        get throws {
            guard let file else { throw PersistenceError(.invalidArgument, "\(description) is not a file") }
            return file
        }
    }

    /// A URL with its password replaced, for messages.
    package static func redacted(_ text: String) -> String {
        guard var components = URLComponents(string: text) else { return "a postgres:// URL" }
        if components.password != nil { components.password = "***" }
        return components.string ?? "a postgres:// URL"
    }
}
