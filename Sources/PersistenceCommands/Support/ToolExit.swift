package import PersistenceCore

/// The exit statuses of the store tool, one per class of failure, so scripts can tell them apart (the numbers follow
/// BSD's `sysexits.h` where it has one).
package enum ToolExit: Int32, CaseIterable, Sendable {
    /// Done; `verify`: the store is sound.
    case success = 0
    /// `verify`: the store has problems (the report lists them).
    case problems = 1
    /// `verify`: the store could not be read at all (the checking process failed or crashed).
    case unreadable = 2
    /// Bad usage: unknown option, wrong locator, a destination that exists (ArgumentParser's own errors use 64 too).
    case usage = 64
    /// The data is damaged or refused: `corrupt`, `authenticationFailed`, a record an import refuses.
    case data = 65
    /// No such store or file.
    case notFound = 66
    /// Reading or writing a file failed, or the disk or map is full.
    case io = 74
    /// The store needs something first: a migration, a newer build (format), or it is in use.
    case configuration = 78
    /// Wrong or missing passphrase, or no permission.
    case permission = 77
    /// Interrupted (Ctrl-C, `SIGTERM`): what the command was making was undone.
    case interrupted = 130

    /// The status for an error.
    package static func status(for error: PersistenceError) -> ToolExit {
        switch error.code {
        case .invalidArgument, .invalidName, .unknownEntity, .unknownAttribute, .invalidConfiguration: .usage
        case .corrupt, .authenticationFailed, .invalidValue, .typeMismatch, .duplicateKey, .uniqueViolation,
            .constraintViolation, .invalidSchema, .referenceNotFound:
            .data
        case .notFound, .directoryNotFound, .cannotOpen, Self.serverCode("databaseNotFound"): .notFound
        case .ioFailure, .storageFull, .connectionLost, .unreachable: .io
        case .wrongPassphrase, .permissionDenied, .unauthorized: .permission
        // PostgreSQL's own codes, by name: this module links no backend.
        case Self.serverCode("tlsFailure"): .io
        case Self.serverCode("invalidCredentials"): .permission
        default: .configuration
        }
    }

    private static func serverCode(_ name: String) -> PersistenceError.Code { PersistenceError.Code(rawValue: name) }
}
