/// The one error type every Persistence API throws.
///
/// Match on ``code`` — it is stable across backends — and show ``description`` to people.
/// Where the storage engine reported the failure, ``nativeCode`` and ``nativeMessage`` keep what it said
/// (for SQLite the extended result code and `sqlite3_errmsg`; for LMDB its return code and the `mdb_strerror` text;
/// for PostgreSQL no code, and the SQLSTATE and the server's message in ``nativeMessage``).
///
/// An error never carries stored values, passphrases or key material: messages name entities,
/// attributes and files, never their contents.
///
/// ```swift
/// do {
///     try db.create(user)
/// } catch let error as PersistenceError where error.code == .duplicateKey {
///     // already there
/// }
/// ```
public struct PersistenceError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure this is; an open set of static members, so backends can add their own.
    public struct Code: Hashable, Sendable, RawRepresentable, CustomStringConvertible {
        /// The code's stable name, for logs and matching.
        public let rawValue: String

        /// Creates a code from its stable name.
        public init(rawValue: String) { self.rawValue = rawValue }

        /// The code's stable name.
        public var description: String { rawValue }
    }

    /// What kind of failure this is.
    public var code: Code
    /// A human-readable explanation, free of stored values and secrets.
    public var message: String
    /// The storage engine's own error code, where there is one.
    public var nativeCode: Int32?
    /// The storage engine's own message, where there is one.
    public var nativeMessage: String?
    /// The error that caused this one, where there is one — for example what a migration block threw, kept
    /// whole under a ``Code/migrationFailed`` error so the caller can match on it.
    public var underlyingError: (any Error)?

    /// Creates an error.
    /// - Parameters:
    ///   - code: What kind of failure this is.
    ///   - message: A human-readable explanation; never include stored values or secrets.
    ///   - nativeCode: The storage engine's own error code.
    ///   - nativeMessage: The storage engine's own message.
    ///   - underlyingError: The error that caused this one.
    public init(
        _ code: Code, _ message: String, nativeCode: Int32? = nil, nativeMessage: String? = nil,
        underlyingError: (any Error)? = nil
    ) {
        self.code = code
        self.message = message
        self.nativeCode = nativeCode
        self.nativeMessage = nativeMessage
        self.underlyingError = underlyingError
    }

    /// `code: message (native code: native message)`.
    public var description: String {
        var text = "\(code): \(message)"
        switch (nativeCode, nativeMessage) {
        case let (code?, message?): text += " (\(code): \(message))"
        case let (code?, nil): text += " (\(code))"
        case let (nil, message?): text += " (\(message))"
        case (nil, nil): break
        }
        return text
    }
}

extension PersistenceError.Code {
    // Configuration and location

    /// A builder option is invalid or conflicts with another (checked before anything touches disk).
    public static let invalidConfiguration = Self(rawValue: "invalidConfiguration")
    /// A database name is empty, contains a path separator or `..`, or is otherwise unusable as a file name.
    public static let invalidName = Self(rawValue: "invalidName")
    /// The directory given for the store does not exist.
    public static let directoryNotFound = Self(rawValue: "directoryNotFound")
    /// The directory for the store exists but cannot be written to.
    public static let permissionDenied = Self(rawValue: "permissionDenied")
    /// The store's file could not be opened.
    public static let cannotOpen = Self(rawValue: "cannotOpen")

    // Schema

    /// An entity type cannot be described as a schema (for example, an attribute type that can't be probed).
    public static let invalidSchema = Self(rawValue: "invalidSchema")
    /// The entity type is not part of the database's model.
    public static let unknownEntity = Self(rawValue: "unknownEntity")
    /// An attribute name is not part of the entity's schema.
    public static let unknownAttribute = Self(rawValue: "unknownAttribute")
    /// The store's schema differs from the model and the change needs a migration.
    public static let migrationRequired = Self(rawValue: "migrationRequired")
    /// A migration could not be carried out, or the migration code threw (see
    /// ``PersistenceError/underlyingError``); nothing was changed.
    public static let migrationFailed = Self(rawValue: "migrationFailed")
    /// The store was written by a newer, unknown format version.
    public static let unsupportedFormatVersion = Self(rawValue: "unsupportedFormatVersion")

    // Values

    /// A value cannot be stored (NaN, an unsigned integer above `Int64.max`, an unencodable nested value…).
    public static let invalidValue = Self(rawValue: "invalidValue")
    /// A stored value does not have the type the entity asks for, or a query compares an attribute with a value
    /// of another type.
    public static let typeMismatch = Self(rawValue: "typeMismatch")
    /// An argument is out of range (a negative limit, too many values in one query…).
    public static let invalidArgument = Self(rawValue: "invalidArgument")
    /// The backend can't do this with the meaning every other backend gives it, so it refuses rather than differ.
    public static let unsupported = Self(rawValue: "unsupported")
    /// A primary key is larger than the backend can store as a key (LMDB: 511 bytes).
    public static let keyTooLarge = Self(rawValue: "keyTooLarge")

    // Constraints and lookups

    /// A record with the same primary key already exists.
    public static let duplicateKey = Self(rawValue: "duplicateKey")
    /// A unique index already holds the value.
    public static let uniqueViolation = Self(rawValue: "uniqueViolation")
    /// Another constraint (not-null, check, foreign key) rejected the change.
    public static let constraintViolation = Self(rawValue: "constraintViolation")
    /// The record to update does not exist.
    public static let notFound = Self(rawValue: "notFound")
    /// A record's foreign key (a to-one ``Relationship``) names no stored record of the target entity.
    public static let referenceNotFound = Self(rawValue: "referenceNotFound")
    /// A ``DeleteRule/deny`` rule refused a delete: records still refer to a record it would delete. Nothing changed.
    public static let deleteDenied = Self(rawValue: "deleteDenied")

    // Transactions

    /// A write was attempted inside a read transaction.
    public static let readOnly = Self(rawValue: "readOnly")
    /// A transaction was started inside another one on the same database and thread.
    public static let nestedTransaction = Self(rawValue: "nestedTransaction")
    /// A context was used after its transaction block ended.
    public static let contextExpired = Self(rawValue: "contextExpired")
    /// The database was closed (``Database/close()``); open it again with its builder.
    public static let closed = Self(rawValue: "closed")
    /// The store is open, so its files can't be deleted (``FileBackedDatabase/deleteStore(named:in:)``).
    public static let storeInUse = Self(rawValue: "storeInUse")
    /// The store is locked by another process for longer than the busy timeout, or the server accepts no connections
    /// now (starting up, shutting down, at its connection limit): nothing of the write was committed.
    public static let busy = Self(rawValue: "busy")
    /// The write collided with a concurrent one and was rolled back whole; nothing of it was committed, and running
    /// it again is safe (see ``Database/write(retryingUpTo:_:)-7n6ls``). Server backends (PostgreSQL's serialization
    /// failures and deadlocks).
    public static let conflict = Self(rawValue: "conflict")
    /// The connection to the server dropped during the transaction: nothing of it was committed, and running it again
    /// is safe. The database opens a new connection for the next transaction.
    public static let connectionLost = Self(rawValue: "connectionLost")
    /// The connection dropped while the server was committing: the write may or may not have been committed. Never
    /// retried by ``Database/write(retryingUpTo:_:)-7n6ls`` — read back to find out.
    public static let commitOutcomeUnknown = Self(rawValue: "commitOutcomeUnknown")
    /// A server could not be reached (refused, timed out, no such host, restarting): nothing was sent, and trying again
    /// later is safe.
    public static let unreachable = Self(rawValue: "unreachable")

    // Observation

    /// An observation's read ran raw SQL, whose tables can't be inferred, and the observation tracks nothing
    /// else: it would never see a change. Name what the SQL reads with `tracking:`
    /// (``ValueObservation/tracking(_:aliases:_:)-(_,_,(DatabaseContext)->Value)`` or
    /// ``Database/observe(tracking:aliases:_:)``). Thrown from the observation, which then ends.
    public static let untrackedRead = Self(rawValue: "untrackedRead")

    // Sync

    /// A write of a synced store ran raw SQL that changed tables it can't name, so its changes couldn't be pushed:
    /// rolled back. Write a synced store's entities through the typed API.
    public static let untrackedWrite = Self(rawValue: "untrackedWrite")
    /// The sync server refused a client's request: it may not sync the scopes it asked for, or its credentials
    /// aren't valid.
    public static let unauthorized = Self(rawValue: "unauthorized")
    /// The sync server runs a newer model than the client: update the app (its store migrates as it opens), then
    /// sync. The local store keeps working meanwhile; nothing pending is lost.
    public static let updateRequired = Self(rawValue: "updateRequired")
    /// The sync server no longer holds the deletions since the client's last pull (kept for its tombstone retention):
    /// the client syncs its scopes whole again. `SyncClient` does so by itself.
    public static let resyncRequired = Self(rawValue: "resyncRequired")

    // Storage

    /// The disk or the map is full.
    public static let storageFull = Self(rawValue: "storageFull")
    /// The store's file is damaged or is not a store of this kind.
    public static let corrupt = Self(rawValue: "corrupt")
    /// The operating system reported an I/O failure.
    public static let ioFailure = Self(rawValue: "ioFailure")
    /// A passphrase does not open the store.
    public static let wrongPassphrase = Self(rawValue: "wrongPassphrase")
    /// An encrypted value failed authentication: it was altered or moved.
    public static let authenticationFailed = Self(rawValue: "authenticationFailed")
    /// Any other failure reported by the storage engine; see ``PersistenceError/nativeCode``.
    public static let backend = Self(rawValue: "backend")
    /// A SQL statement given to a backend context is not valid.
    public static let invalidStatement = Self(rawValue: "invalidStatement")
}
