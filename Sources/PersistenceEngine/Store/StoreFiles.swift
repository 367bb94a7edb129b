package import Foundation
@_spi(PersistenceBackend) import PersistenceCore
import Synchronization

/// The store files this process has open, and deleting and listing stores safely.
///
/// A database registers its store file from the moment it starts opening it until it is closed or released; a
/// store can be deleted only while no registration holds it. Registering and deleting take one lock, so a store
/// can't be opened while its files are being removed.
package enum StoreFiles {
    private static let registrations = Mutex<[String: Int]>([:])

    /// One database's hold on its store file, released by ``StoreRegistration/end()`` or when freed.
    package final class StoreRegistration: Sendable {
        private let path: String
        private let isHeld = Atomic<Bool>(true)

        fileprivate init(path: String) { self.path = path }

        /// Releases the hold (once; later calls do nothing).
        package func end() {
            guard isHeld.exchange(false, ordering: .acquiringAndReleasing) else { return }
            registrations.withLock { open in
                let remaining = (open[path] ?? 1) - 1
                open[path] = remaining > 0 ? remaining : nil
            }
        }

        deinit { end() }
    }

    /// Registers the store file at `file` as open until the returned registration ends.
    package static func register(_ file: URL) -> StoreRegistration {
        let path = canonicalPath(file)
        registrations.withLock { $0[path, default: 0] += 1 }
        return StoreRegistration(path: path)
    }

    /// Registers a store that isn't a file — a server's store, named by a key that spells its server, database and
    /// schema one way — as open until the returned registration ends.
    package static func register(key: String) -> StoreRegistration {
        registrations.withLock { $0[key, default: 0] += 1 }
        return StoreRegistration(path: key)
    }

    /// Runs `body` (deleting a server's store, say) unless a database of this process has the store registered under
    /// `key` open; no database can register it meanwhile.
    /// - Throws: ``PersistenceError/Code/storeInUse`` while it is open, without running `body`.
    package static func whileClosed(key: String, name: String, _ body: () throws -> Void) throws {
        try registrations.withLock { open in
            guard open[key] == nil else {
                throw PersistenceError(.storeInUse, "the store '\(name)' is open in this process: close it first")
            }
            try body()
        }
    }

    /// Whether a database of this process has the store file at `file` open.
    package static func isOpen(_ file: URL) -> Bool {
        let path = canonicalPath(file)
        return registrations.withLock { $0[path] != nil }
    }

    /// Deletes a store's files: its companions first (so a store created later under the name never meets a stale
    /// journal of the old one), the store file last.
    ///
    /// - Parameters:
    ///   - name: The database name, validated as builders validate it.
    ///   - directory: The directory; `nil` for the default one.
    ///   - fileExtension: The store file's extension (`sqlite`, `lmdb`).
    ///   - companions: Suffixes of files beside the store file (`-wal`, `-lock`…).
    ///   - alsoRemoves: Other file names in the directory that belong to the store (backups).
    /// - Returns: Whether any file was removed.
    package static func delete(
        named name: String, in directory: URL?, fileExtension: String, companions: [String],
        alsoRemoves: (String) -> Bool = { _ in false }
    ) throws -> Bool {
        try StoreLocation.validate(name: name)
        guard let directory = try existingDirectory(directory) else { return false }
        let file = directory.appendingPathComponent("\(name).\(fileExtension)", isDirectory: false)
        let path = canonicalPath(file)
        return try registrations.withLock { open in
            guard open[path] == nil else {
                throw PersistenceError(.storeInUse, "the store '\(name)' is open in this process: close it first")
            }
            let others = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
            let doomed =
                companions.map { file.path + $0 }
                + others.filter(alsoRemoves).map { directory.appendingPathComponent($0).path }
                + [file.path]
            var removed = false
            for candidate in doomed where FileManager.default.fileExists(atPath: candidate) {
                do {
                    try FileManager.default.removeItem(atPath: candidate)
                    removed = true
                } catch {
                    throw PersistenceError(
                        .ioFailure, "a file of the store '\(name)' could not be removed", underlyingError: error)
                }
            }
            return removed
        }
    }

    /// The names of the stores whose files end in `.<fileExtension>` in `directory`, sorted.
    package static func names(in directory: URL?, fileExtension: String) throws -> [String] {
        guard let directory = try existingDirectory(directory) else { return [] }
        let suffix = "." + fileExtension
        let files = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return files.compactMap { file -> String? in
            guard file.hasSuffix(suffix) else { return nil }
            let name = String(file.dropLast(suffix.count))
            guard (try? StoreLocation.validate(name: name)) != nil else { return nil }
            var isDirectory: ObjCBool = false
            let path = directory.appendingPathComponent(file).path
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue
            else { return nil }
            return name
        }.sorted()
    }

    /// `directory`, or the default one; `nil` when the default one doesn't exist yet (it holds no store).
    private static func existingDirectory(_ directory: URL?) throws -> URL? {
        let resolved = (directory ?? StoreLocation.defaultDirectory).standardizedFileURL
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: resolved.path, isDirectory: &isDirectory), isDirectory.boolValue
        else {
            if directory == nil { return nil }
            throw PersistenceError(.directoryNotFound, "the directory \(resolved.path) does not exist")
        }
        return resolved
    }

    /// One spelling per file: symbolic links in the directory resolved.
    private static func canonicalPath(_ file: URL) -> String {
        file.deletingLastPathComponent().resolvingSymlinksInPath().appendingPathComponent(file.lastPathComponent).path
    }
}
