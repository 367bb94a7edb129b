package import Foundation
import PersistenceCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Whether this process may read a store's file, asked before a backend opens it: a backend that only asks whether
/// the file exists finds nothing behind a directory it can't search, and would say "no store" where the answer is
/// "no permission" — the same on every backend.
package enum StoreAccess {
    /// Throws when `file` — a store's file or a directory — exists but this process may not read it, or a directory
    /// on its path may not be searched. A file that doesn't exist passes: the backend says so.
    /// - Throws: ``PersistenceError/Code/permissionDenied``.
    package static func checkReadable(_ file: URL) throws {
        var info = stat()
        guard stat(file.path, &info) == 0 else {
            if errno == EACCES {
                throw PersistenceError(
                    .permissionDenied, "no permission to search a directory on the path to \(file.lastPathComponent)",
                    nativeCode: EACCES)
            }
            return
        }
        if access(file.path, R_OK) != 0, errno == EACCES || errno == EPERM {
            let kind = (info.st_mode & S_IFMT) == S_IFDIR ? "directory" : "file"
            throw PersistenceError(
                .permissionDenied, "no permission to read the \(kind) \(file.lastPathComponent)", nativeCode: errno)
        }
    }
}
