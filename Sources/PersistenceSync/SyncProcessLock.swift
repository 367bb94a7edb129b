import Foundation
import PersistenceCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The lock that lets one process at a time sync a store: an exclusive `flock` on a file beside the store
/// (`<store>.sync-lock`). Other processes see it held and skip their sync: the journal is in the store, so the
/// syncing process pushes their writes too. The lock ends with the process, however it ends (kill -9 included).
struct SyncProcessLock: Sendable {
    let url: URL

    /// Runs `body` holding the lock, or returns `nil` without running it when another holder has it.
    /// - Throws: `ioFailure` or `permissionDenied` when the lock file
    ///   can't be opened; what `body` throws.
    func withLock<R>(_ body: () async throws -> R) async throws -> R? {
        let descriptor = open(url.path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            let code = errno
            throw PersistenceError(
                code == EACCES || code == EPERM || code == EROFS ? .permissionDenied : .ioFailure,
                "the sync lock file beside the store can't be opened", nativeCode: code,
                nativeMessage: String(cString: strerror(code)))
        }
        // Unlocked before it is closed: a process started meanwhile holds a copy of the descriptor until it runs its
        // program, and a lock that ended with the last close would outlive this sync as long.
        defer {
            flock(descriptor, LOCK_UN)
            close(descriptor)
        }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            let code = errno
            if code == EWOULDBLOCK { return nil }
            throw PersistenceError(
                .ioFailure, "the sync lock can't be taken", nativeCode: code,
                nativeMessage: String(cString: strerror(code)))
        }
        return try await body()
    }
}
