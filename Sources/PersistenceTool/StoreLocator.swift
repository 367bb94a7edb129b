package import Foundation
import PersistenceCore

/// Where a store is, in the one syntax every command takes: `sqlite:PATH`, `lmdb:PATH` (encrypted or plain, told
/// apart by the store itself), or a path ending in `.sqlite` or `.lmdb`.
package struct StoreLocator: Sendable, Hashable, CustomStringConvertible {
    /// The backends a locator names.
    package enum Backend: String, Sendable, Hashable, CaseIterable {
        case sqlite, lmdb
    }

    package let backend: Backend
    /// The store's file.
    package let file: URL

    /// Parses a locator.
    /// - Throws: ``PersistenceError/Code/invalidArgument`` for a locator of no known backend, or whose file
    ///   doesn't end in the backend's extension (an app finds its store by `<name>.sqlite` / `<name>.lmdb`).
    package init(_ text: String) throws {
        var backend: Backend?
        var path = text
        for candidate in Backend.allCases where text.hasPrefix(candidate.rawValue + ":") {
            backend = candidate
            path = String(text.dropFirst(candidate.rawValue.count + 1))
        }
        if text.hasPrefix("postgres://") || text.hasPrefix("postgresql://") {
            throw PersistenceError(
                .invalidArgument, "PostgreSQL stores aren't supported by the store tool yet: \(Self.redacted(text))")
        }
        guard !path.isEmpty else { throw PersistenceError(.invalidArgument, "the locator '\(text)' names no file") }
        let file = URL(fileURLWithPath: path).standardizedFileURL
        let inferred = Backend(rawValue: file.pathExtension)
        guard let resolved = backend ?? inferred else {
            throw PersistenceError(
                .invalidArgument,
                "'\(text)' names no backend: write sqlite:PATH or lmdb:PATH, or a path ending in .sqlite or .lmdb")
        }
        guard file.pathExtension == resolved.rawValue else {
            throw PersistenceError(
                .invalidArgument, "a \(resolved.rawValue) store's file ends in .\(resolved.rawValue): \(file.path)")
        }
        self.backend = resolved
        self.file = file
    }

    package var description: String { "\(backend.rawValue):\(file.path)" }

    /// A URL with its password replaced, for messages.
    static func redacted(_ text: String) -> String {
        guard var components = URLComponents(string: text) else { return "a postgres:// URL" }
        if components.password != nil { components.password = "***" }
        return components.string ?? "a postgres:// URL"
    }
}
