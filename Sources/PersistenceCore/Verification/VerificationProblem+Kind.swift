extension VerificationProblem.Kind {
    // Records

    /// A record can't be read: its bytes don't decode, or it has the wrong number of values.
    public static let recordUnreadable = Self(rawValue: "recordUnreadable")
    /// An encrypted record fails authentication: it was altered, moved to another key, or sealed with another key.
    public static let authenticationFailed = Self(rawValue: "authenticationFailed")
    /// A record's primary-key attribute differs from the key it is stored under, or the key is not a valid
    /// primary key of the entity.
    public static let keyMismatch = Self(rawValue: "keyMismatch")
    /// A stored value does not have its attribute's declared type: another storage class, or a value the type
    /// can't hold (a boolean other than 0 or 1, a UUID that is not 16 bytes, JSON that does not parse…).
    public static let typeMismatch = Self(rawValue: "typeMismatch")
    /// A non-optional attribute holds no value (`NULL`).
    public static let missingValue = Self(rawValue: "missingValue")

    // Indexes

    /// A record has no entry in an index that should list it.
    public static let indexEntryMissing = Self(rawValue: "indexEntryMissing")
    /// An index entry points at a record that does not exist.
    public static let danglingIndexEntry = Self(rawValue: "danglingIndexEntry")
    /// An index entry points at a record whose indexed values are not the ones the entry is filed under.
    public static let indexEntryMismatch = Self(rawValue: "indexEntryMismatch")
    /// Two records hold the same values in a unique index.
    public static let uniqueViolation = Self(rawValue: "uniqueViolation")

    // Relationships

    /// A record's foreign key (a to-one ``Relationship``) names a record of the target entity that doesn't exist —
    /// left by ``DeleteRule/noAction``, raw SQL or raw keys.
    public static let danglingReference = Self(rawValue: "danglingReference")

    // The store

    /// A piece of the store's metadata (format version, schema, schema version, key derivation…) is absent.
    public static let metadataMissing = Self(rawValue: "metadataMissing")
    /// A piece of the store's metadata is present but unreadable or inconsistent with the data.
    public static let metadataInvalid = Self(rawValue: "metadataInvalid")
    /// The stored schema, or the tables, columns, indexes or named databases that hold the data, differ from the
    /// model the database was opened with.
    public static let schemaMismatch = Self(rawValue: "schemaMismatch")
    /// The storage engine's own consistency check failed (SQLite's `PRAGMA integrity_check`, a damaged page…).
    public static let engineIntegrity = Self(rawValue: "engineIntegrity")
}
