package import Foundation
@_spi(PersistenceBackend) import PersistenceCore

/// Where a file-backed store lives, validated the same way for every backend.
@_spi(PersistenceBackend) public struct StoreLocation: Sendable {
    /// The directory that holds the store's files.
    package let directory: URL
    /// The database name (a file-name stem).
    package let name: String

    /// Checks `name` and `directory` without creating anything but the default directory.
    ///
    /// - Parameters:
    ///   - name: The database name; becomes the file-name stem.
    ///   - directory: Where the files go; `nil` for ``defaultDirectory``, which is created when missing.
    /// - Throws: ``PersistenceError/Code/invalidName``, ``PersistenceError/Code/directoryNotFound`` or
    ///   ``PersistenceError/Code/permissionDenied``.
    package init(name: String, directory: URL?) throws {
        try Self.validate(name: name)
        let resolved: URL
        if let directory {
            resolved = directory.standardizedFileURL
        } else {
            resolved = Self.defaultDirectory
            do {
                try FileManager.default.createDirectory(at: resolved, withIntermediateDirectories: true)
            } catch {
                throw PersistenceError(
                    .permissionDenied, "the default directory \(resolved.path) could not be created")
            }
        }
        try Self.checkWritableDirectory(resolved)
        self.directory = resolved
        self.name = name
    }

    /// The store's main file, `<directory>/<name>.<fileExtension>`.
    package func file(extension fileExtension: String) -> URL {
        directory.appendingPathComponent("\(name).\(fileExtension)", isDirectory: false)
    }

    /// The per-user default: Application Support on Apple platforms, `$XDG_DATA_HOME` (or `~/.local/share`) on
    /// Linux, in a folder named after the running program.
    package static var defaultDirectory: URL {
        let base =
            FileManager.default.urls(for: .applicationSupportDirectory, in: .userDomainMask).first
            ?? FileManager.default.temporaryDirectory
        let program = ProcessInfo.processInfo.processName
        return base.appendingPathComponent(program.isEmpty ? "Persistence" : program, isDirectory: true)
    }

    /// A name must be usable as one file-name component, with room for suffixes such as `-wal`.
    @_spi(PersistenceBackend) public static func validate(name: String) throws {
        guard !name.isEmpty else { throw PersistenceError(.invalidName, "the database name is empty") }
        guard name.utf8.count <= 200 else {
            throw PersistenceError(.invalidName, "the database name is longer than 200 bytes")
        }
        // By bytes, not Characters: a separator followed by a combining mark is one Character, but the file
        // system still sees the separator.
        let bytes = Array(name.utf8)
        guard !bytes.contains(UInt8(ascii: "/")), !bytes.contains(UInt8(ascii: "\\")) else {
            throw PersistenceError(.invalidName, "the database name contains a path separator")
        }
        guard !zip(bytes, bytes.dropFirst()).contains(where: { $0 == UInt8(ascii: ".") && $1 == UInt8(ascii: ".") })
        else { throw PersistenceError(.invalidName, "the database name contains '..'") }
        guard !name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw PersistenceError(.invalidName, "the database name contains control characters")
        }
        guard bytes != [UInt8(ascii: ".")] else { throw PersistenceError(.invalidName, "the database name is '.'") }
    }

    private static func checkWritableDirectory(_ url: URL) throws {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory), isDirectory.boolValue
        else {
            throw PersistenceError(.directoryNotFound, "the directory \(url.path) does not exist")
        }
        // access(2) ignores permission bits for root and knows nothing of read-only mounts: write a probe file.
        let probe = url.appendingPathComponent(".persistence-write-check-\(UUID().uuidString)")
        guard FileManager.default.createFile(atPath: probe.path, contents: nil) else {
            throw PersistenceError(.permissionDenied, "the directory \(url.path) is not writable")
        }
        try? FileManager.default.removeItem(at: probe)
    }
}
